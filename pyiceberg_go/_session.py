"""Sessions (catalogs + configuration) and running one request through the library.

A :class:`Session` owns at most one library session (``pig_session_new``) at a
time, opened on first use; the module-level functions use the default one.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _native
from ._arrow import InputStream, free_struct, new_stream_struct, stream_capsule
from ._native import ArrowArrayStream, PigError, c_uintptr
from .errors import IcebergGoError, SessionClosedError

if TYPE_CHECKING:
    from ._typing import ArrowData, CapsuleType
    from .expressions import Column
    from .merge import MergeIntoWriter
    from .sql import SqlResult
    from .table import Table
    from .writer import DataFrameWriterV2

PROGRESS_ENV = "PYICEBERG_GO_PROGRESS"
_PROGRESS_AFTER_S = 3.0
_PROGRESS_EVERY_S = 0.5
#: The clock the progress display reads (tests drive their own).
_clock = time.monotonic
_JOIN_S = 0.1


def _option_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        raise TypeError("option values cannot be None")
    return str(v)


def _str_map(name: str, m: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in m.items():
        if not isinstance(k, str):
            raise TypeError(f"{name} keys must be strings, got {k!r}")
        out[k] = _option_value(v)
    return out


def _conf_map(conf: Mapping[str, Any] | None, spark_conf: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The session conf: Spark's settings (``spark.*`` keys only) under the caller's conf."""
    if conf is None and spark_conf is None:
        return None
    out: dict[str, str] = {}
    if spark_conf is not None:
        out.update(_str_map("spark_conf", spark_conf))
        bad = [k for k in out if not k.startswith("spark.")]
        if bad:
            raise ValueError(f"spark_conf takes Spark settings (spark.*), got {bad[0]!r}: pass it in conf")
    if conf is not None:
        out.update(_str_map("conf", conf))
    return out


def _catalogs_map(catalogs: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    return {str(name): _str_map(f"catalogs[{name!r}]", props) for name, props in catalogs.items()}


def _closed_error() -> SessionClosedError:
    return SessionClosedError("this pyiceberg_go Session is closed; open a new one")


class _Handle:
    """One library session: its handle, the library and process that opened it, calls running on it."""

    __slots__ = ("dll", "pid", "retired", "users", "value")

    def __init__(self, dll: ctypes.CDLL, value: int) -> None:
        self.dll = dll
        self.value = value
        self.pid = os.getpid()
        self.users = 0
        self.retired = False

    def release(self) -> None:
        # Only the process that opened it may release it, through the library that opened it.
        if self.pid == os.getpid() and not _native.in_forked_child():
            self.dll.pig_session_release(self.value)


class _State:
    """A session's configuration and library handle; shared with its finalizer, which must not
    reference the Session itself."""

    def __init__(self, catalogs: dict[str, dict[str, str]] | None, conf: dict[str, str] | None) -> None:
        self.lock = threading.Lock()
        self.catalogs = catalogs
        self.conf = conf
        self.handle: _Handle | None = None
        self.closed = False
        #: Set on the default session: close() releases the handle, the next call opens another.
        self.reopenable = False

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "env": {k: v for k, v in os.environ.items() if k.startswith("PYICEBERG_")},
            "home": os.path.expanduser("~"),
        }
        if self.catalogs is not None:
            doc["catalogs"] = {name: dict(props) for name, props in self.catalogs.items()}
        if self.conf is not None:
            doc["conf"] = dict(self.conf)
        return doc

    def acquire(self) -> _Handle:
        """The open handle (opened now if needed), counted as in use until :meth:`done`."""
        dll = _native.lib()  # raises ForkSafetyError in a forked child
        stale: _Handle | None = None
        try:
            with self.lock:
                if self.closed:
                    raise _closed_error()
                h = self.handle
                if h is None or h.pid != os.getpid() or h.dll is not dll:
                    if h is not None:  # opened before a fork, or through another library (tests swap it)
                        stale = self._retire_locked()
                    doc = json.dumps(self.document()).encode()
                    out = c_uintptr(0)
                    err = PigError()
                    status = dll.pig_session_new(doc, ctypes.byref(out), ctypes.byref(err))
                    _native.raise_for(status, err)
                    h = self.handle = _Handle(dll, out.value)
                h.users += 1
                return h
        finally:
            if stale is not None:
                stale.release()

    def done(self, h: _Handle) -> None:
        """End a call that :meth:`acquire` counted; the last call on a retired handle releases it."""
        with self.lock:
            h.users -= 1
            last = h.retired and h.users == 0
        if last:
            h.release()

    def _retire_locked(self) -> _Handle | None:
        """Detach the handle; return it if it can be released now (no call is running on it)."""
        h, self.handle = self.handle, None
        if h is None:
            return None
        h.retired = True
        return h if h.users == 0 else None

    def close(self) -> None:
        with self.lock:
            h = self._retire_locked()
            if not self.reopenable:
                self.closed = True
        if h is not None:
            h.release()

    def replace(self, catalogs: dict[str, dict[str, str]] | None, conf: dict[str, str] | None) -> None:
        with self.lock:
            if self.closed:
                raise _closed_error()
            h = self._retire_locked()
            self.catalogs, self.conf = catalogs, conf
        if h is not None:
            h.release()


