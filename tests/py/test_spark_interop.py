"""Apache Spark 4.1 + Iceberg 1.12 (Java) and pyiceberg-go on the same SQLite catalog:
Spark reads what we write, we append to what Spark creates, for format versions 2 and 3."""

from __future__ import annotations

import datetime as dt
import decimal
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import pyiceberg_go as ig

import sparkutil
from conftest import duckdb_scan
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

UTC = dt.timezone.utc


def rich(n: int, seed: int) -> pa.Table:
    """Rows with every kind of column Spark must decode; row i of column k is null when (i + k) % 7 == 0."""
    base = dt.datetime(2024, 2, 27, 22, 30, tzinfo=UTC)
    rng = range(n)
    specs: list[tuple[str, pa.DataType, list[Any]]] = [
        ("ts", pa.timestamp("us", tz="UTC"), [base + dt.timedelta(hours=(i * 11 + seed) % 100, microseconds=i) for i in rng]),
        ("local_ts", pa.timestamp("us"), [dt.datetime(1969, 12, 31, 23, 59) + dt.timedelta(minutes=i * 37 + seed) for i in rng]),
        ("day", pa.date32(), [dt.date(1999, 12, 30) + dt.timedelta(days=i * 3 + seed) for i in rng]),
        ("dec", pa.decimal128(12, 3), [decimal.Decimal(i * 1001 - 3000 + seed) / 1000 for i in rng]),
        ("s", pa.string(), [f"s{seed}-{i}-ü€😀" for i in rng]),
        ("bin", pa.binary(), [bytes([i % 256, seed % 256]) * (i % 4) for i in rng]),
        ("st", pa.struct([("x", pa.int64()), ("y", pa.string())]), [{"x": i * seed, "y": None if i % 3 == 0 else f"y{i}"} for i in rng]),
        ("lst", pa.list_(pa.int32()), [list(range(i % 4)) + ([None] if i % 5 == 0 else []) for i in rng]),
        ("mp", pa.map_(pa.string(), pa.float64()), [[(f"k{j}", j * 0.5 + seed) for j in range(i % 3)] for i in rng]),
    ]
    cols = {"id": pa.array([seed * 10_000 + i for i in rng], pa.int64())}
    for k, (name, typ, values) in enumerate(specs, start=1):
        cols[name] = pa.array([None if (i + k) % 7 == 0 else v for i, v in enumerate(values)], typ)
    return pa.table(cols)


