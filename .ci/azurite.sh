#!/usr/bin/env bash
# Azurite (MIT), Microsoft's Azure Storage emulator, for the abfs:// and wasb:// tests (its
# Blob service: iceberg-go and PyArrow both reach ADLS through the Blob API there).
#
#   .ci/azurite.sh setup   check node/npm (Debian's nodejs and npm, pinned, when missing),
#                          npm install the pinned azurite into the cache, print its path
#                          (idempotent; npm verifies the registry's integrity hashes)
#   .ci/azurite.sh start   run its Blob service in the foreground (exec) on
#                          http://127.0.0.1:$AZURITE_PORT, keeping its data under $AZURITE_DIR,
#                          with the accounts in $AZURITE_ACCOUNTS ("name:base64key")
set -euo pipefail

# 3.36 and later need Node 22; Debian bookworm has Node 18 (and this machine Node 20).
VERSION=3.35.0
NODE_DEB_VERSION=18.20.4+dfsg-1~deb12u3
NPM_DEB_VERSION=9.2.0~ds1-1
prefix=${XDG_CACHE_HOME:-$HOME/.cache}/pyiceberg-go/azurite
bin=$prefix/node_modules/.bin/azurite-blob
fail() { echo "azurite.sh: $*" >&2; exit 1; }

installed() {
  [ -x "$bin" ] && [ "$(node -p "require('$prefix/node_modules/azurite/package.json').version" 2>/dev/null)" = "$VERSION" ]
}

setup() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    command -v apt-get >/dev/null || fail "node and npm are required (Debian: apt-get install nodejs npm)"
    echo "azurite.sh: installing Debian's nodejs and npm" >&2
    sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo
    $sudo_ apt-get update >&2 && $sudo_ apt-get install -y "nodejs=$NODE_DEB_VERSION" "npm=$NPM_DEB_VERSION" >&2 \
      || fail "apt-get install nodejs=$NODE_DEB_VERSION npm=$NPM_DEB_VERSION failed"
  fi
  if installed; then
    echo "$bin"
    return
  fi
  echo "azurite.sh: installing azurite $VERSION" >&2
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --save-exact "azurite@$VERSION" >&2 \
    || fail "npm install azurite@$VERSION failed"
  installed || fail "azurite $VERSION is not at $bin after npm install"
  echo "$bin"
}

start() {
  installed || fail "not set up: run .ci/azurite.sh setup"
  : "${AZURITE_PORT:?AZURITE_PORT is required}" "${AZURITE_DIR:?AZURITE_DIR is required}"
  : "${AZURITE_ACCOUNTS:?AZURITE_ACCOUNTS is required}"
  mkdir -p "$AZURITE_DIR"
  export AZURITE_ACCOUNTS
  # --skipApiVersionCheck: newer SDKs (Go's, PyArrow's C++) send API versions this release
  # does not know yet; --loose: ignore headers it does not support instead of failing;
  # --disableTelemetry: no reports to Microsoft (on by default since 3.34).
  exec "$bin" --blobHost 127.0.0.1 --blobPort "$AZURITE_PORT" --location "$AZURITE_DIR" \
    --skipApiVersionCheck --loose --silent --disableProductStyleUrl --disableTelemetry
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  *) fail "usage: .ci/azurite.sh setup|start" ;;
esac
