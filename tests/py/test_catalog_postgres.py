"""The JDBC catalog on PostgreSQL (issue 40, item 2): the table layout Spark's JdbcCatalog and
PyIceberg's SqlCatalog use, in a real PostgreSQL 15 server started by the tests.

Every operation is read back by PyIceberg's SqlCatalog on the same database; Spark's JdbcCatalog
reads and writes the same tables; eight processes append at once with nothing lost; a wrong
password is a typed error that names no secret, and nothing is committed. The checks themselves
are jdbc_catalog's, shared with the MySQL tests.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jdbc_catalog import (
    JdbcCat,
    appends_all_land,
    commit_survives_cut,
    every_write_read_back,
    spark_shares_the_tables,
    wrong_password_refused,
)
from netfault import CuttingProxy, proxied
from servers import PostgresServer, postgres_server  # noqa: F401  (fixture)
from sparkutil import spark  # noqa: F401  (fixture)


@pytest.fixture
def pg(postgres_server: PostgresServer, tmp_path: Path) -> JdbcCat:
    """Catalog "pg" on the server, with a warehouse and a namespace of this test's own."""
    props = {"type": "sql", "uri": postgres_server.uri(), "warehouse": f"file://{tmp_path / 'wh'}"}
    return JdbcCat("pg", props).configure()


def pyiceberg(server: PostgresServer, pg: JdbcCat, name: str = "pg") -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(name, uri=server.uri(), warehouse=pg.props["warehouse"])


def test_operations_read_back_by_pyiceberg(postgres_server: PostgresServer, pg: JdbcCat) -> None:
    every_write_read_back(pg, pyiceberg(postgres_server, pg))


def test_concurrent_appends_all_land(postgres_server: PostgresServer, pg: JdbcCat, tmp_path: Path) -> None:
    """The trust issue's test on PostgreSQL: 8 processes x 50 appends, default settings, none lost."""
    appends_all_land(pg, tmp_path, lambda name: pyiceberg(postgres_server, pg, name))


def test_wrong_password_is_typed_and_secret_free(postgres_server: PostgresServer, pg: JdbcCat) -> None:
    wrong = "wrong-" + secrets.token_hex(6)
    bad = [postgres_server.uri(password=wrong), postgres_server.jdbc() + f"?user=pig&password={wrong}"]
    wrong_password_refused(pg, bad, wrong, [postgres_server.password], "password authentication failed")


def test_spark_jdbc_catalog_shares_the_tables(
    postgres_server: PostgresServer,
    pg: JdbcCat,
    spark: Any,
) -> None:
    """Spark's settings verbatim (spark_conf) open the catalog; Spark 4.1's JdbcCatalog on the same
    database reads what we wrote and writes what we read."""
    conf = {
        "spark.sql.catalog.pgspark": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.pgspark.type": "jdbc",
        "spark.sql.catalog.pgspark.uri": postgres_server.jdbc(),
        "spark.sql.catalog.pgspark.jdbc.user": postgres_server.user,
        "spark.sql.catalog.pgspark.jdbc.password": postgres_server.password,
        "spark.sql.catalog.pgspark.warehouse": pg.props["warehouse"],
    }
    spark_shares_the_tables(spark, conf, f"pgspark.{pg.ns}.s")


@pytest.fixture
def proxy(postgres_server: PostgresServer) -> Iterator[CuttingProxy]:
    yield from proxied(postgres_server.host, postgres_server.port)


@pytest.mark.parametrize("stage", ["before", "answer-lost", "answer-lost-down"])
def test_server_lost_mid_commit(
    postgres_server: PostgresServer, pg: JdbcCat, proxy: CuttingProxy, tmp_path: Path, stage: str
) -> None:
    """The server stops before a commit, or commits and its answer is lost: whatever the writer
    reports holds, no snapshot refers to a missing file, a known failure leaves no files."""
    via = dataclasses.replace(postgres_server, port=proxy.port)
    props = {"type": "sql", "uri": via.uri(), "warehouse": pg.props["warehouse"]}
    res = commit_survives_cut("pg", props, proxy, pyiceberg(postgres_server, pg), pg.ns, tmp_path, stage)
    assert res["ok"] or postgres_server.password not in res["message"]
