"""Real servers for the catalog tests, started on 127.0.0.1 and always stopped.

- versitygw (S3) through ``.ci/s3.sh``, with a bucket made through pyarrow's S3 client;
- Apache Iceberg's REST catalog server through ``.ci/rest.sh``, whose FileIO resolves
  both local paths and ``s3://`` (so one server backs the local and the S3 warehouses),
  keeping its catalog in a SQLite file so that a restarted server sees what was committed;
- ``RecordingProxy``: a tiny HTTP proxy in front of the REST server that records every
  request's headers and can demand OAuth2 client credentials, to test what the client sends;
  it can also hold table commits until several have arrived, so that concurrent writers
  really commit against the same base (and all but one get the server's 409);
- ``S3FaultProxy``: an HTTP proxy in front of versitygw that answers chosen PUTs with an
  S3 error (500 InternalError, 503 SlowDown) and passes everything else through;
- Apache Hive's standalone metastore (Thrift; its tables in PostgreSQL) through ``.ci/hive.sh``;
- moto's server (Glue, S3 and IAM, from requirements-dev.txt) through ``moto_glue.py``, with
  Glue's VersionId check on UpdateTable, credentials checked, and one bucket;
- Project Nessie 0.99 (its Iceberg REST endpoint under ``/iceberg/``, in-memory version store,
  a warehouse on the versitygw bucket) through ``.ci/nessie.sh``;
- fake-gcs-server (GCS) through ``.ci/gcs.sh`` and Azurite's Blob service (Azure, a random
  account and key) through ``.ci/azurite.sh``, each with one bucket / container.

The scripts install (pinned, cached) on first use; the fixtures here run their ``start``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BUCKET = "pigwarehouse"
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _setup(script: str) -> None:
    """Runs ``script setup`` (install/cache only); fails the tests with its output."""
    r = subprocess.run(["bash", str(REPO / ".ci" / script), "setup"], capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        pytest.fail(f".ci/{script} setup failed:\n{r.stderr[-4000:]}")


@dataclass
class Process:
    """A server started by ``.ci/<script> start``, logging to a file."""

    script: str
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, **self.env}
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                ["bash", str(REPO / ".ci" / self.script), "start"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self) -> None:
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        # The script execs the server, so its process group is the server's.
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=20)

    def wait_ready(self, ready: Any, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.script} exited with {self.proc.returncode}:\n{self.log.read_text()[-4000:]}")
            if ready():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.script} not ready after {timeout}s:\n{self.log.read_text()[-4000:]}")


def _http_ok(url: str) -> bool:
    u = urllib.parse.urlsplit(url)
    try:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=2)
        conn.request("GET", u.path or "/")
        ok = conn.getresponse().status < 500
        conn.close()
        return ok
    except OSError:
        return False


@dataclass
class S3Server:
    endpoint: str
    access_key: str
    secret_key: str
    root: Path
    bucket: str = BUCKET

    def props(self, **over: str) -> dict[str, str]:
        """The catalog properties that reach this server (PyIceberg's names)."""
        p = {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": self.access_key,
            "s3.secret-access-key": self.secret_key,
            "s3.region": REGION,
            "s3.path-style-access": "true",
        }
        p.update(over)
        return p

    def filesystem(self) -> Any:
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(
            access_key=self.access_key,
            secret_key=self.secret_key,
            endpoint_override=self.endpoint.removeprefix("http://"),
            scheme="http",
            region=REGION,
            allow_bucket_creation=True,
        )

    def files(self, prefix: str) -> list[str]:
        """Object keys under s3://bucket/prefix (files only)."""
        import pyarrow.fs as pafs

        sel = pafs.FileSelector(f"{self.bucket}/{prefix}", recursive=True, allow_not_found=True)
        return sorted(i.path for i in self.filesystem().get_file_info(sel) if i.type == pafs.FileType.File)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """versitygw on a free 127.0.0.1 port with random root keys and one bucket."""
    _setup("s3.sh")
    root = tmp_path_factory.mktemp("s3")
    port = free_port()
    srv = S3Server(
        f"http://127.0.0.1:{port}", "AK" + secrets.token_hex(8).upper(), secrets.token_urlsafe(24), root / "data"
    )
    p = Process(
        "s3.sh",
        {
            "S3_PORT": str(port),
            "S3_DIR": str(srv.root),
            "ROOT_ACCESS_KEY": srv.access_key,
            "ROOT_SECRET_KEY": srv.secret_key,
        },
        root / "versitygw.log",
    )
    p.start()
    try:
        p.wait_ready(lambda: _http_ok(srv.endpoint + "/"), timeout=60)
        srv.filesystem().create_dir(srv.bucket)
        yield srv
    finally:
        p.stop()


@dataclass
class RestServer:
    """A running RESTCatalogServer; ``restart`` keeps its SQLite catalog."""

    uri: str
    warehouse: Path
    process: Process
    port: int

    def stop(self) -> None:
        self.process.stop()

    def start(self) -> None:
        self.process.start()
        self.process.wait_ready(lambda: _http_ok(self.uri + "/v1/config"))


def start_rest_server(root: Path, s3: S3Server) -> RestServer:
    _setup("rest.sh")
    root.mkdir(parents=True, exist_ok=True)
    wh = root / "server-wh"
    wh.mkdir(exist_ok=True)
    port = free_port()
    env = {
        "REST_PORT": str(port),
        "CATALOG_WAREHOUSE": str(wh),
        "CATALOG_URI": f"jdbc:sqlite:{root / 'rest-catalog.db'}",
        # Local paths through Hadoop, s3:// through S3FileIO against versitygw.
        "CATALOG_IO__IMPL": "org.apache.iceberg.io.ResolvingFileIO",
        "CATALOG_S3_ENDPOINT": s3.endpoint,
        "CATALOG_S3_ACCESS__KEY__ID": s3.access_key,
        "CATALOG_S3_SECRET__ACCESS__KEY": s3.secret_key,
        "CATALOG_S3_PATH__STYLE__ACCESS": "true",
        "CATALOG_CLIENT_REGION": REGION,
        "AWS_REGION": REGION,
    }
    srv = RestServer(f"http://127.0.0.1:{port}", wh, Process("rest.sh", env, root / "rest.log"), port)
    srv.start()
    return srv


@pytest.fixture(scope="session")
def rest_server(tmp_path_factory: pytest.TempPathFactory, s3_server: S3Server) -> Iterator[RestServer]:
    """Iceberg's REST catalog server for the whole session."""
    srv = start_rest_server(tmp_path_factory.mktemp("rest"), s3_server)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def own_rest_server(tmp_path: Path, s3_server: S3Server) -> Iterator[RestServer]:
    """A REST catalog server of this test alone (it may stop and restart it)."""
    srv = start_rest_server(tmp_path / "own-rest", s3_server)
    try:
        yield srv
    finally:
        srv.stop()


def _serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    """Serves handler on a free port of 127.0.0.1 in a daemon thread; returns the server and its uri."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _shutdown(server: ThreadingHTTPServer | None) -> None:
    """Stops a server started by _serve (None: nothing to stop)."""
    if server is not None:
        server.shutdown()
        server.server_close()


@dataclass
class RecordingProxy:
    """Forwards to ``target``, recording (method, path, headers, body) of every request.

    With ``client_id``/``client_secret`` set, the token endpoint only answers those
    client credentials (401 otherwise) and every other request needs the bearer
    token it handed out (401 otherwise).
    """

    target: str
    client_id: str | None = None
    client_secret: str | None = None
    requests: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)
    token: str = field(default_factory=lambda: "tok-" + secrets.token_hex(16))
    uri: str = ""
    #: Hold the first ``hold_commits`` table commits until all of them have arrived
    #: (at most ``hold_timeout`` seconds), then forward them at once.
    hold_commits: int = 0
    hold_timeout: float = 600.0
    #: Forward /v1/<strip_prefix>/... as /v1/... (a client configured with a REST ``prefix``).
    strip_prefix: str | None = None
    #: (method, path, status) of every forwarded request, in the order answered.
    statuses: list[tuple[str, str, int]] = field(default_factory=list)
    #: Called with (method, path, status) once the upstream has answered, before the client hears it.
    on_reply: Any = None
    #: Lost answers: the next commits that the upstream accepts (200) are answered with these
    #: statuses instead, in order (409: "CommitFailedException", 5xx: a server error), so the
    #: client hears a failure for a commit that landed.
    misreport_commits: list[int] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _held: int = 0
    _cv: threading.Condition = field(default_factory=threading.Condition)

    @staticmethod
    def is_commit(method: str, path: str) -> bool:
        """A table commit: POST .../namespaces/<ns>/tables/<table> (not a create, rename or metrics report)."""
        return (
            method == "POST"
            and re.search(r"/namespaces/[^/]+/tables/[^/]+$", urllib.parse.urlsplit(path).path) is not None
        )

    def commit_statuses(self) -> list[int]:
        return [st for m, p, st in self.statuses if self.is_commit(m, p)]

    def _hold(self, method: str, path: str) -> None:
        if not self.hold_commits or not self.is_commit(method, path):
            return
        with self._cv:
            if self._held >= self.hold_commits:
                return
            self._held += 1
            self._cv.notify_all()
            self._cv.wait_for(lambda: self._held >= self.hold_commits, timeout=self.hold_timeout)

    def start(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                proxy.requests.append((self.command, self.path, headers, body))
                if proxy.client_secret is not None:
                    if self.path.endswith("/oauth/tokens"):
                        form = urllib.parse.parse_qs(body.decode())
                        if form.get("client_id") != [proxy.client_id] or form.get("client_secret") != [
                            proxy.client_secret
                        ]:
                            return self._reply(
                                401, {"error": "invalid_client", "error_description": "bad client credentials"}
                            )
                        return self._reply(
                            200,
                            {
                                "access_token": proxy.token,
                                "token_type": "bearer",
                                "expires_in": 3600,
                                "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                            },
                        )
                    if headers.get("authorization") != f"Bearer {proxy.token}":
                        return self._reply(
                            401, {"error": {"message": "not authorized", "type": "NotAuthorizedException", "code": 401}}
                        )
                proxy._hold(self.command, self.path)
                u = urllib.parse.urlsplit(proxy.target)
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
                fwd = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "accept-encoding")
                }
                path = self.path
                if proxy.strip_prefix and path.startswith(f"/v1/{proxy.strip_prefix}/"):
                    path = "/v1/" + path[len(f"/v1/{proxy.strip_prefix}/") :]
                conn.request(self.command, path, body=body or None, headers=fwd)
                rsp = conn.getresponse()
                data = rsp.read()
                proxy.statuses.append((self.command, self.path, rsp.status))
                if proxy.on_reply is not None:
                    proxy.on_reply(self.command, self.path, rsp.status)
                if rsp.status == 200 and proxy.is_commit(self.command, self.path):
                    with proxy._cv:
                        lie = proxy.misreport_commits.pop(0) if proxy.misreport_commits else None
                    if lie is not None:
                        conn.close()
                        kind = "CommitFailedException" if lie == 409 else "ServiceFailureException"
                        return self._reply(
                            lie, {"error": {"message": "answer lost by the test proxy", "type": kind, "code": lie}}
                        )
                self.send_response(rsp.status)
                for k, v in rsp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length", "content-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            def _reply(self, status: int, doc: dict[str, Any]) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_HEAD = do_DELETE = _handle

        self._server, self.uri = _serve(Handler)

    def stop(self) -> None:
        self._server = _shutdown(self._server)


@dataclass
class S3FaultProxy:
    """Forwards to an S3 endpoint, failing chosen object PUTs with an S3 error.

    Requests pass through unchanged, the Host header included, so their SigV4
    signatures still hold. A PUT fails when its key ends with ``fail_suffix`` and
    it is the ``fail_nth`` such key to be PUT (0: every such key); every retry of
    a failed key fails too, so the client's own retries cannot hide the fault.
    """

    target: str
    fail_status: int = 500
    fail_code: str = "InternalError"
    fail_suffix: str = ""
    fail_nth: int = 0
    #: Keys of every PUT attempt, and of those answered with the error.
    puts: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    uri: str = ""
    _keys: list[str] = field(default_factory=list)
    _doomed: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    def _fails(self, key: str) -> bool:
        with self._lock:
            self.puts.append(key)
            if not key.endswith(self.fail_suffix):
                return False
            if key not in self._keys:
                self._keys.append(key)
                if self.fail_nth == 0 or len(self._keys) == self.fail_nth:
                    self._doomed.add(key)
            if key in self._doomed:
                self.failed.append(key)
                return True
            return False

    def start(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive and 100-continue, as S3 clients expect

            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = bytearray()
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return bytes(out)
                        out += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _handle(self) -> None:
                body = self._body()
                key = urllib.parse.urlsplit(self.path).path
                if self.command == "PUT" and proxy._fails(key):
                    data = (
                        '<?xml version="1.0" encoding="UTF-8"?>'
                        f"<Error><Code>{proxy.fail_code}</Code><Message>injected fault</Message>"
                        f"<Resource>{key}</Resource><RequestId>fault-{secrets.token_hex(4)}</RequestId></Error>"
                    ).encode()
                    self.send_response(proxy.fail_status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                u = urllib.parse.urlsplit(proxy.target)
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in self.headers.items():
                    if k.lower() not in ("connection", "expect", "transfer-encoding", "content-length", "keep-alive"):
                        conn.putheader(k, v)
                if body or self.command in ("PUT", "POST"):
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body or None)
                rsp = conn.getresponse()
                data = rsp.read()
                self.send_response(rsp.status)
                for k, v in rsp.getheaders():
                    if k.lower() in ("transfer-encoding", "connection", "keep-alive"):
                        continue
                    if k.lower() == "content-length" and self.command != "HEAD":
                        continue  # set below; a HEAD keeps the object's size
                    self.send_header(k, v)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _handle

        self._server, self.uri = _serve(Handler)

    def stop(self) -> None:
        self._server = _shutdown(self._server)


@dataclass
class PostgresServer:
    """A PostgreSQL server with database ``iceberg`` and a superuser with a password."""

    host: str
    port: int
    user: str
    password: str

    def uri(self, scheme: str = "postgresql+psycopg2", password: str | None = None) -> str:
        pw = self.password if password is None else password
        return f"{scheme}://{self.user}:{urllib.parse.quote(pw, safe='')}@{self.host}:{self.port}/iceberg"

    def jdbc(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/iceberg"


def _tcp_ok(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """PostgreSQL 15 (Debian's package, installed by ``.ci/postgres.sh`` if missing) on a free port.

    Its folder is outside pytest's (which only root may enter): as root the server runs as the
    package's ``postgres`` user."""
    import tempfile

    _setup("postgres.sh")
    root = Path(tempfile.mkdtemp(prefix="pig-pg-"))
    root.chmod(0o755)  # the server's user must reach its folder inside
    srv = PostgresServer("127.0.0.1", free_port(), "pig", "pw-" + secrets.token_urlsafe(12))
    p = Process(
        "postgres.sh",
        {"PG_DIR": str(root / "pg"), "PG_PORT": str(srv.port), "PG_USER": srv.user, "PG_PASSWORD": srv.password},
        root / "postgres.log",
    )
    p.start()
    try:
        p.wait_ready(lambda: _tcp_ok(srv.host, srv.port), timeout=120)
        yield srv
    finally:
        if p.proc is not None and p.proc.poll() is None:
            os.killpg(p.proc.pid, signal.SIGINT)  # PostgreSQL's fast shutdown: SIGTERM waits for clients
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.proc.wait(timeout=20)
        p.stop()
        subprocess.run(["rm", "-rf", str(root)], check=False)


@dataclass
class MySQLServer:
    """A MariaDB server (Debian's MySQL) with database ``iceberg`` and a user with a password on it."""

    host: str
    port: int
    user: str
    password: str

    def uri(self, scheme: str = "mysql+pymysql", password: str | None = None) -> str:
        pw = self.password if password is None else password
        return f"{scheme}://{self.user}:{urllib.parse.quote(pw, safe='')}@{self.host}:{self.port}/iceberg"

    def jdbc(self, scheme: str = "mariadb") -> str:
        return f"jdbc:{scheme}://{self.host}:{self.port}/iceberg"


@pytest.fixture(scope="session")
def mysql_server() -> Iterator[MySQLServer]:
    """MariaDB 10.11 (Debian's package, installed by ``.ci/mysql.sh`` if missing) on a free port.

    Its folder is outside pytest's (which only root may enter): as root the server runs as the
    package's ``mysql`` user."""
    import tempfile

    _setup("mysql.sh")
    root = Path(tempfile.mkdtemp(prefix="pig-my-"))
    root.chmod(0o755)  # the server's user must reach its folder inside
    srv = MySQLServer("127.0.0.1", free_port(), "pig", "pw-" + secrets.token_urlsafe(12))
    p = Process(
        "mysql.sh",
        {"MY_DIR": str(root / "my"), "MY_PORT": str(srv.port), "MY_USER": srv.user, "MY_PASSWORD": srv.password},
        root / "mysql.log",
    )
    p.start()
    try:
        p.wait_ready(lambda: _tcp_ok(srv.host, srv.port), timeout=120)
        yield srv
    finally:
        p.stop()  # SIGTERM: MariaDB's normal shutdown
        subprocess.run(["rm", "-rf", str(root)], check=False)


@dataclass
class HiveMetastore:
    """A Hive standalone metastore (Thrift, no SASL) and the local warehouse its databases default to."""

    host: str
    port: int
    warehouse: Path

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"


@pytest.fixture(scope="session")
def hive_metastore(tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer) -> Iterator[HiveMetastore]:
    """Apache Hive's standalone metastore 4.0.0 (``.ci/hive.sh``: pinned jars from Maven Central) on a
    free port, keeping its tables in a database of its own on the PostgreSQL server: on embedded
    Derby the metastore's lock calls fail under concurrent committers."""
    import psycopg2

    _setup("hive.sh")
    db = "hms_" + secrets.token_hex(4)
    conn = psycopg2.connect(postgres_server.uri(scheme="postgresql").replace("/iceberg", "/postgres"))
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
    conn.close()
    root = tmp_path_factory.mktemp("hive")
    srv = HiveMetastore("127.0.0.1", free_port(), root / "warehouse")
    env = {
        "HIVE_DIR": str(root / "hms"),
        "HIVE_PORT": str(srv.port),
        "HIVE_WAREHOUSE": str(srv.warehouse),
        "HIVE_DB_URL": f"jdbc:postgresql://{postgres_server.host}:{postgres_server.port}/{db}",
        "HIVE_DB_USER": postgres_server.user,
        "HIVE_DB_PASSWORD": postgres_server.password,
    }
    (root / "hms").mkdir()
    p = Process("hive.sh", env, root / "hive.log")
    p.start()
    try:
        p.wait_ready(lambda: _tcp_ok(srv.host, srv.port), timeout=180)
        yield srv
    finally:
        p.stop()


@dataclass
class MotoServer:
    """moto's server: AWS Glue and S3 on one endpoint, requests signed by one IAM user's keys."""

    endpoint: str
    access_key: str
    secret_key: str
    bucket: str = BUCKET
    region: str = REGION

    def props(self, **over: str) -> dict[str, str]:
        """Properties of a Glue catalog on this server with an S3 warehouse (PyIceberg's names)."""
        p = {
            "type": "glue",
            "glue.endpoint": self.endpoint,
            "glue.region": self.region,
            "glue.access-key-id": self.access_key,
            "glue.secret-access-key": self.secret_key,
            "s3.endpoint": self.endpoint,
            "s3.region": self.region,
            "s3.access-key-id": self.access_key,
            "s3.secret-access-key": self.secret_key,
            "s3.path-style-access": "true",
        }
        p.update(over)
        return p

    def client(self, service: str) -> Any:
        """A boto3 client of ``service`` on this server."""
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=self.region,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
        )


@pytest.fixture(scope="session")
def moto_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoServer]:
    """moto's server on a free 127.0.0.1 port with Glue's VersionId check (``moto_glue.py``).

    An IAM user allowed everything gets a key pair and makes the bucket; then the server
    checks every request's signature (moto's ``reset-auth``), so wrong credentials fail as
    they would on AWS."""
    import sys

    import boto3

    root = tmp_path_factory.mktemp("moto")
    port = free_port()
    log = root / "moto.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("moto_glue.py")), "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _http_ok(endpoint + "/moto-api/"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto did not start:\n{log.read_text()[-4000:]}")
            time.sleep(0.2)
        boot = {"endpoint_url": endpoint, "region_name": REGION, "aws_access_key_id": "boot", "aws_secret_access_key": "boot"}
        iam = boto3.client("iam", **boot)
        iam.create_user(UserName="pig")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="pig", PolicyName="all", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="pig")["AccessKey"]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/moto-api/reset-auth", body=b"0", headers={"Content-Type": "text/plain"})
        if conn.getresponse().status != 200:
            raise RuntimeError("moto refused to turn on authentication")
        conn.close()
        srv = MotoServer(endpoint, key["AccessKeyId"], key["SecretAccessKey"])
        srv.client("s3").create_bucket(Bucket=srv.bucket)
        yield srv
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=20)


