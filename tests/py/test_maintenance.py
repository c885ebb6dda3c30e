"""Table maintenance: expire_snapshots and remove_orphan_files, checked with PyIceberg 0.12 and DuckDB.

What a snapshot reaches is computed here from PyIceberg's reading of the manifests, not by the
library: the files an expiry deletes must be exactly those only expired snapshots reached, and
every snapshot, branch and tag left must read back as it did before. No outcome depends on the
wall clock: cutoffs are derived from the snapshots' own timestamps and the files' own mtimes.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyiceberg_go as ig

from conftest import assert_same_rows, duckdb_scan
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

T = "db.t"

DATA, POS, EQ, MANIFEST, LIST = "data", "position_deletes", "equality_deletes", "manifest", "manifest_list"


def rows(first: int, n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first, first + n), pa.int64()),
            "cat": pa.array([f"c{i % 3}" for i in range(first, first + n)], pa.string()),
        }
    )


def local(path: str) -> str:
    return os.path.normpath(path.removeprefix("file://").removeprefix("file:"))


def reach(pi_table: Any) -> dict[int, dict[str, str]]:
    """For every snapshot: the files it reaches (manifest list, manifests, live data and delete files)."""
    io = pi_table.io
    out: dict[int, dict[str, str]] = {}
    for snap in pi_table.metadata.snapshots:
        files = {local(snap.manifest_list): LIST}
        for mf in snap.manifests(io):
            files[local(mf.manifest_path)] = MANIFEST
            for entry in mf.fetch_manifest_entry(io, discard_deleted=True):
                kind = {0: DATA, 1: POS, 2: EQ}[int(entry.data_file.content)]
                files[local(entry.data_file.file_path)] = kind
        out[snap.snapshot_id] = files
    return out


def contents(pi_table: Any) -> dict[int, pa.Table]:
    return {s.snapshot_id: pi_table.scan(snapshot_id=s.snapshot_id).to_arrow() for s in pi_table.metadata.snapshots}


def disk(root: Path) -> set[str]:
    return {os.path.normpath(str(p)) for p in root.rglob("*") if p.is_file()}


def table_dir(catalog_dir: Any) -> Path:
    return Path(catalog_dir.root) / "wh" / "db.db" / "t"


def after_all_snapshots(pi_table: Any) -> int:
    """A cutoff (epoch ms) after every snapshot: only refs and retain_last keep anything."""
    return max(s.timestamp_ms for s in pi_table.metadata.snapshots) + 1


def check_expiry(pyiceberg_catalog: Any, catalog_dir: Any, **kwargs: Any) -> ig.ExpireSnapshotsResult:
    """Expire with kwargs and check the outcome against PyIceberg's view of the table before and after."""
    before_t = pyiceberg_catalog.load_table(T)
    before_reach, before_rows = reach(before_t), contents(before_t)
    refs_before = {n: r.snapshot_id for n, r in before_t.metadata.refs.items()}
    on_disk = disk(table_dir(catalog_dir))

    res = ig.table(T).expire_snapshots(**kwargs)

    after_t = pyiceberg_catalog.load_table(T)
    kept = {s.snapshot_id for s in after_t.metadata.snapshots}
    expired = set(before_reach) - kept
    assert sorted(expired) == res.expired_snapshot_ids
    # Every ref left points at a snapshot left; removed refs are the ones reported.
    refs_after = {n: r.snapshot_id for n, r in after_t.metadata.refs.items()}
    assert set(refs_before) - set(refs_after) == set(res.removed_refs)
    for name, sid in refs_after.items():
        assert sid == refs_before[name] and sid in kept, name
    # Every remaining snapshot reads back as before.
    for sid in kept:
        assert_same_rows(after_t.scan(snapshot_id=sid).to_arrow(), before_rows[sid])
    # Deleted: exactly what only expired snapshots reached.
    still = set().union(*(set(before_reach[s]) for s in kept)) if kept else set()
    want = set().union(*(set(before_reach[s]) for s in expired)) - still if expired else set()
    gone = on_disk - disk(table_dir(catalog_dir))
    assert gone == want
    kinds: dict[str, str] = {}
    for s in expired:
        kinds.update(before_reach[s])
    by_kind = {k: sum(1 for f in gone if kinds[f] == k) for k in (DATA, POS, EQ, MANIFEST, LIST)}
    assert res.counts() == {
        "deleted_data_files_count": by_kind[DATA],
        "deleted_position_delete_files_count": by_kind[POS],
        "deleted_equality_delete_files_count": by_kind[EQ],
        "deleted_manifest_files_count": by_kind[MANIFEST],
        "deleted_manifest_lists_count": by_kind[LIST],
        "deleted_statistics_files_count": 0,
    }
    assert res.failed_deletes == []
    # DuckDB reads the current snapshot from the new metadata.
    assert_same_rows(duckdb_scan(after_t.metadata_location), before_rows[refs_after["main"]])
    return res


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_expire_with_branches_tags_and_row_level_changes(pyiceberg_catalog: Any, catalog_dir: Any, mode: str) -> None:
    w = ig.writeTo(rows(0, 30), T).partitionedBy("cat")
    for k in ("write.delete.mode", "write.update.mode", "write.merge.mode"):
        w = w.tableProperty(k, mode)
    w.create()
    t = ig.table(T)
    ig.writeTo(rows(30, 30), T).append()
    t.create_tag("v1")
    t.delete("id % 4 = 0")
    t.create_branch("b")
    ig.writeTo(rows(100, 10), "db.t.branch_b").append()
    t.update({"cat": ig.lit("cz")}, where="id < 10")
    ig.writeTo(rows(200, 5), T).overwrite("cat = 'c1'")
    t.delete("id % 5 = 0")
    t.upsert(rows(55, 10), ["id"])
    cutoff = after_all_snapshots(pyiceberg_catalog.load_table(T))
    res = check_expiry(pyiceberg_catalog, catalog_dir, older_than=cutoff, retain_last=2)
    assert res.expired_snapshot_ids, "nothing expired: the test would not test anything"
    if mode == "merge-on-read":
        assert res.deleted_position_delete_files_count > 0
    else:
        assert res.deleted_data_files_count > 0
    # Again: nothing more to do.
    again = ig.table(T).expire_snapshots(older_than=cutoff, retain_last=2)
    assert again.expired_snapshot_ids == [] and sum(again.counts().values()) == 0


