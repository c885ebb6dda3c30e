"""Streaming writes named as PySpark's ``DataStreamWriter``: micro-batches committed exactly once.

:func:`writeStream` takes a source and a table. The source is either an
iterable whose items are Arrow data (one micro-batch each; ``None`` is a
trigger without data) or a callable polled once per trigger that returns Arrow
data or ``None`` (nothing new). Each batch is written with
:meth:`DataFrameWriterV2.streamBatch`, so the library records the query id and
batch id in the snapshot summary and commits every batch once: a restarted query
resumes after the table's last committed batch (the table is the checkpoint),
and a batch a crash left half done is either there or written again, never
twice. This module only orchestrates triggers; every write is one call into
the library.

Example::

    q = (ig.writeStream(batches, "local.db.events")
           .outputMode("append")
           .trigger(availableNow=True)
           .option("checkpointLocation", "/tmp/ckpt/events")
           .start())
    q.awaitTermination()
    print(q.lastProgress["numInputRows"])
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from . import _session
from ._session import Session
from ._typing import ArrowData
from .readstream import OFFSET_KEY, DataStreamReader, Offset, offset_from, offset_json
from .results import WriteResult

__all__ = ["DataStreamWriter", "StreamingQuery", "StreamingQueryException", "writeStream"]

#: What a source yields per trigger: Arrow data, or None for no new data, or a pair of Arrow data
#: and summary properties of that batch's snapshot (the source's offsets, say).
BatchData = ArrowData | tuple[ArrowData, Mapping[str, Any]] | None
#: A source: an iterable of batches, or a callable polled once per trigger.
Source = Iterable[BatchData] | Callable[[], BatchData]
#: ``foreachBatch`` functions: ``fn(data, batch_id)``.
BatchFunction = Callable[[Any, int], None]

_UNITS = {
    "ms": 0.001,
    "millisecond": 0.001,
    "milliseconds": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "min": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "day": 86400.0,
    "days": 86400.0,
}
#: The wait after a trigger that found no new data (Spark's spark.sql.streaming.pollingDelay).
POLLING_DELAY_S = 0.01
#: How many progress reports a query keeps (Spark's spark.sql.streaming.numRecentProgressUpdates).
RECENT_PROGRESS = 100


def _interval_seconds(v: str | float) -> float:
    """``"1 minute"``, ``"10 seconds"``, ``"500 milliseconds"`` (Spark's interval strings) or seconds."""
    if isinstance(v, bool):
        raise TypeError("processingTime must be an interval string or seconds")
    if isinstance(v, (int, float)):
        seconds = float(v)
    else:
        m = re.fullmatch(r"\s*(?:interval\s+)?(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*", str(v))
        if m is None or m.group(2).lower() not in _UNITS:
            raise ValueError(f"processingTime {v!r} is not an interval such as '10 seconds' or '1 minute'")
        seconds = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if seconds < 0:
        raise ValueError(f"processingTime {v!r} is negative")
    return seconds


class StreamingQueryException(Exception):
    """The exception that terminated a :class:`StreamingQuery` (PySpark's name); ``cause`` is the original.

    Example::

        try:
            q.awaitTermination()
        except ig.StreamingQueryException as e:
            print("batch failed:", e.cause)
    """

    def __init__(self, message: str, cause: BaseException) -> None:
        super().__init__(message)
        self.cause = cause


class StreamingQuery:
    """A running (or finished) stream started by :meth:`DataStreamWriter.start`, as PySpark's.

    Example::

        q = ig.writeStream(source, "local.db.t").trigger(processingTime="10 seconds").start()
        ...
        q.stop()
        print(q.recentProgress)
    """

    def __init__(self, writer: DataStreamWriter, query_id: str, thread_name: str) -> None:
        self._writer = writer
        self._id = query_id
        self._run_id = str(uuid.uuid4())
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._progress: list[dict[str, Any]] = []
        self._exception: StreamingQueryException | None = None
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)

    @property
    def id(self) -> str:
        """The query's id, the same across restarts from one checkpoint (``spark.sql.streaming.queryId``).

        Example::

            q.id  # the spark.sql.streaming.queryId of its snapshots
        """
        return self._id

    @property
    def runId(self) -> str:
        """This run's id, new at every start.

        Example::

            q.runId
        """
        return self._run_id

    @property
    def name(self) -> str | None:
        """The name given with ``queryName``.

        Example::

            q.name
        """
        return self._writer._name

    @property
    def isActive(self) -> bool:
        """Whether the query is still running.

        Example::

            while q.isActive: time.sleep(1)
        """
        return self._thread.is_alive()

    @property
    def lastProgress(self) -> dict[str, Any] | None:
        """The progress report of the last batch (``None`` before the first).

        Example::

            q.lastProgress["batchId"], q.lastProgress["numInputRows"]
        """
        with self._lock:
            return dict(self._progress[-1]) if self._progress else None

    @property
    def recentProgress(self) -> list[dict[str, Any]]:
        """The last reports (up to 100), oldest first.

        Example::

            [p["batchId"] for p in q.recentProgress]
        """
        with self._lock:
            return [dict(p) for p in self._progress]

    def exception(self) -> StreamingQueryException | None:
        """The exception that ended the query, if one did.

        Example::

            if q.exception() is not None: print(q.exception().cause)
        """
        return self._exception

    def awaitTermination(self, timeout: float | None = None) -> bool | None:
        """Wait for the query to end; raise its :class:`StreamingQueryException` if it failed.

        With ``timeout`` (seconds) returns whether it ended in time, else ``None``.

        Example::

            q.awaitTermination(timeout=60)
        """
        self._thread.join(timeout)
        if self._exception is not None:
            raise self._exception
        return None if timeout is None else not self._thread.is_alive()

    def stop(self) -> None:
        """Stop the query after the batch in flight (which commits whole or not at all) and wait for it.

        Example::

            q.stop()
        """
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join()

    def _start(self) -> None:
        self._thread.start()

    def _report(self, progress: dict[str, Any]) -> None:
        with self._lock:
            self._progress.append(progress)
            del self._progress[:-RECENT_PROGRESS]

    def _run(self) -> None:
        try:
            self._writer._loop(self)
        except BaseException as e:  # the query ends with it; awaitTermination raises it
            self._exception = StreamingQueryException(f"query {self.name or self.id} terminated: {e}", e)


