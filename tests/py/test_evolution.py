"""Schema, partition spec, sort order and property evolution through our API (pyiceberg_go.evolution).

- Against Spark 4.1: the same ALTER TABLE steps run by Spark on a twin table and by us give the
  same metadata (schema with ids, names, types, docs, nullability and identifier fields; every
  partition spec with its field ids and transforms; last column and partition ids; the sort order;
  the properties), and writes after the changes (ours into our table, Spark's into its twin) read
  the same in Spark, PyIceberg, DuckDB and us, old files included (nulls for new columns, new
  names, widened types). v1 tables keep removed partition fields as void, as Spark's.
- Generated sequences of schema changes checked against a plain Python model of the schema.
- Bad changes: a typed error naming the column, nothing committed.
- A schema change paused (test hooks) between planning and committing while another process
  appends or changes the schema: both commit, or the second add of one column fails naming it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import multiprocessing as mp
import re
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_spark_evolved import assert_rows

import pyiceberg_go as ig

from conftest import HANG_S, CatalogDir, duckdb_scan, hooks_library, use_library
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

T, S = "local.db.t", "local.db.s"  # ours and Spark's twin
UTC = dt.timezone.utc


# ---------------------------------------------------------------- metadata as both sides wrote it


def metadata_json(ident: str) -> dict[str, Any]:
    loc = ig.table(ident).metadata()["metadata_location"]
    path = re.sub(r"^file:(//)?", "", loc)
    return dict(json.loads(Path(path).read_text()))


def _spec_fields(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for f in fields:
        src = f.get("source-id", (f.get("source-ids") or [None])[0])
        out.append({"source-id": src, "field-id": f["field-id"], "name": f["name"], "transform": f["transform"]})
    return out


def shape(ident: str) -> dict[str, Any]:
    """What evolution decides, in a form both writers' metadata compare in."""
    m = metadata_json(ident)
    schema = next(s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"])
    schema = {**schema, "identifier-field-ids": sorted(schema.get("identifier-field-ids") or [])}
    order = next(o for o in m["sort-orders"] if o["order-id"] == m["default-sort-order-id"])
    props = {k: v for k, v in m.get("properties", {}).items() if not k.startswith("schema.name-mapping")}
    return {
        "format-version": m["format-version"],
        "schema": schema,
        "last-column-id": m["last-column-id"],
        "specs": [{"spec-id": s["spec-id"], "fields": _spec_fields(s["fields"])} for s in m["partition-specs"]],
        "default-spec-id": m["default-spec-id"],
        "last-partition-id": m["last-partition-id"],
        "sort-order": {"order-id": order["order-id"], "fields": [_sort_field(f) for f in order["fields"]]},
        "properties": props,
    }


def _sort_field(f: dict[str, Any]) -> dict[str, Any]:
    src = f.get("source-id", (f.get("source-ids") or [None])[0])
    return {"source-id": src, "transform": f["transform"], "direction": f["direction"], "null-order": f["null-order"]}


def assert_same_shape(ours: str, spark_twin: str, when: str) -> None:
    a, b = shape(ours), shape(spark_twin)
    for key in b:
        assert a[key] == b[key], f"after {when}: {key} differs\n ours:  {a[key]}\n spark: {b[key]}"


# ---------------------------------------------------------------- rows for the current schema


_PRIMS: dict[str, Callable[[int], Any]] = {
    "long": lambda i: i,
    "int": lambda i: i % 1000,
    "string": lambda i: f"s{i % 7}",
    "double": lambda i: i / 4,
    "float": lambda i: float(i % 50) / 2,
    "timestamptz": lambda i: dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(hours=37 * i),
}


def _arrow_type(t: Any) -> pa.DataType:
    if isinstance(t, dict):
        assert t["type"] == "struct", t
        return pa.struct([pa.field(f["name"], _arrow_type(f["type"]), not f["required"]) for f in t["fields"]])
    if m := re.fullmatch(r"decimal\((\d+),\s*(\d+)\)", t):
        return pa.decimal128(int(m[1]), int(m[2]))
    return {
        "long": pa.int64(),
        "int": pa.int32(),
        "string": pa.string(),
        "double": pa.float64(),
        "float": pa.float32(),
        "timestamptz": pa.timestamp("us", tz="UTC"),
    }[t]


def _value(t: Any, i: int) -> Any:
    if i % 9 == 4 and not (isinstance(t, str) and t == "long"):
        return None
    if isinstance(t, dict):
        return {f["name"]: _value(f["type"], i + k) for k, f in enumerate(t["fields"])}
    if t.startswith("decimal"):
        return decimal.Decimal(i % 10000) / 100
    return _PRIMS[t](i)


def rows_for(schema: dict[str, Any], first: int, n: int) -> pa.Table:
    """n rows (ids first..) for a schema in the Iceberg spec's JSON form; ids unique."""
    fields = schema["fields"]
    arrow_schema = pa.schema([pa.field(f["name"], _arrow_type(f["type"]), not f["required"]) for f in fields])
    cols = [[_value(f["type"], i) for i in range(first, first + n)] for f in fields]
    return pa.table(cols, schema=arrow_schema)


def write_both(spark: Any, first: int, n: int) -> None:
    """Our append into T; Spark's INSERT into S of the same rows (read from T)."""
    data = rows_for(ig.table(T).schema(), first, n)
    ig.writeTo(data, T).append()
    cols = ", ".join(f"`{c}`" for c in data.column_names)
    spark.sql(f"INSERT INTO {S} SELECT {cols} FROM {T} WHERE id >= {first} AND id < {first + n}")


def check_rows(spark: Any, pcat: Any, when: str) -> None:
    """Spark's read of its twin is the reference; Spark, PyIceberg, DuckDB and we read our table the same."""
    expected = spark.sql(f"SELECT * FROM {S}").toArrow()
    assert_rows(spark.sql(f"SELECT * FROM {T}").toArrow(), expected, f"{when}: spark reads ours")
    assert_rows(ig.table(T).to_arrow(), expected, f"{when}: pyiceberg-go")
    assert_rows(pcat.load_table("db.t").scan().to_arrow(), expected, f"{when}: pyiceberg")
    assert_rows(duckdb_scan(ig.table(T).metadata()["metadata_location"]), expected, f"{when}: duckdb")


# ---------------------------------------------------------------- the differential sequence

CREATE = textwrap.dedent(
    """
    CREATE TABLE {t} (id BIGINT NOT NULL, category STRING, ts TIMESTAMP, v DOUBLE, n INT, f FLOAT, d DECIMAL(9, 2))
    USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version' = '{v}')
    """
)

Step = tuple[str, Callable[[ig.Table], Any]]
WRITE = ("WRITE", None)

STEPS: list[Any] = [
    WRITE,
    ("SET IDENTIFIER FIELDS id", lambda t: t.update_schema().set_identifier_fields("id").commit()),
    (
        "ADD COLUMN c1 STRING COMMENT 'first'",
        lambda t: t.update_schema().add_column("c1", "string", doc="first").commit(),
    ),
    (
        "ADD COLUMN pt STRUCT<x: INT, y: STRING>",
        lambda t: t.update_schema().add_column("pt", "struct<x: int, y: string>").commit(),
    ),
    ("ADD COLUMN pt.z DOUBLE", lambda t: t.update_schema().add_column(("pt", "z"), "double").commit()),
    ("RENAME COLUMN category TO cat", lambda t: t.update_schema().rename_column("category", "cat").commit()),
    ("RENAME COLUMN pt.x TO xx", lambda t: t.update_schema().rename_column("pt.x", "xx").commit()),
    ("ALTER COLUMN n TYPE BIGINT", lambda t: t.update_schema().update_column("n", field_type="long").commit()),
    ("ALTER COLUMN f TYPE DOUBLE", lambda t: t.update_schema().update_column("f", "double").commit()),
    ("ALTER COLUMN d TYPE DECIMAL(12, 2)", lambda t: t.update_schema().update_column("d", "decimal(12, 2)").commit()),
    ("ALTER COLUMN c1 FIRST", lambda t: t.update_schema().move_first("c1").commit()),
    ("ALTER COLUMN v AFTER id", lambda t: t.update_schema().move_after("v", "id").commit()),
    ("ALTER COLUMN pt.z FIRST", lambda t: t.update_schema().move_first("pt.z").commit()),
    # Spark has no BEFORE: cat follows v here.
    ("ALTER COLUMN n AFTER v", lambda t: t.update_schema().move_before("n", "cat").commit()),
    ("ALTER COLUMN v COMMENT 'value'", lambda t: t.update_schema().update_column("v", doc="value").commit()),
    ("DROP COLUMN f", lambda t: t.update_schema().delete_column("f").commit()),
    WRITE,
    ("DROP IDENTIFIER FIELDS id", lambda t: t.update_schema().set_identifier_fields().commit()),
    ("ALTER COLUMN id DROP NOT NULL", lambda t: t.update_schema().make_column_optional("id").commit()),
    ("ADD PARTITION FIELD bucket(4, id)", lambda t: t.update_spec().add_field("id", "bucket[4]").commit()),
    (
        "ADD PARTITION FIELD truncate(2, cat) AS cat_t",
        lambda t: t.update_spec().add_field("cat", "truncate[2]", "cat_t").commit(),
    ),
    (
        "REPLACE PARTITION FIELD ts_day WITH months(ts)",
        lambda t: t.update_spec().remove_field("ts_day").add_field("ts", "month").commit(),
    ),
    ("ADD PARTITION FIELD c1", lambda t: t.update_spec().add_identity("c1").commit()),
    WRITE,
    ("DROP PARTITION FIELD bucket(4, id)", lambda t: t.update_spec().remove_field("id_bucket_4").commit()),
    WRITE,
    ("ADD PARTITION FIELD bucket(4, id)", lambda t: t.update_spec().add_field("id", "bucket[4]").commit()),
    ("DROP PARTITION FIELD months(ts)", lambda t: t.update_spec().remove_field("ts_month").commit()),
    ("ADD PARTITION FIELD years(ts)", lambda t: t.update_spec().add_field("ts", "year").commit()),
    (
        "REPLACE PARTITION FIELD ts_year WITH hours(ts)",
        lambda t: t.update_spec().remove_field("ts_year").add_field("ts", "hour").commit(),
    ),
    WRITE,
    ("WRITE ORDERED BY id DESC NULLS LAST, cat", lambda t: t.write_ordered_by("id DESC NULLS LAST", "cat")),
    ("WRITE LOCALLY ORDERED BY c1", lambda t: t.write_locally_ordered_by("c1")),
    ("WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY id", lambda t: t.write_distributed_by_partition("id")),
    WRITE,
    ("WRITE DISTRIBUTED BY PARTITION", lambda t: t.write_distributed_by_partition()),
    ("WRITE UNORDERED", lambda t: t.write_unordered()),
    (
        # update_sort_order leaves the distribution mode, as LOCALLY ORDERED BY does.
        "WRITE LOCALLY ORDERED BY bucket(4, id), days(ts) DESC, truncate(2, cat) ASC NULLS LAST",
        lambda t: (
            t.update_sort_order()
            .asc("id", "bucket[4]")
            .desc("ts", "day")
            .asc("cat", "truncate[2]", "nulls-last")
            .commit()
        ),
    ),
    (
        "SET TBLPROPERTIES ('k' = 'v', 'write.delete.mode' = 'merge-on-read')",
        lambda t: t.set_properties({"k": "v"}, **{"write.delete.mode": "merge-on-read"}),
    ),
    ("UNSET TBLPROPERTIES ('k')", lambda t: t.remove_properties("k")),
    # c1 is the source of an identity partition field: the field keeps its name.
    ("RENAME COLUMN c1 TO c0", lambda t: t.update_schema().rename_column("c1", "c0").commit()),
    WRITE,
]


@pytest.mark.parametrize("version", ["2", "3"])
def test_evolution_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, version: str) -> None:
    for name in (T, S):
        spark.sql(CREATE.format(t=name, v=version))
    assert_same_shape(T, S, "create")
    first = 0
    for i, (ddl, ours) in enumerate(STEPS):
        if ours is None:
            write_both(spark, first, 20)
            first += 20
            check_rows(spark, pyiceberg_catalog, f"write after step {i}")
            continue
        spark.sql(f"ALTER TABLE {S} {ddl}")
        snapshots = len(ig.table(T).snapshots())
        ours(ig.table(T))
        assert len(ig.table(T).snapshots()) == snapshots, f"{ddl}: a metadata change made a snapshot"
        assert_same_shape(T, S, ddl)
    # Every data file we wrote is still there: nothing was rewritten.
    assert first == 20 * sum(1 for s in STEPS if s[1] is None)