def test_expire_snapshot_ids_and_clean_metadata(pyiceberg_catalog: Any, catalog_dir: Any) -> None:
    ig.writeTo(rows(0, 10), T).create()
    ig.writeTo(rows(10, 10), T).append()
    ig.writeTo(rows(20, 10), T).overwrite("id < 5")
    first = pyiceberg_catalog.load_table(T).metadata.snapshots[0].snapshot_id
    # Only the named snapshot: the cutoff (the epoch) keeps everything else.
    res = check_expiry(pyiceberg_catalog, catalog_dir, older_than=0, snapshot_ids=[first])
    assert res.expired_snapshot_ids == [first]
    assert res.deleted_manifest_lists_count == 1 and res.deleted_data_files_count == 0
    res = check_expiry(
        pyiceberg_catalog,
        catalog_dir,
        older_than=dt.datetime(2999, 1, 1, tzinfo=dt.timezone.utc),
        clean_expired_metadata=True,
    )
    assert len(res.expired_snapshot_ids) == 1


def test_expire_errors(pyiceberg_catalog: Any) -> None:
    ig.writeTo(rows(0, 5), T).create()
    ig.writeTo(rows(5, 5), T).append()
    t = ig.table(T)
    head = t.snapshots()[-1]["snapshot_id"]
    for bad in (0, -1):
        with pytest.raises(ig.InvalidArgumentError, match="at least 1"):
            t.expire_snapshots(retain_last=bad)
    with pytest.raises(ig.InvalidArgumentError, match="no such snapshot"):
        t.expire_snapshots(snapshot_ids=[123])
    with pytest.raises(ig.InvalidArgumentError, match="Still referenced by refs"):
        t.expire_snapshots(snapshot_ids=[head])
    with pytest.raises(ig.InvalidArgumentError, match="timezone-aware"):
        t.expire_snapshots(older_than=dt.datetime(2020, 1, 1))
    with pytest.raises(TypeError):
        t.expire_snapshots(retain_last=True)
    assert len(t.snapshots()) == 2
    ig.writeTo(rows(0, 5), "db.nogc").tableProperty("gc.enabled", "false").create()
    with pytest.raises(ig.ValidationError, match="GC is disabled"):
        ig.table("db.nogc").expire_snapshots()
    with pytest.raises(ig.ValidationError, match="GC is disabled"):
        ig.table("db.nogc").remove_orphan_files(dry_run=True)
    with pytest.raises(ig.NoSuchTableError):
        ig.table("db.missing").expire_snapshots()


