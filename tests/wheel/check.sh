#!/usr/bin/env bash
# Installs the built wheel into a fresh virtualenv with no Go on PATH and no
# pyarrow, writes a table from a hand-made Arrow stream (nanoarrow-free: the
# polars-free path is the raw capsule from pyarrow being absent, so we use
# polars, which exports Arrow without pyarrow), then reads it with PyIceberg
# from the project venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
whl=$(ls wheels/pyiceberg_go-*.whl)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
polars_pins=$(grep -E '^polars(-runtime-32)?==' requirements-dev.txt)
"$tmp/venv/bin/pip" install -q "$whl" $polars_pins
if "$tmp/venv/bin/python" -c "import pyarrow" 2>/dev/null; then
  echo "wheel check: pyarrow must not be installed here" >&2; exit 1
fi
(cd "$tmp" && env -i PATH=/usr/bin:/bin HOME="$tmp" "$tmp/venv/bin/python" - "$tmp") <<'PY'
import sys, os
tmp = sys.argv[1]
import polars as pl
import pyiceberg_go as ig
assert "/site-packages/pyiceberg_go" in ig.__file__, ig.__file__
# the zstd C library built into the shared library brings its license
assert "BSD License" in open(os.path.join(os.path.dirname(ig.__file__), "_lib", "ZSTD_LICENSE")).read()
# one version number: the wheel's metadata, the package's and the library's
from importlib.metadata import version
want = open(os.path.join(os.path.dirname(ig.__file__), "_lib", "VERSION")).read().strip()
assert version("pyiceberg-go") == ig.__version__ == ig.library_version() == want, (version("pyiceberg-go"), ig.__version__, ig.library_version(), want)
ig.configure(catalogs={"local": {"type": "sql", "uri": f"sqlite:///{tmp}/cat.db", "warehouse": f"file://{tmp}/wh"}})
df = pl.DataFrame({"id": list(range(100)), "name": [f"n{i}" for i in range(100)]})
r = ig.writeTo(df, "local.db.t").partitionedBy(ig.bucket(4, "id")).create()
assert r.summary["added-records"] == "100", r.summary
print("wheel write ok", r.snapshot_id)
PY
.venv/bin/python - "$tmp" <<'PY'
import sys
from pyiceberg.catalog.sql import SqlCatalog
tmp = sys.argv[1]
t = SqlCatalog("local", uri=f"sqlite:///{tmp}/cat.db", warehouse=f"file://{tmp}/wh").load_table("db.t")
rows = t.scan().to_arrow()
assert sorted(rows["id"].to_pylist()) == list(range(100))
print("wheel check: 1 passed, 0 failed")
PY
