"""Other SQLite users of the catalog file, in this process and in others, never lose or hide a
commit of ours that returned.

Python's ``sqlite3`` (and SQLAlchemy and PyIceberg's ``SqlCatalog`` through it) is a second copy
of SQLite in the process. With POSIX record locks and WAL, that copy's close dropped our locks and
checkpointed and deleted the WAL our connection still wrote to: commits that had returned were
gone once the process exited. Each scenario runs in a child process; after it exits, an
independent reader (Python's sqlite3 and PyIceberg, in this process) checks that every commit
the child saw return is in the catalog and the file is intact.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, CatalogDir

PRELUDE = """
import json, sqlite3, sys, threading, os
import pyarrow as pa
import pyiceberg_go as ig

DB, WH = sys.argv[1], sys.argv[2]
ig.configure(catalogs={"local": {"type": "sql", "uri": "sqlite:///" + DB, "warehouse": WH}})

_out = threading.Lock()

def report(kind, table, snapshot_id, rows):
    # One line per commit that returned, flushed before anything else runs; one writer at a
    # time (print writes the text and its newline apart: threads' lines would interleave).
    with _out:
        sys.stdout.write(json.dumps({"kind": kind, "table": table, "snapshot": snapshot_id, "rows": rows}) + "\\n")
        sys.stdout.flush()

def ours(op, name, rows, start=0):
    data = pa.table({"a": pa.array(range(start, start + rows), pa.int64())})
    w = ig.writeTo(data, "local.db." + name)
    r = w.create() if op == "create" else w.append()
    report("ours", name, r.snapshot_id, rows)

def peek():
    c = sqlite3.connect(DB, timeout=30)
    c.execute("select count(*) from iceberg_tables").fetchall()
    c.close()

def pyiceberg():
    from pyiceberg.catalog.sql import SqlCatalog
    return SqlCatalog("local", uri="sqlite:///" + DB, warehouse=WH)
"""

SCENARIOS = {
    # The reported case: Python's sqlite3 reads the file between two of our commits.
    "sqlite3_between": """
for i in range(15):
    ours("create", f"t{i}", 1, i)
    peek()
    ours("append", "t0", 1, 100 + i)
""",
    # SQLAlchemy, as PyIceberg uses it: an engine opened, used and disposed between commits.
    "sqlalchemy_between": """
import sqlalchemy as sa
for i in range(15):
    ours("create", f"t{i}", 2, i)
    eng = sa.create_engine("sqlite:///" + DB)
    with eng.connect() as c:
        c.execute(sa.text("select count(*) from iceberg_tables")).fetchall()
    eng.dispose()
""",
    # PyIceberg's SqlCatalog reads our table and commits its own, interleaved with our commits.
    "pyiceberg_between": """
ours("create", "ours_t", 1)
cat = pyiceberg()
cat.create_namespace_if_not_exists("db")
theirs = cat.create_table("db.theirs", schema=pa.schema([pa.field("a", pa.int64())]))
for i in range(10):
    ours("append", "ours_t", 1, i + 1)
    assert len(cat.load_table("db.ours_t").scan().to_arrow()) == i + 2
    theirs.append(pa.table({"a": pa.array([i], pa.int64())}))
    report("pyiceberg", "theirs", theirs.refresh().current_snapshot().snapshot_id, 1)
""",
    # Another thread opens, reads and closes the file in a loop (and sometimes writes a row of its
    # own) while our commits run.
    "thread_open_close_loop": """
stop = threading.Event()
side = []
def loop():
    c = sqlite3.connect(DB, timeout=30)
    c.execute("create table if not exists side(x)"); c.commit(); c.close()
    n = 0
    while not stop.is_set():
        c = sqlite3.connect(DB, timeout=30)
        c.execute("select count(*) from iceberg_tables").fetchall()
        if n % 5 == 0:
            c.execute("insert into side values (?)", (n,)); c.commit()
            side.append(n)
        c.close()
        n += 1
