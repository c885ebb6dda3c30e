"""How far one distributed commit scales: commit_files of N task descriptions in one snapshot.

Usage (from the repository root, with the project's virtualenv; not part of .ci/run):

    PYTHONPATH=$PWD .venv/bin/python bench/distributed_commit.py [N ...]   # default 100 1000

A 16-column table (15 longs and a string, lineitem's width) on the embedded SQLite catalog gets,
per N, N tasks of 10 rows written sequentially by ig.DistributedWrite.write_task (untimed for the
commit), then one timed commit of their N descriptions. Printed: the description sizes (JSON
bytes), the commit's seconds and descriptions per second, and the size of the manifest it wrote.
Numbers in docs/decisions/distributed.md.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

import pyiceberg_go as ig


def main(ns: list[int]) -> None:
    d = Path(tempfile.mkdtemp(prefix="pig-dist-bench-"))
    ig.configure(catalogs={"local": {"type": "sql", "uri": f"sqlite:///{d}/c.db", "warehouse": f"file://{d}/wh"}})
    cols = {f"c{i}": pa.array([i] * 10, pa.int64()) for i in range(14)}
    cols["s"] = pa.array(["a lineitem comment of some length"] * 10)
    cols["id"] = pa.array(range(10), pa.int64())
    data = pa.table(cols)
    ig.writeTo(data, "local.db.t").create()
    meta = d / "wh" / "db.db" / "t" / "metadata"
    for n in ns:
        before = {p.name for p in meta.glob("*.avro")}
        dw = ig.DistributedWrite("local.db.t", "append")
        t0 = time.perf_counter()
        files = [dw.write_task(data, task=i) for i in range(n)]
        t1 = time.perf_counter()
        r = dw.commit(files)
        t2 = time.perf_counter()
        sizes = [len(json.dumps(f)) for task in files for f in task]
        new = [p.stat().st_size for p in meta.glob("*.avro") if p.name not in before and not p.name.startswith("snap-")]
        print(
            f"N={n}: tasks {t1 - t0:.2f} s; description {max(sizes)} B max, {sum(sizes) / len(sizes):.0f} B mean; "
            f"commit {t2 - t1:.3f} s ({n / (t2 - t1):.0f} descriptions/s); manifest {max(new)} B "
            f"({max(new) / n:.0f} B/file); added-data-files {r.summary['added-data-files']}"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 1000])
