#!/usr/bin/env bash
# fake-gcs-server (BSD-2-Clause), a Google Cloud Storage emulator (JSON and XML APIs over a
# local folder), for the gs:// tests.
#
#   .ci/gcs.sh setup   go install the pinned fake-gcs-server into the cache, print its path
#                      (idempotent; module checksums are verified by the Go checksum database)
#   .ci/gcs.sh start   run it in the foreground (exec) on http://127.0.0.1:$GCS_PORT, keeping
#                      its objects under $GCS_DIR (buckets are made by the tests over its API)
set -euo pipefail

VERSION=v1.56.1
bin_dir=${XDG_CACHE_HOME:-$HOME/.cache}/pyiceberg-go/bin
bin=$bin_dir/fake-gcs-server
stamp=$bin_dir/.fake-gcs-server-version
fail() { echo "gcs.sh: $*" >&2; exit 1; }

setup() {
  if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$VERSION" ]; then
    echo "$bin"
    return
  fi
  command -v go >/dev/null || fail "Go is required to install fake-gcs-server"
  mkdir -p "$bin_dir"
  echo "gcs.sh: installing fake-gcs-server $VERSION" >&2
  # Outside the project's module, with its own pinned go.mod; -trimpath keeps the build path out.
  (cd "$bin_dir" && GOBIN="$bin_dir" GOFLAGS=-trimpath go install "github.com/fsouza/fake-gcs-server@$VERSION") >&2 \
    || fail "go install github.com/fsouza/fake-gcs-server@$VERSION failed"
  echo "$VERSION" > "$stamp"
  echo "$bin"
}

start() {
  [ -x "$bin" ] || fail "not set up: run .ci/gcs.sh setup"
  : "${GCS_PORT:?GCS_PORT is required}" "${GCS_DIR:?GCS_DIR is required}"
  mkdir -p "$GCS_DIR/objects" "$GCS_DIR/seed"
  # -external-url: the address resumable uploads are continued at; -public-host: the host
  # whose XML API requests (bucket.host/object) it answers.
  exec "$bin" -scheme http -host 127.0.0.1 -port "$GCS_PORT" \
    -external-url "http://127.0.0.1:$GCS_PORT" -public-host "127.0.0.1:$GCS_PORT" \
    -backend filesystem -filesystem-root "$GCS_DIR/objects" -data "$GCS_DIR/seed" -log-level warn
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  *) fail "usage: .ci/gcs.sh setup|start" ;;
esac
