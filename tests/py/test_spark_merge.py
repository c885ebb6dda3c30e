"""MERGE INTO, differentially against Apache Spark 4.1 + Iceberg 1.12 (Java).

Every case runs the same MERGE on the same inputs twice: through Spark SQL
(``MERGE INTO local.db.s AS target USING <temp view> AS source ON ... WHEN ...``)
and through ``ig.mergeInto`` on a twin table ``local.db.o`` that starts with the
same files. Both tables must then hold the same rows (read by Spark, PyIceberg and
us), and their new snapshots must agree on the operation, every
``spark.merge-into.num-target-rows-*`` count and the record (and delete) counters.
A merge Spark rejects must be rejected by us with the same message, and neither
side may commit anything.

The twins are written by us (``ig.writeTo(...).create()``) so their files are
identical, except where a case says ``spark_created``: then Spark writes both, and
we merge into files, position deletes and deletion vectors Spark wrote.

Known, documented differences asserted as such: a merge that changes nothing
commits a snapshot in Spark (empty, or on copy-on-write with a NOT MATCHED BY
SOURCE clause a rewrite of every file with the same rows) and nothing in
pyiceberg-go; on v2
merge-on-read Spark rewrites a data file's earlier position delete file into its
new one while we add a second file (compared as net position deletes).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from test_spark_dml import file_layout, spark_read, spark_snapshots

import pyiceberg_go as ig

from conftest import assert_same_rows, duckdb_scan, snapshot_ids
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

UTC = dt.timezone.utc
BASE = dt.datetime(2024, 3, 9, 0, 0, tzinfo=UTC)
LEVELS = ["INFO", "WARN", "ERROR", None]
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("k2", pa.string()),
        ("level", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("v", pa.int64()),
        ("note", pa.string()),
    ]
)
SPARK_COLUMNS = "id BIGINT, k2 STRING, level STRING, ts TIMESTAMP, v BIGINT, note STRING"
S, O = "local.db.s", "local.db.o"  # noqa: E741 - source and output, named as in the Spark queries
CARDINALITY = "matched a single row from the target table with multiple rows of the source table"
MERGE_PREFIX = "spark.merge-into."


def make_rows(ids: list[int | None], tag: str, vshift: int = 0) -> pa.Table:
    """Rows whose k2, level and ts follow from the id (a null id takes its position's),
    so a source row built here has the partition values of the target row it matches."""
    keys = [i if i is not None else j for j, i in enumerate(ids)]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k2": pa.array([None if k % 23 == 0 else f"k{k % 5}" for k in keys], pa.string()),
            "level": pa.array([LEVELS[k % 4] for k in keys], pa.string()),
            "ts": pa.array([BASE + dt.timedelta(minutes=37 * k) for k in keys], pa.timestamp("us", tz="UTC")),
            "v": pa.array([k * 10 + vshift for k in keys], pa.int64()),
            "note": pa.array([None if k % 7 == 0 else f"{tag}{k}" for k in keys], pa.string()),
        },
        schema=SCHEMA,
    )


def target_rows(n: int = 300) -> pa.Table:
    """Ids 0..n-1, a few of them null; about eight days of ts."""
    return make_rows([None if i % 97 == 50 else i for i in range(n)], "t")


def with_op(data: pa.Table) -> pa.Table:
    """Adds ``op``: D for ids ending in 3, X for 7, else U (null for null ids)."""
    ops = [None if i is None else ("D" if i % 10 == 3 else "X" if i % 10 == 7 else "U") for i in data["id"].to_pylist()]
    return data.append_column("op", pa.array(ops, pa.string()))


def source_rows() -> pa.Table:
    """Ids 250..349 (the first 50 match) and two null ids; negative v; an ``op`` column."""
    return with_op(make_rows(list(range(250, 350)) + [None, None], "s", vshift=-100_000))


def source_subset() -> pa.Table:
    """Every third target id from 0 to 150 plus a few new ids, no extra column."""
    return make_rows(list(range(0, 150, 3)) + [None, 1000, 1001], "u", vshift=7)


def source_composite() -> pa.Table:
    """Ids 200..319 with k2 changed for ids divisible by 6: those match no target row on (id, k2)."""
    s = make_rows(list(range(200, 320)), "c", vshift=1)
    k2 = [("other" if i % 6 == 0 else k) for i, k in zip(s["id"].to_pylist(), s["k2"].to_pylist())]
    return s.set_column(1, "k2", pa.array(k2, pa.string()))


def source_all() -> pa.Table:
    """Every target row with a non-null id, v and note changed."""
    t = target_rows()
    t = t.filter(pc.is_valid(t["id"]))
    return t.set_column(4, "v", pc.negate(t["v"])).set_column(5, "note", pa.array(["all"] * t.num_rows))


def source_new() -> pa.Table:
    """Ids no target row has."""
    return make_rows(list(range(1000, 1040)), "n")


def source_narrow() -> pa.Table:
    """``source_rows`` with v as int32: assignments widen int to bigint."""
    s = source_rows()
    return s.set_column(s.schema.get_field_index("v"), "v", pc.cast(pc.divide(s["v"], 10), pa.int32()))


def source_dups() -> pa.Table:
    """Target ids 10 and 20 twice each (one pair with conflicting v), new id 500 twice, id 30 once."""
    return with_op(make_rows([10, 10, 20, 20, 30, 500, 500], "d", vshift=3)).set_column(4, "v", pa.array([1, 2, 3, 3, 4, 5, 5], pa.int64()))


@dataclass(frozen=True)
class Clause:
    """One WHEN clause, rendered both as Spark SQL and as builder calls."""

    when: str  # matched | not_matched | by_source
    action: str  # update_all | update | delete | insert_all | insert
    cond: str | None = None
    set: tuple[tuple[str, str], ...] = ()

    def sql(self) -> str:
        head = {"matched": "WHEN MATCHED", "not_matched": "WHEN NOT MATCHED", "by_source": "WHEN NOT MATCHED BY SOURCE"}[self.when]
        if self.cond:
            head += f" AND {self.cond}"
        cols, vals = ", ".join(k for k, _ in self.set), ", ".join(v for _, v in self.set)
        body = {
            "update_all": "UPDATE SET *",
            "insert_all": "INSERT *",
            "delete": "DELETE",
            "update": "UPDATE SET " + ", ".join(f"{k} = {v}" for k, v in self.set),
            "insert": f"INSERT ({cols}) VALUES ({vals})",
        }[self.action]
        return f"{head} THEN {body}"

    def apply(self, w: ig.MergeIntoWriter) -> ig.MergeIntoWriter:
        start = {"matched": w.whenMatched, "not_matched": w.whenNotMatched, "by_source": w.whenNotMatchedBySource}[self.when](self.cond)
        if self.action in ("update", "insert"):
            return getattr(start, self.action)(dict(self.set))
        return getattr(start, {"update_all": "updateAll", "insert_all": "insertAll", "delete": "delete"}[self.action])()


def matched(action: str, cond: str | None = None, **set_: str) -> Clause:
    return Clause("matched", action, cond, tuple(set_.items()))


def not_matched(action: str, cond: str | None = None, **set_: str) -> Clause:
    return Clause("not_matched", action, cond, tuple(set_.items()))


def by_source(action: str, cond: str | None = None, **set_: str) -> Clause:
    return Clause("by_source", action, cond, tuple(set_.items()))


# Every clause kind, conditions, several clauses of each kind whose conditions overlap
# (the first that holds applies), a partial insert, null keys on both sides.
ALL_CLAUSES = (
    matched("delete", "source.op = 'D'"),
    matched("update", "target.v > 2800 OR source.op = 'X'", v="source.v + target.v", note="concat(coalesce(target.note, ''), '+')"),
    matched("update_all"),
    not_matched("insert", "source.id IS NOT NULL AND source.id % 2 = 0", id="source.id", v="source.v * 2", level="source.level", ts="source.ts"),
    not_matched("insert_all", "source.id IS NOT NULL"),
    not_matched("insert", None, id="source.id", note="'null key'", ts="source.ts"),
    by_source("update", "target.id < 20", note="'orphan'", v="target.v + 1"),
    by_source("delete", "target.id >= 200 OR target.id IS NULL"),
    by_source("update", "target.id % 5 = 0", note="upper(target.note)"),
)

LAYOUTS: dict[str, tuple[tuple[Any, ...], str]] = {
    "unpartitioned": ((), ""),
    "identity": (("level",), "level"),
    "days_bucket": ((ig.days("ts"), ig.bucket(4, "id")), "days(ts), bucket(4, id)"),
    "bucket": ((ig.bucket(8, "id"),), "bucket(8, id)"),
    "identity_days": (("level", ig.days("ts")), "level, days(ts)"),
}

MODES = {
    "cow_v2": {"format-version": "2"},
    "cow_v3": {"format-version": "3"},
    "mor_v2": {"format-version": "2", "write.merge.mode": "merge-on-read"},
    "mor_v3": {"format-version": "3", "write.merge.mode": "merge-on-read"},
}

RECORD_KEYS = ("added-records", "deleted-records", "total-records")
COW_FILE_KEYS = ("deleted-data-files",)  # which files are rewritten: same start, same choice
MOR_KEYS = ("total-position-deletes",)
MOR_FILE_KEYS = (
    "added-position-deletes",
    "added-delete-files",
    "removed-delete-files",
    "total-delete-files",
    "added-dvs",
    "removed-dvs",
    "added-position-delete-files",
    "removed-position-delete-files",
)
V2_REWRITTEN_DELETE_KEYS = tuple(k for k in MOR_FILE_KEYS if k.endswith(("-delete-files", "-position-deletes")))


@dataclass
class Twins:
    spark: Any
    catalog: Any
    mode: str

    def create(self, target: pa.Table, layout: str, spark_created: bool = False) -> None:
        ours, spark_parts = LAYOUTS[layout]
        props = MODES[self.mode]
        for name in (S, O):
            if spark_created:
                tblprops = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
                parts = f" PARTITIONED BY ({spark_parts})" if spark_parts else ""
                self.spark.sql(f"CREATE TABLE {name} ({SPARK_COLUMNS}) USING iceberg{parts} TBLPROPERTIES ({tblprops})")
                self.spark.createDataFrame(target).coalesce(1).writeTo(name).append()
            else:
                w = ig.writeTo(target, name)
                if ours:
                    w = w.partitionedBy(*ours)
                for k, v in props.items():
                    w = w.tableProperty(k, v)
                w.create()
        assert file_layout(self.catalog, "db.s") == file_layout(self.catalog, "db.o")

    def snapshots(self) -> tuple[list[int], list[int]]:
        return snapshot_ids(self.catalog, "db.s"), snapshot_ids(self.catalog, "db.o")

    def spark_merge(self, source: pa.Table, on: str, clauses: tuple[Clause, ...], evolve: bool = False) -> None:
        self.spark.createDataFrame(source).createOrReplaceTempView("merge_source")
        with_ = "WITH SCHEMA EVOLUTION " if evolve else ""
        self.spark.sql(f"MERGE {with_}INTO {S} AS target USING merge_source AS source ON {on} " + " ".join(c.sql() for c in clauses))

    def our_merge(self, source: pa.Table, on: str, clauses: tuple[Clause, ...], evolve: bool = False) -> ig.WriteResult:
        w = ig.mergeInto(source, O, on)
        if evolve:
            w = w.withSchemaEvolution()
        for c in clauses:
            w = c.apply(w)
        return w.merge()

    def merge(self, source: pa.Table, on: str, clauses: tuple[Clause, ...], evolve: bool = False, same_layout: bool = True) -> ig.WriteResult:
        """Both merges; then the same rows and (one new snapshot each) the same summary counters."""
        before_s, before_o = self.snapshots()
        self.spark_merge(source, on, clauses, evolve)
        r = self.our_merge(source, on, clauses, evolve)
        after_s, after_o = self.snapshots()
        assert len(after_s) == len(before_s) + 1, "Spark committed no snapshot"
        assert r.snapshot_id is not None and after_o == before_o + [r.snapshot_id], "we committed no snapshot"
        self.check_contents()
        self.check_summaries(r, same_layout)
        return r

    def check_contents(self) -> None:
        reference = spark_read(self.spark, S)
        readers: dict[str, Callable[[], pa.Table]] = {
            "spark reads ours": lambda: spark_read(self.spark, O),
            "we read ours": lambda: ig.table(O).to_arrow(),
            "we read spark's": lambda: ig.table(S).to_arrow(),
        }
        for who, name in (("ours", "db.o"), ("spark's", "db.s")):
            readers[f"pyiceberg reads {who}"] = lambda name=name: self.catalog.load_table(name).scan().to_arrow()
            if MODES[self.mode]["format-version"] == "3" and "write.merge.mode" in MODES[self.mode]:
                # A third reader of deletion vectors.
                readers[f"duckdb reads {who}"] = lambda name=name: duckdb_scan(self.catalog.load_table(name).metadata_location)
        for reader, read in readers.items():
            try:
                assert_same_rows(read(), reference)
            except AssertionError as e:
                raise AssertionError(f"{self.mode}, {reader}: {e}") from None

    def check_summaries(self, r: ig.WriteResult, same_layout: bool) -> None:
        (op_s, sum_s), (op_o, sum_o) = spark_snapshots(self.spark, S)[-1], spark_snapshots(self.spark, O)[-1]
        problems = []
        if (op_s, r.operation) != (op_o, op_o):
            problems.append(f"operation spark={op_s} ours={op_o} (result says {r.operation})")
        merge_s = {k: v for k, v in sum_s.items() if k.startswith(MERGE_PREFIX)}
        merge_o = {k: v for k, v in sum_o.items() if k.startswith(MERGE_PREFIX)}
        # A key one side writes and the other does not is a difference too.
        for k in sorted(set(merge_s) | set(merge_o)):
            if merge_s.get(k) != merge_o.get(k):
                problems.append(f"{k} spark={merge_s.get(k)} ours={merge_o.get(k)}")
        # The result carries what the snapshot says.
        assert {k: str(v) for k, v in r.merge.items() if MERGE_PREFIX + k in merge_o} == {k.removeprefix(MERGE_PREFIX): v for k, v in merge_o.items()}, (r.merge, merge_o)
        assert {k: v for k, v in r.summary.items() if k.startswith(MERGE_PREFIX)} == merge_o
        mor = "write.merge.mode" in MODES[self.mode]
        keys = RECORD_KEYS + (MOR_KEYS if mor else ())
        if same_layout:
            keys += MOR_FILE_KEYS if mor else COW_FILE_KEYS
        if mor and "removed-position-delete-files" in sum_s:
            # Documented: on v2 Spark rewrites a data file's earlier position delete file into its
            # new one; we add a second file. The net count of deleted positions must agree.
            def net(sm: dict[str, str]) -> int:
                return int(sm.get("added-position-deletes", "0")) - int(sm.get("removed-position-deletes", "0"))

            if net(sum_s) != net(sum_o):
                problems.append(f"net position deletes spark={net(sum_s)} ours={net(sum_o)}")
            keys = tuple(k for k in keys if k not in V2_REWRITTEN_DELETE_KEYS)
        for k in keys:
            if sum_s.get(k) != sum_o.get(k):
                problems.append(f"{k} spark={sum_s.get(k)} ours={sum_o.get(k)}")
        assert not problems, f"{self.mode}: snapshot summaries differ:\n" + "\n".join(problems)


@dataclass(frozen=True)
class Case:
    source: Callable[[], pa.Table]
    clauses: tuple[Clause, ...]
    layout: str = "unpartitioned"
    mode: str = "cow_v2"
    on: str = "target.id = source.id"
    spark_created: bool = False


CASES = {
    "all_clauses-unpartitioned-cow_v2": Case(source_rows, ALL_CLAUSES),
    "all_clauses-identity-mor_v2": Case(source_rows, ALL_CLAUSES, "identity", "mor_v2"),
    "all_clauses-days_bucket-mor_v3": Case(source_rows, ALL_CLAUSES, "days_bucket", "mor_v3"),
    "all_clauses-bucket-cow_v3": Case(source_rows, ALL_CLAUSES, "bucket", "cow_v3"),
    "all_clauses-identity-mor_v2-spark_created": Case(source_rows, ALL_CLAUSES, "identity", "mor_v2", spark_created=True),
    # Null keys: null source ids never match (inserted), null target ids are not matched by source.
    "null_keys-identity-cow_v2": Case(
        source_subset,
        (matched("update", v="source.v"), not_matched("insert_all"), by_source("update", "target.id IS NULL", note="'null target id'")),
        "identity",
    ),
    # Composite key with nulls in k2 (null = null is not a match).
    "composite_key-days_bucket-cow_v2": Case(
        source_composite,
        (matched("update", "source.id % 4 <> 1", v="source.v", note="source.note"), matched("delete"), not_matched("insert_all")),
        "days_bucket",
        on="target.id = source.id AND target.k2 = source.k2",
    ),
    # Keys that are partition sources under transforms, null-safe on the identity column.
    "transform_keys-identity_days-mor_v2": Case(
        source_composite,
        (matched("update_all"), not_matched("insert_all")),
        "identity_days",
        "mor_v2",
        on="target.id = source.id AND target.ts = source.ts AND target.level <=> source.level",
    ),
    "transform_keys-days_bucket-cow_v3": Case(
        source_composite,
        (matched("update", v="target.v + source.v"), not_matched("insert_all")),
        "days_bucket",
        "cow_v3",
        on="target.ts = source.ts AND target.id = source.id",
    ),
    # Target-only conjuncts in ON: target rows failing them match nothing (and their ids are inserted again).
    "on_target_filter-identity-cow_v2": Case(
        source_subset,
        (matched("update", v="source.v", note="source.note"), not_matched("insert_all", "source.id IS NOT NULL")),
        "identity",
        on="target.id = source.id AND target.level = 'INFO' AND target.v >= 30",
    ),
    # A key that is an expression of the source, and a residual non-equality condition.
    "expression_key-bucket-mor_v2": Case(
        source_subset,
        (matched("update", v="target.v * 100 + source.v"), not_matched("insert", None, id="source.id + 5000"), by_source("delete", "target.id % 7 = 3")),
        "bucket",
        "mor_v2",
        on="target.id = source.id * 2 AND target.v <> source.v",
    ),
    "narrower_source_types-identity-cow_v3": Case(
        source_narrow,
        (matched("update_all", "source.op = 'U'"), matched("update", None, v="source.v + 1"), not_matched("insert_all")),
        "identity",
        "cow_v3",
    ),
    "all_match-bucket-cow_v2": Case(source_all, (matched("update_all"), not_matched("insert_all")), "bucket"),
    "all_match-unpartitioned-mor_v3": Case(source_all, (matched("update", "target.id % 2 = 0", v="source.v"), matched("delete")), "unpartitioned", "mor_v3"),
    "no_match-bucket-cow_v2": Case(source_new, (matched("update_all"), not_matched("insert_all")), "bucket"),
    "no_match-identity-mor_v3": Case(source_new, (matched("delete"), not_matched("insert_all")), "identity", "mor_v3"),
    "by_source-identity-cow_v2": Case(
        source_subset,
        (by_source("update", "target.level = 'INFO'", v="-target.v"), by_source("delete", "target.id % 4 = 1"), by_source("update", None, note="'kept'")),
        "identity",
    ),
    "by_source-bucket-mor_v2": Case(source_subset, (matched("update_all"), by_source("delete", "target.id > 100")), "bucket", "mor_v2"),
    # Few of the matched rows change: which files are rewritten when most matched rows stay.
    "matched_rarely_changes-bucket-cow_v2": Case(source_rows, (matched("delete", "source.id = 263"),), "bucket"),
    # Cardinality exemption: duplicate source rows, the only matched clause an unconditional delete.
    "dup_source_unconditional_delete-identity-cow_v2": Case(source_dups, (matched("delete"), not_matched("insert_all")), "identity"),
    "dup_source_unconditional_delete-bucket-mor_v3": Case(source_dups, (matched("delete"),), "bucket", "mor_v3"),
    # Insert-only merges are not checked: duplicate new keys are inserted twice.
    "dup_source_insert_only-identity-cow_v2": Case(source_dups, (not_matched("insert_all"),), "identity"),
    "dup_source_insert_only-unpartitioned-mor_v2": Case(source_dups, (not_matched("insert", "source.op = 'U'", id="source.id", v="source.v"),), "unpartitioned", "mor_v2"),
}


@pytest.mark.parametrize("case_name", list(CASES))
def test_merge_same_as_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, case_name: str) -> None:
    case = CASES[case_name]
    twins = Twins(spark, pyiceberg_catalog, case.mode)
    twins.create(target_rows(), case.layout, case.spark_created)
    r = twins.merge(case.source(), case.on, case.clauses)
    assert any(v for k, v in r.merge.items() if not k.endswith("-copied")), f"the case changes no row: {r.merge}"


@pytest.mark.parametrize("mode", ["mor_v2", "mor_v3"])
def test_second_merge_on_merge_on_read_deletes(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, mode: str) -> None:
    """A second merge deletes more rows of data files that already carry deletes
    (Spark's position deletes / deletion vectors on Spark's table, ours on ours)."""
    twins = Twins(spark, pyiceberg_catalog, mode)
    twins.create(target_rows(), "identity", spark_created=True)
    twins.merge(source_rows(), "target.id = source.id", (matched("delete", "source.op = 'D'"), matched("update_all"), not_matched("insert_all")))
    # The first merge wrote each side's new files its own way: compare layout-free counters only.
    again = with_op(make_rows(list(range(240, 360, 2)), "again", vshift=5))
    twins.merge(again, "target.id = source.id", (matched("delete", "source.op = 'U'"), matched("update", v="source.v"), not_matched("insert_all")), same_layout=False)
    (_, sum_s), (_, sum_o) = spark_snapshots(spark, S)[-1], spark_snapshots(spark, O)[-1]
    if mode == "mor_v2":
        # The documented v2 difference: Spark replaced its earlier position delete files, we added more.
        assert int(sum_s.get("removed-position-delete-files", 0)) > 0 and "removed-position-delete-files" not in sum_o, (sum_s, sum_o)
    else:
        # One deletion vector per data file: both sides replaced their earlier vectors.
        assert int(sum_s.get("removed-dvs", 0)) > 0 and int(sum_o.get("removed-dvs", 0)) > 0, (sum_s, sum_o)


@pytest.mark.parametrize(
    ("mode", "clauses"),
    [
        ("cow_v2", (matched("update_all"),)),
        # Checked even when no matched condition holds for the duplicated target row.
        ("mor_v3", (matched("update", "source.v > 100", v="source.v"), not_matched("insert_all"))),
        ("mor_v2", (matched("delete", "source.op = 'U'"), by_source("delete"))),
    ],
    ids=["update_all-cow_v2", "false_condition-mor_v3", "conditional_delete-mor_v2"],
)
def test_cardinality_violation_fails_on_both(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, mode: str, clauses: tuple[Clause, ...]) -> None:
    twins = Twins(spark, pyiceberg_catalog, mode)
    twins.create(target_rows(), "bucket")
    before = twins.snapshots()
    source = source_dups()
    with pytest.raises(Exception) as spark_error:
        twins.spark_merge(source, "target.id = source.id", clauses)
    assert CARDINALITY in str(spark_error.value), str(spark_error.value)[:500]
    with pytest.raises(ig.ValidationError, match=CARDINALITY):
        twins.our_merge(source, "target.id = source.id", clauses)
    assert twins.snapshots() == before
    assert_same_rows(spark_read(spark, S), target_rows())
    assert_same_rows(ig.table(O).to_arrow(), target_rows())


@pytest.mark.parametrize("clause", [matched("update_all"), not_matched("insert_all")], ids=["update_all", "insert_all"])
def test_source_missing_a_column_fails_on_both(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, clause: Clause) -> None:
    """Without schema evolution, ``*`` needs every target column in the source: both reject the merge."""
    twins = Twins(spark, pyiceberg_catalog, "cow_v2")
    twins.create(target_rows(), "unpartitioned")
    before = twins.snapshots()
    source = source_rows().drop_columns(["note"])
    with pytest.raises(Exception) as spark_error:
        twins.spark_merge(source, "target.id = source.id", (clause,))
    assert "UNRESOLVED_COLUMN" in str(spark_error.value) and "`note`" in str(spark_error.value), str(spark_error.value)[:500]
    with pytest.raises(ig.ValidationError, match='no column "note"'):
        twins.our_merge(source, "target.id = source.id", (clause,))
    assert twins.snapshots() == before


@pytest.mark.parametrize(
    ("mode", "with_by_source"),
    [("cow_v2", False), ("mor_v3", True), ("cow_v2", True)],
    ids=["cow_v2", "by_source-mor_v3", "by_source-cow_v2"],
)
def test_empty_source_commits_only_in_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, mode: str, with_by_source: bool) -> None:
    """Documented difference: a merge that changes nothing commits a snapshot in Spark and none in pyiceberg-go.

    Spark's snapshot is empty, except on copy-on-write with a NOT MATCHED BY SOURCE clause:
    then Spark rewrites every data file unchanged (all rows counted as copied)."""
    twins = Twins(spark, pyiceberg_catalog, mode)
    target = target_rows()
    twins.create(target, "identity")
    (before_s, before_o) = twins.snapshots()
    clauses = (matched("update_all"), not_matched("insert_all"))
    if with_by_source:
        clauses += (by_source("update", "target.id < 0", v="0"),)
    empty = source_rows().slice(0, 0)
    twins.spark_merge(empty, "target.id = source.id", clauses)
    r = twins.our_merge(empty, "target.id = source.id", clauses)
    after_s, after_o = twins.snapshots()
    assert len(after_s) == len(before_s) + 1
    op, summary = spark_snapshots(spark, S)[-1]
    assert op == "overwrite", op
    rewrites_all = with_by_source and mode.startswith("cow")
    if rewrites_all:
        # As in Spark's copy-on-write, every file holds candidates of the NOT MATCHED BY SOURCE
        # clause and is rewritten unchanged: both commit the same overwrite.
        assert r.snapshot_id is not None and len(after_o) == len(before_o) + 1
        our_op, our_summary = spark_snapshots(spark, O)[-1]
        keys = [k for k in summary if k.startswith(("added-records", "deleted-records", "added-data-files", "deleted-data-files", MERGE_PREFIX))]
        assert (our_op, {k: our_summary.get(k) for k in keys}) == (op, {k: summary[k] for k in keys})
        twins.check_contents()
        return
    assert r.snapshot_id is None and after_o == before_o
    changed = {k: summary[k] for k in summary if k.startswith(("added-", "deleted-", "removed-")) and not k.endswith("files-size")}
    n = str(target.num_rows)
    assert changed == ({"added-records": n, "deleted-records": n, "added-data-files": "4", "deleted-data-files": "4"} if rewrites_all else {}), summary
    assert summary["total-records"] == n
    # Spark counts nothing as changed; ours (returned, not committed) neither.
    copied = target.num_rows if rewrites_all else 0
    assert {k: v for k, v in summary.items() if k.startswith(MERGE_PREFIX)} == {MERGE_PREFIX + k: str(copied if k.endswith("-copied") else 0) for k in r.merge}
    assert set(r.merge.values()) == {0}
    twins.check_contents()


def schema_of(spark: Any, table: str) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark.table(table).schema.fields]


@pytest.mark.parametrize("mode", ["cow_v2", "mor_v2", "mor_v3"])
def test_schema_evolution_same_as_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, mode: str) -> None:
    """``withSchemaEvolution()`` against ``MERGE WITH SCHEMA EVOLUTION INTO``: the source has two new
    columns (one nested) and lacks the target's ``note``."""
    twins = Twins(spark, pyiceberg_catalog, mode)
    twins.create(target_rows(), "bucket")
    base = make_rows(list(range(280, 320)), "e", vshift=9).drop_columns(["note"])
    ids = base["id"].to_pylist()
    source = base.append_column("extra", pa.array([None if i % 3 == 0 else f"x{i}" for i in ids], pa.string())).append_column(
        "info",
        pa.array([None if i % 5 == 0 else {"a": i, "b": None if i % 2 else f"b{i}"} for i in ids], pa.struct([("a", pa.int32()), ("b", pa.string())])),
    )
    twins.merge(source, "target.id = source.id", (matched("update_all"), not_matched("insert_all")), evolve=True)
    assert schema_of(spark, S) == schema_of(spark, O)
    s_schema = pyiceberg_catalog.load_table("db.s").schema()
    o_schema = pyiceberg_catalog.load_table("db.o").schema()
    assert [(f.field_id, f.name, str(f.field_type), f.required) for f in s_schema.fields] == [
        (f.field_id, f.name, str(f.field_type), f.required) for f in o_schema.fields
    ]


def iceberg_fields(catalog: Any, name: str) -> list[tuple[int, str, str, bool]]:
    return [(f.field_id, f.name, str(f.field_type), f.required) for f in catalog.load_table(name).schema().fields]


STRUCT_A = pa.struct([("a", pa.int32())])
STRUCT_AB = pa.struct([("a", pa.int32()), ("b", pa.string())])


@pytest.mark.parametrize(
    "source_type",
    [("widened", pa.int64(), STRUCT_A), ("nested_field", pa.int32(), STRUCT_AB)],
    ids=lambda t: t[0],
)
def test_schema_evolution_of_existing_columns_same_as_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, source_type: tuple[str, Any, Any]) -> None:
    """The source has a wider type for ``v`` (int -> bigint) or a new field inside the struct ``info``:
    Spark's ``MERGE WITH SCHEMA EVOLUTION`` changes the existing column; so must we."""
    _, v_type, info_type = source_type
    ids = list(range(120))
    target = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([i * 3 for i in ids], pa.int32()),
            "info": pa.array([None if i % 9 == 0 else {"a": i} for i in ids], STRUCT_A),
        }
    )
    src_ids = list(range(100, 140))
    info = [None if i % 7 == 0 else {"a": -i, "b": None if i % 2 else f"b{i}"} for i in src_ids]
    source = pa.table(
        {
            "id": pa.array(src_ids, pa.int64()),
            "v": pa.array([i * 11 for i in src_ids], v_type),
            "info": pa.array([x if x is None or "b" in info_type.names else {"a": x["a"]} for x in info], info_type),
        }
    )
    twins = Twins(spark, pyiceberg_catalog, "cow_v2")
    twins.create(target, "unpartitioned")
    twins.merge(source, "target.id = source.id", (matched("update_all"), not_matched("insert_all")), evolve=True)
    assert schema_of(spark, O) == schema_of(spark, S)
    assert iceberg_fields(pyiceberg_catalog, "db.o") == iceberg_fields(pyiceberg_catalog, "db.s")
