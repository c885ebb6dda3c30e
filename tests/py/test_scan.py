"""Table.scan(): a one-shot Arrow C stream that pyarrow, polars, pandas and DuckDB read through
the PyCapsule interface, with no private pyarrow API and without pyarrow at all."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import pyiceberg_go as ig
from pyiceberg_go import _arrow

from conftest import REPO, CatalogDir, assert_same_rows, run_python, sample

T = "local.db.events"


@pytest.fixture
def data() -> pa.Table:
    d = sample(200)
    ig.writeTo(d, T).create()
    return d


def test_pyarrow_reads_a_scan_through_the_public_capsule_api(data: pa.Table) -> None:
    assert_same_rows(pa.table(ig.table(T).scan()), data)
    reader = pa.RecordBatchReader.from_stream(ig.table(T).scan())
    assert reader.schema.names == data.column_names
    assert_same_rows(reader.read_all(), data)
    assert_same_rows(ig.table(T).scan().to_arrow(), data)
    assert_same_rows(ig.table(T).scan().to_reader().read_all(), data)


def test_polars_pandas_and_duckdb_read_a_scan(data: pa.Table) -> None:
    t = ig.table(T)
    expected = sorted(data["id"].to_pylist())
    assert sorted(pl.DataFrame(t.scan())["id"].to_list()) == expected
    assert sorted(pd.DataFrame.from_arrow(t.scan())["id"].tolist()) == expected
    s = t.scan()  # noqa: F841 - DuckDB finds it by name in the query
    assert duckdb.sql("SELECT count(*), sum(id) FROM s").fetchall() == [(len(expected), sum(expected))]
    assert sorted(r[0] for r in duckdb.from_arrow(t.scan(columns=["id"])).fetchall()) == expected


def test_columns_and_snapshot_id(data: pa.Table) -> None:
    t = ig.table(T)
    first = t.snapshots()[-1]["snapshot_id"]
    ig.writeTo(sample(10, seed=5), T).append()
    only = pa.table(t.scan(columns=["id", "level"]))
    assert only.column_names == ["id", "level"] and only.num_rows == 210
    assert_same_rows(pa.table(t.scan(snapshot_id=first)), data)
    assert_same_rows(t.to_arrow(snapshot_id=first, columns=["id"]), data.select(["id"]))


def test_nested_columns_select_the_pruned_struct_as_pyiceberg(pyiceberg_catalog: Any) -> None:
    """columns=["p.x"] returns the struct p with only x, as PyIceberg's selected_fields; a struct
    named twice (p.x, p.z) comes once with both; with a filter on another column too."""
    rows = pa.table(
        {
            "id": pa.array(range(6), pa.int64()),
            "p": [{"x": i, "y": f"s{i}", "z": float(i) / 2} for i in range(6)],
        }
    )
    ig.writeTo(rows, "local.db.nested").create()
    t = ig.table("local.db.nested")
    for cols in (["id", "p.x"], ["p.x", "p.z"], ["p.z", "id", "p.x"]):
        ours = t.to_arrow(columns=cols)
        theirs = pyiceberg_catalog.load_table("db.nested").scan(selected_fields=tuple(cols)).to_arrow()
        assert sorted(ours.column_names) == sorted(theirs.column_names), cols
        assert sorted(map(repr, ours.select(theirs.column_names).to_pylist())) == sorted(
            map(repr, theirs.to_pylist())
        ), cols
        assert ours.schema.field("p").type == theirs.schema.field("p").type, cols
    got = t.scan(columns=["p.y"], where="id > 3").to_arrow()
    assert got.column_names == ["p"] and got["p"].to_pylist() == [{"y": "s4"}, {"y": "s5"}]


def test_a_stream_is_read_once(data: pa.Table) -> None:
    s = ig.table(T).scan()
    assert not s.consumed and "unread" in repr(s)
    assert pa.table(s).num_rows == 200
    assert s.consumed
    for read in (pa.table, pl.DataFrame, lambda x: x.__arrow_c_stream__(), lambda x: x.__arrow_c_schema__()):
        with pytest.raises(ig.StreamConsumedError, match="read once"):
            read(s)
    closed = ig.table(T).scan()
    closed.close()
    with pytest.raises(ig.StreamConsumedError):
        pa.table(closed)
    with ig.table(T).scan() as s2:
        pass
    assert s2.consumed


def test_the_schema_can_be_read_before_the_rows(data: pa.Table) -> None:
    s = ig.table(T).scan(columns=["id", "ts"])
    assert pa.schema(s).names == ["id", "ts"]
    assert pa.schema(s).names == ["id", "ts"]  # as often as asked, the rows stay unread
    assert pa.table(s).num_rows == 200


def test_errors_come_from_scan_itself(data: pa.Table) -> None:
    with pytest.raises(ig.NoSuchTableError):
        ig.table("local.db.missing").scan()
    with pytest.raises(ig.ValidationError, match="nope"):
        ig.table(T).scan(columns=["id", "nope"])
    with pytest.raises(TypeError):
        ig.table(T).scan(columns="id")  # type: ignore[arg-type]


def test_a_scan_is_write_input(data: pa.Table) -> None:
    ig.writeTo(ig.table(T).scan(), "local.db.copy").create()
    assert_same_rows(ig.table("local.db.copy").to_arrow(), data)


def test_scan_document_carries_the_filter() -> None:
    t = ig.table(T)
    assert t.scan_document(columns=["id"], where="id > 3") == {"table": T, "columns": ["id"], "filter": "id > 3"}
    assert t.scan_document(where=ig.col("level") == "INFO")["filter"] == "(`level` = 'INFO')"


def test_scan_with_a_filter(data: pa.Table) -> None:
    got = pa.table(ig.table(T).scan(columns=["id", "level"], where="level = 'WARN' AND id < 100"))
    want = [i for i, lv in zip(data["id"].to_pylist(), data["level"].to_pylist()) if lv == "WARN" and i < 100]
    assert sorted(got["id"].to_pylist()) == sorted(want) and got.column_names == ["id", "level"]
    by_expr = pa.table(ig.table(T).scan(where=(ig.col("level") == "WARN") & (ig.col("id") < 100)))
    assert by_expr.num_rows == len(want)


def test_unread_streams_are_released_and_nothing_leaks(data: pa.Table) -> None:
    for _ in range(50):
        ig.table(T).scan()  # dropped at once
        s = ig.table(T).scan()
        pa.schema(s)
        del s
    gc.collect()
    assert pa.table(ig.table(T).scan()).num_rows == 200


def test_the_capsule_destructor_releases_an_unconsumed_stream() -> None:
    # A producer whose release drops the generator: alive while the stream is.
    class Marker:
        pass

    def make() -> tuple[pa.RecordBatchReader, weakref.ref[Marker]]:
        m = Marker()
        t = pa.table({"a": [1, 2, 3]})

        def gen() -> Iterator[pa.RecordBatch]:
            _ = m
            yield from t.to_batches()

        return pa.RecordBatchReader.from_batches(t.schema, gen()), weakref.ref(m)

    reader, alive = make()
    address = _arrow.new_stream_struct()
    reader._export_to_c(address)  # the test's own producer; the package never uses this
    del reader
    capsule = _arrow.stream_capsule(address)
    assert pa.Schema._import_from_c_capsule(_arrow.stream_schema_capsule(capsule)).names == ["a"]
    gc.collect()
    assert alive() is not None
    del capsule
    gc.collect()
    assert alive() is None

    reader, alive = make()
    address = _arrow.new_stream_struct()
    reader._export_to_c(address)
    del reader
    moved = pa.RecordBatchReader._import_from_c_capsule(_arrow.stream_capsule(address))  # consumed
    gc.collect()
    assert moved.read_all().num_rows == 3
    del moved
    gc.collect()
    assert alive() is None


def test_reading_needs_no_pyarrow(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    r = run_python(
        f"""
        import sys
        sys.modules["pyarrow"] = None  # every import of pyarrow now fails
        import duckdb, polars as pl
        import pyiceberg_go as ig
        ig.configure(catalogs={{"local": {catalog_dir.properties!r}}})
        ig.writeTo(pl.DataFrame({{"id": [1, 2, 3], "name": ["a", "b", "c"]}}), "local.db.nopa").create()
        df = pl.DataFrame(ig.table("local.db.nopa").scan(columns=["id"]))
        print("polars", sorted(df["id"].to_list()))
        s = ig.table("local.db.nopa").scan()
        print("duckdb", duckdb.sql("SELECT sum(id) FROM s").fetchall())
        try:
            ig.table("local.db.nopa").scan().to_arrow()
        except ImportError as e:
            print("to_arrow:", e)
        print("pyarrow loaded:", any(k.split(".")[0] == "pyarrow" and v is not None for k, v in sys.modules.items()))
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:2] == ["polars [1, 2, 3]", "duckdb [(6,)]"], r.stdout
    assert "to_arrow: " in r.stdout and "pip install" in r.stdout
    assert "pyarrow loaded: False" in r.stdout


