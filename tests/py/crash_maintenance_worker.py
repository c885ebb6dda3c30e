"""The child of test_crash_maintenance.py: runs one maintenance procedure until done or killed.

    python crash_maintenance_worker.py <catalog root> <expire|orphans> <older than ms> <journal>

It appends "ready" to the journal once the library is loaded and the catalog open, "start"
before the procedure and "done" after it returns; each line is one write(2) on an O_APPEND
descriptor.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    root, what, older_than, journal = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    import pyiceberg_go as ig

    ig.configure(catalogs={"local": {"type": "sql", "uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/wh"}})
    t = ig.table("local.db.m")
    t.snapshots()
    os.write(fd, b"ready\n")
    os.write(fd, b"start\n")
    if what == "expire":
        t.expire_snapshots(older_than=older_than, retain_last=2)
    else:
        t.remove_orphan_files(older_than=older_than)
    os.write(fd, b"done\n")
    os.close(fd)


if __name__ == "__main__":
    main()
