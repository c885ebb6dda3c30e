"""Real catalogs and real object storage: the SQLite and REST catalogs over local and S3 warehouses.

The REST catalog is Apache Iceberg's own RESTCatalogServer and S3 is versitygw, both
started on 127.0.0.1 by the fixtures in servers.py. Every result is read back by
PyIceberg (and by DuckDB where it can reach the files) and compared with a reference
computed here with pyarrow.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import secrets
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import pyiceberg_go as ig

from conftest import HANG_S, assert_same_rows, duckdb_scan, hooks_library, use_library
from servers import (  # noqa: F401
    RecordingProxy,
    RestServer,
    S3FaultProxy,
    S3Server,
    free_port,
    own_rest_server,
    rest_server,
    s3_server,
)
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)

CAT = "cat"
MATRIX = ["sql-local", "sql-s3", "rest-local", "rest-s3"]


def rows(ids: range, seed: int = 0) -> pa.Table:
    """Rows with a partition column p ('a'..'d'), a value x and a label."""
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "x": pa.array([(i * 7 + seed) % 11 for i in ids], pa.int64()),
            "p": pa.array(["abcd"[i % 4] for i in ids], pa.string()),
            "label": pa.array([f"r{i}-s{seed}" for i in ids], pa.string()),
        }
    )


@pytest.fixture
def unique() -> str:
    """A namespace name no other test uses (the REST server is shared by the session)."""
    return "ns_" + uuid.uuid4().hex[:10]


def catalog_props(kind: str, tmp_path: Path, s3: S3Server, rest: RestServer | None, unique: str) -> dict[str, str]:
    cat, store = kind.split("-")
    props: dict[str, str] = {}
    if store == "s3":
        props.update(s3.props(), warehouse=f"s3://{s3.bucket}/{unique}/wh")
    else:
        (tmp_path / "wh").mkdir(exist_ok=True)
        props["warehouse"] = str(tmp_path / "wh")
    if cat == "sql":
        props.update(type="sql", uri=f"sqlite:///{tmp_path / 'catalog.db'}")
    else:
        assert rest is not None
        props.update(type="rest", uri=rest.uri)
    return props


def pyiceberg_catalog(props: dict[str, str]) -> Any:
    """PyIceberg 0.12 on the same catalog with the same properties."""
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.catalog.sql import SqlCatalog

    rest = {k: v for k, v in props.items() if k != "type"}
    if props["type"] == "rest":
        return RestCatalog(CAT, **rest)
    return SqlCatalog(CAT, **rest)


def read_back(pcat: Any, ident: str, local: bool) -> list[pa.Table]:
    """The table as PyIceberg reads it, and as DuckDB reads it when the files are local."""
    t = pcat.load_table(ident)
    out = [t.scan().to_arrow()]
    if local:
        out.append(duckdb_scan(t.metadata_location))
    return out


def check(pcat: Any, ident: str, local: bool, expected: pa.Table) -> None:
    for got in read_back(pcat, ident, local):
        assert_same_rows(got.select(expected.column_names), expected)


@pytest.fixture
def rest_for(request: pytest.FixtureRequest) -> Any:
    """The shared REST server, started only for the REST cases."""

    def get(kind: str) -> RestServer | None:
        return request.getfixturevalue("rest_server") if kind.startswith("rest") else None

    return get


@pytest.mark.parametrize("kind", MATRIX)
def test_write_operations_round_trip(kind: str, tmp_path: Path, s3_server: S3Server, rest_for: Any, unique: str) -> None:
    props = catalog_props(kind, tmp_path, s3_server, rest_for(kind), unique)
    ig.configure(catalogs={CAT: props})
    pcat = pyiceberg_catalog(props)
    local = kind.endswith("local")
    name, ident = f"{CAT}.{unique}.events", f"{unique}.events"

    # create (partitioned), atomically with its data
    ref = rows(range(40))
    res = ig.writeTo(ref, name).partitionedBy("p").create()
    assert res.snapshot_id is not None
    t = pcat.load_table(ident)
    assert len(t.metadata.snapshots) == 1, "CTAS must publish the table together with its data"
    assert [f.name for f in t.spec().fields] == ["p"]
    check(pcat, ident, local, ref)

    # append
    more = rows(range(40, 60), seed=1)
    ig.writeTo(more, name).append()
    ref = pa.concat_tables([ref, more])
    check(pcat, ident, local, ref)

    # overwritePartitions: replaces partitions 'a' and 'b' only
    new_ab = rows(range(100, 120), seed=2).filter(pc.is_in(pc.field("p"), pa.array(["a", "b"])))
    ig.writeTo(new_ab, name).overwritePartitions()
    ref = pa.concat_tables([ref.filter(~pc.is_in(pc.field("p"), pa.array(["a", "b"]))), new_ab])
    check(pcat, ident, local, ref)

    # delete
    ig.table(name).delete("x > 5")
    ref = ref.filter(pc.field("x") <= 5)
    check(pcat, ident, local, ref)

    # merge (upsert on id): half of the source matches existing rows
    existing = ref.column("id").to_pylist()
    src = rows(range(10), seed=3)
    src = pa.concat_tables([src, rows(range(1000, 1005), seed=3)])
    src = src.filter(pc.is_in(pc.field("id"), pa.array(existing[:5] + list(range(1000, 1005)), pa.int64())))
    assert src.num_rows > 0
    ig.table(name).upsert(src, ["id"])
    ref = pa.concat_tables([ref.filter(~pc.is_in(pc.field("id"), src.column("id"))), src])
    check(pcat, ident, local, ref)

    # update (copy-on-write) and overwrite(filter) with new rows
    ig.table(name).update({"label": "'upd'"}, where="x = 3")
    ref = ref.set_column(ref.schema.get_field_index("label"), "label",
                         pc.if_else(pc.equal(ref.column("x"), 3), pa.scalar("upd"), ref.column("label")))
    check(pcat, ident, local, ref)
    repl = rows(range(2000, 2004), seed=4).filter(pc.field("p") == "c")
    ig.writeTo(repl, name).overwrite("p = 'c'")
    ref = pa.concat_tables([ref.filter(pc.field("p") != "c"), repl])
    check(pcat, ident, local, ref)

    # a branch: written through db.t.branch_x, main untouched
    ig.table(name).create_branch("audit")
    extra = rows(range(3000, 3003), seed=5)
    ig.writeTo(extra, f"{name}.branch_audit").append()
    check(pcat, ident, local, ref)
    t = pcat.load_table(ident)
    on_branch = t.scan(snapshot_id=t.metadata.snapshot_by_name("audit").snapshot_id).to_arrow()
    assert_same_rows(on_branch.select(ref.column_names), pa.concat_tables([ref, extra]))

    # every operation is one snapshot, each visible to PyIceberg
    assert len(pcat.load_table(ident).metadata.snapshots) == 8
    if kind.endswith("s3"):
        assert any(k.endswith(".parquet") for k in s3_server.files(f"{unique}/wh"))


@pytest.mark.parametrize("partitioned", [True, False])
def test_rest_ctas_has_our_ids_and_one_snapshot(partitioned: bool, tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """A staged create publishes schema, spec and snapshot together, and the ids match the manifests."""
    props = catalog_props("rest-local", tmp_path, s3_server, rest_server, unique)
    ig.configure(catalogs={CAT: props})
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": pa.array([{"a": 1, "b": "x"}] * 3), "k": ["u", "v", "u"]})
    w = ig.writeTo(data, f"{CAT}.{unique}.t")
    (w.partitionedBy("k") if partitioned else w).create()
    t = pyiceberg_catalog(props).load_table(f"{unique}.t")
    assert len(t.metadata.snapshots) == 1
    sn = t.metadata.snapshots[0]
    assert sn.schema_id == t.metadata.current_schema_id
    specs = {m.partition_spec_id for m in sn.manifests(t.io)}
    assert specs == {t.metadata.default_spec_id}
    check(pyiceberg_catalog(props), f"{unique}.t", True, data)
    with pytest.raises(ig.TableAlreadyExistsError):
        ig.writeTo(data, f"{CAT}.{unique}.t").create()


def test_rest_dropping_the_highest_column_keeps_the_last_column_id(tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """Each add-schema update we send carries last-column-id (Nessie needs it). Dropping the
    highest column commits a schema whose highest id (2) is below the table's last column id (3):
    the table keeps 3, and reads back."""
    props = catalog_props("rest-local", tmp_path, s3_server, rest_server, unique)
    ig.configure(catalogs={CAT: props})
    name = f"{CAT}.{unique}.d"
    ig.writeTo(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}), name).create()
    ig.table(name).update_schema().add_column("extra", "string").commit()
    ig.table(name).update_schema().delete_column("extra").commit()
    t = pyiceberg_catalog(props).load_table(f"{unique}.d")
    assert [f.name for f in t.schema().fields] == ["id", "v"] and t.metadata.last_column_id == 3


def test_oauth2_client_credentials_and_custom_header(tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    client_id, client_secret = "pig-client", "cs-" + secrets.token_hex(12)
    proxy = RecordingProxy(rest_server.uri, client_id=client_id, client_secret=client_secret)
    proxy.start()
    try:
        props = catalog_props("rest-local", tmp_path, s3_server, rest_server, unique)
        props.update(uri=proxy.uri, credential=f"{client_id}:{client_secret}", scope="catalog", **{"header.X-Trace-Id": "trace-42"})
        ig.configure(catalogs={CAT: props})
        data = rows(range(10))
        ig.writeTo(data, f"{CAT}.{unique}.t").create()
        ig.writeTo(data, f"{CAT}.{unique}.t").append()

        tokens = [r for r in proxy.requests if r[1].endswith("/oauth/tokens")]
        assert tokens, "the client never asked the token endpoint"
        form = dict(x.split("=", 1) for x in tokens[0][3].decode().split("&"))
        assert form["grant_type"] == "client_credentials" and form["client_id"] == client_id
        others = [r for r in proxy.requests if not r[1].endswith("/oauth/tokens") and not r[1].endswith("/config")]
        assert any(r[0] == "POST" and r[1].endswith(f"/{unique}/tables/t") for r in others)
        for method, path, headers, _ in others:
            assert headers.get("authorization") == f"Bearer {proxy.token}", (method, path)
            assert headers.get("x-trace-id") == "trace-42", (method, path)

        # a bearer token works without the token endpoint
        before = len(proxy.requests)
        props_tok = {k: v for k, v in props.items() if k != "credential"} | {"token": proxy.token}
        ig.configure(catalogs={CAT: props_tok})
        ig.writeTo(data, f"{CAT}.{unique}.t").append()
        assert not any(r[1].endswith("/oauth/tokens") for r in proxy.requests[before:])
        ref = pa.concat_tables([data] * 3)
        check(pyiceberg_catalog({"type": "rest", "uri": rest_server.uri}), f"{unique}.t", True, ref)

        # wrong secret: a typed error without the secret, nothing committed
        wrong = "wrong-" + secrets.token_hex(12)
        ig.configure(catalogs={CAT: props | {"credential": f"{client_id}:{wrong}"}})
        with pytest.raises(ig.IcebergGoError) as e:
            ig.writeTo(data, f"{CAT}.{unique}.t").append()
        assert isinstance(e.value, (ig.InvalidArgumentError, ig.IcebergIOError)), type(e.value)
        assert wrong not in str(e.value) and client_secret not in str(e.value)
        assert len(pyiceberg_catalog({"type": "rest", "uri": rest_server.uri}).load_table(f"{unique}.t").metadata.snapshots) == 3
    finally:
        proxy.stop()


def data_files(folder: Path) -> set[str]:
    return {str(p) for p in folder.rglob("*.parquet")} if folder.exists() else set()


def test_rest_server_stopped_mid_write(tmp_path: Path, s3_server: S3Server, own_rest_server: RestServer, unique: str) -> None:
    props = catalog_props("rest-local", tmp_path, s3_server, own_rest_server, unique)
    ig.configure(catalogs={CAT: props})
    name = f"{CAT}.{unique}.t"
    ig.writeTo(rows(range(20)), name).partitionedBy("p").create()
    before = pyiceberg_catalog(props).load_table(f"{unique}.t")
    snaps_before = [s.snapshot_id for s in before.metadata.snapshots]
    files_before = data_files(tmp_path / "wh")
    assert files_before

    schema = rows(range(1)).schema

    def batches() -> Iterator[pa.RecordBatch]:
        yield from rows(range(100, 200)).to_batches(max_chunksize=50)
        own_rest_server.stop()  # the data is written; the commit finds no server
        yield from rows(range(200, 300)).to_batches(max_chunksize=50)

    with pytest.raises((ig.IcebergIOError, ig.CommitStateUnknownError)) as e:
        ig.writeTo(pa.RecordBatchReader.from_batches(schema, batches()), name).append()
    assert "127.0.0.1" in str(e.value) or "connect" in str(e.value).lower()

    own_rest_server.start()
    after = pyiceberg_catalog(props).load_table(f"{unique}.t")
    assert [s.snapshot_id for s in after.metadata.snapshots] == snaps_before
    if isinstance(e.value, ig.IcebergIOError):
        # the commit surely did not happen: the files written for it are gone
        assert data_files(tmp_path / "wh") == files_before
    check(pyiceberg_catalog(props), f"{unique}.t", True, rows(range(20)))


@pytest.mark.parametrize("kind", ["sql-s3", "rest-s3"])
def test_wrong_s3_credentials(kind: str, tmp_path: Path, s3_server: S3Server, rest_for: Any, unique: str) -> None:
    props = catalog_props(kind, tmp_path, s3_server, rest_for(kind), unique)
    bad_secret = "bad-" + secrets.token_urlsafe(18)
    ig.configure(catalogs={CAT: props | {"s3.secret-access-key": bad_secret}})
    with pytest.raises(ig.IcebergIOError) as e:
        ig.writeTo(rows(range(30)), f"{CAT}.{unique}.t").partitionedBy("p").create()
    assert bad_secret not in str(e.value) and s3_server.secret_key not in str(e.value)
    assert not pyiceberg_catalog(props).table_exists(f"{unique}.t")
    assert s3_server.files(unique) == []

    # with an existing table: the append fails, no snapshot, no orphan data files
    ig.configure(catalogs={CAT: props})
    ig.writeTo(rows(range(30)), f"{CAT}.{unique}.t").partitionedBy("p").create()
    objects = s3_server.files(unique)
    ig.configure(catalogs={CAT: props | {"s3.secret-access-key": bad_secret}})
    with pytest.raises(ig.IcebergIOError):
        ig.writeTo(rows(range(30, 60)), f"{CAT}.{unique}.t").append()
    # a new PyIceberg catalog: one that saw the table missing may keep a stale SQLite read snapshot
    assert len(pyiceberg_catalog(props).load_table(f"{unique}.t").metadata.snapshots) == 1
    assert s3_server.files(unique) == objects


def test_secrets_never_leak(tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str, capfd: pytest.CaptureFixture[str]) -> None:
    """Errors, snapshot summaries, table properties and the library's stderr hold no secret."""
    client_id, client_secret = "leak-client", "cs-" + secrets.token_hex(12)
    proxy = RecordingProxy(rest_server.uri, client_id=client_id, client_secret=client_secret)
    proxy.start()
    messages: list[str] = []
    try:
        props = catalog_props("rest-s3", tmp_path, s3_server, rest_server, unique)
        props.update(uri=proxy.uri, credential=f"{client_id}:{client_secret}")
        sql_props = catalog_props("sql-s3", tmp_path, s3_server, None, unique + "_sql")
        ig.configure(catalogs={CAT: props, "sqlcat": sql_props}, conf={})
        name = f"{CAT}.{unique}.t"
        ig.writeTo(rows(range(40)), name).partitionedBy("p").create()
        ig.writeTo(rows(range(40, 50)), name).append()
        ig.table(name).delete("x > 8")
        ig.writeTo(rows(range(10)), f"sqlcat.{unique}.t").create()
        summaries = [json.dumps(s) for s in ig.table(name).snapshots() + ig.table(f"sqlcat.{unique}.t").snapshots()]
        t = pyiceberg_catalog({"type": "rest", "uri": rest_server.uri, **s3_server.props()}).load_table(f"{unique}.t")
        table_props = json.dumps(t.metadata.properties) + json.dumps([s.summary.model_dump() for s in t.metadata.snapshots])

        bad_token = "badtok-" + secrets.token_hex(10)
        bad_s3 = "bads3-" + secrets.token_hex(10)
        failing = [
            ({CAT: props | {"credential": f"{client_id}:{bad_token}"}}, name),
            ({CAT: {k: v for k, v in props.items() if k != "credential"} | {"token": bad_token}}, name),
            ({CAT: props | {"s3.secret-access-key": bad_s3}}, name),
            ({"sqlcat": sql_props | {"s3.secret-access-key": bad_s3}}, f"sqlcat.{unique}.t"),
            ({CAT: props | {"uri": "http://127.0.0.1:1", "token": bad_token}}, name),
        ]
        for cats, target in failing:
            ig.configure(catalogs=cats)
            with pytest.raises(ig.IcebergGoError) as e:
                ig.writeTo(rows(range(5)), target).append()
            messages.append(f"{type(e.value).__name__}: {e.value}")
    finally:
        proxy.stop()
    out, err = capfd.readouterr()
    everything = "\n".join(messages + summaries + [table_props, out, err])
    for secret in [client_secret, bad_token, bad_s3, s3_server.secret_key, s3_server.access_key, proxy.token]:
        assert secret not in everything, f"a secret leaked into:\n{everything[:3000]}"
    assert len(messages) == 5 and all(m for m in messages)