def test_v1_removed_partition_fields_become_void_as_spark(spark: Any, spark_catalog: str) -> None:
    for name in (T, S):
        spark.sql(CREATE.format(t=name, v="1"))
    steps: list[Step] = [
        ("ADD PARTITION FIELD bucket(4, id)", lambda t: t.update_spec().add_field("id", "bucket[4]").commit()),
        ("DROP PARTITION FIELD days(ts)", lambda t: t.update_spec().remove_field("ts_day").commit()),
        (
            "ADD PARTITION FIELD truncate(3, category)",
            lambda t: t.update_spec().add_field("category", "truncate[3]").commit(),
        ),
        ("DROP PARTITION FIELD bucket(4, id)", lambda t: t.update_spec().remove_field("id_bucket_4").commit()),
    ]
    for ddl, ours in steps:
        spark.sql(f"ALTER TABLE {S} {ddl}")
        ours(ig.table(T))
        assert_same_shape(T, S, ddl)
    fields = ig.table(T).spec()["fields"]
    assert [f["transform"] for f in fields] == ["void", "void", "truncate[3]"], fields


# ---------------------------------------------------------------- bad changes


def _new_table(identifier: bool = True) -> ig.Table:
    """id, name, ts, n (partitioned by day(ts)); with ``identifier`` also a required ``key`` as identifier
    field (added without a default: old rows can no longer be read, as in Java)."""
    data = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "name": ["a", "b"],
            "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=UTC)] * 2),
            "n": pa.array([1, 2], pa.int32()),
        }
    )
    ig.writeTo(data, T).partitionedBy(ig.days("ts")).create()
    t = ig.table(T)
    if not identifier:
        return t
    with t.update_schema(allow_incompatible_changes=True) as u:
        u.add_column("key", "long", required=True)
    t.update_schema().set_identifier_fields("key").commit()
    return t


