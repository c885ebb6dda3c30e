"""Ray Data writes: our datasink against Ray's own ``write_iceberg`` and our single-process writer.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python bench/ray_write.py            # TPC-H lineitem SF10 (60M rows) in 20 Parquet files;
                                                   # writes its section of docs/benchmarks.md
    .venv/bin/python bench/ray_write.py --quick    # SF 0.01, no docs: checks the harness

The same Parquet files (lineitem at the scale factor, cut into 20 files so that Ray reads them in
parallel) are written to a new, unpartitioned table on the embedded SQLite catalog, each
competitor in a process of its own, one after another:

- ``ours_ray``: a local Ray cluster (``ray.init(num_cpus=<cores>)``), ``ray.data.read_parquet``
  and ``write_datasink(ig.ray.IcebergDatasink(..., mode="create"))``: our writer in every write
  task, one commit;
- ``ray_write_iceberg``: the same cluster and Dataset, ``Dataset.write_iceberg`` (Ray's
  PyIceberg-based sink) into a table PyIceberg created with the same schema (both read through
  Ray's V1 Parquet reader: with the V2 default, Ray 2.60's write_iceberg fails on the schema of
  Ray's file listing);
- ``ours_single``: no Ray; one process streams the files (``pyarrow.dataset`` scanner as a
  RecordBatchReader) into ``ig.writeTo(...).create()``;
- and, as the floor of both Ray writes, ``ray_read_only``: the same cluster and Dataset, its
  batches iterated on the driver and dropped (Ray's reading and moving of the blocks, no write).

Reported: seconds from the start of the write to its return (cluster start and table creation
excluded), rows read back by PyIceberg, data files, and ratios. Issue 38's target: ours through
Ray at most 0.3x of ``write_iceberg``'s time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as base  # noqa: E402  (machine facts, data, the cache folder, docs)

DOC_BEGIN = "<!-- bench/ray_write.py: begin -->"
DOC_END = "<!-- bench/ray_write.py: end -->"
COMPETITORS = ("ours_ray", "ray_write_iceberg", "ours_single")
# Not a competitor: Ray's part of both Ray writes, the same Dataset iterated on the driver.
BASELINE = "ray_read_only"
FILES = 20


def split_files(sf: str) -> Path:
    """lineitem at ``sf`` as FILES Parquet files of about equal rows, cached."""
    import pyarrow.parquet as pq

    out = base.CACHE / f"ray-sf{sf}"
    done = base.CACHE / f"ray-sf{sf}.done"
    if done.exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    src = pq.ParquetFile(base.ensure_data(sf))
    per = -(-src.metadata.num_rows // FILES)
    schema = base._plain_schema(src.schema_arrow)
    k, n, w = 0, 0, None
    for b in src.iter_batches(batch_size=65536):
        b = b.cast(schema)
        while b.num_rows:
            if w is None:
                w = pq.ParquetWriter(out / f"part-{k:02d}.parquet", schema, compression="zstd")
            take = min(b.num_rows, per - n)
            w.write_batch(b.slice(0, take))
            b, n = b.slice(take), n + take
            if n == per:
                w.close()
                w, k, n = None, k + 1, 0
    if w is not None:
        w.close()
    done.touch()
    return out


def catalog_props(work: Path) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{work / 'catalog.db'}", "warehouse": f"file://{work / 'wh'}"}


def child(who: str, data: Path, work: Path) -> dict:
    """One competitor in this process; returns its seconds and files."""
    import pyarrow.dataset as pads

    import pyiceberg_go as ig

    shutil.rmtree(work, ignore_errors=True)
    (work / "wh").mkdir(parents=True)
    props = catalog_props(work)
    ig.configure(catalogs={"local": props})
    ident = f"bench.{who}"
    if who == "ours_single":
        reader = pads.dataset(str(data), format="parquet").scanner(batch_size=131072).to_reader()
        t0 = time.perf_counter()
        ig.writeTo(reader, f"local.{ident}").create()
        return {"s": time.perf_counter() - t0}
    import ray

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        # Ray 2.60's default Parquet reader (datasource V2) hands a sink's on_write_start the
        # schema of its file listing, which Ray's own write_iceberg fails on; both competitors
        # read through the V1 reader.
        ctx.use_datasource_v2 = False
        ds = ray.data.read_parquet(str(data))
        if who == BASELINE:
            t0 = time.perf_counter()
            rows = sum(b.num_rows for b in ds.iter_batches(batch_format="pyarrow", batch_size=None))
            return {"s": time.perf_counter() - t0, "rows": rows, "files": 0, "snapshots": 0}
        if who == "ours_ray":
            sink = ig.ray.IcebergDatasink(f"local.{ident}", mode="create")
            t0 = time.perf_counter()
            ds.write_datasink(sink)
            return {"s": time.perf_counter() - t0}
        from pyiceberg.catalog.sql import SqlCatalog

        cat = SqlCatalog("local", **{k: v for k, v in props.items() if k != "type"})
        cat.create_namespace("bench")
        cat.create_table(ident, schema=ds.schema().base_schema)
        t0 = time.perf_counter()
        ds.write_iceberg(ident, catalog_kwargs={"name": "local", **props})
        return {"s": time.perf_counter() - t0}
    finally:
        ray.shutdown()


def check(who: str, work: Path) -> dict:
    """Rows and data files of the competitor's table, read by PyIceberg."""
    from pyiceberg.catalog.sql import SqlCatalog

    props = catalog_props(work)
    t = SqlCatalog("local", **{k: v for k, v in props.items() if k != "type"}).load_table(f"bench.{who}")
    files = list(t.scan().plan_files())
    return {"rows": sum(f.file.record_count for f in files), "files": len(files), "snapshots": len(t.snapshots())}