def test_bearer_token_with_s3_warehouse(tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """A REST token is for the catalog only: S3 reads and writes still sign with the s3.* keys."""
    proxy = RecordingProxy(rest_server.uri, client_id="unused", client_secret="unused")
    proxy.start()
    try:
        props = catalog_props("rest-s3", tmp_path, s3_server, rest_server, unique) | {"uri": proxy.uri, "token": proxy.token}
        ig.configure(catalogs={CAT: props})
        name = f"{CAT}.{unique}.t"
        ig.writeTo(rows(range(30)), name).partitionedBy("p").create()
        ig.table(name).delete("x > 5")
        ig.writeTo(rows(range(30, 40)), name).append()
        assert not any(r[1].endswith("/oauth/tokens") for r in proxy.requests)
    finally:
        proxy.stop()
    ref = pa.concat_tables([rows(range(30)).filter(pc.field("x") <= 5), rows(range(30, 40))])
    check(pyiceberg_catalog({"type": "rest", "uri": rest_server.uri, **s3_server.props()}), f"{unique}.t", False, ref)


def snapshot_count(props: dict[str, str], ident: str) -> int:
    return len(pyiceberg_catalog(props).load_table(ident).metadata.snapshots)


FAULTS = {
    # every object PUT answers 500: the SDK's retries all fail
    "every-put-500": {"fail_status": 500, "fail_code": "InternalError"},
    # the second data file is throttled for good, after others were uploaded
    "second-data-file-slowdown": {"fail_status": 503, "fail_code": "SlowDown", "fail_suffix": ".parquet", "fail_nth": 2},
    # every data file is uploaded, then the first manifest fails
    "first-manifest-500": {"fail_status": 500, "fail_code": "InternalError", "fail_suffix": ".avro", "fail_nth": 1},
}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("kind", ["sql-s3", "rest-s3"])
def test_s3_put_failures(kind: str, fault: str, tmp_path: Path, s3_server: S3Server, rest_for: Any, unique: str) -> None:
    """S3 errors on PUT: a typed error, nothing committed, every uploaded file removed."""
    props = catalog_props(kind, tmp_path, s3_server, rest_for(kind), unique)
    ident, name = f"{unique}.t", f"{CAT}.{unique}.t"
    proxy = S3FaultProxy(s3_server.endpoint, **FAULTS[fault])
    proxy.start()
    try:
        faulty = props | {"s3.endpoint": proxy.uri}
        # CTAS through the faults: no table, no object left
        ig.configure(catalogs={CAT: faulty})
        with pytest.raises(ig.IcebergIOError) as e:
            ig.writeTo(rows(range(40)), name).partitionedBy("p").create()
        assert proxy.failed, "the fault never fired"
        # The client's retries are bounded: counted, not timed (a loaded machine is slow, not
        # a retry storm). Each file is tried a bounded number of times.
        assert len(proxy.puts) <= 3 * len(set(proxy.puts)), proxy.puts
        if fault == "every-put-500":
            # The 4 partition writers finish their files at the same time (docs/decisions.md,
            # "Parallelism: columns on every core, files and row groups finished in the background"), so all 4 uploads may be in flight when the
            # first fails; none is retried under a new name.
            assert len(set(proxy.puts)) <= 4, proxy.puts
        assert proxy.fail_code in str(e.value) or str(proxy.fail_status) in str(e.value), str(e.value)
        assert s3_server.secret_key not in str(e.value) and s3_server.access_key not in str(e.value)
        assert not pyiceberg_catalog(props).table_exists(ident)
        assert s3_server.files(unique) == []

        # an existing table: the append fails, no snapshot, no orphan
        ig.configure(catalogs={CAT: props})
        ig.writeTo(rows(range(40)), name).partitionedBy("p").create()
        objects = s3_server.files(unique)
        proxy.puts.clear()
        proxy.failed.clear()
        proxy._keys.clear()
        proxy._doomed.clear()
        ig.configure(catalogs={CAT: faulty})
        with pytest.raises(ig.IcebergIOError):
            ig.writeTo(rows(range(40, 80), seed=1), name).append()
        assert proxy.failed
        uploaded = {k for k in proxy.puts if k.endswith(".parquet")} - set(proxy.failed)
        if fault != "every-put-500":
            assert uploaded, "no data file was uploaded before the fault: the cleanup is untested"
    finally:
        proxy.stop()
    assert snapshot_count(props, ident) == 1
    assert s3_server.files(unique) == objects, "files uploaded for the failed write were left behind"
    check(pyiceberg_catalog(props), ident, False, rows(range(40)))


#: Longer than any load makes a bounded number of refused connections take; shorter than a
#: retry storm's minutes.
STORM_S = 180


@pytest.mark.parametrize("kind", ["sql-s3", "rest-s3"])
def test_s3_endpoint_down(kind: str, tmp_path: Path, s3_server: S3Server, rest_for: Any, unique: str) -> None:
    """Nothing listens at s3.endpoint: a typed error within seconds, not a retry storm."""
    props = catalog_props(kind, tmp_path, s3_server, rest_for(kind), unique)
    ident, name = f"{unique}.t", f"{CAT}.{unique}.t"
    down = props | {"s3.endpoint": f"http://127.0.0.1:{free_port()}"}
    ig.configure(catalogs={CAT: down})
    # Retries against a refused connection are bounded; the time only bounds a retry storm
    # (minutes), not how fast a loaded machine gets the refusals.
    started = time.monotonic()
    with pytest.raises(ig.IcebergIOError) as e:
        ig.writeTo(rows(range(20)), name).partitionedBy("p").create()
    assert time.monotonic() - started < STORM_S
    assert "127.0.0.1" in str(e.value) and "refused" in str(e.value).lower(), str(e.value)
    assert not pyiceberg_catalog(props).table_exists(ident)

    ig.configure(catalogs={CAT: props})
    ig.writeTo(rows(range(20)), name).partitionedBy("p").create()
    objects = s3_server.files(unique)
    ig.configure(catalogs={CAT: down})
    started = time.monotonic()
    with pytest.raises(ig.IcebergIOError):
        ig.writeTo(rows(range(20, 40)), name).append()
    assert time.monotonic() - started < STORM_S
    assert snapshot_count(props, ident) == 1
    assert s3_server.files(unique) == objects


# --- concurrent commits on the REST catalog -------------------------------------------------------


def _child(props: dict[str, str], conf: dict[str, str], op: str, name: str, arg: Any, out: Any) -> None:
    """One writer in its own process; reports its outcome on ``out``. A conf with test hooks
    (``test.*`` keys) runs on the library built with them."""
    if any(k.startswith("test.") for k in conf):
        use_library(hooks_library())
    ig.configure(catalogs={CAT: props}, conf=conf)
    try:
        if op == "append":  # arg: (id range, seed[, a value of p to leave out])
            data = rows(range(*arg[0]), seed=arg[1])
            if len(arg) > 2:
                data = data.filter(pc.field("p") != arg[2])
            r = ig.writeTo(data, name).append()
        else:
            r = ig.table(name).delete(arg)
        out.put(json.dumps({"ok": True, "snapshot_id": r.snapshot_id}))
    except ig.IcebergGoError as e:
        out.put(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))


