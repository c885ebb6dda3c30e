#!/usr/bin/env bash
# MariaDB 10.11 from Debian's packages (Debian 12 ships MariaDB as its MySQL server), a throwaway
# server for the JDBC catalog tests on MySQL.
#
#   .ci/mysql.sh setup   install the pinned server package if it is missing (apt), print mariadbd's path
#   .ci/mysql.sh start   initialise $MY_DIR (a new data directory with database "iceberg" and a user
#                        $MY_USER identified by $MY_PASSWORD, allowed everything on it, password
#                        authentication over TCP) and run the server in the foreground (exec) on
#                        127.0.0.1:$MY_PORT
#
# The server reads no option file (--no-defaults): everything it needs is on its command line:
# utf8mb4 text, strict SQL mode (a value too long for its column is an error, never cut) and the
# DYNAMIC row format, whose 3072-byte index keys hold the catalog tables' primary keys of three
# VARCHAR(255) columns in utf8mb4 (3 x 255 x 4 = 3060 bytes).
# MariaDB does not run as root: as root, the data directory belongs to the package's "mysql" user.
set -euo pipefail

VERSION=1:10.11.19-0+deb12u1
bin=/usr/sbin/mariadbd
fail() { echo "mysql.sh: $*" >&2; exit 1; }

setup() {
  if [ ! -x "$bin" ] || [ ! -x /usr/bin/mariadb-install-db ]; then
    command -v apt-get >/dev/null || fail "apt-get is needed to install mariadb-server"
    echo "mysql.sh: installing mariadb-server=$VERSION" >&2
    # Debian's maintainer scripts would start a system-wide server on port 3306: policy-rc.d
    # (where the machine has one) refuses, and the tests never use that server.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "mariadb-server=$VERSION" >&2 \
      || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "mariadb-server=$VERSION" >&2; } \
      || fail "apt-get install mariadb-server=$VERSION failed"
  fi
  echo "$bin"
}

# sql_string quotes $1 as a MariaDB string literal.
sql_string() {
  local s=${1//\\/\\\\}
  printf "'%s'" "${s//\'/\'\'}"
}

start() {
  : "${MY_DIR:?}" "${MY_PORT:?}" "${MY_USER:?}" "${MY_PASSWORD:?}"
  setup >/dev/null
  as=()
  if [ "$(id -u)" = 0 ]; then as=(runuser -u mysql --); fi
  mkdir -p "$MY_DIR/data"
  [ "$(id -u)" = 0 ] && chown -R mysql "$MY_DIR"
  opts=(--no-defaults --datadir="$MY_DIR/data" --socket="$MY_DIR/mysqld.sock" --pid-file="$MY_DIR/mysqld.pid"
        --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci
        --innodb-default-row-format=dynamic
        --sql-mode=STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION
        --skip-name-resolve --max-connections=200)
  "${as[@]}" /usr/bin/mariadb-install-db --no-defaults --datadir="$MY_DIR/data" --auth-root-authentication-method=socket \
    --skip-test-db --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci >/dev/null
  # The database and the user, in bootstrap mode (no network, nothing listening; one statement a
  # line; FLUSH PRIVILEGES loads the grant tables it otherwise skips); the password goes through
  # standard input, never a command line.
  user=$(sql_string "$MY_USER")
  {
    echo "FLUSH PRIVILEGES;"
    echo "CREATE DATABASE iceberg CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;"
    echo "CREATE USER $user@'127.0.0.1' IDENTIFIED BY $(sql_string "$MY_PASSWORD");"
    echo "GRANT ALL PRIVILEGES ON iceberg.* TO $user@'127.0.0.1';"
  } | "${as[@]}" "$bin" "${opts[@]}" --bootstrap --skip-networking >"$MY_DIR/bootstrap.log" 2>&1 \
    || { tail -n 20 "$MY_DIR/bootstrap.log" >&2; fail "creating the database and its user failed"; }
  exec "${as[@]}" "$bin" "${opts[@]}" --bind-address=127.0.0.1 --port="$MY_PORT"
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  *) fail "usage: $0 setup|start" ;;
esac
