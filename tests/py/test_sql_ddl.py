"""Spark's DDL as text: ``ig.sql`` (core/sqlstmt) against Spark 4.1 running the same statements.

- The differential sequence of test_evolution (CREATE TABLE, then every ALTER TABLE form with writes
  between them; format v2) run as text through ``ig.sql`` on our table and through ``spark.sql`` on its twin:
  the same schema (ids, names, types, docs, nullability, identifier fields), specs, sort order and
  properties after every statement, and the same rows read by Spark, PyIceberg, DuckDB and us.
- Branch and tag DDL with retention, REPLACE / CREATE OR REPLACE / IF NOT EXISTS / DROP IF EXISTS:
  the same refs and retention as Spark's.
- Generated CREATE TABLE statements (hypothesis): quoted unicode names with spaces, ``/``, ``%``,
  backticks; every Spark type, nested; every partition transform: the schema our table gets is
  the one a model of Java's id assignment gives, and PyIceberg and DuckDB read it.
- RENAME TO, DROP TABLE [PURGE], CREATE NAMESPACE, read back by PyIceberg.
- Bad statements: typed errors with positions; nothing committed.
"""

from __future__ import annotations

import datetime as dt
import getpass
import re
import string
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import PySparkException
from test_evolution import CREATE, STEPS, S, T, check_rows, metadata_json, shape, write_both

import pyiceberg_go as ig

from conftest import duckdb_scan
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)


def ranked_shape(ident: str) -> dict[str, Any]:
    """test_evolution's shape with schema and spec ids replaced by their rank in the metadata.

    A table we create numbers its first schema and spec 1 where Java numbers them 0 (our create
    commits onto iceberg-go's placeholder metadata; see docs/decisions/sql.md): the ids differ by
    that offset, everything they identify must not.
    """
    m = metadata_json(ident)
    schema_rank = {sc["schema-id"]: i for i, sc in enumerate(m["schemas"])}
    spec_rank = {sp["spec-id"]: i for i, sp in enumerate(m["partition-specs"])}
    out = shape(ident)
    out["schema"] = {**out["schema"], "schema-id": schema_rank[out["schema"]["schema-id"]]}
    out["specs"] = [{**sp, "spec-id": spec_rank[sp["spec-id"]]} for sp in out["specs"]]
    out["default-spec-id"] = spec_rank[out["default-spec-id"]]
    return out


def assert_same_ranked_shape(when: str) -> None:
    a, b = ranked_shape(T), ranked_shape(S)
    for key in b:
        assert a[key] == b[key], f"after {when}: {key} differs\n ours:  {a[key]}\n spark: {b[key]}"


# v2 only: test_evolution runs the same sequence through the Python API on v2 and v3, and both
# paths meet in core/evolve; the statements' reading is what this test adds.
@pytest.mark.parametrize("version", ["2"])
def test_sql_ddl_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, version: str) -> None:
    spark.sql(CREATE.format(t=S, v=version))
    r = ig.sql(CREATE.format(t=T, v=version))
    assert (r.statement, r.op, r.result["created"], r.snapshot_id) == ("CREATE TABLE", "create_table", True, None)
    assert_same_ranked_shape("create")
    first = 0
    for i, (ddl, _) in enumerate(STEPS):
        if ddl == "WRITE":
            write_both(spark, first, 20)
            first += 20
            check_rows(spark, pyiceberg_catalog, f"write after step {i}")
            continue
        spark.sql(f"ALTER TABLE {S} {ddl}")
        snapshots = len(ig.table(T).snapshots())
        r = ig.sql(f"ALTER TABLE {T} {ddl}")
        assert r.op == "update_table" and r.statement.startswith("ALTER TABLE"), r
        assert len(ig.table(T).snapshots()) == snapshots, f"{ddl}: a metadata change made a snapshot"
        assert_same_ranked_shape(ddl)


def _refs(ident: str) -> dict[str, dict[str, Any]]:
    """Each ref with its retention; its snapshot as 'first' or 'head' of main's history."""
    m = metadata_json(ident)
    order = [e["snapshot-id"] for e in m["snapshot-log"]]
    names = {order[0]: "first", order[-1]: "head"}
    out = {}
    for name, r in m.get("refs", {}).items():
        out[name] = {k: v for k, v in r.items() if k != "snapshot-id"} | {"at": names.get(r["snapshot-id"], "?")}
    return out


