"""``evolution``: change a table's schema, partition spec, sort order and properties, metadata only.

Builders with PyIceberg's names (:class:`UpdateSchema`, :class:`UpdateSpec`,
:class:`UpdateSortOrder`) collect changes and send them as one ``update_table``
request (docs/abi.md#update_table) when the ``with`` block ends without an
exception (or on :meth:`commit`); the library applies Iceberg's rules and commits
once. No data file is rewritten.

Example::

    t = ig.table("local.db.events")
    with t.update_schema() as u:
        u.add_column("channel", "string", doc="where it came from")
        u.rename_column("level", "severity")
    with t.update_spec() as u:
        u.add_field("id", "bucket[16]")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .table import Table

#: What an update returns: ``table``, ``metadata_location``, ``changed``, ``format_version``,
#: ``schema``, ``partition_spec``, ``sort_order`` (the Iceberg spec's JSON forms),
#: ``properties``, ``last_column_id``, ``last_partition_id``.
UpdateResult = dict[str, Any]

#: Spark's write distribution modes, as ``write.distribution-mode`` spells them.
DISTRIBUTION_MODE = "write.distribution-mode"


def _type_text(t: object) -> str:
    """An Iceberg type as the library reads it: text (``"long"``, ``"decimal(12, 2)"``,
    ``"struct<a: int>"``) or a PyIceberg primitive type object (its ``str``)."""
    if isinstance(t, str):
        return t
    if type(t).__module__.startswith("pyiceberg.types"):
        return str(t)
    raise TypeError(f"field types are Iceberg type names such as 'long' or 'decimal(12, 2)', got {t!r}")


def _transform_text(t: object) -> str:
    """A transform as the library reads it: ``identity``, ``bucket[16]``, ``day``, ... or a
    PyIceberg transform object."""
    if isinstance(t, str):
        return t
    if type(t).__module__.startswith("pyiceberg.transforms"):
        return str(t)
    raise TypeError(f"transforms are names such as 'day' or 'bucket[16]', got {t!r}")


def _path(name: str | Sequence[str]) -> list[str]:
    """A column by its parts: a dotted name (``"addr.city"``) or a tuple of parts."""
    if isinstance(name, str):
        return name.split(".")
    if isinstance(name, Sequence) and all(isinstance(p, str) for p in name):
        return list(name)
    raise TypeError(f"a column is a dotted name or a tuple of names, got {name!r}")


def _quoted(name: str) -> str:
    """A column name in a sort term: each part back-quoted."""
    return ".".join("`" + p.replace("`", "``") + "`" for p in name.split("."))


class _Update:
    """A batch of changes committed together when the ``with`` block ends cleanly."""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._changes: list[dict[str, Any]] = []
        self._extra: dict[str, Any] = {}
        self._data: object = None
        self.result: UpdateResult | None = None

    def __enter__(self) -> Any:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()

    def _add(self, action: str, **args: Any) -> None:
        self._changes.append({"action": action, **{k: v for k, v in args.items() if v is not None}})

    def document(self) -> dict[str, Any]:
        """The ``update_table`` request document (docs/abi.md#update_table) this update sends."""
        return {"op": "update_table", "table": self._table.identifier, "changes": list(self._changes), **self._extra}

    def commit(self) -> UpdateResult:
        """Send the changes (nothing to send: no call); the table's new metadata as :data:`UpdateResult`.

        Example::

            r = ig.table("local.db.t").update_schema().add_column("note", "string").commit()
        """
        if not self._changes:
            self.result = {}
            return self.result
        self.result = self._table.session._execute(self.document(), self._data)
        self._changes = []
        return self.result


class UpdateSchema(_Update):
    """Schema changes, as PyIceberg's ``Table.update_schema()``; see :meth:`Table.update_schema`.

    Every change names columns of the schema the update starts from (or columns it
    adds), as in Iceberg's ``UpdateSchema``. Columns are dotted names (``"addr.city"``)
    or tuples of names; types are Iceberg type names (``"long"``, ``"decimal(12, 2)"``,
    ``"struct<a: int, b: string>"``, ``"list<long>"``, ``"map<string, int>"``) or
    PyIceberg primitive types.

    Example::

        with ig.table("local.db.t").update_schema() as u:
            u.add_column(("addr", "zip"), "int", doc="postal code")
            u.update_column("n", field_type="long")
            u.move_first("id")
    """

    def __init__(self, table: Table, allow_incompatible_changes: bool = False) -> None:
        super().__init__(table)
        if allow_incompatible_changes:
            self._extra["allow_incompatible_changes"] = True

    def add_column(
        self, path: str | Sequence[str], field_type: object, doc: str | None = None, required: bool = False
    ) -> UpdateSchema:
        """Add a column (optional unless ``required``, which needs ``allow_incompatible_changes``).

        A str ``path`` is one top-level name; nested columns are added with a tuple.

        Example::

            u.add_column(("addr", "zip"), "int", doc="postal code")
        """
        if isinstance(path, str):
            if "." in path:
                raise ValueError(f"Cannot add column with ambiguous name: {path}, provide a tuple instead")
            parts = [path]
        else:
            parts = _path(path)
        self._add("add_column", path=parts, type=_type_text(field_type), doc=doc, required=required or None)
        return self

    def rename_column(self, path_from: str | Sequence[str], new_name: str) -> UpdateSchema:
        """Rename a column (nested: only its last part changes).

        Example::

            u.rename_column("addr.zip", "postcode")
        """
        self._add("rename_column", path=_path(path_from), new_name=str(new_name))
        return self

    def update_column(
        self,
        path: str | Sequence[str],
        field_type: object = None,
        required: bool | None = None,
        doc: str | None = None,
    ) -> UpdateSchema:
        """Widen a column's type (int->long, float->double, decimal precision), make it optional
        (``required=False``) or set its doc.

        Example::

            u.update_column("n", field_type="long", doc="widened")
        """
        t = _type_text(field_type) if field_type is not None else None
        self._add("update_column", path=_path(path), type=t, required=required, doc=doc)
        return self

    def make_column_optional(self, path: str | Sequence[str]) -> UpdateSchema:
        """Make a required column optional.

        Example::

            u.make_column_optional("id")
        """
        return self.update_column(path, required=False)

    def delete_column(self, path: str | Sequence[str]) -> UpdateSchema:
        """Drop a column (not one the partition spec or sort order uses, nor an identifier field).

        Example::

            u.delete_column("legacy")
        """
        self._add("delete_column", path=_path(path))
        return self

    def move_first(self, path: str | Sequence[str]) -> UpdateSchema:
        """Move a column to the first place of its struct.

        Example::

            u.move_first("id")
        """
        self._add("move_first", path=_path(path))
        return self

    def move_before(self, path: str | Sequence[str], before_path: str | Sequence[str]) -> UpdateSchema:
        """Move a column just before another of the same struct.

        Example::

            u.move_before("ts", "id")
        """
        self._add("move_before", path=_path(path), other=_path(before_path))
        return self

    def move_after(self, path: str | Sequence[str], after_name: str | Sequence[str]) -> UpdateSchema:
        """Move a column just after another of the same struct.

        Example::

            u.move_after("ts", "id")
        """
        self._add("move_after", path=_path(path), other=_path(after_name))
        return self

    def set_identifier_fields(self, *fields: str) -> UpdateSchema:
        """Set the identifier fields (required primitive columns; none: clear them).

        Example::

            u.set_identifier_fields("id")
        """
        self._changes.append({"action": "set_identifier_fields", "columns": [_path(f) for f in fields]})
        return self

    def union_by_name(self, new_schema: object) -> UpdateSchema:
        """Add what an Arrow schema (a pyarrow Schema, or Arrow data whose schema counts) has and the
        table lacks, widen types as allowed, make optional what it has optional.

        Example::

            u.union_by_name(pa.schema([("id", pa.int64()), ("note", pa.string())]))
        """
        if self._data is not None:
            raise ValueError("union_by_name() takes one schema per update")
        if hasattr(new_schema, "empty_table"):  # a pyarrow Schema
            self._data = new_schema.empty_table()
        elif hasattr(new_schema, "__arrow_c_stream__"):
            self._data = new_schema
        else:
            raise TypeError(f"union_by_name() takes a pyarrow Schema or Arrow data, got {type(new_schema).__name__}")
        self._add("union_by_name")
        return self


class UpdateSpec(_Update):
    """Partition spec changes, as PyIceberg's ``Table.update_spec()``; see :meth:`Table.update_spec`.

    Transforms are ``identity``, ``bucket[N]``, ``truncate[W]``, ``year``, ``month``,
    ``day``, ``hour``, ``void`` or PyIceberg transform objects.

    Example::

        with ig.table("local.db.t").update_spec() as u:
            u.add_field("id", "bucket[16]", "id_bucket")
            u.remove_field("ts_day")
    """

    def add_field(
        self, source_column_name: str, transform: object, partition_field_name: str | None = None
    ) -> UpdateSpec:
        """Partition by ``transform`` of a column; the name defaults to Iceberg's (``id_bucket_16``).

        Example::

            u.add_field("id", "bucket[16]", "id_bucket")
        """
        self._add(
            "add_partition_field",
            source=str(source_column_name),
            transform=_transform_text(transform),
            name=partition_field_name,
        )
        return self

    def add_identity(self, source_column_name: str) -> UpdateSpec:
        """Partition by a column's values.

        Example::

            u.add_identity("category")
        """
        return self.add_field(source_column_name, "identity")

    def remove_field(self, name: str) -> UpdateSpec:
        """Stop partitioning by a field (v1 tables keep it as ``void``).

        Example::

            u.remove_field("ts_day")
        """
        self._add("remove_partition_field", name=str(name))
        return self

    def rename_field(self, name: str, new_name: str) -> UpdateSpec:
        """Rename a partition field.

        Example::

            u.rename_field("id_bucket_16", "id_bucket")
        """
        self._add("rename_partition_field", name=str(name), new_name=str(new_name))
        return self


def _null_text(null_order: object, default: str) -> str:
    if null_order is None:
        return default
    v = str(getattr(null_order, "value", null_order)).lower().replace("_", "-")
    if v not in ("nulls-first", "nulls-last"):
        raise ValueError(f"null_order is 'nulls-first' or 'nulls-last', got {null_order!r}")
    return v


def _term(column: str, transform: object, direction: str, null_order: str) -> str:
    t = _transform_text(transform)
    col = _quoted(column)
    if t == "identity":
        expr = col
    elif t.startswith(("bucket[", "truncate[")) and t.endswith("]"):
        expr = f"{t[: t.index('[')]}({t[t.index('[') + 1 : -1]}, {col})"
    else:
        expr = f"{t}({col})"
    return f"{expr} {direction} {null_order.replace('-', ' ').upper()}"


class UpdateSortOrder(_Update):
    """A new sort order, as PyIceberg's ``Table.update_sort_order()``: the terms given, in order,
    replace the table's order (none: unsorted).

    Example::

        with ig.table("local.db.t").update_sort_order() as u:
            u.asc("id").desc("ts", "day", "nulls-first")
    """

    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self._terms: list[str] = []

    def asc(
        self, source_column_name: str, transform: object = "identity", null_order: object = None
    ) -> UpdateSortOrder:
        """Sort ascending by ``transform`` of a column (nulls first unless ``null_order``).

        Example::

            u.asc("ts", "day", "nulls-last")
        """
        self._terms.append(_term(source_column_name, transform, "ASC", _null_text(null_order, "nulls-first")))
        return self

    def desc(
        self, source_column_name: str, transform: object = "identity", null_order: object = None
    ) -> UpdateSortOrder:
        """Sort descending by ``transform`` of a column (nulls last unless ``null_order``).

        Example::

            u.desc("id")
        """
        self._terms.append(_term(source_column_name, transform, "DESC", _null_text(null_order, "nulls-last")))
        return self

    def commit(self) -> UpdateResult:
        """Replace the table's sort order by the terms given (none: unsorted).

        Example::

            r = ig.table("local.db.t").update_sort_order().asc("id").commit()
        """
        self._changes = [{"action": "replace_sort_order", "terms": list(self._terms)}]
        return super().commit()


def update_table(table: Table, changes: Sequence[Mapping[str, Any]]) -> UpdateResult:
    """Send ``changes`` (each ``{"action", ...}``) as one ``update_table`` request."""
    u = _Update(table)
    u._changes = [dict(c) for c in changes]
    return u.commit()


def write_order(table: Table, terms: Sequence[str], mode: str | None) -> UpdateResult:
    """Spark's ``ALTER TABLE ... WRITE ...``: the sort order ``terms`` and, unless ``mode`` is
    None, ``write.distribution-mode``, in one commit."""
    for t in terms:
        if not isinstance(t, str):
            raise TypeError(f"sort terms are str such as 'id DESC NULLS LAST', got {t!r}")
    changes: list[dict[str, Any]] = [{"action": "replace_sort_order", "terms": list(terms)}]
    if mode is not None:
        changes.append({"action": "set_properties", "properties": {DISTRIBUTION_MODE: mode}})
    return update_table(table, changes)
