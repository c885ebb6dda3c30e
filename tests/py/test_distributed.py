"""Distributed writes on a local Dask cluster and a local Ray cluster (worker processes).

One job is one snapshot whose added-data-files are the files the workers wrote and whose
records are the input's; a worker killed in the middle of a task is retried with no duplicate
row and no file left over; a failed job commits nothing and leaves no file; PyIceberg reads
the results, and Spark 4.1 reads a job's table partitioned by transforms, every row in the
partition Iceberg's own transform functions give it. Ray and Dask are in requirements-dev.txt: without them these tests fail.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import pyiceberg_go as ig

from conftest import CatalogDir
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)


def frame(n: int, first: int = 0) -> pd.DataFrame:
    ids = list(range(first, first + n))
    return pd.DataFrame(
        {
            "id": pd.array(ids, dtype="int64"),
            "cat": pd.array([f"c{i % 3}" for i in ids], dtype="string"),
            "v": pd.array([i * 0.5 for i in ids], dtype="float64"),
        }
    )


def data_files(catalog_dir: CatalogDir, name: str) -> set[str]:
    root = catalog_dir.root / "wh" / "db.db" / name / "data"
    return {str(p) for p in root.rglob("*") if p.is_file()}


def table_files(name: str) -> set[str]:
    files = ig.table(f"local.db.{name}").inspect.files().column("file_path").to_pylist()
    return {f.removeprefix("file://") for f in files}


def rows(name: str) -> list[tuple[int, str, float]]:
    t = ig.table(f"local.db.{name}").to_arrow()
    return sorted(zip(t.column("id").to_pylist(), t.column("cat").to_pylist(), t.column("v").to_pylist()))


def expected(df: pd.DataFrame) -> list[tuple[int, str, float]]:
    return sorted(zip(df["id"].tolist(), df["cat"].tolist(), df["v"].tolist()))


def check_one_snapshot(name: str, before: int, df: pd.DataFrame, catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    snaps = ig.table(f"local.db.{name}").snapshots()
    assert len(snaps) == before + 1
    summary = snaps[-1]["summary"]
    # Every file of the table is on disk, and nothing else is (no orphans of retried tasks).
    on_disk = data_files(catalog_dir, name)
    assert table_files(name) == on_disk
    added = int(summary["added-data-files"])
    assert added >= 1
    assert int(summary["total-data-files"]) == len(on_disk)
    assert int(summary["total-records"]) == len(df) + (0 if before == 0 else int(snaps[-2]["summary"]["total-records"]))
    py = pyiceberg_catalog.load_table(f"db.{name}").scan().to_arrow()
    assert sorted(py.column("id").to_pylist()) == sorted(t[0] for t in rows(name))


# --- Dask -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        yield client


def test_dask_create_append_read(dask_client: Any, catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    import dask.dataframe as dd

    df = frame(600)
    r = ig.dask.to_iceberg(
        dd.from_pandas(df, npartitions=6),
        "local.db.dk",
        mode="createOrReplace",
        partition_by=["cat"],
        sort_order=["id DESC"],
    )
    assert r.operation == "append" and r.summary["added-records"] == "600"
    check_one_snapshot("dk", 0, df, catalog_dir, pyiceberg_catalog)
    assert rows("dk") == expected(df)
    # Each of the 6 tasks wrote one file per partition it held (all three): per-task clustering.
    assert r.summary["added-data-files"] == "18"

    more = frame(300, first=1000)
    r2 = ig.dask.to_iceberg(dd.from_pandas(more, npartitions=3), "local.db.dk", distribution="hash")
    check_one_snapshot("dk", 1, more, catalog_dir, pyiceberg_catalog)
    # hash: the shuffle sends each table partition's rows to one task, so at most 3 files.
    assert int(r2.summary["added-data-files"]) <= 3
    assert rows("dk") == expected(pd.concat([df, more]))

    got = ig.dask.read_iceberg("local.db.dk", columns=["id", "cat"], where="id % 2 = 0", npartitions=4).compute()
    both = pd.concat([df, more])
    want = both[both["id"] % 2 == 0]
    assert sorted(got["id"].tolist()) == sorted(want["id"].tolist())
    assert list(got.columns) == ["id", "cat"]


def _kill_once(part: pd.DataFrame, marker: str, write_id: str, catalogs: dict[str, Any]) -> pd.DataFrame:
    # On the first attempt of the partition holding id 250: write part of it (the files a task
    # killed mid-write leaves), then die without a word.
    if 250 in set(part["id"].tolist()) and not os.path.exists(marker):
        Path(marker).write_text("killed")
        dw = ig.DistributedWrite("local.db.kill", "append", write_id=write_id, session=ig.Session(catalogs=catalogs))
        dw.write_task(part.iloc[: len(part) // 2], task=2, attempt=12345)
        os.kill(os.getpid(), signal.SIGKILL)
    return part


def test_dask_killed_worker_is_retried(dask_client: Any, catalog_dir: CatalogDir, pyiceberg_catalog: Any, tmp_path: Path) -> None:
    import dask.dataframe as dd

    ig.writeTo(pa.Table.from_pandas(frame(3, first=-3), preserve_index=False), "local.db.kill").partitionedBy("cat").create()
    df = frame(500)
    marker = str(tmp_path / "killed")
    cats = {"local": catalog_dir.properties}
    ddf = dd.from_pandas(df, npartitions=5).map_partitions(_kill_once, marker, "killjob", cats, meta=df.iloc[:0])
    ig.dask.to_iceberg(ddf, "local.db.kill", write_id="killjob")
    assert os.path.exists(marker), "no worker was killed"
    check_one_snapshot("kill", 1, df, catalog_dir, pyiceberg_catalog)
    assert rows("kill") == expected(pd.concat([frame(3, first=-3), df]))


def _fail(part: pd.DataFrame, event: str) -> pd.DataFrame:
    from distributed import Event

    failed = Event(event)
    if 150 in set(part["id"].tolist()):
        failed.set()
        raise RuntimeError("task failed on purpose")
    if 0 in set(part["id"].tolist()):
        # A straggler: it goes on (and writes) only once the failure is known, and a while
        # after, still running when Dask reports the failure. (One only: each waiting task
        # holds one of the cluster's two threads.)
        assert failed.wait(timeout=120), "the failing task never ran"
        Event(event + "-never").wait(timeout=3)
    return part


def _executing(dask_worker: Any) -> int:
    return len(dask_worker.state.executing)


def test_dask_failed_job_commits_nothing(dask_client: Any, catalog_dir: CatalogDir) -> None:
    import dask.dataframe as dd

    ig.writeTo(pa.Table.from_pandas(frame(3, first=-3), preserve_index=False), "local.db.fail").create()
    before = data_files(catalog_dir, "fail")
    df = frame(400)
    ddf = dd.from_pandas(df, npartitions=4).map_partitions(_fail, "fail-job", meta=df.iloc[:0])
    with pytest.raises(RuntimeError, match="on purpose"):
        ig.dask.to_iceberg(ddf, "local.db.fail")
    # It returned once every task had ended, so nothing is written after it returned.
    assert sum(dask_client.run(_executing).values()) == 0
    assert len(ig.table("local.db.fail").snapshots()) == 1
    assert data_files(catalog_dir, "fail") == before


def test_a_task_that_ends_after_its_write_leaves_nothing(catalog_dir: CatalogDir) -> None:
    # A straggler (a task of a failed job, a speculative attempt) that runs after the write was
    # aborted, committed or failed to commit writes no file and says so.
    ig.writeTo(pa.table({"id": pa.array([0], pa.int64())}), "local.db.late").create()
    before = data_files(catalog_dir, "late")
    data = pa.table({"id": pa.array([1, 2], pa.int64())})
    aborted = ig.DistributedWrite("local.db.late", "append")
    aborted.write_task(data, task=0)
    aborted.abort()
    with pytest.raises(ig.ValidationError, match="aborted"):
        aborted.write_task(data, task=1)
    committed = ig.DistributedWrite("local.db.late", "append")
    files = committed.write_task(data, task=0)
    committed.commit([files])
    with pytest.raises(ig.ValidationError, match="committed"):
        committed.write_task(data, task=1)
    assert data_files(catalog_dir, "late") == before | table_files("late") - before
    assert sorted(ig.table("local.db.late").to_arrow().column("id").to_pylist()) == [0, 1, 2]


# --- Ray --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        yield ray
    finally:
        ray.shutdown()


def test_ray_datasink_and_datasource(ray_cluster: Any, catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    ray = ray_cluster
    df = frame(800)
    sink = ig.ray.IcebergDatasink("local.db.rt", mode="create", partition_by=[ig.bucket(4, "id")])
    ray.data.from_pandas(df).repartition(4).write_datasink(sink)
    assert sink.result is not None and sink.result.summary["added-records"] == "800"
    check_one_snapshot("rt", 0, df, catalog_dir, pyiceberg_catalog)
    assert rows("rt") == expected(df)

    # The source's read tasks (run here, not as a job): disjoint shares, projected and filtered.
    tasks = ig.ray.IcebergDatasource("local.db.rt", columns=["id", "v"], where="id >= 700").get_read_tasks(3)
    parts = [block for task in tasks for block in task()]
    assert len(tasks) == 3 and all(p.column_names == ["id", "v"] for p in parts)
    assert sorted(i for p in parts for i in p.column("id").to_pylist()) == list(range(700, 800))

    # Read, transform, write back: one more snapshot.
    more = ig.ray.read_iceberg("local.db.rt", where="id < 100").map_batches(
        lambda b: b.assign(id=b["id"] + 5000), batch_format="pandas"
    )
    sink2 = ig.ray.IcebergDatasink("local.db.rt", mode="append")
    more.write_datasink(sink2)
    assert sink2.result is not None and sink2.result.summary["added-records"] == "100"
    assert len(ig.table("local.db.rt").snapshots()) == 2
    assert table_files("rt") == data_files(catalog_dir, "rt")
    moved = df[df["id"] < 100].assign(id=df["id"][df["id"] < 100] + 5000)
    assert rows("rt") == expected(pd.concat([df, moved]))


def test_ray_read_parquet_into_a_create(ray_cluster: Any, catalog_dir: CatalogDir, pyiceberg_catalog: Any, tmp_path: Path) -> None:
    """Parquet files read by Ray Data (``read_parquet``, whose first bundle is Ray's own file
    listing: __path, __file_size, __file_chunk_metadata) create a table with the files' schema."""
    import pyarrow.parquet as pq

    ray = ray_cluster
    df = frame(600)
    src = tmp_path / "src"
    src.mkdir()
    for k in range(3):
        pq.write_table(pa.Table.from_pandas(df.iloc[k * 200 : (k + 1) * 200], preserve_index=False), src / f"p{k}.parquet")
    sink = ig.ray.IcebergDatasink("local.db.rpq", mode="create")
    ray.data.read_parquet(str(src)).write_datasink(sink)
    assert [f.name for f in pyiceberg_catalog.load_table("db.rpq").schema().fields] == ["id", "cat", "v"]
    check_one_snapshot("rpq", 0, df, catalog_dir, pyiceberg_catalog)
    assert rows("rpq") == expected(df)


