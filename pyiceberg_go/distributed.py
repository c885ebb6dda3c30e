"""Distributed writes and reads: the engine-neutral parts Ray's and Dask's integrations share.

A :class:`DistributedWrite` is one write of many tasks and one commit
(docs/abi.md#distributed-writes): every task calls :meth:`DistributedWrite.write_task` on its
share of the data (the library's ``write_files``: it writes data files, commits nothing and
returns small descriptions of them); the coordinator passes every task's descriptions to
:meth:`DistributedWrite.commit` (``commit_files``: one snapshot) or
:meth:`DistributedWrite.abort` (``abort_files``). A :class:`DistributedWrite` pickles: it
carries its session's catalogs and configuration to the workers, which open a session of their
own. :class:`ReadSplit` is one task of a distributed read. Nothing here looks at rows.
"""

from __future__ import annotations

import json
import secrets
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import _session
from .expressions import Column, to_sql
from .results import WriteResult
from .scan import ScanStream
from .writer import DataFrameWriterV2, PartitionColumn, SortTerm

if TYPE_CHECKING:
    from ._session import Session
    from ._typing import ArrowData

__all__ = ["MODES", "DistributedWrite", "ReadSplit", "read_splits"]

#: The operations a distributed write can have (``mode``).
MODES = ("append", "overwritePartitions", "overwrite", "create", "replace", "createOrReplace")
_NEW_TABLE = ("create", "replace", "createOrReplace")

_sessions: dict[str, Session] = {}
_sessions_lock = threading.Lock()


def _worker_session(config: Mapping[str, Any] | None) -> Session:
    """The session of this process for a session configuration (opened once per process)."""
    if config is None:
        return _session.default_session()
    key = json.dumps(config, sort_keys=True)
    with _sessions_lock:
        s = _sessions.get(key)
        if s is None or s.closed:
            s = _sessions[key] = _session.Session(catalogs=config.get("catalogs"), conf=config.get("conf"))
        return s


def _session_config(session: Session) -> dict[str, Any]:
    doc = session.session_document()
    return {k: doc[k] for k in ("catalogs", "conf") if k in doc}


