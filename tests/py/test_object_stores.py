"""GCS (gs://) and Azure (abfs://, wasb://) warehouses, against emulators started by the tests.

A SQLite catalog with its warehouse on fake-gcs-server or on Azurite's Blob service: create,
append, overwritePartitions, delete and merge, every table read back by us and by PyIceberg
0.12 from the same store. The writes run in a child process on the test-hooks library, which
CI builds with the optional storage (``PIG_TAGS="pig_testhooks pyiceberg_gcs pyiceberg_azure"``);
this process keeps the release library, which has local files and S3 only and must say so.

PyIceberg reads gs:// with its PyArrow FileIO (``gcs.service.host``, ``gcs.oauth2.token``).
For Azure its PyArrow FileIO cannot read a location of the form
``abfs://container@account.dfs.core.windows.net/...`` (it passes ``container@account...`` to
PyArrow as the container name, which the service rejects), and that is the form iceberg-go
(and Java) require; so PyIceberg reads Azure through its fsspec FileIO (adlfs) with
``adls.connection-string``.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import pyiceberg_go as ig

from conftest import HANG_S, hooks_library, use_library
from servers import AzuriteServer, GcsServer, azurite_server, gcs_server  # noqa: F401

CAT = "cat"
NS = "db"


def rows(ids: range, seed: int = 0) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "x": pa.array([(i * 7 + seed) % 11 for i in ids], pa.int64()),
            "p": pa.array(["abcd"[i % 4] for i in ids], pa.string()),
            "label": pa.array([f"r{i}-s{seed}" for i in ids], pa.string()),
        }
    )


def sort(t: pa.Table) -> pa.Table:
    return t.select(["id", "x", "p", "label"]).sort_by("id")


def expected() -> pa.Table:
    """What the scenario in ``_scenario`` leaves, computed here with PyArrow alone."""
    t = pa.concat_tables([rows(range(40)), rows(range(40, 60))])
    # overwritePartitions with new rows for p = 'a' only: the other partitions stay.
    new_a = rows(range(0, 60, 4), seed=1)
    t = pa.concat_tables([t.filter(pc.field("p") != "a"), new_a])
    t = t.filter(pc.field("id") >= 10)  # delete id < 10
    # merge: matched ids get label "merged", unmatched source rows are inserted.
    src = rows(range(50, 70), seed=2)
    keep = t.filter(pc.invert(pc.is_in(t["id"], src["id"])))
    matched = t.filter(pc.is_in(t["id"], src["id"]))
    matched = matched.set_column(3, "label", pa.array(["merged"] * matched.num_rows, pa.string()))
    inserted = src.filter(pc.invert(pc.is_in(src["id"], t["id"])))
    return sort(pa.concat_tables([keep, matched, inserted]))


def _scenario(props: dict[str, str], name: str, out: Any) -> None:
    """The writes and our read-back, in a child on the library with the optional storage."""
    use_library(hooks_library())
    ig.configure(catalogs={CAT: props})
    try:
        ig.writeTo(rows(range(40)), name).partitionedBy("p").create()
        ig.writeTo(rows(range(40, 60)), name).append()
        ig.writeTo(rows(range(0, 60, 4), seed=1), name).overwritePartitions()
        ig.table(name).delete("id < 10")
        src = rows(range(50, 70), seed=2)
        m = (
            ig.mergeInto(src, name, "target.id = source.id")
            .whenMatched()
            .update({"label": "'merged'"})
            .whenNotMatched()
            .insertAll()
            .merge()
        )
        got = ig.table(name).to_arrow()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, got.schema) as w:
            w.write_table(got)
        snaps = [s["operation"] for s in ig.table(name).snapshots()]  # oldest first
        out.put(json.dumps({"ok": True, "rows": sink.getvalue().to_pybytes().hex(), "merge": m.merge, "ops": snaps}))
    except ig.IcebergGoError as e:
        out.put(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))


def _failing(props: dict[str, str], name: str, out: Any) -> None:
    """A create that must fail on the store (wrong credentials or bucket), in a child."""
    use_library(hooks_library())
    ig.configure(catalogs={CAT: props})
    try:
        ig.writeTo(rows(range(4)), name).create()
        out.put(json.dumps({"ok": True}))
    except ig.IcebergGoError as e:
        out.put(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))


def in_child(target: Any, props: dict[str, str], name: str) -> dict[str, Any]:
    hooks_library()  # fails here, naming the build, when it is missing
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    p = ctx.Process(target=target, args=(props, name, out))
    p.start()
    res = json.loads(out.get(timeout=HANG_S))
    p.join(timeout=HANG_S)
    assert p.exitcode == 0
    return dict(res)


def sqlite_props(tmp_path: Any, warehouse: str, store: dict[str, str]) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": warehouse, **store}


def _as_abfs(location: str) -> str:
    """wasb://c@a.blob.core.windows.net/k as abfs://c@a.dfs.core.windows.net/k: the same blob."""
    if not location.startswith("wasb://"):
        return location
    authority, _, key = location.removeprefix("wasb://").partition("/")
    return "abfs://" + authority.replace(".blob.core.windows.net", ".dfs.core.windows.net") + "/" + key


