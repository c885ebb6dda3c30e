"""Tables as stream sources (issue 37, item 4): ``ig.readStream`` against Spark's ``readStream``.

The micro-batches of a table we and Spark wrote (appends of several files,
an overwrite, a delete, a compaction) are compared with the batches Spark's
own streaming read makes with the same options. A stream from one table into
another survives SIGKILLs of its process with every row once; the documents'
example (a stream aggregated in ``foreachBatch`` and written in complete mode)
survives a batch that fails after its write.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

import pyiceberg_go as ig

from conftest import HANG_S, REPO, CatalogDir
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

SEED = 20261203


def rows(first: int, n: int) -> pa.Table:
    ids = list(range(first, first + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array([i % 3 for i in ids], pa.int64())})


def source_table(rng: random.Random, name: str = "local.db.src", appends: int = 14) -> list[int]:
    """A table partitioned by p (an append of k values of p adds k files) with an overwrite, a
    delete and a compaction among random appends; returns main's snapshot ids, oldest first."""
    ig.writeTo(rows(0, 1 + rng.randrange(9)), name).partitionedBy("p").create()
    nxt = 100
    for i in range(appends):
        ig.writeTo(rows(nxt, 1 + rng.randrange(9)), name).append()
        nxt += 100
        if i == 3:
            ig.writeTo(rows(10_000, 2), name).overwrite("p = 1")
        if i == 6:
            ig.table(name).delete("p = 2")
        if i == 9:
            ig.table(name).rewrite_data_files(options={"rewrite-all": "true"})
    ops = [s["operation"] for s in ig.table(name).snapshots()]
    made = {"append"} | {op for op, after in (("overwrite", 3), ("delete", 6), ("replace", 9)) if appends > after}
    assert made <= set(ops), ops
    return [s["snapshot_id"] for s in ig.table(name).snapshots()]


