"""Streaming ingest and table health: many small commits to one table.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/streaming.py            # S1: 300 batches x 1,000 rows per competitor, 3 interleaved
                                                   # runs; S2: 10,000 commits with and without manifest merging;
                                                   # writes its section of docs/benchmarks.md
    .venv/bin/python bench/streaming.py --quick    # 10 batches, 50 commits, 1 run, no docs: checks the harness

S1, sustained ingest: one process per competitor appends batches of 1,000 rows one commit at a
time, as a micro-batch stream does: ours (``streamBatch``: the exactly-once check in every commit),
PyIceberg 0.12's ``Table.append`` on a ``SqlCatalog`` over the same kind of SQLite file, and
delta-rs's ``write_deltalake(mode="append")``. Reported: commits per second, the median and 95th
percentile of one commit's latency (from the call to its return), peak RSS of the process, and
ours / theirs ratios. The rows each table ends with are checked by the competitor's own reader.

S2, table health: ours appends 1,000-row batches 10,000 times to one table, with the table's
``commit.manifest-merge.enabled`` true (Iceberg's default) and false. Reported: the bytes under
``metadata/`` (manifests, manifest lists, metadata files), the manifests of the head snapshot, and
the time to plan a full scan (a read whose filter no file matches, so every manifest is read and no
data file is), against the same table after ``rewrite_manifests`` (the metadata a single fresh
write of those files would have).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as base  # noqa: E402  (machine facts, versions, the cache folder)

DOC_BEGIN = "<!-- bench/streaming.py: begin -->"
DOC_END = "<!-- bench/streaming.py: end -->"
ROWS = 1000
COMPETITORS = ("pyiceberg_go", "pyiceberg", "deltalake")


def batch(i: int):
    import pyarrow as pa

    start = i * ROWS
    return pa.table(
        {
            "id": pa.array(range(start, start + ROWS), pa.int64()),
            "v": pa.array([float(i)] * ROWS, pa.float64()),
            "s": pa.array([f"event-{i % 97}"] * ROWS, pa.string()),
        }
    )


def props(work: Path) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{work}/catalog.db", "warehouse": f"file://{work}/wh"}


def peak_rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def ingest_child(name: str, work: Path, batches: int) -> dict:
    """S1 in this process: create the table untimed, then append ``batches`` batches, timing each."""
    import pyarrow as pa

    shutil.rmtree(work, ignore_errors=True)
    (work / "wh").mkdir(parents=True)
    data = [batch(i) for i in range(batches)]
    schema = data[0].schema
    if name == "pyiceberg_go":
        import pyiceberg_go as ig

        ig.configure(catalogs={"local": props(work)})
        ig.writeTo(schema.empty_table(), "local.bench.s").create()

        def append(i: int, df: pa.Table) -> None:
            r = ig.writeTo(df, "local.bench.s").streamBatch("bench", i).append()
            assert not r.skipped

        def rows() -> int:
            return ig.table("local.bench.s").to_arrow().num_rows

    elif name == "pyiceberg":
        from pyiceberg.catalog.sql import SqlCatalog

        cat = SqlCatalog("local", **props(work))
        cat.create_namespace("bench")
        tbl = cat.create_table("bench.s", schema=schema)

        def append(i: int, df: pa.Table) -> None:
            tbl.append(df)

        def rows() -> int:
            return len(cat.load_table("bench.s").scan().to_arrow())

    else:
        from deltalake import DeltaTable, write_deltalake

        path = str(work / "delta")
        write_deltalake(path, schema.empty_table())

        def append(i: int, df: pa.Table) -> None:
            write_deltalake(path, df, mode="append")

        def rows() -> int:
            return DeltaTable(path).to_pyarrow_table().num_rows

    lat = []
    t0 = time.perf_counter()
    for i, df in enumerate(data):
        t = time.perf_counter()
        append(i, df)
        lat.append(time.perf_counter() - t)
    seconds = time.perf_counter() - t0
    assert rows() == batches * ROWS, name
    lat.sort()
    return {
        "competitor": name,
        "commits": batches,
        "seconds": seconds,
        "commits_per_s": batches / seconds,
        "p50_ms": statistics.median(lat) * 1000,
        "p95_ms": lat[int(0.95 * (len(lat) - 1))] * 1000,
        "peak_rss_mb": peak_rss_mb(),
    }


def dir_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.rglob("*") if p.is_file())


def health_child(merge: bool, work: Path, commits: int) -> dict:
    """S2 in this process: ``commits`` appends, then metadata size and full-scan planning time."""
    import pyiceberg_go as ig

    shutil.rmtree(work, ignore_errors=True)
    (work / "wh").mkdir(parents=True)
    ig.configure(catalogs={"local": props(work)})
    first = batch(0)
    # Old metadata files are deleted as Iceberg's streaming guidance advises: kept, 10,000 commits
    # would leave about 35 GB of them.
    ig.writeTo(first.schema.empty_table(), "local.bench.h").tableProperty(
        "commit.manifest-merge.enabled", str(merge).lower()
    ).tableProperty("write.metadata.delete-after-commit.enabled", "true").create()
    t0 = time.perf_counter()
    for i in range(commits):
        ig.writeTo(batch(i), "local.bench.h").append()
    append_s = time.perf_counter() - t0
    t = ig.table("local.bench.h")

    def plan_s() -> float:
        best = float("inf")
        for _ in range(3):
            s = time.perf_counter()
            got = t.scan(columns=["id"], where="id < -1").to_arrow()
            best = min(best, time.perf_counter() - s)
            assert got.num_rows == 0
        return best

    meta = next((work / "wh").rglob("metadata"))
    manifests = t.inspect.manifests().num_rows
    before = {"metadata_bytes": dir_bytes(meta), "manifests": manifests, "plan_s": plan_s()}
    t.rewrite_manifests()
    after = {"manifests": t.inspect.manifests().num_rows, "plan_s": plan_s()}
    assert t.to_arrow(columns=["id"]).num_rows == commits * ROWS
    return {"merge": merge, "commits": commits, "append_s": append_s, "before": before, "fresh": after}


def start_child(kind: str, arg: str, work: Path, n: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYICEBERG_GO_PROGRESS="0")
    return subprocess.Popen(
        [sys.executable, __file__, "--child", kind, arg, str(work), str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def child_result(kind: str, arg: str, p: subprocess.Popen) -> dict:
    out, err = p.communicate()
    if p.returncode != 0:
        raise RuntimeError(f"{kind} {arg} failed:\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])


def run_child(kind: str, arg: str, work: Path, n: int) -> dict:
    return child_result(kind, arg, start_child(kind, arg, work, n))


def markdown(s1: list[dict], s2: list[dict], info: dict) -> str:
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    by = {c: [r for r in s1 if r["competitor"] == c] for c in COMPETITORS}
    lines = [
        DOC_BEGIN,
        "## Streaming ingest and table health (S1, S2)",
        "",
        "Generated by `bench/streaming.py`; do not edit by hand, rerun `.venv/bin/python bench/streaming.py`.",
        "",
        f"Run {info['date']} on {info['machine']['nproc']} cores ({info['machine']['cpu']}), load average "
        f"{info['load']} at the start; S1: {info['batches']} batches of {ROWS} rows, one commit each, "
        f"{info['runs']} interleaved runs, medians; every competitor a process of its own.",
        "",
        "| S1 | commits/s | p50 ms | p95 ms | peak RSS MiB | p50 ours / theirs |",
        "|---|---|---|---|---|---|",
    ]
    ours_p50 = med(by["pyiceberg_go"], "p50_ms")
    for c in COMPETITORS:
        rs = by[c]
        ratio = "-" if c == "pyiceberg_go" else f"{ours_p50 / med(rs, 'p50_ms'):.2f}x"
        lines.append(
            f"| {c} | {med(rs, 'commits_per_s'):.1f} | {med(rs, 'p50_ms'):.1f} | {med(rs, 'p95_ms'):.1f} | "
            f"{med(rs, 'peak_rss_mb'):.0f} | {ratio} |"
        )
    lines += [
        "",
        f"S2: {info['commits']} appends of {ROWS} rows to one table (ours, with "
        "`write.metadata.delete-after-commit.enabled`), then a full scan planned (every manifest read, no data "
        "file matches), best of 3; 'fresh' is the same table after `rewrite_manifests`; the two tables are "
        "written at the same time, a process each.",
        "",
        "| S2 | appends/s | metadata MiB | manifests | plan s | manifests, fresh | plan s, fresh | plan / fresh |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in s2:
        b, f = r["before"], r["fresh"]
        lines.append(
            f"| manifest merging {'on' if r['merge'] else 'off'} | {r['commits'] / r['append_s']:.1f} | "
            f"{b['metadata_bytes'] / 2**20:.1f} | {b['manifests']} | {b['plan_s']:.3f} | {f['manifests']} | "
            f"{f['plan_s']:.3f} | {b['plan_s'] / f['plan_s']:.2f}x |"
        )
    p50_ratio = ours_p50 / med(by["pyiceberg"], "p50_ms")
    lines += ["", "Issue 37's targets, this run:", ""]
    lines.append(f"- p50 commit, ours / PyIceberg's: {base.target(p50_ratio, 0.2)}")
    for r in s2:
        lines.append(
            f"- planning after {r['commits']} commits (manifest merging {'on' if r['merge'] else 'off'}) / freshly "
            f"written: {base.target(r['before']['plan_s'] / r['fresh']['plan_s'], 2.0)}"
        )
    lines += ["", DOC_END]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10 batches, 50 commits, 1 run, no docs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batches", type=int, default=300)
    ap.add_argument("--commits", type=int, default=10_000)
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--child", nargs=4, metavar=("KIND", "ARG", "WORK", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, arg, work, n = args.child
        r = ingest_child(arg, Path(work), int(n)) if kind == "ingest" else health_child(arg == "on", Path(work), int(n))
        print(json.dumps(r), flush=True)
        # deltalake 1.6.6 sometimes aborts while the interpreter shuts down ("terminate called
        # without an active exception", about 1 exit in 3 here): the result is out, skip the teardown.
        os._exit(0)
    if args.quick:
        args.runs, args.batches, args.commits, args.no_docs = 1, 10, 50, True
    work = base.CACHE / "streaming"
    load = base.loadavg()
    s1 = []
    for run in range(args.runs):
        order = COMPETITORS if run % 2 == 0 else tuple(reversed(COMPETITORS))
        for c in order:
            r = run_child("ingest", c, work, args.batches)
            r["run"] = run
            s1.append(r)
            print(json.dumps(r), flush=True)
    # The two S2 tables are written at the same time, one process (mostly one core) each.
    procs = {merge: start_child("health", merge, work / f"health-{merge}", args.commits) for merge in ("on", "off")}
    s2 = []
    for merge, p in procs.items():
        r = child_result("health", merge, p)
        s2.append(r)
        print(json.dumps(r), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    info = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": base.machine(),
        "load": load,
        "runs": args.runs,
        "batches": args.batches,
        "commits": args.commits,
    }
    section = markdown(s1, s2, info)
    print(section)
    if not args.no_docs:
        base.write_section("bench/streaming.py", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