def _wasb_file_io() -> type:
    from pyiceberg.io.fsspec import FsspecFileIO

    class WasbAsAbfsFileIO(FsspecFileIO):  # type: ignore[misc]
        """PyIceberg 0.12's fsspec FileIO reading wasb:// locations as the same blobs' abfs://."""

        def new_input(self, location: str) -> Any:
            return super().new_input(_as_abfs(location))

    return WasbAsAbfsFileIO


#: PyIceberg 0.12 has no wasb:// in either FileIO (fsspec: no such scheme; adlfs's paths are
#: abfs's; PyArrow: see the module's docstring), so it reads a wasb:// table through this
#: subclass (``py-io-impl``): still PyIceberg's metadata, manifest and Parquet readers.
WasbAsAbfsFileIO = _wasb_file_io()


def pyiceberg_read(props: dict[str, str], name: str, io: dict[str, str]) -> pa.Table:
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog(CAT, **{**props, **io})
    return cat.load_table(name.removeprefix(CAT + ".")).scan().to_arrow()


def check_scenario(props: dict[str, str], name: str, pyiceberg_io: dict[str, str]) -> None:
    res = in_child(_scenario, props, name)
    assert res["ok"], res
    ours = pa.ipc.open_stream(bytes.fromhex(res["rows"])).read_all()
    want = expected()
    assert sort(ours).equals(want)
    counts = res["merge"]
    assert counts["num-target-rows-updated"] == 10 and counts["num-target-rows-inserted"] == 10, counts
    assert res["ops"] == ["append", "append", "overwrite", "overwrite", "overwrite"], res["ops"]
    theirs = pyiceberg_read(props, name, pyiceberg_io)
    assert sort(theirs).equals(want)


@pytest.fixture
def unique() -> str:
    return "t_" + uuid.uuid4().hex[:10]


def test_gcs_warehouse(tmp_path: Any, gcs_server: GcsServer, unique: str) -> None:
    """gs:// on fake-gcs-server: every write lands in the bucket; PyIceberg (PyArrow's GCS) reads it."""
    props = sqlite_props(tmp_path, f"gs://{gcs_server.bucket}/{unique}/wh", gcs_server.props())
    name = f"{CAT}.{NS}.events"
    check_scenario(props, name, {})
    objs = gcs_server.objects(f"{unique}/wh/{NS}.db/events/")
    assert any(o.startswith(f"{unique}/wh/{NS}.db/events/data/p=b/") and o.endswith(".parquet") for o in objs), objs
    assert any(o.startswith(f"{unique}/wh/{NS}.db/events/metadata/") and o.endswith(".metadata.json") for o in objs)
    released_library_refuses(props, name, "pyiceberg_gcs", gcs_server.token)


def released_library_refuses(props: dict[str, str], name: str, tag: str, secret: str) -> None:
    """This process's release library, asked to read the table: a typed error naming the tag."""
    ig.configure(catalogs={CAT: props})
    try:
        with pytest.raises(ig.NotSupportedError) as e:
            ig.table(name).to_arrow()
    finally:
        ig.configure()
    assert tag in str(e.value) and secret not in str(e.value), str(e.value)


