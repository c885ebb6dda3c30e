"""Two processes running row-level operations on one table at once.

The first process pauses between reading and committing (the test hooks, in the
library built with them: conftest.HOOKS_LIBRARY; it creates ``test.commit-delay-signal``
and waits for ``test.commit-delay-release``); the second commits in that window, and only
then is the first released, so the order holds however loaded the machine is. Under
each isolation level the operation that must fail raises CommitConflictError
naming the concurrent snapshot, nothing of it is committed, no update is lost,
and the table equals the serial order of what committed."""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig

from conftest import HANG_S, CatalogDir, assert_same_rows, hooks_library, use_library

ROWS = 120


def rows(lo: int, hi: int) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table({"id": pa.array(ids, pa.int64()), "part": pa.array([f"p{i % 3}" for i in ids], pa.string()), "v": pa.array(ids, pa.int64())})


def _slow(library: str, uri: str, warehouse: str, kind: str, arg: Any, signal: str, release: str, out: Any) -> None:
    """Runs one operation with a pause before its commit (with the test-hooks library); reports what happened."""
    use_library(library)
    ig.configure(
        catalogs={"local": {"type": "sql", "uri": uri, "warehouse": warehouse}},
        conf={"test.hooks": "true", "test.commit-delay-signal": signal, "test.commit-delay-release": release},
    )
    try:
        if kind == "delete":
            r = ig.table("local.db.t").delete(arg)
        elif kind == "update":
            r = ig.table("local.db.t").update(arg[0], where=arg[1])
        elif kind == "merge":
            r = ig.mergeInto(pa.table(arg), "local.db.t", "target.id = source.id").whenMatched().update({"v": "source.v"}).whenNotMatched().insertAll().merge()
        else:  # overwritePartitions with options
            data, options = arg
            r = ig.writeTo(pa.table(data), "local.db.t").options(**options).overwritePartitions()
        out.put(json.dumps({"ok": True, "snapshot_id": r.snapshot_id}))
    except ig.IcebergGoError as e:
        out.put(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))