@dataclass
class NessieServer:
    """Nessie's server: its Iceberg REST catalog at ``uri`` (``.../iceberg/``), one warehouse
    ``warehouse`` at ``location`` on the S3 server, whose keys Nessie holds as a secret."""

    uri: str
    base: str
    warehouse: str
    location: str
    s3: S3Server
    log: Path

    def props(self, **over: str) -> dict[str, str]:
        """Properties of a REST catalog on Nessie's Iceberg endpoint (PyIceberg's names), with the
        S3 server's keys: Nessie's config answer names the endpoint but carries no keys."""
        p = {"type": "rest", "uri": self.uri, "warehouse": self.warehouse, **self.s3.props()}
        p.update(over)
        return p


@pytest.fixture(scope="session")
def nessie_server(tmp_path_factory: pytest.TempPathFactory, s3_server: S3Server) -> Iterator[NessieServer]:
    """Nessie 0.99 (``.ci/nessie.sh``: the pinned runner jar from Maven Central, on Java 21+) on a
    free port, in-memory, its warehouse a prefix of the versitygw bucket; ready once its health
    check says so and its Iceberg REST config answers for the warehouse."""
    _setup("nessie.sh")
    root = tmp_path_factory.mktemp("nessie")
    port, mgmt = free_port(), free_port()
    name = "pigwh"
    srv = NessieServer(
        f"http://127.0.0.1:{port}/iceberg/",
        f"http://127.0.0.1:{port}",
        name,
        f"s3://{s3_server.bucket}/nessie-{secrets.token_hex(4)}",
        s3_server,
        root / "nessie.log",
    )
    env = {
        "NESSIE_DIR": str(root / "conf"),
        "NESSIE_PORT": str(port),
        "NESSIE_MGMT_PORT": str(mgmt),
        "NESSIE_WAREHOUSE": name,
        "NESSIE_WAREHOUSE_LOCATION": srv.location,
        "NESSIE_S3_ENDPOINT": s3_server.endpoint,
        "NESSIE_S3_REGION": REGION,
        "NESSIE_S3_ACCESS_KEY": s3_server.access_key,
        "NESSIE_S3_SECRET_KEY": s3_server.secret_key,
    }
    p = Process("nessie.sh", env, srv.log)
    p.start()

    def ready() -> bool:
        if not _http_ok(f"http://127.0.0.1:{mgmt}/q/health/ready"):
            return False
        try:
            with urllib.request.urlopen(f"{srv.uri}v1/config?warehouse={name}", timeout=5) as r:
                return r.status == 200 and "prefix" in json.loads(r.read()).get("defaults", {})
        except OSError:
            return False

    try:
        p.wait_ready(ready, timeout=240)
        yield srv
    finally:
        p.stop()


