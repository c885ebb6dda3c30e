"""A small expression builder that writes Spark SQL text.

``ig.col("level") == "INFO"`` builds the same filter as the string
``"level = 'INFO'"``: every filter and value is parsed and typed by the
library (core/expr), so both forms behave identically. This module only
spells SQL; it never evaluates anything.

Example::

    import pyiceberg_go as ig
    ig.table("local.db.logs").delete((ig.col("level") == "DEBUG") & (ig.col("ts") < ig.lit(cutoff)))
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import math
from collections.abc import Collection
from typing import Any, Union


def _quote_name(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"a column name must be a non-empty str, got {name!r}")
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split("."))


def _literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v) + ("L" if not -(2**31) <= v < 2**31 else "")
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return f"CAST('{v!r}' AS DOUBLE)".replace("nan", "NaN").replace("inf", "Infinity")
        return repr(v) + "D"
    if isinstance(v, _decimal.Decimal):
        if not v.is_finite():
            raise ValueError(f"a decimal literal must be finite, got {v!r}")
        return format(v, "f")
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "''") + "'"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "X'" + bytes(v).hex().upper() + "'"
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            return f"TIMESTAMP_NTZ '{v.isoformat(sep=' ')}'"
        return f"TIMESTAMP '{v.astimezone(_dt.timezone.utc).replace(tzinfo=None).isoformat(sep=' ')}+00:00'"
    if isinstance(v, _dt.date):
        return f"DATE '{v.isoformat()}'"
    raise TypeError(f"cannot write {type(v).__name__} {v!r} as a SQL literal")


#: What the operators accept on their right-hand side.
Operand = Union["Column", None, bool, int, float, str, bytes, _decimal.Decimal, _dt.date, _dt.datetime]


def _sql(v: Any) -> str:
    return v.sql if isinstance(v, Column) else _literal(v)


class Column:
    """A SQL expression under construction; ``str(c)`` is its Spark SQL text.

    Operators: ``== != < <= > >=``, ``& | ~`` (AND, OR, NOT), ``+ - * / %`` and
    unary ``-``; methods ``isNull``, ``isNotNull``, ``isin``, ``between``,
    ``like``, ``startswith``, ``cast``.

    Example::

        f = (ig.col("level") == "INFO") & ig.col("id").between(1, 10)
        str(f)  # "((`level` = 'INFO') AND (`id` BETWEEN 1 AND 10))"
    """

    __slots__ = ("sql",)

    def __init__(self, sql: str) -> None:
        self.sql = sql

    def __str__(self) -> str:
        return self.sql

    def __repr__(self) -> str:
        return f"Column({self.sql!r})"

    def __bool__(self) -> bool:
        raise TypeError("a Column is not a Python bool: combine filters with & | ~, not and/or/not")

    def _bin(self, op: str, other: Operand, swap: bool = False) -> Column:
        left, right = (_sql(other), self.sql) if swap else (self.sql, _sql(other))
        return Column(f"({left} {op} {right})")

    def __eq__(self, other: Operand) -> Column:  # type: ignore[override]
        return self._bin("=", other)

    def __ne__(self, other: Operand) -> Column:  # type: ignore[override]
        return self._bin("<>", other)

    def __lt__(self, other: Operand) -> Column:
        return self._bin("<", other)

    def __le__(self, other: Operand) -> Column:
        return self._bin("<=", other)

    def __gt__(self, other: Operand) -> Column:
        return self._bin(">", other)

    def __ge__(self, other: Operand) -> Column:
        return self._bin(">=", other)

    def __and__(self, other: Operand) -> Column:
        return self._bin("AND", other)

    def __rand__(self, other: Operand) -> Column:
        return self._bin("AND", other, swap=True)

    def __or__(self, other: Operand) -> Column:
        return self._bin("OR", other)

    def __ror__(self, other: Operand) -> Column:
        return self._bin("OR", other, swap=True)

    def __invert__(self) -> Column:
        return Column(f"(NOT {self.sql})")

    def __add__(self, other: Operand) -> Column:
        return self._bin("+", other)

    def __radd__(self, other: Operand) -> Column:
        return self._bin("+", other, swap=True)

    def __sub__(self, other: Operand) -> Column:
        return self._bin("-", other)

    def __rsub__(self, other: Operand) -> Column:
        return self._bin("-", other, swap=True)

    def __mul__(self, other: Operand) -> Column:
        return self._bin("*", other)

    def __rmul__(self, other: Operand) -> Column:
        return self._bin("*", other, swap=True)

    def __truediv__(self, other: Operand) -> Column:
        return self._bin("/", other)

    def __rtruediv__(self, other: Operand) -> Column:
        return self._bin("/", other, swap=True)

    def __mod__(self, other: Operand) -> Column:
        return self._bin("%", other)

    def __neg__(self) -> Column:
        return Column(f"(- {self.sql})")

    __hash__ = None  # type: ignore[assignment]

    def isNull(self) -> Column:
        """``col IS NULL``.

        Example::

            ig.table("local.db.t").delete(ig.col("email").isNull())
        """
        return Column(f"({self.sql} IS NULL)")

    def isNotNull(self) -> Column:
        """``col IS NOT NULL``.

        Example::

            ig.col("email").isNotNull()
        """
        return Column(f"({self.sql} IS NOT NULL)")

    def isin(self, *values: Operand | Collection[Operand]) -> Column:
        """``col IN (v1, v2, ...)``; also takes one list, tuple or set.

        Example::

            ig.col("level").isin("DEBUG", "TRACE")
        """
        items: tuple[Any, ...] = values
        if len(values) == 1 and isinstance(values[0], (list, tuple, set, frozenset)):
            items = tuple(values[0])
        if not items:
            raise ValueError("isin() needs at least one value")
        return Column(f"({self.sql} IN ({', '.join(_sql(v) for v in items)}))")

    def between(self, lower: Operand, upper: Operand) -> Column:
        """``col BETWEEN lower AND upper`` (both ends included).

        Example::

            ig.col("id").between(100, 200)
        """
        return Column(f"({self.sql} BETWEEN {_sql(lower)} AND {_sql(upper)})")

    def like(self, pattern: str) -> Column:
        """``col LIKE pattern`` with ``%`` and ``_`` wildcards.

        Example::

            ig.col("name").like("ab%")
        """
        return Column(f"({self.sql} LIKE {_literal(str(pattern))})")

    def startswith(self, prefix: str) -> Column:
        """``col LIKE 'prefix%'`` with the prefix's own ``%``, ``_`` and ``\\`` escaped.

        Example::

            ig.col("path").startswith("/tmp/")
        """
        escaped = str(prefix).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return Column(f"({self.sql} LIKE {_literal(escaped + '%')})")

    def cast(self, sql_type: str) -> Column:
        """``CAST(col AS type)`` with a Spark SQL type name.

        Example::

            ig.col("id").cast("string")
        """
        return Column(f"CAST({self.sql} AS {sql_type})")


def col(name: str) -> Column:
    """A column reference; dots reach into structs (``"address.city"``).

    Example::

        ig.table("local.db.t").delete(ig.col("address.city") == "Paris")
    """
    return Column(_quote_name(name))


def lit(value: Any) -> Column:
    """A literal value: None, bool, int, float, Decimal, str, bytes, date or datetime.

    An aware datetime becomes a TIMESTAMP (UTC), a naive one a TIMESTAMP_NTZ.

    Example::

        ig.col("ts") >= ig.lit(datetime.date(2024, 1, 1))
    """
    return Column(_literal(value))


def expr(sql: str) -> Column:
    """Wrap Spark SQL text as a Column, to mix with the builder.

    Example::

        ig.expr("lower(level)") == "info"
    """
    if not isinstance(sql, str) or not sql.strip():
        raise TypeError(f"expr() takes non-empty SQL text, got {sql!r}")
    return Column(f"({sql})")


def to_sql(e: Column | str, what: str) -> str:
    """The SQL text of a filter or value given as a Column or a str.

    Example::

        to_sql(ig.col("a") > 1, "filter")  # "(`a` > 1)"
    """
    if isinstance(e, Column):
        return e.sql
    if isinstance(e, str):
        if not e.strip():
            raise ValueError(f"the {what} is empty")
        return e
    raise TypeError(f"the {what} must be a SQL string or an ig.col(...) expression, got {type(e).__name__}")
