"""Row-level operations, differentially against Apache Spark 4.1 + Iceberg (Java).

The same sequence of writes runs on two tables from the same inputs, one driven by
Spark SQL / DataFrameWriterV2 and one by pyiceberg-go; the tables must hold the same
rows (read by Spark, PyIceberg and us after every step) and record the same snapshot
operations and record counters. Then we operate on tables Spark wrote, including
Spark's own position deletes (v2) and deletion vectors (v3).

The one deliberate difference in these sequences: a DELETE or UPDATE that matches
no row commits an empty snapshot in Spark (``delete`` when the filter is decided on
metadata, ``overwrite`` when rows are scanned) and nothing in pyiceberg-go.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import pyiceberg_go as ig

from conftest import assert_same_rows, snapshot_ids
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

UTC = dt.timezone.utc
BASE = dt.datetime(2024, 3, 9, 0, 0, tzinfo=UTC)
LEVELS = ["INFO", "WARN", "ERROR", None]
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("level", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("amount", pa.float64()),
        ("name", pa.string()),
    ]
)
SPARK_COLUMNS = "id BIGINT, level STRING, ts TIMESTAMP, amount DOUBLE, name STRING"


def rows(n: int, seed: int) -> pa.Table:
    """Deterministic rows; level, amount and name have nulls, ts spans about five days."""
    rng = range(n)
    return pa.table(
        {
            "id": pa.array([seed * 1000 + i for i in rng], pa.int64()),
            "level": pa.array([LEVELS[(i * 7 + seed) % 4] for i in rng], pa.string()),
            "ts": pa.array([BASE + dt.timedelta(minutes=37 * i + 11 * seed) for i in rng], pa.timestamp("us", tz="UTC")),
            "amount": pa.array([None if i % 9 == 4 else (i - 100) * 0.5 for i in rng], pa.float64()),
            "name": pa.array([None if i % 11 == 5 else f"{'abc'[i % 3]}{'xyz'[(i // 3) % 3]}-{i}" for i in rng], pa.string()),
        },
        schema=SCHEMA,
    )


@dataclass(frozen=True)
class Layout:
    ours: tuple[Any, ...]  # partitionedBy arguments
    spark: str  # PARTITIONED BY clause body ("" = unpartitioned)
    whole_delete: str  # a DELETE filter that matches whole files only
    whole_overwrite: str  # an overwrite(condition) that matches whole files only


LAYOUTS = {
    # After overwritePartitions replaced everything with the seed-3 rows, the seed-2
    # rows are appended again as a file of their own: id >= 2000 AND id < 3000 is that file.
    "unpartitioned": Layout((), "", "id >= 2000 AND id < 3000", "id >= 3000"),
    "identity": Layout(("level",), "level", "level IS NULL", "level = 'ERROR'"),
    "days_bucket": Layout(
        (ig.days("ts"), ig.bucket(4, "id")),
        "days(ts), bucket(4, id)",
        "ts < TIMESTAMP '2024-03-10 00:00:00'",
        "ts >= TIMESTAMP '2024-03-12 00:00:00'",
    ),
    "truncate": Layout((ig.truncate(2, "name"),), "truncate(2, name)", "name LIKE 'by%'", "name >= 'c' OR name IS NULL"),
}

# (layout, format version, row-level mode): every layout, every mode on both format versions.
CASES = [
    ("unpartitioned", "2", "copy-on-write"),
    ("unpartitioned", "3", "merge-on-read"),
    ("identity", "2", "merge-on-read"),
    ("identity", "3", "copy-on-write"),
    ("days_bucket", "3", "merge-on-read"),
    ("truncate", "2", "merge-on-read"),
]

# Counters of the snapshot summary compared between Spark's and our snapshot of a step.
RECORD_KEYS = ("added-records", "deleted-records", "total-records")
DELETE_KEYS = ("added-position-deletes", "removed-position-deletes", "total-position-deletes", "added-dvs", "removed-dvs")


def spark_read(spark: Any, table: str) -> pa.Table:
    return spark.sql(f"SELECT * FROM {table}").toArrow()


def spark_snapshots(spark: Any, table: str) -> list[tuple[str, dict[str, str]]]:
    rows_ = spark.sql(f"SELECT operation, summary FROM {table}.snapshots ORDER BY committed_at").collect()
    return [(r.operation, dict(r.summary)) for r in rows_]


def file_layout(catalog: Any, name: str) -> Counter[tuple[Any, ...]]:
    """The live files as (content, partition, record count): equal layouts must give equal counters."""
    if not snapshot_ids(catalog, name):
        return Counter()
    files = catalog.load_table(name).inspect.files()
    parts = [repr(sorted(p.items())) if p else "" for p in files["partition"].to_pylist()] if "partition" in files.column_names else [""] * files.num_rows
    out: Counter[tuple[Any, ...]] = Counter()
    deletes: Counter[str] = Counter()
    for content, part, count in zip(files["content"].to_pylist(), parts, files["record_count"].to_pylist()):
        if content == 0:
            out[(content, part, count)] += 1
        else:
            # Delete files are compared by the positions they hold per partition: on v2 Spark
            # rewrites a data file's earlier position delete file into its new one, we add a
            # second file (the README's documented difference).
            deletes[part] += count
    for part, count in deletes.items():
        out[("deletes", part, count)] += 1
    return out


def delete_file_formats(catalog: Any, name: str) -> set[str]:
    files = catalog.load_table(name).inspect.delete_files()
    return set(files["file_format"].to_pylist())


def spark_df(spark: Any, data: pa.Table, single_file: bool) -> Any:
    df = spark.createDataFrame(data)
    return df.coalesce(1) if single_file else df


@dataclass
class Step:
    name: str
    spark_new: int  # snapshots Spark committed in the step
    ours_new: int  # snapshots we committed in the step
    same_layout: bool  # both tables had the same files before the step
    spark_empty_op: str | None  # the step matches no row: the operation of Spark's empty commit


@dataclass
class Pair:
    """A Spark-driven table ``s`` and a pyiceberg-go-driven table ``o`` fed the same inputs."""

    spark: Any
    catalog: Any
    layout: Layout
    steps: list[Step] = field(default_factory=list)

    s = "local.db.s"
    o = "local.db.o"

    def counts(self) -> tuple[int, int]:
        s, o = (snapshot_ids(self.catalog, n) for n in ("db.s", "db.o"))
        return len(s), len(o)

    def step(self, name: str, spark_sql: str | None, spark_fn: Any, ours_fn: Any, spark_empty_op: str | None = None) -> None:
        before = self.counts()
        same = file_layout(self.catalog, "db.s") == file_layout(self.catalog, "db.o")
        if spark_sql is not None:
            self.spark.sql(spark_sql.format(t=self.s))
        else:
            spark_fn()
        ours_fn()
        after = self.counts()
        self.steps.append(Step(name, after[0] - before[0], after[1] - before[1], same, spark_empty_op))
        if spark_empty_op is None:  # a step that changes nothing is checked by its snapshots only (Spark is slow)
            self.check_contents(name)

    def check_contents(self, name: str) -> None:
        """Both tables hold the same rows whoever reads them: Spark, PyIceberg and us."""
        reference = spark_read(self.spark, self.s)
        readers = {
            "spark reads ours": spark_read(self.spark, self.o),
            "pyiceberg reads ours": self.catalog.load_table("db.o").scan().to_arrow(),
            "we read ours": ig.table(self.o).to_arrow(),
            "pyiceberg reads spark's": self.catalog.load_table("db.s").scan().to_arrow(),
            "we read spark's": ig.table(self.s).to_arrow(),
        }
        for reader, got in readers.items():
            try:
                assert_same_rows(got, reference)
            except AssertionError as e:
                raise AssertionError(f"after step {name!r}, {reader}: {e}") from None


@pytest.mark.parametrize(("layout_name", "version", "mode"), CASES)
def test_same_sequence_same_result(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, layout_name: str, version: str, mode: str) -> None:
    layout = LAYOUTS[layout_name]
    flat = not layout.spark
    props = {"format-version": version, "write.delete.mode": mode, "write.update.mode": mode}
    # Layout tuning only (no change to which rows a table holds): one Spark task per file it
    # rewrites, writing one file per partition, as we do; otherwise Spark's hash distribution
    # merges the files of a partition and later counters of rewritten files could not be compared.
    props |= {
        "write.delete.distribution-mode": "none",
        "write.update.distribution-mode": "none",
        "write.spark.fanout.enabled": "true",
        "read.split.open-file-cost": str(128 << 20),
    }
    pair = Pair(spark, pyiceberg_catalog, layout)
    a, b, c_all, d = rows(240, 1), rows(120, 2), rows(60, 3), rows(15, 4)
    # Covers some partitions of every layout (ERROR and null levels, a few days, buckets and prefixes).
    c = c_all.filter(pc.fill_null(pc.equal(c_all["level"], "ERROR"), True))

    def spark_create() -> None:
        tblprops = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
        parts = f" PARTITIONED BY ({layout.spark})" if layout.spark else ""
        spark.sql(f"CREATE TABLE {pair.s} ({SPARK_COLUMNS}) USING iceberg{parts} TBLPROPERTIES ({tblprops})")
        spark_df(spark, a, flat).writeTo(pair.s).append()

    def ours_create() -> None:
        w = ig.writeTo(a, pair.o)
        if layout.ours:
            w = w.partitionedBy(*layout.ours)
        for k, v in props.items():
            w = w.tableProperty(k, v)
        w.create()

    pair.step("create", None, spark_create, ours_create)
    pair.step("append", None, lambda: spark_df(spark, b, flat).writeTo(pair.s).append(), lambda: ig.writeTo(b, pair.o).append())
    pair.step("overwritePartitions", None, lambda: spark_df(spark, c, flat).writeTo(pair.s).overwritePartitions(), lambda: ig.writeTo(c, pair.o).overwritePartitions())
    if flat:
        # overwritePartitions replaced everything; the seed-2 rows come back as a file of their own.
        pair.step("append again", None, lambda: spark_df(spark, b, flat).writeTo(pair.s).append(), lambda: ig.writeTo(b, pair.o).append())

    delete_some = "amount > 40 OR level = 'WARN' OR NOT (name NOT LIKE '%7')"  # nulls in all three columns
    pair.step("delete some rows", f"DELETE FROM {{t}} WHERE {delete_some}", None, lambda: ig.table(pair.o).delete(delete_some))
    if mode == "merge-on-read":
        # Spark has just read our position deletes (v2) / deletion vectors (v3), not rewritten files.
        assert delete_file_formats(pyiceberg_catalog, "db.o") == delete_file_formats(pyiceberg_catalog, "db.s") == {("PUFFIN" if version == "3" else "PARQUET")}
    pair.step("delete whole files", f"DELETE FROM {{t}} WHERE {layout.whole_delete}", None, lambda: ig.table(pair.o).delete(layout.whole_delete))
    pair.step("delete nothing (metadata)", "DELETE FROM {t} WHERE id < 0", None, lambda: ig.table(pair.o).delete("id < 0"), "delete")
    pair.step("delete nothing (rows)", "DELETE FROM {t} WHERE id % 1000 = 999", None, lambda: ig.table(pair.o).delete("id % 1000 = 999"), "overwrite")

    sets = {"amount": "coalesce(amount, 0) + 1", "name": "upper(name)", "level": "CASE WHEN id % 2 = 0 THEN 'HOT' ELSE level END"}
    where = "level = 'INFO' OR amount IS NULL OR id % 3 = 0"
    set_sql = ", ".join(f"{k} = {v}" for k, v in sets.items())
    pair.step("update", f"UPDATE {{t}} SET {set_sql} WHERE {where}", None, lambda: ig.table(pair.o).update(sets, where=where))
    pair.step("update nothing", "UPDATE {t} SET amount = 0 WHERE id % 1000 = 998", None, lambda: ig.table(pair.o).update({"amount": "0"}, where="id % 1000 = 998"), "overwrite")

    from pyspark.sql import functions as F

    cond = layout.whole_overwrite
    pair.step(
        "overwrite(condition)",
        None,
        lambda: spark_df(spark, d, flat).writeTo(pair.s).overwrite(F.expr(cond)),
        lambda: ig.writeTo(d, pair.o).overwrite(cond),
    )

    check_snapshots(pair, mode, version)


def check_snapshots(pair: Pair, mode: str, version: str) -> None:
    """Spark's and our snapshots agree step by step, apart from the documented empty commits."""
    theirs, ours = spark_snapshots(pair.spark, pair.s), spark_snapshots(pair.spark, pair.o)
    assert len(theirs) == sum(s.spark_new for s in pair.steps)
    assert len(ours) == sum(s.ours_new for s in pair.steps)
    i = j = 0
    problems = []
    for st in pair.steps:
        if st.spark_empty_op is not None:
            # The documented difference: Spark commits an empty snapshot, we commit none.
            op, summary = theirs[i]
            assert (st.spark_new, st.ours_new, op) == (1, 0, st.spark_empty_op), st
            assert not [k for k in summary if k.startswith(("added-", "deleted-", "removed-"))], (st, summary)
            assert summary["total-records"] == theirs[i - 1][1]["total-records"], st
            i += 1
            continue
        if (st.spark_new, st.ours_new) != (1, 1):
            problems.append(f"{st.name}: spark committed {st.spark_new} snapshots, we {st.ours_new}")
            i += st.spark_new
            j += st.ours_new
            continue
        (op_s, sum_s), (op_o, sum_o) = theirs[i], ours[j]
        i += 1
        j += 1
        if op_s != op_o:
            problems.append(f"{st.name}: operation spark={op_s} ours={op_o}")
        keys = RECORD_KEYS + (DELETE_KEYS if mode == "merge-on-read" else ())
        if not st.same_layout:
            # Counters of rewritten files depend on the file layout; the live total must still agree
            # when no delete file hides rows.
            keys = ("total-records",) if mode == "copy-on-write" else ()
        if (
            mode == "merge-on-read"
            and str(version) == "2"
            and "added-position-deletes" in sum_s
            and "removed-position-delete-files" in sum_s
        ):
            # Documented difference (README): on v2 Spark rewrites a data file's earlier position
            # delete file into its new one; we add a second file. The positions deleted net of
            # that rewrite, and the totals, must still agree.
            def net(sm: dict[str, str]) -> int:
                return int(sm.get("added-position-deletes", "0")) - int(sm.get("removed-position-deletes", "0"))

            if net(sum_s) != net(sum_o):
                problems.append(f"{st.name}: net position deletes spark={net(sum_s)} ours={net(sum_o)}")
            keys = tuple(k for k in keys if k not in ("added-position-deletes", "removed-position-deletes"))
        for k in keys:
            if sum_s.get(k) != sum_o.get(k):
                problems.append(f"{st.name}: {k} spark={sum_s.get(k)} ours={sum_o.get(k)}")
    assert not problems, f"v{version} {mode}:\n" + "\n".join(problems)
    # Every step but the first ran on tables with the same files, so the counters were compared.
    assert all(s.same_layout for s in pair.steps), [s.name for s in pair.steps if not s.same_layout]


