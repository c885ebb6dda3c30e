"""The Python layer against a scripted stand-in library (fake_pig.c): threads, Ctrl-C,
progress, stream hand-over and error mapping, independent of the Go core."""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig
from pyiceberg_go import _native, _session
from pyiceberg_go._arrow import live_stream_count

from conftest import REPO, interrupt_when
from test_inputs import ArrayOnly


@pytest.fixture(scope="session")
def fake_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fake") / "libfake_pig.so"
    src = Path(__file__).with_name("fake_pig.c")
    subprocess.run(
        ["cc", "-O1", "-Wall", "-Werror", "-shared", "-fPIC", "-pthread", "-I", str(REPO / "include"), "-o", str(out), str(src)],
        check=True,
    )
    return out


@pytest.fixture
def fake(fake_library: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ctypes.CDLL]:
    """Swap the fake library in for this test; the real one (if loaded) comes back after."""
    dll = _native._load(fake_library)
    dll.fake_live_operations.restype = ctypes.c_int32
    monkeypatch.setattr(_native, "_lib", dll)
    monkeypatch.setattr(_native, "_loaded_pid", os.getpid())
    default = _session.Session()
    default._state.reopenable = True
    monkeypatch.setattr(_session, "_default", default)  # handles of the real library stay with it
    yield dll
    assert dll.fake_live_operations() == 0, "an operation handle was not released"


def slow_batches(n: int, delay: float, pulled: threading.Event | None = None) -> pa.RecordBatchReader:
    """n batches, each after ``delay`` s; ``pulled`` is set once the first has been taken."""
    schema = pa.schema([("x", pa.int64())])

    def gen() -> Iterator[pa.RecordBatch]:
        for _ in range(n):
            time.sleep(delay)
            yield pa.record_batch({"x": list(range(10))}, schema=schema)
            if pulled is not None:
                pulled.set()

    return pa.RecordBatchReader.from_batches(schema, gen())