def same_type(a: pa.DataType, e: pa.DataType) -> bool:
    """Equal Arrow types, ignoring nullability, child field names and large/small offsets."""
    if pa.types.is_struct(a) and pa.types.is_struct(e):
        return [f.name for f in a] == [f.name for f in e] and all(same_type(x.type, y.type) for x, y in zip(a, e))
    if pa.types.is_map(a) and pa.types.is_map(e):
        return same_type(a.key_type, e.key_type) and same_type(a.item_type, e.item_type)
    lists = (pa.types.is_list, pa.types.is_large_list)
    if any(f(a) for f in lists) and any(f(e) for f in lists):
        return same_type(a.value_type, e.value_type)
    small = {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
    return small.get(a, a) == small.get(e, e)


def assert_same_by_id(actual: pa.Table, expected: pa.Table, reader: str) -> None:
    """Same columns of the same types and the same rows (matched by the unique ``id``)."""
    assert sorted(actual.column_names) == sorted(expected.column_names), reader
    for f in expected.schema:
        got = actual.schema.field(f.name).type
        assert same_type(got, f.type), f"{reader}: column {f.name} is {got}, want {f.type}"
    schema = pa.schema([pa.field(f.name, f.type, True) for f in expected.schema])
    a = actual.select(expected.column_names).cast(schema)
    e = expected.cast(schema)
    a = a.take(pc.sort_indices(a["id"]))
    e = e.take(pc.sort_indices(e["id"]))
    assert a.num_rows == e.num_rows, reader
    for name in expected.column_names:
        got, want = a[name].combine_chunks(), e[name].combine_chunks()
        assert got.equals(want), f"{reader}: column {name} differs:\n{got.to_pylist()[:5]}\n{want.to_pylist()[:5]}"


def spark_rows(spark: Any, table: str) -> pa.Table:
    return spark.sql(f"SELECT * FROM {table}").toArrow()


def spark_snapshots(spark: Any, table: str) -> dict[int, tuple[int | None, str, str]]:
    """snapshot id -> (parent id, operation, added-records) as Spark's snapshots metadata table shows them."""
    rows = spark.sql(f"SELECT snapshot_id, parent_id, operation, summary FROM {table}.snapshots").collect()
    return {r.snapshot_id: (r.parent_id, r.operation, r.summary["added-records"]) for r in rows}


def partition_mismatches(spark: Any, cat: str, table: str, exprs: dict[str, str]) -> int:
    """Rows whose stored partition tuple differs from Iceberg-Java's transforms of the row.

    ``exprs`` maps a partition field name to the Spark expression (using the
    catalog's ``system`` functions) that must equal it.
    """
    cond = " OR ".join(f"NOT (_partition.{field} <=> {expr.format(cat=cat)})" for field, expr in exprs.items())
    return spark.sql(f"SELECT count(*) AS n FROM {table} WHERE {cond}").collect()[0].n


@pytest.mark.parametrize("version", ["2", "3"])
def test_spark_reads_our_partitioned_table(spark: Any, spark_catalog: str, version: str) -> None:
    first, second = rich(60, seed=1), rich(45, seed=2)
    r1 = ig.writeTo(first, "local.db.t").partitionedBy(ig.days("ts"), ig.bucket(4, "id")).tableProperty("format-version", version).create()
    r2 = ig.writeTo(second, "local.db.t").append()
    both = pa.concat_tables([first, second])
    t = f"{spark_catalog}.db.t"

    assert_same_by_id(spark_rows(spark, t), both, "spark")
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}
    assert props["format-version"] == version

    assert spark_snapshots(spark, t) == {
        r1.snapshot_id: (None, "append", str(first.num_rows)),
        r2.snapshot_id: (r1.snapshot_id, "append", str(second.num_rows)),
    }

    # Our partition values agree with Iceberg-Java's own transforms, row by row.
    fields = [f.name for f in spark.sql(f"SELECT _partition FROM {t}").schema["_partition"].dataType.fields]
    assert fields == ["ts_day", "id_bucket"]
    good = {"ts_day": "{cat}.system.days(ts)", "id_bucket": "{cat}.system.bucket(4, id)"}
    assert partition_mismatches(spark, spark_catalog, t, good) == 0
    wrong = {"ts_day": "{cat}.system.days(ts)", "id_bucket": "{cat}.system.bucket(3, id)"}
    assert partition_mismatches(spark, spark_catalog, t, wrong) > 0  # the check can fail

    # Spark prunes with our partition and column statistics and still finds every matching row.
    cut = dt.datetime(2024, 3, 1, 12, tzinfo=UTC)
    want = pc.sum(pc.greater_equal(both["ts"], pa.scalar(cut, pa.timestamp("us", tz="UTC")))).as_py()
    got = spark.sql(f"SELECT count(*) AS n FROM {t} WHERE ts >= TIMESTAMP '2024-03-01 12:00:00'").collect()[0].n
    assert got == want > 0
    files = spark.sql(f"SELECT sum(record_count) AS n, count(*) AS f FROM {t}.files").collect()[0]
    assert files.n == both.num_rows and files.f >= 2


SPARK_ROWS = [
    (1, dt.datetime(2024, 1, 1, 10, 0, tzinfo=UTC), "INFO", decimal.Decimal("12.50"), ["a", "b"]),
    (2, dt.datetime(2024, 1, 1, 23, 59, 59, 999999, tzinfo=UTC), None, decimal.Decimal("-0.01"), []),
    (3, None, "WARN", None, None),
    (4, dt.datetime(1969, 12, 31, 23, 0, tzinfo=UTC), "ERROR", decimal.Decimal("99999999.99"), [None, "z"]),
]
T2_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("level", pa.string()),
        ("amount", pa.decimal128(10, 2)),
        ("tags", pa.list_(pa.string())),
    ]
)


def sql_literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, dt.datetime):
        return f"TIMESTAMP '{v.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    if isinstance(v, decimal.Decimal):
        return f"{v}BD"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, list):
        return "array(" + ", ".join(sql_literal(x) for x in v) + ")" if v else "CAST(array() AS ARRAY<STRING>)"
    return str(v)


def spark_insert(spark: Any, table: str, rows: list[tuple[Any, ...]]) -> None:
    values = ", ".join("(" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows)
    spark.sql(f"INSERT INTO {table} VALUES {values}")


def as_table(rows: list[tuple[Any, ...]]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(T2_SCHEMA.names, r)) for r in rows], schema=T2_SCHEMA)