# ---- generated histories -------------------------------------------------------------------

OPS = st.lists(
    st.sampled_from(["append", "delete", "overwrite", "update", "tag", "branch", "branch_append"]),
    min_size=1,
    max_size=7,
)


def model_kept(pi_table: Any, retain_last: int) -> set[int]:
    """Java's rules with every snapshot older than the cutoff: each ref's snapshot, and the first
    retain_last ancestors of each branch."""
    by_id = {s.snapshot_id: s for s in pi_table.metadata.snapshots}
    kept: set[int] = set()
    for ref in pi_table.metadata.refs.values():
        kept.add(ref.snapshot_id)
        if ref.snapshot_ref_type.value != "branch":
            continue
        sid: int | None = ref.snapshot_id
        n = 0
        while sid is not None and n < retain_last:
            kept.add(sid)
            n += 1
            sid = by_id[sid].parent_snapshot_id
    return kept


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=OPS, retain_last=st.integers(1, 3), mor=st.booleans())
def test_generated_histories_expire_as_modelled(
    pyiceberg_catalog: Any, catalog_dir: Any, ops: list[str], retain_last: int, mor: bool
) -> None:
    # Hypothesis runs the examples in one test's catalog: start each from no table.
    if pyiceberg_catalog.table_exists(T):
        pyiceberg_catalog.drop_table(T)
    shutil.rmtree(table_dir(catalog_dir), ignore_errors=True)
    mode = "merge-on-read" if mor else "copy-on-write"
    ig.writeTo(rows(0, 20), T).tableProperty("write.delete.mode", mode).tableProperty(
        "write.update.mode", mode
    ).create()
    t = ig.table(T)
    nxt = 100
    for i, op in enumerate(ops):
        if op == "append":
            ig.writeTo(rows(nxt, 5), T).append()
        elif op == "delete":
            t.delete(f"id % {i + 2} = 1")
        elif op == "overwrite":
            ig.writeTo(rows(nxt, 5), T).overwrite(f"id < {nxt - 50}")
        elif op == "update":
            t.update({"cat": ig.lit(f"u{i}")}, where="id % 3 = 0")
        elif op == "tag":
            t.create_tag(f"tag{i}")
        elif op == "branch":
            t.create_branch(f"br{i}")
        elif op == "branch_append":
            branches = [n for n, r in t.refs().items() if r["type"] == "branch" and n != "main"]
            if branches:
                ig.writeTo(rows(nxt, 3), f"db.t.branch_{branches[0]}").append()
        nxt += 10
    pi = pyiceberg_catalog.load_table(T)
    want_kept = model_kept(pi, retain_last)
    check_expiry(pyiceberg_catalog, catalog_dir, older_than=after_all_snapshots(pi), retain_last=retain_last)
    assert {s.snapshot_id for s in pyiceberg_catalog.load_table(T).metadata.snapshots} == want_kept


# ---- orphans -------------------------------------------------------------------------------


def test_remove_orphan_files(pyiceberg_catalog: Any, catalog_dir: Any) -> None:
    ig.writeTo(rows(0, 30), T).partitionedBy("cat").tableProperty("write.delete.mode", "merge-on-read").create()
    t = ig.table(T)
    t.create_tag("first")
    ig.writeTo(rows(30, 30), T).overwrite("cat = 'c1'")
    t.delete("id % 7 = 0")
    root = table_dir(catalog_dir)
    # The cutoff: two days before the oldest file, so the library's "at least 24 hours before
    # now" holds whatever the clock says; every table file is then made older than it, so only
    # reachability protects them.
    oldest = min(p.stat().st_mtime for p in root.rglob("*") if p.is_file())
    cutoff = dt.datetime.fromtimestamp(oldest, dt.timezone.utc) - dt.timedelta(days=2)
    old = (cutoff - dt.timedelta(hours=1)).timestamp()
    young = (cutoff + dt.timedelta(hours=1)).timestamp()
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (old, old))

    def plant(rel: str, mtime: float, data: bytes = b"x") -> str:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        os.utime(p, (mtime, mtime))
        return os.path.normpath(str(p))

    # A failed write's data file: a real parquet file in a partition folder, never committed.
    failed = root / "data" / "cat=c0" / "00000-9-failed-write.parquet"
    pq.write_table(rows(900, 3), failed)
    os.utime(failed, (old, old))
    want = {
        os.path.normpath(str(failed)),
        plant("data/cat=c2/orphan.parquet", old),
        plant("metadata/stray-m0.avro", old),
        plant("elsewhere/x.bin", old),
    }
    plant("data/cat=c2/young.parquet", young)
    plant("data/.part.crc", old)
    pi = pyiceberg_catalog.load_table(T)
    before = contents(pi)
    on_disk = disk(root)

    dry = t.remove_orphan_files(older_than=cutoff, dry_run=True)
    assert {local(x) for x in dry.orphan_file_locations} == want
    assert dry.dry_run and disk(root) == on_disk
    assert dry.to_arrow().column_names == ["orphan_file_location"] and dry.to_arrow().num_rows == len(want)

    res = t.remove_orphan_files(older_than=int(cutoff.timestamp() * 1000))
    assert {local(x) for x in res.orphan_file_locations} == want and res.failed_deletes == []
    assert on_disk - disk(root) == want
    pi = pyiceberg_catalog.load_table(T)
    for sid, tbl in before.items():
        assert_same_rows(pi.scan(snapshot_id=sid).to_arrow(), tbl)
    assert_same_rows(duckdb_scan(pi.metadata_location), before[pi.metadata.current_snapshot_id])
    # Nothing left to find; a cutoff less than a day ago is refused.
    assert t.remove_orphan_files(older_than=cutoff).orphan_file_locations == []
    with pytest.raises(ig.InvalidArgumentError, match="24 hours"):
        t.remove_orphan_files(older_than=dt.datetime.now(dt.timezone.utc))


