"""Write benchmark: pyiceberg-go against PyIceberg, delta-rs, Spark 4.1 + Iceberg and a raw pyarrow write.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/run.py            # TPC-H lineitem SF1, 3 interleaved runs, all workloads, writes docs/benchmarks.md
    .venv/bin/python bench/run.py --quick    # SF 0.01, 1 run, no Spark, no docs: checks the harness works
    .venv/bin/python bench/run.py --quick --spark   # the same with Spark
    .venv/bin/python bench/run.py --runs 5 --workloads W1,W3 --only pyiceberg.append,spark.append

Every measurement runs in its own fresh subprocess (this file with --child), so a writer's peak
RSS is its own. The child loads the cached Parquet data into memory as a pyarrow Table, does any
untimed set-up (catalog, empty table, imports), records its RSS baseline, resets the kernel's
high-water mark (/proc/self/clear_refs), times only the write call, reads the peak (VmHWM) and
then checks the row count read back from what was written.

Spark runs in its child's JVM (bench/sparkbench.py): the session start and the loading of the data
into Spark's memory (`.cache().count()`) are timed separately and happen before the write is timed;
its peak RSS is the JVM's (clear_refs and VmHWM of the JVM process).

Workloads:
    W1  append to an unpartitioned table
    W2  append to a table partitioned by months(l_shipdate)
    W3  append to a table partitioned by identity(l_shipmode)
    L1  W2 with distribution-mode hash (ours vs Spark)
    L2  W2 with sort order (l_shipdate, l_orderkey) and distribution-mode range (ours vs Spark)
    W4  200 commits of 1,000 rows each to one unpartitioned table (latency per commit)
    W5  streaming append from a lazy RecordBatchReader: 1x and Nx the data (default 10x), ours only
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import summary  # noqa: E402  (the README's table, regenerated after every write of the docs)

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
CACHE = BENCH / ".data"  # git-ignored: generated data, scratch output, raw results
DOCS = ROOT / "docs" / "benchmarks.md"
OURS_LIB_ENV = "PYICEBERG_GO_LIBRARY"  # what pyiceberg_go loads; else its bundled _lib/ copy
OURS_BUILT = ROOT / "build" / "libpyiceberg_go.so"
# PyIceberg 0.12 needs its Rust extension for partitioned writes (month transform); the project's
# virtualenv does not pin it, so the harness installs it into the cache when it is missing.
PYDEPS = CACHE / "pydeps"
PYICEBERG_CORE = "pyiceberg-core==0.10.1"

SF1_ROWS = 6_001_215
TABLE = "bench.lineitem"
CATALOG = "local"
CHILD_TIMEOUT_S = 3600
W4_ROWS_PER_COMMIT = 1_000
SORT_KEYS = ("l_shipdate", "l_orderkey")

WORKLOADS = {
    "W1": "append to an unpartitioned table",
    "W2": "append to a table partitioned by months(l_shipdate)",
    "W3": "append to a table partitioned by identity(l_shipmode)",
    "L1": "W2 with write option `distribution-mode` = hash (the default for a partitioned table)",
    "L2": "W2 with table sort order (l_shipdate, l_orderkey) and write option `distribution-mode` = range "
          "(the default for a sorted table)",
    "W4": "small appends: {commits} commits of 1,000 rows each (the first rows of lineitem) to one "
          "unpartitioned table, latency per commit",
    "W5": "streaming append to an unpartitioned table from a lazy pyarrow RecordBatchReader that reads the "
          "Parquet file batch by batch, 1x and {mult}x over (l_orderkey shifted each pass); peak RSS vs input size",
}
PARTITIONED = {"W2": "month", "L1": "month", "L2": "month", "W3": "identity"}
DISTRIBUTION = {"L1": "hash", "L2": "range"}


def base_workload(wl: str) -> str:
    """W5x10 -> W5: the streaming workload carries its multiplier in its name."""
    return wl.split("x", 1)[0]


def w5_mult(wl: str) -> int:
    return int(wl.split("x", 1)[1]) if "x" in wl else 1


@dataclasses.dataclass(frozen=True)
class Competitor:
    name: str
    workloads: tuple[str, ...]
    what: str
    ours: bool = False
    spark: bool = False


COMPETITORS = [
    Competitor("pyiceberg_go.create", ("W1", "W2", "W3", "L1", "L2"),
               "ours: `ig.writeTo(data, t)[.partitionedBy(...)][.sortedBy(...)].create()` (CTAS)", ours=True),
    Competitor("pyiceberg_go.append", ("W1", "W2", "W3", "L1", "L2", "W4", "W5"),
               "ours: `ig.writeTo(data, t)[.option('distribution-mode', m)].append()` into an existing empty "
               "table (W5: `data` is the RecordBatchReader)", ours=True),
    Competitor("pyiceberg.append", ("W1", "W2", "W3", "W4"),
               "PyIceberg `tbl.append(data)` on SqlCatalog (sqlite), table created beforehand"),
    Competitor("pyarrow.write_table", ("W1",),
               "`pyarrow.parquet.write_table(data, path, compression='zstd')`, one file"),
    Competitor("deltalake.write_deltalake", ("W1", "W2", "W3", "W4"),
               "delta-rs `write_deltalake` (W2: `partition_by` a precomputed `l_shipmonth` column; W3: "
               "`partition_by=['l_shipmode']`; W4: `mode='append'` into a table created beforehand)"),
    Competitor("spark.append", ("W1", "W2", "W3", "L1", "L2"),
               "Spark 4.1.4 + Iceberg 1.12.0, local[2]: `df.writeTo(t)[.option('distribution-mode', m)].append()` "
               "of a cached DataFrame into an empty table made by `CREATE TABLE ... AS SELECT ... LIMIT 0` "
               "(+ `ALTER TABLE ... WRITE ORDERED BY` for L2), JDBC catalog on SQLite", spark=True),
]
BY_NAME = {c.name: c for c in COMPETITORS}
OURS_REF = ("pyiceberg_go.create", "pyiceberg_go.append")


# --------------------------------------------------------------------------- child side

def _status_mb(key: str, pid: str = "self") -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) / 1024 if m else float("nan")


def _reset_peak(pid: str = "self") -> bool:
    """Resets VmHWM to the current RSS so the peak measured afterwards is the write's own."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _plain_schema(schema):
    """tpchgen writes Utf8View; every writer here takes plain utf8, so give them all the same."""
    import pyarrow as pa

    return pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type,
                               nullable=f.nullable) for f in schema])


def load_lineitem(path: Path, workload: str, competitor: str, max_rows: int | None = None):
    """Reads the cached Parquet file (or its first max_rows rows) into memory as a pyarrow Table of plain types."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if max_rows is None:
        raw = pq.read_table(path)
    else:
        batches, n = [], 0
        for b in pq.ParquetFile(path).iter_batches(batch_size=max_rows):
            batches.append(b.slice(0, max_rows - n))
            n += batches[-1].num_rows
            if n >= max_rows:
                break
        raw = pa.Table.from_batches(batches)
    table = raw.cast(_plain_schema(raw.schema))
    del raw
    if not pa.types.is_date32(table.schema.field("l_shipdate").type):
        raise SystemExit(f"l_shipdate is {table.schema.field('l_shipdate').type}, expected date32")
    if competitor == "deltalake.write_deltalake" and workload == "W2":
        # Delta has no hidden partitioning: the month column is materialised before timing.
        month = pc.strftime(table.column("l_shipdate"), format="%Y-%m")
        table = table.append_column(pa.field("l_shipmonth", pa.string(), nullable=False), month)
    return table


def stream_lineitem(path: Path, mult: int):
    """A lazy RecordBatchReader over the Parquet file read `mult` times, l_orderkey shifted on every pass."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    schema = _plain_schema(f.schema_arrow)
    stats = [f.metadata.row_group(i).column(0).statistics for i in range(f.metadata.num_row_groups)]
    shift = max(s.max for s in stats) + 1  # column 0 is l_orderkey
    key = schema.get_field_index("l_orderkey")

    def gen():
        for k in range(mult):
            # pre_buffer=False: pyarrow 26 defaults to pre-buffering, which keeps every
            # row group it has read (the whole 220 MB file by the end of a pass).
            for b in pq.ParquetFile(path, pre_buffer=False).iter_batches():
                b = b.cast(schema)
                if k:
                    b = b.set_column(key, schema.field(key), pc.add(b.column(key), pa.scalar(k * shift, pa.int64())))
                yield b

    return pa.RecordBatchReader.from_batches(schema, gen())