def race(cat: CatalogDir, kind: str, arg: Any, concurrent: Any) -> dict[str, Any]:
    """Start the slow operation in another process, run ``concurrent`` here while it waits."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    signal, release = cat.root / "waiting", cat.root / "release"
    p = ctx.Process(target=_slow, args=(hooks_library(), cat.uri, cat.warehouse, kind, arg, str(signal), str(release), out))
    p.start()
    deadline = time.monotonic() + HANG_S
    while not signal.exists():  # the child has read the table and waits to commit
        assert p.is_alive() or signal.exists(), "the slow operation ended before its commit pause"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    try:
        concurrent()
    finally:
        release.touch()  # the slow operation commits now
    res = json.loads(out.get(timeout=HANG_S))
    p.join(timeout=HANG_S)
    assert p.exitcode == 0
    return res


def table_rows(pyiceberg_catalog: Any) -> pa.Table:
    return pyiceberg_catalog.load_table("db.t").scan().to_arrow()


def create(props: dict[str, str], partitioned: bool = True) -> None:
    w = ig.writeTo(rows(0, ROWS), "local.db.t")
    if partitioned:
        w = w.partitionedBy("part")
    for k, v in props.items():
        w = w.tableProperty(k, v)
    w.create()


def where(t: pa.Table, keep: Any) -> pa.Table:
    return t.filter(pa.array([bool(keep(r)) for r in t.to_pylist()]))


def snapshots(pyiceberg_catalog: Any) -> list[int]:
    return [s.snapshot_id for s in pyiceberg_catalog.load_table("db.t").snapshots()]


@pytest.mark.parametrize("level", ["serializable", "snapshot"])
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_two_deletes_on_one_file_conflict(level: str, mode: str, catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    create({"write.delete.mode": mode, "write.delete.isolation-level": level, "format-version": "3"}, partitioned=False)
    res = race(catalog_dir, "delete", "id < 10", lambda: ig.table("local.db.t").delete("id >= 100"))
    assert res == {"ok": False, "type": "CommitConflictError", "message": res["message"]}
    concurrent = pyiceberg_catalog.load_table("db.t").current_snapshot().snapshot_id
    assert str(concurrent) in res["message"], "the error must name the concurrent snapshot"
    # The concurrent delete survives; the failed one changed nothing.
    assert_same_rows(table_rows(pyiceberg_catalog), rows(0, 100))


def test_copy_on_write_delete_against_merge_on_read_delete(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    # The slow delete rewrites the file (copy-on-write); meanwhile the table
    # switches to merge-on-read and a fast delete adds a position delete file
    # for that file. Committing the rewrite would resurrect the row: it must
    # fail. (v2: PyIceberg, which changes the property here, cannot write v3.)
    create({"write.delete.mode": "copy-on-write"}, partitioned=False)

    def mor_delete() -> None:
        pyiceberg_catalog.load_table("db.t").transaction().set_properties(
            {"write.delete.mode": "merge-on-read"}
        ).commit_transaction()
        ig.table("local.db.t").delete("id = 1")

    res = race(catalog_dir, "delete", "id = 3", mor_delete)
    assert res["ok"] is False and res["type"] == "CommitConflictError", res
    assert "deleted rows" in res["message"]
    assert_same_rows(table_rows(pyiceberg_catalog), where(rows(0, ROWS), lambda r: r["id"] != 1))


@pytest.mark.parametrize("level", ["serializable", "snapshot", None])
def test_overwrite_partitions_against_delete_in_its_partition(
    level: str | None, catalog_dir: CatalogDir, pyiceberg_catalog: Any
) -> None:
    create({})
    new = {"id": [1000, 1003], "part": ["p1", "p1"], "v": [0, 0]}
    options = {"isolation-level": level} if level else {}
    res = race(catalog_dir, "overwrite", (new, options), lambda: ig.table("local.db.t").delete("part = 'p1' AND id < 30"))
    after = table_rows(pyiceberg_catalog)
    if level is None:
        # Unvalidated: last writer wins, as in Spark; p1 is exactly the new rows.
        assert res["ok"] is True, res
        expected = pa.concat_tables([where(rows(0, ROWS), lambda r: r["part"] != "p1"), pa.table(new).cast(rows(0, 0).schema)])
        assert_same_rows(after, expected)
        return
    # Both levels treat a concurrent delete in the replaced partition as a conflict.
    assert res["ok"] is False and res["type"] == "CommitConflictError", res
    assert_same_rows(after, where(rows(0, ROWS), lambda r: not (r["part"] == "p1" and r["id"] < 30)))


def test_serializable_delete_against_matching_append(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    create({"write.delete.isolation-level": "serializable"})
    extra = rows(500, 506)
    res = race(catalog_dir, "delete", "part = 'p2'", lambda: ig.writeTo(extra, "local.db.t").append())
    assert res["ok"] is False and res["type"] == "CommitConflictError", res
    assert_same_rows(table_rows(pyiceberg_catalog), pa.concat_tables([rows(0, ROWS), extra]))


def test_snapshot_isolation_update_keeps_concurrent_append(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    create({"write.update.isolation-level": "snapshot"})
    extra = rows(500, 506)
    res = race(catalog_dir, "update", ({"v": "v + 1000"}, "part = 'p2'"), lambda: ig.writeTo(extra, "local.db.t").append())
    assert res["ok"] is True, res
    # The update applies to the rows it read; the appended p2 rows are untouched (serial order: append, update of old rows).
    got = table_rows(pyiceberg_catalog).sort_by("id").to_pylist()
    want = [dict(r, v=r["v"] + 1000 if r["part"] == "p2" and r["id"] < ROWS else r["v"]) for r in pa.concat_tables([rows(0, ROWS), extra]).sort_by("id").to_pylist()]
    assert got == want


def test_non_conflicting_operations_both_commit(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    create({})
    before = len(snapshots(pyiceberg_catalog))
    res = race(catalog_dir, "delete", "part = 'p0' AND id < 60", lambda: ig.table("local.db.t").delete("part = 'p2' AND id > 60"))
    assert res["ok"] is True, res
    assert len(snapshots(pyiceberg_catalog)) == before + 2
    assert_same_rows(
        table_rows(pyiceberg_catalog),
        where(rows(0, ROWS), lambda r: not (r["part"] == "p0" and r["id"] < 60) and not (r["part"] == "p2" and r["id"] > 60)),
    )


@pytest.mark.parametrize("level", ["serializable", "snapshot"])
def test_merge_against_delete_on_an_overlapping_file(level: str, catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    create({"write.merge.isolation-level": level})
    src = {"id": [3, 6, 900], "part": ["p0", "p0", "p0"], "v": [-3, -6, -900]}
    res = race(catalog_dir, "merge", src, lambda: ig.table("local.db.t").delete("id = 9"))
    # Both levels: the merge rewrites the p0 file the delete changed.
    assert res["ok"] is False and res["type"] == "CommitConflictError", res
    assert_same_rows(table_rows(pyiceberg_catalog), where(rows(0, ROWS), lambda r: r["id"] != 9))


def test_merge_against_delete_elsewhere_commits_under_snapshot_isolation(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    # (Under serializable, as in Spark, any concurrently added file the ON
    # condition's target side does not exclude conflicts: the delete's
    # rewritten file would.)
    create({"write.merge.isolation-level": "snapshot"})
    src = {"id": [3, 6, 900], "part": ["p0", "p0", "p0"], "v": [-3, -6, -900]}
    res = race(catalog_dir, "merge", src, lambda: ig.table("local.db.t").delete("part = 'p2' AND id < 50"))
    assert res["ok"] is True, res
    expected = [
        dict(r, v=-r["id"]) if r["id"] in (3, 6) else r
        for r in where(rows(0, ROWS), lambda r: not (r["part"] == "p2" and r["id"] < 50)).to_pylist()
    ] + [{"id": 900, "part": "p0", "v": -900}]
    got = table_rows(pyiceberg_catalog).sort_by("id").to_pylist()
    assert got == sorted(expected, key=lambda r: r["id"])
