"""The Python layer against a scripted stand-in library (fake_pig.c): threads, Ctrl-C,
progress, stream hand-over and error mapping, independent of the Go core."""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import pyiceberg_go as ig
from pyiceberg_go import _native, _session
from pyiceberg_go._arrow import live_stream_count

from conftest import REPO, interrupt_after
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


def slow_batches(n: int, delay: float) -> pa.RecordBatchReader:
    schema = pa.schema([("x", pa.int64())])

    def gen() -> Iterator[pa.RecordBatch]:
        for _ in range(n):
            time.sleep(delay)
            yield pa.record_batch({"x": list(range(10))}, schema=schema)

    return pa.RecordBatchReader.from_batches(schema, gen())


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


def test_ctrl_c_cancels_and_reraises_keyboard_interrupt(fake: ctypes.CDLL) -> None:
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt), interrupt_after(0.5):
        _session.execute({"op": "sleep", "table": "t"})
    assert time.monotonic() - start < 3  # the scripted op lasts 10 s unless cancelled


def test_ctrl_c_while_go_pulls_a_slow_python_stream(fake: ctypes.CDLL) -> None:
    with pytest.raises(KeyboardInterrupt, match="snapshot 9007199254740993 committed"), interrupt_after(0.5):
        # The fake does not look at cancel while pulling, so it completes: the wrapper
        # must wait for it, then raise KeyboardInterrupt saying what was committed.
        ig.writeTo(slow_batches(10, 0.1), "local.db.t").append()


def test_progress_shows_the_library_counters(fake: ctypes.CDLL, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(_session, "_PROGRESS_AFTER_S", 0.3)
    monkeypatch.delenv("PYICEBERG_GO_PROGRESS", raising=False)
    with pytest.raises(KeyboardInterrupt), interrupt_after(2.0):
        _session.execute({"op": "sleep", "table": "t"})
    err = capfd.readouterr().err
    lines = [c for c in err.split("\r") if c.strip()]
    # About 1.7 s of display at most twice a second.
    assert 2 <= len(lines) <= 5, lines
    for line in lines:
        words = line.split()
        rows, mb, files = int(words[1].replace(",", "")), float(words[3].replace(",", "")), int(words[5])
        assert rows > 0 and rows % 1000 == 0
        assert mb == pytest.approx(rows / 1000 * (1 << 20) / 1e6, rel=0.05)
        assert files == rows // 10000 or files == rows // 10000 - 1
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
