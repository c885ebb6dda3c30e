#!/usr/bin/env bash
# Runs the write benchmark (bench/run.py) with the project's virtualenv. All set-up is done by
# run.py: TPC-H data is generated once into bench/.data/ (git-ignored, it holds its own .gitignore)
# with the pinned tpchgen-cli, and pyiceberg-core (PyIceberg's partitioned writes) goes there if missing.
# Arguments are passed through: bench/run.sh [--quick] [--runs N] [--sf 1] [--only a,b] ...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$root/.venv/bin/python"
if [[ ! -x "$py" ]]; then
  echo "bench/run.sh: $py not found; create the project's virtualenv first" >&2
  exit 2
fi
if [[ ! -x "$root/.venv/bin/tpchgen-cli" ]]; then
  echo "bench/run.sh: tpchgen-cli is missing from the virtualenv (pinned 4.0.0)" >&2
  exit 2
fi
cd "$root"
export BENCH_ENTRY="bench/run.sh"
exec "$py" bench/run.py "$@"
