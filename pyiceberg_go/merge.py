"""``mergeInto``: MERGE INTO with PySpark's ``MergeIntoWriter`` builder, through libpyiceberg_go."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from . import _session
from .expressions import Column, _literal, to_sql
from .results import WriteResult

if TYPE_CHECKING:
    from ._session import Session
    from ._typing import ArrowData

#: A condition or value: Spark SQL text or an ``ig.col``/``ig.lit`` expression.
Expression: TypeAlias = str | Column


def _value(v: Any) -> str:
    if isinstance(v, Column):
        return v.sql
    if isinstance(v, str):
        if not v.strip():
            raise ValueError("an assignment value is empty")
        return v
    return _literal(v)


def _assignments(assignments: Mapping[str, Any], what: str) -> dict[str, str]:
    if not isinstance(assignments, Mapping) or not assignments:
        raise ValueError(f"{what}() needs a non-empty mapping of column -> value")
    out: dict[str, str] = {}
    for k, v in assignments.items():
        if not isinstance(k, str) or not k:
            raise TypeError(f"{what}() column names must be non-empty str, got {k!r}")
        out[k] = _value(v)
    return out


class _Clause:
    def __init__(self, writer: MergeIntoWriter, when: str, condition: Expression | None) -> None:
        self._writer = writer
        self._when = when
        self._condition = None if condition is None else to_sql(condition, "clause condition")

    def _add(self, action: str, values: dict[str, str] | None = None) -> MergeIntoWriter:
        clause: dict[str, Any] = {"when": self._when, "action": action}
        if self._condition is not None:
            clause["condition"] = self._condition
        if values:
            clause["set"] = values
        self._writer._clauses.append(clause)
        return self._writer


class WhenMatched(_Clause):
    """Actions for target rows that match a source row: ``updateAll``, ``update``, ``delete``.

    Example::

        ig.mergeInto(src, "local.db.t", "target.id = source.id").whenMatched().updateAll().merge()
    """

    def updateAll(self) -> MergeIntoWriter:
        """Set every target column from the source column of the same name.

        Example::

            w.whenMatched().updateAll()
        """
        return self._add("update_all")

    def update(self, assignments: Mapping[str, Any]) -> MergeIntoWriter:
        """Set columns to SQL expressions over ``source``/``target`` (or Python literals).

        Example::

            w.whenMatched("source.op = 'U'").update({"v": "source.v", "n": "target.n + 1"})
        """
        return self._add("update", _assignments(assignments, "update"))

    def delete(self) -> MergeIntoWriter:
        """Delete the matched target row.

        Example::

            w.whenMatched("source.op = 'D'").delete()
        """
        return self._add("delete")


class WhenNotMatched(_Clause):
    """Actions for source rows no target row matches: ``insertAll``, ``insert``.

    Example::

        w.whenNotMatched().insertAll()
    """

    def insertAll(self) -> MergeIntoWriter:
        """Insert the source row, columns matched by name.

        Example::

            w.whenNotMatched().insertAll()
        """
        return self._add("insert_all")

    def insert(self, assignments: Mapping[str, Any]) -> MergeIntoWriter:
        """Insert a row with these column values (SQL over ``source``); other columns are null.

        Example::

            w.whenNotMatched().insert({"id": "source.id", "v": "source.v * 2"})
        """
        return self._add("insert", _assignments(assignments, "insert"))


class WhenNotMatchedBySource(_Clause):
    """Actions for target rows no source row matches: ``update``, ``delete``.

    Example::

        w.whenNotMatchedBySource("target.active").update({"active": "false"})
    """

    def update(self, assignments: Mapping[str, Any]) -> MergeIntoWriter:
        """Set columns to SQL expressions over ``target``.

        Example::

            w.whenNotMatchedBySource().update({"active": False})
        """
        return self._add("update", _assignments(assignments, "update"))

    def delete(self) -> MergeIntoWriter:
        """Delete the target row.

        Example::

            w.whenNotMatchedBySource().delete()
        """
        return self._add("delete")


class MergeIntoWriter:
    """Builder of a MERGE INTO ``table`` USING ``source`` ON ``condition``, named as in PySpark.

    Columns are qualified with ``target.``/``source.`` (also the table's
    name, and the aliases given to :func:`mergeInto`). Clauses of one kind are
    tried in order; the first whose condition holds applies. A target row
    matched by several source rows fails the merge with Spark's error unless
    the only matched clause is an unconditional delete.

    Example::

        (ig.mergeInto(changes, "local.db.customers", "t.id = s.id", source_alias="s", target_alias="t")
           .whenMatched("s.op = 'D'").delete()
           .whenMatched().updateAll()
           .whenNotMatched().insertAll()
           .merge())
    """

    def __init__(
        self,
        source: ArrowData,
        table: str,
        condition: Expression,
        source_alias: str | None = None,
        target_alias: str | None = None,
        session: Session | None = None,
    ) -> None:
        if not isinstance(table, str):
            raise TypeError(f"the table identifier must be a str, got {type(table).__name__}")
        self._source = source
        self._table = table
        self._session = session if session is not None else _session.default_session()
        self._on = to_sql(condition, "merge condition")
        self._aliases = {"source_alias": source_alias, "target_alias": target_alias}
        self._clauses: list[dict[str, Any]] = []
        self._schema_evolution = False
        self._options: dict[str, str] = {}

    @property
    def session(self) -> Session:
        """The session the merge runs in (the one :func:`mergeInto` or ``Session.mergeInto`` was called on).

        Example::

            s = ig.Session()
            assert s.mergeInto(df, "local.db.t", "target.id = source.id").session is s
        """
        return self._session

    def whenMatched(self, condition: Expression | None = None) -> WhenMatched:
        """Start a WHEN MATCHED [AND condition] clause.

        Example::

            w.whenMatched("source.ts > target.ts").updateAll()
        """
        return WhenMatched(self, "matched", condition)

    def whenNotMatched(self, condition: Expression | None = None) -> WhenNotMatched:
        """Start a WHEN NOT MATCHED [AND condition] clause (conditions over ``source``).

        Example::

            w.whenNotMatched().insertAll()
        """
        return WhenNotMatched(self, "not_matched", condition)

    def whenNotMatchedBySource(self, condition: Expression | None = None) -> WhenNotMatchedBySource:
        """Start a WHEN NOT MATCHED BY SOURCE [AND condition] clause (conditions over ``target``).

        Example::

            w.whenNotMatchedBySource().delete()
        """
        return WhenNotMatchedBySource(self, "not_matched_by_source", condition)

    def withSchemaEvolution(self) -> MergeIntoWriter:
        """Add the source's new columns to the target as part of the merge.

        Example::

            w.withSchemaEvolution().whenNotMatched().insertAll().merge()
        """
        self._schema_evolution = True
        return self

    def option(self, key: str, value: Any) -> MergeIntoWriter:
        """Set a write option (e.g. ``snapshot-property.<k>``).

        Example::

            w.option("snapshot-property.job", "nightly")
        """
        self._options[str(key)] = _session._option_value(value)
        return self

    def request_document(self) -> dict[str, Any]:
        """The request document (docs/abi.md#request) that :meth:`merge` sends.

        Example::

            ig.mergeInto(df, "local.db.t", "target.id = source.id").whenMatched().delete().request_document()
        """
        merge: dict[str, Any] = {"on": self._on, "clauses": [dict(c) for c in self._clauses]}
        for k, v in self._aliases.items():
            if v is not None:
                merge[k] = str(v)
        if self._schema_evolution:
            merge["schema_evolution"] = True
        doc: dict[str, Any] = {"op": "merge", "table": self._table, "merge": merge}
        if self._options:
            doc["options"] = dict(self._options)
        return doc

    def merge(self) -> WriteResult:
        """Run the merge: one snapshot; counts in ``result.merge`` (``num-target-rows-updated``, ...).

        Example::

            r = ig.mergeInto(df, "local.db.t", "target.id = source.id").whenMatched().updateAll().merge()
            print(r.merge["num-target-rows-updated"])
        """
        if not self._clauses:
            raise ValueError("merge() needs at least one whenMatched/whenNotMatched/whenNotMatchedBySource clause")
        return WriteResult.from_document(self._session._execute(self.request_document(), self._source))


def mergeInto(
    source: ArrowData,
    table: str,
    condition: Expression,
    source_alias: str | None = None,
    target_alias: str | None = None,
) -> MergeIntoWriter:
    """Start a MERGE INTO ``table`` USING ``source`` (any Arrow data) ON ``condition``, in the default session.

    Example::

        (ig.mergeInto(df, "local.db.t", "target.id = source.id")
           .whenMatched().updateAll()
           .whenNotMatched().insertAll()
           .merge())
    """
    return _session.default_session().mergeInto(source, table, condition, source_alias, target_alias)


def _quote(name: str) -> str:
    return "`" + str(name).replace("`", "``") + "`"


def upsert(table: str, df: ArrowData, join_cols: Sequence[str], session: Session | None = None) -> WriteResult:
    """PyIceberg-style upsert: rows matching on ``join_cols`` are updated, the others inserted.

    Example::

        upsert("local.db.t", df, ["id"])  # or ig.table("local.db.t").upsert(df, ["id"])
    """
    if isinstance(join_cols, str) or not join_cols:
        raise ValueError("upsert() needs a non-empty list of join columns")
    on = " AND ".join(f"target.{_quote(c)} = source.{_quote(c)}" for c in join_cols)
    writer = MergeIntoWriter(df, table, on, session=session)
    return writer.whenMatched().updateAll().whenNotMatched().insertAll().merge()
