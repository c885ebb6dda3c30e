"""``ig.sql``: Spark SQL statements, run by the library.

The statement is parsed and run by the Go core (``{"op": "sql"}``, docs/abi.md). This module
only finds the rows a write statement reads (``{"op": "sql_plan"}`` names its source: a view
registered with :func:`register` or passed in ``views=``, an Iceberg table, or a query), passes
them as the statement's input stream and wraps the answer. A query (``INSERT ... SELECT`` with
joins, filters, projections; ``MERGE ... USING (SELECT ...)``) is evaluated by DuckDB
(``pip install pyiceberg-go[sql]``) over the views and over Iceberg tables read by this package.

Example::

    ig.sql("CREATE TABLE local.db.events (id bigint, ts timestamp) USING iceberg PARTITIONED BY (days(ts))")
    ig.register("updates", df)
    ig.sql("MERGE INTO local.db.events t USING updates u ON t.id = u.id "
           "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    ig.sql("INSERT INTO local.db.events VALUES (1, TIMESTAMP '2024-05-01 10:00:00')")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from . import _session
from .errors import NoSuchViewError, NotSupportedError
from .results import WriteResult
from .scan import ScanStream, _require_pyarrow

if TYPE_CHECKING:
    import pyarrow

    from ._session import Session
    from ._typing import ArrowData

__all__ = ["SqlResult", "register", "sql", "unregister"]

#: Operations whose result is a write result.
_WRITE_OPS = frozenset({"append", "overwrite", "overwritePartitions", "delete", "update", "merge"})


@dataclass(frozen=True)
class SqlResult:
    """What a statement did.

    ``statement`` names the statement (``"ALTER TABLE ... ADD COLUMNS"``, ``"MERGE INTO"``),
    ``op`` the operation of docs/abi.md that ran it (``"update_table"``, ``"merge"``) and
    ``result`` is that operation's result document, as :func:`pyiceberg_go.execute` returns it.
    Spark's ``spark.sql`` returns no rows for DML on Iceberg tables; the counts here come from
    our write result.

    Example::

        r = ig.sql("DELETE FROM local.db.t WHERE id < 10")
        r.write.snapshot_id, r.write.summary["deleted-records"]
    """

    statement: str
    op: str
    result: dict[str, Any]
    #: A SELECT's read document (docs/abi.md#scan); None for other statements.
    read: dict[str, Any] | None = None
    #: The session the statement ran in (its SELECT is read there).
    _session: Session | None = field(default=None, repr=False, compare=False)

    def stream(self) -> ScanStream:
        """A SELECT's rows as a :class:`ScanStream` (each call reads anew).

        Example::

            pl.DataFrame(ig.sql("SELECT id, ts FROM local.db.t VERSION AS OF 123").stream())
        """
        if self.read is None:
            raise TypeError(f"{self.statement} reads no rows: only a SELECT does")
        return ScanStream(self._session or _session.default_session(), dict(self.read))

    def to_arrow(self) -> pyarrow.Table:
        """A SELECT's rows as a pyarrow Table.

        Example::

            ig.sql("SELECT * FROM local.db.t TIMESTAMP AS OF '2024-06-01 00:00:00'").to_arrow()
        """
        _require_pyarrow("SqlResult.to_arrow()")
        return self.stream().to_arrow()

    @property
    def snapshot_id(self) -> int | None:
        """The snapshot a statement committed, if it made one (DDL makes none).

        Example::

            ig.sql("DELETE FROM local.db.t WHERE id = 1").snapshot_id
        """
        v = self.result.get("snapshot_id")
        return int(v) if v is not None else None

    @property
    def write(self) -> WriteResult | None:
        """The write result of a DML statement (``None`` for DDL).

        Example::

            ig.sql("INSERT INTO local.db.t VALUES (1, 'a')").write.summary["added-records"]
        """
        return WriteResult.from_document(self.result) if self.op in _WRITE_OPS else None

    def _merge_count(self, key: str) -> int | None:
        w = self.write
        if w is None or self.op != "merge":
            return None
        return int(cast("Mapping[str, int]", w.merge).get(key, 0))

    @property
    def num_updated_rows(self) -> int | None:
        """MERGE: target rows updated (``None`` for other statements).

        Example::

            ig.sql("MERGE INTO local.db.t USING u ON t.id = u.id WHEN MATCHED THEN UPDATE SET *").num_updated_rows
        """
        return self._merge_count("num-target-rows-updated")

    @property
    def num_deleted_rows(self) -> int | None:
        """MERGE: target rows deleted (``None`` for other statements).

        Example::

            ig.sql("MERGE INTO local.db.t USING u ON t.id = u.id WHEN MATCHED THEN DELETE").num_deleted_rows
        """
        return self._merge_count("num-target-rows-deleted")

    @property
    def num_inserted_rows(self) -> int | None:
        """MERGE and INSERT: rows inserted (``None`` for other statements).

        Example::

            ig.sql("INSERT INTO local.db.t VALUES (1, 'a'), (2, 'b')").num_inserted_rows  # 2
        """
        if self.op == "merge":
            return self._merge_count("num-target-rows-inserted")
        w = self.write
        if w is None or self.statement not in ("INSERT INTO", "INSERT OVERWRITE"):
            return None
        return int(w.summary.get("added-records", 0)) if w.snapshot_id is not None else 0

    @property
    def num_affected_rows(self) -> int | None:
        """MERGE: rows updated, deleted and inserted; INSERT: rows inserted; else ``None``.

        DELETE and UPDATE have none: their snapshot summaries count rewritten rows, not the
        rows the statement matched.

        Example::

            ig.sql("INSERT INTO local.db.t SELECT * FROM v", views={"v": df}).num_affected_rows
        """
        if self.op == "merge":
            return sum(v or 0 for v in (self.num_updated_rows, self.num_deleted_rows, self.num_inserted_rows))
        return self.num_inserted_rows


def _views(session: Session) -> dict[str, object]:
    views: dict[str, object] = session.__dict__.setdefault("_sql_views", {})
    return views


def register(name: str, df: ArrowData, session: Session | None = None) -> None:
    """Make ``df`` (any Arrow data the package accepts) a temporary view named ``name``.

    As Spark's ``createOrReplaceTempView``: names are case-insensitive and a later ``register``
    replaces the view. A stream (RecordBatchReader, ScanStream) can be read by one statement
    only; a pyarrow Table or a DataFrame by any number.

    Example::

        ig.register("updates", pa.table({"id": [1, 2], "v": ["a", "b"]}))
        ig.sql("INSERT INTO local.db.t SELECT * FROM updates")
    """
    if not isinstance(name, str) or not name.strip() or "." in name:
        raise ValueError(f"register(): a view name is a non-empty str without '.', got {name!r}")
    _views(session or _session.default_session())[name.lower()] = df


def unregister(name: str, session: Session | None = None) -> bool:
    """Drop the temporary view ``name`` (Spark's ``dropTempView``); ``True`` if it existed.

    Example::

        ig.unregister("updates")
    """
    return _views(session or _session.default_session()).pop(str(name).lower(), None) is not None


def _view(session: Session, views: Mapping[str, object] | None, name: str) -> object:
    for k, v in (views or {}).items():
        if str(k).lower() == name.lower():
            return v
    registered = _views(session)
    if name.lower() in registered:
        return registered[name.lower()]
    known = sorted({str(k) for k in (views or {})} | set(registered))
    raise NoSuchViewError(
        f"[TABLE_OR_VIEW_NOT_FOUND] The table or view `{name}` cannot be found: register it with "
        f"ig.register({name!r}, df) or pass views={{{name!r}: df}} (known views: {', '.join(known) or 'none'})"
    )


def _split_name(qualified: str) -> list[str]:
    """The parts of a name as DuckDB's get_table_names gives it (``"local".db.t AS x``)."""
    parts, cur, quoted = [], "", False
    for ch in qualified:
        if ch == '"':
            quoted = not quoted
        elif ch.isspace() and not quoted:
            break  # " AS alias" follows
        elif ch == "." and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def _run_query(
    session: Session, views: Mapping[str, object] | None, query: str, tables: Mapping[str, Any] | None = None
) -> object:
    """Evaluate ``query`` with DuckDB over the views and Iceberg tables it names.

    ``tables`` (the plan's ``source.tables``) are Iceberg tables the query reads under names
    of its own: the columns and rows of each read named there are registered under that name.
    """
    try:
        import duckdb
    except ImportError:
        raise NotSupportedError(
            f"this statement's query needs a query engine: install DuckDB (pip install pyiceberg-go[sql]) "
            f"or write it as VALUES, SELECT * FROM <view> or TABLE <view>. Query: {query}"
        ) from None
    con = duckdb.connect()
    try:
        names = duckdb.get_table_names(query, qualified=True)
    except duckdb.Error as e:
        raise NotSupportedError(f"DuckDB cannot read the query {query!r}: {e}") from None
    for name, read in (tables or {}).items():
        scan = session.table(str(read["table"])).scan(columns=list(read["columns"]), where=read.get("filter") or None)
        con.register(str(name), scan.to_arrow())
    for qualified in sorted(names):
        parts = _split_name(qualified)
        if len(parts) == 1 and parts[0] in (tables or {}):
            continue
        if len(parts) == 1:
            con.register(parts[0], _view(session, views, parts[0]))
            continue
        data = session.table(".".join(parts)).to_arrow()
        if len(parts) >= 3:
            con.execute(f"ATTACH IF NOT EXISTS ':memory:' AS \"{parts[0]}\"")
        schema = '"' + '"."'.join(parts[:-1]) + '"'
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        con.register("__pig_table", data)
        con.execute(f'CREATE OR REPLACE TABLE {schema}."{parts[-1]}" AS SELECT * FROM __pig_table')
        con.unregister("__pig_table")
    try:
        rel = con.sql(query)
        # to_arrow_table is DuckDB 1.4's name of fetch_arrow_table.
        fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table
        return fetch()
    except duckdb.Error as e:
        raise NotSupportedError(f"DuckDB could not evaluate the query {query!r}: {e}") from None
    finally:
        con.close()


def run(session: Session, statement: str, views: Mapping[str, ArrowData] | None = None) -> SqlResult:
    """Run ``statement`` on ``session`` (what :func:`sql` and ``Session.sql`` do)."""
    if not isinstance(statement, str):
        raise TypeError(f"sql takes the statement as str, got {type(statement).__name__}")
    if views is not None and not isinstance(views, Mapping):
        raise TypeError(f"views must be a mapping of name -> Arrow data, got {type(views).__name__}")
    plan = session._execute({"op": "sql_plan", "sql": statement})
    source = plan.get("source") or {}
    data: object = None
    kind = source.get("kind")
    if kind == "view":
        data = _view(session, views, str(source["name"]))
    elif kind == "table":
        data = session.table(str(source["name"])).scan(
            snapshot_id=source.get("snapshot_id"),
            ref=source.get("ref"),
            as_of_timestamp=source.get("as_of_timestamp_ms"),
        )
    elif kind == "query":
        data = _run_query(session, views, str(source["query"]), source.get("tables"))
    doc = session._execute({"op": "sql", "sql": statement}, data)
    read = doc.get("read")
    return SqlResult(
        statement=str(doc["statement"]),
        op=str(doc["op"]),
        result=dict(doc.get("result") or {}),
        read=dict(read) if read is not None else None,
        _session=session,
    )


def sql(statement: str, views: Mapping[str, ArrowData] | None = None) -> SqlResult:
    """Run one Spark SQL statement on the default session.

    DDL: ``CREATE [OR REPLACE] TABLE ... (columns) USING iceberg [PARTITIONED BY (...)]
    [LOCATION '...'] [COMMENT '...'] [TBLPROPERTIES (...)]``, ``REPLACE TABLE``,
    ``CREATE NAMESPACE|DATABASE [IF NOT EXISTS]``, ``DROP TABLE [IF EXISTS] t [PURGE]`` and
    ``ALTER TABLE`` with ``RENAME TO``, ``ADD|RENAME|ALTER|DROP COLUMN``,
    ``SET|UNSET TBLPROPERTIES``, ``ADD|DROP|REPLACE PARTITION FIELD``, ``WRITE [LOCALLY]
    ORDERED BY | DISTRIBUTED BY PARTITION | UNORDERED``, ``SET|DROP IDENTIFIER FIELDS`` and
    ``CREATE [OR REPLACE]|REPLACE|DROP BRANCH|TAG`` with retention; ``USE [NAMESPACE]
    [catalog.]namespace`` (the session's current catalog and namespace, as Spark's); ``CALL
    [catalog.]system.<procedure>(...)`` for the maintenance and ref procedures; ``SELECT * | cols
    FROM t [VERSION AS OF id | 'ref'] [TIMESTAMP AS OF '...'] [WHERE ...]`` and ``SELECT * FROM
    t.<metadata table>``, read with :meth:`SqlResult.to_arrow` or :meth:`SqlResult.stream`.

    DML: ``INSERT INTO|OVERWRITE [TABLE] t [PARTITION (...)] [(cols) | BY NAME] VALUES ... |
    SELECT ... | TABLE v``, ``DELETE FROM t [AS a] [WHERE ...]``, ``UPDATE t [AS a] SET ...
    [WHERE ...]`` and ``MERGE INTO t [AS a] USING <view | table | (query)> [AS b] ON ... WHEN
    ...``, on a table or its branch (``t.branch_x``); a table read as a source may carry Spark's
    ``VERSION AS OF`` / ``TIMESTAMP AS OF``. Views come from ``views`` (name -> Arrow
    data) or :func:`register`; INSERT OVERWRITE is static unless the session's
    ``spark.sql.sources.partitionOverwriteMode`` is ``dynamic``. A DELETE or UPDATE condition may
    hold subqueries (``IN``, ``NOT IN``, ``[NOT] EXISTS``, correlated or not, scalar, under ``OR``
    or ``NOT``): DuckDB evaluates them and the statement runs as a MERGE.

    A syntax error raises :class:`~pyiceberg_go.InvalidArgumentError` naming the position; an
    unknown view :class:`~pyiceberg_go.NoSuchViewError`; a statement outside those lists
    :class:`~pyiceberg_go.NotSupportedError`. Nothing is committed by a statement that fails.

    Example::

        ig.sql("ALTER TABLE local.db.t ADD COLUMN channel string")
        ig.sql("MERGE INTO local.db.t USING u ON t.id = u.id WHEN MATCHED THEN UPDATE SET *", views={"u": df})
    """
    return run(_session.default_session(), statement, views)
