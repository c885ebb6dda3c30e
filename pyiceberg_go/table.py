"""``table``: a lazy handle on an Iceberg table for reading and inspecting it."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

from . import _session
from .expressions import Column, _literal, to_sql
from .writer import WriteResult

if TYPE_CHECKING:
    import pyarrow


def _require_pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError(
            "Table.to_arrow() returns a pyarrow.Table and needs pyarrow: "
            "pip install 'pyiceberg-go[pyarrow]'"
        ) from e
    return pyarrow


class Table:
    """A lazy handle on a table: nothing is read until a method is called.

    Example::

        t = ig.table("local.db.events")
        print(len(t.snapshots()), t.to_arrow(columns=["id"]).num_rows)
    """

    def __init__(self, identifier: str) -> None:
        if not isinstance(identifier, str):
            raise TypeError(f"the table identifier must be a str, got {type(identifier).__name__}")
        self.identifier = identifier

    def __repr__(self) -> str:
        return f"Table({self.identifier!r})"

    def scan_document(self, snapshot_id: int | None = None, columns: Sequence[str] | None = None) -> dict[str, Any]:
        """The scan document (docs/abi.md#scan) that :meth:`to_arrow` sends.

        Example::

            ig.table("local.db.t").scan_document(columns=["id"])
        """
        doc: dict[str, Any] = {"table": self.identifier}
        if snapshot_id is not None:
            doc["snapshot_id"] = int(snapshot_id)
        if columns is not None:
            if isinstance(columns, str):
                raise TypeError("columns must be a sequence of column names, not a str")
            doc["columns"] = [str(c) for c in columns]
        return doc

    def to_arrow(self, snapshot_id: int | None = None, columns: Sequence[str] | None = None) -> pyarrow.Table:
        """Read the table (its current snapshot, or ``snapshot_id``) into a pyarrow Table.

        Example::

            t = ig.table("local.db.events")
            old = t.to_arrow(snapshot_id=t.snapshots()[0]["snapshot_id"], columns=["id", "ts"])
        """
        pa = _require_pyarrow()
        stream = _session.scan_stream(self.scan_document(snapshot_id, columns))
        try:
            reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(stream))
            return reader.read_all()
        finally:
            if stream.release:  # import failed before moving it
                stream.release(ctypes.byref(stream))

    def snapshots(self) -> list[dict[str, Any]]:
        """The table's snapshots, oldest first: ``snapshot_id``, ``parent_id``, ``timestamp_ms``,
        ``operation`` and ``summary``.

        Example::

            for s in ig.table("local.db.events").snapshots():
                print(s["snapshot_id"], s["operation"], s["summary"].get("added-records"))
        """
        doc = _session.execute({"op": "snapshots", "table": self.identifier})
        return list(doc.get("snapshots") or [])


    def delete(self, where: Union[str, Column], options: Mapping[str, Any] | None = None) -> WriteResult:
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
        return WriteResult.from_document(_session.execute(doc))

    def update(
        self, set: Mapping[str, Any], where: Union[str, Column, None] = None, options: Mapping[str, Any] | None = None
    ) -> WriteResult:
        """Set columns on the rows matching ``where`` (UPDATE ... SET ... WHERE); all rows without ``where``.

        Each value is a SQL expression (a str such as ``"price * 2"``), an
        ``ig.col``/``ig.lit`` expression, or a plain Python value (a literal;
        wrap strings meant as literals in ``ig.lit``). Values are converted to
        the column's type by Spark's ANSI store-assignment rules.

        Example::

            ig.table("local.db.items").update({"price": "price * 1.1", "note": ig.lit("raised")}, where="cat = 'a'")
        """
        if not isinstance(set, Mapping) or not set:
            raise ValueError("update() needs a non-empty mapping of column -> value")
        values: dict[str, str] = {}
        for k, v in set.items():
            if not isinstance(k, str):
                raise TypeError(f"update() column names must be str, got {k!r}")
            values[k] = v.sql if isinstance(v, Column) else v if isinstance(v, str) else _literal(v)
        doc = self._row_document("update", options)
        doc["set"] = values
        if where is not None:
            doc["filter"] = to_sql(where, "update condition")
        return WriteResult.from_document(_session.execute(doc))

    def upsert(self, df: object, join_cols: Sequence[str]) -> WriteResult:
        """PyIceberg-style upsert built on merge: rows matching on ``join_cols`` are updated, others inserted.

        Example::

            r = ig.table("local.db.customers").upsert(changes, ["id"])
            print(r.merge["num-target-rows-updated"], r.merge["num-target-rows-inserted"])
        """
        from .merge import upsert

        return upsert(self.identifier, df, join_cols)

    def refs(self) -> dict[str, dict[str, Any]]:
        """The table's branches and tags: name -> ``{"type": "branch" | "tag", "snapshot_id": int}``.

        Example::

            heads = {n: r["snapshot_id"] for n, r in ig.table("local.db.t").refs().items() if r["type"] == "branch"}
        """
        doc = _session.execute({"op": "refs", "table": self.identifier})
        return dict(doc.get("refs") or {})

    def create_branch(self, name: str, snapshot_id: int | None = None) -> dict[str, Any]:
        """Create branch ``name`` at ``snapshot_id`` (default: main's head); it must not exist.

        Write to it through the identifier ``<table>.branch_<name>``.

        Example::

            ig.table("local.db.t").create_branch("audit")
            ig.writeTo(df, "local.db.t.branch_audit").append()
        """
        return self._ref_document("create_branch", ref=name, snapshot_id=snapshot_id)

    def create_tag(self, name: str, snapshot_id: int | None = None) -> dict[str, Any]:
        """Create tag ``name`` at ``snapshot_id`` (default: main's head); read it as ``<table>.tag_<name>``.

        Example::

            ig.table("local.db.t").create_tag("2024-q1")
        """
        return self._ref_document("create_tag", ref=name, snapshot_id=snapshot_id)

    def fast_forward(self, branch: str, to: str) -> dict[str, Any]:
        """Move ``branch`` to the head of ref ``to``; ``branch``'s head must be an ancestor of it.

        Example::

            ig.table("local.db.t").fast_forward("main", "audit")
        """
        return self._ref_document("fast_forward", ref=branch, to=to)

    def remove_branch(self, name: str) -> dict[str, Any]:
        """Remove branch ``name`` (not ``main``).

        Example::

            ig.table("local.db.t").remove_branch("audit")
        """
        return self._ref_document("remove_branch", ref=name)

    def remove_tag(self, name: str) -> dict[str, Any]:
        """Remove tag ``name``.

        Example::

            ig.table("local.db.t").remove_tag("2024-q1")
        """
        return self._ref_document("remove_tag", ref=name)

    def cherrypick(self, snapshot_id: int) -> WriteResult:
        """Apply snapshot ``snapshot_id`` (typically a staged WAP write) onto main, as Iceberg's cherrypick.

        A snapshot whose parent is main's head is fast-forwarded to; another
        append is re-committed with summary ``source-snapshot-id`` (and
        ``published-wap-id``). The result describes main's new head.

        Example::

            staged = [s for s in ig.table("local.db.t").snapshots() if "wap.id" in s["summary"]]
            ig.table("local.db.t").cherrypick(staged[-1]["snapshot_id"])
        """
        return WriteResult.from_document(_session.execute({"op": "cherrypick", "table": self.identifier, "snapshot_id": int(snapshot_id)}))

    def publish(self, wap_id: str) -> WriteResult:
        """Cherry-pick the staged snapshot written with session ``wap.id`` = ``wap_id`` (Spark's publish_changes).

        Example::

            ig.configure(conf={"wap.id": "job-42"})   # with write.wap.enabled=true on the table
            ig.writeTo(df, "local.db.t").append()     # staged, main unchanged
            ig.table("local.db.t").publish("job-42")  # now on main
        """
        return WriteResult.from_document(_session.execute({"op": "publish", "table": self.identifier, "wap_id": str(wap_id)}))

    def _ref_document(self, op: str, ref: str, to: str | None = None, snapshot_id: int | None = None) -> dict[str, Any]:
        if not isinstance(ref, str) or (to is not None and not isinstance(to, str)):
            raise TypeError(f"{op}() takes ref names as str")
        doc: dict[str, Any] = {"op": op, "table": self.identifier, "ref": ref}
        if to is not None:
            doc["to"] = to
        if snapshot_id is not None:
            doc["snapshot_id"] = int(snapshot_id)
        return _session.execute(doc)

    def _row_document(self, op: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
        doc: dict[str, Any] = {"op": op, "table": self.identifier}
        if options:
            doc["options"] = {str(k): _session._option_value(v) for k, v in options.items()}
        return doc


def table(identifier: str) -> Table:
    """A lazy handle on the table ``[catalog.]namespace.table``.

    Example::

        rows = ig.table("local.db.events").to_arrow().num_rows
    """
    return Table(identifier)
