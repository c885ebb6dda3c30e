"""The Hive Metastore catalog (issue 40, item 1): iceberg-go's hive catalog behind ``type: hive``,
against Apache Hive's standalone metastore 4.0.0 (on PostgreSQL) started by the tests.

Every write is read back by PyIceberg's HiveCatalog (Thrift) on the same metastore, and
PyIceberg's append by us; four processes append at once and every append that returned is
there (each commit holds the metastore's table lock); a lock another client holds makes a commit
wait, and give up typed with nothing left behind when it outlasts iceberg.hive.lock-timeout-ms;
an unreachable metastore, or one lost mid-commit, gives a typed error and an intact table; Spark's
settings verbatim open the catalog, and Spark's own HiveCatalog reads the table.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import getpass
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pyiceberg_go as ig

from conftest import HANG_S
from jdbc_catalog import (
    JdbcCat,
    commit_survives_cut,
    data_files_on_disk,
    every_write_read_back,
    ids_of,
    rows,
    spark_reads_every_write,
)
from netfault import CuttingProxy, proxied
from servers import HiveMetastore, free_port, hive_metastore, postgres_server  # noqa: F401  (fixtures)
from sparkutil import spark  # noqa: F401  (fixture)
from test_concurrency import ROWS, check_table, run_appenders, seed_schema


@pytest.fixture
def hv(hive_metastore: HiveMetastore, tmp_path: Path) -> JdbcCat:
    """Catalog "hv" on the metastore, with a warehouse and a database of this test's own."""
    props = {"type": "hive", "uri": hive_metastore.uri, "warehouse": f"file://{tmp_path / 'wh'}"}
    return JdbcCat("hv", props).configure()


def pyiceberg(server: HiveMetastore, hv: JdbcCat, name: str = "hv") -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog(name, uri=server.uri, warehouse=hv.props["warehouse"])


def test_operations_read_back_by_pyiceberg(hive_metastore: HiveMetastore, hv: JdbcCat) -> None:
    every_write_read_back(hv, pyiceberg(hive_metastore, hv))
    with pyiceberg(hive_metastore, hv)._client as client:  # the metastore's own record of the table
        t = client.get_table(dbname=hv.ns, tbl_name="t")
    assert t.parameters["table_type"] == "ICEBERG"
    assert t.tableType == "EXTERNAL_TABLE"
    # Each commit moved the pointer: the previous metadata file is recorded beside the current one.
    cur, prev = t.parameters["metadata_location"], t.parameters["previous_metadata_location"]
    assert cur.startswith(hv.props["warehouse"]) and cur.endswith(".metadata.json") and prev != cur


@pytest.mark.parametrize("retries", [None, "100"], ids=["default-retries", "retries-100"])
def test_concurrent_appends(retries: str | None, hive_metastore: HiveMetastore, hv: JdbcCat, tmp_path: Path) -> None:
    """4 processes x 15 appends. Each commit holds the metastore's table lock while it checks and
    moves the pointer, so every append that returned is in the table, once, on one chain of
    snapshots. Appends still race optimistically between their lock holds, as on REST: with the
    default commit.retry.num-retries (4) some may give up, as typed commit conflicts that left
    nothing behind; with 100, all land."""
    name = f"hv.{hv.ns}.c"
    w = ig.writeTo(seed_schema(), name)
    if retries:
        w = w.tableProperty("commit.retry.num-retries", retries).tableProperty("commit.retry.max-wait-ms", "2000")
    w.create()
    results = run_appenders(hv.props, f"local.{hv.ns}.c", tmp_path, appends=15, workers=4)
    assert {r["error"] for r in results if "error" in r} <= {"CommitConflictError"}
    if retries:
        assert all("ok" in r for r in results)
    check_table(pyiceberg(hive_metastore, hv).load_table(f"{hv.ns}.c"), results)


