"""Concurrent commits: N writer processes appending small batches to one table of one SQLite catalog.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/commits.py            # 1, 2, 4, 8 writers x 50 appends, 3 interleaved runs, writes its
                                                 # section of docs/benchmarks.md
    .venv/bin/python bench/commits.py --quick    # 1 and 2 writers x 5 appends, 1 run, no docs: checks the harness

Competitors, on the same data in the same run: pyiceberg-go with default settings, and PyIceberg 0.12's
``Table.append`` on a ``SqlCatalog`` over the same kind of file, retried on ``CommitFailedException`` up to
4 times with the same backoff as Iceberg's defaults (100 ms doubling, +-50% jitter), since PyIceberg 0.12 does
not retry by itself. Each writer is a fresh process; all writers of a run start together (a barrier), and
the time is from the barrier to the last writer's end. Reported: appends that landed, commits per second
(landed / time), the median and 95th percentile of one append's latency, and the ratio of throughputs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as base  # noqa: E402  (machine facts, versions, the cache folder)

DOCS = base.DOCS
DOC_BEGIN = "<!-- bench/commits.py: begin -->"
DOC_END = "<!-- bench/commits.py: end -->"
ROWS = 100
COMPETITORS = ("pyiceberg_go", "pyiceberg")
RETRIES = 4


def batch(writer: int, i: int):
    import pyarrow as pa

    start = (writer * 1_000_000 + i) * ROWS
    return pa.table({"id": pa.array(range(start, start + ROWS), pa.int64()), "v": pa.array([float(i)] * ROWS)})


def catalog_props(work: Path) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{work}/catalog.db", "warehouse": f"file://{work}/wh"}


def writer_main(name: str, work: str, writer: int, appends: int, barrier, out) -> None:
    """One writer process: set up untimed, wait at the barrier, append, report latencies and failures."""
    os.environ["PYICEBERG_GO_PROGRESS"] = "0"
    props = catalog_props(Path(work))
    data = [batch(writer, i) for i in range(appends)]
    if name == "pyiceberg_go":
        import pyiceberg_go as ig

        ig.configure(catalogs={"local": props})
        ig.abi_version()

        def append(df) -> None:
            ig.writeTo(df, "local.bench.t").append()
    else:
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.exceptions import CommitFailedException

        cat = SqlCatalog("local", **props)
        tbl = cat.load_table("bench.t")
        rng = random.Random(writer)

        def append(df) -> None:
            wait = 0.1
            for attempt in range(RETRIES + 1):
                try:
                    tbl.refresh()
                    tbl.append(df)
                    return
                except CommitFailedException:
                    if attempt == RETRIES:
                        raise
                    time.sleep(wait / 2 + rng.random() * wait)
                    wait *= 2
    lat, failed = [], 0
    barrier.wait()
    for df in data:
        t = time.perf_counter()
        try:
            append(df)
            lat.append(time.perf_counter() - t)
        except Exception:  # a failed append is counted, not fatal
            failed += 1
    out.put({"writer": writer, "lat": lat, "failed": failed, "end": time.time()})


def one_run(name: str, writers: int, appends: int, work: Path) -> dict:
    shutil.rmtree(work, ignore_errors=True)
    (work / "wh").mkdir(parents=True)
    props = catalog_props(work)
    import pyarrow as pa

    empty = pa.table({"id": pa.array([], pa.int64()), "v": pa.array([], pa.float64())})
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("local", **props)
    cat.create_namespace("bench")
    cat.create_table("bench.t", schema=empty.schema)
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(writers + 1), ctx.Queue()
    procs = [ctx.Process(target=writer_main, args=(name, str(work), w, appends, barrier, out)) for w in range(writers)]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.time()
    reports = [out.get(timeout=1800) for _ in procs]
    for p in procs:
        p.join()
    seconds = max(r["end"] for r in reports) - t0
    lat = sorted(x for r in reports for x in r["lat"])
    landed = len(lat)
    # Check what landed against the table, read by PyIceberg.
    t = cat.load_table("bench.t")
    rows = len(t.scan().to_arrow())
    appends_in_table = sum(1 for s in t.snapshots() if s.summary and s.summary.operation.value == "append")
    assert rows == landed * ROWS and appends_in_table == landed, (name, rows, landed, appends_in_table)
    return {
        "competitor": name, "writers": writers, "attempted": writers * appends, "landed": landed,
        "seconds": seconds, "commits_per_s": landed / seconds if seconds > 0 else 0.0,
        "p50_ms": statistics.median(lat) * 1000 if lat else None,
        "p95_ms": lat[int(0.95 * (len(lat) - 1))] * 1000 if lat else None,
    }


def summarise(results: list[dict], writer_counts: list[int]) -> list[dict]:
    rows = []
    for n in writer_counts:
        row: dict = {"writers": n}
        for c in COMPETITORS:
            rs = [r for r in results if r["writers"] == n and r["competitor"] == c]
            if not rs:
                continue
            row[c] = {
                "landed": f"{statistics.median(r['landed'] for r in rs):.0f}/{rs[0]['attempted']}",
                "landed_min": min(r["landed"] for r in rs),
                "commits_per_s": statistics.median(r["commits_per_s"] for r in rs),
                "p50_ms": statistics.median(r["p50_ms"] for r in rs if r["p50_ms"] is not None),
                "p95_ms": statistics.median(r["p95_ms"] for r in rs if r["p95_ms"] is not None),
            }
        if all(c in row for c in COMPETITORS) and row["pyiceberg"]["commits_per_s"] > 0:
            row["ratio"] = row["pyiceberg_go"]["commits_per_s"] / row["pyiceberg"]["commits_per_s"]
        rows.append(row)
    return rows


def markdown(rows: list[dict], info: dict) -> str:
    lines = [
        DOC_BEGIN,
        "## Concurrent commits (C1)",
        "",
        "Generated by `bench/commits.py`; do not edit by hand, rerun `.venv/bin/python bench/commits.py`.",
        "",
        f"Run {info['date']} on {info['machine']['nproc']} cores ({info['machine']['cpu']}), "
        f"{info['runs']} interleaved runs, medians; {info['appends']} appends of {ROWS} rows per writer, "
        "every writer a process of its own, all on one table of one SQLite catalog. PyIceberg "
        f"{info['versions'].get('pyiceberg')} retries a failed commit up to {RETRIES} times (it has no retry of its own).",
        "",
        "| writers | ours: landed | ours: commits/s | ours: p50 / p95 ms | PyIceberg: landed (fewest in a run) | PyIceberg: commits/s | PyIceberg: p50 / p95 ms | ours / PyIceberg commits/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        o, p = r.get("pyiceberg_go"), r.get("pyiceberg")
        cell = lambda x: (f"{x['landed']}", f"{x['commits_per_s']:.1f}", f"{x['p50_ms']:.0f} / {x['p95_ms']:.0f}") if x else ("-", "-", "-")  # noqa: E731
        oc, pc = cell(o), cell(p)
        pl = f"{pc[0]} ({p['landed_min']})" if p else "-"
        ratio = f"{r['ratio']:.1f}x" if "ratio" in r else "-"
        lines.append(f"| {r['writers']} | {oc[0]} | {oc[1]} | {oc[2]} | {pl} | {pc[1]} | {pc[2]} | {ratio} |")
    lines += ["", DOC_END]
    return "\n".join(lines) + "\n"


def write_docs(section: str) -> None:
    base.write_section("bench/commits.py", section)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 and 2 writers x 5 appends, 1 run, no docs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--appends", type=int, default=50)
    ap.add_argument("--writers", default="1,2,4,8")
    ap.add_argument("--no-docs", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.appends, args.writers, args.no_docs = 1, 5, "1,2", True
    counts = [int(x) for x in args.writers.split(",")]
    work = base.CACHE / "commits"
    results = []
    for run in range(args.runs):
        for n in counts:
            order = COMPETITORS if run % 2 == 0 else tuple(reversed(COMPETITORS))
            for c in order:
                r = one_run(c, n, args.appends, work)
                r["run"] = run
                results.append(r)
                print(json.dumps(r), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    rows = summarise(results, counts)
    info = {"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": base.machine(),
            "runs": args.runs, "appends": args.appends, "versions": base.versions({"version": "current build"})}
    section = markdown(rows, info)
    print(section)
    ours_failed = [r for r in results if r["competitor"] == "pyiceberg_go" and r["landed"] != r["attempted"]]
    if not args.no_docs:
        write_docs(section)
    if ours_failed:
        print(f"commits.py: pyiceberg-go lost appends in {len(ours_failed)} runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