REF_STEPS = [
    "CREATE BRANCH audit",
    "CREATE BRANCH IF NOT EXISTS audit RETAIN 3 DAYS",
    "CREATE BRANCH b2 AS OF VERSION {first} RETAIN 7 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS",
    "CREATE BRANCH b3 WITH SNAPSHOT RETENTION 4 SNAPSHOTS",
    "CREATE BRANCH b4 WITH SNAPSHOT RETENTION 12 HOURS",
    "REPLACE BRANCH b2 AS OF VERSION {head}",
    "CREATE OR REPLACE BRANCH b3 AS OF VERSION {first} RETAIN 90 MINUTES",
    "CREATE OR REPLACE BRANCH b5 AS OF VERSION {first}",
    "CREATE TAG v1 AS OF VERSION {first} RETAIN 365 DAYS",
    "CREATE TAG IF NOT EXISTS v1",
    "REPLACE TAG v1 AS OF VERSION {head}",
    "CREATE OR REPLACE TAG v2",
    "DROP TAG v2",
    "DROP TAG IF EXISTS v2",
    "DROP BRANCH b4",
    "DROP BRANCH IF EXISTS b4",
]


def test_branch_and_tag_ddl_matches_spark(spark: Any, spark_catalog: str) -> None:
    for name in (T, S):
        spark.sql(f"CREATE TABLE {name} (id BIGINT, s STRING) USING iceberg")
        for i in range(3):
            spark.sql(f"INSERT INTO {name} VALUES ({i}, 'x{i}')")
    ids = {}
    for name in (T, S):
        log = metadata_json(name)["snapshot-log"]
        ids[name] = {"first": log[0]["snapshot-id"], "head": log[-1]["snapshot-id"]}
    for step in REF_STEPS:
        spark.sql(f"ALTER TABLE {S} " + step.format(**ids[S]))
        ig.sql(f"ALTER TABLE {T} " + step.format(**ids[T]))
        assert _refs(T) == _refs(S), f"after {step}\n ours:  {_refs(T)}\n spark: {_refs(S)}"
    # Errors where Spark's are: creating an existing ref, replacing or dropping a missing one.
    for step in ("CREATE BRANCH audit", "REPLACE BRANCH nope AS OF VERSION {first}", "DROP TAG nope"):
        with pytest.raises(PySparkException):
            spark.sql(f"ALTER TABLE {S} " + step.format(**ids[S]))
        before = ig.table(T).metadata()["metadata_location"]
        with pytest.raises(ig.InvalidArgumentError):
            ig.sql(f"ALTER TABLE {T} " + step.format(**ids[T]))
        assert ig.table(T).metadata()["metadata_location"] == before


def test_rename_drop_purge_and_namespaces(pyiceberg_catalog: Any) -> None:
    r = ig.sql("CREATE NAMESPACE IF NOT EXISTS local.sales COMMENT 'money' WITH DBPROPERTIES ('owner' = 'ops')")
    assert r.result == {"namespace": "local.sales", "created": True}
    assert pyiceberg_catalog.load_namespace_properties("sales") == {"comment": "money", "owner": "ops"}
    ig.sql("CREATE NAMESPACE local.mine")
    assert pyiceberg_catalog.load_namespace_properties("mine")["owner"] == getpass.getuser()
    assert ig.sql("CREATE DATABASE IF NOT EXISTS local.sales").result["created"] is False
    with pytest.raises(ig.ValidationError, match="already exists"):
        ig.sql("CREATE SCHEMA local.sales")

    ig.sql("CREATE TABLE local.sales.t (id bigint, s string) USING iceberg PARTITIONED BY (bucket(4, id))")
    ig.writeTo(
        pa.table({"id": pa.array(range(50), pa.int64()), "s": [str(i) for i in range(50)]}), "local.sales.t"
    ).append()
    ig.sql("ALTER TABLE local.sales.t RENAME TO local.sales.u")
    assert [t[1] for t in pyiceberg_catalog.list_tables("sales")] == ["u"]
    assert pyiceberg_catalog.load_table("sales.u").scan().to_arrow().num_rows == 50
    ig.sql("CREATE TABLE local.sales.v (a int)")
    with pytest.raises(ig.TableAlreadyExistsError):
        ig.sql("ALTER TABLE local.sales.v RENAME TO local.sales.u")

    # DROP keeps the files (Spark's DROP TABLE on a non-REST catalog); PURGE deletes them all.
    loc = Path(re.sub(r"^file:(//)?", "", ig.table("local.sales.u").metadata()["location"]))
    ig.sql("DROP TABLE local.sales.v")
    files_before = [p for p in loc.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files_before)
    r = ig.sql("DROP TABLE local.sales.u PURGE")
    assert r.result["dropped"] is True and r.result["deleted_files_count"] == len(files_before), r
    assert [p for p in loc.rglob("*") if p.is_file()] == []
    assert pyiceberg_catalog.list_tables("sales") == []
    with pytest.raises(ig.NoSuchTableError):
        ig.sql("DROP TABLE local.sales.u")
    assert ig.sql("DROP TABLE IF EXISTS local.sales.u").result["dropped"] is False


