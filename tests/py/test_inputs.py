"""Every kind of Arrow input reaches the table unchanged."""

from __future__ import annotations

import ctypes
import gc
import threading
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import pyiceberg_go as ig
from pyiceberg_go._arrow import InputStream, live_stream_count
from pyiceberg_go._native import ArrowArrayStream, ArrowSchema
from pyiceberg_go._session import in_memory

from conftest import assert_same_rows, sample


class ArrayOnly:
    """Exposes only __arrow_c_array__, forcing the Python-implemented stream."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        self.batch = batch

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        return self.batch.__arrow_c_array__(requested_schema)


def one_batch() -> pa.RecordBatch:
    return sample(50).combine_chunks().to_batches()[0]


# --- the Python-implemented stream, read by pyarrow's C++ importer (no library needed) ---


def test_python_stream_yields_the_batch_once_then_ends() -> None:
    batch = one_batch()
    s = InputStream(ArrayOnly(batch))
    reader = pa.RecordBatchReader._import_from_c(s.address)
    assert reader.schema == batch.schema
    got = reader.read_all()
    assert got.equals(pa.Table.from_batches([batch]))
    del reader
    gc.collect()
    s.close()
    assert live_stream_count() == 0


def test_python_stream_works_from_another_thread_and_does_not_leak() -> None:
    before = live_stream_count()
    batch = one_batch()
    for _ in range(20):
        s = InputStream(ArrayOnly(batch))
        reader = pa.RecordBatchReader._import_from_c(s.address)
        out: list[pa.Table] = []
        t = threading.Thread(target=lambda r=reader, o=out: o.append(r.read_all()))
        t.start()
        t.join()
        assert out[0].num_rows == batch.num_rows
        del reader
        s.close()
    gc.collect()
    assert live_stream_count() == before


def test_unconsumed_python_stream_is_released_on_close() -> None:
    before = live_stream_count()
    s = InputStream(ArrayOnly(one_batch()))
    assert live_stream_count() == before + 1
    s.close()
    assert live_stream_count() == before


def test_python_stream_reports_producer_errors() -> None:
    class Broken(ArrayOnly):
        calls = 0

        def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
            Broken.calls += 1
            if Broken.calls > 1:
                raise RuntimeError("producer exploded")
            return super().__arrow_c_array__(requested_schema)

    s = InputStream(Broken(one_batch()))
    # The schema held from construction is handed out once; a second request asks the
    # producer again, which fails: the error must come back through get_last_error.
    stream = ctypes.cast(s.address, ctypes.POINTER(ArrowArrayStream))
    first, second = ArrowSchema(), ArrowSchema()
    assert stream.contents.get_schema(stream, ctypes.addressof(first)) == 0
    rc = stream.contents.get_schema(stream, ctypes.addressof(second))
    assert rc != 0
    msg = ctypes.string_at(stream.contents.get_last_error(stream)).decode()
    assert "producer exploded" in msg
    pa.Schema._import_from_c(ctypes.addressof(first))  # takes and releases the first schema
    s.close()


# --- through the library ---


def _read(catalog: Any, name: str) -> pa.Table:
    return catalog.load_table(name).scan().to_arrow()


@pytest.mark.parametrize(
    "kind",
    ["table", "record_batch", "record_batch_reader", "array_only", "capsule", "polars", "duckdb"],
)
def test_input_kind_round_trips(kind: str, pyiceberg_catalog: Any) -> None:
    data = sample(200, seed=3)
    batch = data.combine_chunks().to_batches()[0]
    source: object = {
        "table": data,
        "record_batch": batch,
        "record_batch_reader": pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=37)),
        "array_only": ArrayOnly(batch),
        "capsule": data.__arrow_c_stream__(),
        "polars": pl.from_arrow(data),
        "duckdb": duckdb.from_arrow(data),
    }[kind]
    before = live_stream_count()
    r = ig.writeTo(source, f"local.db.input_{kind}").create()
    assert r.metrics["rows"] == data.num_rows
    assert_same_rows(_read(pyiceberg_catalog, f"db.input_{kind}"), data)
    assert live_stream_count() == before


def test_pandas_with_default_nanosecond_timestamps(pyiceberg_catalog: Any) -> None:
    df = pd.DataFrame(
        {
            "id": range(48),
            "ts": pd.date_range("2024-01-01", periods=48, freq="h").astype("datetime64[ns]"),
            "name": [f"n{i}" for i in range(48)],
        }
    )
    assert str(df["ts"].dtype) == "datetime64[ns]"
    ig.writeTo(df, "local.db.from_pandas").create()
    expected = pa.table(
        {
            "id": pa.array(range(48), pa.int64()),
            "ts": pa.array(df["ts"].to_numpy().astype("datetime64[us]"), pa.timestamp("us")),
            "name": pa.array(df["name"].tolist(), pa.string()),
        }
    )
    assert_same_rows(_read(pyiceberg_catalog, "db.from_pandas"), expected)


def test_python_stream_is_pulled_by_the_library_many_times_without_leaking(pyiceberg_catalog: Any) -> None:
    ig.writeTo(sample(10), "local.db.pulled").create()
    before = live_stream_count()
    batches = [sample(10, seed=s).combine_chunks().to_batches()[0] for s in range(1, 11)]
    for b in batches:
        ig.writeTo(ArrayOnly(b), "local.db.pulled").append()
    gc.collect()
    assert live_stream_count() == before
    assert_same_rows(_read(pyiceberg_catalog, "db.pulled"), pa.concat_tables([sample(10)] + [pa.Table.from_batches([b]) for b in batches]))


def test_stream_is_consumed_even_when_the_write_fails(pyiceberg_catalog: Any) -> None:
    before = live_stream_count()
    with pytest.raises(ig.NoSuchTableError):
        ig.writeTo(ArrayOnly(one_batch()), "local.db.missing").append()
    gc.collect()
    assert live_stream_count() == before
    reader = pa.RecordBatchReader.from_batches(sample(5).schema, sample(5).to_batches())
    capsule = reader.__arrow_c_stream__()
    with pytest.raises(ig.NoSuchTableError):
        ig.writeTo(capsule, "local.db.missing").append()
    # The library moved the stream out of the capsule: importing it again must fail.
    with pytest.raises(pa.ArrowInvalid):
        pa.RecordBatchReader._import_from_c_capsule(capsule).read_all()


# --- a table held in memory is lent to the writers; a stream is not ---


def test_tables_held_in_memory_are_told_apart_from_streams() -> None:
    t = sample(10)
    for held in (t, t.to_batches()[0], t.to_pandas(), pl.from_arrow(t)):
        assert in_memory(held), type(held)
    con = duckdb.connect()
    try:
        rel = con.from_arrow(t)
        for stream in (t.to_reader(), t.__arrow_c_stream__(), pl.from_arrow(t).lazy(), rel, None):
            assert not in_memory(stream), type(stream)
    finally:
        con.close()


def test_a_table_lent_to_the_writers_gives_the_file_its_stream_gives(pyiceberg_catalog: Any) -> None:
    # Several chunks, one file: lent batches are encoded column by column at
    # the end of the row group, streamed ones as they come; same bytes.
    data = pa.concat_tables([sample(15000, seed=s) for s in range(4)])
    ig.writeTo(data, "local.db.lent").create()
    ig.writeTo(data.to_reader(), "local.db.streamed").create()
    contents = []
    for name in ("lent", "streamed"):
        tbl = pyiceberg_catalog.load_table(f"db.{name}")
        tasks = list(tbl.scan().plan_files())
        assert len(tasks) == 1
        with tbl.io.new_input(tasks[0].file.file_path).open() as f:
            contents.append(f.read())
        assert_same_rows(tbl.scan().to_arrow(), data)
    assert contents[0] == contents[1]