def our_batches(options: dict[str, str], name: str = "local.db.src") -> list[list[int]]:
    got: list[list[int]] = []
    src = ig.readStream(name).options(**options)
    q = (
        ig.writeStream(src, name)
        .foreachBatch(lambda data, _: got.append(sorted(data.column("id").to_pylist())))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    return got


def spark_batches(spark: Any, table: str, options: dict[str, str], ckpt: Path) -> list[list[int]]:
    got: list[list[int]] = []
    q = (
        spark.readStream.format("iceberg")
        .options(**options)
        .load(table)
        .writeStream.foreachBatch(lambda df, _: got.append(sorted(r.id for r in df.select("id").collect())))
        .trigger(availableNow=True)
        .option("checkpointLocation", str(ckpt))
        .start()
    )
    q.awaitTermination()
    return [b for b in got if b]


def test_micro_batches_match_sparks_read_stream(tmp_path: Path, spark: Any, spark_catalog: str) -> None:
    rng = random.Random(SEED)
    snaps = source_table(rng)
    # Spark appends to the same table too: its files stream like ours.
    spark.sql(f"INSERT INTO {spark_catalog}.db.src VALUES (7001, 0), (7002, 1), (7003, 2), (7004, 0)")
    skip = {"streaming-skip-overwrite-snapshots": "true", "streaming-skip-delete-snapshots": "true"}
    ts = {s["snapshot_id"]: s["timestamp_ms"] for s in ig.table("local.db.src").snapshots()}
    cases: list[dict[str, str]] = [
        {},
        {"streaming-max-files-per-micro-batch": "2"},
        {"streaming-max-rows-per-micro-batch": "5"},
        {"streaming-max-files-per-micro-batch": "3", "streaming-max-rows-per-micro-batch": "4"},
        {"streaming-max-rows-per-micro-batch": "1"},
        {"stream-from-timestamp": str(ts[snaps[8]]), "streaming-max-files-per-micro-batch": "4"},
    ]
    for i, case in enumerate(cases):
        options = {**skip, **case}
        theirs = spark_batches(spark, f"{spark_catalog}.db.src", options, tmp_path / f"ckpt{i}")
        ours = our_batches(options)
        assert ours == theirs, (options, ours, theirs)
        assert len(ours) > 1 or not case
    # All of it once, without limits: the appended rows that are not overwritten away in between
    # (a stream reads each append's files as they were added).
    everything = [i for b in our_batches(skip) for i in b]
    assert len(everything) == len(set(everything)) and {7001, 7002, 7003, 7004} <= set(everything)
    assert 10_000 not in everything  # the overwrite's rows are not streamed


def test_overwrite_and_delete_snapshots_stop_the_stream(tmp_path: Path, spark: Any, spark_catalog: str) -> None:
    source_table(random.Random(SEED), appends=8)
    with pytest.raises(Exception) as theirs:
        spark_batches(spark, f"{spark_catalog}.db.src", {}, tmp_path / "ckpt")
    with pytest.raises(ig.StreamingQueryException) as mine:
        our_batches({})
    assert isinstance(mine.value.cause, ig.ValidationError)
    prefix = str(mine.value.cause).split(": ", 1)[1].split(" set ")[0]
    assert prefix.startswith("Cannot process overwrite snapshot") and prefix in str(theirs.value)
    with pytest.raises(ig.StreamingQueryException, match="Cannot process delete snapshot"):
        our_batches({"streaming-skip-overwrite-snapshots": "true"})


@pytest.mark.parametrize(
    "key, value",
    [
        ("streaming-max-files-per-micro-batch", "0"),
        ("streaming-max-rows-per-micro-batch", "-3"),
        ("streaming-max-rows-per-micro-batch", "many"),
        ("streaming-skip-delete-snapshots", "yes"),
        ("stream-from-timestamp", True),
        ("maxFilesPerTrigger", "1"),
    ],
)
def test_bad_options_are_refused(key: str, value: Any) -> None:
    with pytest.raises((ValueError, TypeError), match=key if key != "maxFilesPerTrigger" else "is not one of"):
        ig.readStream("local.db.src").option(key, value)


def test_offsets_and_triggers() -> None:
    ig.writeTo(rows(0, 3), "local.db.src").partitionedBy("p").create()
    src = ig.readStream("local.db.src").option("streaming-max-files-per-micro-batch", 1)
    # The steps a query takes, by hand.
    end = src.latestOffset()
    assert end is not None and set(end) == {"snapshot_id", "position", "scan_all_files"}
    first = src.getBatch(None, end)
    assert first.num_rows == 1 and first.schema.names == ["id", "p"]
    assert src.latestOffset(src.latestOffset(end, limits=False)) is None  # nothing after the head
    # availableNow stops at the head it started with: a batch appended while it runs waits.
    got: list[list[int]] = []

    def fn(data: Any, batch_id: int) -> None:
        got.append(sorted(data.column("id").to_pylist()))
        if batch_id == 0:
            ig.writeTo(rows(100, 1), "local.db.src").append()

    ig.writeStream(src, "local.db.src").foreachBatch(fn).trigger(availableNow=True).start().awaitTermination()
    assert got == [[0], [1], [2]]
    # once ignores the limits (as Spark's Trigger.Once): one batch of everything new.
    sink = pa.table({"id": pa.array([], pa.int64()), "p": pa.array([], pa.int64())})
    ig.writeTo(sink, "local.db.copy").create()
    q = ig.writeStream(src, "local.db.copy").queryName("c").trigger(once=True).start()
    q.awaitTermination()
    assert ig.table("local.db.copy").to_arrow().num_rows == 4
    # processingTime polls on the injected clock: new appends become new batches.
    now = [0.0]
    query: list[ig.StreamingQuery] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds
        if now[0] == 60:  # after the first trigger, which found nothing new
            ig.writeTo(rows(200, 6), "local.db.src").append()
        if now[0] >= 600:
            query[0].stop()

    w = ig.writeStream(src, "local.db.copy", clock=lambda: now[0], sleep=sleep).queryName("c")
    query.append(w.trigger(processingTime="1 minute").start())
    query[0].awaitTermination()
    assert sorted(ig.table("local.db.copy").to_arrow().column("id").to_pylist()) == sorted(
        ig.table("local.db.src").to_arrow().column("id").to_pylist()
    )
    assert [p["batchId"] for p in query[0].recentProgress] == [1, 2, 3]  # the new append's 3 files
    # A query id that committed batches of another source is refused, not restarted from zero.
    other = ig.writeStream([rows(0, 1)], "local.db.copy").queryName("other").trigger(availableNow=True).start()
    other.awaitTermination()
    bad = ig.writeStream(src, "local.db.copy").queryName("other").trigger(availableNow=True).start()
    with pytest.raises(ig.StreamingQueryException, match="without a source offset"):
        bad.awaitTermination()


def test_aggregate_in_foreach_batch_written_in_complete_mode(tmp_path: Path) -> None:
    """The documents' example: a stream of a table aggregated per batch with DuckDB, the totals
    written to another table in complete mode, exactly once even when a batch fails after its write."""
    rng = random.Random(SEED)
    ig.writeTo(rows(0, 5), "local.db.src").partitionedBy("p").create()
    for i in range(6):
        ig.writeTo(rows(100 * (i + 1), 1 + rng.randrange(9)), "local.db.src").append()
    totals = pa.table({"p": pa.array([], pa.int64()), "n": pa.array([], pa.int64())})
    ig.writeTo(totals, "local.db.totals").create()
    ckpt = str(tmp_path / "ckpt")
    seen: list[tuple[int, int]] = []
    fail_after_write = {2}

    def fn(data: Any, batch_id: int) -> None:
        seen.append((batch_id, data.num_rows))
        old = ig.table("local.db.totals").to_arrow()  # noqa: F841  (read by DuckDB)
        new = duckdb.sql(
            "SELECT p, sum(n)::BIGINT AS n FROM (SELECT p, n FROM old UNION ALL "
            "SELECT p, count(*) AS n FROM data GROUP BY p) GROUP BY p ORDER BY p"
        ).fetch_arrow_table()
        ig.writeTo(new, "local.db.totals").streamBatch("totals", batch_id).overwrite("true")
        if batch_id in fail_after_write:
            fail_after_write.discard(batch_id)
            raise RuntimeError("the process died after the write")

    src = ig.readStream("local.db.src").option("streaming-max-files-per-micro-batch", 2)
    writer = ig.writeStream(src, "local.db.totals").foreachBatch(fn).option("checkpointLocation", ckpt)
    query = writer.trigger(availableNow=True).start()
    with pytest.raises(ig.StreamingQueryException, match="died after the write"):
        query.awaitTermination()
    first_run = list(seen)
    writer.start().awaitTermination()
    # Batch 2 ran again with the same files; its second write was skipped as already committed.
    assert first_run[-1][0] == 2 and seen[len(first_run)] == first_run[-1]
    everything = ig.table("local.db.src").to_arrow()  # noqa: F841  (read by DuckDB)
    want = duckdb.sql("SELECT p, count(*)::BIGINT AS n FROM everything GROUP BY p ORDER BY p").fetch_arrow_table()
    got = ig.table("local.db.totals").to_arrow().sort_by("p")
    assert got.to_pylist() == want.to_pylist()


def test_stream_between_tables_survives_sigkill(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    """A process streaming src into dst (one file per batch) is killed at random moments and
    restarted; dst ends with every row of src once, read by PyIceberg."""
    rng = random.Random(SEED)
    ig.writeTo(rows(0, 4), "local.db.src").partitionedBy("p").create()
    for i in range(30):
        ig.writeTo(rows(100 * (i + 1), 1 + rng.randrange(5)), "local.db.src").append()
    ig.writeTo(rows(0, 0), "local.db.dst").create()
    worker = Path(__file__).with_name("readstream_worker.py")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    kills = 0
    mid: list[int] = []  # dst's snapshots after each kill
    for _ in range(40):
        proc = subprocess.Popen([sys.executable, str(worker), str(catalog_dir.root)], env=env, cwd=str(REPO))
        try:
            if kills < 8:
                # Kill once dst has gained 1-3 more batches (progress, not a clock, picks the moment),
                # then after a random few milliseconds, so kills land inside commits too.
                target = len(ig.table("local.db.dst").snapshots()) + rng.randint(1, 3)
                while proc.poll() is None and len(ig.table("local.db.dst").snapshots()) < target:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.03))
                if proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)
                    kills += 1
                    proc.wait(timeout=HANG_S)
                    mid.append(len(ig.table("local.db.dst").snapshots()))
            proc.wait(timeout=HANG_S)
        finally:
            if proc.poll() is None:
                proc.kill()
        if proc.returncode == 0:
            break
    assert proc.returncode == 0
    want = sorted(ig.table("local.db.src").to_arrow().column("id").to_pylist())
    got = sorted(pyiceberg_catalog.load_table("db.dst").scan().to_arrow().column("id").to_pylist())
    assert got == want
    # Some kills landed mid-stream (after some batches, before the last), whatever the machine's speed.
    batches = len(ig.table("local.db.dst").snapshots())
    assert any(1 < n < batches for n in mid), (mid, batches)