def running(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """An event set when the call's wait loop first ticks: the call is under way."""
    ticked = threading.Event()
    tick = _session._Progress.tick

    def marked(self: _session._Progress) -> None:
        ticked.set()
        tick(self)

    monkeypatch.setattr(_session._Progress, "tick", marked)
    return ticked


def test_result_document_becomes_a_write_result(fake: ctypes.CDLL) -> None:
    t = pa.table({"x": list(range(25))})
    r = ig.writeTo(t, "local.db.t").append()
    assert r == ig.WriteResult(
        table="local.db.t",
        operation="append",
        snapshot_id=9007199254740993,  # > 2**53: must not go through a float
        summary={"added-records": "25"},
        metrics={"rows": 25, "files": 1, "bytes": 10, "seconds": 0.5},
    )


def test_python_stream_is_pulled_from_a_foreign_thread(fake: ctypes.CDLL) -> None:
    before = live_stream_count()
    batch = pa.record_batch({"x": list(range(123))})
    for _ in range(50):
        assert ig.writeTo(ArrayOnly(batch), "local.db.t").append().metrics["rows"] == 123
    gc.collect()
    assert live_stream_count() == before


def test_lazy_reader_generator_runs_on_a_foreign_thread(fake: ctypes.CDLL) -> None:
    r = ig.writeTo(slow_batches(7, 0.0), "local.db.t").append()
    assert r.metrics == {"rows": 70, "files": 7, "bytes": 10, "seconds": 0.5}


def test_producer_error_surfaces_with_its_message(fake: ctypes.CDLL) -> None:
    schema = pa.schema([("x", pa.int64())])

    def gen() -> Iterator[pa.RecordBatch]:
        yield pa.record_batch({"x": [1]}, schema=schema)
        raise ValueError("upstream broke")

    with pytest.raises(ig.IcebergIOError, match="upstream broke"):
        ig.writeTo(pa.RecordBatchReader.from_batches(schema, gen()), "local.db.t").append()


@pytest.mark.parametrize("status,cls", [(2, ig.InvalidArgumentError), (3, ig.NoSuchTableError), (6, ig.ValidationError), (9, ig.IcebergIOError), (12, ig.InternalError), (13, ig.LibraryPoisonedError), (1, ig.IcebergGoError)])
def test_library_errors_map_to_exceptions_with_the_message(fake: ctypes.CDLL, status: int, cls: type) -> None:
    with pytest.raises(cls) as info:
        _session.execute({"op": "fail", "table": str(status)})
    assert type(info.value) is cls
    assert str(info.value) == f"scripted failure {status} in café"


def test_session_errors_are_raised(fake: ctypes.CDLL) -> None:
    with pytest.raises(ig.InvalidArgumentError, match="session refused"):
        ig.Session(conf={"fail-session": "1"}).table("local.db.t").snapshots()


def test_ctrl_c_cancels_and_reraises_keyboard_interrupt(fake: ctypes.CDLL, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(KeyboardInterrupt) as info, interrupt_when(running(monkeypatch)):
        _session.execute({"op": "sleep", "table": "t"})
    # Cancelled, not waited out: the scripted op lasts 10 s unless cancelled, and would
    # then complete (a KeyboardInterrupt with no cause).
    assert isinstance(info.value.__cause__, ig.OperationCancelledError), repr(info.value.__cause__)


def test_ctrl_c_while_go_pulls_a_slow_python_stream(fake: ctypes.CDLL) -> None:
    pulled = threading.Event()
    with pytest.raises(KeyboardInterrupt, match="snapshot 9007199254740993 committed"), interrupt_when(pulled):
        # The fake does not look at cancel while pulling, so it completes: the wrapper
        # must wait for it, then raise KeyboardInterrupt saying what was committed.
        ig.writeTo(slow_batches(10, 0.1, pulled), "local.db.t").append()


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class CountingLibrary:
    """pig_operation_progress as a running write reports it: 1000 more rows each call."""

    def __init__(self) -> None:
        self.calls = 0

    def pig_operation_progress(self, op: int, rows: Any, nbytes: Any, files: Any) -> int:
        self.calls += 1
        rows._obj.value, nbytes._obj.value, files._obj.value = 1000 * self.calls, self.calls << 20, self.calls // 10
        return 0


def test_progress_line_timing_follows_its_clock(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    clock, lib = FakeClock(), CountingLibrary()
    monkeypatch.setattr(_session, "_clock", clock)
    monkeypatch.setattr(_native, "lib", lambda: lib)
    monkeypatch.delenv("PYICEBERG_GO_PROGRESS", raising=False)
    p = _session._Progress(op=7)
    shown = []
    for t in [0.0, 1.0, 2.9, 3.0, 3.2, 3.49, 3.5, 3.6, 4.0, 4.01, 12.0]:
        clock.now = 100.0 + t
        p.tick()
        if lib.calls > len(shown):
            shown.append(t)
    # Nothing for the first 3 s, then a line at most every 0.5 s.
    assert shown == [3.0, 3.5, 4.0, 12.0]
    lines = [c for c in capsys.readouterr().err.split("\r") if c.strip()]
    assert lines[0].split() == ["pyiceberg_go:", "1,000", "rows,", "1.0", "MB,", "0", "files,", "3", "s"]
    assert lines[-1].split()[1] == "4,000" and lines[-1].split()[-2] == "12"
    p.clear()
    assert capsys.readouterr().err.endswith("\r")


def test_progress_shows_the_library_counters(fake: ctypes.CDLL, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(_session, "_PROGRESS_AFTER_S", 0.0)
    monkeypatch.delenv("PYICEBERG_GO_PROGRESS", raising=False)
    shown = threading.Event()
    tick = _session._Progress.tick

    def marked(self: _session._Progress) -> None:
        tick(self)
        if self.width:  # a line was shown; interrupt once one showed rows
            rows, nbytes, files = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
            _native.lib().pig_operation_progress(self.op, ctypes.byref(rows), ctypes.byref(nbytes), ctypes.byref(files))
            if rows.value > 0:
                shown.set()

    monkeypatch.setattr(_session._Progress, "tick", marked)
    with pytest.raises(KeyboardInterrupt), interrupt_when(shown):
        _session.execute({"op": "sleep", "table": "t"})
    err = capfd.readouterr().err
    lines = [c for c in err.split("\r") if c.strip()]
    assert lines
    for line in lines:
        words = line.split()
        rows, mb, files = int(words[1].replace(",", "")), float(words[3].replace(",", "")), int(words[5])
        assert rows % 1000 == 0
        assert mb == pytest.approx(rows / 1000 * (1 << 20) / 1e6, rel=0.05)
        assert files in (rows // 10000, rows // 10000 - 1, 0)
    assert err.endswith("\r")


def test_operation_handles_are_released_after_errors(fake: ctypes.CDLL) -> None:
    for _ in range(20):
        with pytest.raises(ig.ValidationError):
            _session.execute({"op": "fail", "table": "6"})
    assert fake.fake_live_operations() == 0


def test_set_runtime_and_versions(fake: ctypes.CDLL) -> None:
    ig.set_runtime(max_procs=2, memory_limit_bytes=1 << 30, env={"A": "b"})
    assert ig.abi_version() == 1
    assert ig.library_version() == "fake-0"


def test_scan_errors_are_raised(fake: ctypes.CDLL) -> None:
    with pytest.raises(ig.NotSupportedError, match="cannot scan"):
        ig.table("local.db.t").to_arrow()
