"""Partition values in file names: spelled as Iceberg Java spells them, the file written at exactly
the location the metadata records, and never anywhere outside the table, whatever the data.

Iceberg names a partition folder ``URLEncoder.encode(field) + "=" + URLEncoder.encode(human)``
(``PartitionSpec.partitionToPath``); a location is a string, never URL-decoded, so the folder of
``truncate(2, s)`` of ``'yé'`` is literally ``s_trunc=y%C3%A9`` on disk and in S3 keys. The
expected names below come from an implementation of Java's rules written here (``java_escape``,
``human``), independent of the Go one.

Generated inputs use hypothesis; the default run is bounded (a few tens of examples), and
``HYPOTHESIS_PROFILE=long`` runs many more.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import itertools
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import pyiceberg_go as ig

from conftest import CatalogDir, assert_same_rows, duckdb_scan
from servers import S3Server, s3_server  # noqa: F401  (fixture)
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"


def examples(n: int) -> Any:
    """n examples (20x with HYPOTHESIS_PROFILE=long); no example database written into the repository."""
    return settings(
        max_examples=n * 20 if LONG else n,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- Java's rules, written independently of the Go implementation -------------------------------

_KEPT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_")


def java_escape(s: str) -> str:
    """java.net.URLEncoder.encode(s, UTF_8)."""
    return "".join(chr(b) if b in _KEPT else "+" if b == 0x20 else f"%{b:02X}" for b in s.encode("utf-8"))


def civil(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number (days since 1970-01-01), proleptic Gregorian, any year."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def human_day(days: int) -> str:
    y, m, d = civil(days)
    return f"{y:04d}-{m:02d}-{d:02d}"  # String.format("%04d-%02d-%02d"): "-001" for year -1


def iso_timestamp(micros: int, tz: bool) -> str:
    """DateTimeFormatter.ISO_LOCAL_DATE_TIME (+ "+00:00" for timestamptz)."""
    secs, frac = divmod(micros, 1_000_000)
    days, sod = divmod(secs, 86400)
    y, m, d = civil(days)
    year = f"-{-y:04d}" if y < 0 else f"+{y}" if y > 9999 else f"{y:04d}"
    s = f"{year}-{m:02d}-{d:02d}T{sod // 3600:02d}:{sod // 60 % 60:02d}:{sod % 60:02d}"
    if frac:
        s += "." + f"{frac:06d}".rstrip("0")
    return s + ("+00:00" if tz else "")


def as_days(v: Any) -> int:
    return (v - dt.date(1970, 1, 1)).days if isinstance(v, dt.date) else int(v)


def as_micros(v: Any) -> int:
    if isinstance(v, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=v.tzinfo)
        return (v - epoch) // dt.timedelta(microseconds=1)
    return int(v)


def java_float(v: float, single: bool) -> str:
    """Float.toString / Double.toString, with the shortest digits that read back to the value."""
    import numpy as np

    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    shortest = str(np.float32(v)) if single else repr(v)
    sign, digits, exponent = decimal.Decimal(shortest).normalize().as_tuple()
    ds = "".join(map(str, digits))
    e = len(ds) + int(exponent) - 1  # the value is d.ddd x 10^e
    if -3 <= e < 7:
        text = (ds[: e + 1].ljust(e + 1, "0") + "." + (ds[e + 1 :] or "0")) if e >= 0 else "0." + "0" * (-e - 1) + ds
    else:
        text = ds[0] + "." + (ds[1:] or "0") + "E" + str(e)
    return ("-" if sign else "") + text


def human(transform: str, source: pa.DataType, v: Any) -> str:
    """Iceberg Java's Transform.toHumanString of partition value v (as PyIceberg reads it from a manifest)."""
    if v is None:
        return "null"
    if transform == "year":
        return f"{1970 + v:04d}"
    if transform == "month":
        return f"{1970 + v // 12:04d}-{v % 12 + 1:02d}"
    if transform == "day":
        return human_day(as_days(v))
    if transform == "hour":
        return human_day(v // 24) + f"-{v % 24:02d}"
    if transform.startswith("bucket"):
        return str(v)
    if pa.types.is_binary(source):
        return base64.b64encode(v).decode()
    if pa.types.is_date(source):
        return human_day(as_days(v))
    if pa.types.is_timestamp(source):
        return iso_timestamp(as_micros(v), source.tz is not None)
    if pa.types.is_boolean(source):
        return "true" if v else "false"
    if pa.types.is_floating(source):
        return java_float(v, pa.types.is_float32(source))
    return str(v)  # strings, integers; decimal.Decimal's str is BigDecimal.toString for scale >= 0


def partition_path(table: Any, partition: Any, sources: dict[str, pa.DataType], row: dict[str, Any] | None = None) -> str:
    """Java's PartitionSpec.partitionToPath of a data file's partition tuple (identity values taken
    from the file's row when given: PyIceberg 0.12 reads a double partition value from a manifest
    as a 32-bit float, 1e-05 as 9.999999747378752e-06, where Spark reads 1e-05)."""
    schema = table.schema()
    segs = []
    for i, f in enumerate(table.spec().fields):
        column = schema.find_field(f.source_id).name
        value = row[column] if row is not None and str(f.transform) == "identity" else partition[i]
        segs.append(java_escape(f.name) + "=" + java_escape(human(str(f.transform), sources[column], value)))
    return "/".join(segs)


# --- Where files are ----------------------------------------------------------------------------


def local_path(location: str) -> str:
    """The file a file: location names, literally (file:/a, file:///a, or a plain path)."""
    if location.startswith("file:"):
        return "/" + location.removeprefix("file:").lstrip("/")
    return location


def files_under(root: Path) -> set[str]:
    """Every regular file below root, as an absolute path, but the catalog's own (the SQLite file,
    its journal and the commit lock beside it)."""
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if not f.startswith("catalog.db")}


