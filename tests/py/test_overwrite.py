"""overwritePartitions, overwrite(filter), delete and update, checked against references
computed independently (PyIceberg's transforms, DuckDB's SQL) and read back by PyIceberg and DuckDB."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa
import pytest
from test_partitioning import CASES, internal_values

import pyiceberg_go as ig

from conftest import assert_same_rows, duckdb_scan, sample, snapshot_ids


def read_both(catalog: Any, name: str) -> list[pa.Table]:
    tbl = catalog.load_table(name)
    return [tbl.scan().to_arrow(), duckdb_scan(tbl.metadata_location)]


def partition_tuples(data: pa.Table, case: str, catalog: Any, name: str) -> list[tuple[Any, ...]]:
    """Each row's partition tuple as PyIceberg's own transforms compute it."""
    _, fields = CASES[case]
    schema = catalog.load_table(name).schema()
    fns = [t.transform(schema.find_field(col).field_type) for col, t, _ in fields]
    return list(zip(*(map(fn, internal_values(data.column(col))) for fn, (col, _, _) in zip(fns, fields))))


@pytest.mark.parametrize("case", sorted(CASES))
def test_overwrite_partitions_every_transform(case: str, pyiceberg_catalog: Any) -> None:
    spec_args, _ = CASES[case]
    name = f"db.ow_{case}"
    old = pa.concat_tables([sample(300, seed=1), sample(100, seed=7)])
    ig.writeTo(old, f"local.{name}").partitionedBy(*spec_args).create()
    before = snapshot_ids(pyiceberg_catalog, name)

    # Three of the old rows with a new amount: they cover some of the old
    # partitions (and only a few), whatever the transform.
    new = old.take([0, 150, 399])
    new = new.set_column(new.schema.get_field_index("amount"), "amount", pa.array([999.0] * 3))
    r = ig.writeTo(new, f"local.{name}").overwritePartitions()

    covered = set(partition_tuples(new, case, pyiceberg_catalog, name))
    old_parts = partition_tuples(old, case, pyiceberg_catalog, name)
    keep = pa.array([p not in covered for p in old_parts])
    expected = pa.concat_tables([old.filter(keep), new])
    assert old.filter(keep).num_rows < old.num_rows, "the test must replace some partitions"
    if len(set(old_parts)) > len(covered):
        assert old.filter(keep).num_rows > 0, "partitions the data does not cover must be kept"
    for got in read_both(pyiceberg_catalog, name):
        assert_same_rows(got, expected)

    tbl = pyiceberg_catalog.load_table(name)
    snap = tbl.current_snapshot()
    assert snapshot_ids(pyiceberg_catalog, name) == before + [r.snapshot_id]
    assert snap.summary.operation.value == "overwrite" == r.operation
    assert snap.summary["replace-partitions"] == "true"
    assert snap.summary["added-records"] == str(new.num_rows)
    assert snap.summary["deleted-records"] == str(old.num_rows - old.filter(keep).num_rows)
    assert snap.summary["total-records"] == str(expected.num_rows)


def test_overwrite_partitions_unpartitioned_replaces_all_and_empty_commits_nothing(pyiceberg_catalog: Any) -> None:
    ig.writeTo(sample(100, seed=1), "local.db.flat").create()
    ig.writeTo(sample(50, seed=2), "local.db.flat").append()
    new = sample(30, seed=3)
    ig.writeTo(new, "local.db.flat").overwritePartitions()
    for got in read_both(pyiceberg_catalog, "db.flat"):
        assert_same_rows(got, new)
    before = snapshot_ids(pyiceberg_catalog, "db.flat")
    r = ig.writeTo(new.slice(0, 0), "local.db.flat").overwritePartitions()
    assert r.snapshot_id is None
    assert snapshot_ids(pyiceberg_catalog, "db.flat") == before


def duck_where(data: pa.Table, sql_filter: str, negate: bool) -> pa.Table:
    """Rows where the filter is TRUE (or, negated, not TRUE), evaluated by DuckDB."""
    con = duckdb.connect()
    con.register("data", data)
    cond = f"coalesce(({sql_filter}), false)"
    out = con.execute(f"SELECT * FROM data WHERE {'NOT ' if negate else ''}{cond}").to_arrow_table()
    return out.cast(data.schema)


# (filter for the library, the same filter in DuckDB's SQL)
FILTERS = {
    "level_eq": ("level = 'INFO'", "level = 'INFO'"),
    "level_null": ("level IS NULL", "level IS NULL"),
    "id_range": ("id BETWEEN 1000010 AND 1000150", "id BETWEEN 1000010 AND 1000150"),
    "ts_lt": ("ts < TIMESTAMP '2023-12-20 00:00:00'", "ts < TIMESTAMP '2023-12-20 00:00:00+00'"),
    "or_in": ("level IN ('WARN', 'ERROR') OR amount > 100", "level IN ('WARN', 'ERROR') OR amount > 100"),
    "fn_like": ("lower(name) LIKE 'name-01%' AND NOT (day >= DATE '2053-01-01')", "lower(name) LIKE 'name-01%' AND NOT (day >= DATE '2053-01-01')"),
    "all": ("true", "true"),
    "none": ("id < 0", "id < 0"),
}

LAYOUTS = {
    "unpartitioned": (),
    "identity_level": ("level",),
    "days_ts": (ig.days("ts"),),
    "bucket_id": (ig.bucket(4, "id"),),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("filt", sorted(FILTERS))
def test_delete_matches_duckdb(layout: str, filt: str, pyiceberg_catalog: Any) -> None:
    ours, theirs = FILTERS[filt]
    name = f"db.del_{layout}_{filt}"
    data = pa.concat_tables([sample(200, seed=1), sample(120, seed=2)])
    w = ig.writeTo(sample(200, seed=1), f"local.{name}")
    if LAYOUTS[layout]:
        w = w.partitionedBy(*LAYOUTS[layout])
    w.create()
    ig.writeTo(sample(120, seed=2), f"local.{name}").append()
    before = snapshot_ids(pyiceberg_catalog, name)

    r = ig.table(f"local.{name}").delete(ours)

    expected = duck_where(data, theirs, negate=True)
    deleted = data.num_rows - expected.num_rows
    for got in read_both(pyiceberg_catalog, name):
        assert_same_rows(got, expected)
    if deleted == 0:
        assert r.snapshot_id is None and snapshot_ids(pyiceberg_catalog, name) == before
        return
    snap = pyiceberg_catalog.load_table(name).current_snapshot()
    assert snapshot_ids(pyiceberg_catalog, name) == before + [r.snapshot_id]
    assert snap.summary.operation.value == r.operation
    # Spark's rule: only removals -> delete, removals and rewrites -> overwrite.
    assert r.operation == ("delete" if "added-data-files" not in r.summary else "overwrite")
    assert int(r.summary["deleted-records"]) - int(r.summary.get("added-records", "0")) == deleted
    assert snap.summary["total-records"] == str(expected.num_rows)


@pytest.mark.parametrize("layout", ["unpartitioned", "identity_level", "days_ts"])
def test_update_matches_duckdb(layout: str, pyiceberg_catalog: Any) -> None:
    name = f"db.upd_{layout}"
    data = sample(300, seed=3)
    w = ig.writeTo(data, f"local.{name}")
    if LAYOUTS[layout]:
        w = w.partitionedBy(*LAYOUTS[layout])
    w.create()
    r = ig.table(f"local.{name}").update(
        {"amount": "amount * 2 + 1", "level": ig.lit("HOT"), "name": "upper(name)"},
        where="level = 'WARN' AND id % 3 = 0",
    )
    con = duckdb.connect()
    con.register("data", data)
    cond = "coalesce(level = 'WARN' AND id % 3 = 0, false)"
    expected = con.execute(
        f"""SELECT id,
                   CASE WHEN {cond} THEN 'HOT' ELSE level END AS level,
                   ts, day,
                   CASE WHEN {cond} THEN amount * 2 + 1 ELSE amount END AS amount,
                   CASE WHEN {cond} THEN upper(name) ELSE name END AS name
            FROM data"""
    ).to_arrow_table()
    for got in read_both(pyiceberg_catalog, name):
        assert_same_rows(got, expected)
    assert r.operation == "overwrite"
    changed = con.execute(f"SELECT count(*) FROM data WHERE {cond}").fetchone()[0]
    assert changed > 0
    snap = pyiceberg_catalog.load_table(name).current_snapshot()
    assert snap.summary["total-records"] == str(data.num_rows)


def test_overwrite_filter_drops_whole_files_rewrites_partial_ones(pyiceberg_catalog: Any) -> None:
    name = "db.owf"
    data = sample(400, seed=1)
    ig.writeTo(data, f"local.{name}").partitionedBy("level").create()
    new = sample(25, seed=8)
    # level = 'INFO' covers whole files (identity partition); id % 2 = 0 cuts through the others.
    cond = "level = 'INFO' OR (level = 'WARN' AND id % 2 = 0)"
    r = ig.writeTo(new, f"local.{name}").overwrite(cond)
    expected = pa.concat_tables([duck_where(data, cond, negate=True), new])
    for got in read_both(pyiceberg_catalog, name):
        assert_same_rows(got, expected)
    assert r.operation == "overwrite"
    snap = pyiceberg_catalog.load_table(name).current_snapshot()
    assert snap.summary["total-records"] == str(expected.num_rows)

    # Only removals: the snapshot is a delete; only additions: an append.
    r2 = ig.writeTo(new.slice(0, 0), f"local.{name}").overwrite("level = 'ERROR'")
    assert r2.operation == "delete"
    r3 = ig.writeTo(new, f"local.{name}").overwrite("id < 0")
    assert r3.operation == "append"


def test_expression_builder_gives_the_same_result_as_sql(pyiceberg_catalog: Any) -> None:
    data = sample(200, seed=4)
    for n in ("a", "b"):
        ig.writeTo(data, f"local.db.{n}").create()
    ig.table("local.db.a").delete("level = 'INFO' AND id > 4000050")
    ig.table("local.db.b").delete((ig.col("level") == "INFO") & (ig.col("id") > 4000050))
    a, b = (pyiceberg_catalog.load_table(f"db.{n}").scan().to_arrow() for n in ("a", "b"))
    assert_same_rows(a, b)
    assert a.num_rows < data.num_rows


@pytest.mark.parametrize(
    "bad, error, words",
    [
        ("level = = 'x'", ig.InvalidArgumentError, ["position"]),
        ("lvl = 'x'", ig.ValidationError, ["lvl"]),
        ("level = 3", ig.ValidationError, ["level"]),
        ("id + 1", ig.ValidationError, ["boolean"]),
        ("nosuchfn(id) = 1", ig.ValidationError, ["nosuchfn"]),
    ],
)
def test_bad_filters_are_typed_errors_and_commit_nothing(bad: str, error: type, words: list[str], pyiceberg_catalog: Any) -> None:
    ig.writeTo(sample(50), "local.db.bad").create()
    before = snapshot_ids(pyiceberg_catalog, "db.bad")
    with pytest.raises(error) as exc:
        ig.table("local.db.bad").delete(bad)
    for w in words:
        assert w in str(exc.value)
    with pytest.raises(error):
        ig.writeTo(sample(5), "local.db.bad").overwrite(bad)
    assert snapshot_ids(pyiceberg_catalog, "db.bad") == before


def test_update_errors(pyiceberg_catalog: Any) -> None:
    ig.writeTo(sample(20), "local.db.u").create()
    before = snapshot_ids(pyiceberg_catalog, "db.u")
    with pytest.raises(ig.ValidationError, match="nope"):
        ig.table("local.db.u").update({"nope": "1"})
    with pytest.raises(ig.ValidationError, match="id"):
        ig.table("local.db.u").update({"id": "'text'"})
    with pytest.raises(ig.NoSuchTableError):
        ig.table("local.db.missing").delete("true")
    assert snapshot_ids(pyiceberg_catalog, "db.u") == before
