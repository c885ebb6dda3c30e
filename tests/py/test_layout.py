"""Sort orders, distribution modes and file layout, checked in the files themselves.

Each file is read with pyarrow.parquet and compared with pyarrow's own sort of the
same rows; the table's sort order and each file's ``sort_order_id`` are read by
PyIceberg 0.12; Spark 4.1 reads the sorted table and reports the same layout in its
``files`` metadata table.
"""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyiceberg_go as ig

from conftest import assert_same_rows
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)


def frame(n: int, seed: int = 0) -> pa.Table:
    """n rows in a scrambled order: id, level (with nulls), ts (with nulls), amount."""
    import random

    rng = random.Random(seed)
    ids = list(range(n))
    rng.shuffle(ids)
    levels = ["INFO", "WARN", "ERROR", None]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "level": pa.array([levels[i % 4] for i in ids], pa.string()),
            "ts": pa.array([None if i % 9 == 0 else 1_700_000_000_000_000 + (i * 7919 % n) * 3_600_000_000 for i in ids], pa.timestamp("us", tz="UTC")),
            "amount": pa.array([float(i % 97) for i in ids], pa.float64()),
        }
    )


_gather_ids = itertools.count()


def files_of(catalog: Any, name: str) -> pa.Table:
    return catalog.load_table(name).inspect.files()


def local(path: str) -> str:
    return path.removeprefix("file://")


def assert_sorted(path: str, keys: list[tuple[str, str]]) -> pa.Table:
    """The file's rows equal pyarrow's sort of them (key columns without nulls)."""
    t = pq.read_table(local(path))
    expected = t.sort_by(keys)
    for name, _ in keys:
        assert t.column(name).equals(expected.column(name)), f"{path} is not sorted by {keys}"
    return t


def test_sorted_partitioned_table(pyiceberg_catalog: Any) -> None:
    df = frame(5000)
    r = ig.writeTo(df, "db.sorted").partitionedBy("level").sortedBy(ig.desc("ts"), "id").create()
    assert r.operation == "append"
    ig.writeTo(frame(3000, seed=1), "db.sorted").append()
    tbl = pyiceberg_catalog.load_table("db.sorted")
    so = tbl.sort_order()
    assert [(tbl.schema().find_column_name(f.source_id), f.direction.name, f.null_order.name) for f in so.fields] == [
        ("ts", "DESC", "NULLS_LAST"),
        ("id", "ASC", "NULLS_FIRST"),
    ]
    files = files_of(pyiceberg_catalog, "db.sorted")
    # range distribution (the default for a sorted table): one file per partition and write
    assert files.num_rows == 8
    assert set(files.column("sort_order_id").to_pylist()) == {so.order_id}
    for path in files.column("file_path").to_pylist():
        t = pq.read_table(local(path))
        # nulls last for ts DESC, then id ASC: pyarrow sorts with one null placement, so
        # check the non-null ts run and the null run separately
        valid = t.filter(pc.is_valid(t.column("ts")))
        nulls = t.filter(pc.is_null(t.column("ts")))
        assert t.slice(0, valid.num_rows).column("ts").equals(valid.sort_by([("ts", "descending"), ("id", "ascending")]).column("ts"))
        assert t.slice(0, valid.num_rows).column("id").equals(valid.sort_by([("ts", "descending"), ("id", "ascending")]).column("id"))
        assert t.slice(valid.num_rows).column("id").equals(nulls.sort_by([("id", "ascending")]).column("id"))
        assert pc.count_distinct(t.column("level"), mode="all").as_py() == 1
    assert_same_rows(tbl.scan().to_arrow(), pa.concat_tables([df, frame(3000, seed=1)]))