def expected_facts(path: Path, workload: str) -> dict:
    """Row count and distinct partition values of the input, computed with pyarrow from the Parquet file."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    base = base_workload(workload)
    if base == "W5":
        return {"rows": pq.read_metadata(path).num_rows * w5_mult(workload)}
    if base == "W4":
        return {"rows": W4_ROWS_PER_COMMIT * int(os.environ.get("BENCH_W4_COMMITS", "200"))}
    out = {"rows": pq.read_metadata(path).num_rows}
    kind = PARTITIONED.get(base)
    if kind == "month":
        col = pq.read_table(path, columns=["l_shipdate"]).column("l_shipdate")
        out["partitions"] = len(pc.unique(pc.strftime(col, format="%Y-%m")))
    elif kind == "identity":
        out["partitions"] = len(pc.unique(pq.read_table(path, columns=["l_shipmode"]).column("l_shipmode")))
    return out


def _dir_bytes(d: Path, suffix: str | None = None) -> tuple[int, int]:
    total, files = 0, 0
    for p in d.rglob("*"):
        if p.is_file() and (suffix is None or (p.name.endswith(suffix) and "_delta_log" not in p.parts)):
            total += p.stat().st_size
            files += 1
    return total, files


def _parquet_rows(d: Path) -> int:
    import pyarrow.parquet as pq

    # Delta's _delta_log holds checkpoint Parquet files of log actions, not data.
    return sum(pq.read_metadata(p).num_rows for p in d.rglob("*.parquet") if "_delta_log" not in p.parts)


def sorted_files(d: Path) -> dict:
    """How many data files are sorted by (l_shipdate, l_orderkey), read from the files themselves.

    Every file's two key columns are read and checked row by row (vectorised): each row's key must not
    be below the previous row's. Also checks row-group statistics of l_shipdate are monotone.
    """
    import numpy as np
    import pyarrow.parquet as pq

    files = sorted(d.rglob("*.parquet"))
    n_sorted = 0
    for p in files:
        t = pq.read_table(p, columns=list(SORT_KEYS))
        a = t.column(SORT_KEYS[0]).to_numpy().astype("int64")
        b = t.column(SORT_KEYS[1]).to_numpy()
        da, db = np.diff(a), np.diff(b)
        ok = bool(np.all((da > 0) | ((da == 0) & (db >= 0))))
        md = pq.read_metadata(p)
        ci = md.schema.to_arrow_schema().get_field_index(SORT_KEYS[0])
        rg = [md.row_group(i).column(ci).statistics for i in range(md.num_row_groups)]
        ok = ok and all(x.max <= y.min for x, y in zip(rg, rg[1:]) if x is not None and y is not None
                        and x.has_min_max and y.has_min_max)
        n_sorted += ok
    return {"files": len(files), "sorted_files": n_sorted}


def _sql_catalog(work: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(CATALOG, uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}/wh")


def _pyiceberg_create(work: Path, schema, workload: str):
    from pyiceberg.transforms import IdentityTransform, MonthTransform

    cat = _sql_catalog(work)
    cat.create_namespace_if_not_exists("bench")
    tbl = cat.create_table(TABLE, schema=schema, properties={"write.parquet.compression-codec": "zstd"})
    kind = PARTITIONED.get(base_workload(workload))
    if kind:
        with tbl.update_spec() as spec:
            if kind == "month":
                spec.add_field("l_shipdate", MonthTransform(), "l_shipdate_month")
            else:
                spec.add_field("l_shipmode", IdentityTransform(), "l_shipmode")
    return tbl


def _verify_iceberg(work: Path, workload: str, facts: dict) -> dict:
    cat = _sql_catalog(work)
    tbl = cat.load_table(TABLE)
    out = {"rows_read_back": tbl.scan().count(), "rows_in_parquet_footers": _parquet_rows(work / "wh"),
           # Optional columns cost the encoder definition levels: the table's shape is part of the work.
           "required_columns": sum(1 for f in tbl.schema().fields if f.required),
           "columns": len(tbl.schema().fields)}
    spec = tbl.spec()
    out["partition_spec"] = str(spec)
    base = base_workload(workload)
    kind = PARTITIONED.get(base)
    if kind:
        source = "l_shipdate" if kind == "month" else "l_shipmode"
        ok = [f for f in spec.fields if str(f.transform) == kind
              and tbl.schema().find_field(f.source_id).name == source]
        out["spec_ok"] = bool(ok) and len(spec.fields) == 1
        out["partitions"] = tbl.inspect.partitions().num_rows
        out["expected_partitions"] = facts["partitions"]
    else:
        out["spec_ok"] = spec.is_unpartitioned()
    if base == "L2":
        order = tbl.sort_order()
        names = [tbl.schema().find_field(f.source_id).name for f in order.fields]
        out["sort_order"] = str(order)
        out["spec_ok"] = out["spec_ok"] and names == list(SORT_KEYS)
    if base in ("L1", "L2"):
        out.update(sorted_files(work / "wh"))
    if base == "W4":
        snaps = tbl.snapshots()
        out["snapshots_with_rows"] = sum(1 for s in snaps if int(s.summary.get("added-records", 0) or 0) > 0)
    return out


def _ours_ready() -> dict:
    """Says why ours cannot run ("skip"), or which package and library it is ("version")."""
    try:
        import pyiceberg_go as ig
    except Exception as e:  # any import failure means "not ready", reported verbatim
        return {"skip": f"`import pyiceberg_go` failed: {type(e).__name__}: {e}"}
    missing = [n for n in ("configure", "writeTo", "months") if not hasattr(ig, n)]
    if missing:
        return {"skip": f"pyiceberg_go lacks {', '.join(missing)}"}
    lib = os.environ.get(OURS_LIB_ENV) or str(Path(ig.__file__).parent / "_lib" / "libpyiceberg_go.so")
    if not Path(lib).exists():
        return {"skip": f"no library: {OURS_BUILT.relative_to(ROOT)} is not built and {lib} does not exist"}
    try:
        lib_version = ig.library_version() if hasattr(ig, "library_version") else "?"
        abi = ig.abi_version() if hasattr(ig, "abi_version") else "?"
    except Exception as e:
        return {"skip": f"library {lib} does not load: {type(e).__name__}: {e}"}
    st = Path(lib).stat()
    return {"version": f"package {getattr(ig, '__version__', '?')}, library {lib_version or '?'} (ABI {abi}) "
                       f"at {lib}, built {dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc):%Y-%m-%d %H:%M} "
                       f"UTC, {st.st_size / 1e6:.0f} MB"}


def _ours_builder(ig, df, ident: str, workload: str):
    """ig.writeTo for this workload's table definition (used for CTAS, also of 0 rows)."""
    base = base_workload(workload)
    w = ig.writeTo(df, ident).tableProperty("write.parquet.compression-codec", "zstd")
    kind = PARTITIONED.get(base)
    if kind == "month":
        w = w.partitionedBy(ig.months("l_shipdate"))
    elif kind == "identity":
        w = w.partitionedBy("l_shipmode")
    if base == "L2":
        w = w.sortedBy(*SORT_KEYS)
    if base in DISTRIBUTION:
        w = w.option("distribution-mode", DISTRIBUTION[base])
    return w


