"""What operations return: typed views of the library's result documents (docs/abi.md#result).

Listings and counters are TypedDicts: at run time they are plain dicts (so
``s["snapshot_id"]``, ``dict(...)``, ``json.dumps(...)`` and comparisons with
dicts keep working), and type checkers know every key. :class:`WriteResult`
is a frozen dataclass.

Example::

    r = ig.writeTo(df, "local.db.events").append()
    rows: int = r.metrics["rows"]
    for s in ig.table("local.db.events").snapshots():
        print(s["snapshot_id"], s["operation"], s["current"])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

if TYPE_CHECKING:
    import pyarrow

__all__ = [
    "ExpireSnapshotsResult",
    "MergeCounts",
    "RefInfo",
    "RefRemoval",
    "RefResult",
    "RemoveOrphanFilesResult",
    "RewriteDataFilesResult",
    "RewriteManifestsResult",
    "RewritePositionDeleteFilesResult",
    "ScanProgress",
    "SnapshotInfo",
    "WriteMetrics",
    "WriteResult",
]


class WriteMetrics(TypedDict):
    """A write's counters: rows and bytes written, data files, wall time in seconds.

    Example::

        m = ig.writeTo(df, "local.db.t").append().metrics
        print(f"{m['rows']} rows in {m['files']} files, {m['bytes']} bytes, {m['seconds']:.2f} s")
    """

    rows: int
    files: int
    bytes: int
    seconds: float


# The keys are Spark's merge metrics without their "spark.merge-into." prefix: not identifiers,
# so the functional form. total=False: results of other operations carry an empty mapping.
MergeCounts = TypedDict(
    "MergeCounts",
    {
        "num-target-rows-copied": int,
        "num-target-rows-deleted": int,
        "num-target-rows-updated": int,
        "num-target-rows-inserted": int,
        "num-target-rows-matched-updated": int,
        "num-target-rows-matched-deleted": int,
        "num-target-rows-not-matched-by-source-updated": int,
        "num-target-rows-not-matched-by-source-deleted": int,
    },
    total=False,
)
MergeCounts.__doc__ = """A merge's row counts (every key is set after a merge; empty for other operations).

Example::

    r = ig.mergeInto(src, "local.db.t", "target.id = source.id").whenMatched().updateAll().merge()
    print(r.merge["num-target-rows-updated"], r.merge["num-target-rows-copied"])
