"""Peak RSS of a streaming write into 100 partitions does not grow with the input.

A fresh interpreter writes a lazily produced pyarrow RecordBatchReader (15x and 45x
the writer's ``max-buffered-bytes``) into a table partitioned by ``bucket(100, id)``
and reports its peak RSS (VmHWM, reset through /proc/self/clear_refs after the
library is loaded and warmed up). The bound comes from the configuration: the buffer
limit, about 3 MB of encoder state per open file (measured, see docs/decisions.md),
one input batch per open writer queue and Go's garbage-collector headroom (GOGC=100:
the heap may reach twice the live data). The children run with GOGC=100 set: the
library's own rule (core/gctune) follows the allocation rate per second, which a
loaded machine lowers, so the two runs compared could otherwise collect on different
rules.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_python

LIMIT = 8 << 20
ROWS_PER_BATCH = 20_000
PARTITIONS = 100

CHILD = """
import json, os, sys
import pyarrow as pa
import pyiceberg_go as ig

ig.configure(catalogs={"local": {"type": "sql", "uri": "sqlite:///%(root)s/c.db", "warehouse": "file://%(root)s/wh"}})
rows, nbatches = %(rows)d, %(nbatches)d
schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("v", pa.float64())])

def batches(first, n):
    for b in range(n):
        start = first + b * rows
        ids = pa.array(range(start, start + rows), pa.int64())
        yield pa.record_batch([ids, pa.array([f"name-{i %% 977}" for i in range(start, start + rows)]),
                               pa.array([i * 0.5 for i in range(start, start + rows)])], schema=schema)

def hwm_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

# warm up: load the library and create the table (not measured)
ig.writeTo(pa.Table.from_batches(list(batches(0, 1))), "db.s").partitionedBy(ig.bucket(%(parts)d, "id")).create()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = hwm_kb()
reader = pa.RecordBatchReader.from_batches(schema, batches(rows, nbatches))
r = ig.writeTo(reader, "db.s").option("max-buffered-bytes", %(limit)d).append()
print(json.dumps({"base_kb": base, "peak_kb": hwm_kb(), "rows": r.metrics["rows"], "files": r.metrics["files"]}))
"""


def stream_peak(tmp_path, nbatches: int) -> dict:
    root = tmp_path / f"s{nbatches}"
    root.mkdir()
    code = CHILD % {"root": root, "rows": ROWS_PER_BATCH, "nbatches": nbatches, "parts": PARTITIONS, "limit": LIMIT}
    proc = run_python(code, env={"GOGC": "100"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["rows"] == ROWS_PER_BATCH * nbatches
    assert out["files"] == PARTITIONS
    return out


def test_streaming_peak_rss_is_flat_and_bounded(tmp_path) -> None:
    small = stream_peak(tmp_path, 100)  # ~60 MB of Arrow data: past the encoders' warm-up
    large = stream_peak(tmp_path, 300)  # ~180 MB: 20x the buffer limit
    grow_small = (small["peak_kb"] - small["base_kb"]) << 10
    grow_large = (large["peak_kb"] - large["base_kb"]) << 10
    batch_bytes = ROWS_PER_BATCH * 30
    live_bound = LIMIT + PARTITIONS * (3 << 20) + 4 * batch_bytes
    bound = 2 * live_bound + (64 << 20)  # GOGC=100 headroom plus Python's own allocations
    print(f"peak RSS growth: {grow_small >> 20} MB (100 batches), {grow_large >> 20} MB (300 batches), bound {bound >> 20} MB")
    assert grow_large <= bound, f"peak RSS grew {grow_large >> 20} MB, bound {bound >> 20} MB"
    # Three times the input must not cost anywhere near three times the memory; some growth
    # remains from per-file encoder state still warming up and the Go heap goal following it.
    assert grow_large <= grow_small * 1.5 + (32 << 20), f"peak RSS grew with the input: {grow_small >> 20} -> {grow_large >> 20} MB"


if __name__ == "__main__":
    pytest.main([__file__, "-s"])
