"""We write into tables Spark 4.1 + Iceberg 1.12 created and evolved; Spark and PyIceberg read the result.

- Partition evolution (a dropped day transform and an added bucket; an identity field
  replaced by a month transform), made by Spark or by our update_spec: our append, overwritePartitions, overwrite(filter),
  delete, update and merge on copy-on-write and merge-on-read tables, v2 and v3. Our
  new data files must carry the current spec, our delete files their data file's spec
  and partition, and overwritePartitions must replace what Spark's own replaces on a
  twin table (only partitions of the current spec).
- Sort orders set by Spark (``WRITE ORDERED BY``, ``WRITE DISTRIBUTED BY PARTITION
  LOCALLY ORDERED BY``): every file we write is sorted by that order and records it.
- Schema evolution by Spark (add, rename, drop and re-add, int->bigint, float->double,
  a nested field added): we write by the new names.
- The REST catalog: Spark and we on the same Iceberg REST catalog server.

Every result is compared with a reference computed here with pyarrow.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pyiceberg_go as ig

import sparkutil
from conftest import CATALOG
from servers import RestServer, rest_server, s3_server  # noqa: F401  (fixtures)
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

UTC = dt.timezone.utc
BASE = dt.datetime(2024, 3, 1, 0, 0, tzinfo=UTC)
CATEGORIES = ["a", "b", "c", "d", None]
SCHEMA = pa.schema([("id", pa.int64()), ("category", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("v", pa.float64())])
SPARK_COLUMNS = "id BIGINT, category STRING, ts TIMESTAMP, v DOUBLE"
T, S = "local.db.t", "local.db.s"  # ours and Spark's twin


def rows(n: int, seed: int, start: int = 0) -> pa.Table:
    """Ids seed*1000+start.., about 13 hours apart (four months for 240 rows), categories with nulls, v with nulls."""
    rng = range(start, start + n)
    return pa.table(
        {
            "id": pa.array([seed * 1000 + i for i in rng], pa.int64()),
            "category": pa.array([CATEGORIES[(i * 3 + seed) % 5] for i in rng], pa.string()),
            "ts": pa.array([BASE + dt.timedelta(hours=13 * i + seed, minutes=seed * 7) for i in rng], pa.timestamp("us", tz="UTC")),
            "v": pa.array([None if (i + seed) % 11 == 3 else float((i * 37 + seed * 11) % 200 - 100) for i in rng], pa.float64()),
        },
        schema=SCHEMA,
    )


def shuffled(data: pa.Table, seed: int) -> pa.Table:
    """The rows in a fixed pseudo-random order (so a sorted file cannot come from sorted input)."""
    n = data.num_rows
    return data.take(pa.array(sorted(range(n), key=lambda i: (i * 7919 + seed * 104729) % 1000003)))


# ---------------------------------------------------------------- comparing rows


def assert_rows(actual: pa.Table, expected: pa.Table, reader: str) -> None:
    """Same columns and the same rows, matched by the unique ``id`` (types compared after widening)."""
    assert sorted(actual.column_names) == sorted(expected.column_names), f"{reader}: columns {actual.column_names}"
    schema = pa.schema([pa.field(f.name, f.type, True) for f in expected.schema])
    a = actual.select(expected.column_names).cast(schema)
    e = expected.cast(schema)
    a = a.take(pc.sort_indices(a["id"]))
    e = e.take(pc.sort_indices(e["id"]))
    assert a.num_rows == e.num_rows, f"{reader}: {a.num_rows} rows, want {e.num_rows}"
    for name in expected.column_names:
        got, want = a[name].combine_chunks(), e[name].combine_chunks()
        if not got.equals(want):
            bad = [i for i, (x, y) in enumerate(zip(got.to_pylist(), want.to_pylist())) if x != y][:3]
            detail = [(a["id"][i].as_py(), got[i].as_py(), want[i].as_py()) for i in bad]
            raise AssertionError(f"{reader}: column {name} differs at (id, got, want) {detail}")


def spark_read(spark: Any, table: str) -> pa.Table:
    return spark.sql(f"SELECT * FROM {table}").toArrow()


def check_everyone(spark: Any, pcat: Any, spark_table: str, ident: str, ours: str, expected: pa.Table, when: str) -> None:
    """Spark, PyIceberg and we read ``expected``."""
    assert_rows(spark_read(spark, spark_table), expected, f"{when}: spark")
    assert_rows(pcat.load_table(ident).scan().to_arrow(), expected, f"{when}: pyiceberg")
    assert_rows(ig.table(ours).to_arrow(), expected, f"{when}: pyiceberg-go")


# ---------------------------------------------------------------- files and specs


@dataclass(frozen=True)
class FileInfo:
    path: str
    content: int  # 0 data, 1 position deletes (or DV), 2 equality deletes
    spec_id: int
    partition: tuple[Any, ...]
    sort_order_id: int | None
    record_count: int


def _entries(tbl: Any, snapshot_id: int) -> Iterator[tuple[Any, Any]]:
    snap = tbl.metadata.snapshot_by_id(snapshot_id)
    for m in snap.manifests(tbl.io):
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            yield m, e


def _info(m: Any, e: Any) -> FileInfo:
    f = e.data_file
    part = tuple(f.partition[i] for i in range(len(f.partition))) if f.partition is not None else ()
    return FileInfo(f.file_path, int(f.content), m.partition_spec_id, part, f.sort_order_id, f.record_count)


def live_files(pcat: Any, ident: str) -> list[FileInfo]:
    """Every live file of the current snapshot (spec id from its manifest)."""
    tbl = pcat.load_table(ident)
    if tbl.metadata.current_snapshot_id is None:
        return []
    return [_info(m, e) for m, e in _entries(tbl, tbl.metadata.current_snapshot_id)]


def added_files(pcat: Any, ident: str, snapshot_id: int) -> list[FileInfo]:
    """The files the snapshot added."""
    from pyiceberg.manifest import ManifestEntryStatus

    tbl = pcat.load_table(ident)
    return [_info(m, e) for m, e in _entries(tbl, snapshot_id) if e.status == ManifestEntryStatus.ADDED and e.snapshot_id == snapshot_id]


def local_path(path: str) -> str:
    return path.removeprefix("file://")


def check_dvs(spark: Any, spark_table: str, puffins: set[str]) -> None:
    """Each deletion vector in these Puffin files names a live data file of its own spec and partition.

    One Puffin file holds the vectors of many data files, so this goes by Spark's
    ``delete_files`` rows (one per vector), joined on ``referenced_data_file``.
    """
    paths = ", ".join(f"'{p}'" for p in sorted(puffins))
    got = spark.sql(
        f"SELECT d.file_path, d.referenced_data_file AS ref, d.spec_id, f.spec_id AS data_spec, "
        f"d.partition <=> f.partition AS same_partition "
        f"FROM {spark_table}.delete_files d LEFT JOIN {spark_table}.data_files f ON d.referenced_data_file = f.file_path "
        f"WHERE d.file_path IN ({paths})"
    ).collect()
    assert got, f"Spark sees no deletion vector in {puffins}"
    for r in got:
        assert r.data_spec is not None, f"deletion vector in {r.file_path} references {r.ref}, not a live data file"
        assert r.spec_id == r.data_spec and r.same_partition, (
            f"deletion vector in {r.file_path} is in spec {r.spec_id}, its data file {r.ref} in spec {r.data_spec} "
            f"(same partition: {r.same_partition})"
        )


def check_our_files(spark: Any, pcat: Any, spark_table: str, ident: str, snapshot_id: int, before: list[FileInfo]) -> list[FileInfo]:
    """Our snapshot's new data files carry the current spec; its delete files the spec and partition of
    the data file they reference. Returns the added files."""
    tbl = pcat.load_table(ident)
    current = tbl.metadata.default_spec_id
    added = added_files(pcat, ident, snapshot_id)
    assert added, "the snapshot added no file"
    by_path = {f.path: f for f in before}
    puffins = set()
    for f in added:
        if f.content == 0:
            assert f.spec_id == current, f"our data file {f.path} has spec {f.spec_id}, the table's is {current}"
            continue
        assert f.content == 1, f"we wrote a delete file of content {f.content}"
        if f.path.endswith(".puffin"):
            puffins.add(f.path)
            continue
        targets = set(pq.read_table(local_path(f.path), columns=["file_path"])["file_path"].to_pylist())
        assert targets, f"delete file {f.path} references nothing"
        for target in targets:
            data = by_path[target]
            assert (f.spec_id, f.partition) == (data.spec_id, data.partition), (
                f"delete file {f.path} is in spec {f.spec_id} partition {f.partition}, "
                f"its data file {target} in spec {data.spec_id} partition {data.partition}"
            )
    if puffins:
        check_dvs(spark, spark_table, puffins)
    return added


# ---------------------------------------------------------------- partition evolution


def bucket8(ids: pa.Array) -> list[int]:
    """Iceberg's bucket(8) of longs, by PyIceberg's implementation (independent of ours and Java's)."""
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import LongType

    f = BucketTransform(8).transform(LongType())
    return [f(i) for i in ids.to_pylist()]


def months(ts: pa.ChunkedArray) -> list[int]:
    years, mons = pc.year(ts).to_pylist(), pc.month(ts).to_pylist()
    return [(y - 1970) * 12 + m - 1 for y, m in zip(years, mons)]


@dataclass(frozen=True)
class Evolution:
    initial: str  # PARTITIONED BY body
    alters: tuple[str, ...]  # ALTER TABLE {t} ... statements
    current_key: Callable[[pa.Table], list[Any]]  # partition tuple of the current spec, per row
    current_fields: list[str]
    ours: Callable[[ig.Table], Any]  # the same alters through our API (pyiceberg_go.evolution)


EVOLUTIONS = {
    "days_to_bucket": Evolution(
        "days(ts)",
        ("DROP PARTITION FIELD days(ts)", "ADD PARTITION FIELD bucket(8, id)"),
        lambda t: bucket8(t["id"].combine_chunks()),
        ["id_bucket_8"],  # Spark names an added bucket field with its width
        lambda t: t.update_spec().remove_field("ts_day").add_field("id", "bucket[8]").commit(),
    ),
    "identity_to_months": Evolution(
        "category",
        ("REPLACE PARTITION FIELD category WITH months(ts)",),
        lambda t: months(t["ts"]),
        ["ts_month"],
        lambda t: t.update_spec().remove_field("category").add_field("ts", "month").commit(),
    ),
}

# (evolution, format version, row-level mode, who evolves our table: Spark or we)
EVOLUTION_CASES = [
    ("days_to_bucket", "2", "copy-on-write", "spark"),
    ("days_to_bucket", "3", "merge-on-read", "spark"),
    ("identity_to_months", "2", "merge-on-read", "spark"),
    ("identity_to_months", "3", "copy-on-write", "spark"),
    ("days_to_bucket", "2", "merge-on-read", "us"),
    ("identity_to_months", "3", "merge-on-read", "us"),
]


def only_keys(data: pa.Table, keys: list[Any], wanted: set[Any], keep: bool) -> pa.Table:
    mask = pa.array([(k in wanted) == keep for k in keys])
    return data.filter(mask)


@pytest.mark.parametrize(("evolution", "version", "mode", "by"), EVOLUTION_CASES)
def test_write_into_table_spark_evolved_partitioning(
    spark: Any, spark_catalog: str, pyiceberg_catalog: Any, evolution: str, version: str, mode: str, by: str
) -> None:
    ev = EVOLUTIONS[evolution]
    props = {"format-version": version, "write.delete.mode": mode, "write.update.mode": mode, "write.merge.mode": mode}
    tblprops = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    a, b = rows(240, 1), rows(240, 2)
    for name in (T, S):
        spark.sql(f"CREATE TABLE {name} ({SPARK_COLUMNS}) USING iceberg PARTITIONED BY ({ev.initial}) TBLPROPERTIES ({tblprops})")
        spark.createDataFrame(a).writeTo(name).append()
        if by == "us" and name == T:
            ev.ours(ig.table(T))
        else:
            for alter in ev.alters:
                spark.sql(f"ALTER TABLE {name} {alter}")
        spark.createDataFrame(b).writeTo(name).append()
    tbl = pyiceberg_catalog.load_table("db.t")
    assert [f.name for f in tbl.spec().fields] == ev.current_fields
    assert tbl.metadata.default_spec_id != 0
    old_spec = live_files(pyiceberg_catalog, "db.t")
    assert {f.spec_id for f in old_spec} == {0, tbl.metadata.default_spec_id}

    # overwritePartitions: c covers some partitions of the current spec, which also hold
    # rows of a written under the first spec; those rows stay, as in Spark's own.
    c_all = rows(240, 3)
    c_keys = ev.current_key(c_all)
    wanted = set(sorted(set(c_keys), key=repr)[::2])
    c = only_keys(c_all, c_keys, wanted, True)
    assert 0 < c.num_rows < c_all.num_rows
    b_keys = ev.current_key(b)
    a_keys = ev.current_key(a)
    assert any(k in wanted for k in a_keys), "a must hold rows in partitions c replaces (under the new spec)"
    expected = pa.concat_tables([a, only_keys(b, b_keys, wanted, False), c])
    before = live_files(pyiceberg_catalog, "db.t")
    r = ig.writeTo(c, T).overwritePartitions()
    spark.createDataFrame(c).writeTo(S).overwritePartitions()
    assert r.operation == "overwrite"
    check_our_files(spark, pyiceberg_catalog, T, "db.t", r.snapshot_id, before)
    after = live_files(pyiceberg_catalog, "db.t")
    first_spec = [sorted(f.path for f in files if f.spec_id == 0) for files in (before, after)]
    assert first_spec[0] and first_spec[1] == first_spec[0], "overwritePartitions replaced files of the first spec"
    twin = spark_read(spark, S)
    assert_rows(twin, expected, "spark's own overwritePartitions on the twin")
    assert_rows(spark_read(spark, T), twin, "spark reads ours against the twin")

    steps: list[tuple[str, Callable[[], Any], Callable[[pa.Table], pa.Table]]] = []
    d = shuffled(rows(60, 4), 4)
    steps.append(("append", lambda: ig.writeTo(d, T).append(), lambda ref: pa.concat_tables([ref, d])))

    lo, hi = BASE + dt.timedelta(days=20), BASE + dt.timedelta(days=45)
    cond = f"ts >= TIMESTAMP '{lo:%Y-%m-%d %H:%M:%S}' AND ts < TIMESTAMP '{hi:%Y-%m-%d %H:%M:%S}'"
    e = rows(30, 5, start=40)

    def ov(ref: pa.Table) -> pa.Table:
        hit = pc.and_(pc.greater_equal(ref["ts"], pa.scalar(lo, ref["ts"].type)), pc.less(ref["ts"], pa.scalar(hi, ref["ts"].type)))
        return pa.concat_tables([ref.filter(pc.invert(hit)), e])

    steps.append(("overwrite(filter)", lambda: ig.writeTo(e, T).overwrite(cond), ov))

    def dl(ref: pa.Table) -> pa.Table:
        hit = pc.or_kleene(pc.less(ref["v"], -60.0), pc.equal(ref["category"], "c"))
        return ref.filter(pc.invert(pc.fill_null(hit, False)))

    steps.append(("delete", lambda: ig.table(T).delete("v < -60 OR category = 'c'"), dl))

    def up(ref: pa.Table) -> pa.Table:
        hit = pc.equal(pc.bit_wise_and(ref["id"], 3), 0)
        v = pc.if_else(hit, pc.add(pc.coalesce(ref["v"], 0.0), 1000.0), ref["v"])
        cat = pc.if_else(hit, pc.utf8_upper(ref["category"]), ref["category"])
        return ref.set_column(3, "v", v).set_column(1, "category", cat)

    # upper(category) moves rows between identity partitions of the first spec.
    steps.append(("update", lambda: ig.table(T).update({"v": "coalesce(v, 0) + 1000", "category": "upper(category)"}, where="id % 4 = 0"), up))

    src = pa.concat_tables([rows(40, 1, start=100).set_column(3, "v", pa.array([float(i - 20) for i in range(40)])), rows(10, 6)])

    def mg(ref: pa.Table) -> pa.Table:
        ids = set(ref["id"].to_pylist())
        matched = src.filter(pc.is_in(src["id"], ref["id"]))
        updated = matched.filter(pc.invert(pc.less(matched["v"], 0.0)))
        inserted = src.filter(pa.array([i not in ids for i in src["id"].to_pylist()]))
        kept = ref.filter(pc.invert(pc.is_in(ref["id"], matched["id"])))
        return pa.concat_tables([kept, updated, inserted])

    def merge() -> Any:
        return (
            ig.mergeInto(src, T, "t.id = s.id", source_alias="s", target_alias="t")
            .whenMatched("s.v < 0").delete()
            .whenMatched().updateAll()
            .whenNotMatched().insertAll()
            .merge()
        )

    steps.append(("merge", merge, mg))

    delete_files = 0
    for name, ours, reference in steps:
        before = live_files(pyiceberg_catalog, "db.t")
        r = ours()
        expected = reference(expected)
        added = check_our_files(spark, pyiceberg_catalog, T, "db.t", r.snapshot_id, before)
        delete_files += sum(f.content == 1 for f in added)
        assert_rows(pyiceberg_catalog.load_table("db.t").scan().to_arrow(), expected, f"after {name}: pyiceberg")
        assert_rows(ig.table(T).to_arrow(), expected, f"after {name}: pyiceberg-go")
    if mode == "merge-on-read":
        assert delete_files > 0, "merge-on-read steps wrote no delete file"
    else:
        assert delete_files == 0, "copy-on-write steps wrote delete files"
    check_everyone(spark, pyiceberg_catalog, T, "db.t", T, expected, "final")
    # Spark's own partition values agree with the stored ones on every row of the current spec.
    current = pyiceberg_catalog.load_table("db.t").metadata.default_spec_id
    field = ev.current_fields[0]
    fn = "bucket(8, id)" if field.startswith("id_bucket") else "months(ts)"
    bad = spark.sql(
        f"SELECT count(*) AS n FROM {T} WHERE _spec_id = {current} AND NOT (_partition.{field} <=> {spark_catalog}.system.{fn})"
    ).collect()[0].n
    assert bad == 0


# ---------------------------------------------------------------- sort orders


@dataclass(frozen=True)
class Term:
    column: str
    descending: bool
    nulls_first: bool


def compare(x: dict[str, Any], y: dict[str, Any], order: list[Term]) -> int:
    for t in order:
        a, b = x[t.column], y[t.column]
        if a == b:
            continue
        if a is None or b is None:
            return (-1 if a is None else 1) * (1 if t.nulls_first else -1)
        c = -1 if a < b else 1
        return -c if t.descending else c
    return 0


def assert_sorted(path: str, order: list[Term]) -> None:
    data = pq.read_table(local_path(path), columns=[t.column for t in order]).to_pylist()
    for i in range(1, len(data)):
        assert compare(data[i - 1], data[i], order) <= 0, f"{path} is not sorted at row {i}: {data[i - 1]} then {data[i]}"


@dataclass(frozen=True)
class SortCase:
    alter: str
    order: list[Term]
    one_file_per_partition: bool  # distribution hash: one writer per partition for our append


SORT_CASES = {
    "ordered": SortCase(
        "WRITE ORDERED BY category ASC NULLS LAST, id DESC",
        [Term("category", False, False), Term("id", True, False)],
        False,
    ),
    "distributed_locally_ordered": SortCase(
        "WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY ts DESC NULLS FIRST, category",
        [Term("ts", True, True), Term("category", False, True)],
        True,
    ),
}


@pytest.mark.parametrize(("case", "version", "mode"), [("ordered", "2", "copy-on-write"), ("distributed_locally_ordered", "3", "merge-on-read")])
def test_we_keep_spark_sort_order(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, case: str, version: str, mode: str) -> None:
    sc = SORT_CASES[case]
    props = {"format-version": version, "write.delete.mode": mode, "write.update.mode": mode, "write.merge.mode": mode}
    tblprops = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    spark.sql(f"CREATE TABLE {T} ({SPARK_COLUMNS}) USING iceberg PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ({tblprops})")
    a = rows(200, 1)
    spark.createDataFrame(a).writeTo(T).append()
    spark.sql(f"ALTER TABLE {T} {sc.alter}")
    tbl = pyiceberg_catalog.load_table("db.t")
    order_id = tbl.metadata.default_sort_order_id
    assert order_id != 0 and len(tbl.sort_order().fields) == len(sc.order)
    if sc.one_file_per_partition:
        assert tbl.properties.get("write.distribution-mode") == "hash"

    # Input with duplicates in the leading key, nulls in both keys and no useful order.
    b = shuffled(rows(400, 2).set_column(3, "v", pa.array([None] * 400, pa.float64())), 2)
    b = b.set_column(2, "ts", pc.if_else(pc.equal(pc.bit_wise_and(b["id"], 15), 5), pa.scalar(None, b["ts"].type), b["ts"]))
    written: list[FileInfo] = []
    r = ig.writeTo(b, T).append()
    added = added_files(pyiceberg_catalog, "db.t", r.snapshot_id)
    written += added
    if sc.one_file_per_partition:
        parts = [f.partition for f in added]
        assert len(parts) == len(set(parts)) == 4, f"hash distribution: want one file per bucket, got {parts}"
    expected = pa.concat_tables([a, b])

    before = live_files(pyiceberg_catalog, "db.t")
    r = ig.table(T).update({"v": "id * 2"}, where="id % 3 = 0")
    written += check_our_files(spark, pyiceberg_catalog, T, "db.t", r.snapshot_id, before)
    hit = pa.array([i % 3 == 0 for i in expected["id"].to_pylist()])
    expected = expected.set_column(3, "v", pc.if_else(hit, pc.cast(pc.multiply(expected["id"], 2), pa.float64()), expected["v"]))

    src = shuffled(pa.concat_tables([rows(50, 1, start=150), rows(50, 7)]), 7)
    before = live_files(pyiceberg_catalog, "db.t")
    r = ig.mergeInto(src, T, "t.id = s.id", source_alias="s", target_alias="t").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    written += check_our_files(spark, pyiceberg_catalog, T, "db.t", r.snapshot_id, before)
    expected = pa.concat_tables([expected.filter(pc.invert(pc.is_in(expected["id"], src["id"]))), src])

    data_files = [f for f in written if f.content == 0]
    assert data_files
    for f in data_files:
        assert f.sort_order_id == order_id, f"our file {f.path} has sort_order_id {f.sort_order_id}, the table's order is {order_id}"
        assert_sorted(f.path, sc.order)
    # Spark's files metadata table agrees on the sort order of our files.
    ours = {f.path for f in data_files}
    spark_files = spark.sql(f"SELECT file_path, sort_order_id FROM {T}.files WHERE content = 0").collect()
    seen = {x.file_path: x.sort_order_id for x in spark_files if x.file_path in ours}
    assert seen and set(seen.values()) == {order_id}
    check_everyone(spark, pyiceberg_catalog, T, "db.t", T, expected, "final")


# ---------------------------------------------------------------- schema evolution


OLD = pa.schema(
    [
        ("id", pa.int32()),
        ("name", pa.string()),
        ("price", pa.float32()),
        ("info", pa.struct([("a", pa.int32())])),
        ("dropme", pa.string()),
    ]
)
NEW = pa.schema(
    [
        ("id", pa.int64()),
        ("title", pa.string()),
        ("price", pa.float64()),
        ("info", pa.struct([("a", pa.int32()), ("b", pa.string())])),
        ("dropme", pa.string()),
        ("note", pa.string()),
    ]
)


def old_rows(ids: range) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int32()),
            "name": pa.array([None if i % 7 == 0 else f"n{i}" for i in ids], pa.string()),
            "price": pa.array([i * 0.25 for i in ids], pa.float32()),
            "info": pa.array([None if i % 5 == 0 else {"a": i * 2} for i in ids], OLD.field("info").type),
            "dropme": pa.array([f"old-{i}" for i in ids], pa.string()),
        },
        schema=OLD,
    )


