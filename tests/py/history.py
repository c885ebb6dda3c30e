"""A table with a history for the time-travel and metadata-table tests: create, appends, an
overwrite, deletes and updates in copy-on-write and merge-on-read, a branch and a tag."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

import pyiceberg_go as ig

T = "local.db.t"


def rows(first: int, n: int) -> pa.Table:
    ids = list(range(first, first + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([f"c{i % 3}" for i in ids])})


@dataclass
class History:
    #: main's snapshots in commit order
    main: list[int]
    branch_head: int
    tag_snapshot: int


def build(format_version: int = 2) -> History:
    """Writes the history (every commit's snapshot comes from the library's results)."""
    main = []
    main.append(
        ig.writeTo(rows(0, 10), T)
        .partitionedBy("cat")
        .tableProperty("format-version", str(format_version))
        .tableProperty("write.delete.mode", "merge-on-read")
        .tableProperty("write.update.mode", "copy-on-write")
        .create()
        .snapshot_id
    )
    t = ig.table(T)
    main.append(ig.writeTo(rows(10, 5), T).append().snapshot_id)
    tag_at = main[-1]
    t.create_tag("v1")
    main.append(ig.writeTo(rows(100, 4), T).overwrite("cat = 'c1'").snapshot_id)
    main.append(t.update({"cat": "'cx'"}, where="id = 6").snapshot_id)  # copy-on-write
    t.create_branch("b")
    branch_head = ig.writeTo(rows(200, 3), f"{T}.branch_b").append().snapshot_id
    main.append(t.delete("cat = 'c2'").snapshot_id)  # whole files: metadata-only
    main.append(t.delete("id IN (0, 3)").snapshot_id)  # merge-on-read: position deletes
    ids = [s for s in main if s is not None]
    assert len(ids) == len(main), main
    return History(main=ids, branch_head=branch_head, tag_snapshot=tag_at)