def data_files(table: Any) -> list[Any]:
    return [task.file for task in table.scan().plan_files()]


def first_row(location: str) -> dict[str, Any]:
    return pq.read_table(local_path(location)).slice(0, 1).to_pylist()[0]


def check_layout(
    table: Any,
    sources: dict[str, pa.DataType],
    exists: Callable[[str], bool],
    data_root: str | None = None,
    row_of: Callable[[str], dict[str, Any]] | None = None,
) -> None:
    """Every data file the manifests name exists at exactly that location, strictly inside the
    table's data root, in the folder Iceberg Java would name for its partition tuple. Local
    locations are compared as the paths they name (Spark writes "file:/a" in a table at "file:///a")."""
    root = (data_root or table.location().rstrip("/") + "/data").rstrip("/")
    norm = local_path if root.startswith("file:") else (lambda loc: loc)
    files = data_files(table)
    assert files, "the table has no data files"
    for f in files:
        path = f.file_path
        assert norm(path).startswith(norm(root) + "/"), f"{path} is not inside {root}"
        rest = norm(path)[len(norm(root)) + 1 :]
        assert all(seg not in ("", ".", "..") for seg in rest.split("/")), path
        assert exists(path), f"the manifest names {path}, which was not written there"
        folder = rest.rsplit("/", 1)[0] if "/" in rest else ""
        row = row_of(path) if row_of else None
        assert folder == partition_path(table, f.partition, sources, row), f"{path}: folder differs from Java's name"


# --- Generated values, written and read back ----------------------------------------------------

AWKWARD = [
    "", ".", "..", "...", "/", "\\", "%", "+", "?", "#", "&", "=", " ", "a b", "*", "~", "*~",
    "x/../../../../tmp/somewhere", "../", "/..", "x/..", "..\\..", "%2F", "%2e%2e", "%C3%A9", "%zz", "null",
    "s=1", "a/b=c", "\x00", "\t\n", "yé", "😀", "\U0010ffff", "中文", "\u00a0", "file:///etc/passwd",
]  # fmt: skip
ANY_CHAR = st.characters(exclude_categories=["Cs"])  # every plane, astral included; no lone surrogates
STRINGS = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(ANY_CHAR, max_size=8),
    st.text(st.sampled_from("./\\%+?# "), max_size=12),
    st.text(ANY_CHAR, min_size=50, max_size=150),  # long: often over the 255 bytes a name may have
)
BINARIES = st.one_of(st.binary(max_size=8), st.binary(min_size=100, max_size=250), st.sampled_from([b"", b"\xfb\xff", b"\x00"]))

