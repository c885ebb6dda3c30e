"""Write benchmark: pyiceberg-go against PyIceberg, delta-rs and a raw pyarrow Parquet write.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/run.py            # TPC-H lineitem SF1, 3 interleaved runs, writes docs/benchmarks.md
    .venv/bin/python bench/run.py --quick    # SF 0.01, 1 run, checks the harness works; times mean nothing
    .venv/bin/python bench/run.py --runs 5 --sf 1 --only pyiceberg.append,pyarrow.write_table

Every measurement runs in its own fresh subprocess (this file with --child), so a writer's peak
RSS is its own. The child loads the cached Parquet data into memory as a pyarrow Table, does any
untimed set-up (catalog, empty table, imports), records its RSS baseline, resets the kernel's
high-water mark (/proc/self/clear_refs), times only the write call, reads the peak (VmHWM) and
then checks the row count read back from what was written.

Workloads:
    W1  append to an unpartitioned table
    W2  append to a table partitioned by months(l_shipdate)
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

WORKLOADS = {
    "W1": "append to an unpartitioned table",
    "W2": "append to a table partitioned by months(l_shipdate)",
}


@dataclasses.dataclass(frozen=True)
class Competitor:
    name: str
    workloads: tuple[str, ...]
    what: str
    ours: bool = False


COMPETITORS = [
    Competitor("pyiceberg_go.create", ("W1", "W2"),
               "ours: `ig.writeTo(data, t)[.partitionedBy(ig.months(...))].create()` (CTAS)", ours=True),
    Competitor("pyiceberg_go.append", ("W1", "W2"),
               "ours: `ig.writeTo(data, t).append()` into an existing empty table", ours=True),
    Competitor("pyiceberg.append", ("W1", "W2"),
               "PyIceberg `tbl.append(data)` on SqlCatalog (sqlite), table created beforehand"),
    Competitor("pyarrow.write_table", ("W1",),
               "`pyarrow.parquet.write_table(data, path, compression='zstd')`, one file"),
    Competitor("deltalake.write_deltalake", ("W1", "W2"),
               "delta-rs `write_deltalake` (W2: `partition_by` a precomputed `l_shipmonth` column)"),
]
BY_NAME = {c.name: c for c in COMPETITORS}
OURS_REF = ("pyiceberg_go.create", "pyiceberg_go.append")


# --------------------------------------------------------------------------- child side

def _status_mb(key: str) -> float:
    text = Path("/proc/self/status").read_text()
    m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) / 1024 if m else float("nan")


def _reset_peak() -> bool:
    """Resets VmHWM to the current RSS so the peak measured afterwards is the write's own."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def load_lineitem(path: Path, workload: str, competitor: str):
    """Reads the cached Parquet file fully into memory as a pyarrow Table of plain types."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    raw = pq.read_table(path)
    fields = []
    for f in raw.schema:
        # tpchgen writes Utf8View; every writer here takes plain utf8, so give them all the same.
        t = pa.string() if pa.types.is_string_view(f.type) else f.type
        fields.append(pa.field(f.name, t, nullable=f.nullable))
    table = raw.cast(pa.schema(fields))
    del raw
    if not pa.types.is_date32(table.schema.field("l_shipdate").type):
        raise SystemExit(f"l_shipdate is {table.schema.field('l_shipdate').type}, expected date32")
    if competitor == "deltalake.write_deltalake" and workload == "W2":
        # Delta has no hidden partitioning: the month column is materialised before timing.
        month = pc.strftime(table.column("l_shipdate"), format="%Y-%m")
        table = table.append_column(pa.field("l_shipmonth", pa.string(), nullable=False), month)
    return table


def _dir_bytes(d: Path, suffix: str | None = None) -> tuple[int, int]:
    total, files = 0, 0
    for p in d.rglob("*"):
        if p.is_file() and (suffix is None or p.name.endswith(suffix)):
            total += p.stat().st_size
            files += 1
    return total, files


def _parquet_rows(d: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(p).num_rows for p in d.rglob("*.parquet"))


def _distinct_months(table) -> int:
    import pyarrow.compute as pc

    return len(pc.unique(pc.strftime(table.column("l_shipdate"), format="%Y-%m")))


def _sql_catalog(work: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(CATALOG, uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}/wh")


def _pyiceberg_create(work: Path, schema, workload: str):
    from pyiceberg.transforms import MonthTransform

    cat = _sql_catalog(work)
    cat.create_namespace_if_not_exists("bench")
    tbl = cat.create_table(TABLE, schema=schema, properties={"write.parquet.compression-codec": "zstd"})
    if workload == "W2":
        with tbl.update_spec() as spec:
            spec.add_field("l_shipdate", MonthTransform(), "l_shipdate_month")
    return tbl


def _verify_iceberg(work: Path, workload: str, data) -> dict:
    cat = _sql_catalog(work)
    tbl = cat.load_table(TABLE)
    out = {"rows_read_back": tbl.scan().count(), "rows_in_parquet_footers": _parquet_rows(work / "wh")}
    spec = tbl.spec()
    out["partition_spec"] = str(spec)
    if workload == "W2":
        ok = [f for f in spec.fields if str(f.transform) == "month"
              and tbl.schema().find_field(f.source_id).name == "l_shipdate"]
        out["spec_ok"] = bool(ok) and len(spec.fields) == 1
        out["partitions"] = tbl.inspect.partitions().num_rows
        out["expected_partitions"] = _distinct_months(data)
    else:
        out["spec_ok"] = spec.is_unpartitioned()
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


def child(args) -> None:
    import gc

    import pyarrow as pa

    name, workload, work = args.child, args.workload, Path(args.workdir)
    result: dict = {"competitor": name, "workload": workload}
    data = load_lineitem(Path(args.data), workload, name)
    rows = data.num_rows
    result["rows"] = rows
    result["chunks"] = data.column(0).num_chunks
    result["input_bytes"] = data.nbytes

    # Untimed set-up: imports, catalogs, empty tables.
    write = None
    out_dir = work / "out"
    if name.startswith("pyiceberg_go."):
        import pyiceberg_go as ig

        ig.configure(catalogs={CATALOG: {"type": "sql", "uri": f"sqlite:///{work}/catalog.db",
                                         "warehouse": f"file://{work}/wh"}})
        # Load the library (dlopen, Go runtime start) before timing, as the other writers' imports are.
        t0 = time.perf_counter()
        ig.abi_version()
        result["library_load_s"] = time.perf_counter() - t0
        ident = f"{CATALOG}.{TABLE}"

        def builder(df):
            w = ig.writeTo(df, ident).tableProperty("write.parquet.compression-codec", "zstd")
            return w.partitionedBy(ig.months("l_shipdate")) if workload == "W2" else w

        if name == "pyiceberg_go.create":
            write = lambda: builder(data).create()  # noqa: E731
        else:
            try:
                builder(data.slice(0, 0)).create()
                result["empty_table_by"] = "pyiceberg_go (CTAS of 0 rows)"
            except Exception as e:
                # Still a fair append: the table exists and is empty; say how it was made.
                result["empty_table_by"] = f"PyIceberg (ours failed: {type(e).__name__}: {e})"
                _pyiceberg_create(work, data.schema, workload)
            write = lambda: ig.writeTo(data, ident).append()  # noqa: E731
    elif name == "pyiceberg.append":
        tbl = _pyiceberg_create(work, data.schema, workload)
        write = lambda: tbl.append(data)  # noqa: E731
    elif name == "pyarrow.write_table":
        import pyarrow.parquet as pq

        out_dir.mkdir(parents=True)
        write = lambda: pq.write_table(data, out_dir / "lineitem.parquet", compression="zstd")  # noqa: E731
    elif name == "deltalake.write_deltalake":
        from deltalake import WriterProperties, write_deltalake

        props = WriterProperties(compression="ZSTD")
        part = ["l_shipmonth"] if workload == "W2" else None
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
    if name.startswith("pyiceberg_go."):
        metrics = getattr(ret, "metrics", None)
        result["ours_result"] = metrics if isinstance(metrics, dict) else repr(ret)[:300]

    # Untimed checks: what was written reads back with the right row count.
    if name in ("pyiceberg_go.create", "pyiceberg_go.append", "pyiceberg.append"):
        result["check"] = _verify_iceberg(work, workload, data)
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
        chk = {"rows_read_back": int(pa.compute.sum(actions.column("num_records")).as_py()),
               "rows_in_parquet_footers": _parquet_rows(out_dir),
               "spec_ok": dtab.metadata().partition_columns == (["l_shipmonth"] if workload == "W2" else [])}
        if workload == "W2":
            chk["partitions"] = len(set(actions.column("partition.l_shipmonth").to_pylist()))
            chk["expected_partitions"] = _distinct_months(data)
        result["check"] = chk
        result["data_bytes"], result["data_files"] = _dir_bytes(out_dir, ".parquet")
        result["total_bytes"], _ = _dir_bytes(out_dir)

    c = result["check"]
    problems = []
    for key in ("rows_read_back", "rows_in_parquet_footers"):
        if c[key] != rows:
            problems.append(f"{key}={c[key]} != {rows}")
    if not c["spec_ok"]:
        problems.append(f"unexpected partitioning: {c.get('partition_spec', '?')}")
    if "partitions" in c and c["partitions"] != c["expected_partitions"]:
        problems.append(f"partitions={c['partitions']} != {c['expected_partitions']} distinct months")
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


def child_env() -> dict:
    env = dict(os.environ)
    paths = [str(ROOT), str(PYDEPS)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    if not env.get(OURS_LIB_ENV) and OURS_BUILT.exists():
        env[OURS_LIB_ENV] = str(OURS_BUILT)
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


def versions(ours: dict) -> dict:
    from importlib import metadata

    v = {"python": platform.python_version()}
    for dist in ("pyarrow", "pyiceberg", "pyiceberg-core", "deltalake", "tpchgen-cli", "sqlalchemy"):
        try:
            v[dist] = next(metadata.distributions(name=dist, path=sys.path + [str(PYDEPS)])).version
        except StopIteration:
            v[dist] = "not installed"
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


def summarise(results: list[dict]) -> list[dict]:
    rows = []
    for wl in WORKLOADS:
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
                    "peak_mb": statistics.median(r["rss_peak_mb"] for r in good),
                    "baseline_mb": statistics.median(r["rss_baseline_mb"] for r in good),
                    "lifetime_peak_mb": statistics.median(r["rss_child_lifetime_peak_mb"] for r in good),
                    "data_bytes": statistics.median(r["data_bytes"] for r in good),
                    "total_bytes": statistics.median(r["total_bytes"] for r in good),
                    "files": statistics.median(r["data_files"] for r in good),
                    "peak_reset": all(r.get("peak_reset") for r in good),
                })
            rows.append(row)
    for row in rows:
        for ref in OURS_REF:
            ours = next((r for r in rows if r["workload"] == row["workload"] and r["competitor"] == ref
                         and "median_s" in r), None)
            if ours and "median_s" in row:
                row[f"ratio_{ref}"] = ours["median_s"] / row["median_s"]
    return rows


def _rate(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e5 else f"{x / 1e3:.1f}k"


def markdown(rows: list[dict]) -> str:
    head = ("| workload | writer | median s (min-max) | rows/s | ours create / this | ours append / this "
            "| peak RSS MB | baseline MB | write extra MB | data MB (files) | on disk MB | rows read back |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if "median_s" not in r:
            lines.append(f"| {r['workload']} | {r['competitor']} | FAILED ({r['ok_runs']}/{r['runs']} ok): "
                         f"{'; '.join(r['problems'])[:200]} |" + " |" * 9)
            continue
        ratio = lambda k: f"{r[k]:.2f}" if k in r else "-"  # noqa: E731
        lines.append(
            f"| {r['workload']} | {r['competitor']} | {r['median_s']:.2f} ({r['min_s']:.2f}-{r['max_s']:.2f}) "
            f"| {_rate(r['rows_per_s'])} | {ratio('ratio_pyiceberg_go.create')} "
            f"| {ratio('ratio_pyiceberg_go.append')} | {r['peak_mb']:.0f} | {r['baseline_mb']:.0f} "
            f"| {r['peak_mb'] - r['baseline_mb']:.0f} | {r['data_bytes'] / 1e6:.1f} ({r['files']:.0f}) "
            f"| {r['total_bytes'] / 1e6:.1f} | {r['rows']:,} ({r['ok_runs']}/{r['runs']} runs ok) |")
    return "\n".join(lines)


def write_docs(rows, table_md, info) -> None:
    m, v = info["machine"], info["versions"]
    ver = "\n".join(f"- {k}: {val}" for k, val in v.items())
    comp = "\n".join(f"- `{c.name}` ({', '.join(c.workloads)}): {c.what}" for c in COMPETITORS)
    wl = "\n".join(f"- {k}: {d}" for k, d in WORKLOADS.items())
    skipped = f"\n**pyiceberg_go was skipped in this run: {info['ours_skipped']}.**\n" if info["ours_skipped"] else ""
    # bench/dml.py owns everything from its marker on: keep it.
    old = DOCS.read_text() if DOCS.exists() else ""
    tail = old[old.index("<!-- bench/dml.py: begin -->") :] if "<!-- bench/dml.py: begin -->" in old else ""
    DOCS.write_text(f"""# Write benchmarks