class _Exhausted(Exception):
    pass


class DataStreamWriter:
    """Builder of a streaming write of ``source`` to a table; methods chain like PySpark's ``DataStreamWriter``.

    Get one from :func:`writeStream`. Options other than ``checkpointLocation``
    are write options of every batch (``fanout-enabled``,
    ``snapshot-property.<k>``, ...).

    Example::

        q = (ig.writeStream(lambda: consumer.poll_arrow(), "local.db.events")
               .queryName("events")
               .trigger(processingTime="1 minute")
               .start())
    """

    def __init__(
        self,
        source: Source,
        table: str,
        session: Session | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        if not isinstance(table, str):
            raise TypeError(f"the table identifier must be a str, got {type(table).__name__}")
        if not callable(source) and not isinstance(source, Iterable):
            raise TypeError(f"source must be an iterable of Arrow data or a callable, got {type(source).__name__}")
        self._source = source
        self._table = table
        self._session = session if session is not None else _session.default_session()
        self._clock = clock if clock is not None else time.monotonic
        self._sleep = sleep
        self._mode = "append"
        self._trigger: tuple[str, float] = ("processingTime", 0.0)
        self._options: dict[str, str] = {}
        self._checkpoint: str | None = None
        self._name: str | None = None
        self._foreach: BatchFunction | None = None

    def outputMode(self, mode: str) -> DataStreamWriter:
        """``"append"`` (each batch appended) or ``"complete"`` (each batch replaces the table's rows).

        Example::

            ig.writeStream(source, "local.db.totals").outputMode("complete")
        """
        m = str(mode).lower()
        if m not in ("append", "complete"):
            raise ValueError(f"outputMode {mode!r}: pyiceberg_go supports append and complete")
        self._mode = m
        return self

    def trigger(
        self,
        processingTime: str | float | None = None,
        once: bool | None = None,
        availableNow: bool | None = None,
    ) -> DataStreamWriter:
        """When batches run: every ``processingTime`` (``"10 seconds"``; default 0, back to back),
        ``once=True`` (one batch, then stop) or ``availableNow=True`` (batches until the source
        has nothing more, then stop). Exactly one. A query also ends when an iterable source is
        exhausted; a callable source returning ``None`` ends ``once`` and ``availableNow``.

        Example::

            ig.writeStream(files, "local.db.t").trigger(availableNow=True).start().awaitTermination()
        """
        given = [
            k for k, v in (("processingTime", processingTime), ("once", once), ("availableNow", availableNow)) if v
        ]
        if len(given) != 1:
            raise ValueError("trigger() takes exactly one of processingTime, once=True, availableNow=True")
        if processingTime is not None:
            self._trigger = ("processingTime", _interval_seconds(processingTime))
        else:
            self._trigger = (given[0], 0.0)
        return self

    def option(self, key: str, value: Any) -> DataStreamWriter:
        """Set ``checkpointLocation`` (a folder keeping the query's id) or a write option of every batch.

        Example::

            ig.writeStream(source, "local.db.t").option("checkpointLocation", "/tmp/ckpt/t")
        """
        if key == "checkpointLocation":
            self._checkpoint = str(value)
        else:
            self._options[str(key)] = _session._option_value(value)
        return self

    def options(self, **options: Any) -> DataStreamWriter:
        """Set several options at once.

        Example::

            ig.writeStream(source, "local.db.t").options(**{"fanout-enabled": "true"})
        """
        for k, v in options.items():
            self.option(k, v)
        return self

    def queryName(self, name: str) -> DataStreamWriter:
        """Name the query; without a ``checkpointLocation`` the name fixes its id, so a restart resumes.

        Example::

            ig.writeStream(source, "local.db.t").queryName("events")
        """
        if not isinstance(name, str) or not name:
            raise ValueError("queryName must be a non-empty str")
        self._name = name
        return self

    def foreachBatch(self, fn: BatchFunction) -> DataStreamWriter:
        """Call ``fn(data, batch_id)`` for every batch instead of writing it to the table.

        The batch ids resume from ``checkpointLocation``'s commit log; ``fn`` may
        write with ``ig.writeTo(data, t).streamBatch(query_id, batch_id)`` to commit
        each batch exactly once (``query_id`` is the query's :attr:`StreamingQuery.id`).

        Example::

            ig.writeStream(source, "local.db.t").foreachBatch(lambda df, i: print(i, df.num_rows)).start()
        """
        if not callable(fn):
            raise TypeError("foreachBatch() takes a function of (data, batch_id)")
        self._foreach = fn
        return self

    def start(self) -> StreamingQuery:
        """Start the query on a thread of its own and return it.

        Example::

            q = ig.writeStream(source, "local.db.t").start()
        """
        q = StreamingQuery(self, self._query_id(), f"pyiceberg_go stream {self._name or self._table}")
        q._start()
        return q

    # --- the loop -------------------------------------------------------------------------------

    def _query_id(self) -> str:
        if self._checkpoint is not None:
            os.makedirs(self._checkpoint, exist_ok=True)
            meta = os.path.join(self._checkpoint, "metadata")
            if os.path.exists(meta):
                with open(meta) as f:
                    return str(json.load(f)["id"])
            qid = str(uuid.uuid4())
            tmp = meta + ".tmp"
            with open(tmp, "w") as f:
                json.dump({"id": qid}, f)
            os.replace(tmp, meta)
            return qid
        if self._name is not None:
            return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pyiceberg_go:{self._table}:{self._name}"))
        return str(uuid.uuid4())

    def _last_committed(self, q: StreamingQuery) -> int:
        """The last batch id of the query: the table's (a table sink) or the checkpoint's commit log."""
        if self._foreach is None:
            last = self._session.table(self._table).last_committed_batch(q.id)
            return -1 if last is None else last.batch_id
        if self._checkpoint is None:
            return -1
        commits = os.path.join(self._checkpoint, "commits")
        ids = [int(n) for n in os.listdir(commits) if n.isdigit()] if os.path.isdir(commits) else []
        return max(ids, default=-1)

    def _inputs(self, first: int) -> Iterator[tuple[int, BatchData]]:
        """(batch id, data) per trigger; ends when an iterable source is exhausted."""
        if callable(self._source):
            poll = self._source
            n = first
            while True:
                data = poll()
                yield n, data
                if data is not None:
                    n += 1
        else:
            for i, data in enumerate(self._source):
                yield i, data

    def _wait(self, q: StreamingQuery, seconds: float) -> None:
        if seconds <= 0:
            return
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            q._stop.wait(seconds)

    def _next_trigger(self, started: float, interval: float, ran: bool) -> float:
        """Seconds to wait before the next trigger: the rest of the interval, and at least Spark's
        polling delay after a trigger that found nothing new (no busy loop on an idle source)."""
        wait = started + interval - self._clock()
        return wait if ran else max(wait, POLLING_DELAY_S)

    def _loop(self, q: StreamingQuery) -> None:
        if isinstance(self._source, DataStreamReader):
            self._loop_table_source(q, self._source)
            return
        last = self._last_committed(q)
        kind, interval = self._trigger
        inputs = self._inputs(last + 1)
        while not q._stop.is_set():
            started = self._clock()
            try:
                batch_id, data = next(inputs)
            except StopIteration:
                return
            ran = data is not None and batch_id > last
            if ran:
                self._batch(q, batch_id, data, started)
                last = batch_id
            elif data is None and kind != "processingTime":
                return  # nothing available now: once and availableNow end
            if kind == "once" and ran:
                return
            if kind == "processingTime":
                self._wait(q, self._next_trigger(started, interval, ran))

    def _resume_table_source(
        self, q: StreamingQuery, src: DataStreamReader
    ) -> tuple[int, Offset | None, Offset | None]:
        """The last committed batch id, its end offset in ``src`` and the end of a batch planned
        but not committed (run again with the same files)."""
        if self._foreach is None:
            committed = self._session.table(self._table).last_committed_batch(q.id)
            if committed is None:
                return -1, None, None
            if OFFSET_KEY not in committed.summary:
                raise ValueError(
                    f"query {q.id} committed batch {committed.batch_id} to {self._table} without a source offset: "
                    "it streamed another source; use a new queryName or checkpointLocation"
                )
            return committed.batch_id, offset_from(committed.summary[OFFSET_KEY], src.table), None
        if self._checkpoint is None:
            return -1, None, None
        last = self._last_committed(q)

        def planned(batch_id: int) -> Offset | None:
            path = os.path.join(self._checkpoint or "", "offsets", str(batch_id))
            if not os.path.exists(path):
                return None
            with open(path) as f:
                return offset_from(f.read(), src.table)

        return last, planned(last) if last >= 0 else None, planned(last + 1)

    def _loop_table_source(self, q: StreamingQuery, src: DataStreamReader) -> None:
        """Batches of a table read as a stream: each ends at an offset the library plans under the
        source's limits (none for ``once``; ``availableNow`` stops at the head it started with)."""
        kind, interval = self._trigger
        last, start, replay = self._resume_table_source(q, src)
        until = src._head() if kind == "availableNow" else None
        batch_id = last + 1
        while not q._stop.is_set():
            started = self._clock()
            end = (
                replay
                if replay is not None
                else src.latestOffset(start, limits=kind != "once", until_snapshot_id=until)
            )
            replay = None
            if end is not None:
                data = src.getBatch(start, end)
                recorded = offset_json(src.table, end)
                if self._foreach is not None and self._checkpoint is not None:
                    offsets = os.path.join(self._checkpoint, "offsets")
                    os.makedirs(offsets, exist_ok=True)
                    tmp = os.path.join(offsets, f".{batch_id}.tmp")
                    with open(tmp, "w") as f:
                        f.write(recorded)
                    os.replace(tmp, os.path.join(offsets, str(batch_id)))
                self._batch(q, batch_id, (data, {OFFSET_KEY: recorded}), started)
                start = end
                batch_id += 1
                if kind == "once":
                    return
            elif kind != "processingTime":
                return
            if kind == "processingTime":
                self._wait(q, self._next_trigger(started, interval, end is not None))

    def _batch(self, q: StreamingQuery, batch_id: int, data: Any, started: float) -> None:
        at = _dt.datetime.now(_dt.timezone.utc)
        result: WriteResult | None = None
        props: Mapping[str, Any] = {}
        if isinstance(data, tuple):
            data, props = data
        if self._foreach is not None:
            self._foreach(data, batch_id)
            if self._checkpoint is not None:
                commits = os.path.join(self._checkpoint, "commits")
                os.makedirs(commits, exist_ok=True)
                with open(os.path.join(commits, str(batch_id)), "w") as f:
                    f.write(json.dumps({"batchId": batch_id}))
        else:
            w = self._session.writeTo(data, self._table).streamBatch(q.id, batch_id).options(**self._options)
            for k, v in props.items():
                w.option(f"snapshot-property.{k}", v)
            result = w.overwrite("true") if self._mode == "complete" else w.append()
        if result is None:
            rows = getattr(data, "num_rows", None)
        else:
            rows = None if result.skipped else int(result.metrics["rows"])
        q._report(
            {
                "id": q.id,
                "runId": q.runId,
                "name": self._name,
                "timestamp": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "batchId": batch_id,
                "numInputRows": rows,
                "durationMs": {"triggerExecution": int((self._clock() - started) * 1000)},
                "sink": {
                    "description": "foreachBatch" if self._foreach is not None else self._table,
                    "snapshotId": None if result is None else result.snapshot_id,
                    "skipped": False if result is None else result.skipped,
                },
            }
        )


def writeStream(
    source: Source,
    table: str,
    *,
    session: Session | None = None,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> DataStreamWriter:
    """Start a streaming write of ``source`` to ``table`` (``[catalog.]namespace.table``, which must exist).

    ``source``: an iterable of Arrow data (pyarrow, pandas, polars, DuckDB results;
    one micro-batch per item, ``None`` for a trigger without data) or a callable
    polled per trigger. An item may be a pair ``(data, properties)``: the properties
    go into that batch's snapshot summary (the source's offsets, read back with
    :meth:`pyiceberg_go.Table.last_committed_batch` to resume the source).
    ``clock`` (monotonic seconds) and ``sleep`` replace the time functions
    ``processingTime`` triggers use, for tests.

    Example::

        q = ig.writeStream(iter(frames), "local.db.t").trigger(availableNow=True).start()
        q.awaitTermination()
    """
    return DataStreamWriter(source, table, session=session, clock=clock, sleep=sleep)