def run_children(jobs: list[tuple[dict[str, str], dict[str, str], str, str, Any]], while_running: Any = None) -> list[dict[str, Any]]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(*job, out)) for job in jobs]
    for p in procs:
        p.start()
    if while_running is not None:
        while_running()
    results = [json.loads(out.get(timeout=HANG_S)) for _ in procs]
    for p in procs:
        p.join(timeout=HANG_S)
        assert p.exitcode == 0
    return results


def orphans(pcat: Any, ident: str, folder: Path) -> set[str]:
    """Data files under folder that no snapshot of the table references."""
    t = pcat.load_table(ident)
    live = {str(Path(f.removeprefix("file:"))) for f in t.inspect.all_files().column("file_path").to_pylist()}
    return data_files(folder) - live


@pytest.mark.parametrize("kind", ["rest-local", "rest-s3"])
def test_rest_concurrent_appends_retry_the_409(kind: str, tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """Two processes append at once against one base: the server answers one commit 409, it is retried, both land."""
    props = catalog_props(kind, tmp_path, s3_server, rest_server, unique)
    ident, name = f"{unique}.t", f"{CAT}.{unique}.t"
    ig.configure(catalogs={CAT: props})
    base = rows(range(40))
    ig.writeTo(base, name).partitionedBy("p").create()
    first = pyiceberg_catalog(props).load_table(ident).current_snapshot().snapshot_id
    # The proxy holds each commit until both have arrived: both were planned on the same snapshot.
    proxy = RecordingProxy(rest_server.uri, hold_commits=2)
    # The table's metadata files when the losing commit hears its 409.
    meta_dir = Path(pyiceberg_catalog(props).load_table(ident).metadata_location.removeprefix("file:")).parent
    at_conflict: set[str] = set()

    def seen(method: str, path: str, status: int) -> None:
        if status == 409 and kind.endswith("local"):
            at_conflict.update(f.name for f in meta_dir.glob("*.avro"))

    proxy.on_reply = seen
    proxy.start()
    try:
        via = props | {"uri": proxy.uri}
        results = run_children([(via, {}, "append", name, ((100, 130), 1)), (via, {}, "append", name, ((200, 230), 2))])
    finally:
        proxy.stop()
    assert all(r["ok"] for r in results), results
    assert sorted(proxy.commit_statuses()) == [200, 200, 409], proxy.commit_statuses()
    pcat = pyiceberg_catalog(props)
    t = pcat.load_table(ident)
    snaps = t.metadata.snapshots
    assert len(snaps) == 3, "exactly one snapshot per append"
    assert {s.snapshot_id for s in snaps[1:]} == {r["snapshot_id"] for r in results}
    # serial: the retried append is on top of the other one
    assert snaps[1].parent_snapshot_id == first and snaps[2].parent_snapshot_id == snaps[1].snapshot_id
    check(pcat, ident, kind.endswith("local"), pa.concat_tables([base, rows(range(100, 130), seed=1), rows(range(200, 230), seed=2)]))
    if kind.endswith("local"):
        assert orphans(pcat, ident, tmp_path / "wh") == set()
        # The retry moved its snapshot onto the new head with a new manifest list only: the
        # manifest of its files is the one written before the conflict, and nothing is left over.
        retried = snaps[2]
        own = {Path(m.manifest_path).name for m in retried.manifests(t.io) if m.added_snapshot_id == retried.snapshot_id}
        assert own and own <= at_conflict, (own, at_conflict)
        assert Path(retried.manifest_list).name not in at_conflict
        live = {Path(s.manifest_list).name for s in snaps} | {Path(m.manifest_path).name for s in snaps for m in s.manifests(t.io)}
        assert {f.name for f in meta_dir.glob("*.avro")} == live


@pytest.mark.parametrize("lie", [409, 500, 503], ids=["409", "500", "503"])
@pytest.mark.parametrize("op", ["append", "delete"])
def test_rest_commit_that_landed_but_heard_failure(
    lie: int, op: str, tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str
) -> None:
    """The server applies the commit but the client hears a failure (a lost answer, or a server
    whose own retry reports a conflict for a commit it applied). The client must see that its
    snapshot is in the table: the write succeeds with that snapshot, nothing is applied twice,
    and no file of the committed snapshot is removed as if it had failed."""
    props = catalog_props("rest-local", tmp_path, s3_server, rest_server, unique)
    ident, name = f"{unique}.t", f"{CAT}.{unique}.t"
    ig.configure(catalogs={CAT: props})
    base = rows(range(40))
    ig.writeTo(base, name).partitionedBy("p").tableProperty("write.delete.mode", "merge-on-read").create()
    proxy = RecordingProxy(rest_server.uri, misreport_commits=[lie])
    proxy.start()
    try:
        ig.configure(catalogs={CAT: props | {"uri": proxy.uri}})
        if op == "append":
            r = ig.writeTo(rows(range(100, 130), seed=1), name).append()
            want = pa.concat_tables([base, rows(range(100, 130), seed=1)])
        else:
            r = ig.table(name).delete("id < 10")
            want = base.filter(pc.greater_equal(base["id"], 10))
    finally:
        proxy.stop()
        ig.configure(catalogs={CAT: props})
    assert proxy.misreport_commits == [], "the proxy never misreported a commit"
    pcat = pyiceberg_catalog(props)
    t = pcat.load_table(ident)
    snaps = t.metadata.snapshots
    assert len(snaps) == 2, f"one snapshot for the write, got {[s.summary.operation for s in snaps]}"
    assert r.snapshot_id == snaps[1].snapshot_id
    check(pcat, ident, True, want)
    # Every snapshot's manifest list and manifests are still there.
    for s in snaps:
        for m in s.manifests(t.io):
            assert Path(m.manifest_path.removeprefix("file:")).exists()


def test_rest_serializable_delete_against_concurrent_append(tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """Copy-on-write delete vs an append of matching rows: the delete fails with CommitConflictError, nothing lost."""
    props = catalog_props("rest-local", tmp_path, s3_server, rest_server, unique)
    ident, name = f"{unique}.t", f"{CAT}.{unique}.t"
    ig.configure(catalogs={CAT: props})
    base = rows(range(40))
    ig.writeTo(base, name).partitionedBy("p").tableProperty("write.delete.mode", "copy-on-write").tableProperty(
        "write.delete.isolation-level", "serializable"
    ).create()
    extra = rows(range(500, 512))  # every p, so some match the delete's filter
    signal, release = tmp_path / "waiting", tmp_path / "release"
    hooks_library()  # fails here, not in the child, when it is not built
    conf = {"test.hooks": "true", "test.commit-delay-signal": str(signal), "test.commit-delay-release": str(release)}

    def append_while_delete_waits() -> None:
        deadline = time.monotonic() + HANG_S
        while not signal.exists():
            assert time.monotonic() < deadline, "the delete never reached its commit pause"
            time.sleep(0.02)
        try:
            ig.configure(catalogs={CAT: props})
            ig.writeTo(extra, name).append()
        finally:
            release.touch()  # the delete commits now, after the append

    [res] = run_children([(props, conf, "delete", name, "p = 'c'")], append_while_delete_waits)
    assert res["ok"] is False and res["type"] == "CommitConflictError", res
    pcat = pyiceberg_catalog(props)
    concurrent = pcat.load_table(ident).current_snapshot().snapshot_id
    assert str(concurrent) in res["message"], "the error must name the concurrent snapshot"
    assert len(pcat.load_table(ident).metadata.snapshots) == 2
    check(pcat, ident, True, pa.concat_tables([base, extra]))
    assert orphans(pcat, ident, tmp_path / "wh") == set(), "the failed delete's rewritten files were left behind"


def test_rest_delete_and_append_both_commit_after_409(tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """A delete and an append that do not conflict, committed against one base: the 409 loser revalidates and lands."""
    props = catalog_props("rest-local", tmp_path, s3_server, rest_server, unique)
    ident, name = f"{unique}.t", f"{CAT}.{unique}.t"
    ig.configure(catalogs={CAT: props})
    base = rows(range(40))
    ig.writeTo(base, name).partitionedBy("p").tableProperty("write.delete.isolation-level", "serializable").create()
    proxy = RecordingProxy(rest_server.uri, hold_commits=2)
    proxy.start()
    try:
        via = props | {"uri": proxy.uri}
        # the append adds no row the delete's filter matches, so serializable lets both commit
        results = run_children([(via, {}, "delete", name, "p = 'c'"), (via, {}, "append", name, ((600, 640), 0, "c"))])
    finally:
        proxy.stop()
    assert all(r["ok"] for r in results), results
    assert sorted(proxy.commit_statuses()) == [200, 200, 409], proxy.commit_statuses()
    pcat = pyiceberg_catalog(props)
    snaps = pcat.load_table(ident).metadata.snapshots
    assert len(snaps) == 3 and {s.snapshot_id for s in snaps[1:]} == {r["snapshot_id"] for r in results}
    appended = rows(range(600, 640)).filter(pc.field("p") != "c")
    check(pcat, ident, True, pa.concat_tables([base.filter(pc.field("p") != "c"), appended]))
    assert orphans(pcat, ident, tmp_path / "wh") == set()


# --- REPLACE / createOrReplace and server-chosen locations on REST ---------------------------------


@pytest.mark.parametrize("kind", ["rest-local", "rest-s3"])
def test_rest_replace_and_create_or_replace(kind: str, tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """REPLACE TABLE AS SELECT keeps history and uuid, is one commit, and PyIceberg reads the new table."""
    props = catalog_props(kind, tmp_path, s3_server, rest_server, unique)
    local = kind.endswith("local")
    ident, name = f"{unique}.t", f"{CAT}.{unique}.t"
    ig.configure(catalogs={CAT: props})
    pcat = pyiceberg_catalog(props)
    ig.writeTo(rows(range(30)), name).partitionedBy("p").create()
    ig.writeTo(rows(range(30, 40)), name).append()

    def one_commit_replacing(before: Any, res: Any) -> Any:
        t = pcat.load_table(ident)
        old = [s.snapshot_id for s in before.metadata.snapshots]
        assert [s.snapshot_id for s in t.metadata.snapshots] == old + [res.snapshot_id], "history must be kept"
        assert t.current_snapshot().snapshot_id == res.snapshot_id
        assert t.current_snapshot().parent_snapshot_id is None, "main restarts with the replacement"
        assert len(t.metadata.metadata_log) == len(before.metadata.metadata_log) + 1, "exactly one commit"
        assert t.metadata.table_uuid == before.metadata.table_uuid
        return t

    # replace: another schema (p and label dropped, extra added), unpartitioned
    before = pcat.load_table(ident)
    new = pa.table({"id": pa.array(range(100, 125), pa.int64()), "x": pa.array([i % 5 for i in range(25)], pa.int64()),
                    "extra": pa.array([f"e{i}" for i in range(25)])})
    t = one_commit_replacing(before, ig.writeTo(new, name).replace())
    assert t.spec().is_unpartitioned()
    assert [f.name for f in t.schema().fields] == ["id", "x", "extra"]
    # kept columns keep their ids, as Spark's REPLACE does
    assert {f.name: f.field_id for f in before.schema().fields if f.name in ("id", "x")} == {
        f.name: f.field_id for f in t.schema().fields if f.name in ("id", "x")
    }
    check(pcat, ident, local, new)

    # createOrReplace on the existing table: replaces it, partitioned again
    before = t
    again = rows(range(200, 230), seed=4)
    t = one_commit_replacing(before, ig.writeTo(again, name).partitionedBy("p").createOrReplace())
    assert [f.name for f in t.spec().fields] == ["p"]
    check(pcat, ident, local, again)

    # replace keeping schema, spec and (no) sort order: the server is told the ids it already has
    before = t
    same = rows(range(300, 310), seed=5)
    t = one_commit_replacing(before, ig.writeTo(same, name).partitionedBy("p").replace())
    assert t.metadata.current_schema_id == before.metadata.current_schema_id
    assert len(t.metadata.schemas) == len(before.metadata.schemas) and len(t.metadata.sort_orders) == len(before.metadata.sort_orders)
    check(pcat, ident, local, same)

    # createOrReplace of a table that does not exist: a create with one snapshot
    res = ig.writeTo(rows(range(10)), f"{CAT}.{unique}.fresh").createOrReplace()
    fresh = pcat.load_table(f"{unique}.fresh")
    assert [s.snapshot_id for s in fresh.metadata.snapshots] == [res.snapshot_id]
    check(pcat, f"{unique}.fresh", local, rows(range(10)))


def test_rest_table_location_chosen_by_the_server(tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """Without a warehouse path on the client, a new table goes where the server puts it."""
    pcat = pyiceberg_catalog({"type": "rest", "uri": rest_server.uri})
    server_wh = rest_server.warehouse.resolve()
    for i, client in enumerate([{}, {"warehouse": "analytics"}]):  # absent, or a warehouse name
        props = {"type": "rest", "uri": rest_server.uri} | client
        ig.configure(catalogs={CAT: props})
        table = f"t{i}"
        data = rows(range(20), seed=i)
        ig.writeTo(data, f"{CAT}.{unique}.{table}").partitionedBy("p").create()
        t = pcat.load_table(f"{unique}.{table}")
        loc = Path(t.metadata.location.removeprefix("file:"))
        assert loc.is_relative_to(server_wh), f"{loc} is not under the server's warehouse {server_wh}"
        assert loc.name == table
        assert len(t.metadata.snapshots) == 1
        assert data_files(loc) and orphans(pcat, f"{unique}.{table}", loc) == set()
        check(pcat, f"{unique}.{table}", True, data)
        ig.writeTo(rows(range(20, 30)), f"{CAT}.{unique}.{table}").append()
        check(pcat, f"{unique}.{table}", True, pa.concat_tables([data, rows(range(20, 30))]))
    # the location probes published nothing
    assert sorted(n for _, n in pcat.list_tables(unique)) == ["t0", "t1"]


def test_rest_prefix_is_sent(tmp_path: Path, s3_server: S3Server, rest_server: RestServer, unique: str) -> None:
    """The `prefix` property puts every table call under /v1/<prefix>/ (a proxy strips it for the server)."""
    proxy = RecordingProxy(rest_server.uri, strip_prefix="tenant7")
    proxy.start()
    try:
        props = {"type": "rest", "uri": proxy.uri, "prefix": "tenant7", "warehouse": str(tmp_path / "wh")}
        (tmp_path / "wh").mkdir()
        ig.configure(catalogs={CAT: props})
        ig.writeTo(rows(range(5)), f"{CAT}.{unique}.p").create()
        ig.writeTo(rows(range(5, 9)), f"{CAT}.{unique}.p").append()
        paths = [r[1] for r in proxy.requests]
        table_calls = [p for p in paths if "/namespaces" in p]
        assert table_calls and all(p.startswith("/v1/tenant7/") for p in table_calls), paths
    finally:
        proxy.stop()
    direct = {"type": "rest", "uri": rest_server.uri}
    got = pyiceberg_catalog(direct).load_table(f"{unique}.p").scan().to_arrow()
    assert_same_rows(got.select(["id", "x", "p", "label"]), rows(range(9)))


def test_spark_catalog_settings_verbatim(spark: Any, spark_catalog: str) -> None:
    """The live Spark session's own catalog block (JdbcCatalog on the test's SQLite file), copied
    key for key into ``spark_conf``, opens the same catalog: each side reads what the other
    wrote, a bare table name resolves in ``default-namespace``, and a block we cannot serve is a
    typed error naming its setting."""
    prefix = f"spark.sql.catalog.{spark_catalog}"
    block = {k: v for k, v in spark.conf.getAll.items() if k == prefix or k.startswith(prefix + ".")}
    assert block[f"{prefix}.type"] == "jdbc" and block[f"{prefix}.uri"].startswith("jdbc:sqlite:")
    spark.sql(f"CREATE TABLE {spark_catalog}.db.sv (id bigint, s string) USING iceberg PARTITIONED BY (bucket(2, id))")
    spark.sql(f"INSERT INTO {spark_catalog}.db.sv VALUES (1, 'é/%'), (2, NULL)")
    with ig.Session(spark_conf={**block, f"{prefix}.default-namespace": "db", "spark.sql.defaultCatalog": spark_catalog}) as s:
        assert sorted(s.table(f"{spark_catalog}.db.sv").to_arrow().to_pylist(), key=lambda r: r["id"]) == [
            {"id": 1, "s": "é/%"},
            {"id": 2, "s": None},
        ]
        s.writeTo(pa.table({"id": pa.array([3], pa.int64()), "s": ["x"]}), "sv").append()  # short name
    got = spark.sql(f"SELECT id, s FROM {spark_catalog}.db.sv ORDER BY id").collect()
    assert [(r.id, r.s) for r in got] == [(1, "é/%"), (2, None), (3, "x")]
    nessie = {f"{prefix}": block[prefix], f"{prefix}.type": "nessie", f"{prefix}.uri": "http://localhost:19120/api/v2"}
    with (
        ig.Session(spark_conf=nessie) as s,
        pytest.raises(ig.NotSupportedError, match=r"spark\.sql\.catalog\.local\.type = nessie.*Iceberg REST"),
    ):
        s.table(f"{spark_catalog}.db.sv").snapshots()
    with pytest.raises(ValueError, match="spark_conf takes Spark settings"):
        ig.Session(spark_conf={"target-file-size-bytes": "1"})