"""


def _no_merge() -> MergeCounts:
    return {}


def _no_metrics() -> WriteMetrics:
    return {"rows": 0, "files": 0, "bytes": 0, "seconds": 0.0}


def _metrics(m: Mapping[str, Any]) -> WriteMetrics:
    # Keys a newer library adds are kept (a TypedDict is a dict at run time).
    out = {str(k): v for k, v in m.items()}
    out.update(
        rows=int(m.get("rows", 0)),
        files=int(m.get("files", 0)),
        bytes=int(m.get("bytes", 0)),
        seconds=float(m.get("seconds", 0.0)),
    )
    return cast(WriteMetrics, out)


@dataclass(frozen=True)
class WriteResult:
    """What a write committed: the snapshot, its summary and the write's metrics.

    ``snapshot_id`` is ``None`` when nothing was committed (a delete that
    matched no row). ``metrics`` is a :class:`WriteMetrics`; ``merge`` the
    :class:`MergeCounts` of a merge (empty otherwise).

    Example::

        r = ig.writeTo(df, "local.db.events").append()
        print(r.snapshot_id, r.operation, r.summary["added-records"], r.metrics["rows"])
    """

    table: str
    operation: str
    snapshot_id: int | None
    summary: dict[str, str] = field(default_factory=dict)
    metrics: WriteMetrics = field(default_factory=_no_metrics)
    #: A merge's counts: ``num-target-rows-copied``, ``-deleted``, ``-updated``, ``-inserted``,
    #: ``-matched-updated``, ``-matched-deleted``, ``-not-matched-by-source-updated``, ``-deleted``.
    merge: MergeCounts = field(default_factory=_no_merge)
    #: A streaming batch (``streamBatch``) its query had committed before: nothing was committed.
    skipped: bool = False
    #: With ``skipped``: the query's last committed batch id on the target branch.
    last_batch_id: int | None = None

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> WriteResult:
        """Build a result from the library's result document (docs/abi.md#result).

        Example::

            WriteResult.from_document({"table": "db.t", "operation": "append", "snapshot_id": 1})
        """
        sid = doc.get("snapshot_id")
        return cls(
            table=str(doc.get("table", "")),
            operation=str(doc.get("operation", "")),
            snapshot_id=int(sid) if sid is not None else None,
            summary={str(k): str(v) for k, v in (doc.get("summary") or {}).items()},
            metrics=_metrics(doc.get("metrics") or {}),
            merge=cast(MergeCounts, {str(k): int(v) for k, v in (doc.get("merge") or {}).items()}),
            skipped=bool(doc.get("skipped", False)),
            last_batch_id=int(doc["last_batch_id"]) if doc.get("last_batch_id") is not None else None,
        )


@dataclass(frozen=True)
class CommittedBatch:
    """The last batch a streaming query committed on a branch (:meth:`pyiceberg_go.Table.last_committed_batch`).

    ``summary`` is that snapshot's summary, with any ``snapshot-property.*``
    the write added (a source's offsets, say).

    Example::

        last = ig.table("local.db.t").last_committed_batch("q1")
        next_batch = 0 if last is None else last.batch_id + 1
    """

    query_id: str
    batch_id: int
    snapshot_id: int
    timestamp_ms: int
    summary: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> CommittedBatch:
        """Build one from the ``last`` object of a ``last_committed_batch`` result (docs/abi.md#result).

        Example::

            CommittedBatch.from_document({"query_id": "q", "batch_id": 3, "snapshot_id": 1, "timestamp_ms": 0})
        """
        return cls(
            query_id=str(doc["query_id"]),
            batch_id=int(doc["batch_id"]),
            snapshot_id=int(doc["snapshot_id"]),
            timestamp_ms=int(doc["timestamp_ms"]),
            summary={str(k): str(v) for k, v in (doc.get("summary") or {}).items()},
        )


class SnapshotInfo(TypedDict):
    """One snapshot of a table, as :meth:`pyiceberg_go.Table.snapshots` lists them.

    ``parent_id`` is ``None`` for the first snapshot; ``current`` marks main's head.

    Example::

        snaps: list[ig.SnapshotInfo] = ig.table("local.db.t").snapshots()
        head = next(s for s in snaps if s["current"])
        print(head["snapshot_id"], head["operation"], head["summary"]["total-records"])
    """

    snapshot_id: int
    parent_id: int | None
    timestamp_ms: int
    operation: str
    summary: dict[str, str]
    current: bool


class RefInfo(TypedDict):
    """A branch or tag, as :meth:`pyiceberg_go.Table.refs` lists them by name.

    Example::

        refs: dict[str, ig.RefInfo] = ig.table("local.db.t").refs()
        print(refs["main"]["type"], refs["main"]["snapshot_id"])
    """

    type: Literal["branch", "tag"]
    snapshot_id: int


class RollbackResult(TypedDict):
    """What rollback_to_snapshot, rollback_to_timestamp and set_current_snapshot did (Spark's result columns).

    ``previous_snapshot_id`` is main's snapshot before the call (``None`` for a table without one).

    Example::

        r: ig.RollbackResult = ig.table("local.db.t").rollback_to_snapshot(42)
        print(r["previous_snapshot_id"], "->", r["current_snapshot_id"])
    """

    table: str
    previous_snapshot_id: int | None
    current_snapshot_id: int


class RefResult(TypedDict):
    """The ref a create_branch, create_tag or fast_forward left behind.

    Example::

        r: ig.RefResult = ig.table("local.db.t").create_branch("audit")
        print(r["ref"], r["type"], r["snapshot_id"])
    """

    table: str
    ref: str
    type: Literal["branch", "tag"]
    snapshot_id: int


class RefRemoval(TypedDict):
    """What remove_branch or remove_tag removed.

    Example::

        r: ig.RefRemoval = ig.table("local.db.t").remove_tag("v1")
        assert r["removed"]
    """

    table: str
    ref: str
    removed: bool


class ScanProgress(TypedDict):
    """A scan's progress (:meth:`ScanStream.progress`): rows and bytes handed out, data files planned.

    Example::

        p: ScanProgress = ig.table("local.db.t").scan().progress()
        print(p["files"])
    """

    rows: int
    bytes: int
    files: int


def _ints(v: Any) -> list[int]:
    return [int(x) for x in (v or [])]


def _strs(v: Any) -> list[str]:
    return [str(x) for x in (v or [])]


@dataclass(frozen=True)
class ExpireSnapshotsResult:
    """What :meth:`pyiceberg_go.Table.expire_snapshots` did: Spark's result columns (files deleted,
    by kind), plus the snapshots, refs, specs and schemas it removed from the metadata.

    ``failed_deletes`` lists files that could not be deleted after the commit (they stay,
    unreachable; :meth:`~pyiceberg_go.Table.remove_orphan_files` finds them later).

    Example::

        r = ig.table("local.db.t").expire_snapshots(retain_last=5)
        print(r.deleted_data_files_count, r.deleted_manifest_lists_count, r.expired_snapshot_ids)
    """

    table: str
    deleted_data_files_count: int
    deleted_position_delete_files_count: int
    deleted_equality_delete_files_count: int
    deleted_manifest_files_count: int
    deleted_manifest_lists_count: int
    deleted_statistics_files_count: int
    expired_snapshot_ids: list[int] = field(default_factory=list)
    removed_refs: list[str] = field(default_factory=list)
    removed_spec_ids: list[int] = field(default_factory=list)
    removed_schema_ids: list[int] = field(default_factory=list)
    failed_deletes: list[str] = field(default_factory=list)

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> ExpireSnapshotsResult:
        """Build a result from the library's ``expire_snapshots`` document (docs/abi.md#result).

        Example::

            ExpireSnapshotsResult.from_document({"table": "db.t", "deleted_data_files_count": 1})
        """
        counts = {k: int(doc.get(k) or 0) for k in _EXPIRE_COUNTS}
        return cls(
            table=str(doc.get("table", "")),
            **counts,
            expired_snapshot_ids=_ints(doc.get("expired_snapshot_ids")),
            removed_refs=_strs(doc.get("removed_refs")),
            removed_spec_ids=_ints(doc.get("removed_spec_ids")),
            removed_schema_ids=_ints(doc.get("removed_schema_ids")),
            failed_deletes=_strs(doc.get("failed_deletes")),
        )

    def counts(self) -> dict[str, int]:
        """Spark's six result columns by name (the row ``CALL ... expire_snapshots`` returns).

        Example::

            assert sum(ig.table("local.db.t").expire_snapshots().counts().values()) >= 0
        """
        return {k: int(getattr(self, k)) for k in _EXPIRE_COUNTS}


_EXPIRE_COUNTS = (
    "deleted_data_files_count",
    "deleted_position_delete_files_count",
    "deleted_equality_delete_files_count",
    "deleted_manifest_files_count",
    "deleted_manifest_lists_count",
    "deleted_statistics_files_count",
)


@dataclass(frozen=True)
class RemoveOrphanFilesResult:
    """What :meth:`pyiceberg_go.Table.remove_orphan_files` found: the orphan files' locations
    (Spark's ``orphan_file_location`` column), deleted unless ``dry_run``.

    Example::

        r = ig.table("local.db.t").remove_orphan_files(dry_run=True)
        for loc in r.orphan_file_locations:
            print(loc)
        r.to_arrow()  # a pyarrow Table with column orphan_file_location
    """

    table: str
    orphan_file_locations: list[str] = field(default_factory=list)
    dry_run: bool = False
    failed_deletes: list[str] = field(default_factory=list)

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> RemoveOrphanFilesResult:
        """Build a result from the library's ``remove_orphan_files`` document (docs/abi.md#result).

        Example::

            RemoveOrphanFilesResult.from_document({"table": "db.t", "orphan_file_locations": ["/x"]})
        """
        return cls(
            table=str(doc.get("table", "")),
            orphan_file_locations=_strs(doc.get("orphan_file_locations")),
            dry_run=bool(doc.get("dry_run", False)),
            failed_deletes=_strs(doc.get("failed_deletes")),
        )

    def to_arrow(self) -> pyarrow.Table:
        """The orphans as Spark's procedure returns them: a table with column ``orphan_file_location``.

        Example::

            print(ig.table("local.db.t").remove_orphan_files(dry_run=True).to_arrow().num_rows)
        """
        from .scan import _require_pyarrow

        pa = _require_pyarrow("RemoveOrphanFilesResult.to_arrow()")
        column = pa.array(self.orphan_file_locations, pa.string())
        return cast("pyarrow.Table", pa.table({"orphan_file_location": column}))


@dataclass(frozen=True)
class RewriteManifestsResult:
    """What :meth:`pyiceberg_go.Table.rewrite_manifests` did: Spark's result columns, and the
    ``replace`` snapshot it committed (``None`` when there was nothing to rewrite).

    Example::

        r = ig.table("local.db.t").rewrite_manifests()
        print(r.rewritten_manifests_count, r.added_manifests_count)
    """

    table: str
    rewritten_manifests_count: int
    added_manifests_count: int
    snapshot_id: int | None = None

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> RewriteManifestsResult:
        """Build a result from the library's ``rewrite_manifests`` document (docs/abi.md#result).

        Example::

            RewriteManifestsResult.from_document({"table": "db.t", "rewritten_manifests_count": 3})
        """
        sid = doc.get("snapshot_id")
        return cls(
            table=str(doc.get("table", "")),
            rewritten_manifests_count=int(doc.get("rewritten_manifests_count") or 0),
            added_manifests_count=int(doc.get("added_manifests_count") or 0),
            snapshot_id=None if sid is None else int(sid),
        )


@dataclass(frozen=True)
class RewriteDataFilesResult:
    """What :meth:`pyiceberg_go.Table.rewrite_data_files` did: Spark's result columns, plus the
    snapshots it committed (none when nothing needed rewriting).

    Example::

        r = ig.table("local.db.t").rewrite_data_files()
        print(r.rewritten_data_files_count, r.added_data_files_count, r.counts())
    """

    table: str
    rewritten_data_files_count: int
    added_data_files_count: int
    rewritten_bytes_count: int
    failed_data_files_count: int
    removed_delete_files_count: int
    snapshot_ids: list[int] = field(default_factory=list)

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> RewriteDataFilesResult:
        """Build a result from the library's ``rewrite_data_files`` document (docs/abi.md#result).

        Example::

            RewriteDataFilesResult.from_document({"table": "db.t", "rewritten_data_files_count": 4})
        """
        counts = {k: int(doc.get(k) or 0) for k in _REWRITE_COUNTS}
        return cls(table=str(doc.get("table", "")), **counts, snapshot_ids=_ints(doc.get("snapshot_ids")))

    def counts(self) -> dict[str, int]:
        """Spark's five result columns by name (the row ``CALL ... rewrite_data_files`` returns).

        Example::

            assert ig.table("local.db.t").rewrite_data_files().counts()["failed_data_files_count"] == 0
        """
        return {k: int(getattr(self, k)) for k in _REWRITE_COUNTS}


_REWRITE_COUNTS = (
    "rewritten_data_files_count",
    "added_data_files_count",
    "rewritten_bytes_count",
    "failed_data_files_count",
    "removed_delete_files_count",
)


@dataclass(frozen=True)
class RewritePositionDeleteFilesResult:
    """What :meth:`pyiceberg_go.Table.rewrite_position_delete_files` did: Spark's result
    columns, plus the snapshots it committed (none when nothing needed rewriting).

    Example::

        r = ig.table("local.db.t").rewrite_position_delete_files()
        print(r.rewritten_delete_files_count, r.added_delete_files_count, r.counts())
    """

    table: str
    rewritten_delete_files_count: int
    added_delete_files_count: int
    rewritten_bytes_count: int
    added_bytes_count: int
    snapshot_ids: list[int] = field(default_factory=list)

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> RewritePositionDeleteFilesResult:
        """Build a result from the library's ``rewrite_position_delete_files`` document
        (docs/abi.md#result).

        Example::

            RewritePositionDeleteFilesResult.from_document({"table": "db.t", "added_delete_files_count": 1})
        """
        counts = {k: int(doc.get(k) or 0) for k in _POSITION_DELETE_COUNTS}
        return cls(table=str(doc.get("table", "")), **counts, snapshot_ids=_ints(doc.get("snapshot_ids")))

    def counts(self) -> dict[str, int]:
        """Spark's four result columns by name (the row ``CALL ... rewrite_position_delete_files``
        returns).

        Example::

            assert ig.table("local.db.t").rewrite_position_delete_files().counts()["added_bytes_count"] >= 0
        """
        return {k: int(getattr(self, k)) for k in _POSITION_DELETE_COUNTS}


_POSITION_DELETE_COUNTS = (
    "rewritten_delete_files_count",
    "added_delete_files_count",
    "rewritten_bytes_count",
    "added_bytes_count",
)