NAME_MAX = 255  # bytes in a local file name
_counter = itertools.count()


def too_long(field: str, human_value: str) -> bool:
    return len((java_escape(field) + "=" + java_escape(human_value)).encode()) > NAME_MAX


def write_and_check(catalog_dir: CatalogDir, pyiceberg_catalog: Any, data: pa.Table, partitioning: list[Any], long_fields: list[str]) -> None:
    """Write data as a new table; PyIceberg and DuckDB read every row back, every file is where its
    location says, and no file appears anywhere but inside the table. A value too long for a file
    name fails the write with a ValidationError naming its field, and leaves nothing behind."""
    name = f"t{next(_counter)}"
    before = files_under(catalog_dir.root)
    table_dir = str(catalog_dir.root / "wh" / "db.db" / name)
    event("too long for a file name" if long_fields else "written")
    if long_fields:
        with pytest.raises(ig.ValidationError) as e:
            ig.writeTo(data, f"local.db.{name}").partitionedBy(*partitioning).create()
        assert any(f'"{f}"' in str(e.value) for f in long_fields), str(e.value)
        assert not pyiceberg_catalog.table_exists(f"db.{name}")
        assert files_under(catalog_dir.root) - before == set(), "a failed write left files behind"
        return
    ig.writeTo(data, f"local.db.{name}").partitionedBy(*partitioning).create()
    new = files_under(catalog_dir.root) - before
    assert all(p.startswith(table_dir + "/") for p in new), sorted(p for p in new if not p.startswith(table_dir + "/"))

    table = pyiceberg_catalog.load_table(f"db.{name}")
    assert_same_rows(table.scan().to_arrow(), data)
    assert_same_rows(duckdb_scan(table.metadata_location), data)
    sources = {f.name: f.type for f in data.schema}
    check_layout(table, sources, lambda loc: os.path.isfile(local_path(loc)))
    # Every file written is one the metadata names (data) or metadata itself.
    named = {local_path(f.file_path) for f in data_files(table)}
    assert {p for p in new if "/data/" in p[len(table_dir) :]} == named