BAD: list[tuple[str, str, Callable[[ig.Table], Any]]] = [
    ("unknown column", "nope", lambda t: t.update_schema().rename_column("nope", "x").commit()),
    ("unknown nested column", "name.x", lambda t: t.update_schema().update_column("name.x", doc="d").commit()),
    ("long to int", "id", lambda t: t.update_schema().update_column("id", "int").commit()),
    ("string to int", "name", lambda t: t.update_schema().update_column("name", "int").commit()),
    ("int to string", "n", lambda t: t.update_schema().update_column("n", "string").commit()),
    ("optional to required", "name", lambda t: t.update_schema().update_column("name", required=True).commit()),
    ("drop partition source", "ts", lambda t: t.update_schema().delete_column("ts").commit()),
    ("drop identifier field", "key", lambda t: t.update_schema().delete_column("key").commit()),
    ("add required", "r", lambda t: t.update_schema().add_column("r", "int", required=True).commit()),
    ("duplicate name", "name", lambda t: t.update_schema().add_column("name", "string").commit()),
    ("rename onto a column", "name", lambda t: t.update_schema().rename_column("n", "name").commit()),
    ("identifier on an optional column", "name", lambda t: t.update_schema().set_identifier_fields("name").commit()),
    ("unknown partition field", "nope", lambda t: t.update_spec().remove_field("nope").commit()),
    ("partition field already there", "ts", lambda t: t.update_spec().add_field("ts", "day").commit()),
    ("partition by an unknown column", "nope", lambda t: t.update_spec().add_field("nope", "bucket[2]").commit()),
    ("sort by an unknown column", "nope", lambda t: t.replace_sort_order("nope")),
    # A failing change in a batch: the good ones before it are not committed either.
    (
        "one bad change of several",
        "nope",
        lambda t: t.update_schema().add_column("ok", "int").delete_column("nope").commit(),
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_changes_name_the_column_and_commit_nothing(case: tuple[str, str, Callable[[ig.Table], Any]]) -> None:
    _, column, change = case
    t = _new_table()
    before = t.metadata()["metadata_location"]
    with pytest.raises(ig.IcebergGoError) as err:
        change(t)
    assert isinstance(err.value, (ig.InvalidArgumentError, ig.ValidationError)), err.value
    assert column in str(err.value), err.value
    assert t.metadata()["metadata_location"] == before


def test_with_block_commits_nothing_when_the_block_raises() -> None:
    t = _new_table()
    before = t.metadata()["metadata_location"]
    with pytest.raises(KeyError), t.update_schema() as u:
        u.add_column("x", "int")
        raise KeyError("stop")
    assert t.metadata()["metadata_location"] == before


def test_union_by_name_and_spec_rename() -> None:
    t = _new_table(identifier=False)
    with t.update_schema() as u:
        u.union_by_name(
            pa.schema([("n", pa.int64()), ("extra", pa.struct([("a", pa.string())])), ("name", pa.string())])
        )
    fields = {f["name"]: f for f in t.schema()["fields"]}
    assert fields["n"]["type"] == "long"
    assert fields["extra"]["type"]["fields"][0]["name"] == "a" and not fields["extra"]["required"]
    with t.update_spec() as s:
        s.rename_field("ts_day", "day_of_ts")
    assert [f["name"] for f in t.spec()["fields"]] == ["day_of_ts"]
    # Old rows read with nulls for the new columns and the widened type.
    got = t.to_arrow()
    assert got.schema.field("n").type == pa.int64() and got["extra"].null_count == 2


# ---------------------------------------------------------------- generated schema changes vs a model


class Model:
    """Top-level columns: name -> (id, type, doc), in order; the rules of Iceberg's UpdateSchema."""

    WIDEN: ClassVar[dict[str, str]] = {"int": "long", "float": "double", "decimal(9, 2)": "decimal(12, 2)"}

    def __init__(self, cols: list[tuple[int, str, str]], last_id: int) -> None:
        self.cols = [{"id": i, "name": n, "type": t, "doc": None} for i, n, t in cols]
        self.last_id = last_id

    def names(self) -> list[str]:
        return [c["name"] for c in self.cols]

    def find(self, name: str) -> dict[str, Any] | None:
        return next((c for c in self.cols if c["name"] == name), None)

    def apply(self, op: tuple[Any, ...]) -> bool:
        """Apply op; False when Iceberg's rules reject it (and the model is unchanged)."""
        kind, name, arg = op
        col = self.find(name)
        if kind == "add":
            if col is not None:
                return False
            self.last_id += 1
            self.cols.append({"id": self.last_id, "name": name, "type": arg, "doc": None})
        elif col is None:
            return False
        elif kind == "rename":
            if self.find(arg) is not None and arg != name:
                return False
            if arg == name:
                return False
            col["name"] = arg
        elif kind == "widen":
            if self.WIDEN.get(col["type"]) != arg and col["type"] != arg:
                return False
            col["type"] = arg
        elif kind == "doc":
            col["doc"] = arg
        elif kind == "delete":
            if name == "p":  # the partition source
                return False
            self.cols.remove(col)
        elif kind == "first":
            self.cols.remove(col)
            self.cols.insert(0, col)
        elif kind == "after":
            other = self.find(arg)
            if other is None or other is col:
                return False
            self.cols.remove(col)
            self.cols.insert(self.cols.index(other) + 1, col)
        return True

    def check(self, schema: dict[str, Any]) -> None:
        got = [(f["id"], f["name"], f["type"], f.get("doc")) for f in schema["fields"]]
        want = [(c["id"], c["name"], c["type"], c["doc"]) for c in self.cols]
        assert got == want


NAMES = ["p", "a", "b", "c", "d"]
TYPES = ["int", "long", "float", "double", "string", "decimal(9, 2)", "decimal(12, 2)"]
ops_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(NAMES), st.sampled_from(TYPES)),
        st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
        st.tuples(st.just("widen"), st.sampled_from(NAMES), st.sampled_from(TYPES)),
        st.tuples(st.just("doc"), st.sampled_from(NAMES), st.sampled_from(["x", "y"])),
        st.tuples(st.just("delete"), st.sampled_from(NAMES), st.none()),
        st.tuples(st.just("first"), st.sampled_from(NAMES), st.none()),
        st.tuples(st.just("after"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    ),
    min_size=1,
    max_size=8,
)

_counter = iter(range(10**9))
_SETTINGS = settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _run_op(t: ig.Table, op: tuple[Any, ...]) -> None:
    kind, name, arg = op
    u = t.update_schema()
    {
        "add": lambda: u.add_column(name, arg),
        "rename": lambda: u.rename_column(name, arg),
        "widen": lambda: u.update_column(name, field_type=arg),
        "doc": lambda: u.update_column(name, doc=arg),
        "delete": lambda: u.delete_column(name),
        "first": lambda: u.move_first(name),
        "after": lambda: u.move_after(name, arg),
    }[kind]()
    u.commit()


@_SETTINGS
@given(ops=ops_strategy)
def test_generated_schema_changes_match_the_model(ops: list[tuple[Any, ...]]) -> None:
    name = f"local.db.g{next(_counter)}"
    data = pa.table({"p": pa.array([1], pa.int32()), "a": pa.array([1.5], pa.float32()), "b": ["x"]})
    ig.writeTo(data, name).partitionedBy("p").create()
    t = ig.table(name)
    model = Model([(1, "p", "int"), (2, "a", "float"), (3, "b", "string")], 3)
    for op in ops:
        before = t.metadata()["metadata_location"]
        ok = model.apply(op)
        if ok:
            _run_op(t, op)
        else:
            with pytest.raises(ig.InvalidArgumentError) as err:
                _run_op(t, op)
            assert op[1] in str(err.value) or str(op[2]) in str(err.value), err.value
            assert t.metadata()["metadata_location"] == before
        model.check(t.schema())
    # Old rows read under the final schema: the row's values, nulls for added columns.
    got = t.to_arrow()
    assert got.num_rows == 1 and got.column_names == model.names()


# ---------------------------------------------------------------- a schema change racing other commits


def _slow_change(library: str, uri: str, warehouse: str, column: str, signal: str, release: str, out: Any) -> None:
    """Adds ``column`` with a pause before its commit (the test-hooks library); reports what happened."""
    use_library(library)
    ig.configure(
        catalogs={"local": {"type": "sql", "uri": uri, "warehouse": warehouse}},
        conf={"test.hooks": "true", "test.commit-delay-signal": signal, "test.commit-delay-release": release},
    )
    try:
        r = ig.table(T).update_schema().add_column(column, "string").commit()
        out.put(json.dumps({"ok": True, "schema_id": r["schema"]["schema-id"]}))
    except ig.IcebergGoError as e:
        out.put(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))