def _latencies(result: dict, lat: list[float]) -> None:
    lat_sorted = sorted(lat)
    result["commit_latencies_s"] = lat
    result["p50_s"] = statistics.median(lat)
    result["p95_s"] = lat_sorted[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]


def child(args) -> None:
    import gc

    import pyarrow as pa

    name, workload, work = args.child, args.workload, Path(args.workdir)
    base = base_workload(workload)
    path = Path(args.data)
    result: dict = {"competitor": name, "workload": workload}
    facts = expected_facts(path, workload)
    if name.startswith("spark."):
        from sparkbench import spark_child  # bench/ is on the child's path (it is this file's folder)

        spark_child(result, workload, path, work, facts, _status_mb, _reset_peak)
        _finish(args, result, facts, work)
        return

    if base == "W5":
        data = None
        result["input_bytes"] = 0
        import pyarrow.parquet as pq

        schema = _plain_schema(pq.ParquetFile(path).schema_arrow)
    else:
        data = load_lineitem(path, workload, name, facts["rows"] if base == "W4" else None)
        result["chunks"] = data.column(0).num_chunks
        result["input_bytes"] = data.nbytes
        schema = data.schema
    result["rows"] = facts["rows"]
    chunks = None
    if base == "W4":
        # The commits' inputs are sliced before timing (zero-copy views of the loaded rows).
        chunks = [data.slice(i, W4_ROWS_PER_COMMIT) for i in range(0, facts["rows"], W4_ROWS_PER_COMMIT)]

    # Untimed set-up: imports, catalogs, empty tables.
    write = None
    out_dir = work / "out"
    if name.startswith("pyiceberg_go."):
        import pyiceberg_go as ig

        props = {"type": "sql", "uri": f"sqlite:///{work}/catalog.db", "warehouse": f"file://{work}/wh"}
        if name == "pyiceberg_go.append":
            # The empty table gets the input's nullability, as PyIceberg's create_table gives its
            # table: both append the same rows into tables of the same shape (required columns).
            # `create` keeps Spark's CTAS default (every column optional).
            props["use-nullable-query-schema"] = "false"
        ig.configure(catalogs={CATALOG: props})
        # Load the library (dlopen, Go runtime start) before timing, as the other writers' imports are.
        t0 = time.perf_counter()
        ig.abi_version()
        result["library_load_s"] = time.perf_counter() - t0
        ident = f"{CATALOG}.{TABLE}"

        def appender(df):
            w = ig.writeTo(df, ident)
            return w.option("distribution-mode", DISTRIBUTION[base]) if base in DISTRIBUTION else w

        if name == "pyiceberg_go.create":
            write = lambda: _ours_builder(ig, data, ident, workload).create()  # noqa: E731
        else:
            try:
                _ours_builder(ig, schema.empty_table(), ident, workload).create()
                result["empty_table_by"] = "pyiceberg_go (CTAS of 0 rows)"
            except Exception as e:
                # Still a fair append: the table exists and is empty; say how it was made.
                result["empty_table_by"] = f"PyIceberg (ours failed: {type(e).__name__}: {e})"
                _pyiceberg_create(work, schema, workload)
            if base == "W4":
                def write():
                    lat = []
                    for c in chunks:
                        t = time.perf_counter()
                        appender(c).append()
                        lat.append(time.perf_counter() - t)
                    return lat
            elif base == "W5":
                reader = stream_lineitem(path, w5_mult(workload))
                write = lambda: appender(reader).append()  # noqa: E731
            else:
                write = lambda: appender(data).append()  # noqa: E731
    elif name == "pyiceberg.append":
        tbl = _pyiceberg_create(work, schema, workload)
        if base == "W4":
            def write():
                lat = []
                for c in chunks:
                    t = time.perf_counter()
                    tbl.append(c)
                    lat.append(time.perf_counter() - t)
                return lat
        else:
            write = lambda: tbl.append(data)  # noqa: E731
    elif name == "pyarrow.write_table":
        import pyarrow.parquet as pq

        out_dir.mkdir(parents=True)
        write = lambda: pq.write_table(data, out_dir / "lineitem.parquet", compression="zstd")  # noqa: E731
    elif name == "deltalake.write_deltalake":
        from deltalake import WriterProperties, write_deltalake

        props = WriterProperties(compression="ZSTD")
        part = {"W2": ["l_shipmonth"], "W3": ["l_shipmode"]}.get(base)
        if base == "W4":
            write_deltalake(str(out_dir), schema.empty_table(), writer_properties=props)

            def write():
                lat = []
                for c in chunks:
                    t = time.perf_counter()
                    write_deltalake(str(out_dir), c, mode="append", writer_properties=props)
                    lat.append(time.perf_counter() - t)
                return lat
        else:
            write = lambda: write_deltalake(str(out_dir), data, partition_by=part,  # noqa: E731
                                            writer_properties=props)
    else:
        raise SystemExit(f"unknown competitor {name}")

    gc.collect()
    pa.default_memory_pool().release_unused()
    result["rss_baseline_mb"] = _status_mb("VmRSS")
    result["peak_reset"] = _reset_peak()
    t0 = time.perf_counter()
    ret = write()
    result["seconds"] = time.perf_counter() - t0
    result["rss_peak_mb"] = _status_mb("VmHWM")
    result["rss_after_mb"] = _status_mb("VmRSS")
    if base == "W4":
        _latencies(result, ret)
    elif name.startswith("pyiceberg_go."):
        metrics = getattr(ret, "metrics", None)
        result["ours_result"] = metrics if isinstance(metrics, dict) else repr(ret)[:300]
    del data, chunks
    _finish(args, result, facts, work)


def _finish(args, result: dict, facts: dict, work: Path) -> None:
    """Untimed checks: what was written reads back with the right rows, partitions and layout."""
    import pyarrow as pa

    name, workload = result["competitor"], result["workload"]
    base = base_workload(workload)
    out_dir = work / "out"
    rows = facts["rows"]
    result["rows"] = rows
    if name.startswith(("pyiceberg_go.", "pyiceberg.", "spark.")):
        result["check"] = _verify_iceberg(work, workload, facts)
        result["data_bytes"], result["data_files"] = _dir_bytes(work / "wh", ".parquet")
        result["total_bytes"], _ = _dir_bytes(work / "wh")
    elif name == "pyarrow.write_table":
        import pyarrow.parquet as pq

        n = pq.read_metadata(out_dir / "lineitem.parquet").num_rows
        result["check"] = {"rows_read_back": n, "rows_in_parquet_footers": n, "spec_ok": True}
        result["data_bytes"], result["data_files"] = _dir_bytes(out_dir, ".parquet")
        result["total_bytes"], _ = _dir_bytes(out_dir)
    else:
        from deltalake import DeltaTable

        dtab = DeltaTable(str(out_dir))
        actions = pa.table(dtab.get_add_actions(flatten=True))
        part = {"W2": ["l_shipmonth"], "W3": ["l_shipmode"]}.get(base, [])
        chk = {"rows_read_back": int(pa.compute.sum(actions.column("num_records")).as_py() or 0),
               "rows_in_parquet_footers": _parquet_rows(out_dir),
               "spec_ok": dtab.metadata().partition_columns == part}
        if part:
            chk["partitions"] = len(set(actions.column(f"partition.{part[0]}").to_pylist()))
            chk["expected_partitions"] = facts["partitions"]
        if base == "W4":
            chk["snapshots_with_rows"] = dtab.version()  # version 0 is the empty create
        result["check"] = chk
        result["data_bytes"], result["data_files"] = _dir_bytes(out_dir, ".parquet")
        result["total_bytes"], _ = _dir_bytes(out_dir)

    c = result["check"]
    problems = []
    for key in ("rows_read_back", "rows_in_parquet_footers"):
        if c[key] != rows:
            problems.append(f"{key}={c[key]} != {rows}")
    if not c["spec_ok"]:
        problems.append(f"unexpected partitioning or sort order: {c.get('partition_spec', '?')} {c.get('sort_order', '')}")
    if "partitions" in c and c["partitions"] != c["expected_partitions"]:
        problems.append(f"partitions={c['partitions']} != {c['expected_partitions']} distinct values")
    if base == "W4" and c.get("snapshots_with_rows") != rows // W4_ROWS_PER_COMMIT:
        problems.append(f"{c.get('snapshots_with_rows')} commits with rows, expected {rows // W4_ROWS_PER_COMMIT}")
    result["ok"] = not problems
    result["problems"] = problems
    Path(args.result).write_text(json.dumps(result, default=str))