@pytest.mark.parametrize("version", ["2", "3"])
def test_we_append_to_spark_table(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, version: str) -> None:
    t = f"{spark_catalog}.db.t2"
    spark.sql(
        f"CREATE TABLE {t} (id BIGINT, ts TIMESTAMP, level STRING, amount DECIMAL(10,2), tags ARRAY<STRING>) "
        f"USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='{version}')"
    )
    spark_insert(spark, t, SPARK_ROWS)
    by_spark = as_table(SPARK_ROWS)
    assert_same_by_id(spark_rows(spark, t), by_spark, "spark before our append")

    ours = pa.table(
        {
            "id": pa.array(range(100, 130), pa.int64()),
            "ts": pa.array([dt.datetime(2023, 12, 31, 20, tzinfo=UTC) + dt.timedelta(hours=5 * i) if i % 6 else None for i in range(30)], pa.timestamp("us", tz="UTC")),
            "level": pa.array([["INFO", "WARN", None][i % 3] for i in range(30)], pa.string()),
            "amount": pa.array([decimal.Decimal(i * 7 - 100) / 4 if i % 5 else None for i in range(30)], pa.decimal128(10, 2)),
            "tags": pa.array([[f"t{j}" for j in range(i % 3)] if i % 4 else None for i in range(30)], pa.list_(pa.string())),
        }
    )
    r = ig.writeTo(ours, "local.db.t2").append()
    assert r.operation == "append"
    expected = pa.concat_tables([by_spark, ours])
    assert_same_by_id(spark_rows(spark, t), expected, "spark after our append")
    assert_same_by_id(pyiceberg_catalog.load_table("db.t2").scan().to_arrow(), expected, "pyiceberg")
    assert partition_mismatches(spark, spark_catalog, t, {"ts_day": "{cat}.system.days(ts)"}) == 0

    snaps = spark_snapshots(spark, t)
    assert len(snaps) == 2 and snaps[r.snapshot_id][1:] == ("append", str(ours.num_rows))
    spark_first = next(s for s in snaps if s != r.snapshot_id)
    assert snaps[r.snapshot_id][0] == spark_first
    props = {p.key: p.value for p in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}
    assert props["format-version"] == version

    # Spark commits on top of our snapshot, and everyone sees all three appends.
    late = [(999, dt.datetime(2024, 6, 1, tzinfo=UTC), "LATE", decimal.Decimal("1.00"), ["x"])]
    spark_insert(spark, t, late)
    everything = pa.concat_tables([expected, as_table(late)])
    assert_same_by_id(spark_rows(spark, t), everything, "spark after its second insert")
    tbl = pyiceberg_catalog.load_table("db.t2")
    assert_same_by_id(tbl.scan().to_arrow(), everything, "pyiceberg after spark's second insert")
    assert tbl.current_snapshot().parent_snapshot_id == r.snapshot_id
    assert_same_by_id(ig.table("local.db.t2").to_arrow(), everything, "pyiceberg-go")


def test_missing_prerequisites_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Java or the jars the fixtures fail saying what is missing (they never skip)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    problems = sparkutil.missing_prerequisites(tmp_path)
    assert any("Java" in p for p in problems)
    for name in sparkutil.pinned_jars():
        assert any(str(tmp_path / name) in p for p in problems)
    assert {"iceberg", "sqlite"} <= {n.split("-")[0] for n in sparkutil.pinned_jars()}


def wide_values(n: int) -> pa.Table:
    """High-cardinality flat columns (so no dictionary: integers are written DELTA_BINARY_PACKED and
    strings DELTA_LENGTH_BYTE_ARRAY), with a null in every column on every 11th row. `rnd` holds
    random 40-bit keys, which zstd cannot shrink: their chunks are stored uncompressed."""
    base = dt.datetime(2020, 1, 1, tzinfo=UTC)
    rng = random.Random(7)
    values: dict[str, tuple[pa.DataType, list[Any]]] = {
        "rnd": (pa.int64(), [rng.getrandbits(40) for _ in range(n)]),
        "i": (pa.int32(), [(i * 7919) % 1_000_003 - 500_000 for i in range(n)]),
        "day": (pa.date32(), [dt.date(1900, 1, 1) + dt.timedelta(days=(i * 37) % 60_000) for i in range(n)]),
        "price": (pa.decimal128(15, 2), [decimal.Decimal((i * 104_729) % 9_999_991 - 4_000_000) / 100 for i in range(n)]),
        "ts": (pa.timestamp("us", tz="UTC"), [base + dt.timedelta(seconds=(i * 7_777) % 90_000_000, microseconds=i) for i in range(n)]),
        "s": (pa.string(), [f"comment {i * 2_654_435_761 % 10**9} é" for i in range(n)]),
    }
    cols = {"id": pa.array(range(n), pa.int64())}
    for name, (typ, vals) in values.items():
        cols[name] = pa.array([None if i % 11 == 0 else v for i, v in enumerate(vals)], typ)
    return pa.table(cols)


