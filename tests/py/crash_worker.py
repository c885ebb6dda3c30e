"""The writer child of test_crash.py: runs operations start, start+1, ... until killed (or count done).

    python crash_worker.py <catalog root> <seed> <start> <count> <journal>

Before operation i it appends "start i" to the journal; after the operation
returns, "done i <snapshot id or -> <total-records> <total-position-deletes>
<added-records> <deleted-records>". Each line is one write(2) on an O_APPEND
descriptor, so it is in the file (the page cache) before the next operation
begins, whenever the process is killed. "ready" means the library is loaded.
"""

from __future__ import annotations

import os
import sys

import crash_ops


def main() -> None:
    root, seed, start, count, journal = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def log(line: str) -> None:
        os.write(fd, (line + "\n").encode())

    import pyiceberg_go as ig

    ig.configure(catalogs={"local": {"type": "sql", "uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/wh"}})
    ig.table(f"local.{crash_ops.TABLE}").snapshots()  # loads the library and opens the catalog
    log("ready")
    for i in range(start, start + count):
        op = crash_ops.operation(seed, i)
        log(f"start {i}")
        r = crash_ops.run(op)
        s = r.summary
        fields = [s.get(k, "0") for k in ("total-records", "total-position-deletes", "added-records", "deleted-records")]
        log(f"done {i} {r.snapshot_id if r.snapshot_id is not None else '-'} {' '.join(fields)}")
    os.close(fd)


if __name__ == "__main__":
    main()