@examples(12)
@given(values=st.lists(st.one_of(st.none(), STRINGS), min_size=1, max_size=6))
def test_generated_strings(values: list[str | None], catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    data = pa.table({"id": pa.array(range(len(values)), pa.int64()), "s": pa.array(values, pa.string())})
    long = ["s"] if any(v is not None and too_long("s", v) for v in values) else []
    write_and_check(catalog_dir, pyiceberg_catalog, data, ["s", ig.truncate(3, "s")], long)


@examples(10)
@given(values=st.lists(st.one_of(st.none(), BINARIES), min_size=1, max_size=6))
def test_generated_binary(values: list[bytes | None], catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    data = pa.table({"id": pa.array(range(len(values)), pa.int64()), "b": pa.array(values, pa.binary())})
    long = ["b"] if any(v is not None and too_long("b", base64.b64encode(v).decode()) for v in values) else []
    write_and_check(catalog_dir, pyiceberg_catalog, data, ["b", ig.truncate(3, "b"), ig.bucket(8, "b")], long)


# Dates: Iceberg's int day numbers, short of DuckDB's +-infinity at the ends. Timestamps: microseconds
# as far as the hour transform's int result reaches (+-2^31 hours, about year +-245,000).
DAY_MIN, DAY_MAX = -(2**31) + 2, 2**31 - 2
MICROS_MIN, MICROS_MAX = -(2**31) * 3_600_000_000, (2**31 - 1) * 3_600_000_000
DAYS = st.one_of(st.integers(DAY_MIN, DAY_MAX), st.integers(-800_000, 3_000_000), st.sampled_from([DAY_MIN, DAY_MAX, -1, 0, -719529, -719528, 2932896, 2932897]))
MICROS = st.one_of(
    st.integers(MICROS_MIN, MICROS_MAX),
    st.integers(-(10**14), 10**14),
    st.sampled_from([MICROS_MIN, MICROS_MAX, -1, 0, 1, 1_500_000, 253402300800000000, -62198755200000000]),
)


@examples(12)
@given(rows=st.lists(st.tuples(st.one_of(st.none(), DAYS), st.one_of(st.none(), MICROS), st.one_of(st.none(), MICROS)), min_size=1, max_size=5))
def test_generated_dates_and_timestamps(rows: list[tuple[Any, Any, Any]], catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    data = pa.table(
        {
            "id": pa.array(range(len(rows)), pa.int64()),
            "d": pa.array([r[0] for r in rows], pa.date32()),
            "ts": pa.array([r[1] for r in rows], pa.timestamp("us")),
            "tz": pa.array([r[2] for r in rows], pa.timestamp("us", tz="UTC")),
        }
    )
    partitioning = ["d", ig.years("d"), ig.months("d"), "ts", ig.days("ts"), ig.hours("ts"), "tz", ig.months("tz"), ig.hours("tz")]
    write_and_check(catalog_dir, pyiceberg_catalog, data, partitioning, [])


# --- Fixed cases ----------------------------------------------------------------------------------


def test_too_long_value_is_a_validation_error_and_leaves_nothing(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    ok = pa.table({"id": pa.array([1, 2], pa.int64()), "s": pa.array(["a", "b"])})
    ig.writeTo(ok, "local.db.t").partitionedBy("s").create()
    snapshots = [s.snapshot_id for s in pyiceberg_catalog.load_table("db.t").metadata.snapshots]
    before = files_under(catalog_dir.root)
    # Many partitions first (their files are written, then deleted), the long value last.
    long_value = "é" * 200
    bad = pa.table({"id": pa.array(range(40), pa.int64()), "s": pa.array([f"p{i}" for i in range(39)] + [long_value])})
    for run in [lambda: ig.writeTo(bad, "local.db.t").append(), lambda: ig.writeTo(bad, "local.db.t2").partitionedBy("s").create()]:
        with pytest.raises(ig.ValidationError) as e:
            run()
        msg = str(e.value)
        assert '"s"' in msg and "éééé" in msg and len(msg) < 600, msg
    assert [s.snapshot_id for s in pyiceberg_catalog.load_table("db.t").metadata.snapshots] == snapshots
    assert not pyiceberg_catalog.table_exists("db.t2")
    assert files_under(catalog_dir.root) == before, "the failed writes left files behind"
    # A value just short of the limit is written ("s=" + 253 bytes is 255).
    edge = pa.table({"id": pa.array([3], pa.int64()), "s": pa.array(["x" * 253])})
    ig.writeTo(edge, "local.db.t").append()
    assert_same_rows(pyiceberg_catalog.load_table("db.t").scan().to_arrow(), pa.concat_tables([ok, edge]))


def test_write_data_path_is_honoured(catalog_dir: CatalogDir, pyiceberg_catalog: Any, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere data"
    data = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "s": pa.array(["x/..", "é", None, "x/.."])})
    props = {"write.data.path": f"file://{elsewhere}/", "write.delete.mode": "merge-on-read"}
    w = ig.writeTo(data, "local.db.t").partitionedBy("s")
    for k, v in props.items():
        w = w.tableProperty(k, v)
    w.create()
    ig.writeTo(data, "local.db.t").append()
    table = pyiceberg_catalog.load_table("db.t")
    assert_same_rows(table.scan().to_arrow(), pa.concat_tables([data, data]))
    root = f"file://{elsewhere}"
    check_layout(table, {"s": pa.string()}, lambda loc: os.path.isfile(local_path(loc)), data_root=root)
    # Row-level changes put their files there too: a merge-on-read delete writes its delete files
    # beside the data files.
    ig.table("local.db.t").delete("id = 1")
    table = pyiceberg_catalog.load_table("db.t")
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [2, 2, 3, 3, 4, 4]
    deletes = [f.file_path for task in table.scan().plan_files() for f in task.delete_files]
    assert deletes and all(p.startswith(root + "/s=x%2F..") and os.path.isfile(local_path(p)) for p in deletes), deletes
    assert not (catalog_dir.root / "wh" / "db.db" / "t" / "data").exists()


# --- Spark writes the same data: same folder names, and each engine reads the other's table -----

AWKWARD_ROWS = 10


def awkward_table() -> pa.Table:
    utc = dt.timezone.utc
    n = AWKWARD_ROWS
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "s": pa.array(["yé", "a b", "*~", "x/../../../../tmp/somewhere", None, "", "..", "😀%", "+?#&=", "x/.."]),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(5, 3, 1, 1, 2, 3, 500000), None, dt.datetime(2024, 1, 1, 0, 0, 1),
                 dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59), dt.datetime(2000, 2, 29, 12), dt.datetime(1970, 1, 1), dt.datetime(2024, 6, 1, 0, 0, 0, 120)],
                pa.timestamp("us"),
            ),
            "tstz": pa.array(
                [dt.datetime(2024, 1, 1, tzinfo=utc), dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=utc), dt.datetime(5, 3, 1, tzinfo=utc), None,
                 dt.datetime(2024, 1, 1, 0, 0, 0, 10, tzinfo=utc), dt.datetime(1, 1, 1, tzinfo=utc), dt.datetime(9999, 12, 31, 23, tzinfo=utc),
                 dt.datetime(2000, 2, 29, tzinfo=utc), dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=utc), dt.datetime(2024, 6, 1, 12, 30, tzinfo=utc)],
                pa.timestamp("us", tz="UTC"),
            ),
            "d": pa.array(
                [dt.date(2024, 1, 1), dt.date(1969, 12, 31), dt.date(5, 3, 1), None, dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1000, 1, 1), dt.date(999, 12, 31),
                 dt.date(1970, 1, 1), dt.date(2024, 2, 29)],
                pa.date32(),
            ),
            "dec": pa.array([decimal.Decimal(x) if x else None for x in ["0.00000010", "0E-8", "-12.5", None, "0.00000100", "1", "-0.00000001", "12.34567891", "0.000001", "-0.0000001"]], pa.decimal128(10, 8)),
            "dbl": pa.array([float("nan"), -0.0, 1e10, None, 1e-5, 0.001, 1234567.0, 12345678.0, 0.0, -1.5e-7]),
            "flt": pa.array([float("nan"), -0.0, 1e10, None, 1e-5, 0.1, 1.5, float("inf"), 3.4028235e38, -1.0], pa.float32()),
            "bin": pa.array([b"\xfb\xff", b"", None, b"a", b"ab", b"abc", b"\x00", b"/+=", b"\xff" * 3, b"x/.."]),
            "flag": pa.array([True, False, None, True, False, True, False, True, False, True]),
        }
    )  # fmt: skip


