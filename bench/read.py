"""Read benchmark: streaming a whole Iceberg table back, ours against DuckDB's iceberg_scan and PyIceberg.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/read.py            # TPC-H lineitem SF1, 3 interleaved runs, writes its section of docs/benchmarks.md
    .venv/bin/python bench/read.py --quick    # SF 0.01, 1 run, no docs: checks the harness

The table is written once per run (by pyiceberg-go, untimed, unpartitioned, zstd) into a SQLite catalog.
Each reader then runs in a fresh child process: it opens the table (untimed), records its RSS, resets the
kernel's high-water mark, and times reading every row of every column as a stream of batches that it
drops as it goes (so the peak is what the reader holds, not what the consumer keeps), then checks the row
count and the sum of l_quantity. Readers:

    pyiceberg_go.scan      Table.scan() stream, batch by batch
    pyiceberg_go.to_arrow  Table.to_arrow(): the whole table materialised (for comparison)
    duckdb.iceberg_scan    DuckDB 1.5's iceberg_scan(metadata.json), fetched as record batches
    pyiceberg.batches      PyIceberg 0.12 scan().to_arrow_batch_reader()

Then the same data is appended twice more (untimed) and the streaming readers read the 3x table: a reader
whose memory is bounded by its batches peaks about as high at 3x as at 1x.

Reported: seconds, peak RSS above the baseline, that peak as a fraction of the table's Arrow size, and the
streaming readers' peak at 3x over their peak at 1x.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as base  # noqa: E402  (data generation, RSS probes, machine facts, the child environment)

ROOT, CACHE, DOCS = base.ROOT, base.CACHE, base.DOCS
DOC_BEGIN = "<!-- bench/read.py: begin -->"
DOC_END = "<!-- bench/read.py: end -->"
READERS = ("pyiceberg_go.scan", "pyiceberg_go.to_arrow", "duckdb.iceberg_scan", "pyiceberg.batches")
STREAMING = ("pyiceberg_go.scan", "duckdb.iceberg_scan")
COPIES = 3
IDENT = "bench.lineitem"


def props(work: Path) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{work}/catalog.db", "warehouse": f"file://{work}/wh"}


def write_table(data: Path, work: Path, copies: int) -> dict:
    """Child: writes the table with pyiceberg-go (create, or append up to ``copies`` copies of the data);
    returns the facts the readers check against."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    import pyiceberg_go as ig

    t = pq.read_table(data)
    ig.configure(catalogs={"local": props(work)})
    if copies == 1:
        ig.writeTo(t, f"local.{IDENT}").create()
    else:
        for _ in range(copies - 1):
            ig.writeTo(t, f"local.{IDENT}").append()
    qty = float(pc.sum(t["l_quantity"].cast("float64")).as_py())
    return {"rows": t.num_rows * copies, "qty": qty * copies, "arrow_bytes": t.nbytes * copies}


def child(name: str, work: Path, facts: dict) -> dict:
    import pyarrow as pa
    import pyarrow.compute as pc

    res: dict = {"reader": name}
    rows, qty = 0, 0.0

    def consume(batch: pa.RecordBatch) -> None:
        nonlocal rows, qty
        rows += batch.num_rows
        qty += pc.sum(batch.column("l_quantity").cast(pa.float64())).as_py() or 0.0

    if name.startswith("pyiceberg_go."):
        import pyiceberg_go as ig

        ig.configure(catalogs={"local": props(work)})
        ig.abi_version()
        tbl = ig.table(f"local.{IDENT}")

        def read() -> None:
            if name == "pyiceberg_go.to_arrow":
                for b in tbl.to_arrow().to_batches():
                    consume(b)
            else:
                for b in pa.RecordBatchReader.from_stream(tbl.scan()):
                    consume(b)
    elif name == "duckdb.iceberg_scan":
        sys.path.insert(0, str(ROOT / "tests" / "py"))
        import duckdb
        import duckdb_extension_avro
        import duckdb_extension_iceberg
        from conftest import _extension_file

        from pyiceberg.catalog.sql import SqlCatalog

        meta = SqlCatalog("local", **props(work)).load_table(IDENT).metadata_location.removeprefix("file://")
        con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
        con.execute(f"LOAD '{_extension_file(duckdb_extension_avro, 'avro')}'")
        con.execute(f"LOAD '{_extension_file(duckdb_extension_iceberg, 'iceberg')}'")

        def read() -> None:
            for b in con.sql(f"SELECT * FROM iceberg_scan('{meta}')").fetch_record_batch(1 << 17):
                consume(b)
    else:
        from pyiceberg.catalog.sql import SqlCatalog

        tbl = SqlCatalog("local", **props(work)).load_table(IDENT)

        def read() -> None:
            for b in tbl.scan().to_arrow_batch_reader():
                consume(b)

    pa.default_memory_pool().release_unused()
    res["rss_baseline_mb"] = base._status_mb("VmRSS")
    res["peak_reset"] = base._reset_peak()
    t0 = time.perf_counter()
    read()
    res["seconds"] = time.perf_counter() - t0
    res["rss_peak_mb"] = base._status_mb("VmHWM")
    res["ok"] = rows == facts["rows"] and abs(qty - facts["qty"]) <= 1e-6 * max(1.0, facts["qty"])
    res["rows"] = rows
    return res


