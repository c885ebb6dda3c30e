"""Bad writes raise a typed error naming the problem, and leave the table's snapshots unchanged."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

import pyiceberg_go as ig

from conftest import sample, snapshot_ids


@pytest.fixture
def events(pyiceberg_catalog: Any) -> list[int]:
    """A table db.events with one snapshot; returns its snapshot ids."""
    ig.writeTo(sample(20), "local.db.events").create()
    ids = snapshot_ids(pyiceberg_catalog, "db.events")
    assert len(ids) == 1
    return ids


def test_append_to_missing_table(pyiceberg_catalog: Any) -> None:
    with pytest.raises(ig.NoSuchTableError, match="ghost"):
        ig.writeTo(sample(5), "local.db.ghost").append()
    assert snapshot_ids(pyiceberg_catalog, "db.ghost") == []
    assert not pyiceberg_catalog.table_exists("db.ghost")


def test_create_existing_table(pyiceberg_catalog: Any, events: list[int]) -> None:
    with pytest.raises(ig.TableAlreadyExistsError, match="events"):
        ig.writeTo(sample(5, seed=2), "local.db.events").create()
    assert snapshot_ids(pyiceberg_catalog, "db.events") == events


def test_extra_column(pyiceberg_catalog: Any, events: list[int]) -> None:
    data = sample(5).append_column("surprise", pa.array(range(5), pa.int64()))
    with pytest.raises(ig.ValidationError, match="surprise"):
        ig.writeTo(data, "local.db.events").append()
    assert snapshot_ids(pyiceberg_catalog, "db.events") == events


def test_incompatible_type(pyiceberg_catalog: Any, events: list[int]) -> None:
    data = sample(5)
    data = data.set_column(data.schema.get_field_index("id"), "id", pa.array([str(i) for i in range(5)]))
    with pytest.raises(ig.ValidationError, match="id"):
        ig.writeTo(data, "local.db.events").append()
    assert snapshot_ids(pyiceberg_catalog, "db.events") == events


def test_allowed_promotion_int_to_long(pyiceberg_catalog: Any, events: list[int]) -> None:
    data = sample(5, seed=3)
    data = data.set_column(0, "id", data.column("id").cast(pa.int32()))
    ig.writeTo(data, "local.db.events").append()
    assert len(snapshot_ids(pyiceberg_catalog, "db.events")) == 2


def test_nulls_into_required_column(pyiceberg_catalog: Any) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), required=False),
    )
    pyiceberg_catalog.create_table("db.strict", schema=schema)
    ok = pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}, schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())]))
    ig.writeTo(ok, "local.db.strict").append()
    before = snapshot_ids(pyiceberg_catalog, "db.strict")
    bad = pa.table({"id": pa.array([3, None], pa.int64()), "name": ["c", "d"]})
    with pytest.raises(ig.ValidationError, match="id"):
        ig.writeTo(bad, "local.db.strict").append()
    assert snapshot_ids(pyiceberg_catalog, "db.strict") == before


def test_unknown_codec(pyiceberg_catalog: Any, events: list[int]) -> None:
    with pytest.raises(ig.InvalidArgumentError, match="brotlix"):
        ig.writeTo(sample(5), "local.db.events").option("compression-codec", "brotlix").append()
    assert snapshot_ids(pyiceberg_catalog, "db.events") == events
    with pytest.raises(ig.InvalidArgumentError, match="brotlix"):
        ig.writeTo(sample(5), "local.db.newcodec").tableProperty("write.parquet.compression-codec", "brotlix").create()
    assert not pyiceberg_catalog.table_exists("db.newcodec")


@pytest.mark.parametrize("identifier", ["local..events", "events", "local.db.", ""])
def test_malformed_identifier(identifier: str, pyiceberg_catalog: Any, events: list[int]) -> None:
    with pytest.raises(ig.InvalidArgumentError) as info:
        ig.writeTo(sample(5), identifier).append()
    assert "identifier" in str(info.value).lower() or (identifier and identifier in str(info.value))
    assert snapshot_ids(pyiceberg_catalog, "db.events") == events


def test_non_arrow_object(pyiceberg_catalog: Any, events: list[int]) -> None:
    with pytest.raises(TypeError, match="dict"):
        ig.writeTo({"id": [1, 2]}, "local.db.events").append()
    assert snapshot_ids(pyiceberg_catalog, "db.events") == events


def test_append_into_a_missing_namespace(pyiceberg_catalog: Any) -> None:
    with pytest.raises((ig.NoSuchTableError, ig.NoSuchNamespaceError), match="nons"):
        ig.writeTo(sample(5), "local.nons.t").append()
    assert ("nons",) not in pyiceberg_catalog.list_namespaces()


def test_create_makes_its_namespace(pyiceberg_catalog: Any) -> None:
    # A deliberate convenience of this project (the core creates a missing namespace on create).
    ig.writeTo(sample(5), "local.fresh_ns.t").create()
    assert ("fresh_ns",) in pyiceberg_catalog.list_namespaces()
    assert pyiceberg_catalog.load_table("fresh_ns.t").scan().to_arrow().num_rows == 5
