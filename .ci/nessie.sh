#!/usr/bin/env bash
# Project Nessie's server (the nessie-quarkus runner jar from Maven Central) for the
# Nessie catalog tests: Nessie serves the Iceberg REST catalog API under /iceberg/ and
# writes table metadata itself, to the object store of its warehouse (S3 here).
#
#   .ci/nessie.sh setup   download the pinned jar into the cache and check its sha256,
#                         print its path (idempotent)
#   .ci/nessie.sh start   run the server in the foreground (exec java), in-memory version
#                         store, configured by:
#                           NESSIE_DIR        a folder for its configuration file (mode 600)
#                           NESSIE_PORT       HTTP port (REST API, /iceberg/ and /api/v2)
#                           NESSIE_MGMT_PORT  Quarkus management port (health at /q/health)
#                           NESSIE_WAREHOUSE  warehouse name, NESSIE_WAREHOUSE_LOCATION (s3://...)
#                           NESSIE_S3_ENDPOINT, NESSIE_S3_REGION, NESSIE_S3_ACCESS_KEY,
#                           NESSIE_S3_SECRET_KEY (path-style access)
#
# The keys go into the configuration file (a Quarkus secret referenced by
# urn:nessie-secret:quarkus:...), never onto the command line.
# Nessie 0.99's server is built for Java 21: the java used is $NESSIE_JAVA, else the first
# of java on PATH and /usr/lib/jvm/*/bin/java whose version is 21 or later.
# Caches in ${XDG_CACHE_HOME:-~/.cache}/pyiceberg-go/nessie.
set -euo pipefail

VERSION=0.99.0
JAR=nessie-quarkus-$VERSION-runner.jar
URL=https://repo1.maven.org/maven2/org/projectnessie/nessie/nessie-quarkus/$VERSION/$JAR
# sha1 as published next to the jar on Maven Central: f68b1c0c69ef2a8b35d7c451d006a7bf2818048e
SHA256=ce9fa33e2878bf5ea3981876b9e6204cabc0362b3dd82326b10e47271a78c417
dir=${XDG_CACHE_HOME:-$HOME/.cache}/pyiceberg-go/nessie
jar=$dir/$JAR
fail() { echo "nessie.sh: $*" >&2; exit 1; }

check() { echo "$SHA256  $1" | sha256sum -c --status; }

java_major() { "$1" -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -1; }

find_java() {
  if [ -n "${NESSIE_JAVA:-}" ]; then echo "$NESSIE_JAVA"; return; fi
  for j in "$(command -v java || true)" /usr/lib/jvm/*/bin/java; do
    [ -n "$j" ] && [ -x "$j" ] || continue
    m=$(java_major "$j")
    if [ -n "$m" ] && [ "$m" -ge 21 ]; then echo "$j"; return; fi
  done
  fail "Nessie $VERSION needs Java 21 or later (none found on PATH or in /usr/lib/jvm; set NESSIE_JAVA)"
}

setup() {
  find_java >/dev/null
  if [ -f "$jar" ] && check "$jar"; then
    echo "$jar"
    return
  fi
  command -v curl >/dev/null || fail "curl is required to fetch the Nessie server jar"
  mkdir -p "$dir"
  echo "nessie.sh: fetching Nessie $VERSION ($URL)" >&2
  curl -fsSL --retry 3 -o "$jar.part" "$URL" || fail "download failed: $URL"
  check "$jar.part" || { rm -f "$jar.part"; fail "sha256 mismatch on $JAR"; }
  mv "$jar.part" "$jar"
  echo "$jar"
}

start() {
  [ -f "$jar" ] || fail "not set up: run .ci/nessie.sh setup"
  for v in NESSIE_DIR NESSIE_PORT NESSIE_MGMT_PORT NESSIE_WAREHOUSE NESSIE_WAREHOUSE_LOCATION \
    NESSIE_S3_ENDPOINT NESSIE_S3_REGION NESSIE_S3_ACCESS_KEY NESSIE_S3_SECRET_KEY; do
    [ -n "${!v:-}" ] || fail "$v is not set"
  done
  mkdir -p "$NESSIE_DIR"
  conf=$NESSIE_DIR/nessie.properties
  (
    umask 077
    cat > "$conf" <<PROPS
quarkus.http.host=127.0.0.1
quarkus.http.port=$NESSIE_PORT
quarkus.management.host=127.0.0.1
quarkus.management.port=$NESSIE_MGMT_PORT
quarkus.otel.sdk.disabled=true
nessie.version.store.type=IN_MEMORY
nessie.catalog.default-warehouse=$NESSIE_WAREHOUSE
nessie.catalog.warehouses.$NESSIE_WAREHOUSE.location=$NESSIE_WAREHOUSE_LOCATION
nessie.catalog.service.s3.default-options.endpoint=$NESSIE_S3_ENDPOINT
nessie.catalog.service.s3.default-options.region=$NESSIE_S3_REGION
nessie.catalog.service.s3.default-options.path-style-access=true
nessie.catalog.service.s3.default-options.access-key=urn:nessie-secret:quarkus:pig-secrets.s3
pig-secrets.s3.name=$NESSIE_S3_ACCESS_KEY
pig-secrets.s3.secret=$NESSIE_S3_SECRET_KEY
PROPS
  )
  java=$(find_java)
  exec "$java" -Xmx512m -Dquarkus.config.locations="file:$conf" -jar "$jar"
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  *) fail "usage: .ci/nessie.sh setup|start" ;;
esac