def test_orphans_after_expiry_and_location(pyiceberg_catalog: Any, catalog_dir: Any) -> None:
    """Files an expiry could not delete are orphans afterwards; ``location`` limits the listing."""
    ig.writeTo(rows(0, 10), T).create()
    ig.writeTo(rows(10, 10), T).overwrite("true")
    root = table_dir(catalog_dir)
    oldest = min(p.stat().st_mtime for p in root.rglob("*") if p.is_file())
    cutoff = dt.datetime.fromtimestamp(oldest, dt.timezone.utc) - dt.timedelta(days=2)
    old = (cutoff - dt.timedelta(hours=1)).timestamp()
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (old, old))
    stray = root / "data" / "stray.parquet"
    stray.write_bytes(b"x")
    os.utime(stray, (old, old))
    other = root / "metadata" / "stray.avro"
    other.write_bytes(b"x")
    os.utime(other, (old, old))
    res = ig.table(T).remove_orphan_files(older_than=cutoff, location=f"file://{root / 'data'}", dry_run=True)
    assert [local(x) for x in res.orphan_file_locations] == [os.path.normpath(str(stray))]


# ---- Spark differential ---------------------------------------------------------------------


def _twin_history(name: str) -> None:
    ig.writeTo(rows(0, 30), name).partitionedBy("cat").tableProperty("write.delete.mode", "merge-on-read").create()
    t = ig.table(name)
    ig.writeTo(rows(30, 30), name).append()
    t.create_tag("v1")
    t.delete("id % 4 = 0")
    t.create_branch("b")
    ig.writeTo(rows(100, 10), f"{name}.branch_b").append()
    ig.writeTo(rows(200, 5), name).overwrite("cat = 'c1'")
    t.update({"cat": ig.lit("cz")}, where="id < 10")
    ig.writeTo(rows(300, 5), name).append()


def test_expire_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """Twin histories: Spark's CALL system.expire_snapshots on one, ours on the other, with the
    same cutoff and retain_last: same counts and the same snapshots left (by sequence number)."""
    _twin_history("db.a")
    _twin_history("db.b")
    cutoff = max(after_all_snapshots(pyiceberg_catalog.load_table(n)) for n in ("db.a", "db.b"))
    ts = dt.datetime.fromtimestamp(cutoff / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    spark_row = spark.sql(
        f"CALL {spark_catalog}.system.expire_snapshots(table => 'db.a', older_than => TIMESTAMP '{ts}', retain_last => 2)"
    ).collect()[0]
    ours = ig.table("db.b").expire_snapshots(older_than=cutoff, retain_last=2)
    assert spark_row.asDict() == ours.counts()
    assert sum(ours.counts().values()) > 0

    def shape(name: str) -> tuple[list[int], dict[str, int]]:
        m = pyiceberg_catalog.load_table(name).metadata
        seq = {s.snapshot_id: s.sequence_number for s in m.snapshots}
        return sorted(seq.values()), {n: seq[r.snapshot_id] for n, r in m.refs.items()}

    assert shape("db.a") == shape("db.b")
