"""Crash test: a writer killed with SIGKILL at random moments leaves whole operations only.

A child process (a fresh interpreter, started with subprocess: never a fork
of this one, which may have the Go runtime loaded) runs appends, deletes,
merges, overwritePartitions, updates and replaces, and the maintenance
procedures rewrite_data_files, rewrite_position_delete_files and
rewrite_manifests (which change files, never rows), on one table in a loop
(crash_ops.py, crash_worker.py), writing to a journal before each operation
and after each returns. The parent kills it after a random delay drawn from a
seeded RNG (no assertion depends on timing), then checks with PyIceberg:

- the table loads, and its rows equal the model's rows after exactly the
  operations whose commit is there: every operation that returned, plus the
  one in flight if and only if its snapshot is the new head;
- every snapshot that an operation returned is in the history, and the
  history holds no other snapshot (one operation, at most one snapshot);
- for every returned commit, the rows it left (total-records minus
  total-position-deletes) are the model's count after that operation;
- no file that the committed metadata references is missing;
- the next child continues writing (a stale lock or a half-written file
  never blocks it), and a last child runs operations to completion.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import crash_ops

import pyiceberg_go as ig

from conftest import REPO

SEED = 20261202
KILLS = 30
BUDGET_S = 60.0  # stop killing after this long once MIN_KILLS are done
MIN_KILLS = 20
READY_TIMEOUT_S = 60.0


def spawn(root: Path, start: int, count: int, journal: Path) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(REPO / "tests" / "py"), env.get("PYTHONPATH", "")]))
    env["PYICEBERG_GO_PROGRESS"] = "0"
    cmd = [sys.executable, str(REPO / "tests" / "py" / "crash_worker.py"), str(root), str(SEED), str(start), str(count), str(journal)]
    return subprocess.Popen(cmd, env=env, cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def journal_lines(journal: Path) -> list[list[str]]:
    if not journal.exists():
        return []
    return [line.split() for line in journal.read_text().splitlines() if line.strip()]


def wait_ready(proc: subprocess.Popen, journal: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if any(parts == ["ready"] for parts in journal_lines(journal)):
            return
        if proc.poll() is not None:
            raise AssertionError(f"the writer exited ({proc.returncode}) before it was ready: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.01)
    proc.kill()
    raise AssertionError(f"the writer was not ready after {READY_TIMEOUT_S} s (blocked by what an earlier one left?)")


def referenced_files_exist(tbl: Any) -> list[str]:
    """Every metadata, manifest list, manifest, data and delete file the table's metadata references."""
    io = tbl.io
    missing: list[str] = []
    seen: set[str] = set()

    def check(path: str) -> None:
        if not os.path.exists(path.removeprefix("file://")):
            missing.append(path)

    check(tbl.metadata_location)
    for snap in tbl.metadata.snapshots:
        check(snap.manifest_list)
        if missing:
            continue
        for m in snap.manifests(io):
            if m.manifest_path in seen:
                continue
            seen.add(m.manifest_path)
            check(m.manifest_path)
            if missing:
                continue
            for entry in m.fetch_manifest_entry(io, discard_deleted=True):
                check(entry.data_file.file_path)
    return missing


