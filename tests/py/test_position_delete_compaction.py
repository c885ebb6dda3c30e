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
import multiprocessing as mp
import time
from collections import Counter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.table.deletion_vector import deletion_vectors_from_puffin_file
from pyiceberg.table.puffin import PuffinFile
from test_compaction import assert_same_rows, generated

import pyiceberg_go as ig

from conftest import HANG_S, CatalogDir, duckdb_scan, hooks_library, use_library
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}


def create(name: str, partitioned: bool, props: dict[str, str] | None = None, seed: int = 1, by: Any = "part") -> None:
    w = ig.writeTo(generated(seed, 0, 60), name)
    if partitioned:
        w = w.partitionedBy(by)
    for k, v in (MOR | (props or {})).items():
        w = w.tableProperty(k, v)
    w.create()
    for i in range(1, 4):
        ig.writeTo(generated(seed, 60 * i, 60), name).append()


def history(name: str, partitioned: bool, seed: int = 1, props: dict[str, str] | None = None, by: Any = "part") -> None:
    """Appends, then merge-on-read deletes and updates: each adds a small position delete
    file for every data file it touches (ours write one per data file and operation);
    partitioned by `by` (a column or a transform)."""
    create(name, partitioned, props, seed, by)
    t = ig.table(name)
    for k in range(2, 8):
        t.delete(f"id % 11 = {k}")
    t.update({"name": "'upd'"}, "id % 13 = 1")
    t.delete("id % 17 = 3")


def delete_files(cat: Any, name: str) -> list[Any]:
    return [f for f in cat.load_table(name).inspect.delete_files().to_pylist() if f["content"] == 1]


_data_files: dict[str, tuple[str, list[int]]] = {}


def _data_file(io: Any, path: str) -> tuple[str, list[int]]:
    if path not in _data_files:
        t = pq.read_table(io.new_input(path).open(), columns=["id", "name"])
        ids = t.column("id").to_pylist()
        _data_files[path] = (repr(sorted(zip(ids, t.column("name").to_pylist()), key=repr)), ids)
    return _data_files[path]


def file_key(io: Any, path: str) -> str:
    """A name for a data file that twin tables share: its rows (file names are random; the twins'
    files hold the same rows, but a file written by a row-level operation or by Spark's tasks
    may hold them in another order)."""
    return _data_file(io, path)[0]


def deleted(io: Any, path: str, pos: int) -> tuple[str, int]:
    """A deleted row as twin tables share it: its file's file_key and its id (ids are unique
    within a file)."""
    key, ids = _data_file(io, path)
    return key, ids[pos]


def deletes_of(cat: Any, name: str) -> Counter[tuple[str, int]]:
    """The rows the table's live position delete files delete (deleted()), counted."""
    tbl = cat.load_table(name)
    out: Counter[tuple[str, int]] = Counter()
    for f in delete_files(cat, name):
        rows = pq.read_table(tbl.io.new_input(f["file_path"]).open(), columns=["file_path", "pos"]).to_pylist()
        out.update(deleted(tbl.io, r["file_path"], r["pos"]) for r in rows)
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
    live_deletes: Any = live_deletes,
) -> tuple[dict[str, int], ig.RewritePositionDeleteFilesResult, pa.Table]:
    """Builds db.a and db.b with build(name), runs Spark's procedure on db.a and ours on db.b,
    and checks what must hold whatever the options: rows unchanged on both (read by PyIceberg,
    us and DuckDB), the same live deletes (live_deletes(cat, name)) before and after."""
    build("db.a")
    build("db.b")
    before = rows_of(cat, "db.b")
    assert_same_rows(rows_of(cat, "db.a"), before)
    live_before = live_deletes(cat, "db.b")
    assert live_deletes(cat, "db.a") == live_before
    snaps = {n: len(cat.load_table(n).snapshots()) for n in ("db.a", "db.b")}
    args = spark_options(options or {}) + (f', where => "{where}"' if where else "")
    theirs = spark_call(spark, spark_catalog, "db.a", args)
    ours = ig.table("db.b").rewrite_position_delete_files(where=where, options=options)
    assert isinstance(ours, ig.RewritePositionDeleteFilesResult)
    for name in ("db.a", "db.b"):
        assert_same_rows(rows_of(cat, name), before)
        assert live_deletes(cat, name) == live_before, name
    assert_same_rows(ig.table("db.b").scan().to_arrow(), before)
    assert_same_rows(duckdb_scan(cat.load_table("db.b").metadata_location), before)
    _new_snapshots.clear()
    _new_snapshots.update({n: len(cat.load_table(n).snapshots()) - k for n, k in snaps.items()})
    return theirs, ours, before


