"""Metadata tables (``t.inspect.<x>()``) against PyIceberg 0.12's ``table.inspect`` and Spark 4.1's
``db.t.<x>`` on the same table: same rows, Spark's column names, types and order.

Differences kept on purpose: ``readable_metrics`` has its columns sorted by name as Spark's
(PyIceberg: in schema order; the values agree); timestamps are Iceberg's
``timestamptz`` as ``timestamp[us, UTC]`` (PyIceberg: naive ``timestamp[ms]``); ``content``
and ``status`` are int32 as Spark's ``int`` (PyIceberg: int8); ``type`` and ``file_format``
plain strings (PyIceberg: dictionaries); the file tables carry Iceberg 1.10's
``first_row_id``, ``referenced_data_file``, ``content_offset`` and ``content_size_in_bytes``
as Spark does (PyIceberg 0.12 has not got them); ``refs.type`` is Spark's ``BRANCH`` / ``TAG``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest
from history import T, build

import pyiceberg_go as ig

from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

#: Our column types, as Spark's simpleString names them.
SPARK_TYPES = {
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.string(): "string",
    pa.bool_(): "boolean",
    pa.binary(): "binary",
    pa.timestamp("us", "UTC"): "timestamp",
}

PER_SNAPSHOT = ["manifests", "files", "data_files", "delete_files", "entries", "partitions"]
WHOLE = [
    "snapshots",
    "history",
    "refs",
    "metadata_log_entries",
    "all_manifests",
    "all_files",
    "all_data_files",
    "all_delete_files",
]
#: Columns PyIceberg 0.12 has not got (ours follow Spark).
NOT_IN_PYICEBERG = {"first_row_id", "referenced_data_file", "content_offset", "content_size_in_bytes"}


def norm(v: Any) -> Any:
    """A value as plain Python, comparable across pyarrow, PyIceberg and Spark rows."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        return (v - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if k not in NOT_IN_PYICEBERG}
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # an Arrow map
            return {k: norm(x) for k, x in v}
        return [norm(x) for x in v]
    if hasattr(v, "asDict"):  # a Spark Row
        return norm(v.asDict(recursive=True))
    return v


def rows(tbl: pa.Table, drop: set[str] = frozenset()) -> list[Any]:  # type: ignore[assignment]
    cols = [c for c in tbl.column_names if c not in drop and c not in NOT_IN_PYICEBERG]
    out = [norm({c: r[c] for c in cols}) for r in tbl.to_pylist()]
    return sorted(out, key=repr)


def compare_with_pyiceberg(ours: pa.Table, theirs: pa.Table, name: str) -> None:
    assert [c for c in ours.column_names if c not in NOT_IN_PYICEBERG] == [
        c for c in theirs.column_names if c not in NOT_IN_PYICEBERG
    ], name
    if "readable_metrics" in ours.column_names:
        # Spark's order (by name), PyIceberg's schema order: the same columns.
        ours_cols = [f.name for f in ours.schema.field("readable_metrics").type]
        theirs_cols = [f.name for f in theirs.schema.field("readable_metrics").type]
        assert ours_cols == sorted(theirs_cols), name
    drop: set[str] = set()
    if name == "refs":
        # PyIceberg's type is lower case; Spark's (and ours) upper case.
        assert sorted(ours["type"].to_pylist()) == sorted(s.upper() for s in theirs["type"].to_pylist())
        drop = {"type"}
    assert ours.num_rows == theirs.num_rows, name
    a, b = rows(ours, drop), rows(theirs, drop)
    if name.startswith("entries"):
        # PyIceberg 0.12's data_file has no spec_id, and an empty nan_value_counts map
        # where the manifest has none (Spark: null, as ours).
        for r in a:
            del r["data_file"]["spec_id"]
        for r in b:
            r["data_file"]["nan_value_counts"] = r["data_file"]["nan_value_counts"] or None
        a, b = sorted(a, key=repr), sorted(b, key=repr)
    assert a == b, name


@pytest.mark.parametrize("version", [2, 3])
def test_metadata_tables_match_pyiceberg(pyiceberg_catalog: Any, version: int) -> None:
    h = build(version)
    t = ig.table(T)
    tbl = pyiceberg_catalog.load_table("db.t")
    # PyIceberg 0.12's entries() fails on a deletion vector's entry (no column_sizes): v3 is
    # checked against Spark only.
    skip = {"entries"} if version == 3 else set()
    for name in WHOLE + PER_SNAPSHOT:
        if name in skip:
            continue
        compare_with_pyiceberg(getattr(t.inspect, name)(), getattr(tbl.inspect, name)(), name)
    # Every snapshot's per-snapshot tables, main's, the branch's and the rolled-away ones.
    for sid in [*h.main, h.branch_head]:
        for name in PER_SNAPSHOT:
            if name == "manifests" or name in skip:  # PyIceberg's manifests reads main's head only
                continue
            compare_with_pyiceberg(
                getattr(t.inspect, name)(snapshot_id=sid), getattr(tbl.inspect, name)(snapshot_id=sid), f"{name}@{sid}"
            )
    # The history has what the checks need: deletes, several partitions, refs.
    assert t.inspect.delete_files().num_rows > 0
    assert t.inspect.partitions().num_rows > 1
    assert sorted(t.inspect.refs()["name"].to_pylist()) == ["b", "main", "v1"]
    assert t.inspect.snapshots()["snapshot_id"].to_pylist() == [s["snapshot_id"] for s in t.snapshots()]


