#!/usr/bin/env bash
# Sets up everything the demo and the tests need, idempotently:
# the project virtualenv with pinned packages (from PyPI) and the library.
# Go's module and build caches stay in their default places so later runs reuse them.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
if ! command -v go >/dev/null; then echo "setup: Go is required" >&2; exit 1; fi
stamp=.venv/.requirements-sha
want=$(sha256sum requirements-dev.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: creating .venv with requirements-dev.txt" >&2
  "$py" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade "pip==26.3"
  .venv/bin/python -m pip install -q -r requirements-dev.txt
  echo "$want" > "$stamp"
fi
./build.sh
bash .ci/spark.sh >/dev/null
bash .ci/rest.sh setup >/dev/null && bash .ci/s3.sh setup >/dev/null  # REST catalog server and versitygw for tests/py/test_catalogs.py (install/cache only)
