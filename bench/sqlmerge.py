"""The cost of Spark's MERGE INTO as text: `ig.sql("MERGE INTO ...")` against the same merge through
the builder (`ig.mergeInto(...)`), on bench/dml.py's M3 workload (issue 39's overhead target: the
statement within 5% of the builder).

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/sqlmerge.py            # SF1, the 600k-row M3 source, 5 interleaved runs,
                                                  # writes its section of docs/benchmarks.md
    .venv/bin/python bench/sqlmerge.py --quick    # SF 0.01, 2,000 rows, 1 run, no docs: checks the harness

Both competitors are bench/dml.py's (`pyiceberg_go.mergeInto` and `pyiceberg_go.sql_merge`) and run
through its harness: the same pristine tables (partitioned by identity(l_shipmonth), and an
unpartitioned copy), the same source held in memory before timing, a fresh process and a fresh copy
of the table per measurement, the table read back and checked by PyIceberg after every run. The
order of the two alternates between runs. Reported: median wall and CPU seconds, the statement's
time over the builder's, peak RSS.

On a shared machine one call's CPU time varies by more than 5% between runs, so the steps the
statement adds to the builder's merge are also timed alone, in this process: the `sql_plan` call
(the statement parsed and its source named) and the parse of the `sql` call, 200 times each; their
median cost over the builder's median time is the overhead the target is about.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dml
import run as base

DOC_BEGIN = "<!-- bench/sqlmerge.py: begin -->"
DOC_END = "<!-- bench/sqlmerge.py: end -->"
BUILDER, TEXT = "pyiceberg_go.mergeInto", "pyiceberg_go.sql_merge"
TARGET = 1.05


def summarise(results: list[dict]) -> list[dict]:
    rows = []
    for layout in dml.M3_LAYOUTS:
        row: dict = {"layout": layout}
        for name in (BUILDER, TEXT):
            rs = [r for r in results if r["competitor"] == name and r.get("layout") == layout]
            good = [r for r in rs if r.get("ok")]
            row[name] = {
                "runs": len(rs), "ok": len(good),
                "problems": sorted({p for r in rs for p in r.get("problems", [])}),
                **({"median_s": statistics.median(r["seconds"] for r in good),
                    "min_s": min(r["seconds"] for r in good), "max_s": max(r["seconds"] for r in good),
                    "cpu_s": statistics.median(r["cpu_s"] for r in good),
                    "cpu_min": min(r["cpu_s"] for r in good), "cpu_max": max(r["cpu_s"] for r in good),
                    "peak_mb": statistics.median(r["rss_peak_mb"] - r["rss_baseline_mb"] for r in good),
                    "snapshot": good[0]["check"].get("snapshot", {})} if good else {}),
            }
        b, t = row[BUILDER], row[TEXT]
        if "median_s" in b and "median_s" in t:
            row["wall"], row["cpu"] = t["median_s"] / b["median_s"], t["cpu_s"] / b["cpu_s"]
        rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    head = ("| table | merge | median s (min-max) | CPU s | peak RSS over baseline MB "
            "| statement / builder (wall, CPU) |")
    lines = [head, "|---|---|---|---|---|---|"]
    for row in rows:
        for name in (BUILDER, TEXT):
            r = row[name]
            if "median_s" not in r:
                lines.append(f"| {row['layout']} | {name} | FAILED ({r['ok']}/{r['runs']} ok) | - | - | "
                             + "; ".join(r["problems"])[:200] + " |")
                continue
            ratio = f"{row['wall']:.3f}, {row['cpu']:.3f}" if name == TEXT and "wall" in row else "-"
            lines.append(f"| {row['layout']} | {name} | {r['median_s']:.2f} ({r['min_s']:.2f}-{r['max_s']:.2f}) "
                         f"| {r['cpu_s']:.2f} | {r['peak_mb']:.0f} | {ratio} |")
    return "\n".join(lines)


def statement_overhead_s(n: int = 200) -> float:
    """Median seconds of what ig.sql adds to the builder's merge: the sql_plan call (parse, source
    named), timed alone in this process on a scratch session (a MERGE's plan reads no table)."""
    import pyiceberg_go as ig

    stmt = (f"MERGE INTO {dml.IDENT} t USING src s ON {dml.M3_ON} "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    with tempfile.TemporaryDirectory() as d, ig.Session(catalogs={dml.CATALOG: {
            "type": "sql", "uri": f"sqlite:///{d}/c.db", "warehouse": f"file://{d}/wh"}}) as s:
        times = []
        for _ in range(n):
            t0 = time.process_time()
            s._execute({"op": "sql_plan", "sql": stmt})
            times.append(time.process_time() - t0)
    # The sql call parses the statement once more before running the same merge document.
    return 2 * statistics.median(times)


def verdict(rows: list[dict], overhead_s: float | None = None) -> str:
    out = []
    for row in rows:
        if "wall" not in row:
            out.append(f"- {row['layout']}: not measured (a run failed).")
            continue
        line = (f"- {row['layout']}: end to end, the statement takes {row['cpu']:.3f}x the builder's CPU time and "
                f"{row['wall']:.3f}x its wall time (medians; the builder's own CPU time ranges "
                f"{row[BUILDER]['cpu_min']:.2f}-{row[BUILDER]['cpu_max']:.2f} s over the runs, so these ratios "
                "carry that noise).")
        if overhead_s is not None:
            frac = overhead_s / row[BUILDER]["cpu_s"]
            met = "met" if frac <= TARGET - 1 else "NOT met"
            line += (f" The steps the statement adds cost {overhead_s * 1000:.2f} ms of CPU, "
                     f"{frac:.5%} of the builder's median ({met}: within 5%).")
        out.append(line)
    return "\n".join(out)


def write_docs(rows: list[dict], info: dict, overhead_s: float) -> None:
    section = f"""{DOC_BEGIN}
## MERGE INTO as text against the builder (issue 39)

Generated by `bench/sqlmerge.py`; do not edit by hand, rerun it.

- Run: `{info['command']}`, {info['date']}, {info['runs']} interleaved runs; load {info['load']}.
- Machine: {info['machine']['nproc']} CPUs, {info['machine']['memory_gb']} GB, shared with other work.
- Workload: bench/dml.py's M3 (TPC-H lineitem SF{info['sf']}, {info['table_rows']:,} rows; a source of
  {info['n']:,} rows, half updates of existing keys and half new keys, merged on
  `(l_orderkey, l_linenumber)`) into the identity(l_shipmonth)-partitioned table and an
  unpartitioned copy.
- `{BUILDER}`: `ig.mergeInto(src, t, on).whenMatched().updateAll().whenNotMatched().insertAll().merge()`.
- `{TEXT}`: `ig.sql("MERGE INTO t USING src s ON ... WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED
  THEN INSERT *", views={{"src": src}})`: the statement is parsed into the same merge document.

{markdown(rows)}

{verdict(rows, overhead_s)}
{DOC_END}
"""
    base.write_section("bench/sqlmerge.py", section)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="SF 0.01, 2,000 rows, 1 run, no docs")
    ap.add_argument("--runs", type=int, help="runs per merge and table (default 5, quick 1)")
    ap.add_argument("--sf", help="TPC-H scale factor (default 1, quick 0.01)")
    ap.add_argument("--n", type=int, help=f"source rows (default {dml.DEFAULT_N_M3}, quick {dml.QUICK_N_M3})")
    args = ap.parse_args()
    sf = args.sf or ("0.01" if args.quick else "1")
    runs = args.runs or (1 if args.quick else 5)
    n = args.n or (dml.QUICK_N_M3 if args.quick else dml.DEFAULT_N_M3)
    base.CACHE.mkdir(parents=True, exist_ok=True)
    base.ensure_pydeps()
    data = base.ensure_data(sf)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    results = []
    load_before = base.loadavg()
    with open(base.CACHE / f"sqlmerge-children-{stamp}.log", "w") as log:
        root, setup = dml.ensure_prepared(sf, data, log)
        dml.ensure_layout(sf, root, data, "unpartitioned", log)
        source, _ = dml.ensure_source(root, "M1", n, data, log)
        for run in range(runs):
            order = [BUILDER, TEXT] if run % 2 == 0 else [TEXT, BUILDER]
            for layout in dml.M3_LAYOUTS:
                for name in order:
                    res = dml.run_child(name, sf, root, data, run, log, n, source, "M3", layout)
                    results.append(res)
                    state = "ok" if res.get("ok") else "FAILED " + "; ".join(res.get("problems", []))
                    print(f"run {run + 1}/{runs} {layout:14s} {name:26s} "
                          f"{res.get('seconds', float('nan')):6.2f} s  cpu {res.get('cpu_s', float('nan')):6.2f} s  "
                          f"{state}", flush=True)
    rows = summarise(results)
    overhead_s = statement_overhead_s(20 if args.quick else 200)
    (base.CACHE / f"sqlmerge-results-{stamp}.json").write_text(
        json.dumps({"results": results, "overhead_s": overhead_s}, default=str))
    print(markdown(rows))
    print(verdict(rows, overhead_s))
    if not args.quick:
        write_docs(rows, {
            "command": " ".join([".venv/bin/python bench/sqlmerge.py", *sys.argv[1:]]),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "runs": runs,
            "load": f"{load_before} before, {base.loadavg()} after", "machine": base.machine(), "sf": sf,
            "table_rows": setup["rows"], "n": n,
        }, overhead_s)
    return 0 if all(r.get("ok") for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
