"""The main job on the embedded catalog: create a partitioned table from a
pandas frame, append polars data, replace it, read it back with pyiceberg-go
and with PyIceberg, and print the snapshot history.

Run it with ./.ci/demo (which sets everything up first).
"""

import datetime as dt
import os
import shutil
import sys

import pandas as pd
import polars as pl

import pyiceberg_go as ig

home = os.path.abspath(os.environ.get("DEMO_HOME", "demo-warehouse"))
shutil.rmtree(home, ignore_errors=True)
ig.configure(
    catalogs={"local": {"type": "sql", "uri": f"sqlite:///{home}/catalog.db", "warehouse": f"file://{home}/warehouse"}}
)

events = pd.DataFrame(
    {
        "id": range(1, 7),
        "level": ["INFO", "WARN", "INFO", "ERROR", "INFO", "WARN"],
        "ts": pd.to_datetime(
            ["2024-01-01 10:00", "2024-01-01 11:30", "2024-01-02 09:00", "2024-02-03 08:15", "2024-02-03 23:59", "2024-03-01 00:00"]
        ),
        "message": ["boot", "slow disk", "ok", "crash", "ok", None],
    }
)

print("== create: local.demo.events partitioned by level, days(ts), bucket(4, id)")
r = (
    ig.writeTo(events, "local.demo.events")
    .partitionedBy("level", ig.days("ts"), ig.bucket(4, "id"))
    .tableProperty("write.parquet.compression-codec", "zstd")
    .create()
)
print(f"   snapshot {r.snapshot_id} ({r.operation}): {r.metrics}")

more = pl.DataFrame(
    {
        "id": [7, 8],
        "level": ["INFO", "ERROR"],
        "ts": [dt.datetime(2024, 3, 2, 12), dt.datetime(2024, 3, 3, 13)],
        "message": ["polars says hi", "disk full"],
    }
)
print("== append from polars")
r = ig.writeTo(more, "local.demo.events").option("snapshot-property.source", "demo").append()
print(f"   snapshot {r.snapshot_id} ({r.operation}): added-records={r.summary['added-records']} total-records={r.summary['total-records']}")

t = ig.table("local.demo.events")
print("== read back (current snapshot)")
print(t.to_arrow().to_pandas().sort_values("id").to_string(index=False))

print("== replace with a new layout (months(ts)); history is kept")
summary = events.groupby("level", as_index=False).agg(n=("id", "count"), last_ts=("ts", "max"))
r = ig.writeTo(summary, "local.demo.events").partitionedBy(ig.months("last_ts")).replace()
print(f"   snapshot {r.snapshot_id} ({r.operation}): total-records={r.summary['total-records']}")
print(t.to_arrow().to_pandas().sort_values("level").to_string(index=False))

print("== snapshot history")
for s in t.snapshots():
    print(f"   {s['snapshot_id']:>20}  parent={str(s['parent_id']):>20}  {s['operation']:<9} total-records={s['summary'].get('total-records')}")

first = t.snapshots()[0]["snapshot_id"]
print(f"== time travel to the first snapshot {first}: {t.to_arrow(snapshot_id=first).num_rows} rows")

print("== the same table read by PyIceberg 0.12 (SqlCatalog on the same file)")
from pyiceberg.catalog.sql import SqlCatalog

cat = SqlCatalog("local", uri=f"sqlite:///{home}/catalog.db", warehouse=f"file://{home}/warehouse")
pt = cat.load_table("demo.events")
print(f"   PyIceberg sees {len(pt.scan().to_arrow())} rows, spec {pt.spec()}, {len(pt.snapshots())} snapshots")
sys.exit(0)
