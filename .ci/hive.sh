#!/usr/bin/env bash
# Apache Hive's standalone metastore 4.0.0 on an embedded Derby database, a throwaway server for
# the Hive catalog tests.
#
#   .ci/hive.sh setup   fetch the pinned server jars with Maven (hive-standalone-metastore-server
#                       and the Hadoop jars it runs on), the Derby schema scripts from the same
#                       release's bin tarball (sha256 checked), and initialise, once, a template
#                       Derby database with the metastore's schema tool; print the cache folder
#                       (idempotent, fast when cached)
#   .ci/hive.sh start   write the server's configuration into $HIVE_DIR (warehouse $HIVE_WAREHOUSE)
#                       and run the metastore in the foreground (exec java) on port $HIVE_PORT,
#                       Thrift binary protocol without SASL (the metastore's defaults). Its database
#                       is a copy of the template Derby database in $HIVE_DIR, or, when
#                       $HIVE_DB_URL is set (jdbc:postgresql://host:port/db, an empty database,
#                       with $HIVE_DB_USER and $HIVE_DB_PASSWORD), that PostgreSQL database, whose
#                       schema the schema tool creates first. Derby serves one writer at a time
#                       well; concurrent committers need PostgreSQL (Derby's lock waits tangle
#                       with the metastore's own serialisation of its lock calls and fail them).
#
# Both Maven Central only. Needs Java 17+ and Maven. Caches in
# ${XDG_CACHE_HOME:-~/.cache}/pyiceberg-go/hive.
set -euo pipefail

HIVE=4.0.0
HADOOP=3.3.6
MAVEN=https://repo1.maven.org/maven2
TARBALL=hive-standalone-metastore-server-$HIVE-bin.tar.gz
TARBALL_SHA256=98691daba012f576755e406c4ca0a3777254f7e60a85a956ed7a3ed60e71db78
# sha256 of the jars that carry the server; the rest are Maven-checked dependencies.
SUMS=(
  "hive-standalone-metastore-server-$HIVE.jar 8e2905047218109a7f0abc0f13cc5b1e2b1fb62efe4a8435f72ae51ff77eca04"
  "hive-standalone-metastore-common-$HIVE.jar 0483260c8312ace760387c2eda63cff2c876304227ceb1f6574f044e551e4006"
  "derby-10.14.2.0.jar 2c40eb581e5221ab33c7c796979b49ce404e7e393357c58f7bcdb30a09efca72"
)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/pyiceberg-go/hive
lib=$dir/lib-$HIVE
home=$dir/home-$HIVE         # METASTORE_HOME: scripts/metastore/upgrade/derby
template=$dir/derby-$HIVE    # db/: a Derby database with the $HIVE schema, copied by start
fail() { echo "hive.sh: $*" >&2; exit 1; }

setup() {
  command -v java >/dev/null || fail "Java 17+ is required"
  pom_sum=$(write_pom | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$lib/.complete" 2>/dev/null)" != "$pom_sum" ] || ! check_sums; then
    command -v mvn >/dev/null || fail "Maven (mvn) is required to fetch the Hive metastore"
    mkdir -p "$dir"
    write_pom > "$dir/pom.xml"
    rm -rf "$lib.tmp"
    echo "hive.sh: fetching the Hive $HIVE metastore jars with Maven" >&2
    mvn -q -B -f "$dir/pom.xml" -Dmaven.repo.local="$dir/m2" \
      dependency:copy-dependencies -DoutputDirectory="$lib.tmp" -DincludeScope=runtime >&2 \
      || fail "mvn dependency:copy-dependencies failed (see above)"
    rm -rf "$lib"
    mv "$lib.tmp" "$lib"
    check_sums || fail "sha256 mismatch on the metastore jars"
    echo "$pom_sum" > "$lib/.complete"
  fi
  if [ ! -f "$home/.complete" ]; then
    echo "hive.sh: fetching the Hive $HIVE schema scripts" >&2
    rm -rf "$home" && mkdir -p "$home"
    tmp=$(mktemp "$dir/tarball.XXXXXX")
    curl -fsSL --retry 3 --retry-delay 2 -o "$tmp" "$MAVEN/org/apache/hive/hive-standalone-metastore-server/$HIVE/$TARBALL" \
      || { rm -f "$tmp"; fail "download failed: $TARBALL"; }
    echo "$TARBALL_SHA256  $tmp" | sha256sum -c --status || { rm -f "$tmp"; fail "sha256 mismatch on $TARBALL"; }
    tar -xzf "$tmp" -C "$home" --strip-components=1 "apache-hive-metastore-$HIVE-bin/scripts/metastore/upgrade/derby" \
      "apache-hive-metastore-$HIVE-bin/scripts/metastore/upgrade/postgres"
    rm -f "$tmp"
    touch "$home/.complete"
  fi
  if [ ! -f "$template/.complete" ]; then
    echo "hive.sh: initialising the template Derby database (schema $HIVE)" >&2
    rm -rf "$template" "$template.tmp" "$dir/init"
    mkdir -p "$dir/init"
    write_site "$dir/init" "jdbc:derby:;databaseName=$template.tmp/db;create=true" "file://$dir/init/warehouse"
    (cd "$dir/init" && METASTORE_HOME="$home" java -Xmx512m -cp "$dir/init:$lib/*" \
      org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool \
      -initSchema -dbType derby -userName APP -passWord mine >"$dir/init/schematool.log" 2>&1) \
      || { tail -30 "$dir/init/schematool.log" >&2; fail "the schema tool failed (log above)"; }
    rm -rf "$dir/init"
    mv "$template.tmp" "$template"
    touch "$template/.complete"
  fi
  echo "$dir"
}