def _finalize(state: _State) -> None:
    """Run when a Session is garbage collected: release its library session."""
    with contextlib.suppress(Exception):  # a finalizer must not raise
        state.close()


class Session:
    """A set of catalogs and session configuration, with the API as methods.

    The module-level functions (``ig.writeTo``, ``ig.table``, ``ig.mergeInto``,
    ``ig.configure``) use the default session (:func:`default_session`). A
    ``Session`` of your own keeps its catalogs and ``conf`` (write options,
    ``wap.id``, ...) apart from it and from every other session, so several
    configurations live in one process, used in turn or from several threads
    at once. Builders and table handles keep the session they came from.

    The library session is opened on first use (capturing the ``PYICEBERG_*``
    variables of ``os.environ`` then) and released by :meth:`close`, at the
    end of a ``with`` block, or when the ``Session`` is garbage collected;
    calls running at that moment finish first. Using a closed session raises
    :class:`SessionClosedError`.

    Example::

        import pyiceberg_go as ig

        staging = ig.Session(
            catalogs={"local": {"type": "sql", "uri": "sqlite:////tmp/stg/catalog.db",
                                "warehouse": "file:///tmp/stg/wh"}},
            conf={"wap.id": "nightly-42"},
        )
        with staging:
            staging.writeTo(df, "local.db.events").append()       # staged under wap.id
            staging.table("local.db.events").publish("nightly-42")
        ig.writeTo(df, "local.db.events").append()                 # the default session
    """

    def __init__(
        self,
        catalogs: Mapping[str, Mapping[str, Any]] | None = None,
        conf: Mapping[str, Any] | None = None,
        spark_conf: Mapping[str, Any] | None = None,
    ) -> None:
        self._state = _State(
            _catalogs_map(catalogs) if catalogs is not None else None,
            _conf_map(conf, spark_conf),
        )
        finalizer = weakref.finalize(self, _finalize, self._state)
        finalizer.atexit = False  # at exit the library sessions go with the process

    def __repr__(self) -> str:
        st = self._state
        names = sorted(st.catalogs) if st.catalogs is not None else None
        state = "closed" if st.closed else "open" if st.handle is not None else "not opened yet"
        kind = "default Session" if st.reopenable else "Session"
        return f"<pyiceberg_go {kind} catalogs={names} ({state})>"

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (never true of the default session).

        Example::

            with ig.Session() as s:
                assert not s.closed
            assert s.closed
        """
        return self._state.closed

    def close(self) -> None:
        """Release the library session and its catalogs; later calls raise :class:`SessionClosedError`.

        Calls still running finish first (the last of them releases it).
        Closing twice does nothing. Closing the default session only releases
        its library session: the next call opens a new one with the same
        configuration.

        Example::

            s = ig.Session(catalogs=cats)
            try:
                s.writeTo(df, "local.db.t").append()
            finally:
                s.close()
        """
        self._state.close()

    def configure(
        self,
        catalogs: Mapping[str, Mapping[str, Any]] | None = None,
        conf: Mapping[str, Any] | None = None,
        spark_conf: Mapping[str, Any] | None = None,
    ) -> None:
        """Replace this session's catalogs (PyIceberg property names) and conf; ``None`` resets one.

        The library session in use is released (after the calls running on it
        finish) and a new one is opened on the next call, capturing the
        ``PYICEBERG_*`` variables of that moment. Values become strings
        (``True`` -> ``"true"``).

        Example::

            s = ig.Session()
            s.configure(catalogs={"local": {"type": "sql", "uri": "sqlite:////tmp/x/catalog.db",
                                            "warehouse": "file:///tmp/x/wh"}},
                        conf={"target-file-size-bytes": str(128 << 20)})
        """
        cats = _catalogs_map(catalogs) if catalogs is not None else None
        self._state.replace(cats, _conf_map(conf, spark_conf))

    def session_document(self) -> dict[str, Any]:
        """The session document (docs/abi.md#session) a library session opened now would get.

        Example::

            ig.Session(conf={"wap.id": "w1"}).session_document()["conf"]  # {"wap.id": "w1"}
        """
        with self._state.lock:
            return self._state.document()

    def writeTo(self, df: ArrowData, table: str) -> DataFrameWriterV2:
        """Start a write of Arrow data ``df`` to ``table`` in this session (as :func:`pyiceberg_go.writeTo`).

        Example::

            r = s.writeTo(df, "local.db.events").partitionedBy(ig.days("ts")).createOrReplace()
        """
        from .writer import DataFrameWriterV2

        return DataFrameWriterV2(df, table, session=self)

    def table(self, identifier: str) -> Table:
        """A lazy handle on the table ``[catalog.]namespace.table`` of this session.

        Example::

            n = s.table("local.db.events").to_arrow().num_rows
        """
        from .table import Table

        return Table(identifier, session=self)

    def mergeInto(
        self,
        source: ArrowData,
        table: str,
        condition: str | Column,
        source_alias: str | None = None,
        target_alias: str | None = None,
    ) -> MergeIntoWriter:
        """Start a MERGE INTO ``table`` USING ``source`` ON ``condition`` in this session.

        Example::

            s.mergeInto(df, "local.db.t", "target.id = source.id").whenMatched().updateAll().merge()
        """
        from .merge import MergeIntoWriter

        return MergeIntoWriter(source, table, condition, source_alias, target_alias, session=self)

    def sql(self, statement: str, views: Mapping[str, ArrowData] | None = None) -> SqlResult:
        """Run one Spark SQL statement in this session (as :func:`pyiceberg_go.sql`).

        Example::

            s.sql("DELETE FROM local.db.t WHERE id < 10")
        """
        from .sql import run

        return run(self, statement, views)

    def register(self, name: str, df: ArrowData) -> None:
        """Make ``df`` the temporary view ``name`` of this session (as :func:`pyiceberg_go.register`).

        Example::

            s.register("updates", df)
        """
        from .sql import register

        register(name, df, session=self)

    @contextlib.contextmanager
    def _handle(self) -> Iterator[_Handle]:
        h = self._state.acquire()
        try:
            yield h
        finally:
            self._state.done(h)

    def _execute(self, request: Mapping[str, Any], data: object = None) -> dict[str, Any]:
        """Run one request document with optional Arrow input on this session; see :func:`execute`."""
        stream = InputStream(data) if data is not None else None
        if in_memory(data):
            request = {**request, "input_in_memory": True}
        try:
            with self._handle() as h:
                doc = json.dumps(request).encode()
                op = c_uintptr(0)
                h.dll.pig_operation_new(ctypes.byref(op))
                try:
                    return _run(h.dll, h.value, doc, stream.address if stream else 0, op.value)
                finally:
                    h.dll.pig_operation_release(op.value)
        finally:
            if stream is not None:
                stream.close()

    def _scan(self, request: Mapping[str, Any], operation: int = 0) -> CapsuleType:
        """Run pig_read; the stream comes back in an ``arrow_array_stream`` capsule that owns it.

        ``operation`` (a handle from pig_operation_new, or 0) lets the caller cancel the
        stream and read its progress while a consumer reads it.
        """
        doc = json.dumps(request).encode()
        with self._handle() as h:
            address = new_stream_struct()
            try:
                err = PigError()
                status = h.dll.pig_read(h.value, doc, operation, address, ctypes.byref(err))
                _native.raise_for(status, err)
            except BaseException:
                stream = ArrowArrayStream.from_address(address)
                if stream.release:
                    stream.release(ctypes.byref(stream))
                free_struct(address)
                raise
            capsule: CapsuleType = stream_capsule(address)
            return capsule


_default = Session()
_default._state.reopenable = True


def default_session() -> Session:
    """The session the module-level functions use (``ig.writeTo``, ``ig.table``, ``ig.configure``, ...).

    It is never closed for good: :meth:`Session.close` releases its library
    session and the next call opens a new one with the same configuration.

    Example::

        s = ig.default_session()
        assert ig.table("local.db.t").session is s
    """
    return _default


def session_document() -> dict[str, Any]:
    """The session document (docs/abi.md#session) the default session would be opened with now.

    Example::

        session_document()["home"]
    """
    return default_session().session_document()


def configure(
    catalogs: Mapping[str, Mapping[str, Any]] | None = None,
    conf: Mapping[str, Any] | None = None,
    spark_conf: Mapping[str, Any] | None = None,
) -> None:
    """Replace the default session's catalogs (PyIceberg property names) and session conf.

    The new library session is opened lazily on the next call, and it captures
    the ``PYICEBERG_*`` environment variables as they are at that moment.
    Values are turned into strings (``True`` -> ``"true"``). Calls running on
    the previous library session finish before it is released.

    ``conf={"spark.sql.session.timeZone": "Europe/Paris"}`` (or ``"session.timeZone"``)
    sets the session time zone, UTC by default: timestamps without a time zone are
    wall-clock times in it when written into ``timestamptz`` columns or compared with
    them, as in Spark.

    ``spark_conf`` takes a Spark user's settings verbatim (``spark.*`` keys; also a
    ``spark_conf`` mapping in ``~/.pyiceberg.yaml``): each ``spark.sql.catalog.<name>`` block
    (``type`` rest, hadoop or jdbc on SQLite, ``uri``, ``warehouse``, ``io-impl``,
    ``default-namespace``, ``table-default.*``, S3 properties, ...) becomes catalog ``<name>``,
    ``spark.sql.defaultCatalog`` the default catalog, other keys session conf. Catalogs we
    cannot open (hive, glue, nessie, JDBC on other databases) raise
    :class:`NotSupportedError` naming the setting.

    Example::

        ig.configure(
            catalogs={"local": {"type": "sql", "uri": "sqlite:////tmp/x/catalog.db",
                                "warehouse": "file:///tmp/x/wh"}},
            conf={"target-file-size-bytes": str(128 << 20)},
        )
        ig.configure(spark_conf={
            "spark.sql.catalog.prod": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.prod.type": "rest",
            "spark.sql.catalog.prod.uri": "http://localhost:8181",
            "spark.sql.defaultCatalog": "prod",
        })
    """
    default_session().configure(catalogs, conf, spark_conf)


def execute(request: Mapping[str, Any], data: object = None) -> dict[str, Any]:
    """Run one request document (docs/abi.md#request) on the default session; return the result.

    The call runs on a worker thread so that Ctrl-C works: on KeyboardInterrupt
    the operation is cancelled (nothing is committed), the worker is awaited
    and KeyboardInterrupt is raised again.

    Example::

        execute({"op": "snapshots", "table": "local.db.events"})
    """
    return default_session()._execute(request, data)


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
