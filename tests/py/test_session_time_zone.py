"""The session time zone (``spark.sql.session.timeZone``), differentially against Spark 4.1.

Time-zone-less timestamps written into ``timestamptz`` columns are wall-clock times
in the session time zone, instants written into ``timestamp`` columns become
wall-clock times there, and TIMESTAMP literals in filters and values are read in
it, as Spark does. Each test sets the zone explicitly on both engines, so nothing
depends on the machine's own zone.

Spark is fed time-zone-less values as TIMESTAMP_NTZ data: its INSERT then casts
them with java.time (a time in a DST gap moves forward by the gap, one in an
overlap takes the earlier offset). PySpark's ``createDataFrame`` from naive
pandas/pyarrow timestamps would instead localise them in Python with pyarrow,
which refuses ambiguous times; that is a client-side conversion, not Spark's.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import textwrap
import zoneinfo
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyiceberg_go as ig

from conftest import REPO, CatalogDir, run_python, snapshot_ids
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1)
KEY = "spark.sql.session.timeZone"


@contextmanager
def session_zone(spark: Any, catalog_dir: CatalogDir, zone: str, key: str = KEY) -> Iterator[None]:
    """Both engines in ``zone`` for the block; Spark back in UTC (the other tests' zone) after."""
    spark.conf.set(KEY, zone)
    ig.configure(catalogs={"local": catalog_dir.properties}, conf={key: zone})
    try:
        yield
    finally:
        spark.conf.set(KEY, "UTC")


def micros(d: dt.datetime) -> int:
    """Microseconds since the epoch: of an aware datetime's instant, of a naive one's wall-clock time."""
    if d.tzinfo is not None:
        d = d.astimezone(UTC).replace(tzinfo=None)
    return (d - EPOCH) // dt.timedelta(microseconds=1)


def transitions(zone: str, years: range) -> list[dt.datetime]:
    """The instants (aware, UTC) in ``years`` at which the zone's offset changes, by zoneinfo."""
    try:
        tz = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return []
    out = []
    for year in years:
        t = dt.datetime(year, 1, 1, tzinfo=UTC)
        end = dt.datetime(year + 1, 1, 1, tzinfo=UTC)
        prev = t.astimezone(tz).utcoffset()
        while t < end:
            n = t + dt.timedelta(hours=1)
            if n.astimezone(tz).utcoffset() != prev:
                lo, hi = t, n
                while hi - lo > dt.timedelta(seconds=1):
                    mid = lo + (hi - lo) / 2
                    mid = mid.replace(microsecond=0)
                    if mid.astimezone(tz).utcoffset() == prev:
                        lo = mid
                    else:
                        hi = mid
                out.append(hi)
                prev = n.astimezone(tz).utcoffset()
            t = n
    return out


def wall_edges(zone: str, years: range = range(2024, 2025)) -> list[dt.datetime]:
    """Wall-clock times the conversion gets wrong first: around every transition of ``years``
    (inside the gap or overlap too), before the zone's first rule, pre-1970 and far-future values."""
    out = [
        dt.datetime(1, 1, 1),
        dt.datetime(1800, 6, 1),
        dt.datetime(1883, 11, 18, 12, 2),
        dt.datetime(1900, 1, 1),
        dt.datetime(1918, 3, 31, 2, 30),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1970, 1, 1),
        dt.datetime(2200, 3, 9, 2, 30),
        dt.datetime(2200, 11, 2, 1, 30),
        dt.datetime(2500, 7, 1, 12),
        dt.datetime(9999, 12, 30, 23, 59, 59, 999999),
    ]
    tz = zoneinfo.ZoneInfo(zone) if "/" in zone else None
    for t in transitions(zone, years):
        before = (t - dt.timedelta(microseconds=1)).astimezone(tz).replace(tzinfo=None)
        after = t.astimezone(tz).replace(tzinfo=None)
        lo, hi = min(before, after), max(before, after)
        mid = lo + (hi - lo) / 2
        out += [lo, lo + dt.timedelta(microseconds=1), mid, hi, hi + dt.timedelta(seconds=1), hi - dt.timedelta(microseconds=1)]
    return out


