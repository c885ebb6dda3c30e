"""Every Iceberg type, nulls everywhere, written by pyiceberg-go and read back by
two independent readers (PyIceberg 0.12 on the same SQLite catalog, DuckDB's
iceberg extension on the metadata file), for format versions 2 and 3; plus
every codec and the directory catalog."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pyiceberg_go as ig

from conftest import assert_same_rows, duckdb_scan

N = 50


def every_type() -> pa.Table:
    """One column per Iceberg type; row i is null in column k when (i + k) % 5 == 0."""

    def nullify(values: list[Any], k: int) -> list[Any]:
        return [None if (i + k) % 5 == 0 else v for i, v in enumerate(values)]

    rng = range(N)
    cols: dict[str, pa.Array] = {}
    specs: list[tuple[str, pa.DataType, list[Any]]] = [
        ("b", pa.bool_(), [i % 2 == 0 for i in rng]),
        ("i", pa.int32(), [i * 1000 - 7 for i in rng]),
        ("l", pa.int64(), [(i - 25) * 10**12 for i in rng]),
        ("f", pa.float32(), [i / 4 for i in rng]),
        ("d", pa.float64(), [i / 3 - 5 for i in rng]),
        ("dec", pa.decimal128(12, 3), [decimal.Decimal(i * 1001 - 3000) / 1000 for i in rng]),
        ("bigdec", pa.decimal128(38, 10), [decimal.Decimal(10**20 + i) / 10**10 for i in rng]),
        ("date", pa.date32(), [dt.date(1960, 1, 1) + dt.timedelta(days=i * 400) for i in rng]),
        ("time", pa.time64("us"), [dt.time(i % 24, i % 60, i % 60, i * 7) for i in rng]),
        ("ts", pa.timestamp("us"), [dt.datetime(1969, 12, 31, 23) + dt.timedelta(hours=i * 37, microseconds=i) for i in rng]),
        ("tstz", pa.timestamp("us", tz="UTC"), [dt.datetime(2024, 2, 29, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=i * 91) for i in rng]),
        ("s", pa.string(), [f"str-{i}-ü€😀" for i in rng]),
        ("bin", pa.binary(), [bytes([i % 256]) * (i % 7) for i in rng]),
        ("fixed", pa.binary(4), [i.to_bytes(4, "big") for i in rng]),
        ("u", pa.uuid(), [uuid.UUID(int=i * 2**64 + 17).bytes for i in rng]),
        ("st", pa.struct([("x", pa.int64()), ("y", pa.string())]), [{"x": i, "y": None if i % 3 == 0 else f"y{i}"} for i in rng]),
        ("lst", pa.list_(pa.int32()), [list(range(i % 4)) + ([None] if i % 6 == 0 else []) for i in rng]),
        ("mp", pa.map_(pa.string(), pa.float64()), [[(f"k{j}", j * 0.5) for j in range(i % 3)] for i in rng]),
    ]
    for k, (name, typ, values) in enumerate(specs):
        cols[name] = pa.array(nullify(values, k), typ)
    cols["id"] = pa.array(list(rng), pa.int64())
    return pa.table(cols)


def _plain(name: str, v: Any) -> Any:
    """One value in a form every reader agrees on."""
    if v is None:
        return None
    if name == "u":
        return uuid.UUID(bytes=v).hex if isinstance(v, bytes) else uuid.UUID(str(v)).hex
    if name == "mp":
        items = v.items() if isinstance(v, dict) else ((kv[0], kv[1]) if isinstance(kv, tuple) else (kv["key"], kv["value"]) for kv in v)
        return sorted(items)
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.timezone.utc)
    return v


def rows(t: pa.Table) -> list[dict[str, Any]]:
    """The rows of t, values made comparable, sorted by id."""
    out = [{k: _plain(k, v) for k, v in r.items()} for r in t.to_pylist()]
    return sorted(out, key=lambda r: r["id"])


def assert_rows_equal(actual: pa.Table, expected: pa.Table, reader: str) -> None:
    assert sorted(actual.column_names) == sorted(expected.column_names), reader
    a, e = rows(actual), rows(expected)
    assert len(a) == len(e), reader
    for ra, re_ in zip(a, e):
        for k in re_:
            assert ra[k] == re_[k], f"{reader}: row id={re_['id']} column {k}: {ra[k]!r} != {re_[k]!r}"


@pytest.mark.parametrize("version", ["2", "3"])
def test_every_type_round_trips_through_pyiceberg_and_duckdb(version: str, pyiceberg_catalog: Any) -> None:
    data = every_type()
    r = ig.writeTo(data, "local.db.types").tableProperty("format-version", version).create()
    assert r.summary["added-records"] == str(N)
    t = pyiceberg_catalog.load_table("db.types")
    assert t.metadata.format_version == int(version)
    assert_rows_equal(t.scan().to_arrow(), data, "PyIceberg")
    assert_rows_equal(duckdb_scan(t.metadata_location), data, "DuckDB")
    assert_rows_equal(ig.table("local.db.types").to_arrow(), data, "pyiceberg-go")


def test_nested_types_get_field_ids_and_bounds_readers_can_use(pyiceberg_catalog: Any) -> None:
    data = every_type()
    ig.writeTo(data, "local.db.types").create()
    t = pyiceberg_catalog.load_table("db.types")
    (task,) = list(t.scan().plan_files())
    f = task.file
    ids = {t.schema().find_field(n).field_id: n for n in ["i", "l", "s", "date", "st.x"]}
    for fid, name in ids.items():
        assert fid in f.lower_bounds and fid in f.upper_bounds, f"no bounds for {name}"
        assert f.value_counts[fid] == N
    # Null counts equal the data's.
    for fid, name in ids.items():
        col = data.column(name.split(".")[0])
        nulls = col.null_count if "." not in name else pa.compute.struct_field(col, [0]).null_count
        assert f.null_value_counts[fid] == nulls, name
    # Every Parquet column carries its Iceberg field id.
    path = f.file_path.removeprefix("file://")
    pq_schema = pq.ParquetFile(path).schema_arrow
    assert all(b"PARQUET:field_id" in (fld.metadata or {}) for fld in pq_schema)


@pytest.mark.parametrize("codec", ["zstd", "snappy", "gzip", "brotli", "lz4", "uncompressed"])
def test_every_codec_is_written_and_read_back(codec: str, pyiceberg_catalog: Any) -> None:
    data = every_type().select(["id", "s", "dec", "ts"])
    ig.writeTo(data, "local.db.c").option("compression-codec", codec).create()
    t = pyiceberg_catalog.load_table("db.c")
    assert_same_rows(t.scan().to_arrow(), data)
    (task,) = list(t.scan().plan_files())
    meta = pq.ParquetFile(task.file.file_path.removeprefix("file://")).metadata
    written = meta.row_group(0).column(0).compression.lower()
    # pyarrow names Parquet's LZ4_RAW "lz4" (the Hadoop framing would be "lz4_hadoop").
    assert written == codec, written


def test_target_file_size_rolls_files(pyiceberg_catalog: Any) -> None:
    n = 200_000
    data = pa.table({"id": pa.array(range(n), pa.int64()), "s": pa.array([f"value-{i * 7919 % 100003}" for i in range(n)])})
    target = 256 * 1024
    r = ig.writeTo(data, "local.db.roll").option("target-file-size-bytes", str(target)).create()
    t = pyiceberg_catalog.load_table("db.roll")
    sizes = sorted(task.file.file_size_in_bytes for task in t.scan().plan_files())
    assert len(sizes) >= 3 and int(r.summary["added-data-files"]) == len(sizes)
    # Every file but the last reaches roughly the target, counted on bytes written.
    assert all(s >= target * 0.5 for s in sizes[1:]), sizes
    assert t.scan().to_arrow().num_rows == n


def test_directory_catalog(tmp_path: Any) -> None:
    wh = tmp_path / "hadoop-wh"
    ig.configure(catalogs={"files": {"type": "hadoop", "warehouse": f"file://{wh}"}})
    data = every_type().select(["id", "s", "ts"])
    r = ig.writeTo(data, "files.db.t").partitionedBy(ig.days("ts")).create()
    ig.writeTo(data, "files.db.t").append()
    assert ig.table("files.db.t").to_arrow().num_rows == 2 * N
    meta = sorted((wh / "db" / "t" / "metadata").glob("v*.metadata.json"))
    assert meta, "the directory catalog keeps vN.metadata.json files"
    assert_same_rows(duckdb_scan(str(meta[-1])), pa.concat_tables([data, data]))
    assert r.operation == "append"
