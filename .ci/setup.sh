#!/usr/bin/env bash
# Sets up, idempotently, what the demo or the tests need:
#   .ci/setup.sh demo   the project virtualenv with the demo's packages (pandas, polars,
#                       pyarrow, PyIceberg; versions from requirements-dev.txt) and the library
#   .ci/setup.sh        (or "all") every pinned package of requirements-dev.txt, the library,
#                       Spark with Iceberg, the REST catalog server's jars and versitygw
# Go's module and build caches stay in their default places so later runs reuse them.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
py=${PYTHON:-python3}
if ! command -v go >/dev/null; then echo "setup: Go is required" >&2; exit 1; fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$py" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade "pip==26.3"
fi
full=$(sha256sum requirements-dev.txt | cut -d' ' -f1)
if [ "$(cat .venv/.requirements-sha 2>/dev/null)" != "$full" ]; then
  if [ "$what" = demo ]; then
    # The demo's packages only, at the versions the tests use.
    if [ "$(cat .venv/.demo-sha 2>/dev/null)" != "$full" ]; then
      echo "setup: installing the demo's packages into .venv" >&2
      .venv/bin/python -m pip install -q -c requirements-dev.txt pandas polars pyarrow pyiceberg sqlalchemy
      echo "$full" > .venv/.demo-sha
    fi
  else
    echo "setup: installing requirements-dev.txt into .venv" >&2
    .venv/bin/python -m pip install -q -r requirements-dev.txt
    echo "$full" > .venv/.requirements-sha
  fi
fi
./build.sh
if [ "$what" != demo ]; then
  bash .ci/spark.sh >/dev/null
  bash .ci/rest.sh setup >/dev/null && bash .ci/s3.sh setup >/dev/null  # REST catalog server and versitygw (install/cache only)
fi