ours("create", "loop_t", 1)
t = threading.Thread(target=loop); t.start()
try:
    for i in range(40):
        ours("append", "loop_t", 1, i + 1)
        if i % 8 == 0:
            ours("create", f"loop_{i}", 1)
finally:
    stop.set(); t.join()
print(json.dumps({"kind": "side", "rows": len(side)}), flush=True)
""",
    # PyIceberg commits to its table from a thread while we commit to ours.
    "pyiceberg_thread": """
cat = pyiceberg()
cat.create_namespace_if_not_exists("db")
theirs = cat.create_table("db.theirs_thread", schema=pa.schema([pa.field("a", pa.int64())]))
def theirs_loop():
    for i in range(15):
        theirs.append(pa.table({"a": pa.array([i], pa.int64())}))
        report("pyiceberg", "theirs_thread", theirs.refresh().current_snapshot().snapshot_id, 1)
t = threading.Thread(target=theirs_loop); t.start()
ours("create", "ours_thread", 1)
for i in range(25):
    ours("append", "ours_thread", 1, i + 1)
t.join()
""",
}


def run_child(scenario: str, cat: CatalogDir) -> subprocess.Popen[str]:
    db = cat.uri.removeprefix("sqlite:///")
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(SCENARIOS[scenario])
    return subprocess.Popen(
        [sys.executable, "-c", code, db, cat.warehouse],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO), "PYICEBERG_GO_PROGRESS": "0"},
    )


def finish(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"child failed ({proc.returncode}):\n{err[-4000:]}"
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def check_after_exit(cat: CatalogDir, reports: list[dict[str, Any]]) -> None:
    """Every commit the child saw return is in the catalog, read by independent readers."""
    from pyiceberg.catalog.sql import SqlCatalog

    db = cat.uri.removeprefix("sqlite:///")
    con = sqlite3.connect(db)
    try:
        assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
        assert con.execute("pragma journal_mode").fetchone()[0] == "delete"
        names = {r[0] for r in con.execute("select table_name from iceberg_tables")}
        side = [r for r in reports if r["kind"] == "side"]
        if side:
            assert con.execute("select count(*) from side").fetchone()[0] == side[0]["rows"]
    finally:
        con.close()
    commits = [r for r in reports if r["kind"] in ("ours", "pyiceberg")]
    assert commits, "the child reported no commit"
    assert {r["table"] for r in commits} <= names
    reader = SqlCatalog("local", uri=cat.uri, warehouse=cat.warehouse)
    for name in {r["table"] for r in commits}:
        t = reader.load_table(f"db.{name}")
        have = {s.snapshot_id for s in t.snapshots()}
        mine = [r for r in commits if r["table"] == name]
        missing = [r["snapshot"] for r in mine if r["snapshot"] not in have]
        assert not missing, f"{name}: commits that returned are missing: {missing}"
        assert len(t.scan().to_arrow()) == sum(r["rows"] for r in mine)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_other_sqlite_users_in_the_process_lose_no_commit(scenario: str, catalog_dir: CatalogDir) -> None:
    reports = finish(run_child(scenario, catalog_dir))
    check_after_exit(catalog_dir, reports)


def test_several_processes_each_with_foreign_sqlite_users(catalog_dir: CatalogDir) -> None:
    """Three processes at once, each with another thread opening and closing the file in a loop."""
    # The three scenarios use distinct table names.
    procs = [run_child(s, catalog_dir) for s in ("thread_open_close_loop", "sqlite3_between", "pyiceberg_thread")]
    reports: list[dict[str, Any]] = []
    for p in procs:
        reports += finish(p)
    check_after_exit(catalog_dir, reports)


def test_a_catalog_file_left_in_wal_mode_is_switched_to_a_rollback_journal(catalog_dir: CatalogDir) -> None:
    db = Path(catalog_dir.uri.removeprefix("sqlite:///"))
    con = sqlite3.connect(db)
    assert con.execute("pragma journal_mode=wal").fetchone()[0] == "wal"
    con.close()
    reports = finish(run_child("sqlite3_between", catalog_dir))
    check_after_exit(catalog_dir, reports)