def test_range_files_hold_disjoint_ranges(pyiceberg_catalog: Any) -> None:
    df = frame(40000)
    ig.writeTo(df, "db.ranged").sortedBy("amount", "id").option("target-file-size-bytes", 60_000).create()
    files = files_of(pyiceberg_catalog, "db.ranged")
    assert files.num_rows >= 3
    spans = []
    for path in files.column("file_path").to_pylist():
        t = assert_sorted(path, [("amount", "ascending"), ("id", "ascending")])
        spans.append(((t.column("amount")[0].as_py(), t.column("id")[0].as_py()), (t.column("amount")[-1].as_py(), t.column("id")[-1].as_py())))
    spans.sort()
    for (_, hi), (lo, _) in itertools.pairwise(spans):
        assert hi < lo, f"files overlap: {spans}"


def test_hash_and_none_on_partitioned_table(pyiceberg_catalog: Any) -> None:
    df = frame(8000)
    batches = pa.Table.from_batches(df.to_batches(max_chunksize=500))
    ig.writeTo(batches, "db.hashed").partitionedBy(ig.bucket(4, "id")).create()
    assert files_of(pyiceberg_catalog, "db.hashed").num_rows == 4
    ig.writeTo(batches, "db.capped").partitionedBy(ig.bucket(4, "id")).option("max-open-files", 2).create()
    assert files_of(pyiceberg_catalog, "db.capped").num_rows > 4
    assert_same_rows(pyiceberg_catalog.load_table("db.capped").scan().to_arrow(), df)


def test_session_conf_spark_names_and_precedence(pyiceberg_catalog: Any, catalog_dir: Any) -> None:
    df = frame(3000)
    ig.configure(catalogs={"local": catalog_dir.properties}, conf={"spark.sql.iceberg.distribution-mode": "bogus"})
    try:
        with pytest.raises(ig.InvalidArgumentError, match="distribution mode"):
            ig.writeTo(df, "db.conf").create()
        # the write option beats the session configuration
        ig.writeTo(df, "db.conf").option("distribution-mode", "none").create()
    finally:
        ig.configure(catalogs={"local": catalog_dir.properties})
    assert pyiceberg_catalog.load_table("db.conf").scan().to_arrow().num_rows == 3000


def test_row_group_and_page_properties_in_footers(pyiceberg_catalog: Any) -> None:
    df = frame(60000)
    (
        ig.writeTo(df, "db.footers")
        .tableProperty("write.parquet.row-group-size-bytes", 100_000)
        .tableProperty("write.parquet.page-size-bytes", 8192)
        .tableProperty("write.target-file-size-bytes", 400_000)
        .create()
    )
    files = files_of(pyiceberg_catalog, "db.footers")
    sizes = files.column("file_size_in_bytes").to_pylist()
    for path, size in zip(files.column("file_path").to_pylist(), sizes):
        md = pq.ParquetFile(local(path)).metadata
        if size > 2 * 100_000:
            assert md.num_row_groups >= 2, "row-group-size-bytes must cut row groups"
        for i in range(md.num_row_groups):
            rg = md.row_group(i)
            compressed = sum(rg.column(c).total_compressed_size for c in range(rg.num_columns))
            assert compressed < 100_000 * 2
    # each file reaches the target within one row group of slack, except the last
    assert all(s < 400_000 + 200_000 for s in sizes)
    assert sum(1 for s in sizes if s < 400_000 - 200_000) <= 1


def test_bad_layout_requests(pyiceberg_catalog: Any) -> None:
    df = frame(10)
    with pytest.raises(ig.ValidationError, match="nope"):
        ig.writeTo(df, "db.bad").sortedBy("nope").create()
    with pytest.raises(ig.InvalidArgumentError, match="distribution"):
        ig.writeTo(df, "db.bad").option("distribution-mode", "random").create()
    with pytest.raises(TypeError):
        ig.writeTo(df, "db.bad").sortedBy(3)  # type: ignore[arg-type]
    assert not pyiceberg_catalog.table_exists("db.bad")
    ig.writeTo(df, "db.ok").create()
    with pytest.raises(ig.InvalidArgumentError, match="sort order"):
        ig.writeTo(df, "db.ok").sortedBy("id").append()
    assert len(pyiceberg_catalog.load_table("db.ok").snapshots()) == 1