def test_ray_killed_worker_and_failed_job(ray_cluster: Any, catalog_dir: CatalogDir, pyiceberg_catalog: Any, tmp_path: Path) -> None:
    ray = ray_cluster

    # Nested, so Ray pickles it by value (workers cannot import this test module).
    def _ray_kill_once(batch: pd.DataFrame, marker: str, write_id: str, catalogs: dict[str, Any]) -> pd.DataFrame:
        if 250 in set(batch["id"].tolist()) and not os.path.exists(marker):
            Path(marker).write_text("killed")
            dw = ig.DistributedWrite("local.db.rkill", "append", write_id=write_id, session=ig.Session(catalogs=catalogs))
            dw.write_task(batch.iloc[: len(batch) // 2], task=1, attempt=777)
            os.kill(os.getpid(), signal.SIGKILL)
        return batch

    ig.writeTo(pa.Table.from_pandas(frame(3, first=-3), preserve_index=False), "local.db.rkill").create()
    df = frame(500)
    marker = str(tmp_path / "killed")
    cats = {"local": catalog_dir.properties}
    ds = ray.data.from_pandas(df).repartition(5).map_batches(
        _ray_kill_once, fn_args=(marker, "rayjob", cats), batch_format="pandas", batch_size=None
    )
    ds.write_datasink(ig.ray.IcebergDatasink("local.db.rkill", mode="append", write_id="rayjob"))
    assert os.path.exists(marker), "no worker was killed"
    check_one_snapshot("rkill", 1, df, catalog_dir, pyiceberg_catalog)
    assert rows("rkill") == expected(pd.concat([frame(3, first=-3), df]))

    before = data_files(catalog_dir, "rkill")

    def fail(batch: pd.DataFrame) -> pd.DataFrame:
        if 150 in set(batch["id"].tolist()):
            raise RuntimeError("task failed on purpose")
        return batch

    bad = ray.data.from_pandas(df).repartition(4).map_batches(fail, batch_format="pandas", batch_size=None)
    with pytest.raises(Exception, match="on purpose"):
        bad.write_datasink(ig.ray.IcebergDatasink("local.db.rkill", mode="append"))
    assert len(ig.table("local.db.rkill").snapshots()) == 2
    assert data_files(catalog_dir, "rkill") == before


# --- no engine needed -------------------------------------------------------------------


def test_distributed_write_commits_once(catalog_dir: CatalogDir) -> None:
    ig.writeTo(pa.table({"id": pa.array([0], pa.int64())}), "local.db.once").create()
    dw = ig.DistributedWrite("local.db.once", "append")
    files = [dw.write_task(pa.table({"id": pa.array([i, i + 100], pa.int64())}), task=i) for i in range(3)]
    assert all(len(json_size(f)) < 2048 for task in files for f in task)
    r = dw.commit(files)
    assert r.summary["added-data-files"] == "3" and r.summary["pyiceberg-go.write-id"] == dw.write_id
    with pytest.raises(ig.ValidationError, match="already committed"):
        dw.commit(files)
    with pytest.raises(ig.ValidationError):
        dw.abort()
    assert sorted(ig.table("local.db.once").to_arrow().column("id").to_pylist()) == [0, 0, 1, 2, 100, 101, 102]
    with pytest.raises(ValueError, match="schema"):
        ig.DistributedWrite("local.db.x", "create").commit([])


def json_size(d: dict[str, Any]) -> str:
    import json

    return json.dumps(d)


def test_spark_reads_what_a_distributed_job_wrote(dask_client: Any, spark: Any, spark_catalog: str, catalog_dir: CatalogDir) -> None:
    import dask.dataframe as dd

    # Hidden partitioning by transforms, written by worker processes and committed once: Spark
    # reads the same rows, and finds them in the partitions its own transforms give.
    df = frame(500)
    df["ts"] = pd.to_datetime(df["id"] * 3_600_000_000, unit="us", utc=True)
    ig.dask.to_iceberg(dd.from_pandas(df, npartitions=4), "local.db.sp", mode="create", partition_by=[ig.days("ts"), ig.bucket(3, "id")])
    got = spark.sql("SELECT id, cat, v FROM local.db.sp").toPandas()
    assert sorted(zip(got["id"].tolist(), got["cat"].tolist(), got["v"].tolist())) == expected(df)
    # Every row sits in the partition Spark's own transforms (Iceberg's function catalog) give it.
    misplaced = spark.sql(
        "SELECT count(*) FROM local.db.sp WHERE _partition.ts_day <> local.system.days(ts)"
        " OR _partition.id_bucket <> local.system.bucket(3, id)"
    ).collect()[0][0]
    assert misplaced == 0
