"""The JDBC catalog on PostgreSQL (issue 40, item 2): the table layout Spark's JdbcCatalog and
PyIceberg's SqlCatalog use, in a real PostgreSQL 15 server started by the tests.

Every operation is read back by PyIceberg's SqlCatalog on the same database; Spark's JdbcCatalog
reads and writes the same tables; eight processes append at once with nothing lost; a commit
waits while another session holds the table's advisory lock; a wrong password is a typed error
that names no secret, and nothing is committed; a server lost mid-commit leaves a readable table
and a true report. The checks themselves
are jdbc_catalog's, shared with the MySQL tests.
"""

from __future__ import annotations

import dataclasses
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


def fnv64a_signed(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h - (1 << 64) if h >= 1 << 63 else h


def test_a_commit_waits_for_the_tables_advisory_lock(postgres_server: PostgresServer, pg: JdbcCat) -> None:
    """Committers queue on pg_advisory_lock of a 64-bit FNV-1a hash of the catalog and table
    (core/catalog, postgres.go): while another session holds it, an append waits (PostgreSQL
    shows its lock request not granted) and commits nothing; released, the append lands."""
    import psycopg2

    name = f"pg.{pg.ns}.q"
    ig.writeTo(rows([1]), name).create()
    key = fnv64a_signed(b"pyiceberg-go commit\x00" + "\x00".join(["pg", pg.ns, "q"]).encode())
    holder = psycopg2.connect(postgres_server.uri(scheme="postgresql"))
    holder.autocommit = True
    try:
        with holder.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s)", (key,))

            def waiting() -> int:
                # An advisory lock's 64-bit key shows as classid (high half) and objid (low half).
                cur.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                    "AND ((classid::bigint << 32) | objid::bigint) = %s",
                    (key,),
                )
                return int(cur.fetchone()[0])

            def release() -> None:
                cur.execute("SELECT pg_advisory_unlock(%s)", (key,))
                assert cur.fetchone() == (True,)

            append_waits_for_held_lock(name, waiting, lambda: ids_of(pyiceberg(postgres_server, pg).load_table(f"{pg.ns}.q")), release)
    finally:
        holder.close()
