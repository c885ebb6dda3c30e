"""The AWS Glue catalog (issue 40, item 3), against moto's Glue and S3 (``moto_server``).

Every operation is read back by PyIceberg 0.12's GlueCatalog on the same server, and PyIceberg's
append by us; several processes append at once and every append that returned is in the table
once (Glue's commit is an UpdateTable guarded by the table's VersionId, which ``moto_glue.py``
adds to moto); wrong credentials are a typed error that names no secret, and nothing is
committed; no secret reaches a table's properties, snapshot summaries or Glue parameters.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import pyiceberg_go as ig

from jdbc_catalog import every_operation_read, ids_of, rows, spark_reads_every_write, write_every_operation
from servers import MotoServer, moto_server  # noqa: F401  (fixture)
from sparkutil import spark  # noqa: F401  (fixture)
from test_concurrency import check_table, run_appenders, seed_schema


@pytest.fixture
def glue(moto_server: MotoServer) -> dict[str, str]:
    """Catalog "glue" on the server, with a warehouse prefix and a database of this test's own."""
    tag = secrets.token_hex(4)
    props = moto_server.props(warehouse=f"s3://{moto_server.bucket}/glue-{tag}")
    ig.configure(catalogs={"glue": props})
    return {**props, "ns": "db_" + tag}


def catalog_props(glue: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in glue.items() if k != "ns"}


def pyiceberg(glue: dict[str, str], name: str = "glue") -> Any:
    from pyiceberg.catalog.glue import GlueCatalog

    return GlueCatalog(name, **{k: v for k, v in catalog_props(glue).items() if k != "type"})


def test_moto_refuses_a_stale_version_id(moto_server: MotoServer, glue: dict[str, str]) -> None:
    """The server the other tests run on has Glue's optimistic UpdateTable (moto alone lacks it)."""
    g = moto_server.client("glue")
    g.create_database(DatabaseInput={"Name": glue["ns"]})
    g.create_table(DatabaseName=glue["ns"], TableInput={"Name": "v", "Parameters": {"n": "0"}})
    version = g.get_table(DatabaseName=glue["ns"], Name="v")["Table"]["VersionId"]
    g.update_table(DatabaseName=glue["ns"], TableInput={"Name": "v", "Parameters": {"n": "1"}}, VersionId=version)
    with pytest.raises(g.exceptions.ConcurrentModificationException):
        g.update_table(DatabaseName=glue["ns"], TableInput={"Name": "v", "Parameters": {"n": "2"}}, VersionId=version)
    assert g.get_table(DatabaseName=glue["ns"], Name="v")["Table"]["Parameters"] == {"n": "1"}


def test_operations_read_back_by_pyiceberg(moto_server: MotoServer, glue: dict[str, str]) -> None:
    ns = glue["ns"]
    name = f"glue.{ns}.t"
    want = write_every_operation(name)
    cat = pyiceberg(glue)
    t = cat.load_table(f"{ns}.t")
    every_operation_read(t, want)
    assert t.location() == f"{glue['warehouse']}/{ns}.db/t"
    assert f"{ns}.t" in [".".join(i) for i in cat.list_tables(ns)]

    # The Glue table is an Iceberg table as Java and PyIceberg write it.
    entry = moto_server.client("glue").get_table(DatabaseName=ns, Name="t")["Table"]
    assert entry["Parameters"]["table_type"] == "ICEBERG"
    assert entry["Parameters"]["metadata_location"] == t.metadata_location
    assert entry["Parameters"]["previous_metadata_location"].startswith(f"{glue['warehouse']}/{ns}.db/t/metadata/")
    keys = [o["Key"] for o in moto_server.client("s3").list_objects_v2(Bucket=moto_server.bucket, Prefix=glue["warehouse"].split("/", 3)[3])["Contents"]]
    assert any("/data/p=" in k and k.endswith(".parquet") for k in keys)

    # PyIceberg's writes come back to us, through the same Glue table.
    t.append(rows([500]))
    assert 500 in ig.table(name).to_arrow().column("id").to_pylist()
    ig.writeTo(rows([501]), name).append()
    assert ids_of(cat.load_table(f"{ns}.t")) == sorted([*want, 500, 501])


def test_a_database_location_places_new_tables(moto_server: MotoServer, glue: dict[str, str]) -> None:
    """A Glue database with a location holds its new tables there, as in PyIceberg and Java."""
    ns = glue["ns"]
    where = f"s3://{moto_server.bucket}/elsewhere-{ns}"
    moto_server.client("glue").create_database(DatabaseInput={"Name": ns, "LocationUri": where})
    ig.writeTo(rows([1]), f"glue.{ns}.placed").create()
    assert pyiceberg(glue).load_table(f"{ns}.placed").location() == f"{where}/placed"