def duck(data: pa.Table, query: str) -> pa.Table:
    """``query`` over the table ``data``, evaluated by DuckDB (an engine independent of both writers)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("data", data)
    return con.execute(query).to_arrow_table().cast(data.schema)


def live_delete_files(spark: Any, table: str) -> list[Any]:
    return spark.sql(f"SELECT file_format, referenced_data_file, record_count FROM {table}.delete_files").collect()


@pytest.mark.parametrize("our_mode", ["copy-on-write", "merge-on-read"])
@pytest.mark.parametrize("version", ["2", "3"])
def test_we_change_a_table_spark_wrote(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, version: str, our_mode: str) -> None:
    t, name = f"{spark_catalog}.db.sp", "local.db.sp"
    spark.sql(
        f"CREATE TABLE {t} ({SPARK_COLUMNS}) USING iceberg PARTITIONED BY (level) "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    )
    a, b = rows(240, 1), rows(80, 2)
    spark.createDataFrame(a).writeTo(t).append()
    spark.createDataFrame(b).writeTo(t).append()
    spark_delete = "amount < -30 OR name LIKE '%3'"
    spark.sql(f"DELETE FROM {t} WHERE {spark_delete}")
    expected = duck(pa.concat_tables([a, b]), f"SELECT * FROM data WHERE NOT coalesce({spark_delete}, false)")
    gone = set(pa.concat_tables([a, b])["id"].to_pylist()) - set(expected["id"].to_pylist())
    spark_deletes = live_delete_files(spark, t)
    assert gone and spark_deletes and {f.file_format for f in spark_deletes} == {"PUFFIN" if version == "3" else "PARQUET"}
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode'='{our_mode}', 'write.update.mode'='{our_mode}')")

    def check(after: str) -> None:
        readers = {
            "spark": spark_read(spark, t),
            "pyiceberg": pyiceberg_catalog.load_table("db.sp").scan().to_arrow(),
            "us": ig.table(name).to_arrow(),
        }
        for reader, got in readers.items():
            try:
                assert_same_rows(got, expected)
            except AssertionError as e:
                raise AssertionError(f"after our {after}, {reader} reads: {e}") from None
        left = set(readers["spark"]["id"].to_pylist())
        assert not (gone & left), f"after our {after}: rows Spark deleted are back: {sorted(gone & left)[:5]}"
        deletes = live_delete_files(spark, t)
        refs = Counter(f.referenced_data_file for f in deletes)
        if version == "3":
            # The spec allows one deletion vector per data file: ours must be merged with Spark's.
            assert {f.file_format for f in deletes} <= {"PUFFIN"}, after
            assert max(refs.values(), default=1) == 1, f"after our {after}: several DVs for one data file: {refs.most_common(2)}"
            data_files = {r.file_path for r in spark.sql(f"SELECT file_path FROM {t}.data_files").collect()}
            dangling = sorted(set(refs) - data_files)
            assert not dangling, f"after our {after}: {len(dangling)} of {len(refs)} live DVs reference removed data files, e.g. {dangling[0]}"
        # The summary's totals are those of the live files Spark lists.
        summary = spark.sql(f"SELECT summary FROM {t}.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0].summary
        data_total = spark.sql(f"SELECT coalesce(sum(record_count), 0) AS n FROM {t}.data_files").collect()[0].n
        assert (summary["total-records"], summary["total-position-deletes"]) == (str(data_total), str(sum(f.record_count for f in deletes))), after

    check("nothing yet")  # the readers agree on Spark's own table before we touch it

    # Cuts through files that carry Spark's deletes, with nulls in both columns.
    ours_delete = "(level = 'WARN' AND id % 2 = 0) OR amount IS NULL"
    r = ig.table(name).delete(ours_delete)
    assert r.snapshot_id is not None
    expected = duck(expected, f"SELECT * FROM data WHERE NOT coalesce({ours_delete}, false)")
    check("delete")

    where = "id % 3 = 0 OR level IS NULL"
    r = ig.table(name).update({"amount": "amount * 10", "name": "upper(name)"}, where=where)
    assert r.operation == "overwrite"
    expected = duck(
        expected,
        f"SELECT id, level, ts, CASE WHEN coalesce({where}, false) THEN amount * 10 ELSE amount END AS amount, "
        f"CASE WHEN coalesce({where}, false) THEN upper(name) ELSE name END AS name FROM data",
    )
    check("update")

    fresh = rows(20, 5)
    new = fresh.filter(pc.equal(fresh["level"], "INFO"))
    ig.writeTo(new, name).overwritePartitions()
    expected = pa.concat_tables([duck(expected, "SELECT * FROM data WHERE level IS DISTINCT FROM 'INFO'"), new])
    check("overwritePartitions")
