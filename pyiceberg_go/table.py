"""``table``: a lazy handle on an Iceberg table for reading, inspecting and changing it."""

from __future__ import annotations

import datetime as _dt
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import _session
from .errors import InvalidArgumentError
from .evolution import UpdateResult, UpdateSchema, UpdateSortOrder, UpdateSpec, update_table, write_order
from .expressions import Column, _literal, to_sql
from .results import (
    CommittedBatch,
    ExpireSnapshotsResult,
    RefInfo,
    RefRemoval,
    RefResult,
    RemoveOrphanFilesResult,
    RewriteDataFilesResult,
    RewriteManifestsResult,
    RewritePositionDeleteFilesResult,
    RollbackResult,
    SnapshotInfo,
    WriteResult,
)
from .scan import ScanStream, _require_pyarrow

if TYPE_CHECKING:
    import pyarrow

    from ._session import Session
    from ._typing import ArrowData


class Table:
    """A lazy handle on a table: nothing is read until a method is called.

    It belongs to the session it came from (``ig.table(...)``: the default
    session; ``session.table(...)``: that one).

    Example::

        t = ig.table("local.db.events")
        print(len(t.snapshots()), t.to_arrow(columns=["id"]).num_rows)
    """

    def __init__(self, identifier: str, session: Session | None = None) -> None:
        if not isinstance(identifier, str):
            raise TypeError(f"the table identifier must be a str, got {type(identifier).__name__}")
        self.identifier = identifier
        self._session = session if session is not None else _session.default_session()

    def __repr__(self) -> str:
        return f"Table({self.identifier!r})"

    @property
    def session(self) -> Session:
        """The session this handle reads and writes through.

        Example::

            s = ig.Session()
            assert s.table("local.db.t").session is s
        """
        return self._session

    @property
    def inspect(self) -> InspectTable:
        """The table's metadata tables (Spark's ``db.t.snapshots``, ``db.t.files``, ...) as pyarrow Tables.

        Example::

            t = ig.table("local.db.events")
            t.inspect.snapshots().column("snapshot_id")
            t.inspect.files(snapshot_id=t.snapshots()[0]["snapshot_id"])
        """
        return InspectTable(self)

    def scan_document(
        self,
        snapshot_id: int | None = None,
        columns: Sequence[str] | None = None,
        where: str | Column | None = None,
        as_of_timestamp: _dt.datetime | int | None = None,
        ref: str | None = None,
        start_snapshot_id: int | None = None,
        end_snapshot_id: int | None = None,
        skip_overwrite_snapshots: bool = False,
        skip_delete_snapshots: bool = False,
    ) -> dict[str, Any]:
        """The scan document (docs/abi.md#scan) that :meth:`scan` and :meth:`to_arrow` send.

        Example::

            ig.table("local.db.t").scan_document(columns=["id"], where="id > 10")
        """
        doc: dict[str, Any] = {"table": self.identifier}
        if snapshot_id is not None:
            doc["snapshot_id"] = _int_arg("snapshot_id", snapshot_id)
        if as_of_timestamp is not None:
            doc["as_of_timestamp_ms"] = _epoch_ms(as_of_timestamp, "as_of_timestamp")
        if ref is not None:
            if not isinstance(ref, str):
                raise TypeError(f"ref must be a str, got {type(ref).__name__}")
            doc["ref"] = ref
        if columns is not None:
            if isinstance(columns, str):
                raise TypeError("columns must be a sequence of column names, not a str")
            doc["columns"] = [str(c) for c in columns]
        if where is not None:
            doc["filter"] = to_sql(where, "scan filter")
        if start_snapshot_id is not None:
            doc["start_snapshot_id"] = _int_arg("start_snapshot_id", start_snapshot_id)
        if end_snapshot_id is not None:
            doc["end_snapshot_id"] = _int_arg("end_snapshot_id", end_snapshot_id)
        if skip_overwrite_snapshots:
            doc["skip_overwrite_snapshots"] = True
        if skip_delete_snapshots:
            doc["skip_delete_snapshots"] = True
        return doc

    def scan(
        self,
        columns: Sequence[str] | None = None,
        where: str | Column | None = None,
        snapshot_id: int | None = None,
        as_of_timestamp: _dt.datetime | int | None = None,
        ref: str | None = None,
        start_snapshot_id: int | None = None,
        end_snapshot_id: int | None = None,
        skip_overwrite_snapshots: bool = False,
        skip_delete_snapshots: bool = False,
    ) -> ScanStream:
        """Open a scan of the table (its current snapshot, or ``snapshot_id``) as an Arrow C stream.

        Time travel, as Spark's read options: ``snapshot_id``; ``as_of_timestamp`` (an
        aware ``datetime`` or epoch milliseconds: the snapshot that was main's current
        one then, the last snapshot-log entry at or before it); or ``ref`` (a branch's
        or tag's head). At most one of the three (else :class:`InvalidArgumentError`).

        ``columns`` selects columns (nested with dots); ``where`` keeps the rows
        matching a Spark SQL filter (text or ``ig.col`` expression, as in
        :meth:`delete`). The result is read once by any Arrow consumer, with or
        without pyarrow; see :class:`ScanStream`.

        Incremental reads, as Spark's ``start-snapshot-id`` / ``end-snapshot-id``:
        ``start_snapshot_id`` (exclusive) to ``end_snapshot_id`` (inclusive, default
        the current snapshot) returns the rows the append snapshots in between
        added. An overwrite or delete snapshot in the range raises
        :class:`ValidationError` unless ``skip_overwrite_snapshots`` /
        ``skip_delete_snapshots`` (Spark's batch read skips both silently).

        Example::

            import polars as pl
            df = pl.DataFrame(ig.table("local.db.events").scan(columns=["id", "ts"], where="id > 100"))
            new_rows = ig.table("local.db.events").scan(start_snapshot_id=last_seen).to_arrow()
        """
        return ScanStream(
            self._session,
            self.scan_document(
                snapshot_id,
                columns,
                where,
                as_of_timestamp,
                ref,
                start_snapshot_id,
                end_snapshot_id,
                skip_overwrite_snapshots,
                skip_delete_snapshots,
            ),
        )

    def to_arrow(
        self,
        snapshot_id: int | None = None,
        columns: Sequence[str] | None = None,
        as_of_timestamp: _dt.datetime | int | None = None,
        ref: str | None = None,
        start_snapshot_id: int | None = None,
        end_snapshot_id: int | None = None,
        skip_overwrite_snapshots: bool = False,
        skip_delete_snapshots: bool = False,
    ) -> pyarrow.Table:
        """Read the table (its current snapshot, or ``snapshot_id``, ``as_of_timestamp``, ``ref``
        or the incremental range ``start_snapshot_id`` .. ``end_snapshot_id`` as in :meth:`scan`)
        into a pyarrow Table.

        Example::

            t = ig.table("local.db.events")
            old = t.to_arrow(snapshot_id=t.snapshots()[0]["snapshot_id"], columns=["id", "ts"])
            tagged = t.to_arrow(ref="2024-q1")
        """
        _require_pyarrow("Table.to_arrow()")
        return self.scan(
            columns=columns,
            snapshot_id=snapshot_id,
            as_of_timestamp=as_of_timestamp,
            ref=ref,
            start_snapshot_id=start_snapshot_id,
            end_snapshot_id=end_snapshot_id,
            skip_overwrite_snapshots=skip_overwrite_snapshots,
            skip_delete_snapshots=skip_delete_snapshots,
        ).to_arrow()

    def rollback_to_snapshot(self, snapshot_id: int) -> RollbackResult:
        """Set main back to ``snapshot_id``, an ancestor of main's head (Spark's ``rollback_to_snapshot``).

        A snapshot that is not an ancestor is a :class:`ValidationError`, and nothing is committed.

        Example::

            t = ig.table("local.db.t")
            r = t.rollback_to_snapshot(t.snapshots()[0]["snapshot_id"])
            print(r["previous_snapshot_id"], r["current_snapshot_id"])
        """
        doc = {
            "op": "rollback_to_snapshot",
            "table": self.identifier,
            "snapshot_id": _int_arg("snapshot_id", snapshot_id),
        }
        return cast(RollbackResult, self._session._execute(doc))

    def rollback_to_timestamp(self, timestamp: _dt.datetime | int) -> RollbackResult:
        """Set main back to its latest ancestor older than ``timestamp`` (an aware ``datetime`` or epoch
        milliseconds), as Spark's ``rollback_to_timestamp``.

        Example::

            import datetime as dt
            ig.table("local.db.t").rollback_to_timestamp(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
        """
        doc: dict[str, Any] = {"op": "rollback_to_timestamp", "table": self.identifier}
        doc["as_of_timestamp_ms"] = _epoch_ms(timestamp, "timestamp")
        return cast(RollbackResult, self._session._execute(doc))

    def set_current_snapshot(self, snapshot_id: int | None = None, ref: str | None = None) -> RollbackResult:
        """Set main to ``snapshot_id`` or to the head of branch or tag ``ref`` (exactly one), ancestor or not,
        as Spark's ``set_current_snapshot``.

        Example::

            ig.table("local.db.t").set_current_snapshot(ref="audit")
        """
        doc: dict[str, Any] = {"op": "set_current_snapshot", "table": self.identifier}
        if snapshot_id is not None:
            doc["snapshot_id"] = _int_arg("snapshot_id", snapshot_id)
        if ref is not None:
            if not isinstance(ref, str):
                raise TypeError(f"ref must be a str, got {type(ref).__name__}")
            doc["ref"] = ref
        return cast(RollbackResult, self._session._execute(doc))

    def snapshots(self) -> list[SnapshotInfo]:
        """The table's snapshots, oldest first (:class:`SnapshotInfo`: ``snapshot_id``, ``parent_id``,
        ``timestamp_ms``, ``operation``, ``summary``, ``current``).

        Example::

            for s in ig.table("local.db.events").snapshots():
                print(s["snapshot_id"], s["operation"], s["summary"].get("added-records"))
        """
        doc = self._session._execute({"op": "snapshots", "table": self.identifier})
        return [cast(SnapshotInfo, dict(s)) for s in doc.get("snapshots") or []]

    def delete(self, where: str | Column, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Delete the rows matching ``where`` (DELETE FROM ... WHERE).

        Files whose rows all match are dropped from metadata; files matching in
        part are rewritten (copy-on-write). Concurrent changes are checked at
        ``write.delete.isolation-level`` (default serializable). Nothing is
        committed when no row matches. Use ``"true"`` to delete every row.

        Example::

            ig.table("local.db.logs").delete("level = 'DEBUG' AND ts < TIMESTAMP '2024-01-01 00:00:00'")
            ig.table("local.db.logs").delete(ig.col("level") == "DEBUG")
        """
        doc = self._row_document("delete", options)
        doc["filter"] = to_sql(where, "delete condition")
        return WriteResult.from_document(self._session._execute(doc))

    def update(
        self,
        assignments: Mapping[str, Any] | None = None,
        where: str | Column | None = None,
        options: Mapping[str, Any] | None = None,
        **deprecated: Any,
    ) -> WriteResult:
        """Set columns on the rows matching ``where`` (UPDATE ... SET ... WHERE); all rows without ``where``.

        ``assignments`` maps columns to values: SQL expressions (a str such as
        ``"price * 2"``), ``ig.col``/``ig.lit`` expressions, or plain Python
        values (literals; wrap strings meant as literals in ``ig.lit``). Values
        are converted to the column's type by Spark's ANSI store-assignment
        rules. The keyword ``set=`` (the former name) still works for one
        release, with a DeprecationWarning.

        Example::

            ig.table("local.db.items").update({"price": "price * 1.1", "note": ig.lit("raised")}, where="cat = 'a'")
        """
        if "set" in deprecated:
            if assignments is not None:
                raise TypeError("update() got both assignments and the deprecated set=")
            warnings.warn(
                "Table.update(set=...) is deprecated: pass the mapping positionally or as assignments=",
                DeprecationWarning,
                stacklevel=2,
            )
            assignments = deprecated.pop("set")
        if deprecated:
            raise TypeError(f"update() got unexpected keyword arguments: {', '.join(sorted(deprecated))}")
        if not isinstance(assignments, Mapping) or not assignments:
            raise ValueError("update() needs a non-empty mapping of column -> value")
        values: dict[str, str] = {}
        for k, v in assignments.items():
            if not isinstance(k, str):
                raise TypeError(f"update() column names must be str, got {k!r}")
            values[k] = v.sql if isinstance(v, Column) else v if isinstance(v, str) else _literal(v)
        doc = self._row_document("update", options)
        doc["set"] = values
        if where is not None:
            doc["filter"] = to_sql(where, "update condition")
        return WriteResult.from_document(self._session._execute(doc))

    def upsert(self, df: ArrowData, join_cols: Sequence[str]) -> WriteResult:
        """PyIceberg-style upsert built on merge: rows matching on ``join_cols`` are updated, others inserted.

        Example::

            r = ig.table("local.db.customers").upsert(changes, ["id"])
            print(r.merge["num-target-rows-updated"], r.merge["num-target-rows-inserted"])
        """
        from .merge import upsert

        return upsert(self.identifier, df, join_cols, session=self._session)

    def refs(self) -> dict[str, RefInfo]:
        """The table's branches and tags: name -> :class:`RefInfo` (``type``: ``"branch"`` or ``"tag"``,
        ``snapshot_id``).

        Example::

            heads = {n: r["snapshot_id"] for n, r in ig.table("local.db.t").refs().items() if r["type"] == "branch"}
        """
        doc = self._session._execute({"op": "refs", "table": self.identifier})
        return {str(name): cast(RefInfo, dict(r)) for name, r in (doc.get("refs") or {}).items()}

    def create_branch(self, name: str, snapshot_id: int | None = None) -> RefResult:
        """Create branch ``name`` at ``snapshot_id`` (default: main's head); it must not exist.

        Write to it through the identifier ``<table>.branch_<name>``.

        Example::

            ig.table("local.db.t").create_branch("audit")
            ig.writeTo(df, "local.db.t.branch_audit").append()
        """
        return cast(RefResult, self._ref_document("create_branch", ref=name, snapshot_id=snapshot_id))

    def create_tag(self, name: str, snapshot_id: int | None = None) -> RefResult:
        """Create tag ``name`` at ``snapshot_id`` (default: main's head); read it as ``<table>.tag_<name>``.

        Example::

            ig.table("local.db.t").create_tag("2024-q1")
        """
        return cast(RefResult, self._ref_document("create_tag", ref=name, snapshot_id=snapshot_id))

    def fast_forward(self, branch: str, to: str) -> RefResult:
        """Move ``branch`` to the head of ref ``to``; ``branch``'s head must be an ancestor of it.

        Example::

            ig.table("local.db.t").fast_forward("main", "audit")
        """
        return cast(RefResult, self._ref_document("fast_forward", ref=branch, to=to))

    def remove_branch(self, name: str) -> RefRemoval:
        """Remove branch ``name`` (not ``main``).

        Example::

            ig.table("local.db.t").remove_branch("audit")
        """
        return cast(RefRemoval, self._ref_document("remove_branch", ref=name))

    def remove_tag(self, name: str) -> RefRemoval:
        """Remove tag ``name``.

        Example::

            ig.table("local.db.t").remove_tag("2024-q1")
        """
        return cast(RefRemoval, self._ref_document("remove_tag", ref=name))

    def cherrypick(self, snapshot_id: int) -> WriteResult:
        """Apply snapshot ``snapshot_id`` (typically a staged WAP write) onto main, as Iceberg's cherrypick.

        A snapshot whose parent is main's head is fast-forwarded to; another
        append is re-committed with summary ``source-snapshot-id`` (and
        ``published-wap-id``). The result describes main's new head.

        Example::

            staged = [s for s in ig.table("local.db.t").snapshots() if "wap.id" in s["summary"]]
            ig.table("local.db.t").cherrypick(staged[-1]["snapshot_id"])
        """
        doc = {"op": "cherrypick", "table": self.identifier, "snapshot_id": int(snapshot_id)}
        return WriteResult.from_document(self._session._execute(doc))

    def publish(self, wap_id: str) -> WriteResult:
        """Cherry-pick the staged snapshot written with session ``wap.id`` = ``wap_id`` (Spark's publish_changes).

        Example::

            ig.configure(conf={"wap.id": "job-42"})   # with write.wap.enabled=true on the table
            ig.writeTo(df, "local.db.t").append()     # staged, main unchanged
            ig.table("local.db.t").publish("job-42")  # now on main
        """
        doc = {"op": "publish", "table": self.identifier, "wap_id": str(wap_id)}
        return WriteResult.from_document(self._session._execute(doc))

    def expire_snapshots(
        self,
        older_than: _dt.datetime | int | None = None,
        retain_last: int | None = None,
        snapshot_ids: Iterable[int] | None = None,
        clean_expired_metadata: bool = False,
    ) -> ExpireSnapshotsResult:
        """Expire old snapshots and delete the files only they reached, as Spark's ``expire_snapshots``.

        ``older_than`` (an aware ``datetime`` or epoch milliseconds; default now minus the table's
        ``history.expire.max-snapshot-age-ms``, 5 days) and ``retain_last`` (at least 1; default
        ``history.expire.min-snapshots-to-keep``, 1) decide which ancestors of each branch stay;
        a branch's or tag's own retention settings win, refs older than their
        ``max-ref-age-ms`` are removed, and the snapshot of every remaining branch and tag is
        kept. ``snapshot_ids`` are expired in addition. ``clean_expired_metadata`` also
        removes partition specs and schemas no remaining snapshot uses. Files are deleted
        after the commit, and only those no remaining snapshot, branch or tag reaches.

        Example::

            import datetime as dt
            week_ago = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=7)
            r = ig.table("local.db.t").expire_snapshots(older_than=week_ago, retain_last=10)
            print(r.counts(), r.expired_snapshot_ids)
        """
        doc: dict[str, Any] = {"op": "expire_snapshots", "table": self.identifier}
        if older_than is not None:
            doc["older_than_ms"] = _epoch_ms(older_than)
        if retain_last is not None:
            doc["retain_last"] = _int_arg("retain_last", retain_last)
        if snapshot_ids is not None:
            if isinstance(snapshot_ids, (str, bytes)):
                raise TypeError("snapshot_ids must be an iterable of int")
            doc["snapshot_ids"] = [_int_arg("snapshot_ids", i) for i in snapshot_ids]
        if clean_expired_metadata:
            doc["clean_expired_metadata"] = True
        return ExpireSnapshotsResult.from_document(self._session._execute(doc))

    def remove_orphan_files(
        self,
        older_than: _dt.datetime | int | None = None,
        location: str | None = None,
        dry_run: bool = False,
    ) -> RemoveOrphanFilesResult:
        """Delete the files under the table's location that no snapshot or metadata file reaches,
        as Spark's ``remove_orphan_files``.

        Only files last modified before ``older_than`` (an aware ``datetime`` or epoch
        milliseconds; default now minus 3 days, and at least 24 hours before now) count:
        younger ones may belong to a write still running. ``location`` lists another folder
        instead of the table's. ``dry_run`` only lists them.

        Example::

            r = ig.table("local.db.t").remove_orphan_files(dry_run=True)
            print(len(r.orphan_file_locations), r.to_arrow())
        """
        doc: dict[str, Any] = {"op": "remove_orphan_files", "table": self.identifier}
        if older_than is not None:
            doc["older_than_ms"] = _epoch_ms(older_than)
        if location is not None:
            if not isinstance(location, str):
                raise TypeError(f"location must be a str, got {type(location).__name__}")
            doc["location"] = location
        if dry_run:
            doc["dry_run"] = True
        return RemoveOrphanFilesResult.from_document(self._session._execute(doc))

    def rewrite_manifests(self, spec_id: int | None = None) -> RewriteManifestsResult:
        """Rewrite the data manifests of main's snapshot into manifests of the table's
        ``commit.manifest.target-size-bytes`` (8 MB), as Spark's ``rewrite_manifests``.

        Only manifests of partition spec ``spec_id`` (default: the current spec) are
        rewritten; delete manifests stay. Metadata only: no data file is read or written.
        Nothing is committed when the spec has no manifest, or a single one that fits the
        target size (Spark's rule); otherwise one ``replace`` snapshot.

        Example::

            r = ig.table("local.db.t").rewrite_manifests()
            print(r.rewritten_manifests_count, r.added_manifests_count)
        """
        doc: dict[str, Any] = {"op": "rewrite_manifests", "table": self.identifier}
        if spec_id is not None:
            doc["spec_id"] = _int_arg("spec_id", spec_id)
        return RewriteManifestsResult.from_document(self._session._execute(doc))

    def rewrite_data_files(
        self,
        strategy: str | None = None,
        sort_order: str | None = None,
        where: str | Column | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> RewriteDataFilesResult:
        """Compact the table's data files, as Spark's ``rewrite_data_files`` procedure.

        ``strategy`` is ``"binpack"`` (the default) or ``"sort"`` (the default when
        ``sort_order`` is given); ``sort_order`` is Spark's text (``"region ASC NULLS FIRST,
        order_date DESC"``, default the table's sort order; ``"zorder(a, b)"`` for z-order).
        ``where`` (a Spark SQL filter or a :class:`Column`) limits the files considered; ``options`` are the procedure's
        (``target-file-size-bytes``, ``min-input-files``, ``rewrite-all``, ...). Files of
        older partition specs are rewritten into the current one (or ``output-spec-id``'s) and delete files are applied.
        A concurrent append is kept; a concurrent delete of a rewritten file's rows raises
        :class:`CommitConflictError` and commits nothing.

        Example::

            r = ig.table("local.db.t").rewrite_data_files(options={"min-input-files": "2"})
            print(r.counts())
            ig.table("local.db.t").rewrite_data_files(strategy="sort", sort_order="id DESC")
        """
        rw: dict[str, Any] = {}
        for key, value in (("strategy", strategy), ("sort_order", sort_order)):
            if value is not None:
                if not isinstance(value, str):
                    raise TypeError(f"{key} must be a str, got {type(value).__name__}")
                rw[key] = value
        if where is not None:
            rw["where"] = to_sql(where, "rewrite_data_files where")
        if options:
            rw["options"] = _session._str_map("options", options)
        doc: dict[str, Any] = {"op": "rewrite_data_files", "table": self.identifier, "rewrite": rw}
        return RewriteDataFilesResult.from_document(self._session._execute(doc))

    def rewrite_position_delete_files(
        self,
        where: str | Column | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> RewritePositionDeleteFilesResult:
        """Compact the table's position delete files, as Spark's ``rewrite_position_delete_files``.

        The position delete files of each partition that Spark's bin-pack planner picks
        (``min-input-files`` (5) or more small files, ...) are rewritten into one file per data
        file (per partition with ``write.delete.granularity=partition``), dropping the deletes of
        data files that are no longer live. ``where`` (a Spark SQL filter or a :class:`Column`)
        limits the files considered by their partition values; ``options`` are the
        procedure's (``target-file-size-bytes``, ``min-input-files``, ``rewrite-all``,
        ``partial-progress.enabled``, ...). Rows read are unchanged. A concurrent delete is
        kept; a concurrent commit that removed a rewritten delete file raises
        :class:`CommitConflictError` and commits nothing. On a v3 table (deletion vectors)
        nothing is rewritten.

        Example::

            r = ig.table("local.db.t").rewrite_position_delete_files(options={"rewrite-all": "true"})
            print(r.counts())
        """
        rw: dict[str, Any] = {}
        if where is not None:
            rw["where"] = to_sql(where, "rewrite_position_delete_files where")
        if options:
            rw["options"] = _session._str_map("options", options)
        doc: dict[str, Any] = {"op": "rewrite_position_delete_files", "table": self.identifier, "rewrite": rw}
        return RewritePositionDeleteFilesResult.from_document(self._session._execute(doc))

    def changelog(
        self,
        start_snapshot_id: int | None = None,
        end_snapshot_id: int | None = None,
        start_timestamp: _dt.datetime | int | None = None,
        end_timestamp: _dt.datetime | int | None = None,
        net_changes: bool = False,
        compute_updates: bool | None = None,
        identifier_columns: Sequence[str] | None = None,
    ) -> pyarrow.Table:
        """The row changes of main's snapshots after ``start_snapshot_id`` up to ``end_snapshot_id``
        (or between the two times), as Spark's ``create_changelog_view`` shows them: the table's
        columns and ``_change_type`` (INSERT, DELETE, UPDATE_BEFORE, UPDATE_AFTER),
        ``_change_ordinal`` and ``_commit_snapshot_id``.

        Rows deleted and re-inserted unchanged cancel out; ``net_changes`` collapses each row's
        changes over the range; with ``identifier_columns`` (default: the table's identifier
        fields) ``compute_updates`` (default: whether they were given) pairs a DELETE and an
        INSERT of one identifier into an update. Merge-on-read tables are read too (their changes
        equal a copy-on-write twin's).

        Example::

            t = ig.table("local.db.t")
            ch = t.changelog(start_snapshot_id=s1, identifier_columns=["id"])
            ch.filter(pc.field("_change_type") == "UPDATE_AFTER")
        """
        _require_pyarrow("Table.changelog()")
        cl: dict[str, Any] = {}
        if start_snapshot_id is not None:
            cl["start_snapshot_id"] = _int_arg("start_snapshot_id", start_snapshot_id)
        if end_snapshot_id is not None:
            cl["end_snapshot_id"] = _int_arg("end_snapshot_id", end_snapshot_id)
        if start_timestamp is not None:
            cl["start_timestamp_ms"] = _epoch_ms(start_timestamp, "start_timestamp")
        if end_timestamp is not None:
            cl["end_timestamp_ms"] = _epoch_ms(end_timestamp, "end_timestamp")
        if net_changes:
            cl["net_changes"] = True
        if compute_updates is not None:
            cl["compute_updates"] = bool(compute_updates)
        if identifier_columns is not None:
            if isinstance(identifier_columns, str):
                raise TypeError("identifier_columns must be a sequence of column names, not a str")
            cl["identifier_columns"] = [str(c) for c in identifier_columns]
        doc = {"op": "changelog", "table": self.identifier, "changelog": cl}
        return ScanStream(self._session, doc).to_arrow()

    def last_committed_batch(self, query_id: str) -> CommittedBatch | None:
        """The last batch streaming query ``query_id`` committed on main (or the identifier's branch), or ``None``.

        The table is the stream's checkpoint: resume at ``batch_id + 1``, from
        the offsets the batch's ``snapshot-property.*`` options left in ``summary``.

        Example::

            last = ig.table("local.db.t").last_committed_batch("q1")
            start = 0 if last is None else last.batch_id + 1
        """
        doc = self._session._execute(
            {"op": "last_committed_batch", "table": self.identifier, "stream": {"query_id": query_id}}
        )
        last = doc.get("last")
        return CommittedBatch.from_document(last) if last else None

    # --- Metadata evolution (pyiceberg_go.evolution): schema, spec, sort order, properties ---

    def update_schema(self, allow_incompatible_changes: bool = False) -> UpdateSchema:
        """Schema changes committed when the ``with`` block ends (PyIceberg's ``update_schema``);
        see :class:`UpdateSchema`. A broken rule is :class:`InvalidArgumentError` naming the column.

        Example::

            with ig.table("local.db.t").update_schema() as u:
                u.add_column("channel", "string", doc="where it came from")
                u.rename_column("level", "severity")
        """
        return UpdateSchema(self, allow_incompatible_changes)

    def update_spec(self) -> UpdateSpec:
        """Partition spec changes (PyIceberg's ``update_spec``); see :class:`UpdateSpec`.

        Example::

            with ig.table("local.db.t").update_spec() as u:
                u.add_field("id", "bucket[16]")
        """
        return UpdateSpec(self)

    def update_sort_order(self) -> UpdateSortOrder:
        """A new sort order (PyIceberg's ``update_sort_order``); see :class:`UpdateSortOrder`.

        Example::

            with ig.table("local.db.t").update_sort_order() as u:
                u.asc("id").desc("ts", "day")
        """
        return UpdateSortOrder(self)

    def replace_sort_order(self, *terms: str) -> UpdateResult:
        """Replace the sort order by Spark's ``WRITE ORDERED BY`` terms (none: unsorted); the
        distribution mode stays.

        Example::

            ig.table("local.db.t").replace_sort_order("id", "days(ts) DESC NULLS LAST")
        """
        return write_order(self, terms, None)

    def write_ordered_by(self, *terms: str) -> UpdateResult:
        """Spark's ``ALTER TABLE ... WRITE ORDERED BY``: the sort order and ``write.distribution-mode=range``.

        Example::

            ig.table("local.db.t").write_ordered_by("category", "id DESC")
        """
        return write_order(self, terms, "range")

    def write_locally_ordered_by(self, *terms: str) -> UpdateResult:
        """Spark's ``WRITE LOCALLY ORDERED BY``: the sort order; the distribution mode stays.

        Example::

            ig.table("local.db.t").write_locally_ordered_by("category", "id")
        """
        return write_order(self, terms, None)

    def write_distributed_by_partition(self, *locally_ordered_by: str) -> UpdateResult:
        """Spark's ``WRITE DISTRIBUTED BY PARTITION [LOCALLY ORDERED BY ...]``: mode ``hash`` and
        the given order (none: unsorted).

        Example::

            ig.table("local.db.t").write_distributed_by_partition("id DESC")
        """
        return write_order(self, locally_ordered_by, "hash")

    def write_unordered(self) -> UpdateResult:
        """Spark's ``WRITE UNORDERED``: the unsorted order and mode ``none``.

        Example::

            ig.table("local.db.t").write_unordered()
        """
        return write_order(self, (), "none")

    def set_properties(self, properties: Mapping[str, Any] | None = None, **kv: Any) -> UpdateResult:
        """Set table properties (Spark's ``SET TBLPROPERTIES``); values become strings.

        Example::

            ig.table("local.db.t").set_properties({"write.delete.mode": "merge-on-read"}, owner="me")
        """
        props = {**(properties or {}), **kv}
        if not props:
            raise ValueError("set_properties() needs at least one property")
        values = {str(k): _session._option_value(v) for k, v in props.items()}
        return update_table(self, [{"action": "set_properties", "properties": values}])

    def remove_properties(self, *keys: str) -> UpdateResult:
        """Remove table properties (Spark's ``UNSET TBLPROPERTIES``).

        Example::

            ig.table("local.db.t").remove_properties("owner")
        """
        if not keys:
            raise ValueError("remove_properties() needs at least one key")
        return update_table(self, [{"action": "remove_properties", "keys": [str(k) for k in keys]}])

    def metadata(self) -> dict[str, Any]:
        """The table's current metadata: ``current_schema``, ``default_spec``, ``default_sort_order``
        (the Iceberg spec's JSON forms), ``properties``, ``format_version``, ``last_column_id``, ...

        Example::

            [f["name"] for f in ig.table("local.db.t").metadata()["current_schema"]["fields"]]
        """
        return self._session._execute({"op": "table_info", "table": self.identifier})

    def schema(self) -> dict[str, Any]:
        """The current schema in the Iceberg spec's JSON form (``schema-id``, ``fields`` with ``id``,
        ``name``, ``type``, ``required``, ``doc``; ``identifier-field-ids``).

        Example::

            [f["name"] for f in ig.table("local.db.t").schema()["fields"]]
        """
        return cast(dict[str, Any], self.metadata()["current_schema"])

    def spec(self) -> dict[str, Any]:
        """The default partition spec in the Iceberg spec's JSON form (``spec-id``, ``fields``).

        Example::

            [f["transform"] for f in ig.table("local.db.t").spec()["fields"]]
        """
        return cast(dict[str, Any], self.metadata()["default_spec"])

    def sort_order(self) -> dict[str, Any]:
        """The default sort order in the Iceberg spec's JSON form (``order-id``, ``fields``).

        Example::

            ig.table("local.db.t").sort_order()["fields"]
        """
        return cast(dict[str, Any], self.metadata()["default_sort_order"])

    def properties(self) -> dict[str, str]:
        """The table's properties.

        Example::

            ig.table("local.db.t").properties().get("write.distribution-mode")
        """
        return cast(dict[str, str], self.metadata()["properties"])

    def _ref_document(self, op: str, ref: str, to: str | None = None, snapshot_id: int | None = None) -> dict[str, Any]:
        if not isinstance(ref, str) or (to is not None and not isinstance(to, str)):
            raise TypeError(f"{op}() takes ref names as str")
        doc: dict[str, Any] = {"op": op, "table": self.identifier, "ref": ref}
        if to is not None:
            doc["to"] = to
        if snapshot_id is not None:
            doc["snapshot_id"] = int(snapshot_id)
        return self._session._execute(doc)

    def _row_document(self, op: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
        doc: dict[str, Any] = {"op": op, "table": self.identifier}
        if options:
            doc["options"] = {str(k): _session._option_value(v) for k, v in options.items()}
        return doc


def _int_arg(name: str, v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} takes int values, got {type(v).__name__}")
    return v


def _epoch_ms(v: _dt.datetime | int, name: str = "older_than") -> int:
    """A time as epoch milliseconds: an aware datetime, or milliseconds already."""
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            raise InvalidArgumentError(
                f"{name} must be a timezone-aware datetime (or epoch milliseconds): a naive one is ambiguous"
            )
        delta = v - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return delta // _dt.timedelta(milliseconds=1)
    return _int_arg(name, v)


class InspectTable:
    """The metadata tables of one table, as Spark names them (``db.t.snapshots``, ``db.t.files``, ...).

    Each method reads one with the library and returns a pyarrow Table with Spark's
    columns; :meth:`stream` returns the same rows as a :class:`ScanStream` for any
    Arrow consumer. The per-snapshot tables (``files``, ``data_files``,
    ``delete_files``, ``manifests``, ``partitions``, ``entries``) read main's head
    or ``snapshot_id``; the ``all_*`` ones every snapshot's.

    Example::

        t = ig.table("local.db.t")
        t.inspect.partitions().to_pylist()
        duckdb.sql("select file_path, record_count from f").show()  # f = t.inspect.stream("files")
    """

    def __init__(self, table: Table) -> None:
        self._table = table

    def stream(self, name: str, snapshot_id: int | None = None) -> ScanStream:
        """Metadata table ``name`` as a :class:`ScanStream` (read once).

        Example::

            pl.DataFrame(ig.table("local.db.t").inspect.stream("snapshots"))
        """
        doc: dict[str, Any] = {"op": "inspect", "table": self._table.identifier, "metadata_table": str(name)}
        if snapshot_id is not None:
            doc["snapshot_id"] = _int_arg("snapshot_id", snapshot_id)
        return ScanStream(self._table.session, doc)

    def _read(self, name: str, snapshot_id: int | None = None) -> pyarrow.Table:
        _require_pyarrow(f"Table.inspect.{name}()")
        return self.stream(name, snapshot_id).to_arrow()

    def snapshots(self) -> pyarrow.Table:
        """``committed_at``, ``snapshot_id``, ``parent_id``, ``operation``, ``manifest_list``, ``summary``."""
        return self._read("snapshots")

    def history(self) -> pyarrow.Table:
        """``made_current_at``, ``snapshot_id``, ``parent_id``, ``is_current_ancestor`` (main's snapshot log)."""
        return self._read("history")

    def refs(self) -> pyarrow.Table:
        """``name``, ``type``, ``snapshot_id`` and the ref's retention settings."""
        return self._read("refs")

    def metadata_log_entries(self) -> pyarrow.Table:
        """``timestamp``, ``file``, ``latest_snapshot_id``, ``latest_schema_id``, ``latest_sequence_number``."""
        return self._read("metadata_log_entries")

    def manifests(self, snapshot_id: int | None = None) -> pyarrow.Table:
        """The manifests of main's head (or ``snapshot_id``) with their file counts and partition summaries."""
        return self._read("manifests", snapshot_id)

    def all_manifests(self) -> pyarrow.Table:
        """The manifests of every snapshot, with ``reference_snapshot_id``."""
        return self._read("all_manifests")

    def files(self, snapshot_id: int | None = None) -> pyarrow.Table:
        """The live data and delete files of main's head (or ``snapshot_id``) with their metrics."""
        return self._read("files", snapshot_id)

    def data_files(self, snapshot_id: int | None = None) -> pyarrow.Table:
        """As :meth:`files`, data files only."""
        return self._read("data_files", snapshot_id)

    def delete_files(self, snapshot_id: int | None = None) -> pyarrow.Table:
        """As :meth:`files`, delete files only."""
        return self._read("delete_files", snapshot_id)

    def all_files(self) -> pyarrow.Table:
        """The files of every snapshot's manifests (a file once per manifest that lists it)."""
        return self._read("all_files")

    def all_data_files(self) -> pyarrow.Table:
        """As :meth:`all_files`, data files only."""
        return self._read("all_data_files")

    def all_delete_files(self) -> pyarrow.Table:
        """As :meth:`all_files`, delete files only."""
        return self._read("all_delete_files")

    def entries(self, snapshot_id: int | None = None) -> pyarrow.Table:
        """The manifest entries of main's head (or ``snapshot_id``): ``status``, ``snapshot_id``,
        ``sequence_number``, ``file_sequence_number``, ``data_file``."""
        return self._read("entries", snapshot_id)

    def all_entries(self) -> pyarrow.Table:
        """The manifest entries of every snapshot."""
        return self._read("all_entries")

    def partitions(self, snapshot_id: int | None = None) -> pyarrow.Table:
        """Per partition of main's head (or ``snapshot_id``): record and file counts, delete counts and
        the last snapshot that changed it."""
        return self._read("partitions", snapshot_id)


def table(identifier: str) -> Table:
    """A lazy handle on the table ``[catalog.]namespace.table`` of the default session.

    Example::

        rows = ig.table("local.db.events").to_arrow().num_rows
    """
    return _session.default_session().table(identifier)
