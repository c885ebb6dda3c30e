"""Changelog reads (issue 37, item 3): ``Table.changelog`` against Spark's ``create_changelog_view``.

Twin tables get the same random sequence of appends, updates, deletes, merges
and partition overwrites (some run by Spark, most by us): one copy-on-write,
one merge-on-read. Spark's changelog view of the copy-on-write twin is the
reference: ours of the same table must equal it row for row (plain, net
changes, update images, ranges by snapshot and by time), and ours of the
merge-on-read twin must hold the same changes (Spark refuses that one: its
changelog scan does not read delete files).
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig

from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

SEED = 20261203
MODES = ("copy-on-write", "merge-on-read")
META = ("_change_type", "_change_ordinal", "_commit_snapshot_id")


def rows(ids: list[int], tag: str) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([f"{tag}{i}" for i in ids], pa.string()),
            "p": pa.array([i % 3 for i in ids], pa.int32()),
        }
    )


def build_twins(spark: Any, catalog: str, rng: random.Random, steps: int = 12) -> None:
    """db.cow and db.mor, created by us, then the same random operations on both."""
    for mode, name in zip(MODES, ("cow", "mor")):
        w = ig.writeTo(rows(list(range(6)), "a"), f"local.db.{name}").partitionedBy("p")
        for k in ("write.delete.mode", "write.update.mode", "write.merge.mode"):
            w = w.tableProperty(k, mode)
        w.create()
    nxt, spare = 6, 10_000
    for step in range(steps):
        kind = rng.choice(["append", "update", "delete", "merge", "overwrite", "spark_update", "spark_merge"])
        r = rng.randrange(3)
        new = list(range(nxt, nxt + 1 + rng.randrange(4)))
        nxt += len(new)
        spare += 3
        for name in ("cow", "mor"):
            t = f"local.db.{name}"
            if kind == "append":
                ig.writeTo(rows(new, "n"), t).append()
            elif kind == "update":
                ig.table(t).update({"v": f"concat(v, 'u{step}')"}, f"id % 4 = {r}")
            elif kind == "delete":
                ig.table(t).delete(f"id % 5 = {r} AND id > {step}")
            elif kind == "merge":
                src = rows([*new, r, r + 3], "m")
                (
                    ig.mergeInto(src, t, "target.id = source.id")
                    .whenMatched()
                    .update({"v": "concat(target.v, source.v)"})
                    .whenNotMatched()
                    .insertAll()
                    .merge()
                )
            elif kind == "overwrite":
                ig.writeTo(rows([i for i in new if i % 3 == r] or [spare + r], "o"), t).overwritePartitions()
            elif kind == "spark_update":
                spark.sql(f"UPDATE {catalog}.db.{name} SET v = concat(v, 's{step}') WHERE id % 3 = {r}")
            else:
                values = ", ".join(f"({i}, 'sm{i}', {i % 3})" for i in [*new, r + 1])
                spark.sql(
                    f"MERGE INTO {catalog}.db.{name} t USING (SELECT * FROM VALUES {values} AS s(id, v, p)) s "
                    "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = concat(t.v, '!') WHEN NOT MATCHED THEN INSERT *"
                )
    for name in ("cow", "mor"):
        ig.table(f"local.db.{name}").rewrite_data_files(options={"rewrite-all": "true"})  # a replace: no changes
    ig.writeTo(rows([nxt], "z"), "local.db.cow").append()
    ig.writeTo(rows([nxt], "z"), "local.db.mor").append()


def as_rows(t: pa.Table, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[c] for c in columns) for r in t.select(list(columns)).to_pylist())


def spark_changelog(spark: Any, catalog: str, name: str, args: str = "") -> pa.Table:
    view = spark.sql(f"CALL {catalog}.system.create_changelog_view(table => 'db.{name}'{args})").collect()[0][0]
    df = spark.sql(f"SELECT * FROM {view}").toPandas()
    return pa.Table.from_pandas(df, preserve_index=False)


def test_changelog_matches_spark(spark: Any, spark_catalog: str) -> None:
    build_twins(spark, spark_catalog, random.Random(SEED))
    cow, mor = ig.table("local.db.cow"), ig.table("local.db.mor")
    data = ("id", "v", "p")
    snaps = [s["snapshot_id"] for s in cow.snapshots()]
    ts = {s["snapshot_id"]: s["timestamp_ms"] for s in cow.snapshots()}
    cases: list[tuple[str, dict[str, Any]]] = [
        ("", {}),
        (", net_changes => true", {"net_changes": True}),
        (", identifier_columns => array('id')", {"identifier_columns": ["id"]}),
        (
            f", options => map('start-snapshot-id', '{snaps[3]}', 'end-snapshot-id', '{snaps[-3]}')",
            {"start_snapshot_id": snaps[3], "end_snapshot_id": snaps[-3]},
        ),
        (
            f", options => map('start-timestamp', '{ts[snaps[5]]}', 'end-timestamp', '{ts[snaps[-2]]}')",
            {"start_timestamp": ts[snaps[5]], "end_timestamp": ts[snaps[-2]]},
        ),
        (
            f", options => map('start-snapshot-id', '{snaps[2]}'), identifier_columns => array('id')",
            {"start_snapshot_id": snaps[2], "identifier_columns": ["id"]},
        ),
    ]
    for args, kwargs in cases:
        theirs = spark_changelog(spark, spark_catalog, "cow", args)
        ours = cow.changelog(**kwargs)
        assert ours.schema.names == ["id", "v", "p", *META]
        assert as_rows(ours, data + META) == as_rows(theirs, data + META), args
        # The merge-on-read twin changed the same rows in the same snapshots.
        mine = mor.changelog(**{k: v for k, v in kwargs.items() if "snapshot" not in k and "timestamp" not in k})
        if "snapshot" not in args and "timestamp" not in args:
            cols = data + ("_change_type",) if kwargs.get("net_changes") else data + META[:2]
            assert as_rows(mine, cols) == as_rows(theirs, cols), args
    kinds = set(cow.changelog(identifier_columns=["id"]).column("_change_type").to_pylist())
    assert {"INSERT", "DELETE", "UPDATE_BEFORE", "UPDATE_AFTER"} <= kinds
    # Spark's own changelog refuses the merge-on-read twin; ours reads it (above).
    with pytest.raises(Exception, match="Delete files are currently not supported"):
        spark_changelog(spark, spark_catalog, "mor")


def test_changelog_arguments_are_checked() -> None:
    ig.writeTo(rows([1, 2], "a"), "local.db.t").create()
    t = ig.table("local.db.t")
    first = t.snapshots()[0]["snapshot_id"]
    with pytest.raises(ig.InvalidArgumentError, match="Not support net changes with update images"):
        t.changelog(net_changes=True, identifier_columns=["id"])
    with pytest.raises(ig.InvalidArgumentError, match="identifier columns are not set"):
        t.changelog(compute_updates=True)
    with pytest.raises(ig.ValidationError, match="not a top-level column"):
        t.changelog(identifier_columns=["nope"])
    with pytest.raises(ig.InvalidArgumentError, match="Cannot set both start-snapshot-id and start-timestamp"):
        t.changelog(start_snapshot_id=first, start_timestamp=0)
    with pytest.raises(ig.InvalidArgumentError, match="is not an ancestor"):
        t.changelog(start_snapshot_id=42)
    with pytest.raises(ig.InvalidArgumentError, match="branch_/tag_"):
        t.create_branch("b")
        ig.table("local.db.t.branch_b").changelog()
    # Two rows of one identifier deleted in one snapshot cannot be paired into updates.
    ig.writeTo(rows([1], "dup"), "local.db.t").append()
    t.delete("id = 1")
    with pytest.raises(ig.ValidationError, match="multiple rows with the same identifier"):
        t.changelog(identifier_columns=["id"])
    # An empty range is an empty table with the changelog's columns.
    empty = t.changelog(start_snapshot_id=t.snapshots()[-1]["snapshot_id"])
    assert empty.num_rows == 0 and empty.schema.names == ["id", "v", "p", *META]