SPARK_COLUMNS = "id BIGINT, s STRING, ts TIMESTAMP_NTZ, tstz TIMESTAMP, d DATE, dec DECIMAL(10,8), dbl DOUBLE, flt FLOAT, bin BINARY, flag BOOLEAN"
SPARK_PARTITIONS = "s, truncate(2, s), bucket(3, s), ts, tstz, d, dec, dbl, flt, bin, flag, years(d), months(ts), hours(tstz)"
OUR_PARTITIONS: list[Any] = ["s", ig.truncate(2, "s"), ig.bucket(3, "s"), "ts", "tstz", "d", "dec", "dbl", "flt", "bin", "flag", ig.years("d"), ig.months("ts"), ig.hours("tstz")]


def folders(table: Any) -> dict[int, str]:
    """id -> partition folder relative to the data root (every file of these tables holds one row)."""
    root = local_path(table.location().rstrip("/")) + "/data/"
    out = {}
    for f in data_files(table):
        path = local_path(f.file_path)
        assert path.startswith(root) and os.path.isfile(path), f.file_path
        ids = pq.read_table(path, columns=["id"])["id"].to_pylist()
        assert len(ids) == 1, (f.file_path, ids)
        out[ids[0]] = path[len(root) :].rsplit("/", 1)[0]
    return out


def spark_table(spark: Any, name: str) -> pa.Table:
    return spark.sql(f"SELECT * FROM {name}").toArrow()


