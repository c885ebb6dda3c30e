"""Every data file's partition tuple equals what PyIceberg's own transforms compute for its rows."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)

import pyiceberg_go as ig

from conftest import assert_same_rows, sample

# (partitionedBy arguments, [(source column, PyIceberg transform, default field name)])
CASES: dict[str, tuple[tuple[Any, ...], list[tuple[str, Transform[Any, Any], str]]]] = {
    "identity": (("level",), [("level", IdentityTransform(), "level")]),
    "years": ((ig.years("ts"),), [("ts", YearTransform(), "ts_year")]),
    "months": ((ig.months("ts"),), [("ts", MonthTransform(), "ts_month")]),
    "days": ((ig.days("ts"),), [("ts", DayTransform(), "ts_day")]),
    "hours": ((ig.hours("ts"),), [("ts", HourTransform(), "ts_hour")]),
    "days_of_date": ((ig.days("day"),), [("day", DayTransform(), "day_day")]),
    "months_of_date": ((ig.months("day"),), [("day", MonthTransform(), "day_month")]),
    "bucket_long": ((ig.bucket(16, "id"),), [("id", BucketTransform(16), "id_bucket")]),
    "bucket_string": ((ig.bucket(7, "name"),), [("name", BucketTransform(7), "name_bucket")]),
    "truncate_long": ((ig.truncate(10, "id"),), [("id", TruncateTransform(10), "id_trunc")]),
    "truncate_string": ((ig.truncate(6, "name"),), [("name", TruncateTransform(6), "name_trunc")]),
    "multi": (
        ("level", ig.days("ts"), ig.bucket(4, "id")),
        [("level", IdentityTransform(), "level"), ("ts", DayTransform(), "ts_day"), ("id", BucketTransform(4), "id_bucket")],
    ),
}


def internal_values(column: pa.ChunkedArray) -> list[Any]:
    """Column values in Iceberg's internal representation, which PyIceberg's transforms take."""
    if pa.types.is_timestamp(column.type):
        return column.cast(pa.int64()).to_pylist()  # microseconds since epoch
    if pa.types.is_date32(column.type):
        return column.cast(pa.int32()).to_pylist()  # days since epoch
    return column.to_pylist()


def local_path(path: str) -> str:
    return path.removeprefix("file://")


@pytest.mark.parametrize("case", sorted(CASES))
def test_partition_values_match_pyiceberg(case: str, pyiceberg_catalog: Any) -> None:
    spec_args, fields = CASES[case]
    data = pa.concat_tables([sample(400, seed=1), sample(100, seed=7)])
    name = f"db.part_{case}"
    ig.writeTo(data, f"local.{name}").partitionedBy(*spec_args).create()

    tbl = pyiceberg_catalog.load_table(name)
    schema = tbl.schema()
    spec = tbl.spec()
    assert [(schema.find_field(f.source_id).name, str(f.transform), f.name) for f in spec.fields] == [
        (col, str(t), fname) for col, t, fname in fields
    ]
    fns = [t.transform(schema.find_field(col).field_type) for col, t, _ in fields]

    tasks = list(tbl.scan().plan_files())
    assert tasks
    seen_partitions = set()
    parts: list[pa.Table] = []
    for task in tasks:
        rows = pq.read_table(local_path(task.file.file_path))
        assert rows.num_rows == task.file.record_count
        file_partition = tuple(task.file.partition[i] for i in range(len(fields)))
        computed = list(zip(*(map(fn, internal_values(rows.column(col))) for fn, (col, _, _) in zip(fns, fields))))
        assert set(computed) == {file_partition}, f"{task.file.file_path}: rows belong to {set(computed)}"
        seen_partitions.add(file_partition)
        parts.append(rows.select(data.column_names))
    assert_same_rows(pa.concat_tables(parts), data)

    # Every partition the data spans is present.
    expected_partitions = set(zip(*(map(fn, internal_values(data.column(col))) for fn, (col, _, _) in zip(fns, fields))))
    assert seen_partitions == expected_partitions


def test_partitioned_write_of_batches_larger_than_a_split(pyiceberg_catalog: Any) -> None:
    """A batch of more rows than the writer splits into partitions at once (64Ki) is split in
    slices: every row lands once, in the file of its own partition."""
    data = sample(150_000, seed=3).combine_chunks()
    assert data.column(0).num_chunks == 1 and data.to_batches()[0].num_rows == 150_000
    name = "db.part_large_batch"
    ig.writeTo(data, f"local.{name}").partitionedBy("level").create()

    tbl = pyiceberg_catalog.load_table(name)
    parts: list[pa.Table] = []
    for task in tbl.scan().plan_files():
        rows = pq.read_table(local_path(task.file.file_path))
        assert rows.num_rows == task.file.record_count
        levels = set(rows.column("level").to_pylist())
        assert levels == {task.file.partition[0]}, f"{task.file.file_path}: levels {levels}"
        parts.append(rows.select(data.column_names))
    assert_same_rows(pa.concat_tables(parts), data)
