#!/usr/bin/env bash
# Builds libpyiceberg_go.so (c-shared), checks its exported symbols and the
# glibc it needs, installs it into the Python package, and builds the wheel.
#   ./build.sh            library + package copy
#   ./build.sh wheel      also the platform wheel into wheels/
#   CGOCHECK2=1 ./build.sh  a debug build with GOEXPERIMENT=cgocheck2
#   PIG_TAGS="pyiceberg_gcs pyiceberg_azure" ./build.sh  also link GCS (gs://) and
#                           Azure (abfs://, wasb://) storage; the default build has
#                           local files and S3 only, which keeps the library small
#   PIG_TAGS=pig_testhooks ./build.sh  the library with the test hooks (core/testhooks:
#                           the __panic operation, test.* session keys), written to
#                           build/libpyiceberg_go_testhooks.so for the tests that use
#                           them; it is never installed into the package or a wheel
set -euo pipefail
cd "$(dirname "$0")"
out=build
mkdir -p "$out" pyiceberg_go/_lib

flags=(-buildmode=c-shared -trimpath)
if [ -n "${PIG_TAGS:-}" ]; then flags+=(-tags "$PIG_TAGS"); fi
# Tags may be separated by spaces or commas.
hooks=0
tags=${PIG_TAGS:-}
for tag in ${tags//,/ }; do
  if [ "$tag" = pig_testhooks ]; then hooks=1; fi
done
if [ "$hooks" = 1 ] && [ "${1:-}" = wheel ]; then
  echo "build.sh: a wheel never holds the test hooks; build it without pig_testhooks" >&2
  exit 1
fi
ldflags="-extldflags -Wl,--version-script=$PWD/capi/exports.map"
if [ "${CGOCHECK2:-0}" = 1 ]; then
  export GOEXPERIMENT=cgocheck2
  name=libpyiceberg_go_cgocheck2
else
  ldflags="-s -w $ldflags"
  name=libpyiceberg_go
fi
if [ "$hooks" = 1 ]; then name="${name}_testhooks"; fi
lib="$out/$name.so"
echo "building $lib" >&2
# Build beside the target and rename: a process that has the old library
# loaded keeps its copy instead of seeing the file change under it.
CGO_ENABLED=1 go build "${flags[@]}" -ldflags "$ldflags" -o "$lib.tmp" ./capi
rm -f "$lib.h" "${lib%.so}.so.h" # the generated header is not shipped: include/pyiceberg_go.h is the contract
mv -f "$lib.tmp" "$lib"

# Only the pig_ prefix may be exported.
extra=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBRW]/ {print $3}' | grep -v '^pig_' | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' || true)
if [ -n "$extra" ]; then
  echo "build.sh: unexpected exported symbols:" >&2
  echo "$extra" | head -20 >&2
  exit 1
fi
want=$(grep -oE '\bpig_[a-z_]+\(' include/pyiceberg_go.h | tr -d '(' | sort -u)
have=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep '^pig_' | sort -u)
if [ "$want" != "$have" ]; then
  echo "build.sh: exports differ from include/pyiceberg_go.h:" >&2
  diff <(echo "$want") <(echo "$have") >&2 || true
  exit 1
fi

# The newest glibc symbol version the library needs decides the wheel tag.
glibc=$(objdump -T "$lib" | grep -oE 'GLIBC_[0-9]+\.[0-9]+' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n | tail -1)
echo "$glibc" > "$out/glibc-version"
echo "built $lib ($(du -h "$lib" | cut -f1), $(stat -c %s "$lib") bytes, tags: ${PIG_TAGS:-none}, needs glibc $glibc)" >&2

if [ "${CGOCHECK2:-0}" = 1 ] || [ "$hooks" = 1 ]; then exit 0; fi
cp "$lib" pyiceberg_go/_lib/libpyiceberg_go.so.tmp
mv -f pyiceberg_go/_lib/libpyiceberg_go.so.tmp pyiceberg_go/_lib/libpyiceberg_go.so
# The library carries the zstd C library (capi/czstd): its BSD license goes
# beside it, from the module cache, into the wheel.
zstd_dir=$(go list -m -f '{{.Dir}}' github.com/DataDog/zstd)
cp "$zstd_dir/ZSTD_LICENSE" pyiceberg_go/_lib/ZSTD_LICENSE.tmp
mv -f pyiceberg_go/_lib/ZSTD_LICENSE.tmp pyiceberg_go/_lib/ZSTD_LICENSE
# The package's version comes from the library's version file.
cp core/version/VERSION pyiceberg_go/_lib/VERSION

if [ "${1:-}" = wheel ]; then
  py=${PYTHON:-.venv/bin/python}
  tag="manylinux_${glibc/./_}_$(uname -m)"
  rm -rf "$out/wheel" && mkdir -p "$out/wheel" wheels
  # setuptools' scratch folders go under $out, not into the source tree.
  "$py" -m pip wheel --no-deps --no-build-isolation -w "$out/wheel" . >&2
  rm -rf pyiceberg_go.egg-info
  whl=$(ls "$out"/wheel/pyiceberg_go-*.whl)
  "$py" -m wheel tags --remove --python-tag py3 --abi-tag none --platform-tag "$tag" "$whl" >&2
  rm -f wheels/pyiceberg_go-*.whl
  mv "$out"/wheel/pyiceberg_go-*"$tag".whl wheels/
  ls -l wheels/*.whl >&2
  echo "wheel size: $(stat -c %s wheels/pyiceberg_go-*.whl) bytes" >&2
fi
