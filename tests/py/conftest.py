"""Shared fixtures: a fresh catalog per test, PyIceberg and DuckDB as independent readers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig

REPO = Path(__file__).resolve().parents[2]
CATALOG = "local"
NAMESPACE = "db"

#: The library built with the test hooks (``PIG_TAGS=pig_testhooks ./build.sh``, core/testhooks):
#: the ``__panic`` operation and the ``test.*`` session keys, which the release library rejects.
HOOKS_LIBRARY = REPO / "build" / "libpyiceberg_go_testhooks.so"


def hooks_library() -> str:
    """The test-hooks library's path; the test fails when it has not been built."""
    if not HOOKS_LIBRARY.exists():
        pytest.fail(
            f'{HOOKS_LIBRARY} is missing: build it with PIG_TAGS="pig_testhooks pyiceberg_gcs pyiceberg_azure" ./build.sh'
        )
    return str(HOOKS_LIBRARY)


def use_library(path: str) -> None:
    """Make this process load the library at ``path`` (in a child, before its first call)."""
    from pyiceberg_go import _native

    assert not _native.is_loaded(), "pyiceberg_go already loaded its library in this process"
    os.environ[_native.LIBRARY_ENV] = path


@dataclass(frozen=True)
class CatalogDir:
    """Where this test's catalog lives and the properties that open it."""

    root: Path
    uri: str
    warehouse: str

    @property
    def properties(self) -> dict[str, str]:
        return {"type": "sql", "uri": self.uri, "warehouse": self.warehouse}


@pytest.fixture(autouse=True)
def catalog_dir(tmp_path: Path) -> Iterator[CatalogDir]:
    """Each test gets its own SQLite catalog and warehouse, as the session's catalog "local"."""
    root = tmp_path / "catalog"
    (root / "wh").mkdir(parents=True)
    cat = CatalogDir(root, f"sqlite:///{root / 'catalog.db'}", f"file://{root / 'wh'}")
    ig.configure(catalogs={CATALOG: cat.properties})
    yield cat
    ig.configure()


@pytest.fixture
def pyiceberg_catalog(catalog_dir: CatalogDir) -> Any:
    """PyIceberg 0.12's SqlCatalog on the same SQLite file, same catalog name, namespace db created."""
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog(CATALOG, uri=catalog_dir.uri, warehouse=catalog_dir.warehouse)
    cat.create_namespace_if_not_exists(NAMESPACE)
    return cat


def _extension_file(module: Any, name: str) -> str:
    import duckdb

    folder = Path(module.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    path = folder / f"{name}.duckdb_extension"
    assert path.exists(), f"missing DuckDB extension file {path}"
    return str(path)


def duckdb_scan(metadata_location: str) -> pa.Table:
    """Read an Iceberg table with DuckDB's iceberg extension from its metadata.json.

    The extension wheels ship the files without the ``duckdb_extensions``
    helper package, so they are loaded by path with auto-install off.
    """
    import duckdb
    import duckdb_extension_avro
    import duckdb_extension_iceberg

    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    try:
        con.execute(f"LOAD '{_extension_file(duckdb_extension_avro, 'avro')}'")
        con.execute(f"LOAD '{_extension_file(duckdb_extension_iceberg, 'iceberg')}'")
        con.execute("SET TimeZone = 'UTC'")
        path = metadata_location.removeprefix("file://")
        return con.sql(f"SELECT * FROM iceberg_scan('{path}')").to_arrow_table()
    finally:
        con.close()


def sample(n: int = 100, seed: int = 0) -> pa.Table:
    """Deterministic test rows covering ints, strings, timestamps, dates, doubles and nulls."""
    ids = [seed * 1_000_000 + i for i in range(n)]
    levels = ["INFO", "WARN", "ERROR", None]
    base = 1_700_000_000_000_000  # 2023-11-14 in microseconds
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "level": pa.array([levels[(i + seed) % 4] for i in range(n)], pa.string()),
            "ts": pa.array([base + (i * 7 + seed) * 3_600_000_000 * 5 for i in range(n)], pa.timestamp("us", tz="UTC")),
            "day": pa.array([19000 + (i * 13 + seed) % 800 for i in range(n)], pa.date32()),
            "amount": pa.array([None if i % 10 == 3 else (i - 50) * 1.25 for i in range(n)], pa.float64()),
            "name": pa.array([f"name-{(i * 31 + seed) % 97:03d}-é" for i in range(n)], pa.string()),
        }
    )


def normalize(actual: pa.Table, expected: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Both tables with the expected columns and types (nullability and string kinds aside), sorted."""
    fields = [pa.field(f.name, f.type, True) for f in expected.schema]
    schema = pa.schema(fields)
    a = actual.select(expected.column_names).cast(schema)
    e = expected.cast(schema)
    keys = [(c, "ascending") for c in expected.column_names]
    return a.sort_by(keys), e.sort_by(keys)


def assert_same_rows(actual: pa.Table, expected: pa.Table) -> None:
    """The two tables hold the same multiset of rows (column order and row order aside)."""
    assert sorted(actual.column_names) == sorted(expected.column_names)
    a, e = normalize(actual, expected)
    assert a.num_rows == e.num_rows
    assert a.equals(e), f"rows differ:\nactual={a.slice(0, 5).to_pylist()}\nexpected={e.slice(0, 5).to_pylist()}"


def snapshot_ids(catalog: Any, name: str) -> list[int]:
    """The table's snapshot ids as PyIceberg sees them ([] if the table does not exist)."""
    from pyiceberg.exceptions import NoSuchTableError

    try:
        tbl = catalog.load_table(name)
    except NoSuchTableError:
        return []
    return [s.snapshot_id for s in tbl.metadata.snapshots]


#: Bounds waits that only guard against a hang: long enough for any load on the machine.
HANG_S = 600


def run_python(code: str, timeout: float = HANG_S, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a snippet in a fresh interpreter of this venv, with the repository on sys.path."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full_env.get("PYTHONPATH", "")]))
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=str(REPO),
    )


@contextmanager
def interrupt_when(ready: threading.Event) -> Iterator[None]:
    """Send SIGINT (Ctrl-C) to this process once ``ready`` is set, unless the block ended first.

    Tests set ``ready`` from inside the operation (a batch pulled, a progress line shown), so
    the interrupt lands while it runs however slow the machine is. Waiting is bounded by
    HANG_S only so that a test that never sets it cannot hang."""
    stop = threading.Event()

    def send() -> None:
        deadline = time.monotonic() + HANG_S
        while not stop.is_set() and not ready.wait(0.01):
            if time.monotonic() > deadline:
                break
        if not stop.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        yield
    finally:
        stop.set()
        sender.join()
