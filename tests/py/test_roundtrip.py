"""create / append / replace / createOrReplace, read back by PyIceberg, DuckDB and the library."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig

from conftest import CatalogDir, assert_same_rows, duckdb_scan, sample, snapshot_ids


def read_both(catalog: Any, name: str) -> tuple[pa.Table, pa.Table]:
    tbl = catalog.load_table(name)
    return tbl.scan().to_arrow(), duckdb_scan(tbl.metadata_location)


def check_result(r: ig.WriteResult, catalog: Any, name: str, rows: int) -> None:
    tbl = catalog.load_table(name)
    snap = tbl.current_snapshot()
    assert r.snapshot_id == snap.snapshot_id
    assert r.operation == snap.summary.operation.value
    assert r.summary["added-records"] == str(rows)
    assert r.summary["total-records"] == snap.summary["total-records"]
    assert r.metrics["rows"] == rows
    assert r.metrics["files"] >= 1 and r.metrics["bytes"] > 0 and r.metrics["seconds"] >= 0


def test_create_then_append(pyiceberg_catalog: Any) -> None:
    first, second = sample(300, seed=1), sample(120, seed=2)
    r1 = ig.writeTo(first, "local.db.events").create()
    check_result(r1, pyiceberg_catalog, "db.events", 300)
    for got in read_both(pyiceberg_catalog, "db.events"):
        assert_same_rows(got, first)

    r2 = ig.writeTo(second, "local.db.events").append()
    check_result(r2, pyiceberg_catalog, "db.events", 120)
    assert r2.operation == "append"
    assert snapshot_ids(pyiceberg_catalog, "db.events") == [r1.snapshot_id, r2.snapshot_id]
    both = pa.concat_tables([first, second])
    for got in read_both(pyiceberg_catalog, "db.events"):
        assert_same_rows(got, both)


def test_created_table_columns_are_optional_and_codec_is_zstd(pyiceberg_catalog: Any) -> None:
    data = sample(10).drop_columns(["amount", "level"])
    data = data.cast(pa.schema([pa.field(f.name, f.type, nullable=False) for f in data.schema]))
    ig.writeTo(data, "local.db.opt").create()
    tbl = pyiceberg_catalog.load_table("db.opt")
    assert all(not f.required for f in tbl.schema().fields)
    assert tbl.properties.get("write.parquet.compression-codec") == "zstd"
    assert tbl.metadata.format_version == 2


def test_replace_keeps_history_and_swaps_data(pyiceberg_catalog: Any) -> None:
    old = sample(50, seed=1)
    r1 = ig.writeTo(old, "local.db.rep").create()
    new = sample(70, seed=9).drop_columns(["name"]).append_column("extra", pa.array(range(70), pa.int32()))
    r2 = ig.writeTo(new, "local.db.rep").tableProperty("owner", "tests").replace()
    check_result(r2, pyiceberg_catalog, "db.rep", 70)
    ids = snapshot_ids(pyiceberg_catalog, "db.rep")
    assert ids[0] == r1.snapshot_id and ids[-1] == r2.snapshot_id
    tbl = pyiceberg_catalog.load_table("db.rep")
    assert tbl.properties["owner"] == "tests"
    first_schema = tbl.schemas()[tbl.snapshot_by_id(r1.snapshot_id).schema_id]
    assert tbl.schema().find_field("id").field_id == first_schema.find_field("id").field_id
    assert tbl.schema().find_field("extra").field_id not in {f.field_id for f in first_schema.fields}
    for got in read_both(pyiceberg_catalog, "db.rep"):
        assert_same_rows(got, new)
    # Time travel to the first snapshot still gives the old rows.
    assert_same_rows(tbl.scan(snapshot_id=r1.snapshot_id).to_arrow(), old)


def test_replace_of_a_missing_table_fails(pyiceberg_catalog: Any) -> None:
    with pytest.raises(ig.NoSuchTableError, match="nothere"):
        ig.writeTo(sample(5), "local.db.nothere").replace()
    assert snapshot_ids(pyiceberg_catalog, "db.nothere") == []


def test_create_or_replace_creates_then_replaces(pyiceberg_catalog: Any) -> None:
    a, b = sample(40, seed=4), sample(25, seed=5)
    r1 = ig.writeTo(a, "local.db.cor").createOrReplace()
    for got in read_both(pyiceberg_catalog, "db.cor"):
        assert_same_rows(got, a)
    r2 = ig.writeTo(b, "local.db.cor").createOrReplace()
    check_result(r2, pyiceberg_catalog, "db.cor", 25)
    assert snapshot_ids(pyiceberg_catalog, "db.cor")[0] == r1.snapshot_id
    for got in read_both(pyiceberg_catalog, "db.cor"):
        assert_same_rows(got, b)


def test_table_properties_location_and_options_reach_the_table(pyiceberg_catalog: Any, catalog_dir: CatalogDir) -> None:
    location = f"file://{catalog_dir.root / 'custom_location'}"
    r = (
        ig.writeTo(sample(30), "local.db.props")
        .tableProperty("write.parquet.compression-codec", "snappy")
        .tableProperty("location", location)
        .tableProperty("comment", "made by tests")
        .option("snapshot-property.job", "nightly")
        .create()
    )
    tbl = pyiceberg_catalog.load_table("db.props")
    assert tbl.location().rstrip("/") == location
    assert tbl.properties["write.parquet.compression-codec"] == "snappy"
    assert tbl.properties["comment"] == "made by tests"
    assert r.summary["job"] == "nightly"
    for task in tbl.scan().plan_files():
        assert task.file.file_path.startswith(location)


def test_table_handle_reads_and_lists_snapshots(pyiceberg_catalog: Any) -> None:
    a, b = sample(20, seed=1), sample(30, seed=2)
    r1 = ig.writeTo(a, "local.db.handle").create()
    r2 = ig.writeTo(b, "local.db.handle").append()
    t = ig.table("local.db.handle")
    snaps = t.snapshots()
    assert [s["snapshot_id"] for s in snaps] == snapshot_ids(pyiceberg_catalog, "db.handle")
    assert [s["snapshot_id"] for s in snaps][-1] == r2.snapshot_id
    assert snaps[-1]["parent_id"] == r1.snapshot_id
    assert snaps[-1]["operation"] == "append" and snaps[-1]["summary"]["added-records"] == "30"
    assert_same_rows(t.to_arrow(), pa.concat_tables([a, b]))
    assert_same_rows(t.to_arrow(snapshot_id=r1.snapshot_id), a)
    only = t.to_arrow(columns=["id", "ts"])
    assert only.column_names == ["id", "ts"]
    assert_same_rows(only, pa.concat_tables([a, b]).select(["id", "ts"]))


def test_configure_replaces_the_session(pyiceberg_catalog: Any, tmp_path: Any) -> None:
    ig.writeTo(sample(5), "local.db.here").create()
    other = tmp_path / "other"
    (other / "wh").mkdir(parents=True)
    ig.configure(catalogs={"local": {"type": "sql", "uri": f"sqlite:///{other / 'catalog.db'}", "warehouse": f"file://{other / 'wh'}"}})
    with pytest.raises((ig.NoSuchTableError, ig.NoSuchNamespaceError)):
        ig.table("local.db.here").snapshots()


def test_catalog_from_pyiceberg_env_set_after_start(monkeypatch: pytest.MonkeyPatch, catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    # Set after the process started: only visible to Go through the session's env.
    monkeypatch.setenv("PYICEBERG_CATALOG__ENVCAT__TYPE", "sql")
    monkeypatch.setenv("PYICEBERG_CATALOG__ENVCAT__URI", catalog_dir.uri)
    monkeypatch.setenv("PYICEBERG_CATALOG__ENVCAT__WAREHOUSE", catalog_dir.warehouse)
    ig.configure()
    from pyiceberg.catalog.sql import SqlCatalog

    env_catalog = SqlCatalog("envcat", uri=catalog_dir.uri, warehouse=catalog_dir.warehouse)
    env_catalog.create_namespace_if_not_exists("db")
    data = sample(15)
    ig.writeTo(data, "envcat.db.from_env").create()
    assert_same_rows(env_catalog.load_table("db.from_env").scan().to_arrow(), data)


def test_set_runtime_accepts_limits_and_env() -> None:
    ig.set_runtime(max_procs=2, memory_limit_bytes=8 << 30, env={"PYICEBERG_GO_TEST_VAR": "1"})
    ig.set_runtime()
    assert ig.abi_version() == 1
    assert ig.library_version()