def assert_same_by_id(actual: pa.Table, expected: pa.Table, reader: str) -> None:
    """Same rows by id, floats compared by their repr (NaN equals NaN, -0.0 is not 0.0)."""
    schema = pa.schema([pa.field(f.name, f.type, True) for f in expected.schema])

    def rows(t: pa.Table) -> list[tuple[Any, ...]]:
        t = t.select(expected.column_names).cast(schema)
        return sorted(tuple(repr(v) if isinstance(v, float) else v for v in r.values()) for r in t.to_pylist())

    assert rows(actual) == rows(expected), reader


def test_spark_and_we_name_partition_folders_alike(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    data = awkward_table()
    spark.createDataFrame(data).createOrReplaceTempView("awkward")
    spark.sql(f"CREATE TABLE {spark_catalog}.db.by_spark ({SPARK_COLUMNS}) USING iceberg PARTITIONED BY ({SPARK_PARTITIONS})")
    spark.sql(f"INSERT INTO {spark_catalog}.db.by_spark SELECT * FROM awkward")
    ig.writeTo(data, "local.db.by_us").partitionedBy(*OUR_PARTITIONS).create()

    theirs, ours = pyiceberg_catalog.load_table("db.by_spark"), pyiceberg_catalog.load_table("db.by_us")
    assert [f.name for f in ours.spec().fields] == [f.name for f in theirs.spec().fields]
    spark_folders, our_folders = folders(theirs), folders(ours)
    assert len(spark_folders) == AWKWARD_ROWS
    for i in range(AWKWARD_ROWS):
        assert our_folders[i].split("/") == spark_folders[i].split("/"), f"row {i}"
    # ... and both are Java's names as written down here.
    sources = {f.name: f.type for f in data.schema}
    for t in (theirs, ours):
        for f in data_files(t):
            assert local_path(f.file_path).rsplit("/", 1)[0].endswith("/" + partition_path(t, f.partition, sources, first_row(f.file_path))), f.file_path

    # Each engine reads the other's table (and its own).
    assert_same_by_id(spark_table(spark, f"{spark_catalog}.db.by_us"), data, "spark")
    assert_same_by_id(ig.table("local.db.by_spark").to_arrow(), data, "pyiceberg-go")
    assert_same_by_id(ours.scan().to_arrow(), data, "pyiceberg")

    # Row-level changes on Spark's table open Spark's files: copy-on-write rewrites one, merge-on-read
    # writes a delete file beside another (in the folder Spark named); Spark reads the result.
    ig.table("local.db.by_spark").delete("id = 0")
    spark.sql(f"ALTER TABLE {spark_catalog}.db.by_spark SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')")
    ig.table("local.db.by_spark").delete("id = 6")
    src = pa.table({"id": pa.array([9, 42], pa.int64()), "s": pa.array(["merged/..", "new é"])})
    (
        ig.mergeInto(src, "local.db.by_spark", "target.id = source.id")
        .whenMatched().update({"s": "source.s"})
        .whenNotMatched().insert({"id": "source.id", "s": "source.s"})
        .merge()
    )  # fmt: skip
    expected = {i: s for i, s in zip(data["id"].to_pylist(), data["s"].to_pylist()) if i not in (0, 6)} | {9: "merged/..", 42: "new é"}
    for reader, got in [
        ("spark", spark_table(spark, f"{spark_catalog}.db.by_spark")),
        ("pyiceberg", pyiceberg_catalog.load_table("db.by_spark").scan().to_arrow()),
        ("pyiceberg-go", ig.table("local.db.by_spark").to_arrow()),
    ]:
        assert dict(zip(got["id"].to_pylist(), got["s"].to_pylist())) == expected, reader
    theirs = pyiceberg_catalog.load_table("db.by_spark")
    check_layout(theirs, sources, lambda loc: os.path.isfile(local_path(loc)), row_of=first_row)
    pairs = [(task.file, d) for task in theirs.scan().plan_files() for d in task.delete_files]
    assert pairs, "merge-on-read wrote no delete file"
    for data_file, delete_file in pairs:
        path = local_path(delete_file.file_path)
        assert os.path.isfile(path), delete_file.file_path
        assert path.rsplit("/", 1)[0] == local_path(data_file.file_path).rsplit("/", 1)[0], "the delete file is not beside its data file"


# --- S3 (versitygw): keys are exactly the recorded locations ---------------------------------------


def s3_keys(s3: S3Server) -> set[str]:
    """Every object of the bucket, as an s3:// location."""
    return {"s3://" + p for p in s3.files("")}


@pytest.fixture
def s3_catalog(s3_server: S3Server, tmp_path: Path) -> Any:
    """Catalog "s3" (SQLite) with its warehouse in the S3 bucket under a fresh prefix, and PyIceberg on it."""
    from pyiceberg.catalog.sql import SqlCatalog

    prefix = "paths-" + os.urandom(5).hex()
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 's3cat.db'}", "warehouse": f"s3://{s3_server.bucket}/{prefix}/wh", **s3_server.props()}
    ig.configure(catalogs={"s3": props})
    cat = SqlCatalog("s3", **{k: v for k, v in props.items() if k != "type"})
    cat.create_namespace_if_not_exists("db")
    return cat


