"""rewrite_data_files against Spark 4.1's procedure, read back with PyIceberg 0.12 and DuckDB.

Twin tables get the same generated history (many small appends with nulls, unicode and NaN, a
few merge-on-read deletes, a partition spec change); Spark's ``CALL system.rewrite_data_files``
compacts one, ours the other. Both must keep the same rows, end with the same number of files
(within one), report the same result columns, move the files of the old spec to the current one
and, with the sort strategy, write every file sorted. Concurrent commits are ordered with the
test hooks' commit pause (conftest.HOOKS_LIBRARY), never with sleeps.
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import random
import struct
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pyiceberg_go as ig

from conftest import HANG_S, CatalogDir, duckdb_scan, hooks_library, use_library
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

PARTS = ["a", "ß", "日本", "z z", None]


def generated(seed: int, first: int, n: int) -> pa.Table:
    """n rows from id ``first``: a partition column with unicode and nulls, doubles with NaN and nulls."""
    rnd = random.Random(seed * 7919 + first)
    amounts: list[float | None] = []
    for _ in range(n):
        x = rnd.random()
        amounts.append(None if x < 0.1 else math.nan if x < 0.2 else round(rnd.uniform(-1e6, 1e6), 3))
    names = [
        None if rnd.random() < 0.1 else "".join(rnd.choice("abcé日ñ ") for _ in range(rnd.randint(0, 6)))
        for _ in range(n)
    ]
    return pa.table(
        {
            "id": pa.array(range(first, first + n), pa.int64()),
            "part": pa.array([rnd.choice(PARTS) for _ in range(n)], pa.string()),
            "amount": pa.array(amounts, pa.float64()),
            "name": pa.array(names, pa.string()),
        }
    )


def assert_same_rows(actual: pa.Table, expected: pa.Table) -> None:
    """The same multiset of rows, NaN equal to NaN (conftest's check compares NaN as unequal)."""

    def canon(t: pa.Table) -> list[tuple[str, ...]]:
        cols = sorted(t.column_names)
        out = []
        for r in t.select(cols).to_pylist():
            out.append(tuple("NaN" if isinstance(v, float) and math.isnan(v) else repr(v) for v in r.values()))
        return sorted(out)

    assert sorted(actual.column_names) == sorted(expected.column_names)
    a, e = canon(actual), canon(expected)
    assert len(a) == len(e) and a == e


def history(name: str, pyiceberg_catalog: Any, seed: int = 1, appends: int = 12) -> None:
    """The twin history: small appends, merge-on-read deletes, a spec change, more appends."""
    props = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}
    w = ig.writeTo(generated(seed, 0, 40), name).partitionedBy("part")
    for k, v in props.items():
        w = w.tableProperty(k, v)
    w.create()
    for i in range(1, appends):
        ig.writeTo(generated(seed, 40 * i, 40), name).append()
    ig.table(name).delete("id % 9 = 4")
    ig.table(name).delete("amount > 900000")
    from pyiceberg.transforms import BucketTransform

    with pyiceberg_catalog.load_table(name).update_spec() as u:
        u.add_field("id", BucketTransform(2), "id_bucket")
    for i in range(appends, appends + 6):
        ig.writeTo(generated(seed, 40 * i, 40), name).append()


def rows_of(pyiceberg_catalog: Any, name: str) -> pa.Table:
    return pyiceberg_catalog.load_table(name).scan().to_arrow()


def data_files(pyiceberg_catalog: Any, name: str) -> list[Any]:
    return [t.file for t in pyiceberg_catalog.load_table(name).scan().plan_files()]


def files_summary(pyiceberg_catalog: Any, name: str) -> tuple[int, set[int]]:
    files = data_files(pyiceberg_catalog, name)
    return len(files), {f.spec_id for f in files}


def spark_rewrite(spark: Any, catalog: str, name: str, args: str = "") -> dict[str, int]:
    row = spark.sql(f"CALL {catalog}.system.rewrite_data_files(table => '{name}'{args})").collect()[0]
    return {k: int(v) for k, v in row.asDict().items()}


