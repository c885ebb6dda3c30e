#!/usr/bin/env bash
# Fuzzing, bounded: the regression tests beside the targets, then each
# target's seed corpus (testdata/fuzz/<Target>, crashers found earlier) and
# FUZZTIME (default 20s) of new inputs. One worker per target: the machine
# is shared. A failing input is written to testdata/fuzz/<Target>/ and the
# script exits non-zero; commit it with the fix as a regression seed.
#
# The first run compiles the packages with coverage instrumentation (about
# five minutes per target package on 2 cores with a cold build cache); later
# runs reuse Go's build cache.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-20s}

echo "== fuzz: regression tests and seed corpora"
go test -count=1 ./capi/cstream/ ./core/cimport/ ./core/request/ ./core/expr/

fuzz() { # fuzz PACKAGE TARGET
  echo "== fuzz: $2 ($t)"
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" -parallel 1 "$1"
}
fuzz ./core/request FuzzDecode
fuzz ./core/expr FuzzCompile
fuzz ./capi/cstream FuzzImportStream
fuzz ./capi/cstream FuzzWriteStream
