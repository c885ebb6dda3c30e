"""``table``: a lazy handle on an Iceberg table for reading and inspecting it."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import _session

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


def table(identifier: str) -> Table:
    """A lazy handle on the table ``[catalog.]namespace.table``.

    Example::

        rows = ig.table("local.db.events").to_arrow().num_rows
    """
    return Table(identifier)
