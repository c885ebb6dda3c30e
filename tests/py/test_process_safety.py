"""fork, Ctrl-C, progress, an injected panic, and writing without pyarrow."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig
from pyiceberg_go import _session

from conftest import (
    HANG_S,
    CatalogDir,
    assert_same_rows,
    hooks_library,
    interrupt_when,
    run_python,
    sample,
    snapshot_ids,
)


def slow_reader(
    batches: int, delay: float, rows: int = 1000, pulled: threading.Event | None = None, last_after: threading.Event | None = None
) -> pa.RecordBatchReader:
    """A lazy stream whose producer sleeps before each batch (a slow upstream).

    ``pulled`` is set once the first batch has been taken; the last batch waits for
    ``last_after`` (bounded by HANG_S), so the stream is still open when it is set."""
    schema = sample(1).schema

    def gen() -> Iterator[pa.RecordBatch]:
        for i in range(batches):
            time.sleep(delay)
            if last_after is not None and i == batches - 1:
                last_after.wait(HANG_S)
            yield from sample(rows, seed=i).to_batches()
            if pulled is not None:
                pulled.set()

    return pa.RecordBatchReader.from_batches(schema, gen())


def data_files(root: Path) -> set[Path]:
    return set(root.rglob("*.parquet"))


def _child_calls_library(q: Any) -> None:
    try:
        ig.table("local.db.forked").snapshots()
        q.put("no error")
    except ig.ForkSafetyError as e:
        q.put(f"ForkSafetyError: {e}")
    except BaseException as e:  # report anything else to the parent
        q.put(repr(e))


def test_forked_child_gets_fork_safety_error_not_a_hang(pyiceberg_catalog: Any) -> None:
    ig.writeTo(sample(5), "local.db.forked").create()  # the library is loaded now
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_calls_library, args=(q,))
    p.start()
    p.join(HANG_S)
    hung = p.is_alive()
    if hung:
        p.kill()
    assert not hung, "the forked child hung"
    msg = q.get(timeout=HANG_S)
    assert msg.startswith("ForkSafetyError") and "spawn" in msg
    # The parent still works.
    assert len(ig.table("local.db.forked").snapshots()) == 1


def test_fork_before_first_use_works_in_the_child(pyiceberg_catalog: Any, catalog_dir: CatalogDir) -> None:
    r = run_python(
        f"""
        import multiprocessing, pyarrow as pa
        import pyiceberg_go as ig
        ig.configure(catalogs={{"local": {catalog_dir.properties!r}}})

        def child():
            ig.writeTo(pa.table({{"id": [1, 2, 3]}}), "local.db.child_made").create()

        p = multiprocessing.get_context("fork").Process(target=child)
        p.start(); p.join({HANG_S})
        print("child exit", p.exitcode)
        print("parent sees", len(ig.table("local.db.child_made").snapshots()))
        """
    )
    assert r.returncode == 0, r.stderr
    assert "child exit 0" in r.stdout and "parent sees 1" in r.stdout
    assert pyiceberg_catalog.load_table("db.child_made").scan().to_arrow().num_rows == 3


def test_ctrl_c_cancels_an_append_and_commits_nothing(pyiceberg_catalog: Any, catalog_dir: CatalogDir) -> None:
    ig.writeTo(sample(20), "local.db.events").create()
    before = snapshot_ids(pyiceberg_catalog, "db.events")
    files_before = data_files(catalog_dir.root)
    pulled = threading.Event()
    # Interrupted once the write is pulling its input; the input alone lasts 20 s, after
    # which an append that was not cancelled would have committed a snapshot.
    with pytest.raises((KeyboardInterrupt, ig.OperationCancelledError)), interrupt_when(pulled):
        ig.writeTo(slow_reader(batches=100, delay=0.2, pulled=pulled), "local.db.events").append()
    assert snapshot_ids(pyiceberg_catalog, "db.events") == before
    assert data_files(catalog_dir.root) == files_before, "files of the cancelled write were left behind"
    # The library is still usable.
    ig.writeTo(sample(3, seed=5), "local.db.events").append()
    assert len(snapshot_ids(pyiceberg_catalog, "db.events")) == 2


def test_ctrl_c_cancels_a_create(pyiceberg_catalog: Any) -> None:
    pulled = threading.Event()
    with pytest.raises((KeyboardInterrupt, ig.OperationCancelledError)), interrupt_when(pulled):
        ig.writeTo(slow_reader(batches=100, delay=0.2, pulled=pulled), "local.db.never").create()
    assert not pyiceberg_catalog.table_exists("db.never")


def test_progress_line_is_shown_and_cleared(pyiceberg_catalog: Any, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(_session, "_PROGRESS_AFTER_S", 0.2)
    monkeypatch.setattr(_session, "_PROGRESS_EVERY_S", 0.2)
    monkeypatch.delenv("PYICEBERG_GO_PROGRESS", raising=False)
    shown = threading.Event()  # the stream ends only once a line was shown, however slow the machine
    tick = _session._Progress.tick

    def marked(self: _session._Progress) -> None:
        tick(self)
        if self.width:
            shown.set()

    monkeypatch.setattr(_session._Progress, "tick", marked)
    r = ig.writeTo(slow_reader(batches=8, delay=0.2, rows=500, last_after=shown), "local.db.progress").create()
    err = capfd.readouterr().err
    assert r.metrics["rows"] == 4000
    lines = [chunk for chunk in err.split("\r") if chunk.strip()]
    assert lines, "no progress line was printed"
    assert all(line.startswith("pyiceberg_go: ") and " rows, " in line and " MB, " in line and " files" in line for line in lines)
    shown = [int(line.split()[1].replace(",", "")) for line in lines]
    assert all(0 <= n <= 4000 for n in shown) and shown == sorted(shown)
    assert err.endswith("\r") and "\n" not in err  # overwritten in place, then cleared


def test_progress_can_be_disabled(pyiceberg_catalog: Any, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(_session, "_PROGRESS_AFTER_S", 0.2)
    monkeypatch.setattr(_session, "_PROGRESS_EVERY_S", 0.2)
    monkeypatch.setenv("PYICEBERG_GO_PROGRESS", "0")
    ig.writeTo(slow_reader(batches=5, delay=0.2, rows=10), "local.db.quiet").create()
    assert capfd.readouterr().err == ""


def test_injected_panic_poisons_the_library_and_the_process_exits_cleanly(pyiceberg_catalog: Any, catalog_dir: CatalogDir) -> None:
    """With the test-hooks library: __panic needs test.hooks, then panics, and the library refuses further calls."""
    r = run_python(
        f"""
        import pyiceberg_go as ig
        from pyiceberg_go import _session
        props = {catalog_dir.properties!r}
        ig.configure(catalogs={{"local": props}})
        try:
            _session.execute({{"op": "__panic", "table": "local.db.t"}})
        except ig.InvalidArgumentError as e:
            print("without hooks:", type(e).__name__)
        ig.configure(catalogs={{"local": props}}, conf={{"test.hooks": "true"}})
        try:
            _session.execute({{"op": "__panic", "table": "local.db.t"}})
        except ig.InternalError as e:
            print("panic:", type(e).__name__, str(e) != "")
        try:
            ig.table("local.db.t").snapshots()
        except ig.LibraryPoisonedError as e:
            print("next call:", type(e).__name__)
        print("done")
        """,
        env={"PYICEBERG_GO_LIBRARY": hooks_library()},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "without hooks: InvalidArgumentError",
        "panic: InternalError True",
        "next call: LibraryPoisonedError",
        "done",
    ], r.stdout + r.stderr


def test_writes_work_without_pyarrow(pyiceberg_catalog: Any, catalog_dir: CatalogDir) -> None:
    r = run_python(
        f"""
        import sys
        sys.modules["pyarrow"] = None  # every import of pyarrow now fails
        import duckdb, polars as pl, arro3.core as a3
        import pyiceberg_go as ig
        ig.configure(catalogs={{"local": {catalog_dir.properties!r}}})
        ig.writeTo(pl.DataFrame({{"id": [1, 2, 3], "name": ["a", "b", "c"]}}), "local.db.nopa").create()
        batch = a3.RecordBatch.from_pydict({{"id": a3.Array([4, 5], a3.DataType.int64()),
                                             "name": a3.Array(["d", "e"], a3.DataType.string())}})
        ig.writeTo(batch, "local.db.nopa").append()
        ig.writeTo(duckdb.sql("SELECT 6::BIGINT AS id, 'f' AS name"), "local.db.nopa").append()
        print("snapshots", len(ig.table("local.db.nopa").snapshots()))
        try:
            ig.table("local.db.nopa").to_arrow()
        except ImportError as e:
            print("to_arrow:", e)
        print("pyarrow loaded:", any(k.split(".")[0] == "pyarrow" and v is not None for k, v in sys.modules.items()))
        """
    )
    assert r.returncode == 0, r.stderr
    assert "snapshots 3" in r.stdout
    assert "to_arrow: " in r.stdout and "pip install" in r.stdout
    assert "pyarrow loaded: False" in r.stdout
    expected = pa.table({"id": pa.array([1, 2, 3, 4, 5, 6], pa.int64()), "name": list("abcdef")})
    assert_same_rows(pyiceberg_catalog.load_table("db.nopa").scan().to_arrow(), expected)
