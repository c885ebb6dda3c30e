#!/usr/bin/env bash
# Compiles create_append.c against include/ and a built library, runs it on a
# fresh SQLite catalog, then checks the table with PyIceberg.
#   tests/c/run.sh [LIBRARY]   default: build/libpyiceberg_go.so
#   tests/c/run.sh build/libpyiceberg_go_cgocheck2.so   (after CGOCHECK2=1 ./build.sh)
# Exits non-zero on any failure; the last line is a "c-abi: N passed, M failed" summary.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$(realpath "${1:-$repo/build/libpyiceberg_go.so}")
py=${PYTHON:-$repo/.venv/bin/python}
if [ ! -f "$lib" ]; then
  echo "run.sh: $lib not found; run ./build.sh first" >&2
  echo "c-abi: 0 passed, 1 failed"
  exit 1
fi
work=$(mktemp -d /tmp/pig-c-abi.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/wh"

passed=0 failed=0
step() { # step NAME CMD...: runs a step and counts it
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "run.sh: step $name failed" >&2
  fi
}

# The library has no SONAME: link it by path and find it through an rpath.
step compile gcc -std=c11 -Wall -Wextra -Werror -O1 -g -I"$repo/include" \
  -o "$work/create_append" "$here/create_append.c" "$lib" -Wl,-rpath,"$(dirname "$lib")"
if [ -x "$work/create_append" ]; then
  step c-program "$work/create_append" "$work"
  step pyiceberg "$py" "$here/check_pyiceberg.py" "$work"
else
  failed=$((failed + 2))
fi
echo "library: $lib"
echo "c-abi: $passed passed, $failed failed"
[ "$failed" = 0 ]