# --------------------------------------------------------------------------- parent side

def ensure_data(sf: str) -> Path:
    """Generates lineitem at this scale factor once into the cache; returns the Parquet path."""
    target = CACHE / f"tpch-sf{sf}" / "lineitem.parquet"
    if target.exists():
        return target
    tmp = CACHE / f"tpch-sf{sf}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    gen = Path(sys.executable).parent / "tpchgen-cli"
    cmd = [str(gen), "parquet", "-s", sf, "--tables", "lineitem", "--output-dir", str(tmp),
           "--field-ids", "false", "--no-progress", "-q"]
    print(f"generating TPC-H lineitem SF{sf}: {' '.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True)
    import pyarrow.parquet as pq

    n = pq.read_metadata(tmp / "lineitem.parquet").num_rows
    if float(sf) == 1.0 and n != SF1_ROWS:
        raise SystemExit(f"generated {n} rows at SF1, expected {SF1_ROWS}")
    target.parent.mkdir(parents=True, exist_ok=True)
    (tmp / "lineitem.parquet").rename(target)
    shutil.rmtree(tmp, ignore_errors=True)
    return target


def ensure_pydeps() -> None:
    """Installs pyiceberg-core into the cache unless the virtualenv already has it."""
    probe = subprocess.run([sys.executable, "-c", "import pyiceberg_core"], capture_output=True)
    if probe.returncode == 0 or (PYDEPS / "pyiceberg_core").exists():
        return
    print(f"installing {PYICEBERG_CORE} into {PYDEPS.relative_to(ROOT)} (PyIceberg needs it for W2)", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(PYDEPS),
                    PYICEBERG_CORE], check=True)


_CHILD_ENV_EXTRA: dict[str, str] = {}


def child_env() -> dict:
    env = dict(os.environ)
    paths = [str(ROOT), str(PYDEPS)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    if not env.get(OURS_LIB_ENV) and OURS_BUILT.exists():
        env[OURS_LIB_ENV] = str(OURS_BUILT)
    env.update(_CHILD_ENV_EXTRA)
    return env


def ours_status() -> dict:
    """Asks a throwaway interpreter whether ours can run (the parent never loads the library)."""
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--check-ours"], capture_output=True,
                       text=True, env=child_env(), cwd=ROOT)
    if p.returncode != 0:
        return {"skip": f"readiness check crashed: {p.stderr.strip().splitlines()[-1:]}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_child(name: str, workload: str, data: Path, run: int, log) -> dict:
    work = CACHE / "work" / f"{workload}-{name}-{run}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    res_file = work / "result.json"
    if BY_NAME[name].ours:
        # The namespace is a precondition, as in Spark; made by PyIceberg in a separate process so
        # neither its time nor its memory counts for ours.
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--prepare-namespace", str(work)],
                       check=True, env=child_env(), cwd=ROOT, stdout=log, stderr=log)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--workload", workload,
           "--data", str(data), "--workdir", str(work), "--result", str(res_file)]
    log.flush()
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, env=child_env(), cwd=ROOT)
    timer = threading.Timer(CHILD_TIMEOUT_S, proc.kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)  # per-child rusage, unlike RUSAGE_CHILDREN
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode == 0 and res_file.exists():
        res = json.loads(res_file.read_text())
    else:
        res = {"competitor": name, "workload": workload, "ok": False,
               "problems": [f"child exited with {proc.returncode}; see {log.name}"]}
    res["rss_child_lifetime_peak_mb"] = usage.ru_maxrss / 1024
    res["run"] = run
    shutil.rmtree(work, ignore_errors=True)
    os.sync()  # flush this writer's dirty pages now, not during the next writer's timing
    return res


def versions(ours: dict, spark: dict | None = None) -> dict:
    from importlib import metadata

    v = {"python": platform.python_version()}
    for dist in ("pyarrow", "pyiceberg", "pyiceberg-core", "deltalake", "tpchgen-cli", "sqlalchemy", "pyspark"):
        try:
            v[dist] = next(metadata.distributions(name=dist, path=sys.path + [str(PYDEPS)])).version
        except StopIteration:
            v[dist] = "not installed"
    if spark and "jars" in spark:
        from sparkbench import jar_names

        v["spark jars"] = ", ".join(jar_names())
        j = subprocess.run(["java", "-version"], capture_output=True, text=True)
        v["java"] = (j.stderr.strip().splitlines() or ["?"])[0]
    v["pyiceberg_go"] = ours.get("version") or f"skipped ({ours['skip']})"
    return v


def machine() -> dict:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text())
    return {"nproc": len(os.sched_getaffinity(0)), "memory_gb": round(int(mem.group(1)) / 1024 ** 2, 1),
            "cpu": cpu, "kernel": platform.release()}


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _med(rs: list[dict], key: str):
    vals = [r[key] for r in rs if key in r]
    return statistics.median(vals) if vals else None


def summarise(results: list[dict], workloads: list[str]) -> list[dict]:
    rows = []
    for wl in workloads:
        for comp in COMPETITORS:
            rs = [r for r in results if r["competitor"] == comp.name and r["workload"] == wl]
            if not rs:
                continue
            good = [r for r in rs if r.get("ok")]
            row = {"workload": wl, "competitor": comp.name, "runs": len(rs), "ok_runs": len(good),
                   "problems": sorted({p for r in rs for p in r.get("problems", [])})}
            if good:
                secs = [r["seconds"] for r in good]
                row.update({
                    "median_s": statistics.median(secs), "min_s": min(secs), "max_s": max(secs),
                    "all_s": secs, "rows": good[0]["rows"],
                    "rows_per_s": good[0]["rows"] / statistics.median(secs),
                    "peak_mb": _med(good, "rss_peak_mb"), "baseline_mb": _med(good, "rss_baseline_mb"),
                    "lifetime_peak_mb": _med(good, "rss_child_lifetime_peak_mb"),
                    "data_bytes": _med(good, "data_bytes"), "total_bytes": _med(good, "total_bytes"),
                    "files": _med(good, "data_files"),
                    "peak_reset": all(r.get("peak_reset") for r in good),
                    "input_bytes": good[0].get("input_bytes", 0),
                    "p50_s": _med(good, "p50_s"), "p95_s": _med(good, "p95_s"),
                    "session_start_s": _med(good, "session_start_s"), "load_s": _med(good, "load_s"),
                    "warmup_s": _med(good, "warmup_s"),
                })
                chk = good[0]["check"]
                row["partitions"] = chk.get("partitions")
                if "required_columns" in chk:
                    row["required_columns"], row["columns"] = chk["required_columns"], chk["columns"]
                if "sorted_files" in chk:
                    row["sorted_files"] = [r["check"]["sorted_files"] for r in good]
                    row["checked_files"] = [r["check"]["files"] for r in good]
            rows.append(row)
    for row in rows:
        # W4 compares the median commit latency, the others the median wall time of the write.
        key = "p50_s" if base_workload(row["workload"]) == "W4" else "median_s"
        for ref in OURS_REF:
            ours = next((r for r in rows if r["workload"] == row["workload"] and r["competitor"] == ref
                         and r.get(key)), None)
            if ours and row.get(key):
                row[f"ratio_{ref}"] = ours[key] / row[key]
    return rows


