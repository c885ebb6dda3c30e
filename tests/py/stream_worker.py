"""A streaming writer child of test_streaming.py: resumes from the table and writes batches until killed.

    python stream_worker.py <catalog root> <table> <query id> <batches> <rows> <replay> <journal> [<id offset> [writer]]

It reads the query's last committed batch from the table (the table is the
checkpoint), replays up to <replay> batches before it (a source replaying from
an older checkpoint of its own: those must be skipped), then writes batches up
to <batches> - 1. Batch b holds ids offset + b * rows ... + rows - 1, and its
source offset rides in the summary as snapshot-property ``source.offset``.
Journal lines, one write(2) each: "ready", "resume <next>", "done <b> <snapshot id>",
"skip <b> <last batch id>".

With PIG_STREAM_GATE naming a file, batch b is not started while that file holds a number <= b:
the test bounds how far a writer can get before it is killed, whatever the machine's speed.

With ``writer`` it runs ``ig.writeStream`` instead (queryName <query id>, availableNow, a source
replaying every batch from 0) and logs "query <id>" and "emit <b>" as the source yields batch b.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator

import pyarrow as pa


def batch_table(b: int, rows: int, offset: int) -> pa.Table:
    first = offset + b * rows
    ids = pa.array(range(first, first + rows), pa.int64())
    return pa.table({"id": ids, "batch": pa.array([b] * rows, pa.int64())})


def gate(b: int) -> None:
    """Waits while the gate file (if any) holds a number <= b."""
    path = os.environ.get("PIG_STREAM_GATE")
    while path:
        try:
            with open(path) as f:
                limit = int(f.read().strip() or "0")
        except (FileNotFoundError, ValueError):
            return
        if b < limit:
            return
        time.sleep(0.005)


def main() -> None:
    root, table, query, batches, rows, replay, journal = sys.argv[1:8]
    offset = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    writer = len(sys.argv) > 9 and sys.argv[9] == "writer"
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def log(line: str) -> None:
        os.write(fd, (line + "\n").encode())

    import pyiceberg_go as ig

    ig.configure(
        catalogs={"local": {"type": "sql", "uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/wh"}}
    )
    if writer:

        def source() -> Iterator[pa.Table]:
            for b in range(int(batches)):
                gate(b)
                log(f"emit {b}")
                yield batch_table(b, int(rows), offset)

        q = ig.writeStream(source(), table).queryName(query).trigger(availableNow=True).start()
        log(f"query {q.id}")
        log("ready")
        q.awaitTermination()
        os.close(fd)
        return
    last = ig.table(table).last_committed_batch(query)
    log("ready")
    nxt = 0 if last is None else last.batch_id + 1
    if last is not None:
        assert int(last.summary["source.offset"]) == (last.batch_id + 1) * int(rows), last.summary
    start = max(0, nxt - int(replay))
    log(f"resume {start}")
    for b in range(start, int(batches)):
        gate(b)
        r = (
            ig.writeTo(batch_table(b, int(rows), offset), table)
            .streamBatch(query, b)
            .option("snapshot-property.source.offset", str((b + 1) * int(rows)))
            .append()
        )
        if r.skipped:
            log(f"skip {b} {r.last_batch_id}")
        else:
            log(f"done {b} {r.snapshot_id}")
    os.close(fd)


if __name__ == "__main__":
    main()
