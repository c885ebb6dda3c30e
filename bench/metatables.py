"""Metadata tables benchmark: `files` and `partitions` of a table of 10,000 data files, ours against
PyIceberg 0.12's `inspect` and Spark 4.1's metadata tables.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/metatables.py            # 10,000 files, 3 interleaved runs, Spark included, writes its
                                                 # section of docs/benchmarks.md
    .venv/bin/python bench/metatables.py --quick    # 200 files, 1 run, no Spark, no docs: checks the harness

The table (id bigint, k int, v double; identity-partitioned by k) is written once per run by
pyiceberg-go, untimed: 10 appends of 1,000 partitions each, so 10,000 data files in 10 manifests.
Each reader runs in a fresh child process: it imports pyarrow and opens the table (untimed), resets
the kernel's RSS high-water mark, then times building the whole metadata table as Arrow and checks its row count
(10,000 files; 10,000 partitions). Readers:

    pyiceberg_go.files / .partitions   Table.inspect.files() / .partitions()
    pyiceberg.files / .partitions      PyIceberg 0.12 tbl.inspect.files() / .partitions()
    spark.files / .partitions          SELECT * FROM local.bench.t.files / .partitions, collected with
                                       toArrow(); the session is started and the same query run once
                                       before the timed run (JIT and class loading untimed), and RSS
                                       is the JVM's

Reported: median seconds and peak RSS above the baseline, and each reader's time over PyIceberg's
for the same table (target: ours <= 0.2x).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as base
import sparkbench

ROOT, CACHE = base.ROOT, base.CACHE
DOC_BEGIN = "<!-- bench/metatables.py: begin -->"
DOC_END = "<!-- bench/metatables.py: end -->"
TABLES = ("files", "partitions")
ENGINES = ("pyiceberg_go", "pyiceberg", "spark")
IDENT = "bench.t"
APPENDS = 10
TARGET = 0.2


def props(work: Path) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{work}/catalog.db", "warehouse": f"file://{work}/wh"}


def write_table(work: Path, files: int) -> dict:
    """Child: the table of `files` data files (one row per partition value), untimed."""
    import pyarrow as pa

    import pyiceberg_go as ig

    ig.configure(catalogs={"local": props(work)})
    per = files // APPENDS
    for i in range(APPENDS):
        ks = range(i * per, (i + 1) * per)
        data = pa.table(
            {"id": pa.array(ks, pa.int64()), "k": pa.array(ks, pa.int32()), "v": pa.array([k / 3 for k in ks])}
        )
        w = ig.writeTo(data, f"local.{IDENT}")
        if i == 0:
            w.partitionedBy("k").create()
        else:
            w.append()
    return {"files": per * APPENDS}


def child(name: str, work: Path, files: int) -> dict:
    import pyarrow  # noqa: F401  (imported before the clock for every reader: it costs ~0.2 s)

    engine, table = name.split(".")
    res: dict = {"reader": name}
    if engine == "pyiceberg_go":
        import pyiceberg_go as ig

        ig.configure(catalogs={"local": props(work)})
        t = ig.table(f"local.{IDENT}")
        t.schema()

        def read():
            return getattr(t.inspect, table)()
        pid = "self"
    elif engine == "pyiceberg":
        from pyiceberg.catalog.sql import SqlCatalog

        t = SqlCatalog("local", **props(work)).load_table(IDENT)

        def read():
            return getattr(t.inspect, table)()
        pid = "self"
    else:
        spark = sparkbench.start_session(work, Path(os.environ["BENCH_SPARK_JARS"]))
        spark.sparkContext.setLogLevel("ERROR")
        pid = str(spark._jvm.java.lang.ProcessHandle.current().pid())
        query = f"SELECT * FROM {sparkbench.CATALOG}.{IDENT}.{table}"
        spark.sql(query).toArrow()  # warm: class loading, JIT, the catalog's first load

        def read():
            return spark.sql(query).toArrow()
    res["rss_baseline_mb"] = base._status_mb("VmRSS", pid)
    res["peak_reset"] = base._reset_peak(pid)
    t0 = time.perf_counter()
    out = read()
    res["seconds"] = time.perf_counter() - t0
    res["rss_peak_mb"] = base._status_mb("VmHWM", pid)
    res["rows"] = out.num_rows
    res["ok"] = out.num_rows == files
    return res


def run_child(args: list[str], env: dict) -> dict:
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], capture_output=True, text=True,
                       env=env, cwd=ROOT)
    if p.returncode != 0:
        return {"ok": False, "error": p.stderr.strip()[-2000:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def markdown(rows: list[dict], info: dict) -> str:
    lines = [
        DOC_BEGIN,
        "## Metadata tables (I1)",
        "",
        "Generated by `bench/metatables.py`; do not edit by hand, rerun `.venv/bin/python bench/metatables.py`.",
        "",
        f"Run {info['date']} on {info['machine']['nproc']} cores ({info['machine']['cpu']}): a table of "
        f"{info['files']:,} data files ({APPENDS} manifests, one file per identity partition) written by "
        f"pyiceberg-go; each metadata table built whole as Arrow in a fresh process, {info['runs']} interleaved "
        "runs, medians. Spark runs the query once before the timed run; its peak is the JVM's. "
        f"Load average (1 min) at the start and end of the runs: {info['load'][0]:.1f}, {info['load'][1]:.1f}: "
        "with other work on the machine the times move, their ratios less. "
        f"{info.get('spark_note', '')}",
        "",
        "| metadata table | reader | seconds | peak above baseline (MiB) | time / PyIceberg's | runs ok |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        ref = next((x for x in rows if x["table"] == r["table"] and x["engine"] == "pyiceberg"), None)
        ratio = f"{r['seconds'] / ref['seconds']:.2f}" if ref and ref["seconds"] > 0 else "-"
        lines.append(f"| {r['table']} | {r['engine']} | {r['seconds']:.3f} | {r['peak_mb']:.0f} | {ratio} | "
                     f"{r['ok']}/{r['runs']} |")
    lines += ["", f"Target: pyiceberg-go at most {TARGET}x PyIceberg's time for each table.", "", DOC_END]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--spark", action="store_true", help="with --quick: run Spark too")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--write", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write:
        print(json.dumps(write_table(Path(args.work), args.files)))
        return 0
    if args.child:
        print(json.dumps(child(args.child, Path(args.work), args.files)))
        return 0
    if args.quick:
        args.runs, args.files, args.no_docs = 1, 200, True
    base.ensure_pydeps()
    env = base.child_env()
    names = [f"{e}.{t}" for t in TABLES for e in ENGINES]
    names, spark = sparkbench.choose_spark(names, lambda n: n.startswith("spark."), args.quick, args.spark, env)
    results: list[dict] = []
    load_start = os.getloadavg()[0]
    for run in range(args.runs):
        work = CACHE / "metatables" / f"run-{run}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "wh").mkdir(parents=True)
        subprocess.run([sys.executable, str(Path(base.__file__).resolve()), "--prepare-namespace", str(work)],
                       check=True, env=env, cwd=ROOT)
        facts = run_child(["--write", "--work", str(work), "--files", str(args.files)], env)
        if "files" not in facts:
            print(facts.get("error"), file=sys.stderr)
            return 1
        order = names if run % 2 == 0 else list(reversed(names))
        for name in order:
            r = run_child(["--child", name, "--work", str(work), "--files", str(facts["files"])], env)
            r.setdefault("reader", name)
            r["run"] = run
            results.append(r)
            print(json.dumps(r), flush=True)
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for table in TABLES:
        for engine in ENGINES:
            rs = [r for r in results if r.get("reader") == f"{engine}.{table}" and "seconds" in r]
            if rs:
                rows.append({"table": table, "engine": engine, "seconds": statistics.median(r["seconds"] for r in rs),
                             "peak_mb": statistics.median(r["rss_peak_mb"] - r["rss_baseline_mb"] for r in rs),
                             "ok": sum(bool(r.get("ok")) for r in rs), "runs": len(rs)})
    info = {"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": base.machine(),
            "runs": args.runs, "files": args.files, "load": (load_start, os.getloadavg()[0])}
    if spark and "skip" in spark:
        info["spark_note"] = f"Spark was not run: {spark['skip']}."
    section = markdown(rows, info)
    print(section)
    if not args.no_docs:
        base.write_section("bench/metatables.py", section)
    bad = [r for r in results if not r.get("ok")]
    if any(r.get("reader", "").startswith("pyiceberg_go.") for r in bad):
        print(f"metatables.py: pyiceberg-go built wrong metadata tables in {len(bad)} runs: {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