def new_rows(ids: range, tag: str) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([i + (1 << 33) if i % 2 else i for i in ids], pa.int64()),  # beyond int32 after widening
            "title": pa.array([f"{tag}{i}" for i in ids], pa.string()),
            "price": pa.array([i * 0.1 for i in ids], pa.float64()),
            "info": pa.array([{"a": i, "b": None if i % 3 == 0 else f"b{i}"} for i in ids], NEW.field("info").type),
            "dropme": pa.array([None if i % 4 == 0 else f"{tag}-new-{i}" for i in ids], pa.string()),
            "note": pa.array([f"note{i}" for i in ids], pa.string()),
        },
        schema=NEW,
    )


def as_new(old: pa.Table) -> pa.Table:
    """Old rows as the evolved schema shows them: renamed, widened, new fields null, the re-added column null."""
    info = pa.array(
        [None if x is None else {"a": x["a"], "b": None} for x in old["info"].to_pylist()], NEW.field("info").type
    )
    n = old.num_rows
    return pa.table(
        {
            "id": pc.cast(old["id"], pa.int64()),
            "title": old["name"],
            "price": pc.cast(old["price"], pa.float64()),
            "info": info,
            "dropme": pa.nulls(n, pa.string()),
            "note": pa.nulls(n, pa.string()),
        },
        schema=NEW,
    )