Generated by `bench/run.py`; do not edit by hand, rerun the command below.

- Date: {info['date']}
- Command: `{info['command']}`
- Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory_gb']} GB memory, Linux {m['kernel']}
- Load on the machine during the run: {info['load']}
- Data: TPC-H lineitem SF{info['sf']} ({info['rows']:,} rows, 16 columns, {info['input_mb']:.0f} MB in Arrow,
  {info['chunks']} chunks), generated once with `tpchgen-cli parquet` and read fully into memory by each
  writer's process before timing; `l_shipdate` is `date32`, decimals are `decimal128(15,2)`, strings `utf8`.
- Runs: {info['runs']} per writer and workload, interleaved (the writer order rotates each run); medians.
{skipped}
## Results

{table_md}

`ours create / this` and `ours append / this` are ratios of median wall times: below 1.00 means
pyiceberg-go is faster than that writer by that factor.

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
  The `bench` namespace is created beforehand by PyIceberg in a separate process. Both Iceberg
  writers use a SQLite `SqlCatalog` named `local` on local disk, readable by PyIceberg.
- PyIceberg needs its Rust extension `pyiceberg-core` for the month transform (W2); the virtualenv
  does not pin it, so the harness installs the version PyIceberg 0.12 requires into `bench/.data/`.
