#!/usr/bin/env bash
# Sets up Apache Spark 4.1 with Iceberg for the Python interop tests, idempotently:
# pyspark (pinned in requirements-spark.txt) into .venv, and the Iceberg Spark
# runtime, Iceberg's AWS bundle (Glue, S3FileIO), SQLite, PostgreSQL and MariaDB JDBC jars from
# Maven Central into a cache folder outside the repository, each checked against the sha256
# written below. Prints the jar folder.
# Needs .venv (made by .ci/setup.sh) and Java 17+. Fast when everything is cached.
set -euo pipefail
cd "$(dirname "$0")/.."

# Maven Central path and sha256 of every jar; tests/py/sparkutil.py reads this list.
JARS=(
  "org/apache/iceberg/iceberg-spark-runtime-4.1_2.13/1.12.0/iceberg-spark-runtime-4.1_2.13-1.12.0.jar 3123c3798af642dd537230923548e013ef41cc28b6626e5225808cf5670a0f82"
  "org/xerial/sqlite-jdbc/3.54.1.0/sqlite-jdbc-3.54.1.0.jar f8dce420a6016278497f4f0560f65602b9db858de141b541cf91a4644ebe4639"
  "org/postgresql/postgresql/42.7.14/postgresql-42.7.14.jar 73914527305a40cce504b0d3d90b23caf565136912d607ae8ae7c5895512332c"
  "org/mariadb/jdbc/mariadb-java-client/3.5.11/mariadb-java-client-3.5.11.jar 42604178b9e57ec08ee0035079961516f086e455d0141f0b22c6eff29fb2fff4"
  "org/apache/iceberg/iceberg-aws-bundle/1.12.0/iceberg-aws-bundle-1.12.0.jar dd7e49ffa4ac9b215bed846581991259e3aec9bb2fa08d6cec029c46cd66d957"
)
MAVEN=https://repo1.maven.org/maven2
jar_dir=${XDG_CACHE_HOME:-$HOME/.cache}/pyiceberg-go/jars

fail() { echo "spark.sh: $*" >&2; exit 1; }
command -v java >/dev/null || [ -x "${JAVA_HOME:-/nonexistent}/bin/java" ] || fail "Java 17+ is required (java not on PATH, JAVA_HOME unset)"
[ -x .venv/bin/python ] || fail ".venv is missing: run .ci/setup.sh first"

# pyspark: re-run pip only when requirements-spark.txt changed or pyspark went missing.
stamp=.venv/.spark-requirements-sha
want=$(sha256sum requirements-spark.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! compgen -G ".venv/lib/python3*/site-packages/pyspark/__init__.py" >/dev/null; then
  echo "spark.sh: installing pyspark from requirements-spark.txt" >&2
  .venv/bin/python -m pip install -q -r requirements-spark.txt
  echo "$want" > "$stamp"
fi

# Jars: verify the cached file (a partial or tampered one is fetched again).
mkdir -p "$jar_dir"
for entry in "${JARS[@]}"; do
  read -r path sum <<<"$entry"
  file=$jar_dir/$(basename "$path")
  if [ -f "$file" ] && echo "$sum  $file" | sha256sum -c --status; then
    continue
  fi
  echo "spark.sh: downloading $(basename "$path")" >&2
  tmp=$(mktemp "$file.XXXXXX")
  if ! curl -fsSL --retry 3 --retry-delay 2 -o "$tmp" "$MAVEN/$path"; then
    rm -f "$tmp"
    fail "download failed: $MAVEN/$path"
  fi
  if ! echo "$sum  $tmp" | sha256sum -c --status; then
    got=$(sha256sum "$tmp" | cut -d' ' -f1)
    rm -f "$tmp"
    fail "sha256 mismatch for $path: want $sum, got $got"
  fi
  mv -f "$tmp" "$file"
done
echo "$jar_dir"