def test_the_package_uses_no_private_pyarrow_api() -> None:
    for path in (REPO / "pyiceberg_go").glob("*.py"):
        text = Path(path).read_text()
        assert "_import_from_c" not in text and "_export_to_c" not in text, path


def test_a_scan_counts_its_progress_and_can_be_cancelled_while_it_is_read() -> None:
    # Three partitions: three files, read one after the other.
    d = sample(300)
    ig.writeTo(d, "local.db.parts").partitionedBy("level").create()
    n_files = len(d.column("level").unique())

    s = ig.table("local.db.parts").scan()
    assert s.progress() == {"rows": 0, "bytes": 0, "files": n_files}
    reader = s.to_reader()
    first = reader.read_next_batch()
    assert 0 < s.progress()["rows"] == first.num_rows and s.progress()["bytes"] > 0
    s.cancel()
    with pytest.raises(OSError, match="cancelled"):
        while True:
            reader.read_next_batch()

    # Not cancelled, every row is counted once.
    s = ig.table("local.db.parts").scan(where="level = 'INFO'")
    got = pa.table(s)
    assert s.progress()["rows"] == got.num_rows == d.filter(pa.compute.equal(d["level"], "INFO")).num_rows
    assert s.progress()["files"] == 1, "the filter on the partition column plans one file"
