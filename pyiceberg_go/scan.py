"""``ScanStream``: the rows of a table scan as an Arrow C stream (the PyCapsule interface).

Any Arrow consumer reads it without this package needing pyarrow: pyarrow
(``pa.table(s)``, ``pa.RecordBatchReader.from_stream(s)``), polars
(``pl.DataFrame(s)``), pandas (``pd.DataFrame.from_arrow(s)``) or DuckDB
(``duckdb.sql("select * from s")``, ``duckdb.from_arrow(s)``).

Example::

    s = ig.table("local.db.events").scan(columns=["id", "level"], where="level = 'WARN'")
    df = pl.DataFrame(s)
"""

from __future__ import annotations

import ctypes
import os
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _native
from ._arrow import stream_schema_capsule
from ._native import c_uintptr
from .errors import StreamConsumedError
from .results import ScanProgress

if TYPE_CHECKING:
    import pyarrow

    from ._session import Session
    from ._typing import CapsuleType

__all__ = ["ScanStream"]


def _require_pyarrow(what: str) -> Any:
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError(
            f"{what} returns pyarrow objects and needs pyarrow: pip install 'pyiceberg-go[pyarrow]'"
        ) from e
    return pyarrow


class ScanStream:
    """The rows of one scan, exported once through ``__arrow_c_stream__``.

    Get one from :meth:`pyiceberg_go.Table.scan`: the library opens the scan
    then (a missing table or column raises there), and the stream is read by
    whichever consumer takes it first. A second read raises
    :class:`StreamConsumedError`; call ``scan()`` again for another stream.
    ``__arrow_c_schema__`` gives the schema without reading the rows (DuckDB
    binds with it). A stream dropped unread is released with it, or at once
    by :meth:`close` or a ``with`` block.

    Example::

        import pyarrow as pa, polars as pl, duckdb

        t = ig.table("local.db.events")
        pa.table(t.scan())                                  # pyarrow.Table
        pl.DataFrame(t.scan(columns=["id", "ts"]))          # polars
        s = t.scan(where="level = 'ERROR'")
        duckdb.sql("select level, count(*) from s group by level").fetchall()
    """

    def __init__(self, session: Session, document: dict[str, Any]) -> None:
        self._document = document
        self._lock = threading.Lock()
        self._dll = _native.lib()
        op = c_uintptr(0)
        self._dll.pig_operation_new(ctypes.byref(op))
        self._op = op.value
        self._pid = os.getpid()
        try:
            self._capsule: CapsuleType | None = session._scan(document, self._op)
        except BaseException:
            self._release_op()
            raise

    def _release_op(self) -> None:
        # Only the handle goes: the stream reads on until its consumer releases it.
        op, self._op = self._op, 0
        if op and self._pid == os.getpid():
            self._dll.pig_operation_release(op)

    def __del__(self) -> None:
        self._release_op()

    def cancel(self) -> None:
        """Stop the read: a consumer reading the stream gets an error on its next batch.

        Example::

            s = ig.table("local.db.big").scan()
            threading.Timer(5, s.cancel).start()
            pa.table(s)  # raises if the read takes longer than five seconds
        """
        if self._op and self._pid == os.getpid():
            self._dll.pig_operation_cancel(self._op)

    def progress(self) -> ScanProgress:
        """What the read has handed out so far: ``rows``, ``bytes`` and the data ``files`` planned.

        Example::

            s = ig.table("local.db.t").scan()
            for batch in s.to_reader():
                print(s.progress()["rows"])
        """
        rows, nbytes, files = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        if self._op and self._pid == os.getpid():
            self._dll.pig_operation_progress(self._op, ctypes.byref(rows), ctypes.byref(nbytes), ctypes.byref(files))
        return ScanProgress(rows=rows.value, bytes=nbytes.value, files=files.value)

    def __repr__(self) -> str:
        state = "read" if self._capsule is None else "unread"
        return f"<pyiceberg_go ScanStream of {self._document.get('table')!r} ({state})>"

    @property
    def scan_document(self) -> dict[str, Any]:
        """The scan document (docs/abi.md#scan) this stream was opened with.

        Example::

            ig.table("local.db.t").scan(columns=["id"]).scan_document  # {"table": ..., "columns": ["id"]}
        """
        return dict(self._document)

    @property
    def consumed(self) -> bool:
        """Whether the stream was handed to a consumer (or closed) already.

        Example::

            s = ig.table("local.db.t").scan()
            pa.table(s)
            assert s.consumed
        """
        return self._capsule is None

    def _consumed_error(self) -> StreamConsumedError:
        return StreamConsumedError(
            f"the scan stream of {self._document.get('table')!r} was already read or closed; "
            "a stream is read once: call table.scan(...) again for another"
        )

    def __arrow_c_schema__(self) -> object:
        """The rows' schema as an ``arrow_schema`` PyCapsule (the stream stays unread).

        Example::

            schema = pa.schema(ig.table("local.db.t").scan())
        """
        with self._lock:
            if self._capsule is None:
                raise self._consumed_error()
            return stream_schema_capsule(self._capsule)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Hand the stream over as an ``arrow_array_stream`` PyCapsule; only once.

        ``requested_schema`` is ignored (the PyCapsule interface makes it a
        best-effort request): the rows come in the table's types.

        Example::

            reader = pa.RecordBatchReader.from_stream(ig.table("local.db.t").scan())
        """
        with self._lock:
            capsule, self._capsule = self._capsule, None
        if capsule is None:
            raise self._consumed_error()
        return capsule

    def close(self) -> None:
        """Release the stream without reading it (nothing happens if it was handed over).

        Example::

            s = ig.table("local.db.t").scan()
            s.close()
        """
        with self._lock:
            self._capsule = None  # the capsule's destructor releases the stream

    def __enter__(self) -> ScanStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def to_arrow(self) -> pyarrow.Table:
        """Read the whole stream into a pyarrow Table (needs pyarrow >= 15).

        Example::

            tbl = ig.table("local.db.t").scan(columns=["id"]).to_arrow()
        """
        pa = _require_pyarrow("ScanStream.to_arrow()")
        return pa.RecordBatchReader.from_stream(self).read_all()

    def to_reader(self) -> pyarrow.RecordBatchReader:
        """The stream as a pyarrow RecordBatchReader, read batch by batch (needs pyarrow >= 15).

        Example::

            for batch in ig.table("local.db.t").scan().to_reader():
                print(batch.num_rows)
        """
        pa = _require_pyarrow("ScanStream.to_reader()")
        return pa.RecordBatchReader.from_stream(self)