def test_spark_reads_sorted_table_and_sees_layout(spark: Any, spark_catalog: str) -> None:
    df = frame(4000)
    ig.writeTo(df, "db.sparkside").partitionedBy("level").sortedBy(ig.desc("ts"), "id").create()
    got = spark.sql(f"SELECT id FROM {spark_catalog}.db.sparkside").toPandas()
    assert sorted(got["id"].tolist()) == list(range(4000))
    rows = spark.sql(f"SELECT sort_order_id, record_count FROM {spark_catalog}.db.sparkside.files").collect()
    assert len(rows) == 4 and len({r.sort_order_id for r in rows}) == 1 and rows[0].sort_order_id > 0
    assert sum(r.record_count for r in rows) == 4000
    # Spark appends to the table we created honour its sort order the same way
    spark.sql(f"INSERT INTO {spark_catalog}.db.sparkside SELECT id + 4000, level, ts, amount FROM {spark_catalog}.db.sparkside")
    assert spark.sql(f"SELECT count(*) AS n FROM {spark_catalog}.db.sparkside").collect()[0].n == 8000


def test_merge_schema_adds_and_widens_in_the_data_commit(pyiceberg_catalog: Any) -> None:
    first = pa.table({"id": pa.array([1, 2], pa.int64()), "x": pa.array([1, 2], pa.int32())})
    ig.writeTo(first, "db.evolve").tableProperty("write.spark.accept-any-schema", "true").create()
    more = pa.table({"id": pa.array([3], pa.int64()), "x": pa.array([2**40], pa.int64()), "y": pa.array(["new"], pa.string())})
    with pytest.raises(ig.IcebergGoError):
        ig.writeTo(more, "db.evolve").append()  # without mergeSchema the input must fit the table
    r = ig.writeTo(more, "db.evolve").option("mergeSchema", "true").append()
    tbl = pyiceberg_catalog.load_table("db.evolve")
    assert [(f.name, str(f.field_type)) for f in tbl.schema().fields] == [("id", "long"), ("x", "long"), ("y", "string")]
    assert len(tbl.snapshots()) == 2 and r.snapshot_id == tbl.current_snapshot().snapshot_id
    got = tbl.scan().to_arrow().sort_by("id")
    assert got.column("x").to_pylist() == [1, 2, 2**40]
    assert got.column("y").to_pylist() == [None, None, "new"]
    # an incompatible change fails, naming the column, and changes nothing
    bad = pa.table({"id": pa.array([4], pa.int64()), "x": pa.array(["text"], pa.string()), "z": pa.array([1.5])})
    with pytest.raises(ig.IcebergGoError, match="x"):
        ig.writeTo(bad, "db.evolve").option("mergeSchema", "true").append()
    tbl = pyiceberg_catalog.load_table("db.evolve")
    assert [f.name for f in tbl.schema().fields] == ["id", "x", "y"] and len(tbl.snapshots()) == 2
    # mergeSchema needs the table to accept any schema
    ig.writeTo(first, "db.strict").create()
    with pytest.raises(ig.InvalidArgumentError, match="accept-any-schema"):
        ig.writeTo(more, "db.strict").option("mergeSchema", "true").append()


def test_merge_schema_adds_nested_fields(pyiceberg_catalog: Any) -> None:
    a = pa.struct([("a", pa.int32())])
    ab = pa.struct([("a", pa.int64()), ("b", pa.string())])
    first = pa.table({"id": pa.array([1], pa.int64()), "s": pa.array([{"a": 1}], a), "l": pa.array([[{"a": 1}]], pa.list_(a))})
    ig.writeTo(first, "db.nested").tableProperty("write.spark.accept-any-schema", "true").create()
    more = pa.table(
        {
            "id": pa.array([2], pa.int64()),
            "s": pa.array([{"a": 2**40, "b": "x"}], ab),
            "l": pa.array([[{"a": 2, "b": "y"}, None]], pa.list_(ab)),
        }
    )
    ig.writeTo(more, "db.nested").option("mergeSchema", "true").append()
    tbl = pyiceberg_catalog.load_table("db.nested")
    s = tbl.schema().find_field("s").field_type
    assert [(f.name, str(f.field_type)) for f in s.fields] == [("a", "long"), ("b", "string")]
    elem = tbl.schema().find_field("l").field_type.element_field.field_type
    assert [f.name for f in elem.fields] == ["a", "b"]
    ids = [f.field_id for f in tbl.schema().fields] + [f.field_id for f in s.fields] + [f.field_id for f in elem.fields]
    assert len(ids) == len(set(ids)), f"field ids must be unique: {ids}"
    got = tbl.scan().to_arrow().sort_by("id").to_pylist()
    assert got[0]["s"] == {"a": 1, "b": None} and got[1]["s"] == {"a": 2**40, "b": "x"}
    assert got[0]["l"] == [{"a": 1, "b": None}] and got[1]["l"] == [{"a": 2, "b": "y"}, None]