def _rate(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e5 else f"{x / 1e3:.1f}k"


def _ratio(r: dict, k: str) -> str:
    return f"{r[k]:.2f}" if k in r else "-"


def _failed_line(r: dict, cols: int) -> str:
    return (f"| {r['workload']} | {r['competitor']} | FAILED ({r['ok_runs']}/{r['runs']} ok): "
            f"{'; '.join(r['problems'])[:200]} |" + " |" * (cols - 3))


def _layout(r: dict) -> str:
    parts = []
    if r.get("partitions"):
        parts.append(f"{r['partitions']} partitions")
    if "sorted_files" in r:
        parts.append("sorted files " + ", ".join(f"{s}/{f}" for s, f in zip(r["sorted_files"], r["checked_files"])))
    if r.get("columns"):
        parts.append(f"{r['required_columns']}/{r['columns']} columns required")
    return "; ".join(parts) or "-"


def markdown_main(rows: list[dict]) -> str:
    head = ("| workload | writer | median s (min-max) | rows/s | ours create / this | ours append / this "
            "| peak RSS MB | baseline MB | write extra MB | data MB (files) | layout | rows read back |")
    cols = head.count("|") - 1
    lines = [head, "|" + "---|" * cols]
    for r in rows:
        if base_workload(r["workload"]) in ("W4", "W5"):
            continue
        if "median_s" not in r:
            lines.append(_failed_line(r, cols))
            continue
        spark = " (JVM)" if BY_NAME[r["competitor"]].spark else ""
        lines.append(
            f"| {r['workload']} | {r['competitor']} | {r['median_s']:.2f} ({r['min_s']:.2f}-{r['max_s']:.2f}) "
            f"| {_rate(r['rows_per_s'])} | {_ratio(r, 'ratio_pyiceberg_go.create')} "
            f"| {_ratio(r, 'ratio_pyiceberg_go.append')} | {r['peak_mb']:.0f}{spark} | {r['baseline_mb']:.0f} "
            f"| {r['peak_mb'] - r['baseline_mb']:.0f} | {r['data_bytes'] / 1e6:.1f} ({r['files']:.0f}) "
            f"| {_layout(r)} | {r['rows']:,} ({r['ok_runs']}/{r['runs']} runs ok) |")
    return "\n".join(lines)


def markdown_w4(rows: list[dict]) -> str:
    head = ("| workload | writer | p50 ms per commit | p95 ms per commit | ours / this (p50) | total s (min-max) "
            "| peak RSS MB | baseline MB | data files | rows read back |")
    cols = head.count("|") - 1
    lines = [head, "|" + "---|" * cols]
    for r in rows:
        if base_workload(r["workload"]) != "W4":
            continue
        if "median_s" not in r:
            lines.append(_failed_line(r, cols))
            continue
        lines.append(
            f"| {r['workload']} | {r['competitor']} | {r['p50_s'] * 1e3:.1f} | {r['p95_s'] * 1e3:.1f} "
            f"| {_ratio(r, 'ratio_pyiceberg_go.append')} | {r['median_s']:.2f} ({r['min_s']:.2f}-{r['max_s']:.2f}) "
            f"| {r['peak_mb']:.0f} | {r['baseline_mb']:.0f} | {r['files']:.0f} "
            f"| {r['rows']:,} ({r['ok_runs']}/{r['runs']} runs ok) |")
    return "\n".join(lines)


def markdown_w5(rows: list[dict]) -> str:
    w5 = [r for r in rows if base_workload(r["workload"]) == "W5"]
    if not w5:
        return ""
    head = ("| workload | writer | rows | median s (min-max) | rows/s | peak RSS MB | baseline MB "
            "| write extra MB | peak / 1x peak | data MB (files) | rows read back |")
    cols = head.count("|") - 1
    lines = [head, "|" + "---|" * cols]
    one = next((r for r in w5 if w5_mult(r["workload"]) == 1 and "peak_mb" in r), None)
    for r in w5:
        if "median_s" not in r:
            lines.append(_failed_line(r, cols))
            continue
        rel = f"{r['peak_mb'] / one['peak_mb']:.2f}" if one else "-"
        lines.append(
            f"| {r['workload']} | {r['competitor']} | {r['rows']:,} | {r['median_s']:.2f} "
            f"({r['min_s']:.2f}-{r['max_s']:.2f}) | {_rate(r['rows_per_s'])} | {r['peak_mb']:.0f} "
            f"| {r['baseline_mb']:.0f} | {r['peak_mb'] - r['baseline_mb']:.0f} | {rel} "
            f"| {r['data_bytes'] / 1e6:.1f} ({r['files']:.0f}) | {r['ok_runs']}/{r['runs']} runs ok |")
    return "\n".join(lines)


def spark_note(rows: list[dict]) -> str:
    sp = [r for r in rows if BY_NAME[r["competitor"]].spark and r.get("session_start_s") is not None]
    if not sp:
        return ""
    starts = ", ".join(f"{r['workload']} {r['session_start_s']:.1f} s" for r in sp)
    loads = ", ".join(f"{r['workload']} {r['load_s']:.1f} s" for r in sp)
    warm = ", ".join(f"{r['workload']} {r['warmup_s']:.1f} s" for r in sp if r.get("warmup_s") is not None)
    return (f"Spark, not in the times above (medians per workload): session start {starts}; reading the "
            f"Parquet input and `.cache().count()` {loads}; warm-up write of 50,000 rows into a twin table "
            f"(then dropped) {warm}. Spark's peak RSS is its JVM's (driver heap "
            f"`spark.driver.memory=4g`, which also holds the cached input).")


# Issue 7's targets: ours / theirs at most this, per workload and competitor (W4: median commit
# latency; the others: wall time of the operation).
TARGETS = (
    ("W1", "pyiceberg.append", 0.5), ("W1", "pyarrow.write_table", 0.7),
    ("W2", "pyiceberg.append", 0.33), ("W2", "deltalake.write_deltalake", 0.8), ("W2", "spark.append", 0.5),
    ("W3", "pyiceberg.append", 0.33), ("W3", "deltalake.write_deltalake", 0.8), ("W3", "spark.append", 0.5),
    ("W4", "pyiceberg.append", 0.2),
)
EXTRA_LIMIT = 0.3  # W1-W3: peak RSS at most 1.3x the input, so the write adds at most 0.3x of it
W5_LIMIT, W5_CAP_MB = 1.2, 1.5e9 / 2**20  # 1.5 GB, in the MiB RSS is read in


def _per_run(results: list[dict], a: tuple[str, str], b: tuple[str, str], key) -> list[float]:
    """a's figure over b's (each a workload and competitor), in each run where both succeeded."""
    by = {}
    for r in results:
        w = (r["workload"], r["competitor"])
        if w in (a, b) and r.get("ok"):
            by.setdefault(r["run"], {})[w] = key(r)
    return [v[a] / v[b] for _, v in sorted(by.items()) if a in v and b in v and v[b]]


def _times(ratio: float, limit: float) -> str:
    """ratio as 0.00x, with a third decimal where two would round it onto the limit."""
    return f"{ratio:.3f}x" if round(ratio, 2) == limit else f"{ratio:.2f}x"


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "-"


def targets(rows: list[dict], results: list[dict]) -> list[dict]:
    """Each target of issue 7 with the figure of medians, the same ratio run by run, and whether it is met."""
    out = []
    row = {(r["workload"], r["competitor"]): r for r in rows}
    for wl, theirs, limit in TARGETS:
        key = (lambda r: r["p50_s"]) if wl == "W4" else (lambda r: r["seconds"])
        for ours in OURS_REF:
            them = row.get((wl, theirs), {})
            if f"ratio_{ours}" not in them:
                continue
            ratio = them[f"ratio_{ours}"]
            out.append({"target": f"{wl} {ours.split('.')[1]} / {theirs.split('.')[0]}", "limit": f"{limit}x",
                        "value": _times(ratio, limit), "per_run": _spread(_per_run(results, (wl, ours), (wl, theirs), key)),
                        "met": ratio <= limit})
    for wl in ("W1", "W2", "W3"):
        for ours in OURS_REF:
            r = row.get((wl, ours))
            if not r or "peak_mb" not in r or not r.get("input_bytes"):
                continue
            # RSS is read in KiB (shown as MB = MiB): the input's bytes in the same unit.
            line = EXTRA_LIMIT * r["input_bytes"] / 2**20
            extra = r["peak_mb"] - r["baseline_mb"]
            runs = [x["rss_peak_mb"] - x["rss_baseline_mb"] for x in results
                    if x["workload"] == wl and x["competitor"] == ours and x.get("ok")]
            out.append({"target": f"{wl} {ours.split('.')[1]} write extra", "limit": f"{line:.0f} MB",
                        "value": f"{extra:.0f} MB", "per_run": f"{min(runs):.0f}-{max(runs):.0f} MB",
                        "met": extra <= line})
    w5 = {w5_mult(r["workload"]): r for r in rows if base_workload(r["workload"]) == "W5" and "peak_mb" in r}
    big = max(w5, default=1)
    if 1 in w5 and big > 1:
        ratio = w5[big]["peak_mb"] / w5[1]["peak_mb"]
        per = _per_run(results, (w5[big]["workload"], w5[big]["competitor"]),
                       (w5[1]["workload"], w5[1]["competitor"]), lambda r: r["rss_peak_mb"])
        out.append({"target": f"W5 {big}x peak / 1x peak", "limit": f"{W5_LIMIT}x", "value": _times(ratio, W5_LIMIT),
                    "per_run": _spread(per), "met": ratio <= W5_LIMIT})
        out.append({"target": f"W5 {big}x peak", "limit": f"{W5_CAP_MB:.0f} MB", "value": f"{w5[big]['peak_mb']:.0f} MB",
                    "per_run": "-", "met": w5[big]["peak_mb"] < W5_CAP_MB})
    return out


def markdown_targets(rows: list[dict], results: list[dict]) -> str:
    ts = targets(rows, results)
    if not ts:
        return ""
    lines = ["| target | at most | this run (medians) | run by run: median (min-max) | met |", "|---|---|---|---|---|"]
    for t in ts:
        lines.append(f"| {t['target']} | {t['limit']} | {t['value']} | {t['per_run']} | {'yes' if t['met'] else '**no**'} |")
    return "\n".join(lines)


# The other generators' sections of docs/benchmarks.md, each between its own markers, in this order
# after run.py's part. Nothing else in the file survives a rewrite: the file is generated only.
OTHER_SECTIONS = (
    "bench/dml.py",
    "bench/sqlmerge.py",
    "bench/commits.py",
    "bench/read.py",
    "bench/metatables.py",
    "bench/streaming.py",
    "bench/maintenance.py",
    "bench/ray_write.py",
)


def other_sections(text: str) -> list[str]:
    """The sections the other generators wrote into text, markers included, each ending in a newline."""
    out = []
    for who in OTHER_SECTIONS:
        begin, end = f"<!-- {who}: begin -->", f"<!-- {who}: end -->"
        if begin in text and end in text.split(begin, 1)[1]:
            body = text.split(begin, 1)[1].split(end, 1)[0]
            out.append(begin + body + end + "\n")
    return out


def target(ratio: float, limit: float) -> str:
    """A ratio against an issue's target: ``0.42x (met: <= 0.5x)``."""
    return f"{ratio:.2f}x ({'met' if ratio <= limit else 'missed'}: <= {limit}x)"


def write_section(who: str, section: str) -> None:
    """Puts ``section`` (markers included) in docs/benchmarks.md as generator ``who``'s part.

    run.py's part comes first, then the others in OTHER_SECTIONS order; then the README's table
    is regenerated from the new document (bench/summary.py)."""
    text = DOCS.read_text() if DOCS.exists() else "# Write benchmarks\n"
    cut = min([text.index(f"<!-- {w}: begin -->") for w in OTHER_SECTIONS if f"<!-- {w}: begin -->" in text] or [len(text)])
    parts = dict(zip([w for w in OTHER_SECTIONS if f"<!-- {w}: begin -->" in text], other_sections(text), strict=True))
    parts[who] = section if section.endswith("\n") else section + "\n"
    body = "\n".join(parts[w] for w in OTHER_SECTIONS if w in parts)
    DOCS.write_text(text[:cut].rstrip("\n") + "\n\n" + body)
    summary.update_readme()


def write_docs(rows, info, results) -> None:
    m, v = info["machine"], info["versions"]
    ver = "\n".join(f"- {k}: {val}" for k, val in v.items())
    comp = "\n".join(f"- `{c.name}` ({', '.join(c.workloads)}): {c.what}" for c in COMPETITORS)
    wl = "\n".join(f"- {k}: {d.format(commits=info['w4_commits'], mult=info['w5_mult'])}"
                   for k, d in WORKLOADS.items())
    skipped = "".join(f"\n**{who} was skipped in this run: {why}.**\n" for who, why in info["skipped"].items())
    w5 = markdown_w5(rows)
    w5_block = f"""
### W5: streaming append, memory against input size

{w5}

`peak / 1x peak` compares each run's peak RSS with the 1x run's (the issue's target: within 1.2x at
10x the input, and under 1.5 GB). The input is never in memory as a whole: the reader decodes the
Parquet file batch by batch (64k rows) inside the timed call, so the time includes that decoding.
""" if w5 else ""
    tg = markdown_targets(rows, results)
    targets_block = f"""
### Against issue 7's targets

{tg}

`this run (medians)` is the ratio of the medians in the tables above; `run by run` is the same
ratio taken within each run where both writers succeeded (for Spark, the runs it took part in).
Write extra is peak RSS less the baseline (which holds the input), against 0.3x the input's
{info['input_mb'] * 1e6 / 2**20:.0f} MB (MB here are MiB, as RSS is read).
""" if tg else ""
    tail = "\n".join(other_sections(DOCS.read_text() if DOCS.exists() else ""))
    DOCS.write_text(f"""# Write benchmarks

Generated by `bench/run.py`; do not edit by hand, rerun the command below. Earlier runs and what
they showed are in `docs/measurements.md`, the decisions they support in `docs/decisions.md`.

- Date: {info['date']}
- Command: `{info['command']}`{f" ({info['wall_min']:.0f} minutes)" if info['wall_min'] else ""}
- Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory_gb']} GB memory, Linux {m['kernel']}; shared with
  other work, so wall times of the same write vary between runs (see min-max)
- Load on the machine during the run: {info['load']}
- Data: TPC-H lineitem SF{info['sf']} ({info['rows']:,} rows, 16 columns, {info['input_mb']:.0f} MB in Arrow,
  {info['chunks']} chunks), generated once with `tpchgen-cli parquet` and read fully into memory by each
  writer's process before timing (W5 streams it instead); `l_shipdate` is `date32`, decimals are
  `decimal128(15,2)`, strings `utf8`.
- Runs: {"up to " if info.get('cut_short') else ""}{info['runs']} per writer and workload (Spark: {info['spark_runs']}, W5: {info['w5_runs']}, to fit the
  time budget), interleaved (the writer order rotates each run); medians.
{f"- **Cut short: {info['cut_short']}.**" + chr(10) if info.get('cut_short') else ""}{info['remeasured']}{skipped}
## Results

### W1-W3, L1, L2: one append of the whole table

{markdown_main(rows)}

`ours create / this` and `ours append / this` are ratios of median wall times: below 1.00 means
pyiceberg-go is faster than that writer by that factor. `layout` is what the verification read back:
partitions in the table, for L1/L2 how many data files are sorted by (l_shipdate, l_orderkey)
in each run (every row checked, and the row groups' l_shipdate statistics monotone), and how many
of the Iceberg table's columns are required (see "Table shape" below).

{spark_note(rows)}

### W4: small appends

{markdown_w4(rows)}

`ours / this (p50)` is the ratio of the median commit latency of ours to that writer's (each run's
median over its {info['w4_commits']} commits, then the median over runs; p95 likewise). Total is the
whole loop.
{w5_block}{targets_block}
## Versions

{ver}

## What is measured

{wl}

{comp}

- Every writer runs in its own fresh Python process per run, on the same in-memory pyarrow Table,
  with zstd at the writer's default level and its default threading.
- Wall time covers only the write call (for Iceberg writers: data files plus the catalog commit).
  Imports, catalog and empty-table creation happen before timing; `ours create` is CTAS (the table
  is created by the timed call), `ours append` appends into an empty table created beforehand
  (by ours, a CTAS of 0 rows; the raw JSON's `empty_table_by` says if PyIceberg had to make it).
  The `bench` namespace is created beforehand by PyIceberg in a separate process. All Iceberg
  writers use a SQLite catalog named `local` on local disk, readable by PyIceberg (Spark through
  Iceberg's JdbcCatalog with `jdbc.schema-version=V1`).
- Spark: a fresh `local[2]` session per measurement (Spark's defaults otherwise: adaptive query
  execution, 200 shuffle partitions coalesced by AQE), the input read from the same Parquet file and
  cached in memory (`.cache().count()`) before timing, and the session warmed by the same write of
  50,000 rows into a twin table (dropped afterwards); only `df.writeTo(t).append()` is timed. Its
  table is created by Spark SQL with the same partitioning and sort order, so its columns are
  nullable (Spark reads Parquet columns as nullable).
- Table shape: the input declares every column `not null`. PyIceberg's `create_table` keeps that
  (required columns). `ours append` appends into a table of that same shape: its empty table is
  made with the catalog property `use-nullable-query-schema=false`, which keeps the input's
  nullability. `ours create` is a CTAS with Spark's default, every column optional, so its files
  carry definition levels the others' do not (the `layout` column says how many columns each
  table has required).
  L1/L2 pass `distribution-mode` as a write option to both ours and Spark; L2's table has the sort
  order (ours: `sortedBy(...)` at create; Spark: `ALTER TABLE ... WRITE ORDERED BY`).
- PyIceberg needs its Rust extension `pyiceberg-core` for the month transform (W2); the virtualenv
  does not pin it, so the harness installs the version PyIceberg 0.12 requires into `bench/.data/`.
- Delta Lake has no hidden partitioning, so for W2 a `l_shipmonth` string column (`YYYY-MM`) is
  added to the data before timing; its cost is not in delta-rs's time.
- `pyarrow.write_table` is the single-threaded C++ Parquet encoder writing one file: the reference
  for the encoding work itself (W1 only).
- Peak RSS is the process's VmHWM after the write, with the high-water mark reset to the current
  RSS (`/proc/self/clear_refs`) just before timing; baseline is the RSS after loading the data and
  set-up; "write extra" is the difference. For Spark it is the JVM process's. (The whole-process
  peak of the Python child, including loading, is in the raw JSON as `rss_child_lifetime_peak_mb`.)
- Output: Parquet data bytes and file count; "on disk" adds metadata (Iceberg manifests and
  metadata JSON, Delta log). Writes go to the page cache; nobody fsyncs, and the harness calls
  `sync` between writers so one writer's flush does not land in the next one's time.
- Correctness, each run: rows read back (PyIceberg `scan().count()` for Iceberg tables, including
  Spark's, the Delta log's `num_records`, the Parquet footer for pyarrow) and the sum of rows in the
  Parquet footers on disk both equal the input; for partitioned workloads the partition spec is the
  expected one and the number of partitions equals the number of distinct values in the data
  (computed with pyarrow); L2's table has the sort order; W4 has one snapshot (Delta: one version)
  with rows per commit.
""" + ("\n" + tail if tail else ""))
    summary.update_readme()


def parent(args) -> int:
    began = time.monotonic()
    sf = "0.01" if args.quick and args.sf is None else (args.sf or "1")
    runs = args.runs if args.runs is not None else (1 if args.quick else 3)
    commits = args.w4_commits or (20 if args.quick else 200)
    mult = args.w5_mult or (2 if args.quick else 10)
    _CHILD_ENV_EXTRA["BENCH_W4_COMMITS"] = str(commits)
    spark_runs = min(runs, args.spark_runs) if args.spark_runs else runs
    w5_runs = min(runs, args.w5_runs) if args.w5_runs else runs
    names = [c.name for c in COMPETITORS]
    if args.only:
        names = [n.strip() for n in args.only.split(",")]
        unknown = [n for n in names if n not in BY_NAME]
        if unknown:
            raise SystemExit(f"unknown competitor(s) {unknown}; known: {list(BY_NAME)}")
    workloads = []
    for w in (w.strip() for w in args.workloads.split(",")):
        if w not in WORKLOADS:
            raise SystemExit(f"unknown workload {w}; known: {list(WORKLOADS)}")
        workloads += ["W5x1", f"W5x{mult}"] if w == "W5" else [w]
    skipped: dict[str, str] = {}
    ours = {"skip": "--skip-ours given"} if args.skip_ours else ours_status()
    if ours.get("skip") and any(BY_NAME[n].ours for n in names):
        print(f"SKIPPING pyiceberg_go (ours): {ours['skip']}. No numbers are reported for it.", flush=True)
        names = [n for n in names if not BY_NAME[n].ours]
        skipped["pyiceberg_go"] = ours["skip"]
    from sparkbench import choose_spark

    names, spark = choose_spark(names, lambda n: BY_NAME[n].spark, args.quick, args.spark, _CHILD_ENV_EXTRA)
    if spark and "skip" in spark:
        skipped["Spark"] = spark["skip"]

    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / ".gitignore").write_text("# everything here is generated by bench/run.py\n*\n")
    ensure_pydeps()
    load_before = loadavg()
    data = ensure_data(sf)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    log_path = CACHE / f"children-{stamp}.log"
    partial = CACHE / f"partial-{stamp}.jsonl"
    info_args = dict(args=args, began=began, sf=sf, runs=runs, spark_runs=spark_runs if spark else 0,
                     w5_runs=w5_runs, ours=ours, spark=spark, skipped=skipped, commits=commits, mult=mult,
                     load_before=load_before)
    (CACHE / f"partial-{stamp}.info.json").write_text(json.dumps(
        {k: v for k, v in info_args.items() if k not in ("args", "began")}
        | {"argv": sys.argv[1:], "workloads": workloads}, default=str))
    results = []
    with open(log_path, "w") as log:
        for run in range(runs):
            for wl in workloads:
                if base_workload(wl) == "W5" and run >= w5_runs:
                    continue
                order = [n for n in names if base_workload(wl) in BY_NAME[n].workloads
                         and (run < spark_runs or not BY_NAME[n].spark)]
                k = run % len(order) if order else 0
                for name in order[k:] + order[:k]:
                    res = run_child(name, wl, data, run, log)
                    results.append(res)
                    with open(partial, "a") as f:  # for --render if the run is cut short
                        f.write(json.dumps(res, default=str) + "\n")
                    shown = f"{res['seconds']:.2f} s" if "seconds" in res else "no time"
                    state = "ok" if res.get("ok") else "FAILED " + "; ".join(res.get("problems", []))
                    note = res.get("empty_table_by", "")
                    note = f"  (empty table made by {note})" if note.startswith("PyIceberg") else ""
                    if "p50_s" in res:
                        note += f"  p50 {res['p50_s'] * 1e3:.1f} ms p95 {res['p95_s'] * 1e3:.1f} ms"
                    if "session_start_s" in res:
                        note += f"  session start {res['session_start_s']:.1f} s, load {res.get('load_s', 0):.1f} s"
                    if "sorted_files" in res.get("check", {}):
                        note += f"  sorted files {res['check']['sorted_files']}/{res['check']['files']}"
                    print(f"run {run + 1}/{runs} {wl:6s} {name:28s} {shown:>10s}  "
                          f"peak {res.get('rss_peak_mb', float('nan')):.0f} MB  {state}{note}", flush=True)

    return report(results, workloads, stamp, log_path, **info_args)


