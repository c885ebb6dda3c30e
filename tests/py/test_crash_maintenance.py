"""SIGKILL in the middle of expire_snapshots and remove_orphan_files never costs a reachable file.

A table with history (appends, deletes, an overwrite), a tag and a branch of its own, and
planted orphan files (old ones in the data and metadata folders, a young one) is made once and
copied aside. Each round puts that copy back in place, runs one procedure in a child process
(a fresh interpreter) and kills it with SIGKILL after a delay drawn from a seeded RNG (no
assertion depends on when it died). Then, with PyIceberg:

- the table loads, main's head, the tag and the branch are where they were;
- every snapshot the metadata still lists reads exactly the rows it read before, and every
  file it references is there (expiry deletes only what no remaining snapshot reaches, orphan
  removal only what nothing reaches);
- the young orphan is still there (younger than ``older_than``).

A last round of each runs to completion: expiry has dropped snapshots, orphan removal the old
orphans, and the checks above still hold.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from test_crash import journal_lines, referenced_files_exist

import pyiceberg_go as ig

from conftest import REPO

SEED = 20261203
ROUNDS = 6
DAY_MS = 86_400_000


def _rows(tbl: Any, sid: int) -> list[tuple[Any, ...]]:
    t = tbl.scan(snapshot_id=sid).to_arrow()
    return sorted(zip(*(t.column(c).to_pylist() for c in ("id", "v"))))


def _state(root: Path) -> tuple[Any, dict[int, list[tuple[Any, ...]]]]:
    from pyiceberg.catalog.sql import SqlCatalog

    tbl = SqlCatalog("local", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/wh").load_table("db.m")
    return tbl, {s.snapshot_id: _rows(tbl, s.snapshot_id) for s in tbl.metadata.snapshots}


def _make(root: Path) -> list[Path]:
    """The table, its history and refs, and the orphans (the young one last)."""
    ig.configure(catalogs={"local": {"type": "sql", "uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/wh"}})
    rng = random.Random(SEED)
    t = "local.db.m"
    ig.writeTo(pa.table({"id": pa.array([0], pa.int64()), "v": ["seed"]}), t).partitionedBy("v").create()
    for i in range(1, 25):
        kind = rng.choice(["append", "append", "delete", "overwrite"])
        if kind == "append" or i < 4:
            ids = [i * 100 + j for j in range(rng.randint(1, 20))]
            ig.writeTo(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"p{k % 4}" for k in ids]}), t).append()
        elif kind == "delete":
            ig.table(t).delete(f"id % {rng.randint(3, 9)} = 0 AND id > {rng.randint(0, i * 100)}")
        else:
            rows = pa.table({"id": pa.array([i * 1000], pa.int64()), "v": [f"p{i % 4}"]})
            ig.writeTo(rows, t).overwrite(f"v = 'p{i % 4}' AND id < {i * 50}")
        if i == 8:
            ig.sql(f"ALTER TABLE {t} CREATE TAG kept")
        if i == 12:
            ig.sql(f"ALTER TABLE {t} CREATE BRANCH side")
            ig.writeTo(pa.table({"id": pa.array([-1], pa.int64()), "v": ["side"]}), t + ".branch_side").append()
    old = time.time() - 10 * 86_400
    orphans = []
    for rel in ("wh/db.db/m/data/v=p1/orphan-1.parquet", "wh/db.db/m/data/orphan-2.parquet", "wh/db.db/m/metadata/orphan-3.avro"):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"not reachable")
        os.utime(p, (old, old))
        orphans.append(p)
    young = root / "wh/db.db/m/data/young.parquet"
    young.write_bytes(b"a write in flight")
    orphans.append(young)
    return orphans


def _spawn(root: Path, what: str, older_than: int, journal: Path) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(REPO / "tests" / "py"), env.get("PYTHONPATH", "")]))
    env["PYICEBERG_GO_PROGRESS"] = "0"
    cmd = [sys.executable, str(REPO / "tests" / "py" / "crash_maintenance_worker.py"), str(root), what, str(older_than), str(journal)]
    return subprocess.Popen(cmd, env=env, cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _check(root: Path, before: dict[int, list[tuple[Any, ...]]], refs: dict[str, int], young: Path) -> Any:
    tbl, after = _state(root)
    assert set(after) <= set(before), f"snapshots appeared: {set(after) - set(before)}"
    for sid, rows in after.items():
        assert rows == before[sid], f"snapshot {sid} reads other rows than before"
    missing = referenced_files_exist(tbl)
    assert not missing, f"referenced files missing: {missing[:5]}"
    assert {name: ref.snapshot_id for name, ref in tbl.metadata.refs.items()} == refs
    assert young.exists(), "the young orphan was deleted"
    return tbl


@pytest.mark.parametrize("what", ["expire", "orphans"])
def test_killed_maintenance_leaves_every_reachable_file(what: str, tmp_path: Path) -> None:
    root, pristine = tmp_path / "t", tmp_path / "pristine"
    (root / "wh").mkdir(parents=True)
    orphans = _make(root)
    tbl, before = _state(root)
    refs = {name: ref.snapshot_id for name, ref in tbl.metadata.refs.items()}
    assert set(refs) == {"main", "kept", "side"}
    shutil.copytree(root, pristine)
    # Expire everything older than now (the procedure keeps what retain_last and the refs keep);
    # remove orphans older than a day.
    older_than = int(time.time() * 1000) + (0 if what == "expire" else -DAY_MS)
    rng = random.Random(f"{SEED}-{what}")
    ended = {"before start": 0, "during": 0, "after": 0}
    for k in range(ROUNDS + 1):
        shutil.rmtree(root)
        shutil.copytree(pristine, root)
        journal = tmp_path / f"journal-{what}-{k}"
        proc = _spawn(root, what, older_than, journal)
        last = k == ROUNDS
        try:
            if last:
                _, err = proc.communicate(timeout=120)
                assert proc.returncode == 0, err.decode()[-3000:]
            else:
                deadline = time.monotonic() + 60
                while ["ready"] not in journal_lines(journal) and proc.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.4))
        finally:
            if not last:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
            proc.stderr.close()
        lines = journal_lines(journal)
        ended["after" if ["done"] in lines else "during" if ["start"] in lines else "before start"] += 1
        tbl = _check(root, before, refs, orphans[-1])
    print(f"{what}: {ended}")
    # The round run to completion did its work.
    if what == "expire":
        assert len(tbl.metadata.snapshots) < len(before)
        assert {refs["kept"], refs["side"], refs["main"]} <= {s.snapshot_id for s in tbl.metadata.snapshots}
    else:
        assert not any(p.exists() for p in orphans[:-1]), "old orphans left"