def instant_edges(zone: str) -> list[dt.datetime]:
    """Instants around every 2024 transition (both instants an overlap shows), pre-1970 and far future."""
    out = [
        dt.datetime(1, 1, 2, tzinfo=UTC),
        dt.datetime(1800, 6, 1, 4, 56, 2, tzinfo=UTC),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        dt.datetime(2200, 11, 2, 5, 30, tzinfo=UTC),
        dt.datetime(2200, 11, 2, 6, 30, tzinfo=UTC),
        dt.datetime(9999, 12, 30, tzinfo=UTC),
    ]
    for t in transitions(zone, range(2024, 2025)):
        out += [t + dt.timedelta(minutes=m) for m in (-60, -30, -1, 0, 1, 30, 60)]
        out.append(t - dt.timedelta(microseconds=1))
    return out


def near(anchors: list[dt.datetime]) -> st.SearchStrategy[dt.datetime]:
    """Datetimes within three hours of an anchor, to microseconds."""
    return st.builds(
        lambda a, d: a + d,
        st.sampled_from(anchors),
        st.timedeltas(min_value=-dt.timedelta(hours=3), max_value=dt.timedelta(hours=3)),
    )


def walls_strategy(zone: str) -> st.SearchStrategy[dt.datetime]:
    any_wall = st.datetimes(min_value=dt.datetime(1700, 1, 1), max_value=dt.datetime(2300, 1, 1))
    edges = wall_edges(zone)[11:]
    return st.one_of(any_wall, near(edges)) if edges else any_wall


def instants_strategy(zone: str) -> st.SearchStrategy[dt.datetime]:
    any_instant = st.datetimes(min_value=dt.datetime(1700, 1, 1), max_value=dt.datetime(2300, 1, 1), timezones=st.just(UTC))
    edges = transitions(zone, range(2024, 2025))
    return st.one_of(any_instant, near(edges)) if edges else any_instant


def spark_ntz_frame(spark: Any, ids: list[int], walls: list[dt.datetime | None]) -> Any:
    from pyspark.sql.types import LongType, StructField, StructType, TimestampNTZType

    schema = StructType([StructField("id", LongType()), StructField("tz", TimestampNTZType()), StructField("ntz", TimestampNTZType())])
    return spark.createDataFrame([(i, w, w) for i, w in zip(ids, walls)], schema)


def spark_ltz_frame(spark: Any, ids: list[int], instants: list[dt.datetime | None]) -> Any:
    from pyspark.sql.types import LongType, StructField, StructType, TimestampType

    schema = StructType([StructField("id", LongType()), StructField("tz", TimestampType()), StructField("ntz", TimestampType())])
    return spark.createDataFrame([(i, t, t) for i, t in zip(ids, instants)], schema)


def arrow_frame(ids: list[int], values: list[dt.datetime | None], typ: pa.DataType) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "tz": pa.array(values, typ), "ntz": pa.array(values, typ)})


def stored(name: str) -> list[tuple[Any, ...]]:
    """Rows of table ``name`` as we read them, timestamps as int64 micros, sorted by id."""
    t = ig.table(name).to_arrow()
    cols = []
    for c in t.column_names:
        col = t[c]
        if pa.types.is_timestamp(col.type):
            col = col.cast(pa.int64())
        elif pa.types.is_date(col.type):
            col = col.cast(pa.int32())
        cols.append(col.to_pylist())
    return sorted(zip(*cols), key=lambda r: r[t.column_names.index("id")])