@pytest.mark.parametrize("retries", [None, "100"], ids=["default-retries", "retries-100"])
def test_concurrent_appends_from_processes(retries: str | None, glue: dict[str, str], tmp_path: Path, record_property: Any) -> None:
    """Four processes append ten times each. Racing commits fail Glue's VersionId check and are
    retried within commit.retry.*; with the default budget some may give up (typed, nothing half
    done), with a large one all land; either way every append that returned is there, once."""
    props = catalog_props(glue)
    table = f"local.{glue['ns']}.c"
    ig.configure(catalogs={"local": props})
    w = ig.writeTo(seed_schema(), table)
    if retries:
        w = w.tableProperty("commit.retry.num-retries", retries).tableProperty("commit.retry.max-wait-ms", "2000")
    w.create()
    results = run_appenders(props, table, tmp_path, appends=10, workers=4)
    landed = sum("ok" in r for r in results)
    record_property("glue_appends_landed", f"{landed}/{len(results)}")
    print(f"Glue, commit.retry.num-retries={retries or 'default (4)'}: {landed}/{len(results)} appends landed")
    assert {r["error"] for r in results if "error" in r} <= {"CommitConflictError"}
    if retries:
        assert landed == len(results)
    check_table(pyiceberg(glue, "local").load_table(f"{glue['ns']}.c"), results)


class LyingGlue:
    """A proxy in front of moto's Glue that passes every request through (signatures hold: the
    Host header is kept) and answers the next ``lies`` UpdateTable calls that moto applied with a
    500, as a lost answer would look."""

    def __init__(self, target: str, lies: int) -> None:
        self.target, self.lies, self.updates = target, lies, 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                u = urllib.parse.urlsplit(proxy.target)
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
                conn.putrequest("POST", self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in self.headers.items():
                    if k.lower() not in ("connection", "content-length"):
                        conn.putheader(k, v)
                conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body)
                rsp = conn.getresponse()
                status, data, ctype = rsp.status, rsp.read(), rsp.getheader("Content-Type", "application/x-amz-json-1.1")
                conn.close()
                if self.headers.get("X-Amz-Target") == "AWSGlue.UpdateTable":
                    proxy.updates += 1
                    if status == 200 and proxy.lies > 0:
                        proxy.lies -= 1
                        status, data = 500, b'{"__type":"InternalServiceException","message":"answer lost by the test proxy"}'
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_lost_commit_answer_is_settled_not_repeated(moto_server: MotoServer, glue: dict[str, str]) -> None:
    """Glue applied the UpdateTable but the answer was a 500: the SDK does not send it again (a
    second try would fail the version check the first one moved, and the commit loop would append
    the rows twice); the table is read again, the snapshot is there, the append succeeds, once."""
    ns = glue["ns"]
    ig.writeTo(rows([1]), f"glue.{ns}.l").create()
    proxy = LyingGlue(moto_server.endpoint, lies=1)
    try:
        ig.configure(catalogs={"lying": catalog_props(glue) | {"glue.endpoint": proxy.uri}})
        r = ig.writeTo(rows([2]), f"lying.{ns}.l").append()
        assert proxy.lies == 0 and proxy.updates == 1
    finally:
        proxy.stop()
    t = pyiceberg(glue).load_table(f"{ns}.l")
    assert ids_of(t) == [1, 2]
    assert t.current_snapshot().snapshot_id == r.snapshot_id
    assert len(t.snapshots()) == 2


def test_wrong_credentials_are_typed_and_secret_free(moto_server: MotoServer, glue: dict[str, str]) -> None:
    """moto checks signatures: a wrong secret or an unknown key is refused, typed, with no key or
    secret in the message, and nothing is committed."""
    ns = glue["ns"]
    name = f"glue.{ns}.w"
    ig.writeTo(rows([1]), name).create()
    wrong = "wrong-" + secrets.token_hex(12)
    unknown = "AKIA" + secrets.token_hex(8).upper()
    cases = [
        # Glue refuses the wrong secret, then an unknown key (moto answers Glue's JSON protocol in
        # XML here, so its error code does not reach the message; the 403 does).
        (catalog_props(glue) | {"glue.secret-access-key": wrong}, ig.InvalidArgumentError, "AWS refused the credentials"),
        (catalog_props(glue) | {"glue.access-key-id": unknown}, ig.InvalidArgumentError, "AWS refused the credentials"),
        # Glue accepts, S3 refuses: the data files cannot be written.
        (catalog_props(glue) | {"s3.secret-access-key": wrong}, ig.IcebergIOError, "SignatureDoesNotMatch"),
    ]
    for props, kind, says in cases:
        ig.configure(catalogs={"bad": props})
        with pytest.raises(kind) as e:
            ig.writeTo(rows([2]), f"bad.{ns}.w").append()
        msg = str(e.value)
        assert says in msg, msg
        for secret in (wrong, unknown, moto_server.secret_key, moto_server.access_key):
            assert secret not in msg
    ig.configure(catalogs={"glue": catalog_props(glue)})
    assert ig.table(name).to_arrow().num_rows == 1  # nothing was committed
    assert len(pyiceberg(glue).load_table(f"{ns}.w").snapshots()) == 1