#: How many snapshots the last twins() call's rewrites committed, per table.
_new_snapshots: dict[str, int] = {}


def same_counts(cat: Any, theirs: dict[str, int], ours: ig.RewritePositionDeleteFilesResult) -> None:
    """The same file counts as Spark's; the byte counts (the twins' files differ by a few
    bytes) each those of its own table's snapshot: the files it removed and added."""
    sizes = {"rewritten_bytes_count": 0, "added_bytes_count": 0}
    assert ours.counts() | sizes == theirs | sizes, (ours, theirs)
    for name, counts in (("db.a", theirs), ("db.b", ours.counts())):
        # The rewrite's snapshots: those the last twins() call added.
        k = _new_snapshots[name]
        rewrites = [
            snap.summary for snap in cat.load_table(name).snapshots()[len(cat.load_table(name).snapshots()) - k :]
        ]
        assert all(sm.operation.value == "replace" for sm in rewrites), name
        assert (k > 0) == (counts["rewritten_delete_files_count"] > 0), name

        def total(key: str, of: list[Any] = rewrites) -> int:
            return sum(int(sm.get(key) or 0) for sm in of)

        # removed-/added-delete-files: on v3 deletion vectors are counted apart from position
        # delete files (removed-dvs, added-dvs), but among the delete files.
        assert total("removed-delete-files") == counts["rewritten_delete_files_count"], name
        assert total("added-delete-files") == counts["added_delete_files_count"], name
        assert total("removed-files-size") == counts["rewritten_bytes_count"], name
        assert total("added-files-size") == counts["added_bytes_count"], name


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


def spark_history(spark: Any, catalog: str, name: str, partitioned: bool) -> None:
    """Written by Spark with partition-scoped position deletes (write.delete.granularity=partition),
    then the first appends' data files compacted: the delete files stay (later data files need
    them) and their deletes of the compacted files dangle."""
    parts = "PARTITIONED BY (part) " if partitioned else ""
    spark.sql(
        f"CREATE TABLE {catalog}.{name} (id bigint, part string, amount double, name string) USING iceberg {parts}"
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read', 'write.delete.granularity'='partition')"
    )
    for i in range(4):
        t = generated(5, 40 * i, 40)
        spark.createDataFrame(t.to_pandas(), schema="id bigint, part string, amount double, name string").coalesce(
            1
        ).writeTo(f"{catalog}.{name}").append()
    for k in range(5):
        spark.sql(f"DELETE FROM {catalog}.{name} WHERE id % 11 = {k}")
    spark.sql(
        f"CALL {catalog}.system.rewrite_data_files(table => '{name}', where => 'id < 80', "
        "options => map('rewrite-all', 'true'))"
    )


@pytest.mark.parametrize("partitioned", [True, False])
def test_dangling_deletes_dropped_as_spark(
    partitioned: bool, spark: Any, spark_catalog: str, pyiceberg_catalog: Any
) -> None:
    theirs, ours, _ = twins(
        spark,
        spark_catalog,
        pyiceberg_catalog,
        lambda n: spark_history(spark, spark_catalog, n, partitioned),
        {"rewrite-all": "true"},
    )
    # Some deletes dangled before (test_history_has_dangling_deletes); every file was
    # rewritten, so none is left in either table.
    for name in ("db.a", "db.b"):
        assert deletes_of(pyiceberg_catalog, name) == live_deletes(pyiceberg_catalog, name), name
    assert ours.rewritten_delete_files_count > 0
    same_counts(pyiceberg_catalog, theirs, ours)
    same_files(pyiceberg_catalog)


