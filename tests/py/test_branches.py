"""Branches, tags and write-audit-publish end to end, read back by PyIceberg 0.12 (and once by Spark)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import pyiceberg_go as ig

from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

T = "local.db.t"


def rows(first: int, n: int) -> pa.Table:
    ids = list(range(first, first + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([f"c{i % 3}" for i in ids])})


def ids_at(pyiceberg_catalog: Any, ref: str | None = None, snapshot_id: int | None = None) -> list[int]:
    """The sorted ids PyIceberg reads at a ref (or snapshot; default main)."""
    tbl = pyiceberg_catalog.load_table("db.t")
    if ref is not None:
        snapshot_id = tbl.metadata.snapshot_by_name(ref).snapshot_id
    scan = tbl.scan(snapshot_id=snapshot_id) if snapshot_id is not None else tbl.scan()
    return sorted(scan.to_arrow()["id"].to_pylist())


def ours(identifier: str) -> list[int]:
    return sorted(ig.table(identifier).to_arrow()["id"].to_pylist())


def test_branch_writes_and_refs(pyiceberg_catalog: Any) -> None:
    ig.writeTo(rows(0, 10), T).partitionedBy("cat").create()
    t = ig.table(T)
    main_head = t.snapshots()[-1]["snapshot_id"]
    assert t.create_branch("b") == {"table": T, "ref": "b", "type": "branch", "snapshot_id": main_head}

    r = ig.writeTo(rows(100, 5), "db.t.branch_b").append()
    t.delete("id < 3")  # on main
    ig.table("db.t.branch_b").update({"cat": "'x'"}, where="id >= 100")
    ig.table(f"{T}.branch_b").delete("id = 5")
    expected_b = [i for i in range(10) if i != 5] + list(range(100, 105))
    expected_main = list(range(3, 10))

    assert ids_at(pyiceberg_catalog, "b") == expected_b
    assert ids_at(pyiceberg_catalog) == expected_main
    assert ours("db.t.branch_b") == expected_b and ours(T) == expected_main
    branch = ig.table("db.t.branch_b").to_arrow()
    assert set(branch.filter(pc.greater_equal(branch["id"], 100))["cat"].to_pylist()) == {"x"}
    tbl = pyiceberg_catalog.load_table("db.t")
    assert tbl.metadata.snapshot_by_id(r.snapshot_id).parent_snapshot_id == main_head
    assert {n: (ref["type"], ref["snapshot_id"]) for n, ref in t.refs().items()} == {
        n: (ref.snapshot_ref_type.value, ref.snapshot_id) for n, ref in tbl.metadata.refs.items()
    }

    with pytest.raises(ig.ValidationError, match=r"Cannot use branch \(does not exist\): nope"):
        ig.writeTo(rows(200, 1), "db.t.branch_nope").append()

    t.create_tag("v1")
    assert ours("db.t.tag_v1") == expected_main
    with pytest.raises(ig.InvalidArgumentError, match="main is not an ancestor of b"):
        t.fast_forward("main", "b")  # diverged
    t.remove_tag("v1")
    t.remove_branch("b")
    assert set(t.refs()) == {"main"}
    assert set(pyiceberg_catalog.load_table("db.t").metadata.refs) == {"main"}


def test_fast_forward_publishes_a_branch(pyiceberg_catalog: Any) -> None:
    ig.writeTo(rows(0, 5), T).create()
    t = ig.table(T)
    t.create_branch("audit")
    ig.writeTo(rows(5, 5), "db.t.branch_audit").append()
    assert ids_at(pyiceberg_catalog) == list(range(5))
    res = t.fast_forward("main", "audit")
    assert res["snapshot_id"] == t.refs()["audit"]["snapshot_id"] == t.refs()["main"]["snapshot_id"]
    assert ids_at(pyiceberg_catalog) == list(range(10))


def test_wap_stage_then_publish(pyiceberg_catalog: Any, catalog_dir: Any) -> None:
    ig.writeTo(rows(0, 5), T).tableProperty("write.wap.enabled", "true").create()
    main0 = ig.table(T).snapshots()[-1]["snapshot_id"]

    ig.configure(catalogs={"local": catalog_dir.properties}, conf={"wap.id": "job-1"})
    staged = ig.writeTo(rows(100, 5), T).append()
    assert staged.summary["wap.id"] == "job-1"
    ig.configure(catalogs={"local": catalog_dir.properties}, conf={"spark.wap.id": "job-2"})
    staged2 = ig.writeTo(rows(200, 5), T).append()
    ig.configure(catalogs={"local": catalog_dir.properties})

    t = ig.table(T)
    assert t.refs()["main"]["snapshot_id"] == main0
    assert ids_at(pyiceberg_catalog) == list(range(5))
    assert ids_at(pyiceberg_catalog, snapshot_id=staged.snapshot_id) == list(range(5)) + list(range(100, 105))

    first = t.publish("job-1")  # parent is main's head: fast-forward
    assert first.snapshot_id == staged.snapshot_id
    second = t.cherrypick(staged2.snapshot_id)  # parent moved: re-committed
    assert second.snapshot_id != staged2.snapshot_id
    assert second.summary["source-snapshot-id"] == str(staged2.snapshot_id)
    assert second.summary["published-wap-id"] == "job-2"
    assert ids_at(pyiceberg_catalog) == list(range(5)) + list(range(100, 105)) + list(range(200, 205))
    with pytest.raises(ig.ValidationError, match="published already: job-1"):
        t.publish("job-1")


def test_wap_branch_and_branch_identifier_is_an_error(catalog_dir: Any) -> None:
    ig.writeTo(rows(0, 5), T).tableProperty("write.wap.enabled", "true").create()
    ig.table(T).create_branch("b")
    before = len(ig.table(T).snapshots())
    ig.configure(catalogs={"local": catalog_dir.properties}, conf={"wap.branch": "audit"})
    with pytest.raises(ig.ValidationError, match="Cannot write to both branch and WAP branch"):
        ig.writeTo(rows(5, 5), "db.t.branch_b").append()
    ig.writeTo(rows(5, 5), T).append()  # to the WAP branch, created from main
    ig.configure(catalogs={"local": catalog_dir.properties})
    assert len(ig.table(T).snapshots()) == before + 1
    assert ours("db.t.branch_audit") == list(range(10)) and ours(T) == list(range(5))


def test_spark_reads_branch_and_published_wap(spark: Any, spark_catalog: str, catalog_dir: Any) -> None:
    ig.writeTo(rows(0, 5), T).tableProperty("write.wap.enabled", "true").create()
    t = ig.table(T)
    t.create_branch("x")
    ig.writeTo(rows(50, 3), "db.t.branch_x").append()
    ig.configure(catalogs={"local": catalog_dir.properties}, conf={"wap.id": "w"})
    ig.writeTo(rows(100, 2), T).append()
    ig.configure(catalogs={"local": catalog_dir.properties})

    name = f"{spark_catalog}.db.t"
    by_option = sorted(r.id for r in spark.read.option("branch", "x").table(name).collect())
    by_sql = sorted(r.id for r in spark.sql(f"SELECT id FROM {name}.branch_x").collect())
    assert by_option == by_sql == list(range(5)) + [50, 51, 52]
    assert sorted(r.id for r in spark.table(name).collect()) == list(range(5))
    t.publish("w")
    spark.sql(f"REFRESH TABLE {name}")
    assert sorted(r.id for r in spark.table(name).collect()) == list(range(5)) + [100, 101]
    staged = spark.sql(f"SELECT snapshot_id, summary['wap.id'] AS w FROM {name}.snapshots WHERE summary['wap.id'] IS NOT NULL").collect()
    assert [r.w for r in staged] == ["w"]