def test_unreachable_metastore_is_typed_and_commits_nothing(hive_metastore: HiveMetastore, hv: JdbcCat) -> None:
    name = f"hv.{hv.ns}.u"
    ig.writeTo(rows([1]), name).create()
    dead = f"thrift://127.0.0.1:{free_port()}"  # nothing listens there
    ig.configure(catalogs={"bad": {**hv.props, "uri": dead}})
    with pytest.raises(ig.IcebergIOError) as e:
        ig.writeTo(rows([2]), f"bad.{hv.ns}.u").append()
    assert "Hive Metastore" in str(e.value) and dead.removeprefix("thrift://") in str(e.value)
    hv.configure()
    assert ids_of(pyiceberg(hive_metastore, hv).load_table(f"{hv.ns}.u")) == [1]  # nothing was committed


def test_spark_settings_open_it_and_spark_reads_it(hive_metastore: HiveMetastore, tmp_path: Path, spark: Any) -> None:
    """Spark's catalog block verbatim (type hive, uri, warehouse) opens the catalog; Spark 4.1's
    own Iceberg HiveCatalog (its bundled Hive 2.3 client) reads what we wrote and writes to it."""
    conf = {
        "spark.sql.catalog.hsp": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.hsp.type": "hive",
        "spark.sql.catalog.hsp.uri": hive_metastore.uri,
        "spark.sql.catalog.hsp.warehouse": f"file://{tmp_path / 'wh'}",
    }
    ns = "s" + tmp_path.name[-6:].lower().replace("-", "_")
    name = f"hsp.{ns}.t"
    s = ig.Session(spark_conf=conf)
    s.writeTo(rows([1, 2, 3]), name).create()
    for k, v in conf.items():
        spark.conf.set(k, v)
    spark_reads_every_write(spark, s, f"hsp.{ns}.every")
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {name}").collect()) == [1, 2, 3]
    spark.sql(f"INSERT INTO {name} VALUES (4, 'spark', 1)")
    spark.sql(f"DELETE FROM {name} WHERE id = 2")
    assert sorted(s.table(name).to_arrow().column("id").to_pylist()) == [1, 3, 4]


@contextlib.contextmanager
def table_lock(server: HiveMetastore, hv: JdbcCat, table: str) -> Iterator[tuple[Any, int]]:
    """An exclusive metastore lock on ``table`` taken by another client (PyIceberg's Thrift
    client, as PyIceberg's and Java's commits take it), released on exit; yields the client
    and the lock id."""
    from hive_metastore.ttypes import LockComponent, LockLevel, LockRequest, LockState, LockType, UnlockRequest

    with pyiceberg(server, hv)._client as client:
        comp = LockComponent(level=LockLevel.TABLE, type=LockType.EXCLUSIVE, dbname=hv.ns, tablename=table, isTransactional=True)
        lock = client.lock(LockRequest(component=[comp], user=getpass.getuser(), hostname=socket.gethostname()))
        assert lock.state == LockState.ACQUIRED
        try:
            yield client, lock.lockid
        finally:
            client.unlock(UnlockRequest(lockid=lock.lockid))


def waiting_locks(client: Any, hv: JdbcCat, table: str) -> int:
    from hive_metastore.ttypes import LockState, ShowLocksRequest

    locks = client.show_locks(ShowLocksRequest(dbname=hv.ns, tablename=table)).locks or []
    return sum(1 for lk in locks if lk.state == LockState.WAITING)


def test_a_held_table_lock_makes_commits_wait_or_give_up_typed(hive_metastore: HiveMetastore, hv: JdbcCat) -> None:
    """While another client holds the table's lock, a commit waits; one that outlasts
    iceberg.hive.lock-timeout-ms fails as a typed conflict and leaves no file or snapshot behind;
    one still waiting when the lock is released commits."""
    name = f"hv.{hv.ns}.l"
    ig.writeTo(rows([1]), name).tableProperty("commit.retry.num-retries", "0").create()
    files = data_files_on_disk(hv.props["warehouse"])
    ig.configure(catalogs={"hv": hv.props, "hvi": {**hv.props, "iceberg.hive.lock-timeout-ms": "1500"}})
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        with table_lock(hive_metastore, hv, "l") as (client, _):
            with pytest.raises(ig.CommitConflictError) as e:
                ig.writeTo(rows([2]), f"hvi.{hv.ns}.l").append()
            assert "lock" in str(e.value)
            assert data_files_on_disk(hv.props["warehouse"]) == files  # its data file is gone again
            assert waiting_locks(client, hv, "l") == 0  # and so is its lock request
            # A patient writer waits for the lock (the metastore shows it waiting) and commits
            # once the lock is released.
            fut = pool.submit(lambda: ig.writeTo(rows([3]), name).append())
            deadline = time.monotonic() + HANG_S
            while waiting_locks(client, hv, "l") == 0:
                assert not fut.done(), fut.exception()
                assert time.monotonic() < deadline, "the commit never asked for the lock"
                time.sleep(0.05)
            assert not fut.done()
        fut.result(timeout=HANG_S)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    assert ids_of(pyiceberg(hive_metastore, hv).load_table(f"{hv.ns}.l")) == [1, 3]