class DistributedWrite:
    """One write split over many tasks (Ray, Dask, any scheduler) and committed once.

    ``mode`` is the operation: ``append``, ``overwritePartitions`` (replaces the union of the
    partitions the tasks wrote), ``overwrite`` (``where`` is the filter), ``create``,
    ``replace`` or ``createOrReplace`` (with ``partition_by``, ``sort_order``, ``properties``,
    ``location``). ``options`` are write options; ``stream=(query_id, batch_id)`` makes the
    write one exactly-once batch of a streaming query. Each task writes its rows partitioned
    and sorted as the operation would on one machine, to files named after the write id, the
    task and the attempt; a description is a JSON-able dict of under 2 KB per file.

    Example::

        dw = ig.DistributedWrite("local.db.events", mode="append")
        files = [dw.write_task(part, task=i) for i, part in enumerate(parts)]   # on workers
        result = dw.commit(files)                                                # one snapshot
    """

    def __init__(
        self,
        table: str,
        mode: str = "append",
        *,
        partition_by: Sequence[PartitionColumn] = (),
        sort_order: Sequence[SortTerm] = (),
        properties: Mapping[str, Any] | None = None,
        location: str | None = None,
        options: Mapping[str, Any] | None = None,
        where: str | Column | None = None,
        stream: tuple[str, int] | None = None,
        session: Session | None = None,
        write_id: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if (where is not None) != (mode == "overwrite"):
            raise ValueError("where is the filter of mode 'overwrite', and only of it")
        sess = session if session is not None else _session.default_session()
        # The builder makes the mode's keys; it holds no data.
        b = DataFrameWriterV2(cast("ArrowData", None), table, sess)
        if partition_by:
            b.partitionedBy(*partition_by)
        if sort_order:
            b.sortedBy(*sort_order)
        for k, v in (properties or {}).items():
            b.tableProperty(k, v)
        if location is not None:
            b.tableProperty("location", location)
        if options:
            b.options(**{str(k): v for k, v in options.items()})
        if stream is not None:
            b.streamBatch(stream[0], stream[1])
        doc = b.request_document(mode)
        del doc["op"]
        if where is not None:
            doc["filter"] = to_sql(where, "overwrite condition")
        self.table = table
        self.mode = mode
        self.write_id = write_id if write_id is not None else uuid.uuid4().hex
        self._doc = doc
        self._config: dict[str, Any] | None = _session_config(sess)
        self._session: Session | None = sess

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_session"] = None  # a worker opens its own
        return state

    def __repr__(self) -> str:
        return f"<pyiceberg_go DistributedWrite {self.mode} {self.table} write_id={self.write_id}>"

    @property
    def session(self) -> Session:
        """The session the write runs in (on a worker, one opened with the coordinator's configuration).

        Example::

            ig.DistributedWrite("local.db.t").session.table("local.db.t").snapshots()
        """
        return self._sess()

    def _sess(self) -> Session:
        if self._session is None:
            self._session = _worker_session(self._config)
        return self._session

    def document(self, op: str, **distributed: Any) -> dict[str, Any]:
        """The request document of ``op`` (``write_files``, ``commit_files``, ``abort_files``).

        Example::

            ig.DistributedWrite("local.db.t", "append", write_id="w1").document("abort_files")
        """
        doc = {"op": op, **self._doc}
        if op == "abort_files":
            doc = {k: v for k, v in doc.items() if k in ("op", "table", "location", "properties")}
        doc["distributed"] = {"mode": self.mode, "write_id": self.write_id, **distributed}
        return doc

    def write_task(self, data: ArrowData, task: int, attempt: int | None = None) -> list[dict[str, Any]]:
        """Write one task's share of the data (on a worker); return the descriptions of its files.

        ``attempt`` tells retries of ``task`` apart; by default each call draws a fresh one, so a
        re-run never overwrites or adds to the files of an earlier run. Nothing is committed.

        Example::

            files = dw.write_task(pa.table({"id": [1, 2]}), task=0)
        """
        if attempt is None:
            attempt = secrets.randbits(31)
        doc = self.document("write_files", task=int(task), attempt=int(attempt))
        res = self._sess()._execute(doc, data)
        return list(res.get("files") or [])

    def commit(
        self, files: Iterable[Mapping[str, Any] | Sequence[Mapping[str, Any]]], schema: ArrowData | None = None
    ) -> WriteResult:
        """Commit every task's descriptions as one snapshot of the write's mode (the coordinator).

        ``files`` holds descriptions or lists of them (one list per task). A ``create``,
        ``replace`` or ``createOrReplace`` needs ``schema``: Arrow data (no rows needed) with the
        tasks' schema. Files of the write that are not committed (killed or retried attempts)
        are deleted; when the commit fails, all of them.

        Example::

            r = dw.commit([files_of_task_0, files_of_task_1])
            print(r.snapshot_id, r.summary["added-data-files"])
        """
        flat: list[Mapping[str, Any]] = []
        for f in files:
            if isinstance(f, Mapping):
                flat.append(f)
            else:
                flat.extend(f)
        if (schema is None) == (self.mode in _NEW_TABLE):
            raise ValueError("commit(): schema is needed by (and only by) create, replace and createOrReplace")
        doc = self.document("commit_files", files=[dict(f) for f in flat])
        return WriteResult.from_document(self._sess()._execute(doc, schema))

    def abort(self, files: Iterable[Mapping[str, Any] | Sequence[Mapping[str, Any]]] = ()) -> dict[str, Any]:
        """Delete every file of the write (the coordinator, after a failed job); commits nothing.

        Example::

            dw.abort()   # {"deleted_files_count": 3, "failed_deletes": [], ...}
        """
        flat: list[dict[str, Any]] = []
        for f in files:
            flat.extend([dict(f)] if isinstance(f, Mapping) else [dict(x) for x in f])
        doc = self.document("abort_files", files=flat) if flat else self.document("abort_files")
        return self._sess()._execute(doc)


class ReadSplit:
    """One task of a distributed read: a share of a table's files at one snapshot, pickled to a worker.

    Example::

        for split in ig.distributed.read_splits("local.db.t", 4, columns=["id"]):
            table = split.to_arrow()   # on a worker
    """

    def __init__(self, scan: Mapping[str, Any], config: Mapping[str, Any] | None) -> None:
        self.scan = dict(scan)
        #: The session configuration (catalogs, conf) the worker opens its session with.
        self.config = dict(config) if config is not None else None

    def __repr__(self) -> str:
        return f"<pyiceberg_go ReadSplit {self.scan}>"

    def stream(self) -> ScanStream:
        """This split's rows as a :class:`pyiceberg_go.ScanStream` (read once).

        Example::

            pl.DataFrame(split.stream())
        """
        return ScanStream(_worker_session(self.config), self.scan)

    def to_arrow(self) -> Any:
        """This split's rows as a pyarrow Table (needs pyarrow).

        Example::

            split.to_arrow().num_rows
        """
        return self.stream().to_arrow()


def read_splits(
    table: str,
    count: int,
    *,
    columns: Sequence[str] | None = None,
    where: str | Column | None = None,
    snapshot_id: int | None = None,
    session: Session | None = None,
) -> list[ReadSplit]:
    """Split a read of ``table`` into ``count`` tasks reading disjoint shares of its files.

    Every split reads one snapshot (``snapshot_id``, default the current one, fixed now), with
    the projection ``columns`` and filter ``where`` applied on the worker. A table with no
    snapshot gives one split (which reads no rows).

    Example::

        splits = ig.distributed.read_splits("local.db.t", 8, where="id > 10")
    """
    if count < 1:
        raise ValueError("count must be >= 1")
    sess = session if session is not None else _session.default_session()
    t = sess.table(table)
    if snapshot_id is None:
        snaps = [s for s in t.snapshots() if s.get("current")]
        snapshot_id = snaps[0]["snapshot_id"] if snaps else None
    doc = t.scan_document(snapshot_id=snapshot_id, columns=columns, where=where)
    config = _session_config(sess)
    if snapshot_id is None:
        return [ReadSplit(doc, config)]
    return [ReadSplit({**doc, "split": {"index": i, "count": count}}, config) for i in range(count)]