def report(results, workloads, stamp, log_path, *, args, began, sf, runs, spark_runs, w5_runs, ours, spark,
           skipped, commits, mult, load_before, argv=None, cut_short=None, prior=None) -> int:
    """Summarises results, prints the tables, saves the raw JSON and (unless quick) rewrites the docs."""
    rows = summarise(results, workloads)
    first = next((r for r in results if r.get("input_bytes")), {})
    entry = os.environ.get("BENCH_ENTRY", f"{Path(sys.executable).relative_to(ROOT) if Path(sys.executable).is_relative_to(ROOT) else sys.executable} bench/run.py")
    info = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join([entry] + (argv if argv is not None else sys.argv[1:])),
        "machine": machine(), "versions": versions(ours, spark),
        "load": f"{load_before} before, {loadavg()} after (1/5/15-minute load averages)", "sf": sf, "runs": runs,
        "spark_runs": spark_runs, "w5_runs": w5_runs,
        "rows": first.get("rows", 0), "input_mb": first.get("input_bytes", 0) / 1e6,
        "chunks": first.get("chunks", 0), "skipped": skipped, "w4_commits": commits, "w5_mult": mult,
        "wall_min": (time.monotonic() - began) / 60 if began is not None else None, "cut_short": cut_short,
        "remeasured": "".join(f"- {r['workload']} {r['competitor']} run {r['run'] + 1} was re-measured "
                              f"{r['remeasured']}.\n" for r in results if r.get("remeasured")),
    }
    if prior:
        # Re-rendered: when, how and how long are the run's own, not the re-rendering's.
        info.update({k: prior[k] for k in ("date", "command", "load", "wall_min") if k in prior})
    (CACHE / f"results-{stamp}.json").write_text(json.dumps({"info": info, "summary": rows, "results": results},
                                                            indent=1, default=str))
    print()
    for who, why in skipped.items():
        print(f"{who} skipped: {why}")
    if args.quick:
        print("QUICK MODE: small data, one run; the times below only show the harness works.")
    print(markdown_main(rows))
    print()
    print(markdown_w4(rows))
    print()
    print(markdown_w5(rows))
    print()
    if args.quick:
        print("Issue 7's targets are for SF1: at this scale the table below only shows it is computed.")
    print(markdown_targets(rows, results))
    note = spark_note(rows)
    if note:
        print("\n" + note)
    print(f"\nraw results: {(CACHE / f'results-{stamp}.json').relative_to(ROOT)}; child logs: "
          f"{log_path.relative_to(ROOT)}")
    if not args.quick and not args.no_docs:
        write_docs(rows, info, results)
        print(f"wrote {DOCS.relative_to(ROOT)}")
    failed = [r for r in results if not r.get("ok")]
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="SF 0.01, 1 run, 20 commits in W4, 2x in W5, no Spark (unless --spark), no docs")
    ap.add_argument("--spark", action="store_true", help="run Spark in --quick mode too")
    ap.add_argument("--runs", type=int, help="runs per writer and workload (default 3, quick 1)")
    ap.add_argument("--sf", help="TPC-H scale factor (default 1, quick 0.01)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="comma-separated subset of " + ",".join(WORKLOADS))
    ap.add_argument("--w4-commits", type=int, help="W4's number of 1,000-row commits (default 200, quick 20)")
    ap.add_argument("--w5-mult", type=int, help="W5's larger input, times the data (default 10, quick 2)")
    ap.add_argument("--spark-runs", type=int, help="Spark takes part in the first N runs only (default: all)")
    ap.add_argument("--w5-runs", type=int, help="W5 takes part in the first N runs only (default: all)")
    ap.add_argument("--only", help="comma-separated writers to run: " + ", ".join(BY_NAME))
    ap.add_argument("--skip-ours", action="store_true", help="do not run pyiceberg_go")
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    ap.add_argument("--render", help="rewrite the report and docs from bench/.data/partial-<stamp>.jsonl")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--check-ours", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--prepare-namespace", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.render:
        # Rebuild the report of a run (cut short, or to re-render it) from its partial-<stamp>.jsonl.
        part = Path(args.render)
        meta = json.loads(part.with_suffix(".info.json").read_text())
        results = [json.loads(line) for line in part.read_text().splitlines() if line.strip()]
        stamp = part.stem.removeprefix("partial-")
        args.quick = False
        # A run cut short reports the runs it completed, not the ones it was asked for.
        done = max((r["run"] for r in results), default=-1) + 1
        # A run that finished saved its results-<stamp>.json; one stopped early did not.
        saved = CACHE / f"results-{stamp}.json"
        prior = json.loads(saved.read_text()).get("info") if saved.exists() else None
        if prior is None or done < meta["runs"]:
            meta["cut_short"] = (f"asked for {meta['runs']} runs, the run was stopped for lack of time after "
                                 f"{len(results)} measurements, the last in run {done}; the tables hold those")
        meta["runs"] = done
        meta["spark_runs"] = min(meta["spark_runs"], done)
        meta["w5_runs"] = min(meta["w5_runs"], done)
        return report(results, meta.pop("workloads"), stamp, CACHE / f"children-{stamp}.log", args=args,
                      began=None, prior=prior, **meta)
    if args.prepare_namespace:
        _sql_catalog(Path(args.prepare_namespace)).create_namespace("bench")
        return 0
    if args.check_ours:
        print(json.dumps(_ours_ready()))
        return 0
    if args.child:
        child(args)
        return 0
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
