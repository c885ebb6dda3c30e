"""``ig.sql``: Spark SQL statements, run by the library.

The statement is parsed and run by the Go core (``{"op": "sql"}``, docs/abi.md): this module
only sends it and wraps the answer.

Example::

    ig.sql("CREATE TABLE local.db.events (id bigint, ts timestamp) USING iceberg PARTITIONED BY (days(ts))")
    ig.sql("ALTER TABLE local.db.events ADD COLUMN channel string COMMENT 'where it came from'")
    ig.sql("ALTER TABLE local.db.events WRITE ORDERED BY id")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._session import default_session, execute
from .scan import ScanStream, _require_pyarrow

if TYPE_CHECKING:
    import pyarrow

__all__ = ["SqlResult", "sql"]


@dataclass(frozen=True)
class SqlResult:
    """What a statement did.

    ``statement`` names the statement (``"ALTER TABLE ... ADD COLUMNS"``), ``op`` the operation
    of docs/abi.md that ran it (``"update_table"``) and ``result`` is that operation's result
    document, as :func:`pyiceberg_go.execute` returns it.
    """

    statement: str
    op: str
    result: dict[str, Any]
    #: A SELECT's read document (docs/abi.md#scan); None for other statements.
    read: dict[str, Any] | None = None

    def stream(self) -> ScanStream:
        """A SELECT's rows as a :class:`ScanStream` (each call reads anew).

        Example::

            pl.DataFrame(ig.sql("SELECT id, ts FROM local.db.t VERSION AS OF 123").stream())
        """
        if self.read is None:
            raise TypeError(f"{self.statement} reads no rows: only a SELECT does")
        return ScanStream(default_session(), dict(self.read))

    def to_arrow(self) -> pyarrow.Table:
        """A SELECT's rows as a pyarrow Table.

        Example::

            ig.sql("SELECT * FROM local.db.t TIMESTAMP AS OF '2024-06-01 00:00:00'").to_arrow()
        """
        _require_pyarrow("SqlResult.to_arrow()")
        return self.stream().to_arrow()

    @property
    def snapshot_id(self) -> int | None:
        """The snapshot a statement committed, if it made one (DDL makes none)."""
        v = self.result.get("snapshot_id")
        return int(v) if v is not None else None


def sql(statement: str) -> SqlResult:
    """Run one Spark SQL statement on the default session.

    Supported: ``CREATE [OR REPLACE] TABLE ... (columns) USING iceberg [PARTITIONED BY (...)]
    [LOCATION '...'] [COMMENT '...'] [TBLPROPERTIES (...)]``, ``REPLACE TABLE``,
    ``CREATE NAMESPACE|DATABASE [IF NOT EXISTS]``, ``DROP TABLE [IF EXISTS] t [PURGE]`` and
    ``ALTER TABLE`` with ``RENAME TO``, ``ADD|RENAME|ALTER|DROP COLUMN``,
    ``SET|UNSET TBLPROPERTIES``, ``ADD|DROP|REPLACE PARTITION FIELD``, ``WRITE [LOCALLY]
    ORDERED BY | DISTRIBUTED BY PARTITION | UNORDERED``, ``SET|DROP IDENTIFIER FIELDS`` and
    ``CREATE [OR REPLACE]|REPLACE|DROP BRANCH|TAG`` with retention; ``CALL
    [catalog.]system.<procedure>(...)`` for the maintenance and ref procedures; ``SELECT * | cols
    FROM t [VERSION AS OF id | 'ref'] [TIMESTAMP AS OF '...'] [WHERE ...]`` and ``SELECT * FROM
    t.<metadata table>``, read with :meth:`SqlResult.to_arrow` or :meth:`SqlResult.stream`.

    A syntax error raises :class:`~pyiceberg_go.InvalidArgumentError` naming the position; a
    statement outside that list raises :class:`~pyiceberg_go.NotSupportedError`. Nothing is
    committed by a statement that fails.
    """
    if not isinstance(statement, str):
        raise TypeError(f"sql takes the statement as str, got {type(statement).__name__}")
    doc = execute({"op": "sql", "sql": statement})
    read = doc.get("read")
    return SqlResult(
        statement=str(doc["statement"]),
        op=str(doc["op"]),
        result=dict(doc.get("result") or {}),
        read=dict(read) if read is not None else None,
    )