# ---------------------------------------------------------------- generated CREATE TABLE

# Names: unicode, spaces, '/', '%', '-', backticks (doubled inside a quoted name); no '.', which
# would make a name ambiguous with a nested path.
NAME = st.text(
    alphabet=st.sampled_from(list(string.ascii_letters + "_/%- `é日本ß")),
    min_size=1,
    max_size=12,
).filter(lambda s: s.strip() == s)

PRIMS = {
    "boolean": "boolean",
    "tinyint": "int",
    "smallint": "int",
    "int": "int",
    "bigint": "long",
    "float": "float",
    "double": "double",
    "string": "string",
    "varchar(10)": "string",
    "date": "date",
    "timestamp": "timestamptz",
    "timestamp_ntz": "timestamp",
    "binary": "binary",
    "decimal(38, 10)": "decimal(38, 10)",
    "decimal(1, 0)": "decimal(1, 0)",
}


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@st.composite
def spark_type(draw: Any, depth: int = 0) -> tuple[str, Any]:
    """A Spark type's text and the Iceberg JSON type it becomes (nested ids left out)."""
    kinds = ["prim"] if depth >= 2 else ["prim", "prim", "array", "map", "struct"]
    kind = draw(st.sampled_from(kinds))
    if kind == "prim":
        s = draw(st.sampled_from(sorted(PRIMS)))
        return s, PRIMS[s]
    if kind == "array":
        s, t = draw(spark_type(depth + 1))
        return f"array<{s}>", {"type": "list", "element": t}
    if kind == "map":
        k = draw(st.sampled_from(["string", "int", "bigint", "date"]))
        s, t = draw(spark_type(depth + 1))
        return f"map<{k}, {s}>", {"type": "map", "key": PRIMS[k], "value": t}
    names = draw(st.lists(NAME, min_size=1, max_size=3, unique_by=str.lower))
    parts, fields = [], []
    for n in names:
        s, t = draw(spark_type(depth + 1))
        required = draw(st.booleans())
        parts.append(f"{quote(n)}: {s}" + (" NOT NULL" if required else ""))
        fields.append({"name": n, "type": t, "required": required})
    return "struct<" + ", ".join(parts) + ">", {"type": "struct", "fields": fields}


def strip_ids(t: Any) -> Any:
    """An Iceberg JSON type without ids (and lists/maps without their element/value flags)."""
    if isinstance(t, str):
        return t
    if t["type"] == "struct":
        return {
            "type": "struct",
            "fields": [
                {"name": f["name"], "type": strip_ids(f["type"]), "required": f["required"]} for f in t["fields"]
            ],
        }
    if t["type"] == "list":
        return {"type": "list", "element": strip_ids(t["element"])}
    return {"type": "map", "key": strip_ids(t["key"]), "value": strip_ids(t["value"])}


def java_ids(fields: list[dict[str, Any]]) -> list[int]:
    """Field ids in Java's AssignFreshIds order: a struct's fields, then each one's nested types."""
    out: list[int] = []
    nxt = [0]

    def take() -> int:
        nxt[0] += 1
        return nxt[0]

    def typ(t: Any) -> None:
        if isinstance(t, str):
            return
        if t["type"] == "struct":
            struct(t["fields"])
        elif t["type"] == "list":
            out.append(take())
            typ(t["element"])
        else:
            out.append(take())
            out.append(take())
            typ(t["key"])
            typ(t["value"])

    def struct(fs: list[dict[str, Any]]) -> None:
        for _ in fs:
            out.append(take())
        for f in fs:
            typ(f["type"])

    struct(fields)
    return out


