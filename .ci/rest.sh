#!/usr/bin/env bash
# Apache Iceberg's REST catalog test server (org.apache.iceberg.rest.RESTCatalogServer
# from the iceberg-open-api test fixtures) for the catalog tests.
#
#   .ci/rest.sh setup   fetch the pinned jars with Maven into the cache, check the
#                       sha256 of the main ones, print the classpath file (idempotent)
#   .ci/rest.sh start   run the server in the foreground (exec java); configured by
#                       REST_PORT and CATALOG_* variables (CATALOG_WAREHOUSE,
#                       CATALOG_URI for its JDBC store, CATALOG_IO__IMPL, CATALOG_S3_*)
#
# iceberg-open-api is published up to 1.11.0 (there is no 1.12.0 on Maven Central),
# so the server is 1.11.0 while Spark uses iceberg-spark-runtime 1.12.0.
# Needs Java 17+ and Maven. Caches in ${XDG_CACHE_HOME:-~/.cache}/pyiceberg-go/rest.
set -euo pipefail

ICEBERG=1.11.0
JETTY=12.1.14
HADOOP=3.4.2
AWSSDK=2.35.0
SQLITE_JDBC=3.54.1.0
SLF4J=2.0.17
# sha256 of the jars that carry the server; the rest are Maven-checked dependencies.
SUMS=(
  "iceberg-open-api-$ICEBERG-test-fixtures.jar b0aa8636d88c24976d552ac9b3075a1315dc1ccd4fa6ed95b365901842664316"
  "iceberg-core-$ICEBERG-tests.jar 4284719a5f0eb7db01e9f784a0ed4ca8bacf7d6f9951924143afc083428d8be3"
  "iceberg-core-$ICEBERG.jar 53b9eb7a8c34fb9958ea7d9a4d19ba5bc96f592d0f05e8625b0778c70b1f0090"
)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/pyiceberg-go/rest
lib=$dir/lib-$ICEBERG
fail() { echo "rest.sh: $*" >&2; exit 1; }

setup() {
  command -v java >/dev/null || fail "Java 17+ is required"
  if [ -f "$lib/.complete" ] && check_sums; then
    echo "$lib"
    return
  fi
  command -v mvn >/dev/null || fail "Maven (mvn) is required to fetch the REST catalog server"
  mkdir -p "$dir"
  write_pom > "$dir/pom.xml"
  rm -rf "$lib.tmp"
  echo "rest.sh: fetching Iceberg $ICEBERG REST catalog server jars with Maven" >&2
  mvn -q -B -f "$dir/pom.xml" -Dmaven.repo.local="$dir/m2" \
    dependency:copy-dependencies -DoutputDirectory="$lib.tmp" -DincludeScope=runtime >&2 \
    || fail "mvn dependency:copy-dependencies failed (see above)"
  rm -rf "$lib"
  mv "$lib.tmp" "$lib"
  check_sums || { fail "sha256 mismatch on the server jars"; }
  touch "$lib/.complete"
  echo "$lib"
}

check_sums() {
  for entry in "${SUMS[@]}"; do
    read -r name sum <<<"$entry"
    [ -f "$lib/$name" ] || return 1
    echo "$sum  $lib/$name" | sha256sum -c --status || { echo "rest.sh: bad sha256: $name" >&2; return 1; }
  done
}

start() {
  [ -f "$lib/.complete" ] || fail "not set up: run .ci/rest.sh setup"
  # The server reads its port from the catalog property rest.port (CATALOG_REST_PORT).
  export CATALOG_REST_PORT=${REST_PORT:-${CATALOG_REST_PORT:-8181}}
  exec java -Xmx512m -cp "$lib/*" org.apache.iceberg.rest.RESTCatalogServer
}

write_pom() {
  cat <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pyiceberg-go.ci</groupId>
  <artifactId>rest-fixture</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-open-api</artifactId><version>$ICEBERG</version><classifier>test-fixtures</classifier><type>jar</type></dependency>
    <dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-core</artifactId><version>$ICEBERG</version></dependency>
    <dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-core</artifactId><version>$ICEBERG</version><classifier>tests</classifier></dependency>
    <dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-aws</artifactId><version>$ICEBERG</version></dependency>
    <dependency><groupId>software.amazon.awssdk</groupId><artifactId>s3</artifactId><version>$AWSSDK</version></dependency>
    <dependency><groupId>software.amazon.awssdk</groupId><artifactId>sts</artifactId><version>$AWSSDK</version></dependency>
    <dependency><groupId>software.amazon.awssdk</groupId><artifactId>kms</artifactId><version>$AWSSDK</version></dependency>
    <dependency><groupId>software.amazon.awssdk</groupId><artifactId>url-connection-client</artifactId><version>$AWSSDK</version></dependency>
    <dependency><groupId>software.amazon.awssdk</groupId><artifactId>apache-client</artifactId><version>$AWSSDK</version></dependency>
    <dependency><groupId>org.eclipse.jetty.ee10</groupId><artifactId>jetty-ee10-servlet</artifactId><version>$JETTY</version></dependency>
    <dependency><groupId>org.eclipse.jetty.compression</groupId><artifactId>jetty-compression-server</artifactId><version>$JETTY</version></dependency>
    <dependency><groupId>org.eclipse.jetty.compression</groupId><artifactId>jetty-compression-gzip</artifactId><version>$JETTY</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-client-api</artifactId><version>$HADOOP</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-client-runtime</artifactId><version>$HADOOP</version></dependency>
    <dependency><groupId>org.xerial</groupId><artifactId>sqlite-jdbc</artifactId><version>$SQLITE_JDBC</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>$SLF4J</version></dependency>
  </dependencies>
</project>
POM
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  *) fail "usage: .ci/rest.sh setup|start" ;;
esac