def test_binpack_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    history("db.a", pyiceberg_catalog)
    history("db.b", pyiceberg_catalog)
    before = rows_of(pyiceberg_catalog, "db.b")
    assert_same_rows(rows_of(pyiceberg_catalog, "db.a"), before)
    n_before, specs_before = files_summary(pyiceberg_catalog, "db.b")
    current = pyiceberg_catalog.load_table("db.b").metadata.default_spec_id
    assert len(specs_before) == 2 and current in specs_before and n_before > 40
    assert len(pyiceberg_catalog.load_table("db.b").inspect.delete_files()) > 0

    theirs = spark_rewrite(spark, spark_catalog, "db.a")
    ours = ig.table("db.b").rewrite_data_files()
    assert isinstance(ours, ig.RewriteDataFilesResult) and len(ours.snapshot_ids) == 1

    # Same rows, read by us, PyIceberg and DuckDB.
    after = rows_of(pyiceberg_catalog, "db.b")
    assert_same_rows(after, before)
    assert_same_rows(rows_of(pyiceberg_catalog, "db.a"), before)
    assert_same_rows(ig.table("db.b").scan().to_arrow(), before)
    assert_same_rows(duckdb_scan(pyiceberg_catalog.load_table("db.b").metadata_location), before)

    # Files: the same number within one, all in the current spec.
    n_a, specs_a = files_summary(pyiceberg_catalog, "db.a")
    n_b, specs_b = files_summary(pyiceberg_catalog, "db.b")
    assert abs(n_a - n_b) <= 1, (n_a, n_b)
    assert specs_a == specs_b == {current}
    head = pyiceberg_catalog.load_table("db.b").current_snapshot()
    assert head.summary.operation.value == "replace"

    # Result columns: the same, added files within one. The position delete files of the
    # rewritten files leave with them in both (Spark does not count them in
    # removed_delete_files_count, nor do we).
    mine = ours.counts()
    added = {"added_data_files_count": mine["added_data_files_count"]}
    assert mine == theirs | added and abs(mine["added_data_files_count"] - theirs["added_data_files_count"]) <= 1
    for name in ("db.a", "db.b"):
        assert len(pyiceberg_catalog.load_table(name).inspect.delete_files()) == 0, name

    # A second run does nothing: no snapshot, zero counts.
    again = ig.table("db.b").rewrite_data_files()
    assert again.counts() == dict.fromkeys(again.counts(), 0) and again.snapshot_ids == []
    assert pyiceberg_catalog.load_table("db.b").current_snapshot().snapshot_id == head.snapshot_id
    assert spark_rewrite(spark, spark_catalog, "db.a")["rewritten_data_files_count"] == 0


def test_output_spec_id_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """output-spec-id: the files are planned by the current spec and written in the one asked for."""
    history("db.a", pyiceberg_catalog, seed=3)
    history("db.b", pyiceberg_catalog, seed=3)
    before = rows_of(pyiceberg_catalog, "db.b")
    old = min(pyiceberg_catalog.load_table("db.b").specs())
    assert old != pyiceberg_catalog.load_table("db.b").metadata.default_spec_id

    opts = {"output-spec-id": str(old), "rewrite-all": "true"}
    spark_opts = ", ".join(f"'{k}', '{v}'" for k, v in opts.items())
    theirs = spark_rewrite(spark, spark_catalog, "db.a", f", options => map({spark_opts})")
    ours = ig.table("db.b").rewrite_data_files(options=opts)

    for name in ("db.a", "db.b"):
        assert_same_rows(rows_of(pyiceberg_catalog, name), before)
    assert_same_rows(duckdb_scan(pyiceberg_catalog.load_table("db.b").metadata_location), before)
    n_a, specs_a = files_summary(pyiceberg_catalog, "db.a")
    n_b, specs_b = files_summary(pyiceberg_catalog, "db.b")
    assert specs_a == specs_b == {old}
    assert abs(n_a - n_b) <= 1, (n_a, n_b)
    # Each file holds one value of the old spec's partition column, and its path says which.
    for f in data_files(pyiceberg_catalog, "db.b"):
        assert len(f.partition) == 1
        rows = pq.read_table(f.file_path.removeprefix("file://"), columns=["part"]).column("part").unique().to_pylist()
        assert rows == [f.partition[0]], (f.file_path, rows)
    mine = ours.counts()
    assert mine["rewritten_data_files_count"] == theirs["rewritten_data_files_count"]
    assert abs(mine["added_data_files_count"] - theirs["added_data_files_count"]) <= 1

    # A spec id the table does not have: Java's message, nothing committed.
    head = pyiceberg_catalog.load_table("db.b").current_snapshot().snapshot_id
    with pytest.raises(ig.InvalidArgumentError, match="does not contain a reference to this spec-id"):
        ig.table("db.b").rewrite_data_files(options={"output-spec-id": "7"})
    assert pyiceberg_catalog.load_table("db.b").current_snapshot().snapshot_id == head