def run_child(args: list[str]) -> dict:
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], capture_output=True, text=True,
                       env=base.child_env(), cwd=ROOT)
    if p.returncode != 0:
        return {"ok": False, "error": p.stderr.strip()[-2000:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def markdown(rows: list[dict], info: dict) -> str:
    arrow_mb = info["arrow_bytes"] / 2**20
    big = {r["reader"]: r for r in rows if r["copies"] == COPIES}
    lines = [
        DOC_BEGIN,
        "## Reading a table back (R1)",
        "",
        "Generated by `bench/read.py`; do not edit by hand, rerun `.venv/bin/python bench/read.py`.",
        "",
        f"Run {info['date']} on {info['machine']['nproc']} cores ({info['machine']['cpu']}): TPC-H lineitem "
        f"SF{info['sf']} ({info['rows']:,} rows, {arrow_mb:,.0f} MiB in Arrow) written once by pyiceberg-go, then read "
        f"whole, every column, {info['runs']} interleaved runs, medians. Streams are consumed batch by batch and "
        "dropped; `to_arrow` keeps the whole table. Peak is the RSS high-water mark above the reader's baseline.",
        "",
        "| reader | seconds | peak above baseline (MiB) | peak / table in Arrow | runs ok | "
        f"{COPIES}x table: seconds | {COPIES}x: peak (MiB) | peak at {COPIES}x / peak at 1x |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["copies"] != 1:
            continue
        b = big.get(r["reader"])
        tail = (f"{b['seconds']:.2f} | {b['peak_mb']:.0f} | {b['peak_mb'] / r['peak_mb']:.2f}" if b and r["peak_mb"] > 0
                else "- | - | -")
        lines.append(f"| {r['reader']} | {r['seconds']:.2f} | {r['peak_mb']:.0f} | {r['peak_mb'] / arrow_mb:.2f} | "
                     f"{r['ok']}/{r['runs']} | {tail} |")
    lines += ["", DOC_END]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sf", default="1")
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--write", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--facts", help=argparse.SUPPRESS)
    ap.add_argument("--copies", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write:
        print(json.dumps(write_table(Path(args.data), Path(args.work), args.copies)))
        return 0
    if args.child:
        print(json.dumps(child(args.child, Path(args.work), json.loads(args.facts))))
        return 0
    if args.quick:
        args.runs, args.sf, args.no_docs = 1, "0.01", True
    data = base.ensure_data(args.sf)
    base.ensure_pydeps()
    results: list[dict] = []
    facts: dict = {}
    for run in range(args.runs):
        work = CACHE / "read" / f"run-{run}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "wh").mkdir(parents=True)
        subprocess.run([sys.executable, str(Path(base.__file__).resolve()), "--prepare-namespace", str(work)],
                       check=True, env=base.child_env(), cwd=ROOT)
        facts = run_child(["--write", "--work", str(work), "--data", str(data), "--copies", "1"])
        if "rows" not in facts:
            print(facts.get("error"), file=sys.stderr)
            return 1
        first = facts
        for copies, readers in ((1, READERS), (COPIES, STREAMING)):
            if copies != 1:
                facts = run_child(["--write", "--work", str(work), "--data", str(data), "--copies", str(copies)])
            order = readers if run % 2 == 0 else tuple(reversed(readers))
            for name in order:
                r = run_child(["--child", name, "--work", str(work), "--facts", json.dumps(facts)])
                r.setdefault("reader", name)
                r["run"], r["copies"] = run, copies
                results.append(r)
                print(json.dumps(r), flush=True)
        facts = first
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for copies in (1, COPIES):
        for name in READERS:
            rs = [r for r in results if r.get("reader") == name and r["copies"] == copies and "seconds" in r]
            if rs:
                rows.append({"reader": name, "copies": copies, "seconds": statistics.median(r["seconds"] for r in rs),
                             "peak_mb": statistics.median(r["rss_peak_mb"] - r["rss_baseline_mb"] for r in rs),
                             "ok": sum(bool(r.get("ok")) for r in rs), "runs": len(rs)})
    info = {"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": base.machine(),
            "runs": args.runs, "sf": args.sf, "rows": facts["rows"], "arrow_bytes": facts["arrow_bytes"]}
    section = markdown(rows, info)
    print(section)
    if not args.no_docs:
        base.write_section("bench/read.py", section)
    bad = [r for r in results if not r.get("ok")]
    if any(r.get("reader", "").startswith("pyiceberg_go.") for r in bad):
        print(f"read.py: pyiceberg-go read wrong rows in {len(bad)} runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