@pytest.mark.parametrize("version", ["2", "3"])
def test_we_write_by_spark_evolved_schema(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, version: str) -> None:
    spark.sql(
        f"CREATE TABLE {T} (id INT, name STRING, price FLOAT, info STRUCT<a: INT>, dropme STRING) USING iceberg "
        f"PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('format-version'='{version}')"
    )
    first = old_rows(range(50))
    spark.createDataFrame(first).writeTo(T).append()
    for alter in (
        "ADD COLUMN note STRING",
        "RENAME COLUMN name TO title",
        "ALTER COLUMN id TYPE BIGINT",
        "ALTER COLUMN price TYPE DOUBLE",
        "ADD COLUMN info.b STRING",
        "DROP COLUMN dropme",
        "ADD COLUMN dropme STRING AFTER info",
    ):
        spark.sql(f"ALTER TABLE {T} {alter}")
    by_spark = new_rows(range(100, 130), "spark")
    spark.createDataFrame(by_spark).writeTo(T).append()
    ours = new_rows(range(200, 240), "ours")
    r = ig.writeTo(ours, T).append()
    assert r.operation == "append"
    expected = pa.concat_tables([as_new(first), by_spark, ours])
    check_everyone(spark, pyiceberg_catalog, T, "db.t", T, expected, "after our append")

    # Merge by the new names: updates rows of every generation (old files, Spark's, ours), inserts new ones.
    src = new_rows(range(10), "m1")
    src = pa.concat_tables([src, new_rows(range(120, 125), "m2"), new_rows(range(230, 250), "m3")])
    src = src.set_column(0, "id", pa.array(list(range(10)) + by_spark["id"].to_pylist()[20:25] + ours["id"].to_pylist()[30:] + list(range(5000, 5010)), pa.int64()))
    r = ig.mergeInto(src, T, "target.id = source.id").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    expected = pa.concat_tables([expected.filter(pc.invert(pc.is_in(expected["id"], src["id"]))), src])
    ig.table(T).update({"note": "concat(title, '!')"}, where="price > 10")
    note = pc.if_else(pc.fill_null(pc.greater(expected["price"], 10.0), False), pc.binary_join_element_wise(expected["title"], "!", ""), expected["note"])
    expected = expected.set_column(5, "note", note)
    check_everyone(spark, pyiceberg_catalog, T, "db.t", T, expected, "after our merge and update")


