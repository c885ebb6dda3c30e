"""The JDBC catalog on PostgreSQL (issue 40, item 2): the table layout Spark's JdbcCatalog and
PyIceberg's SqlCatalog use, in a real PostgreSQL 15 server started by the tests.

Every operation is read back by PyIceberg's SqlCatalog on the same database; Spark's JdbcCatalog
reads and writes the same tables; eight processes append at once with nothing lost; a wrong
password is a typed error that names no secret, and nothing is committed.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from test_concurrency import check_table, run_appenders, seed_schema

import pyiceberg_go as ig

from servers import PostgresServer, postgres_server  # noqa: F401  (fixture)
from sparkutil import spark  # noqa: F401  (fixture)


def rows(ids: list[int], tag: str = "a") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([f"{tag}{i}" for i in ids], pa.string()),
            "p": pa.array([i % 3 for i in ids], pa.int32()),
        }
    )


@pytest.fixture
def pg(postgres_server: PostgresServer, tmp_path: Path) -> dict[str, str]:
    """Catalog "pg" on the server, with a warehouse and a namespace of this test's own."""
    props = {"type": "sql", "uri": postgres_server.uri(), "warehouse": f"file://{tmp_path / 'wh'}"}
    ig.configure(catalogs={"pg": props})
    return {**props, "ns": "t" + secrets.token_hex(4)}


def pyiceberg(server: PostgresServer, pg: dict[str, str], name: str = "pg") -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(name, uri=server.uri(), warehouse=pg["warehouse"])


def ids_of(t: Any) -> list[int]:
    return sorted(t.scan().to_arrow().column("id").to_pylist())


def test_operations_read_back_by_pyiceberg(postgres_server: PostgresServer, pg: dict[str, str]) -> None:
    name = f"pg.{pg['ns']}.t"
    ig.writeTo(rows([0, 1, 2, 3, 4, 5]), name).partitionedBy("p").create()
    ig.writeTo(rows([6, 7]), name).append()
    ig.writeTo(rows([9], "o"), name).overwritePartitions()  # partition p=0 is now id 9 only
    ig.table(name).delete("id = 1")
    src = rows([2, 10], "m")
    ig.mergeInto(src, name, "target.id = source.id").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    ig.table(name).create_branch("b")
    ig.writeTo(rows([100]), f"{name}.branch_b").append()
    want = [2, 4, 5, 7, 9, 10]
    assert sorted(ig.table(name).to_arrow().column("id").to_pylist()) == want
    cat = pyiceberg(postgres_server, pg)
    t = cat.load_table(f"{pg['ns']}.t")
    assert ids_of(t) == want
    branch = t.scan(snapshot_id=t.snapshot_by_name("b").snapshot_id).to_arrow().column("id").to_pylist()
    assert sorted(branch) == sorted([*want, 100])
    ops = [s.summary.operation.value for s in t.snapshots()]
    # create, append, overwritePartitions, the delete and the merge (copy-on-write rewrites), the branch's append
    assert ops == ["append", "append", "overwrite", "overwrite", "overwrite", "append"]
    # PyIceberg's writes come back to us, through the same catalog rows.
    t.append(rows([500]))
    assert 500 in ig.table(name).to_arrow().column("id").to_pylist()
    assert f"{pg['ns']}.t" in [".".join(i) for i in cat.list_tables(pg["ns"])]


def test_concurrent_appends_all_land(postgres_server: PostgresServer, pg: dict[str, str], tmp_path: Path) -> None:
    """The trust issue's test on PostgreSQL: 8 processes x 50 appends, default settings, none lost."""
    props = {k: v for k, v in pg.items() if k != "ns"}
    ig.configure(catalogs={"local": props})
    ig.writeTo(seed_schema(), f"local.{pg['ns']}.c").create()
    results = run_appenders(props, f"local.{pg['ns']}.c", tmp_path)
    failed = [r for r in results if "error" in r]
    assert not failed, f"{len(failed)} of {len(results)} appends failed, first: {failed[0]}"
    check_table(pyiceberg(postgres_server, pg, "local").load_table(f"{pg['ns']}.c"), results)


def test_wrong_password_is_typed_and_secret_free(postgres_server: PostgresServer, pg: dict[str, str]) -> None:
    name = f"pg.{pg['ns']}.w"
    ig.writeTo(rows([1]), name).create()
    wrong = "wrong-" + secrets.token_hex(6)
    for uri in (postgres_server.uri(password=wrong), postgres_server.jdbc() + f"?user=pig&password={wrong}"):
        ig.configure(catalogs={"bad": {"type": "sql", "uri": uri, "warehouse": pg["warehouse"]}})
        with pytest.raises(ig.IcebergIOError) as e:
            ig.writeTo(rows([2]), f"bad.{pg['ns']}.w").append()
        assert "password authentication failed" in str(e.value)
        assert wrong not in str(e.value) and postgres_server.password not in str(e.value)
    ig.configure(catalogs={"pg": {k: v for k, v in pg.items() if k != "ns"}})
    assert ig.table(name).to_arrow().num_rows == 1  # nothing was committed


def test_spark_jdbc_catalog_shares_the_tables(
    postgres_server: PostgresServer,
    pg: dict[str, str],
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
        "spark.sql.catalog.pgspark.warehouse": pg["warehouse"],
    }
    s = ig.Session(spark_conf=conf)
    name = f"pgspark.{pg['ns']}.s"
    s.writeTo(rows([1, 2, 3]), name).create()
    for k, v in conf.items():
        spark.conf.set(k, v)
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {name}").collect()) == [1, 2, 3]
    spark.sql(f"INSERT INTO {name} VALUES (4, 'spark', 1)")
    spark.sql(f"DELETE FROM {name} WHERE id = 2")
    assert sorted(s.table(name).to_arrow().column("id").to_pylist()) == [1, 3, 4]
