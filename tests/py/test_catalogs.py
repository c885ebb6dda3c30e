"""Real catalogs and real object storage: the SQLite and REST catalogs over local and S3 warehouses.

The REST catalog is Apache Iceberg's own RESTCatalogServer and S3 is versitygw, both
started on 127.0.0.1 by the fixtures in servers.py. Every result is read back by
PyIceberg (and by DuckDB where it can reach the files) and compared with a reference
computed here with pyarrow.
"""

from __future__ import annotations

import json
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
from conftest import assert_same_rows, duckdb_scan
from servers import RecordingProxy, RestServer, S3Server, own_rest_server, rest_server, s3_server  # noqa: F401

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
    ref = rows(range(0, 40))
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
    src = rows(range(0, 10), seed=3)
    src = pa.concat_tables([src, rows(range(1000, 1005), seed=3)])
    src = src.filter(pc.is_in(pc.field("id"), pa.array(existing[:5] + list(range(1000, 1005)), pa.int64())))
    assert 0 < src.num_rows
    ig.table(name).upsert(src, ["id"])
    ref = pa.concat_tables([ref.filter(~pc.is_in(pc.field("id"), src.column("id"))), src])
    check(pcat, ident, local, ref)

    # every operation is one snapshot, each visible to PyIceberg
    assert len(pcat.load_table(ident).metadata.snapshots) == 5
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
