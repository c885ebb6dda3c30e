"""The JDBC catalog on MySQL (issue 40, item 2): the table layout Spark's JdbcCatalog and
PyIceberg's SqlCatalog use, in a real MariaDB 10.11 server (Debian's MySQL) started by the tests.

Every operation is read back by PyIceberg's SqlCatalog (PyMySQL) on the same database; Spark's
JdbcCatalog (MariaDB Connector/J) reads and writes the same tables; eight processes append at once
with nothing lost, queued on the table's named lock (a commit waits while another session holds
it); a wrong password is a typed error that names no secret, and nothing is committed. The checks
are jdbc_catalog's, the same as on PostgreSQL, but for the lock's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pyiceberg_go as ig

from jdbc_catalog import (
    JdbcCat,
    append_waits_for_held_lock,
    appends_all_land,
    commit_survives_cut,
    every_write_read_back,
    ids_of,
    rows,
    spark_shares_the_tables,
    wrong_password_refused,
)
from netfault import CuttingProxy, proxied
from servers import MySQLServer, mysql_server  # noqa: F401  (fixture)
from sparkutil import spark  # noqa: F401  (fixture)


@pytest.fixture
def my(mysql_server: MySQLServer, tmp_path: Path) -> JdbcCat:
    """Catalog "my" on the server, with a warehouse and a namespace of this test's own."""
    props = {"type": "sql", "uri": mysql_server.uri(), "warehouse": f"file://{tmp_path / 'wh'}"}
    return JdbcCat("my", props).configure()


def pyiceberg(server: MySQLServer, my: JdbcCat, name: str = "my") -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(name, uri=server.uri(), warehouse=my.props["warehouse"])


def test_operations_read_back_by_pyiceberg(mysql_server: MySQLServer, my: JdbcCat) -> None:
    every_write_read_back(my, pyiceberg(mysql_server, my))


def test_concurrent_appends_all_land(mysql_server: MySQLServer, my: JdbcCat, tmp_path: Path) -> None:
    """The trust issue's test on MySQL: 8 processes x 50 appends, default settings, none lost."""
    appends_all_land(my, tmp_path, lambda name: pyiceberg(mysql_server, my, name))


def test_a_commit_waits_for_the_tables_named_lock(mysql_server: MySQLServer, my: JdbcCat) -> None:
    """Committers queue on GET_LOCK of a hash of the catalog and table (core/catalog, mysql.go):
    while another session holds it, an append waits in the lock and commits nothing; released,
    the append lands."""
    import pymysql

    name = f"my.{my.ns}.q"
    ig.writeTo(rows([1]), name).create()
    key = "\x00".join(["my", my.ns, "q"])
    lock = "pyiceberg-go:" + hashlib.sha256(("pyiceberg-go commit\x00" + key).encode()).hexdigest()[:48]
    holder = pymysql.connect(
        host=mysql_server.host,
        port=mysql_server.port,
        user=mysql_server.user,
        password=mysql_server.password,
        database="iceberg",
    )
    try:
        with holder.cursor() as cur:
            cur.execute("SELECT GET_LOCK(%s, 0)", (lock,))
            assert cur.fetchone() == (1,)

            def waiting() -> int:
                cur.execute(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'User lock' AND INFO LIKE 'SELECT GET_LOCK%%'"
                )
                return int(cur.fetchone()[0])

            def release() -> None:
                cur.execute("SELECT RELEASE_LOCK(%s)", (lock,))
                assert cur.fetchone() == (1,)

            append_waits_for_held_lock(name, waiting, lambda: ids_of(pyiceberg(mysql_server, my).load_table(f"{my.ns}.q")), release)
    finally:
        holder.close()


def test_wrong_password_is_typed_and_secret_free(mysql_server: MySQLServer, my: JdbcCat) -> None:
    wrong = "wrong-" + secrets.token_hex(6)
    bad = [
        mysql_server.uri(password=wrong),
        mysql_server.jdbc("mysql") + f"?user={mysql_server.user}&password={wrong}",
    ]
    wrong_password_refused(my, bad, wrong, [mysql_server.password], "Access denied")


def test_spark_jdbc_catalog_shares_the_tables(
    mysql_server: MySQLServer,
    my: JdbcCat,
    spark: Any,
) -> None:
    """Spark's settings verbatim (spark_conf) open the catalog; Spark 4.1's JdbcCatalog on the same
    database reads what we wrote and writes what we read."""
    conf = {
        "spark.sql.catalog.myspark": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.myspark.type": "jdbc",
        "spark.sql.catalog.myspark.uri": mysql_server.jdbc(),
        "spark.sql.catalog.myspark.jdbc.user": mysql_server.user,
        "spark.sql.catalog.myspark.jdbc.password": mysql_server.password,
        "spark.sql.catalog.myspark.warehouse": my.props["warehouse"],
    }
    spark_shares_the_tables(spark, conf, f"myspark.{my.ns}.s")


@pytest.fixture
def proxy(mysql_server: MySQLServer) -> Iterator[CuttingProxy]:
    yield from proxied(mysql_server.host, mysql_server.port)


@pytest.mark.parametrize("stage", ["before", "answer-lost", "answer-lost-down"])
def test_server_lost_mid_commit(
    mysql_server: MySQLServer, my: JdbcCat, proxy: CuttingProxy, tmp_path: Path, stage: str
) -> None:
    """The server stops before a commit, or commits and its answer is lost: whatever the writer
    reports holds, no snapshot refers to a missing file, a known failure leaves no files."""
    via = dataclasses.replace(mysql_server, port=proxy.port)
    props = {"type": "sql", "uri": via.uri(), "warehouse": my.props["warehouse"]}
    res = commit_survives_cut("my", props, proxy, pyiceberg(mysql_server, my), my.ns, tmp_path, stage)
    assert res["ok"] or mysql_server.password not in res["message"]
