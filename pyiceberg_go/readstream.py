"""Tables as stream sources, named as PySpark's ``spark.readStream``: micro-batches of appended files.

:func:`readStream` names a table; its micro-batches are the data files the
table's append snapshots added, oldest first, under Spark's read options
(``stream-from-timestamp``, ``streaming-max-files-per-micro-batch``,
``streaming-max-rows-per-micro-batch``, ``streaming-skip-overwrite-snapshots``,
``streaming-skip-delete-snapshots``). The library plans each batch (its end is
an offset, Spark's ``StreamingOffset`` JSON) and reads it; this module only
keeps the offsets.

Used as the source of :func:`pyiceberg_go.writeStream`, the query keeps the
offsets where it keeps its batches: in the target table's snapshot summary
(``pyiceberg-go.source-offset``) for a table sink, so the offset and the rows
commit together, or in ``checkpointLocation`` (``offsets/<batch>``, written
before the batch runs, as Spark's) for ``foreachBatch``, so a batch a crash
cut short runs again with the same files.

Example::

    src = ig.readStream("local.db.events").option("streaming-max-files-per-micro-batch", 10)
    q = ig.writeStream(src, "local.db.events_copy").trigger(availableNow=True).start()
    q.awaitTermination()
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from . import _session
from ._session import Session

if TYPE_CHECKING:
    import pyarrow

__all__ = ["DataStreamReader", "readStream"]

#: The summary key where a table sink keeps the source offset of each batch.
OFFSET_KEY = "pyiceberg-go.source-offset"

#: Spark's streaming read options and the micro_batch keys they set.
_INT_OPTIONS = {
    "stream-from-timestamp": "from_timestamp_ms",
    "streaming-max-files-per-micro-batch": "max_files",
    "streaming-max-rows-per-micro-batch": "max_rows",
}
_BOOL_OPTIONS = {
    "streaming-skip-overwrite-snapshots": "skip_overwrite_snapshots",
    "streaming-skip-delete-snapshots": "skip_delete_snapshots",
}
#: Options that bound one micro-batch (ignored by Trigger.Once, as Spark's).
_LIMITS = ("max_files", "max_rows")

#: An offset: Spark's StreamingOffset JSON as a dict (None: the stream's start).
Offset = dict[str, Any]


def _timestamp_ms(v: Any) -> int:
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            raise ValueError("stream-from-timestamp: give an aware datetime or epoch milliseconds")
        return int(v.timestamp() * 1000)
    return _positive("stream-from-timestamp", v, minimum=0)


def _positive(key: str, v: Any, minimum: int = 1) -> int:
    if isinstance(v, bool):
        raise TypeError(f"{key} must be an integer, got a bool")
    try:
        n = int(str(v).strip())
    except ValueError:
        raise ValueError(f"{key} must be an integer, got {v!r}") from None
    if n < minimum:
        raise ValueError(f"{key} must be at least {minimum}, got {n}")
    return n


def _bool(key: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s not in ("true", "false"):
        raise ValueError(f"{key} must be true or false, got {v!r}")
    return s == "true"


class DataStreamReader:
    """A table read as a stream of micro-batches; methods chain like PySpark's ``DataStreamReader``.

    Get one from :func:`readStream`. Iterating it yields the batches available
    now (pyarrow Tables), from the stream's start. As a source of
    :func:`pyiceberg_go.writeStream` it resumes from the query's checkpoint.
    :meth:`latestOffset` and :meth:`getBatch` are the steps a query takes, for
    callers that keep offsets themselves.

    Example::

        src = ig.readStream("local.db.events").option("stream-from-timestamp", 1700000000000)
        for batch in src:
            print(batch.num_rows)
    """

    def __init__(self, table: str, session: Session | None = None) -> None:
        if not isinstance(table, str):
            raise TypeError(f"the table identifier must be a str, got {type(table).__name__}")
        self._table = table
        self._session = session if session is not None else _session.default_session()
        self._mb: dict[str, Any] = {}

    @property
    def table(self) -> str:
        """The table streamed.

        Example::

            ig.readStream("local.db.t").table
        """
        return self._table

    def option(self, key: str, value: Any) -> DataStreamReader:
        """Set one of Spark's streaming read options; any other key is a ``ValueError``.

        ``stream-from-timestamp`` (epoch milliseconds or an aware datetime),
        ``streaming-max-files-per-micro-batch`` (hard),
        ``streaming-max-rows-per-micro-batch`` (soft: whole files, at least one),
        ``streaming-skip-overwrite-snapshots``, ``streaming-skip-delete-snapshots``.

        Example::

            ig.readStream("local.db.t").option("streaming-max-rows-per-micro-batch", 100_000)
        """
        k = str(key)
        if k == "stream-from-timestamp":
            self._mb[_INT_OPTIONS[k]] = _timestamp_ms(value)
        elif k in _INT_OPTIONS:
            self._mb[_INT_OPTIONS[k]] = _positive(k, value)
        elif k in _BOOL_OPTIONS:
            self._mb[_BOOL_OPTIONS[k]] = _bool(k, value)
        else:
            known = ", ".join(sorted([*_INT_OPTIONS, *_BOOL_OPTIONS]))
            raise ValueError(f"readStream option {k!r} is not one of {known}")
        return self

    def options(self, **options: Any) -> DataStreamReader:
        """Set several options at once.

        Example::

            ig.readStream("local.db.t").options(**{"streaming-skip-delete-snapshots": "true"})
        """
        for k, v in options.items():
            self.option(k, v)
        return self

    def _document(self, op: str, start: Offset | None, end: Offset | None = None, **extra: Any) -> dict[str, Any]:
        mb = dict(self._mb)
        if op == "scan":
            for k in _LIMITS:
                mb.pop(k, None)
        mb.update(extra)
        if start is not None:
            mb["start"] = dict(start)
        if end is not None:
            mb["end"] = dict(end)
        return {"op": op, "table": self._table, "micro_batch": mb}

    def latestOffset(
        self, start: Offset | None = None, *, limits: bool = True, until_snapshot_id: int | None = None
    ) -> Offset | None:
        """The end of the next micro-batch after ``start`` (``None``: the stream's start), or
        ``None`` when there is nothing new. ``limits=False`` ignores the max-files and max-rows
        options (Spark's Trigger.Once); ``until_snapshot_id`` plans no further than that snapshot
        (Trigger.AvailableNow fixes it when a query starts).

        Example::

            src = ig.readStream("local.db.t")
            end = src.latestOffset()
            rows = src.getBatch(None, end)
        """
        extra: dict[str, Any] = {}
        if not limits:
            extra = dict.fromkeys(_LIMITS, 0)
        if until_snapshot_id is not None:
            extra["until_snapshot_id"] = int(until_snapshot_id)
        doc = self._document("stream_offset", start, **extra)
        end = self._session._execute(doc).get("end")
        return dict(end) if end else None

    def _head(self) -> int | None:
        doc = self._session._execute(self._document("stream_offset", None))
        head = doc.get("head_snapshot_id")
        return None if head is None else int(head)

    def getBatch(self, start: Offset | None, end: Offset) -> pyarrow.Table:
        """The rows of the micro-batch (``start``, ``end``], as a pyarrow Table in the table's schema.

        Example::

            src = ig.readStream("local.db.t")
            first = src.getBatch(None, src.latestOffset())
        """
        from .scan import ScanStream

        return ScanStream(self._session, self._document("scan", start, end)).to_arrow()

    def _batches(self, start: Offset | None, *, limits: bool, until: int | None) -> Iterator[tuple[Offset, Any]]:
        """(end offset, rows) of each batch after ``start`` that is available now."""
        while True:
            end = self.latestOffset(start, limits=limits, until_snapshot_id=until)
            if end is None:
                return
            yield end, self.getBatch(start, end)
            start = end

    def __iter__(self) -> Iterator[pyarrow.Table]:
        for _, rows in self._batches(None, limits=True, until=self._head()):
            yield rows


def offset_json(table: str, end: Offset) -> str:
    """The summary value (or checkpoint file) recording that a batch ended at ``end`` of ``table``."""
    return json.dumps({"table": table, "offset": end}, sort_keys=True)


def offset_from(value: str | None, table: str) -> Offset | None:
    """The offset a recorded value holds; a value for another table is an error."""
    if not value:
        return None
    doc: Mapping[str, Any] = json.loads(value)
    if doc.get("table") != table:
        raise ValueError(
            f"the query's checkpoint streamed table {doc.get('table')!r}, not {table!r}: "
            "use a new checkpointLocation or queryName"
        )
    off = doc.get("offset")
    return dict(off) if off else None


def readStream(table: str, *, session: Session | None = None) -> DataStreamReader:
    """Read ``table`` (``[catalog.]namespace.table``) as a stream of micro-batches, as Spark's
    ``spark.readStream.table(...)``; see :class:`DataStreamReader` for its options.

    Example::

        q = (ig.writeStream(ig.readStream("local.db.a"), "local.db.b")
               .trigger(availableNow=True).start())
        q.awaitTermination()
    """
    return DataStreamReader(table, session=session)
