#!/usr/bin/env bash
# versitygw (Apache-2.0), a real S3 server over a local folder, for the S3 tests.
#
#   .ci/s3.sh setup   go install the pinned versitygw into the cache, print its path
#                     (idempotent; module checksums are verified by the Go checksum
#                     database, as for every go install)
#   (the posix backend keeps object metadata in user xattrs: S3_DIR must be on ext4/xfs/btrfs)
#   .ci/s3.sh start   run it in the foreground (exec) on 127.0.0.1:$S3_PORT serving
#                     $S3_DIR, root keys from ROOT_ACCESS_KEY / ROOT_SECRET_KEY
set -euo pipefail

VERSION=v1.8.0
bin_dir=${XDG_CACHE_HOME:-$HOME/.cache}/pyiceberg-go/bin
bin=$bin_dir/versitygw
stamp=$bin_dir/.versitygw-version
fail() { echo "s3.sh: $*" >&2; exit 1; }

setup() {
  if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$VERSION" ]; then
    echo "$bin"
    return
  fi
  command -v go >/dev/null || fail "Go is required to install versitygw"
  mkdir -p "$bin_dir"
  echo "s3.sh: installing versitygw $VERSION" >&2
  # Outside the project's module, with its own pinned go.mod; -trimpath keeps the build path out.
  (cd "$bin_dir" && GOBIN="$bin_dir" GOFLAGS=-trimpath go install "github.com/versity/versitygw/cmd/versitygw@$VERSION") >&2 \
    || fail "go install github.com/versity/versitygw/cmd/versitygw@$VERSION failed"
  echo "$VERSION" > "$stamp"
  echo "$bin"
}

start() {
  [ -x "$bin" ] || fail "not set up: run .ci/s3.sh setup"
  : "${S3_PORT:?S3_PORT is required}" "${S3_DIR:?S3_DIR is required}"
  : "${ROOT_ACCESS_KEY:?ROOT_ACCESS_KEY is required}" "${ROOT_SECRET_KEY:?ROOT_SECRET_KEY is required}"
  mkdir -p "$S3_DIR"
  exec "$bin" --port "127.0.0.1:$S3_PORT" posix "$S3_DIR"
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  *) fail "usage: .ci/s3.sh setup|start" ;;
esac
