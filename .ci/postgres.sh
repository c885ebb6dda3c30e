#!/usr/bin/env bash
# PostgreSQL 15 from Debian's packages, a throwaway server for the JDBC catalog tests.
#
#   .ci/postgres.sh setup   install the pinned server package if it is missing (apt), print its bin dir
#   .ci/postgres.sh start   initialise $PG_DIR (a new cluster whose superuser $PG_USER has password
#                           $PG_PASSWORD, password authentication over TCP) and run the server in
#                           the foreground (exec) on 127.0.0.1:$PG_PORT, with database "iceberg"
#
# PostgreSQL refuses to run as root: as root, the cluster belongs to the package's "postgres" user.
set -euo pipefail

MAJOR=15
VERSION=15.18-0+deb12u1
bin=/usr/lib/postgresql/$MAJOR/bin
fail() { echo "postgres.sh: $*" >&2; exit 1; }

setup() {
  if [ ! -x "$bin/postgres" ]; then
    command -v apt-get >/dev/null || fail "apt-get is needed to install postgresql-$MAJOR"
    echo "postgres.sh: installing postgresql-$MAJOR=$VERSION" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-$MAJOR=$VERSION" >&2 \
      || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-$MAJOR=$VERSION" >&2; } \
      || fail "apt-get install postgresql-$MAJOR=$VERSION failed"
  fi
  echo "$bin"
}

start() {
  : "${PG_DIR:?}" "${PG_PORT:?}" "${PG_USER:?}" "${PG_PASSWORD:?}"
  setup >/dev/null
  as=()
  if [ "$(id -u)" = 0 ]; then as=(runuser -u postgres --); fi
  mkdir -p "$PG_DIR"
  [ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
  pw=$PG_DIR/.pw
  printf '%s\n' "$PG_PASSWORD" > "$pw"
  [ "$(id -u)" = 0 ] && chown postgres "$pw"
  "${as[@]}" "$bin/initdb" -D "$PG_DIR/data" -U "$PG_USER" --pwfile="$pw" -A scram-sha-256 --auth-local=trust -E UTF8 >/dev/null
  rm -f "$pw"
  # Create the database on a private socket before opening the port.
  "${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -w -o "-c listen_addresses= -k $PG_DIR" start >/dev/null
  "${as[@]}" "$bin/psql" -h "$PG_DIR" -U "$PG_USER" -d postgres -qc "CREATE DATABASE iceberg" >/dev/null
  "${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -w stop >/dev/null
  exec "${as[@]}" "$bin/postgres" -D "$PG_DIR/data" -c listen_addresses=127.0.0.1 -p "$PG_PORT" -k "$PG_DIR" -c max_connections=200 -c fsync=on
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  *) fail "usage: $0 setup|start" ;;
esac