def s3_write_and_check(s3: S3Server, cat: Any, data: pa.Table, partitioning: list[Any]) -> Any:
    name = f"t{next(_counter)}"
    before = s3_keys(s3)
    ig.writeTo(data, f"s3.db.{name}").partitionedBy(*partitioning).create()
    table = cat.load_table(f"db.{name}")
    after = s3_keys(s3)
    location = table.location().rstrip("/")
    assert all(k.startswith(location + "/") for k in after - before), sorted(after - before)
    assert_same_rows(table.scan().to_arrow(), data)
    assert_same_rows(ig.table(f"s3.db.{name}").to_arrow(), data)
    check_layout(table, {f.name: f.type for f in data.schema}, lambda loc: loc in after)
    for f in data_files(table):  # versitygw keeps objects as files named by their keys
        assert (s3.root / f.file_path.removeprefix("s3://")).is_file(), f.file_path
    return table


SHORT_STRINGS = st.one_of(st.sampled_from(AWKWARD), st.text(ANY_CHAR, max_size=8), st.text(st.sampled_from("./\\%+?# "), max_size=12))


@examples(6)
@given(values=st.lists(st.one_of(st.none(), SHORT_STRINGS), min_size=1, max_size=5))
def test_generated_strings_on_s3(values: list[str | None], s3_server: S3Server, s3_catalog: Any) -> None:
    data = pa.table({"id": pa.array(range(len(values)), pa.int64()), "s": pa.array(values, pa.string())})
    s3_write_and_check(s3_server, s3_catalog, data, ["s", ig.truncate(3, "s")])


def test_s3_dot_dot_slash_and_percent(s3_server: S3Server, s3_catalog: Any) -> None:
    values = ["x/..", "..", "../y%", "%", "/", "%2F..%2F", "x/../../../../tmp/somewhere", "a b+c", "yé", None]
    data = pa.table({"id": pa.array(range(len(values)), pa.int64()), "s": pa.array(values)})
    s3_write_and_check(s3_server, s3_catalog, data, ["s"])
    name = f"db.t{next(_counter) - 1}"
    # A row-level change reads and rewrites the files under the awkward keys (and deletes by key).
    ig.table(f"s3.{name}").delete("s = 'x/..' OR s = '..'")
    ig.table(f"s3.{name}").update({"s": "'a/..'"}, where="id = 2")
    got = s3_catalog.load_table(name).scan().to_arrow()
    assert sorted(zip(got["id"].to_pylist(), got["s"].to_pylist()), key=lambda r: r[0]) == [
        (i, "a/.." if i == 2 else v) for i, v in enumerate(values) if v not in ("x/..", "..")
    ]
    check_layout(s3_catalog.load_table(name), {"s": pa.string()}, lambda loc: loc in s3_keys(s3_server))


def test_s3_key_too_long_is_a_validation_error_and_leaves_nothing(s3_server: S3Server, s3_catalog: Any) -> None:
    before = s3_keys(s3_server)
    data = pa.table({"id": pa.array(range(3), pa.int64()), "s": pa.array(["a", "b", "k" * 1100])})
    with pytest.raises(ig.ValidationError) as e:
        ig.writeTo(data, "s3.db.long").partitionedBy("s").create()
    assert '"s"' in str(e.value) and "kkkk" in str(e.value)
    assert not s3_catalog.table_exists("db.long")
    assert s3_keys(s3_server) == before