def test_filters_after_widening_prune_safely(pyiceberg_catalog: Any) -> None:
    """Files written before int->long / float->double keep 4-byte bounds; delete, update and
    merge filters on those columns must still work (iceberg-go would misread the bounds)."""
    first = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "x": pa.array([1.0, 2.0, 3.0], pa.float32())})
    ig.writeTo(first, "db.widened").tableProperty("write.spark.accept-any-schema", "true").create()
    more = pa.table({"id": pa.array([4], pa.int64()), "x": pa.array([4.0], pa.float64())})
    ig.writeTo(more, "db.widened").option("mergeSchema", "true").append()
    rows = {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0}
    ig.table("db.widened").delete("id = 2")
    del rows[2]
    ig.table("db.widened").update({"x": "x + 1"}, where="x > 2")
    rows = {k: v + 1 if v > 2 else v for k, v in rows.items()}
    src = pa.table({"id": pa.array([3, 9], pa.int64()), "x": pa.array([30.0, 90.0])})
    ig.mergeInto(src, "db.widened", "target.id = source.id").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    rows.update({3: 30.0, 9: 90.0})
    got = pyiceberg_catalog.load_table("db.widened").scan().to_arrow()
    assert dict(zip(got.column("id").to_pylist(), got.column("x").to_pylist())) == rows


_dec = st.none() | st.decimals(min_value=-(10**16), max_value=10**16, places=2, allow_nan=False, allow_infinity=False)
_row = st.tuples(
    st.integers(0, 4),  # the sort key: many ties
    _dec,
    st.none() | st.text(max_size=12),
    st.none() | st.lists(st.none() | st.integers(-5, 5), max_size=3),
    st.none() | st.binary(min_size=16, max_size=16),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_row, min_size=1, max_size=60), batch=st.integers(1, 9))
def test_sorted_write_moves_every_column_with_its_row(pyiceberg_catalog: Any, rows: list, batch: int) -> None:
    """A sorted write gathers each column (decimals and fixed-size binaries across the buffer's
    batches, a list column joined once) by the same order: every row keeps its own values, and
    rows with equal keys keep their input order."""
    ident = f"db.gather_{next(_gather_ids)}"
    schema = pa.schema(
        [
            pa.field("pos", pa.int32(), nullable=False),
            pa.field("k", pa.int32()),
            pa.field("d", pa.decimal128(20, 2)),
            pa.field("s", pa.string()),
            pa.field("l", pa.list_(pa.int32())),
            pa.field("u", pa.binary(16)),
        ]
    )
    cols = list(zip(*rows, strict=True))
    t = pa.table([pa.array(range(len(rows)), pa.int32()), *[pa.array(c, schema.field(i + 1).type) for i, c in enumerate(cols)]], schema=schema)
    # Many small batches: the sort buffer holds them as they came.
    t = pa.Table.from_batches(t.to_batches(max_chunksize=batch), schema=schema)
    ig.writeTo(t, ident).sortedBy("k").create()
    files = files_of(pyiceberg_catalog, ident).column("file_path").to_pylist()
    assert len(files) == 1
    got = pq.read_table(local(files[0])).select(schema.names)
    want = t.take(pc.sort_indices(t, [("k", "ascending"), ("pos", "ascending")]))
    assert got.cast(schema).equals(want.combine_chunks())