def dangling_count(cat: Any, name: str) -> int:
    return sum(deletes_of(cat, name).values()) - sum(live_deletes(cat, name).values())


def test_history_has_dangling_deletes(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """The dangling-delete test above tests something: its history leaves dangling deletes."""
    spark_history(spark, spark_catalog, "db.t", True)
    assert dangling_count(pyiceberg_catalog, "db.t") > 0
    assert ig.table("db.t").rewrite_position_delete_files(options={"rewrite-all": "true"}).rewritten_delete_files_count
    assert dangling_count(pyiceberg_catalog, "db.t") == 0


@pytest.mark.parametrize(
    ("options", "where"),
    [
        ({"rewrite-all": "true"}, None),
        ({"min-input-files": "2"}, None),
        ({"partial-progress.enabled": "true", "partial-progress.max-commits": "2"}, None),
        ({"rewrite-job-order": "bytes-desc", "max-concurrent-file-group-rewrites": "1"}, None),
        ({"min-input-files": "2"}, "part = 'ß'"),
    ],
)
def test_options_match_spark(
    options: dict[str, str], where: str | None, spark: Any, spark_catalog: str, pyiceberg_catalog: Any
) -> None:
    snaps = {}
    theirs, ours, _ = twins(spark, spark_catalog, pyiceberg_catalog, lambda n: history(n, True, seed=3), options, where)
    assert ours.rewritten_delete_files_count > 0
    same_counts(pyiceberg_catalog, theirs, ours)
    same_files(pyiceberg_catalog)
    for name in ("db.a", "db.b"):
        snaps[name] = [s.summary.operation.value for s in pyiceberg_catalog.load_table(name).snapshots()]
    assert snaps["db.a"] == snaps["db.b"], snaps


def test_where_on_a_transform_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """On a table partitioned by truncate(100, id), `where` prunes the delete files of the
    partitions it cannot reach by its inclusive projection onto the partition (id < 120 keeps
    truncated ids 0 and 100, not 200), as Spark's; and the rest is rewritten afterwards."""
    build = lambda n: history(n, True, seed=5, by=ig.truncate(100, "id"))  # noqa: E731
    theirs, ours, _ = twins(spark, spark_catalog, pyiceberg_catalog, build, {"min-input-files": "2"}, "id < 120")
    assert theirs["rewritten_delete_files_count"] > 0
    same_counts(pyiceberg_catalog, theirs, ours)
    same_files(pyiceberg_catalog)
    left = {
        json.dumps(f["partition"], default=str)
        for f in delete_files(pyiceberg_catalog, "db.b")
        if f["record_count"] > 0 and f["partition"]["id_trunc"] == 200
    }
    assert left, "the partition the filter cannot reach kept no delete files"
    again = ig.table("db.b").rewrite_position_delete_files(options={"min-input-files": "2"})
    sizes = {"rewritten_bytes_count": 0, "added_bytes_count": 0}
    assert again.counts()["rewritten_delete_files_count"] > 0
    assert (
        again.counts() | sizes
        == spark_call(spark, spark_catalog, "db.a", spark_options({"min-input-files": "2"})) | sizes
    )


def test_group_size_limits_match_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """max-file-group-input-files splits each partition's files into groups; which files share a
    group depends on the order Java reads its manifests in, so only what does not depend on it is
    compared: the files rewritten (a group of one is not), rows and deletes."""
    options = {"max-file-group-input-files": "4", "min-input-files": "2"}
    theirs, ours, _ = twins(spark, spark_catalog, pyiceberg_catalog, lambda n: history(n, True, seed=4), options)
    assert ours.rewritten_delete_files_count == theirs["rewritten_delete_files_count"] > 0
    assert ours.added_delete_files_count > 0


# ---- generated histories checked against a model (no Spark) ----------------------------

OPS = st.lists(
    st.tuples(st.sampled_from(["delete", "update"]), st.integers(2, 9), st.integers(0, 8)), min_size=1, max_size=7
)
OPTIONS = st.sampled_from(
    [
        {},
        {"rewrite-all": "true"},
        {"min-input-files": "2"},
        {"min-input-files": "2", "max-file-group-input-files": "2"},
        {"rewrite-all": "true", "partial-progress.enabled": "true", "partial-progress.max-commits": "3"},
    ]
)
_names = iter(range(1_000_000))


@settings(max_examples=8, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(ops=OPS, options=OPTIONS, partitioned=st.booleans(), seed=st.integers(0, 3))
def test_generated_histories_keep_their_rows(
    ops: list[tuple[str, int, int]], options: dict[str, str], partitioned: bool, seed: int, pyiceberg_catalog: Any
) -> None:
    name = f"db.g{next(_names)}"
    create(name, partitioned, seed=seed)
    model = ig.table(name).scan().to_arrow()
    for kind, m, k in ops:
        hit = pa.array([i % m == k % m for i in model.column("id").to_pylist()], pa.bool_())
        if kind == "delete":
            ig.table(name).delete(f"id % {m} = {k % m}")
            model = model.filter(pc.invert(hit))
        else:
            ig.table(name).update({"name": "'u'"}, f"id % {m} = {k % m}")
            names = pc.if_else(hit, pa.scalar("u"), model.column("name"))
            model = model.set_column(model.column_names.index("name"), "name", names)
    assert_same_rows(rows_of(pyiceberg_catalog, name), model)
    live = live_deletes(pyiceberg_catalog, name)
    n_before = len(delete_files(pyiceberg_catalog, name))
    r = ig.table(name).rewrite_position_delete_files(options=options)
    assert_same_rows(rows_of(pyiceberg_catalog, name), model)
    assert_same_rows(ig.table(name).scan().to_arrow(), model)
    assert live_deletes(pyiceberg_catalog, name) == live
    assert (
        len(delete_files(pyiceberg_catalog, name))
        == n_before - r.rewritten_delete_files_count + r.added_delete_files_count
    )
    if options.get("rewrite-all") == "true" and n_before > 0:
        # Every file was rewritten into one per data file.
        assert r.rewritten_delete_files_count == n_before
        refs = [f["file_path"] for f in delete_files(pyiceberg_catalog, name)]
        assert len(refs) == len({k[0] for k in live})


# ---- concurrent commits, in another process paused before its commit -----------------


def _slow_rewrite(library: str, uri: str, warehouse: str, signal: str, release: str, out: Any) -> None:
    use_library(library)
    ig.configure(
        catalogs={"local": {"type": "sql", "uri": uri, "warehouse": warehouse}},
        conf={"test.hooks": "true", "test.commit-delay-signal": signal, "test.commit-delay-release": release},
    )
    try:
        r = ig.table("local.db.t").rewrite_position_delete_files()
        out.put(json.dumps({"ok": True, "counts": r.counts(), "snapshot_ids": r.snapshot_ids}))
    except ig.IcebergGoError as e:
        out.put(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))


def race(cat: CatalogDir, concurrent: Any) -> dict[str, Any]:
    """Runs our rewrite in another process (the test-hooks library) paused before its commit,
    commits concurrent() meanwhile, then lets it go on."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    signal, release = cat.root / "waiting", cat.root / "release"
    p = ctx.Process(
        target=_slow_rewrite, args=(hooks_library(), cat.uri, cat.warehouse, str(signal), str(release), out)
    )
    p.start()
    deadline = time.monotonic() + HANG_S
    while not signal.exists():
        assert p.is_alive() or signal.exists(), "the rewrite ended before its commit pause"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    try:
        concurrent()
    finally:
        release.touch()
    res: dict[str, Any] = json.loads(out.get(timeout=HANG_S))
    p.join(timeout=HANG_S)
    assert p.exitcode == 0
    return res


def test_concurrent_delete_is_kept(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    history("db.t", True)
    before = rows_of(pyiceberg_catalog, "db.t")
    victims = [r for r in before.column("id").to_pylist() if r % 5 == 0][:7]
    res = race(catalog_dir, lambda: ig.table("local.db.t").delete(f"id IN ({', '.join(map(str, victims))})"))
    assert res["ok"] is True and res["counts"]["rewritten_delete_files_count"] > 0, res
    want = before.filter(pc.invert(pc.is_in(before.column("id"), pa.array(victims, pa.int64()))))
    assert_same_rows(rows_of(pyiceberg_catalog, "db.t"), want)
    assert_same_rows(duckdb_scan(pyiceberg_catalog.load_table("db.t").metadata_location), want)
    head = pyiceberg_catalog.load_table("db.t").current_snapshot()
    assert head.summary.operation.value == "replace" and head.snapshot_id == res["snapshot_ids"][0]


def test_concurrent_compaction_conflicts(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    """A compaction committed meanwhile applied (and removed) the delete files being rewritten:
    the rewrite fails with a conflict and commits nothing; no row comes back."""
    history("db.t", True)
    before = rows_of(pyiceberg_catalog, "db.t")
    res = race(catalog_dir, lambda: ig.table("local.db.t").rewrite_data_files(options={"rewrite-all": "true"}))
    assert res["ok"] is False and res["type"] == "CommitConflictError", res
    assert pyiceberg_catalog.load_table("db.t").current_snapshot().summary.operation.value == "replace"
    assert_same_rows(rows_of(pyiceberg_catalog, "db.t"), before)
    assert len(delete_files(pyiceberg_catalog, "db.t")) == 0


def test_v3_concurrent_dv_conflicts(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    """On a table upgraded to v3, a merge-on-read delete committed meanwhile writes a deletion
    vector for a data file the rewrite writes one for: the rewrite fails with a conflict (Java
    checks for concurrently added deletion vectors) and commits nothing; the deleted row stays
    deleted and no earlier delete is lost."""
    history("db.t", True)
    ig.table("db.t").set_properties({"format-version": "3"})
    tbl = pyiceberg_catalog.load_table("db.t")
    before = rows_of(pyiceberg_catalog, "db.t")
    live = set(before.column("id").to_pylist())
    with_deletes = [t.file.file_path for t in tbl.scan().plan_files() if t.delete_files]
    assert with_deletes, "no data file has position deletes"
    ids = pq.read_table(tbl.io.new_input(with_deletes[0]).open(), columns=["id"]).column("id").to_pylist()
    victim = next(i for i in ids if i in live)
    res = race(catalog_dir, lambda: ig.table("local.db.t").delete(f"id = {victim}"))
    assert res["ok"] is False and res["type"] == "CommitConflictError", res
    assert "deletion vector" in res["message"], res
    head = pyiceberg_catalog.load_table("db.t").current_snapshot()
    assert head.summary.operation.value != "replace"
    want = before.filter(pc.not_equal(before.column("id"), victim))
    assert_same_rows(rows_of(pyiceberg_catalog, "db.t"), want)
    assert_same_rows(ig.table("db.t").scan().to_arrow(), want)


# ---- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"options": {"min-input-file": 2}}, ig.InvalidArgumentError, "Cannot use options [min-input-file]"),
        ({"options": {"delete-file-threshold": 2}}, ig.InvalidArgumentError, "delete-file-threshold"),
        ({"options": {"target-file-size-bytes": "big"}}, ig.InvalidArgumentError, "target-file-size-bytes"),
        ({"options": {"min-input-files": 0}}, ig.InvalidArgumentError, "'min-input-files' is set to 0"),
        ({"options": {"rewrite-all": "yes"}}, ig.InvalidArgumentError, "rewrite-all"),
        ({"options": {"rewrite-job-order": "random"}}, ig.InvalidArgumentError, "Invalid rewrite job order name"),
        ({"where": "missing = 1"}, ig.ValidationError, "missing"),
        ({"where": ig.col("missing") == 1}, ig.ValidationError, "missing"),
        ({"where": "id = = 1"}, ig.InvalidArgumentError, "id = = 1"),
        ({"where": "id + 1"}, ig.ValidationError, "not a boolean expression"),
    ],
)
def test_bad_input_commits_nothing(
    kwargs: dict[str, Any], error: type[Exception], text: str, pyiceberg_catalog: Any
) -> None:
    history("db.t", True)
    head = pyiceberg_catalog.load_table("db.t").current_snapshot().snapshot_id
    with pytest.raises(error) as e:
        ig.table("db.t").rewrite_position_delete_files(**kwargs)
    assert text in str(e.value)
    assert pyiceberg_catalog.load_table("db.t").current_snapshot().snapshot_id == head


def test_v3_deletion_vectors_need_no_rewrite(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """On v3, deletes are deletion vectors: Spark's procedure and ours both do nothing."""
    for name in ("db.a", "db.b"):
        history(name, True, props={"format-version": "3"})
    heads = {n: pyiceberg_catalog.load_table(n).current_snapshot().snapshot_id for n in ("db.a", "db.b")}
    theirs = spark_call(spark, spark_catalog, "db.a", spark_options({"rewrite-all": "true"}))
    ours = ig.table("db.b").rewrite_position_delete_files(options={"rewrite-all": "true"})
    assert ours.counts() == theirs == dict.fromkeys(theirs, 0) and ours.snapshot_ids == []
    for n, h in heads.items():
        assert pyiceberg_catalog.load_table(n).current_snapshot().snapshot_id == h


# ---- v3: position delete files written before an upgrade become deletion vectors ------


def upgraded(spark: Any, catalog: str, build: Any) -> Any:
    """build, then the table upgraded to format-version 3 by Spark: its position delete files
    stay Parquet."""

    def run(name: str) -> None:
        build(name)
        spark.sql(f"ALTER TABLE {catalog}.{name} SET TBLPROPERTIES ('format-version'='3')")

    return run


def live_delete_entries(name: str) -> list[dict[str, Any]]:
    """The live position delete entries of the table (ours: PyIceberg 0.12 reads neither
    referenced_data_file nor content_offset from v3 manifests)."""
    rows = ig.table(name).inspect.entries().to_pylist()
    return [r for r in rows if r["status"] != 2 and r["data_file"]["content"] == 1]


def dv_deletes(cat: Any, name: str) -> Counter[tuple[str, int]]:
    """deletes_of for any position delete file: Parquet rows, or a deletion vector decoded by
    PyIceberg from its Puffin blob."""
    tbl = cat.load_table(name)
    out: Counter[tuple[str, int]] = Counter()
    for e in live_delete_entries(name):
        f = e["data_file"]
        if f["file_format"] != "PUFFIN":
            rows = pq.read_table(tbl.io.new_input(f["file_path"]).open(), columns=["file_path", "pos"]).to_pylist()
            out.update(deleted(tbl.io, r["file_path"], r["pos"]) for r in rows)
            continue
        puffin = PuffinFile(tbl.io.new_input(f["file_path"]).open().read())
        blobs = [b for b in puffin.footer.blobs if b.offset == f["content_offset"]]
        assert len(blobs) == 1 and blobs[0].length == f["content_size_in_bytes"], f
        vectors = deletion_vectors_from_puffin_file(puffin)
        (vec,) = [v for v, b in zip(vectors, puffin.footer.blobs, strict=True) if b.offset == f["content_offset"]]
        assert vec.referenced_data_file == f["referenced_data_file"], f
        out.update(deleted(tbl.io, vec.referenced_data_file, p) for p in vec.to_vector().to_pylist())
    return out


def dv_live_deletes(cat: Any, name: str) -> Counter[tuple[str, int]]:
    """dv_deletes, restricted to live data files, each position once (a data file may have a
    deletion vector and Parquet deletes naming the same position)."""
    tbl = cat.load_table(name)
    live = {file_key(tbl.io, t.file.file_path) for t in tbl.scan().plan_files()}
    return Counter({k: 1 for k in dv_deletes(cat, name) if k[0] in live})


def same_dvs(cat: Any) -> None:
    """After the rewrite both twins' delete files are all deletion vectors, one per data file,
    holding the same deletes with the same data sequence numbers."""
    shapes = {}
    for name in ("db.a", "db.b"):
        entries = live_delete_entries(name)
        io = cat.load_table(name).io
        assert entries and all(e["data_file"]["file_format"] == "PUFFIN" for e in entries), name
        refs = [e["data_file"]["referenced_data_file"] for e in entries]
        assert len(refs) == len(set(refs)), name
        shapes[name] = Counter(
            (file_key(io, e["data_file"]["referenced_data_file"]), e["data_file"]["record_count"], e["sequence_number"])
            for e in entries
        )
        assert all(e["data_file"]["content_size_in_bytes"] > 0 for e in entries), name
    assert shapes["db.a"] == shapes["db.b"]
    assert dv_deletes(cat, "db.a") == dv_deletes(cat, "db.b")


def nothing_left_to_do(spark: Any, spark_catalog: str) -> None:
    again = ig.table("db.b").rewrite_position_delete_files(options={"rewrite-all": "true"})
    assert again.counts() == dict.fromkeys(again.counts(), 0) and again.snapshot_ids == []
    assert spark_call(spark, spark_catalog, "db.a", spark_options({"rewrite-all": "true"})) == again.counts()


@pytest.mark.parametrize("partitioned", [True, False])
def test_v3_upgraded_position_deletes_become_dvs_as_spark(
    partitioned: bool, spark: Any, spark_catalog: str, pyiceberg_catalog: Any
) -> None:
    """A v2 merge-on-read history upgraded to v3: Spark's procedure (Java's v3 path) rewrites
    every group's Parquet position delete files into one deletion vector per data file, with the
    group's largest data sequence number; ours the same."""
    build = upgraded(spark, spark_catalog, lambda n: history(n, partitioned))
    theirs, ours, _ = twins(spark, spark_catalog, pyiceberg_catalog, build, live_deletes=dv_live_deletes)
    assert ours.rewritten_delete_files_count > ours.added_delete_files_count > 0
    same_counts(pyiceberg_catalog, theirs, ours)
    same_dvs(pyiceberg_catalog)
    summary = pyiceberg_catalog.load_table("db.b").current_snapshot().summary
    assert summary["added-dvs"] == str(ours.added_delete_files_count)
    assert "added-position-delete-files" not in summary.additional_properties
    nothing_left_to_do(spark, spark_catalog)


def test_v3_where_rewrites_one_partition_as_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """where limits the rewrite to the partitions it may match; the others keep their Parquet
    files, and a later run without where rewrites them."""
    build = upgraded(spark, spark_catalog, lambda n: history(n, True, seed=3))
    theirs, ours, _ = twins(
        spark, spark_catalog, pyiceberg_catalog, build, where="part = 'ß'", live_deletes=dv_live_deletes
    )
    assert ours.rewritten_delete_files_count > 0
    same_counts(pyiceberg_catalog, theirs, ours)
    for name in ("db.a", "db.b"):
        formats = {
            (e["data_file"]["partition"]["part"], e["data_file"]["file_format"]) for e in live_delete_entries(name)
        }
        assert {f for p, f in formats if p == "ß"} == {"PUFFIN"} and "PARQUET" in {f for p, f in formats if p != "ß"}
    assert dv_deletes(pyiceberg_catalog, "db.a") == dv_deletes(pyiceberg_catalog, "db.b")
    rest = ig.table("db.b").rewrite_position_delete_files()
    assert rest.counts() | {"rewritten_bytes_count": 0, "added_bytes_count": 0} == spark_call(
        spark, spark_catalog, "db.a"
    ) | {"rewritten_bytes_count": 0, "added_bytes_count": 0}
    same_dvs(pyiceberg_catalog)


def test_v3_dv_and_parquet_deletes_of_one_file_merge_as_spark(
    spark: Any, spark_catalog: str, pyiceberg_catalog: Any
) -> None:
    """Spark's partition-scoped position deletes (some left dangling by a compaction), the table
    upgraded, then a Spark delete on v3: it writes deletion vectors for the data files it touches
    but cannot remove the partition-scoped Parquet files, so those data files have both. The
    rewrite reads both into one new deletion vector per data file (the old one is removed and
    counted among the rewritten files), drops the dangling deletes, as Spark's."""

    def build(name: str) -> None:
        upgraded(spark, spark_catalog, lambda n: spark_history(spark, spark_catalog, n, True))(name)
        spark.sql(f"DELETE FROM {spark_catalog}.{name} WHERE id % 13 = 2")

    build("db.t")
    entries = live_delete_entries("db.t")
    with_dv = {e["data_file"]["referenced_data_file"] for e in entries if e["data_file"]["file_format"] == "PUFFIN"}
    tbl = pyiceberg_catalog.load_table("db.t")
    parquet_refs = {
        r["file_path"]
        for e in entries
        if e["data_file"]["file_format"] == "PARQUET"
        for r in pq.read_table(tbl.io.new_input(e["data_file"]["file_path"]).open(), columns=["file_path"]).to_pylist()
    }
    assert with_dv & parquet_refs, "no data file has both a deletion vector and Parquet deletes"
    assert dangling_count_dv(pyiceberg_catalog, "db.t") > 0

    theirs, ours, _ = twins(spark, spark_catalog, pyiceberg_catalog, build, live_deletes=dv_live_deletes)
    same_counts(pyiceberg_catalog, theirs, ours)
    same_dvs(pyiceberg_catalog)
    for name in ("db.a", "db.b"):
        summary = pyiceberg_catalog.load_table(name).current_snapshot().summary
        assert int(summary["removed-dvs"]) > 0, name
        assert dangling_count_dv(pyiceberg_catalog, name) == 0, name
    sa, sb = (pyiceberg_catalog.load_table(n).current_snapshot().summary for n in ("db.a", "db.b"))
    assert sa["removed-dvs"] == sb["removed-dvs"] and sa["added-dvs"] == sb["added-dvs"]
    nothing_left_to_do(spark, spark_catalog)


def dangling_count_dv(cat: Any, name: str) -> int:
    tbl = cat.load_table(name)
    live = {file_key(tbl.io, t.file.file_path) for t in tbl.scan().plan_files()}
    return sum(1 for k in dv_deletes(cat, name) if k[0] not in live)


def test_v3_split_groups_fail_as_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """max-file-group-input-files splits a partition's files into groups that each write a
    deletion vector for the same data file, with different data sequence numbers: Java's commit
    fails ("Cannot merge DVs"), and so does ours, committing nothing."""
    options = {"min-input-files": "2", "max-file-group-input-files": "2"}
    build = upgraded(spark, spark_catalog, lambda n: history(n, True))
    build("db.a")
    build("db.b")
    heads = {n: pyiceberg_catalog.load_table(n).current_snapshot().snapshot_id for n in ("db.a", "db.b")}
    with pytest.raises(Exception, match="Cannot merge DVs"):
        spark_call(spark, spark_catalog, "db.a", spark_options(options))
    with pytest.raises(ig.ValidationError, match="Cannot merge DVs, mismatched sequence numbers"):
        ig.table("db.b").rewrite_position_delete_files(options=options)
    for n, h in heads.items():
        assert pyiceberg_catalog.load_table(n).current_snapshot().snapshot_id == h