class Checker:
    """The parent's view: the model's rows and the snapshot each operation committed."""

    def __init__(self, root: Path) -> None:
        from pyiceberg.catalog.sql import SqlCatalog

        self.catalog = SqlCatalog("local", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/wh")
        self.rows: list[dict] = []
        self.next = 0  # the first operation not yet run
        self.head: int | None = None  # the snapshot the last committed operation left
        self.snapshots: set[int] = set()
        self.done = 0

    def commit(self, i: int, sid: int | None, totals: list[str] | None = None) -> None:
        self.rows = crash_ops.apply(self.rows, crash_ops.operation(SEED, i))
        if sid is not None:
            self.snapshots.add(sid)
            self.head = sid
            if totals is not None:
                live = int(totals[0]) - int(totals[1])
                assert live == len(self.rows), f"operation {i} ({crash_ops.operation(SEED, i)['kind']}) left {live} live rows by its summary, the model {len(self.rows)}"

    def absorb(self, journal: Path) -> bool:
        """Take the operations a (dead) child ran: those that returned, and the one in flight if it
        committed (then True)."""
        tbl = self.catalog.load_table(crash_ops.TABLE)
        current = tbl.metadata.current_snapshot_id
        in_flight = None
        landed = False
        for parts in journal_lines(journal):
            if parts[0] == "start":
                in_flight = int(parts[1])
                assert in_flight == self.next, f"operation {in_flight} started, {self.next} expected"
            elif parts[0] == "done":
                i = int(parts[1])
                assert i == in_flight
                sid = None if parts[2] == "-" else int(parts[2])
                self.commit(i, sid, parts[3:7] if sid is not None else None)
                self.done += 1
                self.next, in_flight = i + 1, None
        if in_flight is not None:
            # Killed during operation in_flight: it committed exactly when the head moved.
            op = crash_ops.operation(SEED, in_flight)
            if current != self.head:
                snap = tbl.metadata.snapshot_by_id(current)
                assert snap is not None
                if op["kind"] != "replace":
                    assert snap.parent_snapshot_id == self.head, f"operation {in_flight} ({op['kind']}) committed {current} on {snap.parent_snapshot_id}, not on {self.head}"
                summary = snap.summary.additional_properties
                self.commit(in_flight, current, [summary.get("total-records", "0"), summary.get("total-position-deletes", "0")])
                landed = True
            self.next = in_flight + 1
        self.verify(tbl)
        return landed

    def verify(self, tbl: Any) -> None:
        history = {s.snapshot_id for s in tbl.metadata.snapshots}
        assert history == self.snapshots, f"history {sorted(history)} != the returned commits {sorted(self.snapshots)}"
        assert tbl.metadata.current_snapshot_id == self.head
        got = crash_ops.multiset(tbl.scan().to_arrow().to_pylist())
        want = crash_ops.multiset(self.rows)
        assert got == want, f"after operation {self.next - 1}: missing {list((want - got).elements())[:5]}, unexpected {list((got - want).elements())[:5]}"
        missing = referenced_files_exist(tbl)
        assert not missing, f"referenced files missing: {missing[:5]}"


def test_killed_writers_leave_whole_operations(tmp_path: Path) -> None:
    root = tmp_path / "crash"
    (root / "wh").mkdir(parents=True)
    ig.configure(catalogs={"local": {"type": "sql", "uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/wh"}})
    checker = Checker(root)
    r = crash_ops.run(crash_ops.operation(SEED, 0))
    checker.commit(0, r.snapshot_id)
    checker.next = 1
    checker.verify(checker.catalog.load_table(crash_ops.TABLE))

    rng = random.Random(SEED)
    began = time.monotonic()
    kills = 0
    in_flight_committed = 0
    while kills < KILLS and not (kills >= MIN_KILLS and time.monotonic() - began > BUDGET_S):
        journal = tmp_path / f"journal-{kills}"
        proc = spawn(root, checker.next, 10_000, journal)
        try:
            wait_ready(proc, journal)
            time.sleep(rng.uniform(0.0, 1.5))
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL, f"the writer ended by itself ({proc.returncode})"
        kills += 1
        in_flight_committed += checker.absorb(journal)

    # A last writer runs operations to completion after everything the kills left.
    journal = tmp_path / "journal-last"
    proc = spawn(root, checker.next, 5, journal)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()[-3000:]
    checker.absorb(journal)
    assert checker.done >= 5, f"only {checker.done} operations returned over {kills} kills"
    print(
        f"{kills} kills, {checker.next} operations, {checker.done} returned, {in_flight_committed} committed while"
        f" killed, {len(checker.snapshots)} snapshots, {time.monotonic() - began:.1f} s"
    )