def spark_partitions(spark: Any, name: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, _partition.tz_hour, _partition.ntz_day FROM {name}").collect())


@pytest.mark.parametrize("zone", ["America/New_York", "Australia/Lord_Howe", "+05:30"])
def test_appends_convert_like_spark(spark: Any, spark_catalog: str, catalog_dir: CatalogDir, zone: str) -> None:
    """Naive values into timestamptz and timestamp columns, then instants into both, through
    Spark and through us into twin tables Spark created; equal value by value, and equal
    partition tuples (hours of the converted instant, days of the converted wall time)."""
    with session_zone(spark, catalog_dir, zone):
        for t in ("s", "o"):
            spark.sql(f"CREATE TABLE {spark_catalog}.db.{t} (id BIGINT, tz TIMESTAMP, ntz TIMESTAMP_NTZ) USING iceberg "
                      "PARTITIONED BY (hours(tz), days(ntz))")
        next_id = [0]

        def append(walls: list[dt.datetime | None], instants: list[dt.datetime | None]) -> None:
            ids = list(range(next_id[0], next_id[0] + len(walls)))
            jds = list(range(ids[-1] + 1 if ids else next_id[0], (ids[-1] + 1 if ids else next_id[0]) + len(instants)))
            next_id[0] += len(walls) + len(instants)
            if walls:
                spark_ntz_frame(spark, ids, walls).writeTo(f"{spark_catalog}.db.s").append()
                ig.writeTo(arrow_frame(ids, walls, pa.timestamp("us")), "local.db.o").append()
            if instants:
                spark_ltz_frame(spark, jds, instants).writeTo(f"{spark_catalog}.db.s").append()
                ig.writeTo(arrow_frame(jds, instants, pa.timestamp("us", tz="UTC")), "local.db.o").append()
            assert stored("local.db.o") == stored("local.db.s")
            assert spark_partitions(spark, f"{spark_catalog}.db.o") == spark_partitions(spark, f"{spark_catalog}.db.s")

        append(wall_edges(zone) + [None], instant_edges(zone) + [None])

        @settings(max_examples=4, deadline=None, derandomize=True, database=None)
        @given(st.lists(walls_strategy(zone), min_size=1, max_size=25), st.lists(instants_strategy(zone), min_size=1, max_size=25))
        def more(walls: list[dt.datetime], instants: list[dt.datetime]) -> None:
            append(walls, instants)

        more()


def test_pandas_and_every_unit_convert_like_spark(spark: Any, spark_catalog: str, catalog_dir: CatalogDir) -> None:
    """pandas' nanosecond timestamps (and s/ms inputs) into a table Spark created, in New York:
    the same values as Spark's cast of the microseconds they floor to."""
    zone = "America/New_York"
    walls = [w for w in wall_edges(zone) if dt.datetime(1678, 1, 1) < w < dt.datetime(2262, 1, 1)]
    with session_zone(spark, catalog_dir, zone):
        for t in ("s", "o"):
            spark.sql(f"CREATE TABLE {spark_catalog}.db.{t} (id BIGINT, tz TIMESTAMP, ntz TIMESTAMP_NTZ) USING iceberg")
        ids = list(range(len(walls)))
        spark_ntz_frame(spark, ids, walls).writeTo(f"{spark_catalog}.db.s").append()
        ns = pd.Series(pd.to_datetime(walls)) + pd.to_timedelta(789, unit="ns")  # floored away on write
        ig.writeTo(pd.DataFrame({"id": ids, "tz": ns, "ntz": ns}), "local.db.o").append()
        assert stored("local.db.o") == stored("local.db.s")
        whole = [w.replace(microsecond=0) for w in walls]
        for k, unit in enumerate(["s", "ms"], start=1):
            jds = [i + k * 1000 for i in ids]
            spark_ntz_frame(spark, jds, whole).writeTo(f"{spark_catalog}.db.s").append()
            ig.writeTo(arrow_frame(jds, whole, pa.timestamp(unit)), "local.db.o").append()
        assert stored("local.db.o") == stored("local.db.s")


def test_the_types_spark_casts_and_no_others(spark: Any, spark_catalog: str, catalog_dir: CatalogDir) -> None:
    """Writing each input type into date, timestamp and timestamptz columns: we accept exactly what
    Spark's store assignment casts (the old error is gone only there), with Spark's values."""
    from pyspark.errors import PySparkException
    from pyspark.sql.types import (
        DateType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampNTZType,
        TimestampType,
    )

    zone = "America/Santiago"  # midnight 2024-09-08 falls in its DST gap
    wall = dt.datetime(2024, 9, 8, 0, 30)
    inputs = {
        "date": (DateType(), dt.date(2024, 9, 8), pa.date32()),
        "ntz": (TimestampNTZType(), wall, pa.timestamp("us")),
        "ltz": (TimestampType(), dt.datetime(2024, 9, 8, 4, 30, tzinfo=UTC), pa.timestamp("us", tz="UTC")),
        "string": (StringType(), "2024-09-08 00:30:00", pa.string()),
        "long": (LongType(), 5, pa.int64()),
    }
    with session_zone(spark, catalog_dir, zone):
        n = 0
        for column in ("DATE", "TIMESTAMP", "TIMESTAMP_NTZ"):
            for name, (stype, value, atype) in inputs.items():
                n += 1
                for t in ("s", "o"):
                    spark.sql(f"CREATE TABLE {spark_catalog}.db.{t}{n} (id BIGINT, c {column}) USING iceberg")
                schema = StructType([StructField("id", LongType()), StructField("c", stype)])
                try:
                    spark.createDataFrame([(1, value)], schema).writeTo(f"{spark_catalog}.db.s{n}").append()
                    spark_ok = True
                except PySparkException as e:
                    assert "CANNOT_SAFELY_CAST" in str(e) or "INCOMPATIBLE" in str(e), e
                    spark_ok = False
                try:
                    ig.writeTo(pa.table({"id": pa.array([1], pa.int64()), "c": pa.array([value], atype)}), f"local.db.o{n}").append()
                    ours_ok = True
                except ig.ValidationError:
                    ours_ok = False
                assert ours_ok == spark_ok, f"{name} into {column}: Spark {'casts' if spark_ok else 'refuses'}, we {'accept' if ours_ok else 'refuse'}"
                assert stored(f"local.db.o{n}") == stored(f"local.db.s{n}"), f"{name} into {column}"
                assert len(snapshot_ids_of(f"local.db.o{n}")) == int(ours_ok)


def snapshot_ids_of(name: str) -> list[int]:
    return [s["snapshot_id"] for s in ig.table(name).snapshots()]


DML_ZONES = {
    # zone: a TIMESTAMP literal that is a UTC midnight there (so overwrite(cond) below
    # deletes whole days(tz) partitions, which Spark requires), one in a DST gap, and
    # the years whose transitions the data surrounds
    "America/New_York": ("1969-12-31 19:00:00", "2024-03-10 02:30:00", range(2024, 2025)),
    "Asia/Kolkata": ("1970-01-01 05:30:00", "1942-09-01 00:15:00", range(1941, 1946)),
}


@pytest.mark.parametrize("zone", list(DML_ZONES))
def test_filters_updates_merges_and_overwrites_like_spark(spark: Any, spark_catalog: str, catalog_dir: CatalogDir, zone: str) -> None:
    """The same DML, with TIMESTAMP literals read in the session zone and values assigned
    across timestamp/timestamptz/date, on twin tables; equal after every step."""
    midnight, in_gap, years = DML_ZONES[zone]
    walls = [w for w in wall_edges(zone, years) if w.year > 1] + [dt.datetime(2024, 1, 1, 12) + dt.timedelta(hours=7 * i) for i in range(30)]
    spark_t, ours_t = f"{spark_catalog}.db.s", "local.db.o"

    def both(spark_sql: str, ours: Any) -> None:
        before = stored(spark_t)
        spark.sql(spark_sql.format(t=spark_t))
        ours()
        assert stored(spark_t) != before, f"{spark_sql} changes nothing: a weak test"
        assert stored(ours_t) == stored(spark_t), spark_sql

    with session_zone(spark, catalog_dir, zone):
        for t in ("s", "o"):
            spark.sql(f"CREATE TABLE {spark_catalog}.db.{t} (id BIGINT, tz TIMESTAMP, ntz TIMESTAMP_NTZ, d DATE) USING iceberg "
                      "PARTITIONED BY (days(tz))")
        ids = list(range(len(walls)))
        spark_ntz_frame(spark, ids, walls).selectExpr("id", "tz", "ntz", "CAST(ntz AS DATE) AS d").writeTo(spark_t).append()
        days = pa.array([w.date() for w in walls], pa.date32())
        ig.writeTo(arrow_frame(ids, walls, pa.timestamp("us")).append_column("d", days), ours_t).append()
        assert stored(ours_t) == stored(spark_t)

        # (the hour after a gap's start is a single instant: take three)
        both(f"DELETE FROM {{t}} WHERE tz >= TIMESTAMP '{in_gap}' AND tz < TIMESTAMP '{bump(in_gap, hours=3)}'",
             lambda: ig.table(ours_t).delete(f"tz >= TIMESTAMP '{in_gap}' AND tz < TIMESTAMP '{bump(in_gap, hours=3)}'"))
        both("DELETE FROM {t} WHERE ntz < TIMESTAMP '1900-01-01 00:00:00'",
             lambda: ig.table(ours_t).delete("ntz < TIMESTAMP '1900-01-01 00:00:00'"))
        both("UPDATE {t} SET ntz = tz, d = tz WHERE id % 4 = 0",
             lambda: ig.table(ours_t).update({"ntz": "tz", "d": "tz"}, where="id % 4 = 0"))
        wall_0230 = "CAST(concat(CAST(d AS STRING), ' 02:30:00') AS TIMESTAMP_NTZ)"  # in the gap on gap days
        both(f"UPDATE {{t}} SET tz = {wall_0230} WHERE id % 4 = 1",
             lambda: ig.table(ours_t).update({"tz": wall_0230}, where="id % 4 = 1"))
        both(f"UPDATE {{t}} SET tz = TIMESTAMP_NTZ '{in_gap}', ntz = TIMESTAMP '{in_gap}' WHERE id % 4 = 2",
             lambda: ig.table(ours_t).update({"tz": f"TIMESTAMP_NTZ '{in_gap}'", "ntz": f"TIMESTAMP '{in_gap}'"}, where="id % 4 = 2"))
        both("UPDATE {t} SET tz = d, ntz = date_trunc('HOUR', tz) WHERE id % 4 = 3",
             lambda: ig.table(ours_t).update({"tz": "d", "ntz": "date_trunc('HOUR', tz)"}, where="id % 4 = 3"))

        # MERGE from naive data: ON and conditions compare across the types; values are cast.
        src_walls = walls[::3] + [dt.datetime(2024, 3, 10, 2, 45), dt.datetime(2024, 11, 3, 1, 45)]
        src_ids = [i * 3 for i in range(len(walls[::3]))] + [10_000, 10_001]
        from pyspark.sql.types import LongType, StructField, StructType, TimestampNTZType

        schema = StructType([StructField("id", LongType()), StructField("tz", TimestampNTZType())])
        spark.createDataFrame(list(zip(src_ids, src_walls)), schema).createOrReplaceTempView("src")
        source = pa.table({"id": pa.array(src_ids, pa.int64()), "tz": pa.array(src_walls, pa.timestamp("us"))})
        both(f"MERGE INTO {{t}} AS target USING src AS source ON target.id = source.id "
             f"WHEN MATCHED AND source.tz > TIMESTAMP '{midnight}' THEN UPDATE SET target.tz = source.tz, target.d = source.tz "
             "WHEN NOT MATCHED THEN INSERT (id, tz, ntz, d) VALUES (source.id, source.tz, source.tz, source.tz)",
             lambda: ig.mergeInto(source, ours_t, "target.id = source.id")
             .whenMatched(f"source.tz > TIMESTAMP '{midnight}'").update({"tz": "source.tz", "d": "source.tz"})
             .whenNotMatched().insert({"id": "source.id", "tz": "source.tz", "ntz": "source.tz", "d": "source.tz"})
             .merge())

        # overwrite(cond) and overwritePartitions with naive data.
        new_walls = [dt.datetime(1969, 12, 31, 20), dt.datetime(1960, 5, 5, 5, 5), dt.datetime(2024, 11, 3, 1, 30), dt.datetime(2024, 3, 10, 23, 30)]
        new_ids = [20_000 + i for i in range(len(new_walls))]
        from pyspark.sql.functions import expr

        def frames(k: slice) -> tuple[Any, pa.Table]:
            sp = spark_ntz_frame(spark, new_ids[k], new_walls[k]).selectExpr("id", "tz", "ntz", "CAST(NULL AS DATE) AS d")
            ours = arrow_frame(new_ids[k], new_walls[k], pa.timestamp("us"))
            return sp, ours.append_column("d", pa.nulls(ours.num_rows, pa.date32()))

        sp, ours = frames(slice(0, 2))
        sp.writeTo(spark_t).overwrite(expr(f"tz < TIMESTAMP '{midnight}'"))
        ig.writeTo(ours, ours_t).overwrite(f"tz < TIMESTAMP '{midnight}'")
        assert stored(ours_t) == stored(spark_t)
        sp, ours = frames(slice(2, None))
        sp.writeTo(spark_t).overwritePartitions()
        ig.writeTo(ours, ours_t).overwritePartitions()
        assert stored(ours_t) == stored(spark_t)


def bump(text: str, hours: int) -> str:
    return (dt.datetime.fromisoformat(text) + dt.timedelta(hours=hours)).isoformat(sep=" ")


ZONE_IDS = [
    "Europe/Paris", "+05:30", "UTC+1", "GMT-08:00", "-08", "+5:30", "+05:3", "Z", "UTC", "PST", "EST", "CET", "US/Eastern",
    "Etc/GMT+5", "+0530", "+05:30:15", "UT+3", "GMT0", "UCT", "NZ-CHAT",
    "utc", "europe/paris", "Local", "localtime", "posixrules", "Factory", "+19:00", "UTC+", "Mars/Phobos", "", " UTC", "right/UTC",
]


def test_zone_ids_are_the_ones_spark_accepts(spark: Any, catalog_dir: CatalogDir) -> None:
    """An id Spark refuses for spark.sql.session.timeZone is an InvalidArgumentError naming the key."""
    from pyspark.errors import PySparkException

    ig.writeTo(pa.table({"id": pa.array([1], pa.int64())}), "local.db.t").create()
    for zone in ZONE_IDS:
        try:
            spark.conf.set(KEY, zone)
            spark_ok = True
        except PySparkException:
            spark_ok = False
        finally:
            spark.conf.set(KEY, "UTC")
        ig.configure(catalogs={"local": catalog_dir.properties}, conf={KEY: zone})
        try:
            ig.table("local.db.t").delete("false")
            ours_ok = True
        except ig.InvalidArgumentError as e:
            assert KEY in str(e) and repr(zone)[1:-1] in str(e), e
            ours_ok = False
        assert ours_ok == spark_ok, f"{zone!r}: Spark {'accepts' if spark_ok else 'refuses'} it"


@pytest.mark.parametrize("key", [KEY, "session.timeZone"])
def test_a_bad_zone_fails_every_operation_and_commits_nothing(catalog_dir: CatalogDir, pyiceberg_catalog: Any, key: str) -> None:
    naive = pa.table({"id": pa.array([1, 2], pa.int64()), "ts": pa.array([dt.datetime(2024, 1, 1), None], pa.timestamp("us"))})
    ig.writeTo(naive, "local.db.t").create()
    files = sorted(Path(catalog_dir.root).rglob("*"))
    before = snapshot_ids(pyiceberg_catalog, "db.t")
    ig.configure(catalogs={"local": catalog_dir.properties}, conf={key: "America/Nowhere"})
    operations = {
        "append": lambda: ig.writeTo(naive, "local.db.t").append(),
        "overwritePartitions": lambda: ig.writeTo(naive, "local.db.t").overwritePartitions(),
        "overwrite": lambda: ig.writeTo(naive, "local.db.t").overwrite("ts < TIMESTAMP '2030-01-01 00:00:00'"),
        "create": lambda: ig.writeTo(naive, "local.db.t2").create(),
        "delete": lambda: ig.table("local.db.t").delete("ts < TIMESTAMP '2030-01-01 00:00:00'"),
        "update": lambda: ig.table("local.db.t").update({"ts": "TIMESTAMP '2030-01-01 00:00:00'"}),
        "merge": lambda: ig.mergeInto(naive, "local.db.t", "target.id = source.id").whenMatched().updateAll().merge(),
    }
    for op in operations.values():
        with pytest.raises(ig.InvalidArgumentError, match=f"{key}.*America/Nowhere"):
            op()
    assert snapshot_ids(pyiceberg_catalog, "db.t") == before
    assert sorted(Path(catalog_dir.root).rglob("*")) == files, "a failed operation left files behind"


def test_default_zone_is_utc_whatever_the_machine_zone(tmp_path: Path) -> None:
    """No conf: time-zone-less values are UTC wall-clock times, also in a process whose TZ is Tokyo."""
    code = f"""
        import datetime as dt, time
        import pyarrow as pa
        import pyiceberg_go as ig
        assert time.localtime(0).tm_hour == 9  # the process really is in Tokyo
        ig.configure(catalogs={{"local": {{"type": "sql", "uri": "sqlite:///{tmp_path}/c.db", "warehouse": "file://{tmp_path}/wh"}}}})
        zoned = pa.table({{"ts": pa.array([0], pa.timestamp("us", tz="UTC"))}})
        ig.writeTo(zoned, "local.db.t").create()
        ig.writeTo(pa.table({{"ts": pa.array([dt.datetime(2024, 3, 10, 2, 30)], pa.timestamp("us"))}}), "local.db.t").append()
        ig.table("local.db.t").delete("ts = TIMESTAMP '1970-01-01 00:00:00'")
        print(ig.table("local.db.t").to_arrow()["ts"].cast(pa.int64()).to_pylist())
    """
    r = run_python(code, env={"TZ": "Asia/Tokyo"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str([micros(dt.datetime(2024, 3, 10, 2, 30))])


def test_zones_resolve_without_the_systems_tz_database(tmp_path: Path) -> None:
    """The library carries Go's tz database: with /usr/share/zoneinfo hidden (a private mount
    namespace), America/New_York still resolves, with its DST rules."""
    if shutil.which("unshare") is None or not Path("/usr/share/zoneinfo").is_dir():
        pytest.skip("needs unshare and a /usr/share/zoneinfo to hide")
    empty = tmp_path / "empty"
    empty.mkdir()
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare -rm is not permitted here: {probe.stderr.decode().strip()}")
    code = f"""
        import datetime as dt, os
        import pyarrow as pa
        import pyiceberg_go as ig
        assert not os.path.exists("/usr/share/zoneinfo/America/New_York")
        ig.configure(catalogs={{"local": {{"type": "sql", "uri": "sqlite:///{tmp_path}/c.db", "warehouse": "file://{tmp_path}/wh"}}}},
                     conf={{"spark.sql.session.timeZone": "America/New_York"}})
        ig.writeTo(pa.table({{"ts": pa.array([0], pa.timestamp("us", tz="UTC"))}}), "local.db.t").create()
        ig.writeTo(pa.table({{"ts": pa.array([dt.datetime(2024, 3, 10, 2, 30)], pa.timestamp("us"))}}), "local.db.t").append()
        print(sorted(ig.table("local.db.t").to_arrow()["ts"].cast(pa.int64()).to_pylist()))
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    r = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f'mount --bind "{empty}" /usr/share/zoneinfo && exec "$0" -c "$1"', sys.executable, textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )
    if r.returncode != 0 and "mount" in r.stderr and "Traceback" not in r.stderr:
        pytest.skip(f"cannot hide the tz database here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    # 02:30 is in New York's spring-forward gap: 03:30 EDT, 07:30Z.
    assert r.stdout.strip() == str([0, micros(dt.datetime(2024, 3, 10, 7, 30))])