def test_missing_region_and_unreachable_endpoint(glue: dict[str, str]) -> None:
    """No region anywhere is refused before any call; nothing listening is an I/O error at once
    (a refused connection is not retried)."""
    ns = glue["ns"]
    props = {k: v for k, v in catalog_props(glue).items() if k not in ("glue.region", "s3.region")}
    if os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"):
        ig.set_runtime(env={"AWS_REGION": "", "AWS_DEFAULT_REGION": ""})  # this machine names one
    ig.configure(catalogs={"noregion": props})
    with pytest.raises(ig.InvalidArgumentError, match=r"glue\.region"):
        ig.writeTo(rows([1]), f"noregion.{ns}.r").create()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    ig.configure(catalogs={"dead": catalog_props(glue) | {"glue.endpoint": dead}})
    with pytest.raises(ig.IcebergIOError) as e:
        ig.writeTo(rows([1]), f"dead.{ns}.r").create()
    assert glue["glue.secret-access-key"] not in str(e.value)


def test_no_secret_in_properties_summaries_or_glue_parameters(moto_server: MotoServer, glue: dict[str, str]) -> None:
    ns = glue["ns"]
    name = f"glue.{ns}.s"
    ig.writeTo(rows([1, 2]), name).create()
    ig.writeTo(rows([3]), name).append()
    t = pyiceberg(glue).load_table(f"{ns}.s")
    blobs = [json.dumps(t.properties), *(json.dumps(s.summary.additional_properties) for s in t.snapshots())]
    blobs.append(json.dumps(moto_server.client("glue").get_table(DatabaseName=ns, Name="s")["Table"], default=str))
    for blob in blobs:
        assert moto_server.secret_key not in blob
        assert moto_server.access_key not in blob


def test_spark_glue_catalog_shares_the_tables(moto_server: MotoServer, glue: dict[str, str], spark: Any) -> None:
    """Spark's Glue catalog settings (spark_conf) open the catalog; Spark 4.1's GlueCatalog
    (iceberg-aws-bundle) on the same server reads what we wrote and writes what we read.

    Spark's Glue client takes its credentials from a Java provider (here the JVM's system
    properties); ours from the same keys given as catalog properties."""
    ns = glue["ns"]
    prefix = "spark.sql.catalog.gspark"
    conf = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "glue",
        f"{prefix}.warehouse": glue["warehouse"].replace("s3://", "s3a://"),
        f"{prefix}.glue.endpoint": moto_server.endpoint,
        f"{prefix}.client.region": moto_server.region,
        f"{prefix}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        f"{prefix}.s3.endpoint": moto_server.endpoint,
        f"{prefix}.s3.path-style-access": "true",
        f"{prefix}.s3.access-key-id": moto_server.access_key,
        f"{prefix}.s3.secret-access-key": moto_server.secret_key,
        f"{prefix}.cache-enabled": "false",
    }
    ours = conf | {f"{prefix}.client.access-key-id": moto_server.access_key, f"{prefix}.client.secret-access-key": moto_server.secret_key}
    s = ig.Session(spark_conf=ours)
    name = f"gspark.{ns}.s"
    s.writeTo(rows([1, 2, 3]), name).create()

    system = spark._jvm.java.lang.System
    system.setProperty("aws.accessKeyId", moto_server.access_key)
    system.setProperty("aws.secretAccessKey", moto_server.secret_key)
    theirs = conf | {f"{prefix}.client.credentials-provider": "software.amazon.awssdk.auth.credentials.SystemPropertyCredentialsProvider"}
    for k, v in theirs.items():
        spark.conf.set(k, v)
    spark._jsparkSession.sessionState().catalogManager().reset()
    spark_reads_every_write(spark, s, f"gspark.{ns}.every")
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {name}").collect()) == [1, 2, 3]
    spark.sql(f"INSERT INTO {name} VALUES (4, 'spark', 1)")
    spark.sql(f"DELETE FROM {name} WHERE id = 2")
    assert sorted(s.table(name).to_arrow().column("id").to_pylist()) == [1, 3, 4]
    s.writeTo(rows([5]), name).append()
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {name}").collect()) == [1, 3, 4, 5]