# ---------------------------------------------------------------- the REST catalog


REST = "rest"


@pytest.fixture
def rest_catalogs(spark: Any, rest_server: RestServer, catalog_dir: Any) -> Iterator[tuple[str, Any]]:
    """A fresh namespace on the session's REST server, registered in Spark, in PyIceberg and in our session as ``rest``."""
    from pyiceberg.catalog.rest import RestCatalog

    ns = "spark_" + uuid.uuid4().hex[:10]
    ig.configure(catalogs={CATALOG: catalog_dir.properties, REST: {"type": "rest", "uri": rest_server.uri}})
    sparkutil.register_rest_catalog(spark, REST, rest_server.uri)
    pcat = RestCatalog(REST, uri=rest_server.uri)
    try:
        yield ns, pcat
    finally:
        sparkutil.close_rest_catalog(spark, REST)


@pytest.mark.parametrize("warehouse", ["server-decides", "client-names-server-folder"])
def test_rest_spark_reads_our_partitioned_sorted_table(spark: Any, rest_server: RestServer, rest_catalogs: tuple[str, Any], catalog_dir: Any, warehouse: str) -> None:
    """Like Spark and PyIceberg, we need no warehouse of our own on a REST catalog: the server places
    the table; or the client names one (here the server's own folder)."""
    ns, pcat = rest_catalogs
    if warehouse != "server-decides":
        ig.configure(catalogs={CATALOG: catalog_dir.properties, REST: {"type": "rest", "uri": rest_server.uri, "warehouse": str(rest_server.warehouse)}})
    name = f"{REST}.{ns}.events"
    a, b = shuffled(rows(150, 1), 1), shuffled(rows(90, 2), 2)
    ig.writeTo(a, name).partitionedBy(ig.days("ts")).sortedBy(ig.asc("category", nulls_first=False), ig.desc("id")).tableProperty("format-version", "3").create()
    r = ig.writeTo(b, name).append()
    expected = pa.concat_tables([a, b])
    assert_rows(spark_read(spark, name), expected, "spark")

    tbl = pcat.load_table(f"{ns}.events")
    assert str(tbl.location()).startswith(("file:", "/"))  # the server's local warehouse
    order_id = tbl.metadata.default_sort_order_id
    files = spark.sql(f"SELECT file_path, spec_id, sort_order_id, record_count FROM {name}.files").collect()
    assert sum(f.record_count for f in files) == expected.num_rows
    terms = [(tbl.schema().find_column_name(f.source_id), str(f.transform), f.direction.name, f.null_order.name) for f in tbl.sort_order().fields]
    assert order_id != 0 and terms == [("category", "identity", "ASC", "NULLS_LAST"), ("id", "identity", "DESC", "NULLS_LAST")]
    assert {f.sort_order_id for f in files} == {order_id}
    order = [Term("category", False, False), Term("id", True, False)]
    for f in files:
        assert_sorted(f.file_path, order)
    bad = spark.sql(f"SELECT count(*) AS n FROM {name} WHERE NOT (_partition.ts_day <=> {REST}.system.days(ts))").collect()[0].n
    assert bad == 0
    assert spark.sql(f"SELECT parent_id FROM {name}.snapshots WHERE snapshot_id = {r.snapshot_id}").collect()[0].parent_id is not None

    # Spark appends on top of ours through the same server; we and PyIceberg see it.
    c = rows(20, 3)
    spark.createDataFrame(c).writeTo(name).append()
    expected = pa.concat_tables([expected, c])
    assert_rows(ig.table(name).to_arrow(), expected, "pyiceberg-go after spark's append")
    assert_rows(pcat.load_table(f"{ns}.events").scan().to_arrow(), expected, "pyiceberg after spark's append")