def spark_history(spark: Any, catalog: str, name: str) -> None:
    """A twin history written by Spark with partition-scoped position deletes
    (write.delete.granularity=partition): they outlive the rewrite of their data files."""
    spark.sql(
        f"CREATE TABLE {catalog}.{name} (id bigint, part string, amount double) USING iceberg PARTITIONED BY (part) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.delete.granularity'='partition')"
    )
    for i in range(6):
        t = generated(7, 30 * i, 30).select(["id", "part", "amount"])
        spark.createDataFrame(t.to_pandas()).coalesce(1).writeTo(f"{catalog}.{name}").append()
    spark.sql(f"DELETE FROM {catalog}.{name} WHERE id % 7 = 2")
    t = generated(7, 1000, 30).select(["id", "part", "amount"])
    spark.createDataFrame(t.to_pandas()).coalesce(1).writeTo(f"{catalog}.{name}").append()


def test_partition_scoped_deletes_leave_with_their_files_as_spark(
    spark: Any, spark_catalog: str, pyiceberg_catalog: Any
) -> None:
    """Spark-written partition-scoped position deletes: once every data file they apply to is
    rewritten, Spark's rewrite commit drops them (without counting them in
    removed_delete_files_count); so do we. remove-dangling-deletes then finds nothing."""
    spark_history(spark, spark_catalog, "db.a")
    spark_history(spark, spark_catalog, "db.b")
    before = rows_of(pyiceberg_catalog, "db.b")
    n_deletes = len(pyiceberg_catalog.load_table("db.b").inspect.delete_files())
    assert n_deletes > 0
    theirs = spark_rewrite(spark, spark_catalog, "db.a", ", options => map('remove-dangling-deletes', 'true')")
    ours = ig.table("db.b").rewrite_data_files(options={"remove-dangling-deletes": True})
    mine = ours.counts()
    assert mine == theirs | {"added_data_files_count": mine["added_data_files_count"]}, (mine, theirs)
    assert abs(mine["added_data_files_count"] - theirs["added_data_files_count"]) <= 1
    assert len(ours.snapshot_ids) == 1
    assert_same_rows(rows_of(pyiceberg_catalog, "db.b"), before)
    assert_same_rows(rows_of(pyiceberg_catalog, "db.a"), before)
    for name in ("db.a", "db.b"):
        t = pyiceberg_catalog.load_table(name)
        assert len(t.inspect.delete_files()) == 0, name
        assert t.current_snapshot().summary["removed-position-delete-files"] == str(n_deletes), name


def file_sorted(io: Any, path: str) -> bool:
    """Whether a data file is sorted by ``part ASC NULLS FIRST, amount DESC`` as Spark orders:
    nulls first ascending and last descending, NaN above every number, strings by code point
    (UTF-8 byte order)."""
    t = pq.read_table(io.new_input(path).open(), columns=["part", "amount"]).to_pylist()

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        p, a = r["part"], r["amount"]
        part = (0, "") if p is None else (1, p)
        amount = (2, 0.0) if a is None else (0, 0.0) if math.isnan(a) else (1, -a)
        return part + amount

    keys = [key(r) for r in t]
    return keys == sorted(keys)


def test_sort_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    history("db.a", pyiceberg_catalog, seed=2)
    history("db.b", pyiceberg_catalog, seed=2)
    before = rows_of(pyiceberg_catalog, "db.b")
    order = "part ASC NULLS FIRST, amount DESC"
    theirs = spark_rewrite(spark, spark_catalog, "db.a", f", strategy => 'sort', sort_order => '{order}'")
    ours = ig.table("db.b").rewrite_data_files(strategy="sort", sort_order=order)
    assert_same_rows(rows_of(pyiceberg_catalog, "db.b"), before)
    assert_same_rows(duckdb_scan(pyiceberg_catalog.load_table("db.b").metadata_location), before)
    for k in ("rewritten_data_files_count", "rewritten_bytes_count", "failed_data_files_count"):
        assert ours.counts()[k] == theirs[k], (k, ours, theirs)
    n_a, specs_a = files_summary(pyiceberg_catalog, "db.a")
    n_b, specs_b = files_summary(pyiceberg_catalog, "db.b")
    current = pyiceberg_catalog.load_table("db.b").metadata.default_spec_id
    assert abs(n_a - n_b) <= 1 and specs_a == specs_b == {current}, (n_a, n_b, specs_a, specs_b)
    # Every file sorted: Spark's (checking the checker) and ours.
    for name in ("db.a", "db.b"):
        for f in data_files(pyiceberg_catalog, name):
            assert file_sorted(pyiceberg_catalog.load_table(name).io, f.file_path), (name, f.file_path)


