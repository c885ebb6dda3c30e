"""Concurrent writers on one SQLite catalog: the core's own refresh + retry loop
(iceberg-go does not retry on the SQL catalog) must keep every commit."""

from __future__ import annotations

import multiprocessing as mp

import pyarrow as pa

import pyiceberg_go as ig

PROCS = 4
APPENDS = 25
ROWS = 10


def _appender(uri: str, warehouse: str, worker: int) -> None:
    ig.configure(catalogs={"local": {"type": "sql", "uri": uri, "warehouse": warehouse}})
    for i in range(APPENDS):
        base = (worker * APPENDS + i) * ROWS
        batch = pa.table({"id": pa.array(range(base, base + ROWS), pa.int64()), "worker": [worker] * ROWS})
        ig.writeTo(batch, "local.db.events").append()


def test_four_processes_append_25_times_each(catalog_dir, pyiceberg_catalog):
    seed = pa.table({"id": pa.array([], pa.int64()), "worker": pa.array([], pa.int64())})
    # Four writers racing on one table need more than Java's default of 4 retries.
    ig.writeTo(seed, "local.db.events").tableProperty("commit.retry.num-retries", "50").tableProperty(
        "commit.retry.max-wait-ms", "2000"
    ).create()

    ctx = mp.get_context("spawn")  # the library must not be loaded before a fork
    procs = [ctx.Process(target=_appender, args=(catalog_dir.uri, catalog_dir.warehouse, w)) for w in range(PROCS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
    assert [p.exitcode for p in procs] == [0] * PROCS

    t = pyiceberg_catalog.load_table("db.events")
    snaps = t.snapshots()
    appends = [s for s in snaps if s.summary and s.summary.operation.value == "append"]
    assert len(appends) == PROCS * APPENDS
    ids = sorted(t.scan().to_arrow()["id"].to_pylist())
    assert ids == list(range(PROCS * APPENDS * ROWS))
    assert t.current_snapshot().summary["total-records"] == str(PROCS * APPENDS * ROWS)
    # Snapshots form one chain: every append's parent is the one before it.
    chain = {s.snapshot_id: s.parent_snapshot_id for s in snaps}
    n, cur = 0, t.current_snapshot().snapshot_id
    while cur is not None:
        n, cur = n + 1, chain[cur]
    assert n == len(snaps)
