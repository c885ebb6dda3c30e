#!/usr/bin/env bash
# Fuzzing, bounded: the regression tests beside the targets, then each
# target's seed corpus (testdata/fuzz/<Target>, crashers found earlier) and
# a bounded number of new inputs. One worker per target: the machine is
# shared. A failing input is written to testdata/fuzz/<Target>/ and the
# script exits non-zero; commit it with the fix as a regression seed.
#
# The bound is a count of executions per target (a few seconds' worth on 2
# cores), not a duration: Go 1.26's fuzz coordinator can report a
# duration's end as a failure ("context deadline exceeded", no input
# written) when a worker is busy at that moment, e.g. minimizing a new
# input on a loaded machine (golang/go#75804, fixed in Go 1.27). FUZZTIME
# (a duration or a count such as 50000x) overrides every target's bound for
# longer runs by hand.
#
# The first run compiles the packages with coverage instrumentation (about
# five minutes per target package on 2 cores with a cold build cache); later
# runs reuse Go's build cache.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== fuzz: regression tests and seed corpora"
go test -count=1 ./capi/cstream/ ./core/cimport/ ./core/request/ ./core/expr/

fuzz() { # fuzz PACKAGE TARGET EXECUTIONS
  local t=${FUZZTIME:-$3}
  echo "== fuzz: $2 ($t)"
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" -parallel 1 "$1"
}
fuzz ./core/request FuzzDecode 20000x
fuzz ./core/expr FuzzCompile 15000x
fuzz ./capi/cstream FuzzImportStream 2000x
fuzz ./capi/cstream FuzzWriteStream 300x