def test_sort_needs_an_order_as_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    ig.writeTo(generated(3, 0, 20), "db.t").create()
    with pytest.raises(Exception) as theirs:
        spark.sql(f"CALL {spark_catalog}.system.rewrite_data_files(table => 'db.t', strategy => 'sort')").collect()
    with pytest.raises(ig.InvalidArgumentError) as ours:
        ig.table("db.t").rewrite_data_files(strategy="sort")
    assert "Cannot sort data without a valid sort order" in str(theirs.value)
    assert "Cannot sort data without a valid sort order, table 'local.db.t' is unsorted" in str(ours.value)


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"options": {"min-input-file": 2}}, ig.InvalidArgumentError, "min-input-file"),
        ({"options": {"target-file-size-bytes": "big"}}, ig.InvalidArgumentError, "target-file-size-bytes"),
        ({"options": {"use-starting-sequence-number": "yes"}}, ig.InvalidArgumentError, "use-starting-sequence-number"),
        ({"strategy": "shuffle"}, ig.InvalidArgumentError, "unsupported strategy: shuffle"),
        ({"strategy": "sort"}, ig.InvalidArgumentError, "no sort order is provided"),
        ({"sort_order": "zorder(id, missing)"}, ig.ValidationError, "missing"),
        ({"sort_order": "missing DESC"}, ig.ValidationError, "missing"),
        ({"where": "missing = 1"}, ig.ValidationError, "missing"),
        ({"where": "id = = 1"}, ig.InvalidArgumentError, "id = = 1"),
    ],
)
def test_bad_input_commits_nothing(
    kwargs: dict[str, Any], error: type[Exception], text: str, pyiceberg_catalog: Any
) -> None:
    ig.writeTo(generated(4, 0, 20), "db.t").partitionedBy("part").create()
    for i in range(1, 6):
        ig.writeTo(generated(4, 20 * i, 20), "db.t").append()
    head = pyiceberg_catalog.load_table("db.t").current_snapshot().snapshot_id
    with pytest.raises(error, match=None) as e:
        ig.table("db.t").rewrite_data_files(**kwargs)
    assert text in str(e.value)
    assert pyiceberg_catalog.load_table("db.t").current_snapshot().snapshot_id == head


def test_where_selects_files(pyiceberg_catalog: Any) -> None:
    ig.writeTo(generated(5, 0, 50), "db.t").partitionedBy("part").create()
    for i in range(1, 6):
        ig.writeTo(generated(5, 50 * i, 50), "db.t").append()
    before = rows_of(pyiceberg_catalog, "db.t")
    r = ig.table("db.t").rewrite_data_files(where=ig.col("part") == "ß")
    files = data_files(pyiceberg_catalog, "db.t")
    in_part = [f for f in files if f.partition[0] == "ß"]
    assert r.rewritten_data_files_count == 6 and r.added_data_files_count == 1 and len(in_part) == 1
    assert len([f for f in files if f.partition[0] == "a"]) == 6
    assert_same_rows(rows_of(pyiceberg_catalog, "db.t"), before)


# ---- concurrent commits, in another process paused before its commit -----------------


def _slow_rewrite(library: str, uri: str, warehouse: str, signal: str, release: str, out: Any) -> None:
    use_library(library)
    ig.configure(
        catalogs={"local": {"type": "sql", "uri": uri, "warehouse": warehouse}},
        conf={"test.hooks": "true", "test.commit-delay-signal": signal, "test.commit-delay-release": release},
    )
    try:
        r = ig.table("local.db.t").rewrite_data_files()
        out.put(json.dumps({"ok": True, "counts": r.counts(), "snapshot_ids": r.snapshot_ids}))
    except ig.IcebergGoError as e:
        out.put(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))


def race(cat: CatalogDir, concurrent: Any) -> dict[str, Any]:
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


def small_files(props: dict[str, str]) -> None:
    w = ig.writeTo(generated(6, 0, 30), "db.t").partitionedBy("part")
    for k, v in props.items():
        w = w.tableProperty(k, v)
    w.create()
    for i in range(1, 8):
        ig.writeTo(generated(6, 30 * i, 30), "db.t").append()


