"""Table maintenance: compaction, z-order and expiry against Spark 4.1's procedures and delta-rs.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/maintenance.py           # TPC-H lineitem SF1 as 1,000 appends; writes its
                                                    # section of docs/benchmarks.md
    .venv/bin/python bench/maintenance.py --quick   # SF 0.01 as 20 appends, no docs: checks the harness

The same lineitem rows, cut into the same N slices, are appended one commit each to twin Iceberg
tables (written by this library, so both start from the same files) and to delta-rs tables. Then,
each in a process of its own:

- M1 binpack: our ``rewrite_data_files()``, Spark's ``CALL system.rewrite_data_files(table)``,
  delta-rs's ``optimize.compact()``;
- M2 z-order on (l_orderkey, l_partkey): ``rewrite_data_files(strategy="sort",
  sort_order="zorder(...)")``, Spark's procedure with the same arguments, ``optimize.z_order``;
- M3 expiry after M1: our ``expire_snapshots(older_than=now, retain_last=1)``, Spark's procedure
  with the same arguments (N + 1 snapshots, N small files to delete), delta-rs's
  ``vacuum(retention_hours=0)`` (the files compaction replaced).

Reported: seconds of each procedure (session start and table writes excluded), peak RSS of ours
and delta-rs's processes (Spark's JVM is not measured), ratios, and checks that every table keeps
the input's rows. The targets are issue 36's: compaction <= 0.3x Spark and <= 0.7x delta-rs with
peak memory below delta-rs's; expiry <= 0.2x Spark.
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
import run as base  # noqa: E402  (machine facts, data, the cache folder, docs)

DOC_BEGIN = "<!-- bench/maintenance.py: begin -->"
DOC_END = "<!-- bench/maintenance.py: end -->"
ZORDER = ("l_orderkey", "l_partkey")
CAT = "local"


def slices(path: Path, n: int):
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    t = t.cast(base._plain_schema(t.schema))
    step = -(-t.num_rows // n)
    return [t.slice(i * step, step) for i in range(n) if i * step < t.num_rows], t.num_rows


def configure(work: Path):
    import pyiceberg_go as ig

    ig.configure(
        catalogs={CAT: {"type": "sql", "uri": f"sqlite:///{work / 'catalog.db'}", "warehouse": f"file://{work / 'wh'}"}}
    )
    return ig


def peak_mb() -> float:
    return base._status_mb("VmHWM")


# --------------------------------------------------------------------------- children


def prepare_iceberg(work: Path, data: Path, n: int) -> dict:
    ig = configure(work)
    parts, rows = slices(data, n)
    for name in ("binpack_ours", "binpack_spark", "zorder_ours", "zorder_spark"):
        ident = f"{CAT}.m.{name}"
        ig.writeTo(parts[0], ident).create()
        for p in parts[1:]:
            ig.writeTo(p, ident).append()
    return {"rows": rows, "slices": len(parts)}


def prepare_delta(work: Path, data: Path, n: int) -> dict:
    from deltalake import write_deltalake

    parts, rows = slices(data, n)
    for name in ("compact", "zorder"):
        for p in parts:
            write_deltalake(str(work / "delta" / name), p, mode="append")
    return {"rows": rows}


def ours(work: Path, what: str) -> dict:
    ig = configure(work)
    base._reset_peak()
    ident = f"{CAT}.m.{'zorder' if what == 'zorder' else 'binpack'}_ours"
    t = ig.table(ident)
    t0 = time.perf_counter()
    if what == "binpack":
        r = t.rewrite_data_files().counts()
    elif what == "zorder":
        r = t.rewrite_data_files(strategy="sort", sort_order=f"zorder({', '.join(ZORDER)})").counts()
    else:
        r = t.expire_snapshots(older_than=dt.datetime.now(dt.UTC), retain_last=1).counts()
    s = time.perf_counter() - t0
    peak = peak_mb()  # before the check below reads the table
    rows = ig.table(ident).scan(columns=["l_orderkey"]).to_arrow().num_rows if what != "expire" else None
    return {"s": s, "peak_mb": peak, "result": r, "rows": rows}


def delta(work: Path, what: str) -> dict:
    from deltalake import DeltaTable

    base._reset_peak()
    dt_ = DeltaTable(str(work / "delta" / ("zorder" if what == "zorder" else "compact")))
    t0 = time.perf_counter()
    if what == "binpack":
        r = dt_.optimize.compact()
    elif what == "zorder":
        r = dt_.optimize.z_order(list(ZORDER))
    else:
        r = {"files_deleted": len(dt_.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False))}
    s = time.perf_counter() - t0
    peak = peak_mb()
    rows = DeltaTable(dt_.table_uri).to_pyarrow_dataset().count_rows() if what != "expire" else None
    return {"s": s, "peak_mb": peak, "result": {k: v for k, v in r.items() if isinstance(v, int)}, "rows": rows}


def spark(work: Path) -> dict:
    from compact import spark_jars
    from sparkbench import start_session

    env = spark_jars()
    if "skip" in env:
        raise RuntimeError(f"cannot run Spark: {env['skip']}")
    session = start_session(work, Path(env["jars"]))
    session.sparkContext.setLogLevel("ERROR")
    out = {}
    zorder = f"zorder({', '.join(ZORDER)})"
    calls = {
        "binpack": "rewrite_data_files(table => 'm.binpack_spark')",
        "zorder": f"rewrite_data_files(table => 'm.zorder_spark', strategy => 'sort', sort_order => '{zorder}')",
    }
    # Warm-up: Spark loads each table (and its classes) once before the timed calls.
    for name in ("binpack_spark", "zorder_spark"):
        session.sql(f"SELECT count(*) FROM {CAT}.m.{name}").collect()
    for what, call in calls.items():
        t0 = time.perf_counter()
        r = session.sql(f"CALL {CAT}.system.{call}").collect()[0].asDict()
        out[what] = {"s": time.perf_counter() - t0, "result": {k: int(v) for k, v in r.items()}}
        name = "zorder_spark" if what == "zorder" else "binpack_spark"
        out[what]["rows"] = session.sql(f"SELECT count(*) FROM {CAT}.m.{name}").collect()[0][0]
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    t0 = time.perf_counter()
    args = f"table => 'm.binpack_spark', older_than => TIMESTAMP '{now}', retain_last => 1"
    r = session.sql(f"CALL {CAT}.system.expire_snapshots({args})").collect()[0].asDict()
    out["expire"] = {"s": time.perf_counter() - t0, "result": {k: int(v) for k, v in r.items()}}
    session.stop()
    return out


def child(kind: str, arg: str, work: Path, data: Path, n: int) -> dict:
    if kind == "prepare":
        return prepare_iceberg(work, data, n) if arg == "iceberg" else prepare_delta(work, data, n)
    if kind == "ours":
        return ours(work, arg)
    if kind == "delta":
        return delta(work, arg)
    return spark(work)


def run_child(kind: str, arg: str, work: Path, data: Path, n: int) -> dict:
    env = base.child_env()
    env["PYICEBERG_GO_PROGRESS"] = "0"
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, arg, str(work), str(data), str(n)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{kind} {arg} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- parent


def median_run(rs: list[dict]) -> dict:
    """The run of median time, with the median peak memory of all runs and every run's time."""
    mid = sorted(rs, key=lambda r: r["s"])[len(rs) // 2]
    return {**mid, "peak_mb": statistics.median(r["peak_mb"] for r in rs), "all_s": [r["s"] for r in rs]}


def check(res: dict, rows: int) -> list[str]:
    bad = []
    for who in ("ours", "spark", "delta"):
        for what in ("binpack", "zorder"):
            got = res[who][what].get("rows")
            if got != rows:
                bad.append(f"{who} {what}: {got} rows, want {rows}")
        if not res[who]["binpack"]["result"]:
            bad.append(f"{who} binpack returned nothing")
    return bad


def fmt_runs(r: dict) -> str:
    return ", ".join(f"{x:.2f}" for x in r["all_s"])


def markdown(res: dict, info: dict) -> str:
    o, s, d = res["ours"], res["spark"], res["delta"]
    lines = [
        DOC_BEGIN,
        "## Table maintenance (M1 binpack, M2 z-order, M3 expiry)",
        "",
        "Generated by `bench/maintenance.py`; do not edit by hand, rerun `.venv/bin/python bench/maintenance.py`.",
        "",
        f"Run {info['date']} on {info['machine']['nproc']} cores ({info['machine']['cpu']}), load average "
        f"{info['load']} at the start; TPC-H lineitem SF{info['sf']} ({info['rows']:,} rows) appended as "
        f"{info['slices']} commits to each table; M1 and M2 {info['runs']} runs each, ours and delta-rs's in turn "
        "on the tables as prepared, medians (time of the median run, median peak); Spark and M3 one run; each "
        "procedure in a process of its own.",
        "",
        "| | ours s | Spark s | delta-rs s | ours / Spark | ours / delta-rs | ours peak MiB | delta-rs peak MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    names = {"binpack": "M1 binpack", "zorder": "M2 z-order", "expire": "M3 expiry (delta-rs: vacuum)"}
    for what in ("binpack", "zorder", "expire"):
        lines.append(
            f"| {names[what]} | {o[what]['s']:.2f} | {s[what]['s']:.2f} | {d[what]['s']:.2f} | "
            f"{o[what]['s'] / s[what]['s']:.2f}x | {o[what]['s'] / d[what]['s']:.2f}x | "
            f"{o[what]['peak_mb']:.0f} | {d[what]['peak_mb']:.0f} |"
        )
    lines += [
        "",
        "Issue 36's targets, this run:",
        "",
        f"- compaction (M1) vs Spark: {base.target(o['binpack']['s'] / s['binpack']['s'], 0.3)}; vs delta-rs: "
        f"{base.target(o['binpack']['s'] / d['binpack']['s'], 0.7)}; peak memory {o['binpack']['peak_mb']:.0f} MiB "
        f"against delta-rs's {d['binpack']['peak_mb']:.0f} MiB "
        f"({'below' if o['binpack']['peak_mb'] < d['binpack']['peak_mb'] else 'not below'})",
        f"- z-order (M2) vs Spark: {base.target(o['zorder']['s'] / s['zorder']['s'], 0.3)}; vs delta-rs: "
        f"{base.target(o['zorder']['s'] / d['zorder']['s'], 0.7)}; peak memory {o['zorder']['peak_mb']:.0f} MiB "
        f"against delta-rs's {d['zorder']['peak_mb']:.0f} MiB "
        f"({'below' if o['zorder']['peak_mb'] < d['zorder']['peak_mb'] else 'not below'})",
        f"- every run's seconds, M1 ours / delta-rs: {fmt_runs(o['binpack'])} / {fmt_runs(d['binpack'])}; "
        f"M2: {fmt_runs(o['zorder'])} / {fmt_runs(d['zorder'])}",
        f"- expiry (M3) vs Spark: {base.target(o['expire']['s'] / s['expire']['s'], 0.2)}",
        "",
        f"Results: ours {json.dumps(o['binpack']['result'])} (M1), {json.dumps(o['expire']['result'])} (M3); "
        f"Spark {json.dumps(s['binpack']['result'])} (M1), {json.dumps(s['expire']['result'])} (M3).",
        "",
        DOC_END,
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="SF 0.01 as 20 appends, no docs")
    ap.add_argument("--sf", default="1")
    ap.add_argument("--appends", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3, help="runs of M1 and M2 (medians reported)")
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--child", nargs=5, metavar=("KIND", "ARG", "WORK", "DATA", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, arg, work, data, n = args.child
        print(json.dumps(child(kind, arg, Path(work), Path(data), int(n))), flush=True)
        # deltalake 1.6.6 sometimes aborts while the interpreter shuts down: the result is out.
        os._exit(0)
    if args.quick:
        args.sf, args.appends, args.no_docs, args.runs = "0.01", 20, True, 2
    data = base.ensure_data(args.sf)
    work = base.CACHE / "maintenance"
    shutil.rmtree(work, ignore_errors=True)
    (work / "wh").mkdir(parents=True)
    load = base.loadavg()
    n = args.appends
    prep = run_child("prepare", "iceberg", work, data, n)
    run_child("prepare", "delta", work, data, n)
    print(f"prepared: {json.dumps(prep)}", flush=True)
    # M1 and M2 run args.runs times, ours and delta-rs's in turn, each on the tables as prepared
    # (restored from a copy); the medians are reported. M3 runs once, on ours after the last M1.
    pristine = [(work / name, work / f"{name}.orig") for name in ("wh", "catalog.db", "delta")]
    for live, copy in pristine:
        (shutil.copytree if live.is_dir() else shutil.copy2)(live, copy)
    runs: dict = {"ours": {"binpack": [], "zorder": []}, "delta": {"binpack": [], "zorder": []}}
    for r in range(args.runs):
        for live, copy in pristine:
            if live.is_dir():
                shutil.rmtree(live)
                shutil.copytree(copy, live)
            else:
                shutil.copy2(copy, live)
        for what in ("binpack", "zorder"):
            for who in ("ours", "delta"):
                runs[who][what].append(run_child(who, what, work, data, n))
            ours_r, delta_r = runs["ours"][what][-1], runs["delta"][what][-1]
            print(f"run {r + 1}", what, json.dumps(ours_r), json.dumps(delta_r), flush=True)
    for _, copy in pristine:
        (shutil.rmtree if copy.is_dir() else os.remove)(copy)
    res: dict = {who: {what: median_run(rs) for what, rs in by.items()} for who, by in runs.items()}
    for who in ("ours", "delta"):
        res[who]["expire"] = run_child(who, "expire", work, data, n)
    print("expire", json.dumps(res["ours"]["expire"]), json.dumps(res["delta"]["expire"]), flush=True)
    res["spark"] = run_child("spark", "-", work, data, n)
    print("spark", json.dumps(res["spark"]), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    bad = check(res, prep["rows"])
    if bad:
        print("MISMATCH: " + "; ".join(bad))
        return 1
    info = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": base.machine(),
        "load": load,
        "sf": args.sf,
        "rows": prep["rows"],
        "slices": prep["slices"],
        "runs": args.runs,
    }
    section = markdown(res, info)
    print(section)
    if not args.no_docs:
        base.write_section("bench/maintenance.py", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
