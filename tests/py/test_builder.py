"""The request documents the builders send; none of these tests needs the library."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import pyiceberg_go as ig
from pyiceberg_go import _session

from conftest import run_python


def test_transforms_build_iceberg_transform_strings() -> None:
    cases = {
        ig.years("ts"): ("year", "ts"),
        ig.months("ts"): ("month", "ts"),
        ig.days("d"): ("day", "d"),
        ig.hours("ts"): ("hour", "ts"),
        ig.bucket(16, "id"): ("bucket[16]", "id"),
        ig.truncate(4, "name"): ("truncate[4]", "name"),
    }
    for t, (transform, column) in cases.items():
        assert t.to_document() == {"transform": transform, "column": column}


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "16"])
def test_bucket_and_truncate_reject_non_positive_ints(bad: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        ig.bucket(bad, "id")  # type: ignore[arg-type]
    with pytest.raises((ValueError, TypeError)):
        ig.truncate(bad, "id")  # type: ignore[arg-type]


def test_transform_requires_a_column_name() -> None:
    with pytest.raises(TypeError, match="days"):
        ig.days(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ig.bucket(4, "")


def test_full_builder_chain_gives_the_documented_request() -> None:
    w = (
        ig.writeTo(None, "local.db.events")
        .using("iceberg")
        .partitionedBy("level", ig.days("ts"), ig.bucket(16, "id"))
        .tableProperty("write.parquet.compression-codec", "zstd")
        .tableProperty("location", "file:///data/events")
        .option("target-file-size-bytes", str(256 << 20))
        .options(**{"snapshot-property.k": "v", "fanout-enabled": True, "compression-level": 3})
    )
    doc = w.request_document("createOrReplace")
    assert doc == {
        "op": "createOrReplace",
        "table": "local.db.events",
        "partition_by": [
            {"transform": "identity", "column": "level"},
            {"transform": "day", "column": "ts"},
            {"transform": "bucket[16]", "column": "id"},
        ],
        "properties": {"write.parquet.compression-codec": "zstd"},
        "location": "file:///data/events",
        "options": {
            "target-file-size-bytes": "268435456",
            "snapshot-property.k": "v",
            "fanout-enabled": "true",
            "compression-level": "3",
        },
    }
    # Every value is JSON-serialisable as sent.
    assert json.loads(json.dumps(doc)) == doc


def test_plain_builder_sends_only_op_and_table() -> None:
    for op in ("create", "replace", "createOrReplace", "append"):
        assert ig.writeTo(None, "db.t").request_document(op) == {"op": op, "table": "db.t"}


def test_builder_methods_chain_and_last_partitioning_wins() -> None:
    w = ig.writeTo(None, "db.t")
    assert w.partitionedBy("a") is w
    assert w.option("k", 1) is w and w.options(x="y") is w and w.tableProperty("p", "q") is w
    w.partitionedBy(ig.hours("ts"))
    assert w.request_document("create")["partition_by"] == [{"transform": "hour", "column": "ts"}]


def test_using_accepts_only_iceberg() -> None:
    ig.writeTo(None, "db.t").using("ICEBERG")
    with pytest.raises(ValueError, match="parquet"):
        ig.writeTo(None, "db.t").using("parquet")


def test_partitioned_by_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="partitionedBy"):
        ig.writeTo(None, "db.t").partitionedBy(42)  # type: ignore[arg-type]


def test_table_identifier_must_be_str() -> None:
    with pytest.raises(TypeError):
        ig.writeTo(None, ("db", "t"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ig.table(None)  # type: ignore[arg-type]


def test_scan_document() -> None:
    t = ig.table("local.db.t")
    assert t.scan_document() == {"table": "local.db.t"}
    assert t.scan_document(snapshot_id=7, columns=("id", "ts")) == {"table": "local.db.t", "snapshot_id": 7, "columns": ["id", "ts"]}
    with pytest.raises(TypeError):
        t.scan_document(columns="id")


def test_write_result_from_document() -> None:
    doc = {
        "table": "local.db.t",
        "operation": "append",
        "snapshot_id": 123456789012345678,
        "summary": {"added-records": "10", "total-records": "30"},
        "metrics": {"rows": 10, "files": 1, "bytes": 1234, "seconds": 0.5},
    }
    r = ig.WriteResult.from_document(doc)
    assert (r.table, r.operation, r.snapshot_id) == ("local.db.t", "append", 123456789012345678)
    assert r.summary == doc["summary"] and r.metrics == doc["metrics"]
    with pytest.raises(AttributeError):
        r.snapshot_id = 1  # type: ignore[misc]


def test_session_document_captures_pyiceberg_env_now(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__URI", "sqlite:///x.db")
    monkeypatch.setenv("PYICEBERG_GO_HOME", str(tmp_path))
    monkeypatch.setenv("NOT_PYICEBERG", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    ig.configure(catalogs={"c": {"type": "sql", "uri": "sqlite:///y.db", "n": 3}}, conf={"wap.id": "w1", "flag": False})
    doc = _session.session_document()
    assert doc["env"]["PYICEBERG_CATALOG__PROD__URI"] == "sqlite:///x.db"
    assert doc["env"]["PYICEBERG_GO_HOME"] == str(tmp_path)
    assert "NOT_PYICEBERG" not in doc["env"]
    assert all(k.startswith("PYICEBERG_") for k in doc["env"])
    assert doc["home"] == str(tmp_path)
    assert doc["catalogs"] == {"c": {"type": "sql", "uri": "sqlite:///y.db", "n": "3"}}
    assert doc["conf"] == {"wap.id": "w1", "flag": "false"}
    ig.configure()
    assert "catalogs" not in _session.session_document()


def test_non_arrow_input_is_a_type_error_naming_the_type() -> None:
    class Rows:
        pass

    for bad in (Rows(), [{"id": 1}], {"id": [1]}):
        with pytest.raises(TypeError, match=type(bad).__qualname__):
            ig.writeTo(bad, "local.db.t").append()


def test_capsule_with_the_wrong_name_is_a_type_error() -> None:
    schema_capsule = pa.schema([("a", pa.int64())]).__arrow_c_schema__()
    with pytest.raises(TypeError, match="arrow_schema"):
        ig.writeTo(schema_capsule, "local.db.t").append()


def test_import_does_not_load_the_library() -> None:
    r = run_python(
        """
        import pyiceberg_go as ig
        ig.configure(catalogs={"local": {"type": "sql"}})
        w = ig.writeTo(None, "db.t").partitionedBy(ig.days("ts"))
        maps = open("/proc/self/maps").read()
        print("loaded" if "libpyiceberg_go" in maps or ig._native.is_loaded() else "not loaded")
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "not loaded"


def test_missing_library_gives_a_clear_error(tmp_path) -> None:
    r = run_python(
        """
        import pyiceberg_go as ig
        try:
            ig.abi_version()
        except ig.IcebergGoError as e:
            print("error:", e)
        """,
        env={"PYICEBERG_GO_LIBRARY": str(tmp_path / "nope.so")},
    )
    assert r.returncode == 0, r.stderr
    assert "error:" in r.stdout and "nope.so" in r.stdout and "PYICEBERG_GO_LIBRARY" in r.stdout
