"""rewrite_position_delete_files against Spark 4.1's procedure, read back with PyIceberg 0.12 and DuckDB.

Twin merge-on-read v2 tables get the same history (appends, then several merge-on-read deletes
and updates, each of which adds a small position delete file per data file it touches; some
with deletes left dangling by a data-file rewrite); Spark's ``CALL
system.rewrite_position_delete_files`` compacts one, ours the other. Rows must be the same as
before on both; the delete files left, their rows and the result columns must match Spark's.
Concurrent commits are ordered with the test hooks' commit pause (conftest.HOOKS_LIBRARY),
never with sleeps.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_compaction import assert_same_rows, generated

import pyiceberg_go as ig

from conftest import duckdb_scan
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}


def create(name: str, partitioned: bool, props: dict[str, str] | None = None, seed: int = 1) -> None:
    w = ig.writeTo(generated(seed, 0, 60), name)
    if partitioned:
        w = w.partitionedBy("part")
    for k, v in (MOR | (props or {})).items():
        w = w.tableProperty(k, v)
    w.create()
    for i in range(1, 4):
        ig.writeTo(generated(seed, 60 * i, 60), name).append()


def history(name: str, partitioned: bool, seed: int = 1, props: dict[str, str] | None = None) -> None:
    """Appends, then merge-on-read deletes and updates: each adds a small position delete
    file for every data file it touches (ours write one per data file and operation)."""
    create(name, partitioned, props, seed)
    t = ig.table(name)
    for k in range(2, 8):
        t.delete(f"id % 11 = {k}")
    t.update({"name": "'upd'"}, "id % 13 = 1")
    t.delete("id % 17 = 3")


def delete_files(cat: Any, name: str) -> list[Any]:
    return [f for f in cat.load_table(name).inspect.delete_files().to_pylist() if f["content"] == 1]


_file_keys: dict[str, str] = {}


def file_key(io: Any, path: str) -> str:
    """A name for a data file that twin tables share: its rows' ids and names (file names are
    random)."""
    if path not in _file_keys:
        t = pq.read_table(io.new_input(path).open(), columns=["id", "name"])
        _file_keys[path] = repr(t.column("id").to_pylist()) + repr(t.column("name").to_pylist())
    return _file_keys[path]


def deletes_of(cat: Any, name: str) -> Counter[tuple[str, int]]:
    """The (data file, position) pairs of the table's live position delete files, counted; data
    files by file_key so that twin tables compare."""
    tbl = cat.load_table(name)
    out: Counter[tuple[str, int]] = Counter()
    for f in delete_files(cat, name):
        rows = pq.read_table(tbl.io.new_input(f["file_path"]).open(), columns=["file_path", "pos"]).to_pylist()
        out.update((file_key(tbl.io, r["file_path"]), r["pos"]) for r in rows)
    return out


def live_deletes(cat: Any, name: str) -> Counter[tuple[str, int]]:
    """deletes_of, restricted to data files that are live."""
    tbl = cat.load_table(name)
    live = {file_key(tbl.io, t.file.file_path) for t in tbl.scan().plan_files()}
    return Counter({k: v for k, v in deletes_of(cat, name).items() if k[0] in live})


def rows_of(cat: Any, name: str) -> pa.Table:
    return cat.load_table(name).scan().to_arrow()


def spark_call(spark: Any, catalog: str, name: str, args: str = "") -> dict[str, int]:
    sql = f"CALL {catalog}.system.rewrite_position_delete_files(table => '{name}'{args})"
    row = spark.sql(sql).collect()[0]
    return {k: int(v) for k, v in row.asDict().items()}


def spark_options(options: dict[str, str]) -> str:
    if not options:
        return ""
    return ", options => map(" + ", ".join(f"'{k}', '{v}'" for k, v in options.items()) + ")"


def twins(
    spark: Any,
    spark_catalog: str,
    cat: Any,
    build: Any,
    options: dict[str, str] | None = None,
    where: str | None = None,
) -> tuple[dict[str, int], ig.RewritePositionDeleteFilesResult, pa.Table]:
    """Builds db.a and db.b with build(name), runs Spark's procedure on db.a and ours on db.b,
    and checks what must hold whatever the options: rows unchanged on both (read by PyIceberg,
    us and DuckDB), the same live deletes before and after, the same delete files left."""
    build("db.a")
    build("db.b")
    before = rows_of(cat, "db.b")
    assert_same_rows(rows_of(cat, "db.a"), before)
    live_before = live_deletes(cat, "db.b")
    assert live_deletes(cat, "db.a") == live_before
    args = spark_options(options or {}) + (f', where => "{where}"' if where else "")
    theirs = spark_call(spark, spark_catalog, "db.a", args)
    ours = ig.table("db.b").rewrite_position_delete_files(where=where, options=options)
    assert isinstance(ours, ig.RewritePositionDeleteFilesResult)
    for name in ("db.a", "db.b"):
        assert_same_rows(rows_of(cat, name), before)
        assert live_deletes(cat, name) == live_before, name
    assert_same_rows(ig.table("db.b").scan().to_arrow(), before)
    assert_same_rows(duckdb_scan(cat.load_table("db.b").metadata_location), before)
    return theirs, ours, before


def same_counts(cat: Any, theirs: dict[str, int], ours: ig.RewritePositionDeleteFilesResult) -> None:
    """The same file counts as Spark's; the byte counts (the twins' files differ by a few
    bytes) each those of its own table's snapshot: the files it removed and added."""
    sizes = {"rewritten_bytes_count": 0, "added_bytes_count": 0}
    assert ours.counts() | sizes == theirs | sizes, (ours, theirs)
    for name, counts in (("db.a", theirs), ("db.b", ours.counts())):
        head = cat.load_table(name).current_snapshot()
        if counts["rewritten_delete_files_count"] == 0:
            continue
        summary = head.summary
        assert summary.operation.value == "replace"
        assert int(summary["removed-position-delete-files"]) == counts["rewritten_delete_files_count"], name
        assert int(summary.get("added-position-delete-files", "0")) == counts["added_delete_files_count"], name
        assert int(summary["removed-files-size"]) == counts["rewritten_bytes_count"], name
        assert int(summary.get("added-files-size", "0")) == counts["added_bytes_count"], name


def same_files(cat: Any) -> None:
    """Both twins end with the same number of position delete files, per partition, holding the
    same deletes."""

    def shape(name: str) -> Counter[Any]:
        return Counter((json.dumps(f["partition"], default=str), f["record_count"]) for f in delete_files(cat, name))

    assert shape("db.a") == shape("db.b")
    assert deletes_of(cat, "db.a") == deletes_of(cat, "db.b")


@pytest.mark.parametrize("partitioned", [True, False])
def test_matches_spark(partitioned: bool, spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    theirs, ours, _ = twins(spark, spark_catalog, pyiceberg_catalog, lambda n: history(n, partitioned))
    assert ours.rewritten_delete_files_count > 0
    same_counts(pyiceberg_catalog, theirs, ours)
    assert ours.added_bytes_count > 0 and len(ours.snapshot_ids) == 1
    same_files(pyiceberg_catalog)
    head = pyiceberg_catalog.load_table("db.b").current_snapshot()
    assert head.summary.operation.value == "replace" and head.snapshot_id == ours.snapshot_ids[0]
    # A second run has nothing to do, in both.
    again = ig.table("db.b").rewrite_position_delete_files()
    assert again.counts() == dict.fromkeys(again.counts(), 0) and again.snapshot_ids == []
    assert spark_call(spark, spark_catalog, "db.a") == again.counts()