# -- object store emulators (GCS, Azure) for tests/py/test_object_stores.py -------------------


@dataclass
class GcsServer:
    """fake-gcs-server: GCS's JSON API on 127.0.0.1, one bucket, no authentication checked."""

    endpoint: str
    token: str
    bucket: str = BUCKET
    project: str = "pig-test"

    def props(self, **over: str) -> dict[str, str]:
        """The catalog properties that reach this server (PyIceberg's names; the token is
        sent as a bearer token, which the emulator accepts unchecked)."""
        p = {
            "gcs.service.host": self.endpoint,
            "gcs.oauth2.token": self.token,
            # PyArrow's GcsFileSystem takes a token only with its expiry (ms since the epoch).
            "gcs.oauth2.token-expires-at": str(4102444800000),
            "gcs.project-id": self.project,
        }
        p.update(over)
        return p

    def objects(self, prefix: str) -> list[str]:
        """Object names under gs://bucket/prefix, read over the JSON API."""
        names: list[str] = []
        token = ""
        while True:
            q = urllib.parse.urlencode({"prefix": prefix, **({"pageToken": token} if token else {})})
            doc = _gcs_json(self.endpoint, "GET", f"/storage/v1/b/{self.bucket}/o?{q}")
            names += [o["name"] for o in doc.get("items", [])]
            token = doc.get("nextPageToken", "")
            if not token:
                return sorted(names)