def run_child(who: str, data: Path, work: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYICEBERG_GO_PROGRESS="0")
    out = subprocess.run(
        [sys.executable, __file__, "--child", who, str(data), str(work)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{who} failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if who != BASELINE:
        r.update(check(who, work))
    r["competitor"] = who
    return r


def markdown(res: dict[str, dict], info: dict) -> str:
    ray_s, theirs = res["ours_ray"]["s"], res["ray_write_iceberg"]["s"]
    lines = [
        DOC_BEGIN,
        "## Distributed write through Ray Data (R1)",
        "",
        "Generated by `bench/ray_write.py`; do not edit by hand, rerun `.venv/bin/python bench/ray_write.py`.",
        "",
        f"Run {info['date']} on {info['machine']['nproc']} cores ({info['machine']['cpu']}), load average "
        f"{info['load']} at the start; TPC-H lineitem SF{info['sf']} ({info['rows']:,} rows) in {FILES} Parquet "
        f"files, written to a new unpartitioned table on the embedded SQLite catalog; one run; each "
        f"competitor a process of its own (a local Ray cluster of {info['machine']['nproc']} CPUs for the "
        "Ray ones).",
        "",
        "| competitor | seconds | rows read back | data files | snapshots | time / write_iceberg's |",
        "|---|---|---|---|---|---|",
    ]
    for c in (*COMPETITORS, BASELINE):
        r = res[c]
        lines.append(
            f"| {c} | {r['s']:.1f} | {r['rows']:,} | {r['files']} | {r['snapshots']} | {r['s'] / theirs:.2f}x |"
        )
    lines += [
        "",
        f"Issue 38's target, this run: ours through Ray / Ray's write_iceberg: {base.target(ray_s / theirs, 0.3)}; "
        f"ours through Ray / our single process: {ray_s / res['ours_single']['s']:.2f}x; Ray reading the same "
        f"Dataset without writing ({BASELINE}) took {res[BASELINE]['s'] / theirs:.2f}x of write_iceberg's time.",
        "",
        DOC_END,
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="SF 0.01, no docs")
    ap.add_argument("--sf", default=None)
    ap.add_argument("--child", nargs=3, metavar=("WHO", "DATA", "WORK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        who, data, work = args.child
        print(json.dumps(child(who, Path(data), Path(work))), flush=True)
        return 0
    sf = args.sf or ("0.01" if args.quick else "10")
    data = split_files(sf)
    load = base.loadavg()
    res = {}
    for who in (*COMPETITORS, BASELINE):
        r = run_child(who, data, base.CACHE / "ray-work" / who)
        print(json.dumps(r), flush=True)
        res[who] = r
    import pyarrow.dataset as pads

    rows = pads.dataset(str(data), format="parquet").count_rows()
    bad = [f"{c}: {r['rows']} rows" for c, r in res.items() if r["rows"] != rows]
    bad += [
        f"{c}: {r['snapshots']} snapshots"
        for c, r in res.items()
        if c in ("ours_ray", "ours_single") and r["snapshots"] != 1
    ]
    if bad:
        raise SystemExit("a competitor's table is wrong: " + "; ".join(bad))
    shutil.rmtree(base.CACHE / "ray-work", ignore_errors=True)
    info = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": base.machine(),
        "load": load,
        "sf": sf,
        "rows": rows,
    }
    section = markdown(res, info)
    print(section)
    if not args.quick:
        base.write_section("bench/ray_write.py", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