@pytest.mark.parametrize("delta", ["true", "false"])
def test_spark_reads_delta_encoded_columns(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, delta: str) -> None:
    import pyarrow.parquet as pq

    data = wide_values(30_000)
    ig.writeTo(data, "local.db.wide").tableProperty("pyiceberg-go.parquet.delta-encodings", delta).create()
    tbl = pyiceberg_catalog.load_table("db.wide")
    encodings: dict[str, set[str]] = {}
    codecs: dict[str, set[str]] = {}
    for task in tbl.scan().plan_files():
        md = pq.ParquetFile(task.file.file_path.removeprefix("file://")).metadata
        for rg in range(md.num_row_groups):
            for c in range(md.num_columns):
                col = md.row_group(rg).column(c)
                encodings.setdefault(col.path_in_schema, set()).update(col.encodings)
                codecs.setdefault(col.path_in_schema, set()).add(col.compression)
    delta_int = {"DELTA_BINARY_PACKED"} if delta == "true" else set()
    delta_str = {"DELTA_LENGTH_BYTE_ARRAY"} if delta == "true" else set()
    # Delta-packed random keys are stored uncompressed (skip-incompressible), so readers meet
    # uncompressed and zstd chunks in one file; PLAIN columns keep the codec.
    assert codecs["rnd"] == ({"UNCOMPRESSED"} if delta == "true" else {"ZSTD"}), codecs
    assert codecs["s"] == {"ZSTD"} and codecs["id"] == {"ZSTD"}, codecs
    for name in ("id", "i", "day", "price", "ts", "rnd"):
        assert encodings[name] & {"DELTA_BINARY_PACKED", "PLAIN_DICTIONARY", "RLE_DICTIONARY"} == delta_int, (name, encodings[name])
    assert encodings["s"] & {"DELTA_LENGTH_BYTE_ARRAY", "PLAIN_DICTIONARY", "RLE_DICTIONARY"} == delta_str, encodings["s"]

    t = f"{spark_catalog}.db.wide"
    assert spark.conf.get("spark.sql.iceberg.vectorization.enabled", "true") != "false"
    assert_same_by_id(spark_rows(spark, t), data, "spark")
    got = spark.sql(f"SELECT sum(i) AS i, sum(price) AS p, max(ts) AS ts, count(s) AS s FROM {t}").collect()[0]
    assert got.i == pc.sum(data["i"]).as_py() and got.p == pc.sum(data["price"]).as_py()
    # collect() gives the session's (UTC) wall time without a zone
    assert got.ts == pc.max(data["ts"]).as_py().replace(tzinfo=None) and got.s == pc.count(data["s"]).as_py()
    assert_same_by_id(tbl.scan().to_arrow(), data, "pyiceberg")
    assert_same_by_id(duckdb_scan(tbl.metadata_location), data, "duckdb")


def test_spark_reads_empty_dictionaries_and_nan_only_pages(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """Columns of the native encoder's edge cases, read by Spark (vectorized), PyIceberg and DuckDB:
    all-null columns that still get a dictionary (an empty dictionary page), short strings that
    are their own dictionary key ("" , "x" and "x\\x00" are three values), and a float column whose
    pages hold only NaN (no column index). Spark's filters on them must count what pyarrow counts."""
    n = 40_000
    rng = random.Random(7)
    short = ["", "x", "x\x00", "AIR", "REG AIR", "TRUCK", None]
    data = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "none_s": pa.array([None] * n, pa.string()),
        "none_i": pa.array([None] * n, pa.int32()),
        "mode": pa.array([rng.choice(short) for _ in range(n)], pa.string()),
        "fl": pa.array([float("nan") if (i // 5000) % 2 == 0 else float(i % 7) for i in range(n)], pa.float64()),
        "flag": pa.array([i % 3 == 0 for i in range(n)], pa.bool_()),
    })
    ig.writeTo(data, "local.db.edges").tableProperty("write.parquet.page-row-limit", "1000").create()
    tbl = pyiceberg_catalog.load_table("db.edges")
    t = f"{spark_catalog}.db.edges"
    for reader, got in [("spark", spark_rows(spark, t)), ("pyiceberg", tbl.scan().to_arrow()),
                        ("duckdb", duckdb_scan(tbl.metadata_location))]:
        # NaN equals nothing, so fl is compared with NaN-aware keys apart from the other columns.
        assert_same_by_id(got.drop_columns(["fl"]), data.drop_columns(["fl"]), reader)
        got = got.take(pc.sort_indices(got["id"]))
        assert [("nan" if v != v else v) for v in got["fl"].to_pylist()] == \
            [("nan" if v != v else v) for v in data["fl"].to_pylist()], reader
    for cond, want in [
        ("none_s IS NULL", n),
        ("none_i IS NOT NULL", 0),
        ("mode = 'x'", data["mode"].to_pylist().count("x")),
        ("mode = ''", data["mode"].to_pylist().count("")),
        ("mode IS NULL", data["mode"].null_count),
        ("isnan(fl)", sum(1 for v in data["fl"].to_pylist() if v != v)),
        ("fl = 3.0", data["fl"].to_pylist().count(3.0)),
    ]:
        got = spark.sql(f"SELECT count(*) AS c FROM {t} WHERE {cond}").collect()[0].c
        assert got == want, (cond, got, want)