- Delta Lake has no hidden partitioning, so for W2 a `l_shipmonth` string column (`YYYY-MM`) is
  added to the data before timing; its cost is not in delta-rs's time.
- `pyarrow.write_table` is the single-threaded C++ Parquet encoder writing one file: the reference
  for the encoding work itself (W1 only).
- Peak RSS is the process's VmHWM after the write, with the high-water mark reset to the current
  RSS (`/proc/self/clear_refs`) just before timing; baseline is the RSS after loading the data and
  set-up; "write extra" is the difference. (The whole-process peak, including loading, is in the raw
  JSON as `rss_child_lifetime_peak_mb`.)
- Output: Parquet data bytes and file count; "on disk" adds metadata (Iceberg manifests and
  metadata JSON, Delta log). Writes go to the page cache; nobody fsyncs, and the harness calls
  `sync` between writers so one writer's flush does not land in the next one's time.
- Correctness, each run: rows read back (PyIceberg `scan().count()` for Iceberg tables, the Delta
  log's `num_records`, the Parquet footer for pyarrow) and the sum of rows in the Parquet footers on
  disk both equal the input; for W2 the partition spec is `month(l_shipdate)` and the number of
  partitions equals the number of distinct months in the data.
""" + ("\n" + tail if tail else ""))


def parent(args) -> int:
    sf = "0.01" if args.quick and args.sf is None else (args.sf or "1")
    runs = args.runs if args.runs is not None else (1 if args.quick else 3)
    names = [c.name for c in COMPETITORS]
    if args.only:
        names = [n.strip() for n in args.only.split(",")]
        unknown = [n for n in names if n not in BY_NAME]
        if unknown:
            raise SystemExit(f"unknown competitor(s) {unknown}; known: {list(BY_NAME)}")
    workloads = [w.strip() for w in args.workloads.split(",")]
    ours = {"skip": "--skip-ours given"} if args.skip_ours else ours_status()
    ours_note = ours.get("skip")
    if ours_note and any(BY_NAME[n].ours for n in names):
        print(f"SKIPPING pyiceberg_go (ours): {ours_note}. No numbers are reported for it.", flush=True)
        names = [n for n in names if not BY_NAME[n].ours]

    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / ".gitignore").write_text("# everything here is generated by bench/run.py\n*\n")
    ensure_pydeps()
    load_before = loadavg()
    data = ensure_data(sf)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    log_path = CACHE / f"children-{stamp}.log"
    results = []
    with open(log_path, "w") as log:
        for run in range(runs):
            for wl in workloads:
                order = [n for n in names if wl in BY_NAME[n].workloads]
                k = run % len(order) if order else 0
                for name in order[k:] + order[:k]:
                    res = run_child(name, wl, data, run, log)
                    results.append(res)
                    shown = f"{res['seconds']:.2f} s" if "seconds" in res else "no time"
                    state = "ok" if res.get("ok") else "FAILED " + "; ".join(res.get("problems", []))
                    note = res.get("empty_table_by", "")
                    note = f"  (empty table made by {note})" if note.startswith("PyIceberg") else ""
                    print(f"run {run + 1}/{runs} {wl} {name:28s} {shown:>10s}  "
                          f"peak {res.get('rss_peak_mb', float('nan')):.0f} MB  {state}{note}", flush=True)

    rows = summarise(results)
    table_md = markdown(rows)
    first = next((r for r in results if "rows" in r), {})
    entry = os.environ.get("BENCH_ENTRY", f"{Path(sys.executable).relative_to(ROOT) if Path(sys.executable).is_relative_to(ROOT) else sys.executable} bench/run.py")
    info = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join([entry] + sys.argv[1:]),
        "machine": machine(), "versions": versions(ours),
        "load": f"{load_before} before, {loadavg()} after (1/5/15-minute load averages)", "sf": sf, "runs": runs,
        "rows": first.get("rows", 0), "input_mb": first.get("input_bytes", 0) / 1e6,
        "chunks": first.get("chunks", 0), "ours_skipped": ours_note,
    }
    (CACHE / f"results-{stamp}.json").write_text(json.dumps({"info": info, "results": results}, indent=1,
                                                            default=str))
    print()
    if ours_note:
        print(f"pyiceberg_go (ours) skipped: {ours_note}")
    if args.quick:
        print("QUICK MODE: small data, one run; the times below only show the harness works.")
    print(table_md)
    print(f"\nraw results: {(CACHE / f'results-{stamp}.json').relative_to(ROOT)}; child logs: "
          f"{log_path.relative_to(ROOT)}")
    if not args.quick and not args.no_docs:
        write_docs(rows, table_md, info)
        print(f"wrote {DOCS.relative_to(ROOT)}")
    failed = [r for r in results if not r.get("ok")]
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="SF 0.01, 1 run, no docs: checks the harness works")
    ap.add_argument("--runs", type=int, help="runs per writer and workload (default 3, quick 1)")
    ap.add_argument("--sf", help="TPC-H scale factor (default 1, quick 0.01)")
    ap.add_argument("--workloads", default="W1,W2", help="comma-separated subset of W1,W2")
    ap.add_argument("--only", help="comma-separated writers to run: " + ", ".join(BY_NAME))
    ap.add_argument("--skip-ours", action="store_true", help="do not run pyiceberg_go")
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--check-ours", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--prepare-namespace", help=argparse.SUPPRESS)
    args = ap.parse_args()
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