def test_concurrent_append_is_kept(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    small_files({})
    before = rows_of(pyiceberg_catalog, "db.t")
    extra = generated(6, 10_000, 25)
    res = race(catalog_dir, lambda: ig.writeTo(extra, "local.db.t").append())
    assert res["ok"] is True, res
    assert res["counts"]["rewritten_data_files_count"] > 0
    assert_same_rows(rows_of(pyiceberg_catalog, "db.t"), pa.concat_tables([before, extra]))
    head = pyiceberg_catalog.load_table("db.t").current_snapshot()
    assert head.summary.operation.value == "replace" and head.snapshot_id == res["snapshot_ids"][0]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_concurrent_delete_of_a_rewritten_file_conflicts(
    mode: str, catalog_dir: CatalogDir, pyiceberg_catalog: Any
) -> None:
    small_files({"write.delete.mode": mode})
    before = rows_of(pyiceberg_catalog, "db.t")
    victim = before.column("id")[0].as_py()
    res = race(catalog_dir, lambda: ig.table("local.db.t").delete(f"id = {victim}"))
    assert res["ok"] is False and res["type"] == "CommitConflictError", res
    # The delete stands; the rewrite committed nothing.
    snap = pyiceberg_catalog.load_table("db.t").current_snapshot()
    assert snap.summary.operation.value != "replace"
    assert_same_rows(rows_of(pyiceberg_catalog, "db.t"), before.filter(pc.not_equal(before.column("id"), victim)))


def zvalue(values: list[Any]) -> bytes:
    """Iceberg's z-value of one row (ZOrderByteUtils, Spark's defaults): each value as 8
    order-preserving bytes (longs with the sign bit flipped; doubles with Java's
    doubleToOrderedBytes mask; strings' whole UTF-8 characters within 8 bytes, zero-padded;
    null as zeros), the bits interleaved column by column, most significant first."""
    parts = []
    for v in values:
        if v is None:
            b = bytes(8)
        elif isinstance(v, float):
            bits = 0x7FF8000000000000 if math.isnan(v) else struct.unpack(">q", struct.pack(">d", v))[0]
            if bits >= 1 << 63:
                bits -= 1 << 64
            bits ^= (bits >> 31) | -(1 << 63)
            b = (bits & (1 << 64) - 1).to_bytes(8, "big")
        elif isinstance(v, int):
            b = ((v & (1 << 64) - 1) ^ (1 << 63)).to_bytes(8, "big")
        else:
            enc = b""
            for ch in v:
                e = ch.encode()
                if len(enc) + len(e) > 8:
                    break
                enc += e
            b = enc.ljust(8, b"\0")
        parts.append(b)
    size = 8 * len(parts)
    bits_in = [format(int.from_bytes(p, "big"), "064b") for p in parts]
    out = "".join(bits_in[c][i] for i in range(64) for c in range(len(parts)))
    return int(out, 2).to_bytes(size, "big")


def test_zorder_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """zorder(amount, name): every file of Spark's and of ours is in z-value order (Spark's
    files check the z-value computed here), with the same rows and counts."""
    history("db.a", pyiceberg_catalog, seed=3)
    history("db.b", pyiceberg_catalog, seed=3)
    before = rows_of(pyiceberg_catalog, "db.b")
    args = ", strategy => 'sort', sort_order => 'zorder(amount, name)'"
    theirs = spark_rewrite(spark, spark_catalog, "db.a", args)
    ours = ig.table("db.b").rewrite_data_files(strategy="sort", sort_order="zorder(amount, name)")
    assert_same_rows(rows_of(pyiceberg_catalog, "db.b"), before)
    for k in ("rewritten_data_files_count", "rewritten_bytes_count", "failed_data_files_count"):
        assert ours.counts()[k] == theirs[k], (k, ours, theirs)
    n_a, _ = files_summary(pyiceberg_catalog, "db.a")
    n_b, _ = files_summary(pyiceberg_catalog, "db.b")
    assert abs(n_a - n_b) <= 1, (n_a, n_b)
    for name in ("db.a", "db.b"):
        io = pyiceberg_catalog.load_table(name).io
        for f in data_files(pyiceberg_catalog, name):
            t = pq.read_table(io.new_input(f.file_path).open(), columns=["amount", "name"]).to_pylist()
            zs = [zvalue([r["amount"], r["name"]]) for r in t]
            assert zs == sorted(zs) and len(zs) > 1, (name, f.file_path)
