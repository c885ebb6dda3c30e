"""A plain-Python model of an Iceberg table's rows under Spark's write semantics.

test_model.py drives pyiceberg_go and this model with the same generated
operations and compares what PyIceberg and DuckDB read back with the model's
rows. Nothing here calls the library: types, partition transforms (bucket is
murmur3 over the spec's single-value encoding, via mmh3), filters (SQL
three-valued logic, Spark's NaN and -0.0 rules) and the operations are
written out from the Iceberg spec and Spark's documented behaviour.

Values in the model are plain Python: bool, int, float (float columns hold
float32-exact values), Decimal, date, time, datetime (naive for timestamp,
UTC-aware for timestamptz), str, bytes (binary and fixed), uuid.UUID, dict
(struct), list, and list of (key, value) tuples (map).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import struct as _struct
import uuid as _uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)
UTC = dt.timezone.utc

# ----------------------------------------------------------------------------- types

PRIMITIVES = (
    "boolean", "int", "long", "float", "double", "decimal", "date", "time",
    "timestamp", "timestamptz", "string", "uuid", "binary", "fixed",
)


@dataclass(frozen=True)
class T:
    """An Iceberg type. p/s: decimal precision and scale, p: fixed length;
    children: struct ((name, T), ...), list (T,), map (K, V)."""

    kind: str
    p: int = 0
    s: int = 0
    children: tuple = ()

    def __repr__(self) -> str:
        if self.kind == "decimal":
            return f"T('decimal', {self.p}, {self.s})"
        if self.kind == "fixed":
            return f"T('fixed', {self.p})"
        if self.children:
            return f"T({self.kind!r}, children={self.children!r})"
        return f"T({self.kind!r})"

    @property
    def primitive(self) -> bool:
        return self.kind in PRIMITIVES

    def arrow(self) -> pa.DataType:
        k = self.kind
        simple = {
            "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
            "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"),
            "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", tz="UTC"),
            "string": pa.string(), "binary": pa.binary(), "uuid": pa.uuid(),
        }
        if k in simple:
            return simple[k]
        if k == "decimal":
            return pa.decimal128(self.p, self.s)
        if k == "fixed":
            return pa.binary(self.p)
        if k == "struct":
            return pa.struct([pa.field(n, t.arrow()) for n, t in self.children])
        if k == "list":
            return pa.list_(self.children[0].arrow())
        if k == "map":
            return pa.map_(self.children[0].arrow(), self.children[1].arrow())
        raise ValueError(k)

    def storage(self) -> pa.DataType:
        """arrow() with uuid as its storage, fixed_size_binary(16): pyarrow builds nested
        uuid values only that way (then casts to arrow())."""
        k = self.kind
        if k == "uuid":
            return pa.binary(16)
        if k == "struct":
            return pa.struct([pa.field(n, t.storage()) for n, t in self.children])
        if k == "list":
            return pa.list_(self.children[0].storage())
        if k == "map":
            return pa.map_(self.children[0].storage(), self.children[1].storage())
        return self.arrow()

    def to_arrow_value(self, v: Any) -> Any:
        """A model value in the form pa.array accepts for this type."""
        if v is None:
            return None
        k = self.kind
        if k == "uuid":
            return v.bytes
        if k == "struct":
            return {n: t.to_arrow_value(v.get(n)) for n, t in self.children}
        if k == "list":
            return [self.children[0].to_arrow_value(x) for x in v]
        if k == "map":
            kt, vt = self.children
            return [(kt.to_arrow_value(a), vt.to_arrow_value(b)) for a, b in v]
        return v


@dataclass(frozen=True)
class Col:
    name: str
    type: T


def arrow_schema(cols: list[Col]) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type.arrow()) for c in cols])


def arrow_table(cols: list[Col], rows: list[dict]) -> pa.Table:
    arrays = [pa.array([c.type.to_arrow_value(r.get(c.name)) for r in rows], c.type.storage()).cast(c.type.arrow()) for c in cols]
    return pa.Table.from_arrays(arrays, schema=arrow_schema(cols))


# ----------------------------------------------------------------------------- canonical values


class _NaN:
    """The one NaN of canonical rows (NaN != NaN would break multiset comparison)."""

    def __repr__(self) -> str:
        return "NaN"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _NaN)

    def __hash__(self) -> int:
        return 0x7FF8


NAN = _NaN()


def canon(t: T, v: Any) -> Any:
    """A hashable, reader-independent form of a value of type t, as a model or a reader holds it.

    Floats keep their sign (-0.0 and 0.0 differ: Parquet stores the bits and
    both readers return them); every NaN is one value.
    """
    if v is None:
        return None
    k = t.kind
    if k in ("float", "double"):
        v = float(v)
        if math.isnan(v):
            return NAN
        return ("-0.0",) if v == 0 and math.copysign(1, v) < 0 else v
    if k == "decimal":
        return decimal.Decimal(v)  # equal values compare and hash equal whatever their exponent
    if k == "timestamptz":
        if v.tzinfo is None:
            raise AssertionError(f"timestamptz value without zone: {v!r}")
        return ("tz", v.astimezone(UTC).replace(tzinfo=None))
    if k == "timestamp":
        if v.tzinfo is not None:
            raise AssertionError(f"timestamp value with a zone: {v!r}")
        return v
    if k == "uuid":
        if isinstance(v, _uuid.UUID):
            return v.bytes
        if isinstance(v, str):
            return _uuid.UUID(v).bytes
        return bytes(v)
    if k in ("binary", "fixed"):
        return bytes(v)
    if k == "struct":
        return tuple(canon(ft, v.get(n)) for n, ft in t.children)
    if k == "list":
        return tuple(canon(t.children[0], x) for x in v)
    if k == "map":
        kt, vt = t.children
        items = v.items() if isinstance(v, dict) else ((kv["key"], kv["value"]) if isinstance(kv, dict) else kv for kv in v)
        return tuple(sorted(((canon(kt, a), canon(vt, b)) for a, b in items), key=repr))
    return v


def canon_rows(cols: list[Col], rows: list[dict]) -> Counter:
    return Counter(tuple(canon(c.type, r.get(c.name)) for c in cols) for r in rows)


def canon_table(cols: list[Col], table: pa.Table) -> Counter:
    names = set(table.column_names)
    want = {c.name for c in cols}
    if names != want:
        raise AssertionError(f"columns {sorted(names)} != {sorted(want)}")
    return canon_rows(cols, table.to_pylist())


def multiset_diff(expected: Counter, actual: Counter, limit: int = 6) -> str:
    missing = list((expected - actual).elements())
    extra = list((actual - expected).elements())
    lines = [f"{sum(expected.values())} rows expected, {sum(actual.values())} read"]
    if missing:
        lines.append(f"missing ({len(missing)}): " + "; ".join(map(repr, missing[:limit])))
    if extra:
        lines.append(f"unexpected ({len(extra)}): " + "; ".join(map(repr, extra[:limit])))
    return "\n".join(lines)


# ----------------------------------------------------------------------------- Spark comparison


def _sort_key(t: T, v: Any) -> Any:
    """Spark's ordering and equality: NaN equals NaN and is the largest, -0.0 equals 0.0,
    strings and binaries bytewise (code point order is UTF-8 byte order)."""
    k = t.kind
    if k in ("float", "double"):
        return (1, 0.0) if math.isnan(v) else (0, v + 0.0)
    if k == "uuid":
        return v.bytes if isinstance(v, _uuid.UUID) else v
    if k == "timestamptz":
        return v.astimezone(UTC)
    return v


def sql_compare(t: T, a: Any, op: str, b: Any) -> bool | None:
    if op == "<=>":
        if a is None or b is None:
            return a is None and b is None
        return _sort_key(t, a) == _sort_key(t, b)
    if a is None or b is None:
        return None
    x, y = _sort_key(t, a), _sort_key(t, b)
    return {"=": x == y, "<>": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


# ----------------------------------------------------------------------------- SQL literals


def sql_literal(t: T, v: Any) -> str:
    """Spark SQL text of a literal of type t (comparisons convert it to the column's type)."""
    if v is None:
        return "NULL"
    k = t.kind
    if k == "boolean":
        return "TRUE" if v else "FALSE"
    if k == "int":
        return str(v)
    if k == "long":
        return f"{v}L"
    if k in ("float", "double"):
        if math.isnan(v):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(v):
            return f"CAST('{'-' if v < 0 else ''}Infinity' AS DOUBLE)"
        return repr(float(v)) + "D"
    if k == "decimal":
        return format(v, "f")
    if k == "date":
        return f"DATE '{v.isoformat()}'"
    if k == "time":
        return f"'{v.isoformat()}'"
    if k == "timestamp":
        return f"TIMESTAMP_NTZ '{v.isoformat(sep=' ')}'"
    if k == "timestamptz":
        return f"TIMESTAMP '{v.astimezone(UTC).replace(tzinfo=None).isoformat(sep=' ')}+00:00'"
    if k == "string":
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if k == "uuid":
        return f"'{v}'"
    if k in ("binary", "fixed"):
        return "X'" + bytes(v).hex().upper() + "'"
    raise ValueError(f"no literal for {t!r}")


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# ----------------------------------------------------------------------------- filters


@dataclass(frozen=True)
class Ref:
    """A column, optionally a struct field (path of two names), optionally qualified (merge)."""

    path: tuple
    type: T
    scope: str = ""  # "", "target" or "source"

    def sql(self) -> str:
        q = [self.scope] if self.scope else []
        return ".".join(q + [quote(p) for p in self.path])

    def value(self, env: Callable[[str], dict]) -> Any:
        row = env(self.scope)
        v = row.get(self.path[0])
        for p in self.path[1:]:
            if v is None:
                return None
            v = v.get(p)
        return v


@dataclass(frozen=True)
class Cmp:
    ref: Ref
    op: str
    lit: Any
    as_decimal: bool = False  # an int/long literal written as a decimal (5.0): compared as decimals

    def sql(self) -> str:
        lit = f"{self.lit}.0" if self.as_decimal and self.lit is not None else sql_literal(self.ref.type, self.lit)
        return f"{self.ref.sql()} {self.op} {lit}"

    def eval(self, env: Callable) -> bool | None:
        return sql_compare(self.ref.type, self.ref.value(env), self.op, self.lit)


@dataclass(frozen=True)
class IsNull:
    ref: Ref
    negated: bool = False

    def sql(self) -> str:
        return f"{self.ref.sql()} IS {'NOT ' if self.negated else ''}NULL"

    def eval(self, env: Callable) -> bool | None:
        return (self.ref.value(env) is None) != self.negated


@dataclass(frozen=True)
class In:
    ref: Ref
    lits: tuple

    def sql(self) -> str:
        return f"{self.ref.sql()} IN ({', '.join(sql_literal(self.ref.type, v) for v in self.lits)})"

    def eval(self, env: Callable) -> bool | None:
        v = self.ref.value(env)
        if v is None:
            return None
        unknown = False
        for lit in self.lits:
            r = sql_compare(self.ref.type, v, "=", lit)
            if r:
                return True
            unknown |= r is None
        return None if unknown else False


@dataclass(frozen=True)
class Between:
    ref: Ref
    lo: Any
    hi: Any

    def sql(self) -> str:
        t = self.ref.type
        return f"{self.ref.sql()} BETWEEN {sql_literal(t, self.lo)} AND {sql_literal(t, self.hi)}"

    def eval(self, env: Callable) -> bool | None:
        v = self.ref.value(env)
        return And(Const(sql_compare(self.ref.type, v, ">=", self.lo)), Const(sql_compare(self.ref.type, v, "<=", self.hi))).eval(env)


@dataclass(frozen=True)
class StartsWith:
    """s LIKE 'prefix%' (the prefix's %, _ and \\ escaped)."""

    ref: Ref
    prefix: str

    def sql(self) -> str:
        pattern = "".join("\\" + c if c in "%_\\" else c for c in self.prefix) + "%"
        return f"{self.ref.sql()} LIKE {sql_literal(T('string'), pattern)}"

    def eval(self, env: Callable) -> bool | None:
        v = self.ref.value(env)
        return None if v is None else v.startswith(self.prefix)


@dataclass(frozen=True)
class ColCmp:
    """Two columns of one type compared (merge: target.x = source.x)."""

    left: Ref
    op: str
    right: Ref

    def sql(self) -> str:
        return f"{self.left.sql()} {self.op} {self.right.sql()}"

    def eval(self, env: Callable) -> bool | None:
        return sql_compare(self.left.type, self.left.value(env), self.op, self.right.value(env))


@dataclass(frozen=True)
class And:
    a: Any
    b: Any

    def sql(self) -> str:
        return f"({self.a.sql()} AND {self.b.sql()})"

    def eval(self, env: Callable) -> bool | None:
        x, y = self.a.eval(env), self.b.eval(env)
        if x is False or y is False:
            return False
        return None if x is None or y is None else True


@dataclass(frozen=True)
class Or:
    a: Any
    b: Any

    def sql(self) -> str:
        return f"({self.a.sql()} OR {self.b.sql()})"

    def eval(self, env: Callable) -> bool | None:
        x, y = self.a.eval(env), self.b.eval(env)
        if x is True or y is True:
            return True
        return None if x is None or y is None else False


@dataclass(frozen=True)
class Not:
    a: Any

    def sql(self) -> str:
        return f"(NOT {self.a.sql()})"

    def eval(self, env: Callable) -> bool | None:
        x = self.a.eval(env)
        return None if x is None else not x


@dataclass(frozen=True)
class Const:
    v: bool | None

    def sql(self) -> str:
        return "NULL" if self.v is None else "TRUE" if self.v else "FALSE"

    def eval(self, env: Callable) -> bool | None:
        return self.v


def holds(cond: Any, env: Callable) -> bool:
    """Whether a condition is TRUE (not FALSE, not NULL) for a row."""
    return cond is None or cond.eval(env) is True


def one_row(row: dict) -> Callable[[str], dict]:
    return lambda scope: row


# ----------------------------------------------------------------------------- partition transforms


def _i64(v: int) -> bytes:
    return _struct.pack("<q", v)


def _micros(t: T, v: Any) -> int:
    if t.kind == "timestamptz":
        v = v.astimezone(UTC).replace(tzinfo=None)
    d = v - EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def _unscaled(v: decimal.Decimal, scale: int) -> int:
    """The unscaled integer of v at scale (exact: Decimal arithmetic would round to 28 digits)."""
    sign, digits, exp = v.as_tuple()
    u = int("".join(map(str, digits)) or "0")
    shift = exp + scale
    u = u * 10**shift if shift >= 0 else u // 10**-shift
    return -u if sign else u


def decimal_of(unscaled: int, scale: int) -> decimal.Decimal:
    """The decimal unscaled * 10^-scale, exactly (with exponent -scale)."""
    return decimal.Decimal(f"{unscaled}E{-scale}")


def _bucket_bytes(t: T, v: Any) -> bytes:
    k = t.kind
    if k in ("int", "long"):
        return _i64(v)
    if k == "date":
        return _i64((v - EPOCH_DATE).days)
    if k == "time":
        return _i64(((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond)
    if k in ("timestamp", "timestamptz"):
        return _i64(_micros(t, v))
    if k == "decimal":
        u = _unscaled(v, t.s)
        n = max(1, (u.bit_length() + 8) // 8)  # minimal two's complement
        return u.to_bytes(n, "big", signed=True)
    if k == "string":
        return v.encode("utf-8")
    if k == "uuid":
        return v.bytes
    if k in ("binary", "fixed"):
        return bytes(v)
    raise ValueError(f"bucket of {t!r}")


def partition_value(transform: str, t: T, v: Any) -> Any:
    """The partition value (canonical) of v under an Iceberg transform."""
    if v is None or transform == "void":
        return None
    if transform == "identity":
        return canon(t, v)
    name, _, arg = transform.partition("[")
    if name == "bucket":
        import mmh3

        n = int(arg.rstrip("]"))
        return (mmh3.hash(_bucket_bytes(t, v), signed=True) & 0x7FFFFFFF) % n
    if name == "truncate":
        w = int(arg.rstrip("]"))
        if t.kind in ("int", "long"):
            return v - v % w
        if t.kind == "decimal":
            u = _unscaled(v, t.s)
            return u - u % w
        return v[:w]  # string: code points; binary: bytes
    if t.kind == "date":
        y, m, days = v.year, v.month, (v - EPOCH_DATE).days
        hours = None
    else:
        u = _micros(t, v)
        w = v.astimezone(UTC) if t.kind == "timestamptz" else v
        y, m = w.year, w.month
        days, hours = u // 86_400_000_000, u // 3_600_000_000
    return {"year": y - 1970, "month": (y - 1970) * 12 + m - 1, "day": days, "hour": hours}[name]


TRANSFORMS_FOR = {
    "identity": PRIMITIVES,
    "bucket": ("int", "long", "decimal", "date", "time", "timestamp", "timestamptz", "string", "uuid", "binary", "fixed"),
    "truncate": ("int", "long", "decimal", "string", "binary"),
    "year": ("date", "timestamp", "timestamptz"),
    "month": ("date", "timestamp", "timestamptz"),
    "day": ("date", "timestamp", "timestamptz"),
    "hour": ("timestamp", "timestamptz"),
    "void": PRIMITIVES,
}


# ----------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class PField:
    transform: str  # identity, bucket[N], truncate[W], year, month, day, hour, void
    column: str


@dataclass
class Create:
    rows: list
    spec: list = field(default_factory=list)  # [PField]
    props: dict = field(default_factory=dict)


@dataclass
class Append:
    rows: list


@dataclass
class OverwritePartitions:
    rows: list


@dataclass
class Overwrite:
    cond: Any
    rows: list


@dataclass
class Delete:
    cond: Any


@dataclass
class Update:
    sets: dict  # column -> ("lit", value) | ("col", other column)
    cond: Any = None


@dataclass
class Clause:
    when: str  # matched, not_matched, not_matched_by_source
    action: str  # delete, update, update_all, insert, insert_all
    cond: Any = None
    sets: dict = field(default_factory=dict)  # column -> ("lit", v) | ("source", col) | ("target", col)


@dataclass
class Merge:
    rows: list
    clauses: list
    on: Any = None  # a condition ANDed to ON target.id = source.id


CARDINALITY = "MERGE statement matched a single row from the target table with multiple rows of the source table"


class ExpectedError(Exception):
    """The model says the operation fails (and commits nothing): error class name and message pattern."""

    def __init__(self, error: str, pattern: str) -> None:
        super().__init__(pattern)
        self.error, self.pattern = error, pattern


class Model:
    """The table's rows after each operation, as Spark would leave them."""

    def __init__(self, cols: list[Col], spec: list[PField]) -> None:
        self.cols = cols
        self.types = {c.name: c.type for c in cols}
        self.spec = spec
        self.rows: list[dict] = []

    def copy_rows(self) -> list[dict]:
        return [dict(r) for r in self.rows]

    def partition_key(self, row: dict) -> tuple:
        return tuple(partition_value(f.transform, self.types[f.column], row.get(f.column)) for f in self.spec)

    def apply(self, op: Any) -> None:
        if isinstance(op, Create):
            decimals = [f for f in self.spec if f.transform.split("[")[0] in ("identity", "truncate", "void") and self.types[f.column].kind == "decimal"]
            if len(decimals) > 1:
                # iceberg-go v0.7.0 cannot write a manifest with two decimal partition
                # fields; the library refuses such a spec up front.
                raise ExpectedError("NotSupportedError", "at most one decimal partition field")
            self.rows = op_rows(op.rows)
        elif isinstance(op, Append):
            self.rows += op_rows(op.rows)
        elif isinstance(op, OverwritePartitions):
            if not op.rows:
                return
            if not self.spec:
                self.rows = op_rows(op.rows)
                return
            replaced = {self.partition_key(r) for r in op.rows}
            self.rows = [r for r in self.rows if self.partition_key(r) not in replaced] + op_rows(op.rows)
        elif isinstance(op, Overwrite):
            self.rows = [r for r in self.rows if not holds(op.cond, one_row(r))] + op_rows(op.rows)
        elif isinstance(op, Delete):
            self.rows = [r for r in self.rows if not holds(op.cond, one_row(r))]
        elif isinstance(op, Update):
            out = []
            for r in self.rows:
                if holds(op.cond, one_row(r)):
                    r = dict(r)
                    new = {c: (v if how == "lit" else r.get(v)) for c, (how, v) in op.sets.items()}
                    r.update(new)
                out.append(r)
            self.rows = out
        elif isinstance(op, Merge):
            self.rows = self.merge(op)
        else:
            raise TypeError(op)

    def merge(self, op: Merge) -> list[dict]:
        """MERGE INTO target USING source ON target.id = source.id, Spark's semantics."""
        matched = [c for c in op.clauses if c.when == "matched"]
        not_matched = [c for c in op.clauses if c.when == "not_matched"]
        by_source = [c for c in op.clauses if c.when == "not_matched_by_source"]
        check = bool(matched) and not (len(matched) == 1 and matched[0].action == "delete" and matched[0].cond is None)
        source = op_rows(op.rows)
        by_id: dict[int, list[int]] = {}
        for j, s in enumerate(source):
            if s.get("id") is not None:
                by_id.setdefault(s["id"], []).append(j)
        out: list[dict] = []
        hit: set[int] = set()  # source rows some target row matched
        for t in self.rows:
            js = by_id.get(t.get("id"), []) if t.get("id") is not None else []
            js = [j for j in js if holds(op.on, lambda scope, t=t, s=source[j]: s if scope == "source" else t)]
            ms = [source[j] for j in js]
            if ms:
                hit.update(js)
                if len(ms) > 1 and check:
                    raise ExpectedError("ValidationError", CARDINALITY)
                s = ms[0]
                def env(scope, t=t, s=s):
                    return s if scope == "source" else t
                clause = next((c for c in matched if holds(c.cond, env)), None)
            else:
                def env(scope, t=t):
                    return t
                clause = next((c for c in by_source if holds(c.cond, env)), None)
            if clause is None:
                out.append(t)
            elif clause.action == "delete":
                continue
            elif clause.action == "update_all":
                out.append(dict(ms[0]))
            else:
                r = dict(t)
                r.update({c: self._value(how, v, env) for c, (how, v) in clause.sets.items()})
                out.append(r)
        for j, s in enumerate(source):
            if j in hit:
                continue
            def env(scope, s=s):
                return s
            clause = next((c for c in not_matched if holds(c.cond, env)), None)
            if clause is None:
                continue
            if clause.action == "insert_all":
                out.append(dict(s))
            else:
                r = {c.name: None for c in self.cols}
                r.update({c: self._value(how, v, env) for c, (how, v) in clause.sets.items()})
                out.append(r)
        return out

    @staticmethod
    def _value(how: str, v: Any, env: Callable) -> Any:
        if how == "lit":
            return v
        return env(how).get(v)


def op_rows(rows: list) -> list[dict]:
    return [dict(r) for r in rows]