check_sums() {
  for entry in "${SUMS[@]}"; do
    read -r name sum <<<"$entry"
    [ -f "$lib/$name" ] || return 1
    echo "$sum  $lib/$name" | sha256sum -c --status || { echo "hive.sh: bad sha256: $name" >&2; return 1; }
  done
}

# write_site DIR JDBC_URL WAREHOUSE [DRIVER USER PASSWORD] writes DIR/metastore-site.xml.
write_site() {
  cat >"$1/metastore-site.xml" <<XML
<configuration>
  <property><name>javax.jdo.option.ConnectionURL</name><value>$2</value></property>
  <property><name>javax.jdo.option.ConnectionDriverName</name><value>${4:-org.apache.derby.jdbc.EmbeddedDriver}</value></property>
  <property><name>javax.jdo.option.ConnectionUserName</name><value>${5:-APP}</value></property>
  <property><name>javax.jdo.option.ConnectionPassword</name><value>${6:-mine}</value></property>
  <property><name>metastore.warehouse.dir</name><value>$3</value></property>
  <property><name>metastore.warehouse.external.dir</name><value>$3</value></property>
  <property><name>metastore.schema.verification</name><value>true</value></property>
  <!-- Tables are served as stored: no translation for clients that declare no capabilities. -->
  <property><name>metastore.metadata.transformer.class</name><value> </value></property>
  <property><name>metastore.disallow.incompatible.col.type.changes</name><value>false</value></property>
  <property><name>metastore.event.db.notification.api.auth</name><value>false</value></property>
</configuration>
XML
}

start() {
  : "${HIVE_DIR:?}" "${HIVE_PORT:?}" "${HIVE_WAREHOUSE:?}"
  [ -f "$lib/.complete" ] && [ -f "$template/.complete" ] || fail "not set up: run .ci/hive.sh setup"
  mkdir -p "$HIVE_DIR/conf" "$HIVE_WAREHOUSE"
  wh=$HIVE_WAREHOUSE
  case "$wh" in /*) wh=file://$wh ;; esac
  cd "$HIVE_DIR"
  if [ -n "${HIVE_DB_URL:-}" ]; then
    case "$HIVE_DB_URL" in jdbc:postgresql://*) ;; *) fail "HIVE_DB_URL must be jdbc:postgresql://host:port/db" ;; esac
    umask 077  # the configuration holds the database password
    write_site "$HIVE_DIR/conf" "$HIVE_DB_URL" "$wh" org.postgresql.Driver "${HIVE_DB_USER:?}" "${HIVE_DB_PASSWORD:?}"
    METASTORE_HOME="$home" java -Xmx512m -cp "$HIVE_DIR/conf:$lib/*" \
      org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool \
      -initSchema -dbType postgres >"$HIVE_DIR/schematool.log" 2>&1 \
      || { tail -30 "$HIVE_DIR/schematool.log" >&2; fail "the schema tool failed on $HIVE_DB_URL (log above)"; }
  else
    rm -rf "$HIVE_DIR/db"
    cp -r "$template/db" "$HIVE_DIR/db"
    write_site "$HIVE_DIR/conf" "jdbc:derby:;databaseName=$HIVE_DIR/db" "$wh"
  fi
  # Short Derby lock waits: with Derby, concurrent lock / check_lock / unlock calls tangle Derby's
  # row locks with the metastore's own serialisation; short waits fail them fast instead of after
  # minutes (use PostgreSQL for concurrent committers).
  exec java -Xmx512m -Dderby.stream.error.file="$HIVE_DIR/derby.log" \
    -Dderby.locks.waitTimeout=2 -Dderby.locks.deadlockTimeout=1 -cp "$HIVE_DIR/conf:$lib/*" \
    org.apache.hadoop.hive.metastore.HiveMetaStore -p "$HIVE_PORT"
}

write_pom() {
  cat <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pyiceberg-go.ci</groupId>
  <artifactId>hive-fixture</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.hive</groupId><artifactId>hive-standalone-metastore-server</artifactId><version>$HIVE</version></dependency>
    <dependency><groupId>org.postgresql</groupId><artifactId>postgresql</artifactId><version>42.7.14</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-common</artifactId><version>$HADOOP</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-mapreduce-client-core</artifactId><version>$HADOOP</version></dependency>
    <!-- The metastore's warehouse code names HDFS's SnapshotException; that class alone is needed. -->
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-hdfs</artifactId><version>$HADOOP</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
  </dependencies>
</project>
POM
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  *) fail "usage: .ci/hive.sh setup|start" ;;
esac
