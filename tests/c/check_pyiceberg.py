"""Reads the table create_append.c wrote with PyIceberg 0.12, an independent reader.

The expected rows are computed here from the same formulas as in create_append.c
(not read from its output): name = "n<id>" (NULL when id % 7 == 0),
ts = TS_BASE + id * TS_STEP microseconds UTC (NULL when id % 11 == 0).
Usage: check_pyiceberg.py DIR
"""

from __future__ import annotations

import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.transforms import DayTransform

TS_BASE = 1_700_000_000_000_000
TS_STEP = 5 * 3600 * 1_000_000
TOTAL_ROWS = 250
DAY_US = 86_400_000_000

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    if not cond:
        failures.append(what)
        print(f"FAIL {what}", file=sys.stderr)


def main(d: str) -> int:
    cat = SqlCatalog("local", uri=f"sqlite:///{d}/catalog.db", warehouse=f"file://{d}/wh")
    t = cat.load_table("db.t")

    got = t.scan().to_arrow().sort_by("id")
    ids = list(range(TOTAL_ROWS))
    want = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([None if i % 7 == 0 else f"n{i}" for i in ids], pa.string()),
            "ts": pa.array([None if i % 11 == 0 else TS_BASE + i * TS_STEP for i in ids], pa.int64()),
        }
    )
    check(got.column_names == ["id", "name", "ts"], f"columns {got.column_names}")
    check(got.num_rows == TOTAL_ROWS, f"{got.num_rows} rows, want {TOTAL_ROWS}")
    check(str(got.schema.field("ts").type) == "timestamp[us, tz=UTC]", f"ts type {got.schema.field('ts').type}")
    check(got.column("id").equals(want.column("id")), "id column differs")
    check(got.column("name").cast(pa.string()).equals(want.column("name")), "name column differs")
    check(got.column("ts").cast(pa.int64()).equals(want.column("ts")), "ts column differs")

    spec = t.spec()
    check(len(spec.fields) == 1, f"spec {spec}")
    f = spec.fields[0]
    check(isinstance(f.transform, DayTransform) and f.name == "ts_day", f"partition field {f}")
    check(t.schema().find_field(f.source_id).name == "ts", "partition source is not ts")

    snaps = t.snapshots()
    check(len(snaps) == 2, f"{len(snaps)} snapshots, want 2")
    if len(snaps) == 2:
        first, second = snaps
        check(first.parent_snapshot_id is None, "the CTAS snapshot has a parent")
        check(second.parent_snapshot_id == first.snapshot_id, "append is not on top of create")
        check(first.summary["added-records"] == "100", f"create summary {first.summary}")
        check(first.summary["writer"] == "c-abi-test", f"create summary {first.summary}")
        check(second.summary["total-records"] == str(TOTAL_ROWS), f"append summary {second.summary}")

    # Every data file holds only rows of its partition's day.
    files = t.inspect.files()
    check(files.num_rows > 1, f"{files.num_rows} data files for {TOTAL_ROWS} rows over many days")
    total = 0
    for path, part, count in zip(
        files.column("file_path").to_pylist(),
        files.column("partition").to_pylist(),
        files.column("record_count").to_pylist(),
    ):
        data = pq.read_table(path.removeprefix("file://"))
        total += data.num_rows
        check(data.num_rows == count, f"{path}: record_count {count}, has {data.num_rows}")
        days = pc.unique(pc.divide(data.column("ts").cast(pa.int64()), DAY_US)).to_pylist()
        day = part["ts_day"]
        if day is None:
            check(days == [None], f"{path}: null partition holds days {days}")
        else:
            # PyIceberg reports day partition values as dates or day numbers depending on version.
            dayno = day if isinstance(day, int) else (day - __import__("datetime").date(1970, 1, 1)).days
            check(days == [dayno], f"{path}: partition day {dayno} holds days {days}")
    check(total == TOTAL_ROWS, f"data files hold {total} rows")

    check_row_level(cat)
    check_layout_and_branch(cat)

    print(f"pyiceberg: {'0 failed' if not failures else f'{len(failures)} failed'}")
    return 0 if not failures else 1


def day_of(i: int) -> int | None:
    return None if i % 11 == 0 else (TS_BASE + i * TS_STEP) // DAY_US


def check_row_level(cat: SqlCatalog) -> None:
    """t3: rows 0..99 by day(ts); overwritePartitions with rows 0..9; delete id >= 50."""
    t = cat.load_table("db.t3")
    replaced = {day_of(i) for i in range(10)}
    want = sorted({i for i in range(100) if day_of(i) not in replaced} | set(range(10)))
    want = [i for i in want if i < 50]
    # merge of source ids 40..59: matched rows deleted, the others inserted.
    present = set(want)
    want = sorted({i for i in want if not 40 <= i < 60} | {i for i in range(40, 60) if i not in present})
    got = t.scan().to_arrow().sort_by("id").column("id").to_pylist()
    check(got == want, f"t3 ids {got}, want {want}")
    ops = [s.summary.operation.value for s in t.snapshots()]
    check(ops[:2] == ["append", "overwrite"] and len(ops) == 4, f"t3 operations {ops}")
    last = t.snapshots()[-1].summary
    matched = len(present & set(range(40, 60)))
    check(last["spark.merge-into.num-target-rows-matched-deleted"] == str(matched), f"merge summary {last}")
    check(last["spark.merge-into.num-target-rows-inserted"] == str(20 - matched), f"merge summary {last}")
    check(t.snapshots()[1].summary["replace-partitions"] == "true", "overwritePartitions lacks replace-partitions")


def check_layout_and_branch(cat: SqlCatalog) -> None:
    """t4: rows 0..89 sorted by id DESC; branch b adds rows 100..109; t5 was never created."""
    import pyarrow.parquet as pq

    t = cat.load_table("db.t4")
    order = t.sort_order()
    check(len(order.fields) == 1 and order.fields[0].direction.name == "DESC", f"t4 sort order {order}")
    files = t.inspect.files()
    check(set(files.column("sort_order_id").to_pylist()) == {order.order_id}, "t4 files lack the sort order id")
    for path in files.column("file_path").to_pylist():
        ids = pq.read_table(path.removeprefix("file://")).column("id").to_pylist()
        check(ids == sorted(ids, reverse=True), f"{path} is not sorted by id DESC")
    got = t.scan().to_arrow().column("id").to_pylist()
    check(sorted(got) == list(range(90)), "t4 main rows")
    b = t.metadata.snapshot_by_name("b")
    got = t.scan(snapshot_id=b.snapshot_id).to_arrow().column("id").to_pylist()
    check(sorted(got) == list(range(90)) + list(range(100, 110)), "t4 branch b rows")
    check(not cat.table_exists("db.t5"), "t5 was created by a failed write")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
