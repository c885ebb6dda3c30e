"""Compaction: our rewrite_data_files against Spark 4.1's CALL system.rewrite_data_files.

    .venv/bin/python bench/compact.py --quick     # 100 appends of 2,000 rows: checks the harness
    .venv/bin/python bench/compact.py --appends 1000 --rows 6000

Twin tables (partitioned by a low-cardinality string) are written by this library as many small
appends with a few merge-on-read deletes; Spark compacts one (binpack, then a sort twin), we
compact the other with the same arguments. Reported: seconds of each procedure (Spark's session
start and table writes excluded), the ratio ours/Spark, and that both kept the same row count and
ended with file counts within one. Not a CI gate: the lead decides on targets (issue 36).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sparkbench import CATALOG, ensure_spark, jar_names, start_session

import pyiceberg_go as ig


def spark_jars() -> dict:
    """The jar folder: .ci/spark.sh's, else its cache when every pinned jar is already there."""
    env = ensure_spark()
    if "skip" in env:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pyiceberg-go" / "jars"
        if all((cache / n).is_file() for n in jar_names()):
            return {"jars": str(cache)}
    return env


def rows(seed: int, first: int, n: int) -> pa.Table:
    rnd = random.Random(seed)
    return pa.table(
        {
            "id": pa.array(range(first, first + n), pa.int64()),
            "region": pa.array([rnd.choice(["north", "south", "east", "west"]) for _ in range(n)], pa.string()),
            "amount": pa.array([rnd.uniform(-1e3, 1e3) for _ in range(n)], pa.float64()),
            "note": pa.array([f"note-{rnd.randrange(10_000)}" for _ in range(n)], pa.string()),
        }
    )


def history(name: str, appends: int, n: int) -> None:
    ig.writeTo(rows(0, 0, n), name).partitionedBy("region").tableProperty("write.delete.mode", "merge-on-read").create()
    for i in range(1, appends):
        ig.writeTo(rows(i, i * n, n), name).append()
    ig.table(name).delete("id % 97 = 5")


def files(spark, name: str) -> int:
    return spark.sql(f"SELECT count(*) FROM {CATALOG}.{name}.data_files").collect()[0][0]


def count(spark, name: str) -> int:
    return spark.sql(f"SELECT count(*) FROM {CATALOG}.{name}").collect()[0][0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="100 appends of 2,000 rows")
    ap.add_argument("--appends", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=6000, help="rows per append")
    args = ap.parse_args()
    appends, n = (100, 2000) if args.quick else (args.appends, args.rows)
    spark_env = spark_jars()
    if "skip" in spark_env:
        print(f"cannot run Spark: {spark_env['skip']}")
        return 1
    work = Path(tempfile.mkdtemp(prefix="bench-compact-"))
    try:
        (work / "wh").mkdir()
        ig.configure(
            catalogs={
                CATALOG: {
                    "type": "sql",
                    "uri": f"sqlite:///{work / 'catalog.db'}",
                    "warehouse": f"file://{work / 'wh'}",
                }
            }
        )
        cases = [
            ("binpack", "", {}),
            (
                "sort",
                ", strategy => 'sort', sort_order => 'amount DESC'",
                {"strategy": "sort", "sort_order": "amount DESC"},
            ),
        ]
        for label, _, _ in cases:
            for side in ("spark", "ours"):
                history(f"bench.{label}_{side}", appends, n)
        spark = start_session(work, Path(spark_env["jars"]))
        spark.sparkContext.setLogLevel("ERROR")
        print(f"{appends} appends x {n} rows, {os.cpu_count()} cores")
        for label, sql_args, kwargs in cases:
            t0 = time.perf_counter()
            theirs = (
                spark.sql(f"CALL {CATALOG}.system.rewrite_data_files(table => 'bench.{label}_spark'{sql_args})")
                .collect()[0]
                .asDict()
            )
            spark_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            ours = ig.table(f"{CATALOG}.bench.{label}_ours").rewrite_data_files(**kwargs).counts()
            ours_s = time.perf_counter() - t0
            same_rows = count(spark, f"bench.{label}_spark") == count(spark, f"bench.{label}_ours")
            f_spark, f_ours = files(spark, f"bench.{label}_spark"), files(spark, f"bench.{label}_ours")
            print(
                f"{label:8s} spark {spark_s:7.2f}s  ours {ours_s:7.2f}s  ratio {ours_s / spark_s:5.2f}  "
                f"files {f_spark}/{f_ours}  "
                f"rewritten {theirs['rewritten_data_files_count']}/{ours['rewritten_data_files_count']}  "
                f"same rows {same_rows}"
            )
            if not same_rows or abs(f_spark - f_ours) > 1:
                print("MISMATCH")
                return 1
        spark.stop()
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