def _gcs_json(endpoint: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    u = urllib.parse.urlsplit(endpoint)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        r = conn.getresponse()
        raw = r.read()
        if r.status >= 300:
            raise RuntimeError(f"fake-gcs-server: {method} {path}: {r.status} {raw[:500]!r}")
        return dict(json.loads(raw)) if raw else {}
    finally:
        conn.close()


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GcsServer]:
    """fake-gcs-server (``.ci/gcs.sh``) on a free port over a throwaway folder, one bucket."""
    _setup("gcs.sh")
    root = tmp_path_factory.mktemp("gcs")
    port = free_port()
    srv = GcsServer(f"http://127.0.0.1:{port}", "ya29." + secrets.token_urlsafe(24))
    p = Process("gcs.sh", {"GCS_PORT": str(port), "GCS_DIR": str(root / "data")}, root / "fake-gcs-server.log")
    p.start()
    try:
        p.wait_ready(lambda: _http_ok(srv.endpoint + "/storage/v1/b"), timeout=60)
        _gcs_json(srv.endpoint, "POST", f"/storage/v1/b?project={srv.project}", {"name": srv.bucket})
        yield srv
    finally:
        p.stop()


@dataclass
class AzuriteServer:
    """Azurite's Blob service on 127.0.0.1 with one random storage account and one container."""

    port: int
    account: str
    key: str
    container: str = BUCKET

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.port}"

    def warehouse(self, scheme: str, path: str) -> str:
        """An abfs(s):// or wasb(s):// location in the container (the account's real host
        name: the properties below send its requests to the emulator)."""
        host = "dfs" if scheme.startswith("abfs") else "blob"
        return f"{scheme}://{self.container}@{self.account}.{host}.core.windows.net/{path}"

    @property
    def connection_string(self) -> str:
        return (
            f"DefaultEndpointsProtocol=http;AccountName={self.account};AccountKey={self.key};"
            f"BlobEndpoint=http://{self.authority}/{self.account};"
        )

    def props(self, **over: str) -> dict[str, str]:
        """The catalog properties that reach this server (PyIceberg's names: shared key, and
        the Blob service's authority and scheme as for PyArrow's AzureFileSystem)."""
        p = {
            "adls.account-name": self.account,
            "adls.account-key": self.key,
            "adls.blob-storage-authority": self.authority,
            "adls.blob-storage-scheme": "http",
        }
        p.update(over)
        return p

    def filesystem(self) -> Any:
        import pyarrow.fs as pafs

        return pafs.AzureFileSystem(
            account_name=self.account,
            account_key=self.key,
            blob_storage_authority=self.authority,
            dfs_storage_authority=self.authority,
            blob_storage_scheme="http",
            dfs_storage_scheme="http",
        )

    def blobs(self, prefix: str) -> list[str]:
        """Blob names under the container's prefix (files only)."""
        import pyarrow.fs as pafs

        sel = pafs.FileSelector(f"{self.container}/{prefix}", recursive=True, allow_not_found=True)
        infos = self.filesystem().get_file_info(sel)
        return sorted(i.path.removeprefix(self.container + "/") for i in infos if i.type == pafs.FileType.File)


@pytest.fixture(scope="session")
def azurite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzuriteServer]:
    """Azurite (``.ci/azurite.sh``) on a free port over a throwaway folder, with a random
    account name and key, and one container."""
    import base64

    _setup("azurite.sh")
    root = tmp_path_factory.mktemp("azurite")
    port = free_port()
    srv = AzuriteServer(port, "pig" + secrets.token_hex(4), base64.b64encode(secrets.token_bytes(32)).decode())
    env = {"AZURITE_PORT": str(port), "AZURITE_DIR": str(root / "data"), "AZURITE_ACCOUNTS": f"{srv.account}:{srv.key}"}
    p = Process("azurite.sh", env, root / "azurite.log")
    p.start()
    try:
        p.wait_ready(lambda: _http_ok(f"http://{srv.authority}/{srv.account}?comp=list"), timeout=60)
        srv.filesystem().create_dir(srv.container)
        yield srv
    finally:
        p.stop()