@pytest.fixture
def proxy(hive_metastore: HiveMetastore) -> Iterator[CuttingProxy]:
    yield from proxied(hive_metastore.host, hive_metastore.port)


@pytest.mark.parametrize("stage", ["before", "answer-lost", "answer-lost-down"])
def test_metastore_lost_mid_commit(hive_metastore: HiveMetastore, hv: JdbcCat, proxy: CuttingProxy, tmp_path: Path, stage: str) -> None:
    """The metastore stops before a commit, or moves the table's pointer (alter_table) and its
    answer is lost: whatever the writer reports holds, no snapshot refers to a missing file, a
    known failure leaves no files, and a lost answer is settled by reading the table again."""
    props = {**hv.props, "uri": f"thrift://127.0.0.1:{proxy.port}"}
    commit_survives_cut("hvp", props, proxy, pyiceberg(hive_metastore, hv), hv.ns, tmp_path, stage, cut=(rb"alter_table", None))


def test_our_and_sparks_writers_share_the_lock(hive_metastore: HiveMetastore, hv: JdbcCat, tmp_path: Path, spark: Any) -> None:
    """Two of our processes (10 appends each) and Spark 4.1's HiveCatalog (10 INSERTs) commit to
    one table at once, all through the metastore's table lock: every append either side reports
    done is in the table, once, each its own append snapshot on one chain, and nothing else is."""
    prefix = "spark.sql.catalog.hlk"
    for k, v in {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "hive",
        f"{prefix}.uri": hive_metastore.uri,
        f"{prefix}.warehouse": hv.props["warehouse"],
        f"{prefix}.cache-enabled": "false",
    }.items():
        spark.conf.set(k, v)
    name = f"hv.{hv.ns}.shared"
    ig.writeTo(seed_schema(), name).tableProperty("commit.retry.num-retries", "100").tableProperty(
        "commit.retry.max-wait-ms", "2000"
    ).create()
    spark_ok: list[int] = []
    spark_errors: list[str] = []

    def spark_inserts() -> None:
        for k in range(10):
            first = 1_000_000 + k * ROWS
            values = ", ".join(f"({first + j}, -1)" for j in range(ROWS))
            try:
                spark.sql(f"INSERT INTO hlk.{hv.ns}.shared VALUES {values}")
                spark_ok.append(first)
            except Exception as e:
                spark_errors.append(str(e)[:300])

    t = threading.Thread(target=spark_inserts)
    t.start()
    try:
        ours = run_appenders(hv.props, f"local.{hv.ns}.shared", tmp_path, appends=10, workers=2)
    finally:
        t.join(timeout=HANG_S)
    assert not t.is_alive()
    assert all("ok" in r for r in ours), [r for r in ours if "error" in r][:1]
    assert len(spark_ok) + len(spark_errors) == 10 and spark_ok, spark_errors[:1]
    assert all("CommitFailedException" in e for e in spark_errors), spark_errors[:1]
    table = pyiceberg(hive_metastore, hv).load_table(f"{hv.ns}.shared")
    want = sorted([r["first"] + j for r in ours for j in range(ROWS)] + [f + j for f in spark_ok for j in range(ROWS)])
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == want
    snaps = table.snapshots()
    assert sum(1 for s in snaps if s.summary.operation.value == "append") == len(ours) + len(spark_ok)
    chain = {s.snapshot_id: s.parent_snapshot_id for s in snaps}
    n, cur = 0, table.current_snapshot().snapshot_id
    while cur is not None:
        n, cur = n + 1, chain[cur]
    assert n == len(snaps)
