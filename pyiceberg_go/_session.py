"""The session (catalogs + configuration) and running one request through the library."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from . import _native
from ._arrow import InputStream
from ._native import ArrowArrayStream, PigError, c_uintptr
from .errors import IcebergGoError

PROGRESS_ENV = "PYICEBERG_GO_PROGRESS"
_PROGRESS_AFTER_S = 3.0
_PROGRESS_EVERY_S = 0.5
#: The clock the progress display reads (tests drive their own).
_clock = time.monotonic
_JOIN_S = 0.1

_lock = threading.Lock()
_catalogs: dict[str, dict[str, str]] | None = None
_conf: dict[str, str] | None = None
_session: int = 0
_session_pid: int = 0


def session_document() -> dict[str, Any]:
    """The session document (docs/abi.md#session) a new session would be opened with.

    ``env`` is the PYICEBERG_* variables of ``os.environ`` now: the Go runtime
    only sees the environment the process started with.
    """
    doc: dict[str, Any] = {
        "env": {k: v for k, v in os.environ.items() if k.startswith("PYICEBERG_")},
        "home": os.path.expanduser("~"),
    }
    if _catalogs is not None:
        doc["catalogs"] = _catalogs
    if _conf is not None:
        doc["conf"] = _conf
    return doc


def _str_map(name: str, m: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in m.items():
        if not isinstance(k, str):
            raise TypeError(f"{name} keys must be strings, got {k!r}")
        out[k] = _option_value(v)
    return out


def _option_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        raise TypeError("option values cannot be None")
    return str(v)


def configure(
    catalogs: Mapping[str, Mapping[str, Any]] | None = None,
    conf: Mapping[str, Any] | None = None,
) -> None:
    """Replace the default session: explicit catalogs (PyIceberg property names) and session conf.

    The new session is opened lazily on the next call, and it captures the
    ``PYICEBERG_*`` environment variables as they are at that moment.
    Values are turned into strings (``True`` -> ``"true"``).

    Example::

        ig.configure(
            catalogs={"local": {"type": "sql", "uri": "sqlite:////tmp/x/catalog.db",
                                "warehouse": "file:///tmp/x/wh"}},
            conf={"target-file-size-bytes": str(128 << 20)},
        )
    """
    global _catalogs, _conf
    cats = None
    if catalogs is not None:
        cats = {str(name): _str_map(f"catalogs[{name!r}]", props) for name, props in catalogs.items()}
    cf = _str_map("conf", conf) if conf is not None else None
    with _lock:
        _close_session_locked()
        _catalogs, _conf = cats, cf


def _close_session_locked() -> None:
    global _session
    if _session and _session_pid == os.getpid() and _native.is_loaded():
        _native.lib().pig_session_release(_session)
    _session = 0


def session() -> int:
    """The handle of the default session, opening it on first use."""
    global _session, _session_pid
    dll = _native.lib()
    with _lock:
        if _session and _session_pid == os.getpid():
            return _session
        doc = json.dumps(session_document()).encode()
        out = c_uintptr(0)
        err = PigError()
        status = dll.pig_session_new(doc, ctypes.byref(out), ctypes.byref(err))
        _native.raise_for(status, err)
        _session, _session_pid = out.value, os.getpid()
        return _session


def set_runtime(
    max_procs: int | None = None,
    memory_limit_bytes: int | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Set process-wide limits of the Go runtime and environment variables it can see.

    ``max_procs`` is GOMAXPROCS, ``memory_limit_bytes`` the soft memory limit
    (GOMEMLIMIT); ``env`` sets variables the Go runtime reads (for example AWS
    credentials set after the process started). ``None`` leaves a setting alone.

    Example::

        ig.set_runtime(max_procs=2, memory_limit_bytes=4 << 30,
                       env={"AWS_REGION": "eu-west-1"})
    """
    doc: dict[str, Any] = {}
    if max_procs is not None:
        doc["max_procs"] = int(max_procs)
    if memory_limit_bytes is not None:
        doc["memory_limit_bytes"] = int(memory_limit_bytes)
    if env is not None:
        doc["env"] = _str_map("env", env)
    err = PigError()
    status = _native.lib().pig_runtime_configure(json.dumps(doc).encode(), ctypes.byref(err))
    _native.raise_for(status, err)


class _Progress:
    """A one-line progress display on stderr for calls that run longer than a few seconds."""

    def __init__(self, op: int) -> None:
        self.op = op
        self.start = _clock()
        self.last = 0.0
        self.width = 0
        self.enabled = os.environ.get(PROGRESS_ENV, "1") not in ("0", "false", "False", "")

    def tick(self) -> None:
        now = _clock()
        if not self.enabled or now - self.start < _PROGRESS_AFTER_S or now - self.last < _PROGRESS_EVERY_S:
            return
        self.last = now
        rows, nbytes, files = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        _native.lib().pig_operation_progress(self.op, ctypes.byref(rows), ctypes.byref(nbytes), ctypes.byref(files))
        line = (
            f"pyiceberg_go: {rows.value:,} rows, {nbytes.value / 1e6:,.1f} MB, "
            f"{files.value} files, {now - self.start:.0f} s"
        )
        self.width = max(self.width, len(line))
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()

    def clear(self) -> None:
        if self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


#: Types whose data the caller holds in memory for the whole call (module package, class).
_IN_MEMORY = {("pyarrow", "Table"), ("pyarrow", "RecordBatch"), ("pandas", "DataFrame"), ("polars", "DataFrame")}


def in_memory(data: object) -> bool:
    """Whether ``data`` is a table held in memory rather than a stream read batch by batch.

    The request then says ``input_in_memory`` (docs/abi.md#request): the library may keep the
    input's batches, which cost nothing more while the caller holds them, instead of their
    encoded pages. Streams (RecordBatchReader, DuckDB relations, capsules) are never assumed to.

    Example::

        in_memory(pa.table({"a": [1]}))  # True
    """
    t = type(data)
    return (t.__module__.split(".")[0], t.__qualname__) in _IN_MEMORY


def execute(request: Mapping[str, Any], data: object = None) -> dict[str, Any]:
    """Run one request document (docs/abi.md#request) with optional Arrow input; return the result.

    The call runs on a worker thread so that Ctrl-C works: on KeyboardInterrupt
    the operation is cancelled (nothing is committed), the worker is awaited
    and KeyboardInterrupt is raised again.

    Example::

        execute({"op": "snapshots", "table": "local.db.events"})
    """
    stream = InputStream(data) if data is not None else None
    if in_memory(data):
        request = {**request, "input_in_memory": True}
    try:
        dll = _native.lib()
        sess = session()
        doc = json.dumps(request).encode()
        op = c_uintptr(0)
        dll.pig_operation_new(ctypes.byref(op))
        try:
            return _run(dll, sess, doc, stream.address if stream else 0, op.value)
        finally:
            dll.pig_operation_release(op.value)
    finally:
        if stream is not None:
            stream.close()


def _run(dll: ctypes.CDLL, sess: int, doc: bytes, stream: int, op: int) -> dict[str, Any]:
    out = ctypes.c_void_p()
    err = PigError()
    status: list[int] = []

    done = threading.Event()

    def call() -> None:
        try:
            status.append(dll.pig_execute(sess, doc, stream or None, op, ctypes.byref(out), ctypes.byref(err)))
        finally:
            done.set()

    # Wait on an Event, not Thread.join: a KeyboardInterrupt inside join can leave the
    # thread marked as finished while it still runs (and still uses op, err and out).
    worker = threading.Thread(target=call, name="pyiceberg_go-execute", daemon=True)
    progress = _Progress(op)
    interrupted = False
    worker.start()
    try:
        while not done.is_set():
            try:
                if not done.wait(_JOIN_S):
                    progress.tick()
            except KeyboardInterrupt:
                if not interrupted:
                    interrupted = True
                    dll.pig_operation_cancel(op)
    finally:
        progress.clear()
    if not status:  # the worker died without a status (cannot happen short of a ctypes bug)
        raise IcebergGoError("pyiceberg_go: the call ended without a status")
    try:
        _native.raise_for(status[0], err)
    except IcebergGoError as e:
        if interrupted:
            raise KeyboardInterrupt from e
        raise
    text = _native.take_string(out.value)
    result: dict[str, Any] = json.loads(text) if text else {}
    if interrupted:
        # The cancel came too late: the operation had completed. Ctrl-C still stops the
        # program, and the message says what was committed.
        raise KeyboardInterrupt(
            "pyiceberg_go: interrupted after the operation completed"
            + (f" (snapshot {result['snapshot_id']} committed)" if result.get("snapshot_id") else "")
        )
    return result


def scan_stream(request: Mapping[str, Any]) -> ArrowArrayStream:
    """Run pig_scan and return the filled stream (the caller imports and releases it).

    Example::

        s = scan_stream({"table": "local.db.events"})
    """
    dll = _native.lib()
    sess = session()
    stream = ArrowArrayStream()
    err = PigError()
    status = dll.pig_scan(sess, json.dumps(request).encode(), ctypes.byref(stream), ctypes.byref(err))
    _native.raise_for(status, err)
    return stream
