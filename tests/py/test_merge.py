"""MERGE INTO, checked against DuckDB's own MERGE INTO on the same inputs (an independent
implementation), read back by PyIceberg and DuckDB's iceberg extension."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute  # for pa.compute below
import pytest

import pyiceberg_go as ig

from conftest import assert_same_rows, duckdb_scan, snapshot_ids

N = 400


def target_rows(n: int = N) -> pa.Table:
    ids = list(range(n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k2": pa.array([None if i % 23 == 0 else f"k{i % 5}" for i in ids], pa.string()),
            "part": pa.array([f"p{i % 4}" for i in ids], pa.string()),
            "v": pa.array([i * 10 for i in ids], pa.int64()),
            "note": pa.array([None if i % 7 == 0 else f"n{i}" for i in ids], pa.string()),
        }
    )


def source_rows() -> pa.Table:
    """Updates, deletes and inserts: ids 350..449 (half match), ops by id."""
    ids = list(range(350, 450)) + [None, None]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k2": pa.array([None if i is None or i % 29 == 0 else f"k{i % 5}" for i in ids], pa.string()),
            "part": pa.array([f"p{(i or 0) % 4}" for i in ids], pa.string()),
            "v": pa.array([-(i or 1) for i in ids], pa.int64()),
            "note": pa.array([f"s{i}" for i in ids], pa.string()),
            "op": pa.array(["D" if (i or 0) % 10 == 3 else "U" for i in ids], pa.string()),
        }
    )


def duck_merge(target: pa.Table, source: pa.Table, sql_tail: str) -> pa.Table:
    """Run ``MERGE INTO target USING source ON ...`` in DuckDB and return the target."""
    con = duckdb.connect()
    con.register("t_in", target)
    con.register("s_in", source)
    con.execute("CREATE TABLE target AS SELECT * FROM t_in")
    con.execute("CREATE TABLE source AS SELECT * FROM s_in")
    con.execute(f"MERGE INTO target USING source {sql_tail}")
    return con.execute("SELECT * FROM target").to_arrow_table().cast(target.schema)


def read_both(catalog: Any, name: str) -> list[pa.Table]:
    tbl = catalog.load_table(name)
    return [tbl.scan().to_arrow(), duckdb_scan(tbl.metadata_location)]


LAYOUTS = {"unpartitioned": (), "identity": ("part",), "bucket_id": (ig.bucket(4, "id"),), "truncate_id": (ig.truncate(100, "id"),)}


MODES = {
    "cow": {},
    "mor_v2": {"write.merge.mode": "merge-on-read"},
    "mor_v3": {"write.merge.mode": "merge-on-read", "format-version": "3"},
}


@pytest.mark.parametrize(
    "layout, mode", [(layout, "cow") for layout in sorted(LAYOUTS)] + [("identity", "mor_v2"), ("bucket_id", "mor_v3"), ("unpartitioned", "mor_v3")]
)
def test_full_merge_matches_duckdb(layout: str, mode: str, pyiceberg_catalog: Any) -> None:
    name = f"db.m_{layout}_{mode}"
    target, source = target_rows(), source_rows()
    w = ig.writeTo(target, f"local.{name}")
    if LAYOUTS[layout]:
        w = w.partitionedBy(*LAYOUTS[layout])
    for k, v in MODES[mode].items():
        w = w.tableProperty(k, v)
    w.create()
    before = snapshot_ids(pyiceberg_catalog, name)

    r = (
        ig.mergeInto(source, f"local.{name}", "target.id = source.id")
        .whenMatched("source.op = 'D'").delete()
        .whenMatched("target.v > 3600").update({"v": "source.v + target.v", "note": "concat(coalesce(target.note, ''), '+')"})
        .whenMatched().updateAll()
        .whenNotMatched("source.id IS NOT NULL").insert({"id": "source.id", "v": "source.v * 2", "part": "source.part"})
        .whenNotMatched().insertAll()
        .whenNotMatchedBySource("target.id < 20").update({"note": "'orphan'"})
        .whenNotMatchedBySource("target.id >= 340").delete()
        .merge()
    )
    expected = duck_merge(
        target,
        source.drop_columns(["op"]).append_column("op", source.column("op")),
        """ON target.id = source.id
        WHEN MATCHED AND source.op = 'D' THEN DELETE
        WHEN MATCHED AND target.v > 3600 THEN UPDATE SET v = source.v + target.v, note = concat(coalesce(target.note, ''), '+')
        WHEN MATCHED THEN UPDATE SET id = source.id, k2 = source.k2, part = source.part, v = source.v, note = source.note
        WHEN NOT MATCHED AND source.id IS NOT NULL THEN INSERT (id, v, part) VALUES (source.id, source.v * 2, source.part)
        WHEN NOT MATCHED THEN INSERT (id, k2, part, v, note) VALUES (source.id, source.k2, source.part, source.v, source.note)
        WHEN NOT MATCHED BY SOURCE AND target.id < 20 THEN UPDATE SET note = 'orphan'
        WHEN NOT MATCHED BY SOURCE AND target.id >= 340 THEN DELETE""",
    )
    readers = [ig.table(f"local.{name}").to_arrow()]
    if mode != "mor_v3":  # PyIceberg 0.12 cannot read deletion vectors
        readers += read_both(pyiceberg_catalog, name)
    else:
        readers.append(duckdb_scan(pyiceberg_catalog.load_table(name).metadata_location))
    for got in readers:
        assert_same_rows(got, expected)
    assert snapshot_ids(pyiceberg_catalog, name) == before + [r.snapshot_id]
    if mode != "cow":
        assert int(r.summary["added-delete-files"]) > 0 and "deleted-data-files" not in r.summary

    # Counts, computed here from the inputs.
    t_ids = set(target.column("id").to_pylist())
    src = list(source.to_pylist())
    matched = [row for row in src if row["id"] in t_ids]
    m_del = sum(1 for row in matched if row["op"] == "D")
    m_upd = len(matched) - m_del
    s_ids = {row["id"] for row in src if row["id"] is not None}
    nmbs = [i for i in t_ids if i not in s_ids]
    nmbs_upd = sum(1 for i in nmbs if i < 20)
    nmbs_del = sum(1 for i in nmbs if i >= 340)
    inserted = len(src) - len(matched)
    want = {
        "num-target-rows-matched-deleted": m_del,
        "num-target-rows-matched-updated": m_upd,
        "num-target-rows-not-matched-by-source-updated": nmbs_upd,
        "num-target-rows-not-matched-by-source-deleted": nmbs_del,
        "num-target-rows-updated": m_upd + nmbs_upd,
        "num-target-rows-deleted": m_del + nmbs_del,
        "num-target-rows-inserted": inserted,
    }
    for k, v in want.items():
        assert r.merge[k] == v, (k, r.merge)
        assert r.summary["spark.merge-into." + k] == str(v)
    assert r.operation == "overwrite"
    if mode == "cow":
        assert int(r.summary["total-records"]) == expected.num_rows


def test_composite_and_null_keys(pyiceberg_catalog: Any) -> None:
    target, source = target_rows(60), source_rows().slice(0, 0)
    source = pa.concat_tables([source, target_rows(60).slice(10, 30).append_column("op", pa.array(["U"] * 30))])
    source = source.set_column(source.schema.get_field_index("v"), "v", pa.array(range(1000, 1030), pa.int64()))
    ig.writeTo(target, "local.db.ck").partitionedBy("part").create()
    on = "target.id = source.id AND target.k2 = source.k2"
    r = ig.mergeInto(source, "local.db.ck", on).whenMatched().update({"v": "source.v"}).whenNotMatched().insertAll().merge()
    expected = duck_merge(
        target,
        source,
        f"ON {on} WHEN MATCHED THEN UPDATE SET v = source.v "
        "WHEN NOT MATCHED THEN INSERT (id, k2, part, v, note) VALUES (source.id, source.k2, source.part, source.v, source.note)",
    )
    for got in read_both(pyiceberg_catalog, "db.ck"):
        assert_same_rows(got, expected)
    nulls = sum(1 for k in source.column("k2").to_pylist() if k is None)
    assert nulls > 0, "some source keys must be null: they match nothing and are inserted"
    assert r.merge["num-target-rows-inserted"] == nulls
    assert r.merge["num-target-rows-matched-updated"] == 30 - nulls


def test_cardinality_violation_fails_and_commits_nothing(pyiceberg_catalog: Any) -> None:
    target = target_rows(50)
    ig.writeTo(target, "local.db.card").create()
    before = snapshot_ids(pyiceberg_catalog, "db.card")
    dup = pa.concat_tables([source_rows().slice(0, 0), target_rows(50).slice(5, 1).append_column("op", pa.array(["U"]))] * 2)
    for clause in (
        lambda w: w.whenMatched().updateAll(),
        # Checked even when no matched condition holds for the row.
        lambda w: w.whenMatched("source.v < 0").delete().whenNotMatched().insertAll(),
    ):
        with pytest.raises(ig.ValidationError, match="matched a single row from the target table with multiple rows of the source table"):
            clause(ig.mergeInto(dup, "local.db.card", "target.id = source.id")).merge()
    assert snapshot_ids(pyiceberg_catalog, "db.card") == before
    # Exempt: the only matched clause is an unconditional delete.
    r = ig.mergeInto(dup, "local.db.card", "target.id = source.id").whenMatched().delete().merge()
    # Spark counts a deleted match per (target, source) pair: two here, for one row.
    assert r.merge["num-target-rows-matched-deleted"] == 2
    assert_same_rows(pyiceberg_catalog.load_table("db.card").scan().to_arrow(), target.filter(pa.array([i != 5 for i in range(50)])))
    # Insert-only merges are not checked.
    ig.mergeInto(dup, "local.db.card", "target.id = source.id").whenNotMatched().insertAll().merge()
    assert pyiceberg_catalog.load_table("db.card").scan().to_arrow().num_rows == 51


def test_empty_source_empty_target_and_no_match(pyiceberg_catalog: Any) -> None:
    target = target_rows(30)
    ig.writeTo(target, "local.db.e").create()
    before = snapshot_ids(pyiceberg_catalog, "db.e")
    empty = source_rows().slice(0, 0)
    r = ig.mergeInto(empty, "local.db.e", "target.id = source.id").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    assert r.snapshot_id is None and snapshot_ids(pyiceberg_catalog, "db.e") == before

    # No match: only inserts, an append.
    src = source_rows().slice(60, 10)
    r = ig.mergeInto(src, "local.db.e", "target.id = source.id").whenMatched().delete().whenNotMatched().insertAll().merge()
    assert r.operation == "append" and r.merge["num-target-rows-inserted"] == 10

    # Empty target: everything is inserted.
    ig.writeTo(target.slice(0, 0), "local.db.empty").create()
    r = ig.mergeInto(src, "local.db.empty", "target.id = source.id").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    assert r.merge["num-target-rows-inserted"] == 10
    assert pyiceberg_catalog.load_table("db.empty").scan().to_arrow().num_rows == 10


def test_upsert_and_aliases(pyiceberg_catalog: Any) -> None:
    target = target_rows(100)
    ig.writeTo(target, "local.db.u").partitionedBy("part").create()
    changes = target_rows(150).slice(80, 70)
    changes = changes.set_column(changes.schema.get_field_index("note"), "note", pa.array(["changed"] * 70))
    r = ig.table("local.db.u").upsert(changes, ["id"])
    assert r.merge["num-target-rows-updated"] == 20 and r.merge["num-target-rows-inserted"] == 50
    expected = pa.concat_tables([target.slice(0, 80), changes])
    for got in read_both(pyiceberg_catalog, "db.u"):
        assert_same_rows(got, expected)
    # Custom aliases.
    r = ig.mergeInto(changes.slice(0, 5), "local.db.u", "t.id = s.id", source_alias="s", target_alias="t").whenMatched().update({"v": "s.v + t.v"}).merge()
    assert r.merge["num-target-rows-matched-updated"] == 5


def test_bad_merges_are_typed_errors(pyiceberg_catalog: Any) -> None:
    ig.writeTo(target_rows(10), "local.db.bad").create()
    before = snapshot_ids(pyiceberg_catalog, "db.bad")
    src = source_rows().slice(0, 3)
    with pytest.raises(ig.ValidationError, match="nope"):
        ig.mergeInto(src, "local.db.bad", "target.nope = source.id").whenMatched().delete().merge()
    with pytest.raises(ig.InvalidArgumentError, match="position"):
        ig.mergeInto(src, "local.db.bad", "target.id = = source.id").whenMatched().delete().merge()
    with pytest.raises(ig.ValidationError):
        ig.mergeInto(src, "local.db.bad", "target.id = source.id").whenNotMatched("target.v > 1").insertAll().merge()
    with pytest.raises(ValueError):
        ig.mergeInto(src, "local.db.bad", "target.id = source.id").merge()
    assert snapshot_ids(pyiceberg_catalog, "db.bad") == before


@pytest.mark.parametrize("mode", ["cow", "mor_v2"])
def test_schema_evolution_adds_source_columns_in_the_same_commit(mode: str, pyiceberg_catalog: Any) -> None:
    target = pa.table({"id": pa.array(range(10), pa.int64()), "v": pa.array(range(10), pa.int64())})
    w = ig.writeTo(target, "local.db.evo").partitionedBy(ig.bucket(2, "id"))
    for k, val in MODES[mode].items():
        w = w.tableProperty(k, val)
    w.create()
    schema_before = pyiceberg_catalog.load_table("db.evo").schema()
    source = pa.table(
        {
            "id": pa.array([8, 9, 10, 11], pa.int64()),
            "extra": pa.array(["e8", None, "e10", "e11"], pa.string()),
            "info": pa.array([{"a": 1, "b": "x"}, None, {"a": 3, "b": None}, {"a": 4, "b": "y"}], pa.struct([("a", pa.int32()), ("b", pa.string())])),
        }
    )
    # A failing merge (two source rows for target row 9) leaves the schema alone.
    bad = pa.concat_tables([source, source.slice(1, 1)])
    with pytest.raises(ig.ValidationError, match="multiple rows"):
        ig.mergeInto(bad, "local.db.evo", "target.id = source.id").withSchemaEvolution().whenMatched().updateAll().merge()
    assert pyiceberg_catalog.load_table("db.evo").schema() == schema_before

    r = ig.mergeInto(source, "local.db.evo", "target.id = source.id").withSchemaEvolution().whenMatched().updateAll().whenNotMatched().insertAll().merge()
    tbl = pyiceberg_catalog.load_table("db.evo")
    names = [f.name for f in tbl.schema().fields]
    assert names == ["id", "v", "extra", "info"]
    new_ids = [tbl.schema().find_field("extra").field_id, tbl.schema().find_field("info").field_id]
    assert min(new_ids) > max(f.field_id for f in schema_before.fields)
    assert len(tbl.snapshots()) == 2 and r.snapshot_id == tbl.current_snapshot().snapshot_id
    # Updated rows keep v (the source has none) and take the new columns; inserted rows have null v.
    want = {i: {"id": i, "v": i, "extra": None, "info": None} for i in range(10)}
    for row in source.to_pylist():
        old_v = want[row["id"]]["v"] if row["id"] in want else None
        want[row["id"]] = {"id": row["id"], "v": old_v, "extra": row["extra"], "info": row["info"]}
    readers = [ig.table("local.db.evo").to_arrow(), tbl.scan().to_arrow(), duckdb_scan(tbl.metadata_location)]
    for got in readers:
        rows = {row["id"]: row for row in got.select(["id", "v", "extra", "info"]).to_pylist()}
        assert rows == want


def test_source_stream_is_read_once(pyiceberg_catalog: Any) -> None:
    target = target_rows(100)
    ig.writeTo(target, "local.db.stream").create()
    source = target_rows(150).slice(90, 60)
    pulled: list[int] = []

    def batches():  # a lazy stream: it can be consumed only once
        for b in source.to_batches(max_chunksize=7):
            pulled.append(b.num_rows)
            yield b

    reader = pa.RecordBatchReader.from_batches(source.schema, batches())
    r = ig.mergeInto(reader, "local.db.stream", "target.id = source.id").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    assert sum(pulled) == source.num_rows
    assert r.merge["num-target-rows-updated"] == 10 and r.merge["num-target-rows-inserted"] == 50
    assert_same_rows(pyiceberg_catalog.load_table("db.stream").scan().to_arrow(), pa.concat_tables([target.slice(0, 90), source]))


def test_copy_on_write_keeps_every_batch_of_a_rewritten_file(pyiceberg_catalog: Any) -> None:
    # One large file read back in several batches; only a row of its last
    # batch changes: every other row must survive the rewrite.
    n = 600_000
    target = pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array(range(n), pa.int64())})
    ig.writeTo(target, "local.db.big").create()
    assert len(pyiceberg_catalog.load_table("db.big").inspect.files()) == 1
    src = pa.table({"id": pa.array([n - 1], pa.int64()), "v": pa.array([-1], pa.int64())})
    r = ig.mergeInto(src, "local.db.big", "target.id = source.id").whenMatched().updateAll().merge()
    assert r.merge["num-target-rows-copied"] == n - 1 and r.merge["num-target-rows-updated"] == 1
    got = pyiceberg_catalog.load_table("db.big").scan().to_arrow()
    assert got.num_rows == n
    assert got.filter(pa.compute.equal(got["id"], n - 1))["v"].to_pylist() == [-1]