def race(cat: CatalogDir, column: str, concurrent: Callable[[], Any]) -> dict[str, Any]:
    """The schema change plans in another process and waits; ``concurrent`` commits here; then it commits."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    signal, release = cat.root / "waiting", cat.root / "release"
    p = ctx.Process(
        target=_slow_change, args=(hooks_library(), cat.uri, cat.warehouse, column, str(signal), str(release), out)
    )
    p.start()
    deadline = time.monotonic() + HANG_S
    while not signal.exists():  # the child has planned its change on the old metadata
        assert p.is_alive() or signal.exists(), "the schema change ended before its commit pause"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    try:
        concurrent()
    finally:
        release.touch()
    res = dict(json.loads(out.get(timeout=HANG_S)))
    p.join(timeout=HANG_S)
    assert p.exitcode == 0
    return res


def _base() -> None:
    ig.writeTo(pa.table({"id": pa.array(range(10), pa.int64())}), T).create()


def test_schema_change_racing_an_append_both_commit(catalog_dir: CatalogDir) -> None:
    _base()
    appended = pa.table({"id": pa.array(range(10, 20), pa.int64())})
    res = race(catalog_dir, "c", lambda: ig.writeTo(appended, T).append())
    assert res["ok"], res
    t = ig.table(T)
    assert [f["name"] for f in t.schema()["fields"]] == ["id", "c"]
    got = t.to_arrow()
    assert sorted(got["id"].to_pylist()) == list(range(20)), "the append was lost"
    assert got["c"].null_count == 20
    assert len(t.snapshots()) == 2


def test_schema_changes_racing_each_other(catalog_dir: CatalogDir) -> None:
    """Another column: retried on the new schema, both land. The same column: the loser fails naming it."""
    _base()
    res = race(catalog_dir, "a", lambda: ig.table(T).update_schema().add_column("b", "int").commit())
    assert res["ok"], res
    assert [f["name"] for f in ig.table(T).schema()["fields"]] == ["id", "b", "a"]
    before = ig.table(T).metadata()["metadata_location"]
    res = race(catalog_dir, "x", lambda: ig.table(T).update_schema().add_column("x", "string", doc="mine").commit())
    assert not res["ok"] and res["type"] == "InvalidArgumentError" and "x" in res["message"], res
    x = [f for f in ig.table(T).schema()["fields"] if f["name"] == "x"]
    assert len(x) == 1 and x[0]["doc"] == "mine"
    assert ig.table(T).metadata()["metadata_location"] != before