def test_metadata_tables_through_any_arrow_consumer() -> None:
    build()
    t = ig.table(T)
    s = t.inspect.stream("partitions")
    assert pa.table(s).num_rows == t.inspect.partitions().num_rows
    with pytest.raises(ig.StreamConsumedError):
        pa.table(s)
    # A branch identifier reads the branch's head.
    head = ig.table(f"{T}.branch_b").inspect.files()
    assert sorted(head["file_path"].to_pylist()) == sorted(
        t.inspect.files(snapshot_id=t.refs()["b"]["snapshot_id"])["file_path"].to_pylist()
    )


def test_metadata_table_errors() -> None:
    h = build()
    t = ig.table(T)
    with pytest.raises(ig.InvalidArgumentError, match='unknown metadata table "nope"'):
        t.inspect.stream("nope")
    with pytest.raises(ig.InvalidArgumentError, match="metadata table snapshots takes no snapshot_id"):
        t.inspect.stream("snapshots", snapshot_id=h.main[0])
    with pytest.raises(ig.InvalidArgumentError, match="has no snapshot 1"):
        t.inspect.files(snapshot_id=1)
    with pytest.raises(ig.NoSuchTableError):
        ig.table("local.db.missing").inspect.snapshots()


@pytest.mark.parametrize("version", [2, 3])
def test_metadata_tables_match_spark(spark: Any, spark_catalog: str, version: int) -> None:
    build(version)
    t = ig.table(T)
    for name in [
        "snapshots",
        "history",
        "refs",
        "metadata_log_entries",
        "manifests",
        "files",
        "data_files",
        "delete_files",
        "entries",
        "partitions",
        "all_manifests",
        "all_files",
        "all_data_files",
        "all_delete_files",
        "all_entries",
    ]:
        ours = getattr(t.inspect, name)()
        df = spark.sql(f"SELECT * FROM {spark_catalog}.db.t.{name}")
        fields = df.schema.fields
        assert ours.column_names == [f.name for f in fields], name
        if "readable_metrics" in ours.column_names:
            metrics = ours.schema.field("readable_metrics").type
            spark_metrics = df.schema["readable_metrics"].dataType
            assert [f.name for f in metrics] == [f.name for f in spark_metrics.fields] == ["cat", "id"]
            for col in metrics:
                spark_col = spark_metrics[col.name].dataType
                assert [f.name for f in col.type] == [f.name for f in spark_col.fields]
        for f in fields:
            typ = ours.schema.field(f.name).type
            if typ in SPARK_TYPES:
                assert SPARK_TYPES[typ] == f.dataType.simpleString(), (name, f.name)
        theirs = sorted((norm(r.asDict(recursive=True)) for r in df.collect()), key=repr)
        ours_rows = sorted((norm(r) for r in ours.to_pylist()), key=repr)
        # norm() drops the columns PyIceberg lacks from both sides alike; check them once here.
        assert ours_rows == theirs, name
        if name == "files":
            spark_extra = sorted(
                (r["file_path"], r["content_offset"], r["content_size_in_bytes"], r["referenced_data_file"])
                for r in df.collect()
            )
            ours_extra = sorted(
                zip(
                    *(
                        ours[c].to_pylist()
                        for c in ["file_path", "content_offset", "content_size_in_bytes", "referenced_data_file"]
                    )
                )
            )
            assert ours_extra == spark_extra


def test_typed_partitions_and_evolved_spec_match_spark(spark: Any, spark_catalog: str) -> None:
    """Dates, timestamps, decimals and doubles, partitioned by day, bucket and truncate, then a new
    spec from Spark: the unified partition struct, bounds and readable_metrics as Spark shows them."""
    import decimal

    n = 40
    data = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1 + i % 5, i % 24, tzinfo=dt.timezone.utc) for i in range(n)],
                pa.timestamp("us", "UTC"),
            ),
            "d": pa.array([dt.date(2023, 12, 1 + i % 3) for i in range(n)], pa.date32()),
            "price": pa.array([decimal.Decimal(i) / 4 for i in range(n)], pa.decimal128(10, 2)),
            "x": pa.array([float(i) if i % 7 else float("nan") for i in range(n)], pa.float64()),
            "s": pa.array([None if i % 9 == 0 else f"name-{i}" for i in range(n)]),
        }
    )
    name = "local.db.typed"
    ig.writeTo(data, name).partitionedBy(ig.days("ts"), ig.bucket(4, "id"), ig.truncate(3, "s")).create()
    spark.sql(f"ALTER TABLE {spark_catalog}.db.typed ADD PARTITION FIELD d")
    ig.writeTo(data.slice(0, 10), name).append()
    t = ig.table(name)
    for table_name in ["files", "partitions", "manifests", "entries", "all_manifests"]:
        ours = getattr(t.inspect, table_name)()
        df = spark.sql(f"SELECT * FROM {spark_catalog}.db.typed.{table_name}")
        assert ours.column_names == [f.name for f in df.schema.fields], table_name
        theirs = sorted((norm(r.asDict(recursive=True)) for r in df.collect()), key=repr)
        assert sorted((norm(r) for r in ours.to_pylist()), key=repr) == theirs, table_name