def actual_ids(fields: list[dict[str, Any]]) -> list[int]:
    out: list[int] = []

    def typ(t: Any) -> None:
        if isinstance(t, str):
            return
        if t["type"] == "struct":
            struct(t["fields"])
        elif t["type"] == "list":
            out.append(t["element-id"])
            typ(t["element"])
        else:
            out.extend([t["key-id"], t["value-id"]])
            typ(t["key"])
            typ(t["value"])

    def struct(fs: list[dict[str, Any]]) -> None:
        out.extend(f["id"] for f in fs)
        for f in fs:
            typ(f["type"])

    struct(fields)
    return out


TRANSFORMS = {
    "int": ["{c}", "bucket(3, {c})", "truncate(5, {c})"],
    "long": ["{c}", "bucket(16, {c})", "truncate({c}, 10)"],
    "string": ["{c}", "bucket(2, {c})", "truncate(2, {c})"],
    "date": ["{c}", "years({c})", "months({c})", "days({c})"],
    "timestamptz": ["{c}", "years({c})", "months({c})", "days({c})", "hours({c})", "date_hour({c})"],
    "timestamp": ["{c}", "days({c})", "hours({c})"],
    "decimal(38, 10)": ["bucket(4, {c})", "truncate(100, {c})"],
    "boolean": ["{c}"],
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_create_table_gets_javas_schema(data: Any, pyiceberg_catalog: Any) -> None:
    names = data.draw(st.lists(NAME, min_size=1, max_size=6, unique_by=str.lower))
    cols, fields = [], []
    for n in names:
        s, t = data.draw(spark_type())
        required = data.draw(st.booleans())
        doc = data.draw(st.one_of(st.none(), st.text(max_size=20)))
        cols.append(
            f"{quote(n)} {s}"
            + (" NOT NULL" if required else "")
            + (f" COMMENT '{doc.replace(chr(92), chr(92) * 2).replace(chr(39), chr(39) * 2)}'" if doc is not None else "")
        )
        fields.append({"name": n, "type": t, "required": required, "doc": doc})
    part = [
        data.draw(st.sampled_from(TRANSFORMS[f["type"]])).format(c=quote(f["name"]))
        for f in fields
        if isinstance(f["type"], str) and f["type"] in TRANSFORMS and data.draw(st.booleans())
    ]
    stmt = f"CREATE TABLE local.db.gen ({', '.join(cols)}) USING iceberg" + (
        f" PARTITIONED BY ({', '.join(part)})" if part else ""
    )
    ig.sql("DROP TABLE IF EXISTS local.db.gen")
    ig.sql(stmt)
    schema = ig.table("local.db.gen").schema()
    got = schema["fields"]
    assert [f["name"] for f in got] == names, stmt
    assert [strip_ids(f["type"]) for f in got] == [strip_ids(f["type"]) for f in fields], stmt
    assert [f["required"] for f in got] == [f["required"] for f in fields], stmt
    assert [f.get("doc") for f in got] == [f["doc"] or None for f in fields], stmt
    assert actual_ids(got) == java_ids(fields), stmt
    assert len(ig.table("local.db.gen").spec()["fields"]) == len(part), stmt
    # Independent readers open the empty table.
    py = pyiceberg_catalog.load_table("db.gen")
    assert [f.name for f in py.schema().fields] == names
    assert py.scan().to_arrow().num_rows == 0
    assert duckdb_scan(ig.table("local.db.gen").metadata()["metadata_location"]).num_rows == 0


# ---------------------------------------------------------------- bad statements


BAD_SQL = [
    # (statement, error type, text the message names)
    ("ALTER TABLE local.db.t ADD COLUMN x intt", ig.InvalidArgumentError, 'unknown type "intt" at position 37'),
    ("ALTER TABLE local.db.t ADD COLUMN", ig.InvalidArgumentError, "position 34"),
    ("ALTER TABLE local.db.t RENAME COLUMN nope TO x", ig.InvalidArgumentError, "nope"),
    ("ALTER TABLE local.db.t ALTER COLUMN id TYPE int", ig.InvalidArgumentError, "id"),
    ("ALTER TABLE local.db.t ALTER COLUMN s TYPE int", ig.InvalidArgumentError, "s"),
    ("ALTER TABLE local.db.t DROP COLUMN ts", ig.InvalidArgumentError, "partition field"),
    ("ALTER TABLE local.db.t ADD COLUMN r int NOT NULL", ig.InvalidArgumentError, "r"),
    ("ALTER TABLE local.db.t ADD COLUMN s string", ig.InvalidArgumentError, "s"),
    ("ALTER TABLE local.db.t SET IDENTIFIER FIELDS s", ig.InvalidArgumentError, "s"),
    (
        "ALTER TABLE local.db.t DROP PARTITION FIELD bucket(3, id)",
        ig.InvalidArgumentError,
        "Cannot find partition field",
    ),
    ("ALTER TABLE local.db.t ADD PARTITION FIELD days(ts)", ig.InvalidArgumentError, "ts"),
    ("ALTER TABLE local.db.t ADD PARTITION FIELD bucket(id)", ig.InvalidArgumentError, "not a partition transform"),
    ("ALTER TABLE local.db.t WRITE ORDERED BY nope", ig.ValidationError, "nope"),
    ("ALTER TABLE local.db.t WRITE", ig.InvalidArgumentError, "missing distribution and ordering"),
    ("ALTER TABLE local.db.t ADD COLUMN a int, b string, a long", ig.InvalidArgumentError, "a"),
    ("ALTER TABLE local.db.t SET TBLPROPERTIES ('format-version' = 'x')", ig.IcebergGoError, "format-version"),
    ("ALTER TABLE local.db.nope ADD COLUMN x int", ig.NoSuchTableError, "nope"),
    ("CREATE TABLE local.db.t (a int)", ig.TableAlreadyExistsError, "local.db.t"),
    ("CREATE TABLE local.db.n (a int) USING delta", ig.NotSupportedError, "only iceberg"),
    ("CREATE TABLE local.db.n AS SELECT 1", ig.NotSupportedError, "writeTo"),
    ("CREATE TABLE local.db.n (a int, A int)", ig.InvalidArgumentError, "duplicate"),
    ("CREATE TABLE local.db.n (a int) PARTITIONED BY (b)", ig.ValidationError, "b"),
    ("CREATE TABLE local.db.n (a struct<>)", ig.InvalidArgumentError, "position"),
    ("TRUNCATE TABLE local.db.t", ig.NotSupportedError, "statement"),
    ("ALTER TABLE local.db.t ADD COLUMN x int; DROP TABLE local.db.t", ig.InvalidArgumentError, "after the end"),
]


@pytest.mark.parametrize("case", BAD_SQL, ids=[c[0] for c in BAD_SQL])
def test_bad_statements_are_typed_and_commit_nothing(case: tuple[str, type[Exception], str]) -> None:
    stmt, kind, names = case
    ig.sql(
        "CREATE TABLE local.db.t (id bigint NOT NULL, s string, ts timestamp) USING iceberg PARTITIONED BY (days(ts))"
    )
    before = ig.table("local.db.t").metadata()["metadata_location"]
    with pytest.raises(kind) as err:
        ig.sql(stmt)
    assert names in str(err.value), err.value
    assert ig.table("local.db.t").metadata()["metadata_location"] == before
    with pytest.raises(ig.NoSuchTableError):
        ig.table("local.db.n").schema()


def test_sql_takes_only_text() -> None:
    with pytest.raises(TypeError):
        ig.sql(b"CREATE TABLE local.db.t (a int)")  # type: ignore[arg-type]


# ---------------------------------------------------------------- CALL


def test_call_procedures_match_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """The same CALL statements on twin histories, through Spark and through ig.sql: the same result
    columns (byte counts aside: the twins' files differ in size) and the same rows after."""
    for name in (T, S):
        for i in range(6):
            data = pa.table({"id": pa.array(range(10 * i, 10 * i + 10), pa.int64()), "s": [f"v{j}" for j in range(10)]})
            w = ig.writeTo(data, name)
            w.create() if i == 0 else w.append()
    log = {n: [e["snapshot-id"] for e in metadata_json(n)["snapshot-log"]] for n in (T, S)}
    last = max(metadata_json(n)["last-updated-ms"] for n in (T, S)) + 1
    ts = dt.datetime.fromtimestamp(last / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    steps = [
        # Before the compaction: after it the twins' manifests differ (Spark keeps one manifest per
        # append with deleted entries, ours fewer), so rewrite_manifests counts differ too.
        "rewrite_manifests('{t}')",
        "rewrite_data_files(table => '{t}', options => map('min-input-files', '2'))",
        "expire_snapshots(table => '{t}', older_than => TIMESTAMP '" + ts + "', retain_last => 2)",
        "rewrite_data_files(table => '{t}')",
    ]
    for step in steps:
        theirs = spark.sql(f"CALL {spark_catalog}.system." + step.format(t="db.s")).collect()[0].asDict()
        ours = ig.sql(f"CALL {spark_catalog}.system." + step.format(t="db.t"))
        assert ours.statement.startswith("CALL "), ours
        keys = [k for k in theirs if not k.endswith("bytes_count")]
        assert {k: ours.result[k] for k in keys} == {k: theirs[k] for k in keys}, step
        assert_rows_equal(spark.sql(f"SELECT * FROM {T}").toArrow(), spark.sql(f"SELECT * FROM {S}").toArrow())
    # rollback_to_snapshot by position in the (now expired) history: the retained one.
    for name in (T, S):
        log[name] = [e["snapshot-id"] for e in metadata_json(name)["snapshot-log"]]
    theirs = spark.sql(f"CALL {spark_catalog}.system.rollback_to_snapshot('db.s', {log[S][-2]})").collect()[0].asDict()
    ours = ig.sql(f"CALL {spark_catalog}.system.rollback_to_snapshot('db.t', {log[T][-2]})")
    assert (ours.result["previous_snapshot_id"], ours.result["current_snapshot_id"]) == (log[T][-1], log[T][-2])
    assert (theirs["previous_snapshot_id"], theirs["current_snapshot_id"]) == (log[S][-1], log[S][-2])
    assert_rows_equal(ig.table(T).to_arrow(), spark.sql(f"SELECT * FROM {S}").toArrow())


def assert_rows_equal(a: pa.Table, b: pa.Table) -> None:
    assert a.num_rows == b.num_rows
    assert a.sort_by("id").to_pylist() == b.sort_by("id").to_pylist()


# ---------------------------------------------------------------- SELECT of one table


def test_select_reads_as_spark_reads_the_same_table(spark: Any, spark_catalog: str) -> None:
    """The same SELECT text through Spark and through ig.sql on one table: the same rows, for every
    time-travel form, projections, filters and metadata tables."""
    times = []
    for i in range(3):
        data = pa.table(
            {
                "id": pa.array(range(10 * i, 10 * i + 10), pa.int64()),
                "s": [f"v{j}" for j in range(10)],
                "p": [{"x": i}] * 10,
            }
        )
        w = ig.writeTo(data, T)
        w.create() if i == 0 else w.append()
        times.append(metadata_json(T)["last-updated-ms"])
    ig.sql(f"ALTER TABLE {T} DROP COLUMN s")
    log = [e["snapshot-id"] for e in metadata_json(T)["snapshot-log"]]
    ig.sql(f"ALTER TABLE {T} CREATE TAG first AS OF VERSION {log[0]}")
    iso = [dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f") for ms in times]
    statements = [
        f"SELECT * FROM {T}",
        f"SELECT id, p FROM {T} WHERE id % 3 = 1",
        f"SELECT * FROM {T} VERSION AS OF {log[1]}",
        f"SELECT id FROM {T} FOR SYSTEM_VERSION AS OF {log[0]} WHERE id > 4",
        f"SELECT * FROM {T} VERSION AS OF 'first'",
        f"SELECT * FROM {T} TIMESTAMP AS OF '{iso[1]}'",
        f"SELECT id FROM {T} FOR SYSTEM_TIME AS OF TIMESTAMP '{iso[2]}'",
        f"SELECT * FROM {T}.tag_first",
    ]
    for stmt in statements:
        ours = ig.sql(stmt)
        assert ours.statement == "SELECT" and ours.op == "scan" and ours.read is not None, ours
        theirs = spark.sql(stmt).toArrow()
        got = ours.to_arrow()
        assert got.column_names[: len(theirs.column_names)] == theirs.column_names or stmt.startswith(
            "SELECT id, p.x"
        ), stmt
        key = got.column_names[0]
        assert sorted(got.column(0).to_pylist()) == sorted(theirs.column(0).to_pylist()), stmt
        assert got.num_rows == theirs.num_rows, stmt
        assert got.sort_by(key).to_pylist() == theirs.sort_by(key).rename_columns(got.column_names).to_pylist(), stmt
    for meta in ("snapshots", "history", "refs", "files", "manifests"):
        ours = ig.sql(f"SELECT * FROM {T}.{meta}")
        assert ours.op == "inspect", ours
        assert ours.to_arrow().num_rows == spark.sql(f"SELECT * FROM {T}.{meta}").count(), meta
    with pytest.raises(ig.NotSupportedError):
        ig.sql(f"SELECT id FROM {T}.files")
    with pytest.raises(ig.NotSupportedError, match="nested field"):
        ig.sql(f"SELECT p.x FROM {T}")
    with pytest.raises(ig.NotSupportedError, match="expressions"):
        ig.sql(f"SELECT id + 1 FROM {T}")
    with pytest.raises(ig.NotSupportedError, match="GROUP"):
        ig.sql(f"SELECT id FROM {T} GROUP BY id")
    with pytest.raises(ig.InvalidArgumentError, match="Cannot find a snapshot older than"):
        ig.sql(f"SELECT * FROM {T} TIMESTAMP AS OF '2001-01-01 00:00:00'").to_arrow()
    with pytest.raises(TypeError):
        ig.sql(f"ALTER TABLE {T} SET TBLPROPERTIES ('a' = 'b')").to_arrow()


# ---------------------------------------------------------------- format versions


def test_v1_create_and_format_upgrades_match_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """CREATE a v1 table, evolve its spec (v1 keeps removed fields as void), upgrade it to v2 and v3
    with SET TBLPROPERTIES ('format-version' = ...), as Spark does on its twin; rows written between
    the steps read the same. A downgrade is refused and commits nothing."""
    create = "CREATE TABLE {t} (id BIGINT NOT NULL, category STRING, ts TIMESTAMP) USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version' = '1')"
    spark.sql(create.format(t=S))
    ig.sql(create.format(t=T))
    assert_same_ranked_shape("create v1")
    steps = [
        "ADD PARTITION FIELD bucket(4, id)",
        "DROP PARTITION FIELD days(ts)",
        "WRITE",
        "SET TBLPROPERTIES ('format-version' = '2')",
        "ADD COLUMN n INT",
        "WRITE",
        "SET TBLPROPERTIES ('format-version' = '3', 'k' = 'v')",
        "WRITE",
    ]
    first = 0
    for step in steps:
        if step == "WRITE":
            write_both(spark, first, 15)
            first += 15
            check_rows(spark, pyiceberg_catalog, f"write at {first}")
            continue
        spark.sql(f"ALTER TABLE {S} {step}")
        ig.sql(f"ALTER TABLE {T} {step}")
        assert_same_ranked_shape(step)
    before = ig.table(T).metadata()["metadata_location"]
    with pytest.raises(ig.InvalidArgumentError, match="Cannot downgrade v3 table to v2"):
        ig.sql(f"ALTER TABLE {T} SET TBLPROPERTIES ('format-version' = '2')")
    assert ig.table(T).metadata()["metadata_location"] == before


def test_use_makes_short_names_resolve_for_the_rest_of_the_session(catalog_dir: Any) -> None:
    with ig.Session(catalogs={"local": catalog_dir.properties}) as s:
        s.sql("CREATE NAMESPACE local.sales")
        with pytest.raises(ig.InvalidArgumentError, match="needs a namespace"):
            s.sql("CREATE TABLE orders (id bigint) USING iceberg")
        r = s.sql("USE sales")
        assert (r.op, r.result) == ("use", {"catalog": "local", "namespace": "sales"})
        s.sql("CREATE TABLE orders (id bigint) USING iceberg")
        s.sql("INSERT INTO orders VALUES (1), (2)")
        s.writeTo(pa.table({"id": pa.array([3], pa.int64())}), "orders").append()
        assert sorted(s.table("local.sales.orders").to_arrow()["id"].to_pylist()) == [1, 2, 3]
        with pytest.raises(ig.NoSuchNamespaceError):
            s.sql("USE nowhere")
        assert sorted(s.table("orders").to_arrow()["id"].to_pylist()) == [1, 2, 3]
    # Another session starts without a current namespace.
    with ig.Session(catalogs={"local": catalog_dir.properties}) as s, pytest.raises(ig.InvalidArgumentError):
        s.table("orders").to_arrow()