@pytest.mark.parametrize("scheme", ["abfs", "wasb"])
def test_azure_warehouse(tmp_path: Any, azurite_server: AzuriteServer, unique: str, scheme: str) -> None:
    """abfs:// and wasb:// on Azurite with PyIceberg's shared-key properties; PyIceberg's fsspec
    FileIO (adlfs, connection string) reads the same table."""
    az = azurite_server
    props = sqlite_props(tmp_path, az.warehouse(scheme, f"{unique}/wh"), az.props())
    name = f"{CAT}.{NS}.events"
    impl = "pyiceberg.io.fsspec.FsspecFileIO" if scheme == "abfs" else f"{__name__}.WasbAsAbfsFileIO"
    fsspec_io = {"py-io-impl": impl, "adls.connection-string": az.connection_string}
    check_scenario(props, name, fsspec_io)
    blobs = az.blobs(f"{unique}/wh/{NS}.db/events/")
    assert any(b.startswith(f"{unique}/wh/{NS}.db/events/data/p=b/") and b.endswith(".parquet") for b in blobs), blobs
    assert any(b.startswith(f"{unique}/wh/{NS}.db/events/metadata/") and b.endswith(".metadata.json") for b in blobs)
    released_library_refuses(props, name, "pyiceberg_azure", az.key)


def test_azure_connection_string(tmp_path: Any, azurite_server: AzuriteServer, unique: str) -> None:
    """PyIceberg's adls.connection-string alone (no account name or key) reaches the account."""
    az = azurite_server
    props = sqlite_props(
        tmp_path, az.warehouse("abfs", f"{unique}/wh"), {"adls.connection-string": az.connection_string}
    )
    res = in_child(_failing, props, f"{CAT}.{NS}.cs")
    assert res == {"ok": True}
    assert any(b.endswith(".metadata.json") for b in az.blobs(f"{unique}/wh/{NS}.db/cs/metadata/"))


def test_azure_wrong_key_is_typed_and_secret_free(tmp_path: Any, azurite_server: AzuriteServer, unique: str) -> None:
    """A key the account does not have: an IcebergIOError naming the location, without the key
    (shared key or inside a connection string)."""
    az = azurite_server
    import base64
    import secrets

    wrong = base64.b64encode(secrets.token_bytes(32)).decode()
    cs = az.connection_string.replace(az.key, wrong)
    for i, store in enumerate([az.props(**{"adls.account-key": wrong}), {"adls.connection-string": cs}]):
        (tmp_path / str(i)).mkdir()
        props = sqlite_props(tmp_path / str(i), az.warehouse("abfs", f"{unique}/wh"), store)
        res = in_child(_failing, props, f"{CAT}.{NS}.denied")
        assert res["ok"] is False and res["type"] == "IcebergIOError", res
        assert az.warehouse("abfs", f"{unique}/wh") in res["message"]
        assert wrong not in res["message"] and cs not in res["message"], res["message"]
    assert az.blobs(f"{unique}/") == []


def test_gcs_missing_bucket_is_typed_and_secret_free(tmp_path: Any, gcs_server: GcsServer, unique: str) -> None:
    """A bucket the server does not have: an IcebergIOError naming it, without the token."""
    props = sqlite_props(tmp_path, f"gs://no-such-{unique.replace('_', '-')}/wh", gcs_server.props())
    res = in_child(_failing, props, f"{CAT}.{NS}.nobucket")
    assert res["ok"] is False and res["type"] == "IcebergIOError", res
    assert f"no-such-{unique.replace('_', '-')}" in res["message"]
    assert gcs_server.token not in res["message"], res["message"]


@pytest.mark.parametrize(
    ("warehouse", "tag"),
    [
        ("gs://bucket/wh", "pyiceberg_gcs"),
        ("abfs://c@acct.dfs.core.windows.net/wh", "pyiceberg_azure"),
        ("wasb://c@acct.blob.core.windows.net/wh", "pyiceberg_azure"),
    ],
)
def test_release_library_names_the_build_option(tmp_path: Any, warehouse: str, tag: str) -> None:
    """The release library (this process's) has no GCS or Azure: a typed error that names the
    build tag, and no secret."""
    secret = "s3cr3t-" + uuid.uuid4().hex
    store = {"gcs.oauth2.token": secret, "adls.account-name": "acct", "adls.account-key": secret}
    ig.configure(catalogs={CAT: sqlite_props(tmp_path, warehouse, store)})
    try:
        with pytest.raises(ig.NotSupportedError) as e:
            ig.writeTo(rows(range(4)), f"{CAT}.{NS}.t").create()
    finally:
        ig.configure()
    msg = str(e.value)
    assert tag in msg and "PIG_TAGS=" in msg and warehouse in msg, msg
    assert secret not in msg