def test_rest_we_write_into_spark_table(spark: Any, rest_catalogs: tuple[str, Any]) -> None:
    ns, pcat = rest_catalogs
    name = f"{REST}.{ns}.orders"
    spark.sql(f"CREATE NAMESPACE {REST}.{ns}")
    spark.sql(
        f"CREATE TABLE {name} ({SPARK_COLUMNS}) USING iceberg PARTITIONED BY (bucket(4, id), category) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
    )
    a = rows(200, 1)
    spark.createDataFrame(a).writeTo(name).append()
    spark.sql(f"DELETE FROM {name} WHERE id % 10 = 1")  # Spark's own position deletes
    expected = a.filter(pa.array([i % 10 != 1 for i in a["id"].to_pylist()]))

    b = rows(80, 2)
    ig.writeTo(b, name).append()
    expected = pa.concat_tables([expected, b])
    ig.table(name).delete("v > 50 OR id % 10 = 2")
    hit = pc.or_kleene(pc.greater(expected["v"], 50.0), pa.array([i % 10 == 2 for i in expected["id"].to_pylist()]))
    expected = expected.filter(pc.invert(pc.fill_null(hit, False)))
    src = pa.concat_tables([rows(60, 1, start=100), rows(60, 2, start=40), rows(10, 8)])
    ig.mergeInto(src, name, "t.id = s.id", source_alias="s", target_alias="t").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    expected = pa.concat_tables([expected.filter(pc.invert(pc.is_in(expected["id"], src["id"]))), src])

    deletes = spark.sql(f"SELECT count(*) AS n FROM {name}.delete_files").collect()[0].n
    assert deletes > 1, "merge-on-read: Spark's and our position delete files"
    assert_rows(spark_read(spark, name), expected, "spark")
    assert_rows(pcat.load_table(f"{ns}.orders").scan().to_arrow(), expected, "pyiceberg")
    assert_rows(ig.table(name).to_arrow(), expected, "pyiceberg-go")
