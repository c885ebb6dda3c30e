"""The Spark 4.1 + Iceberg side of the write benchmark (bench/run.py): session, data load, timed write.

Imported only in a Spark measurement's child process. The session is local[2] with the Iceberg
runtime and SQLite JDBC jars that `.ci/spark.sh` caches (their file names are read from its pinned
list), a JDBC catalog named `local` on the child's SQLite file, and Spark's defaults otherwise
(adaptive execution, C2 JIT), except a 4 GB driver heap so SF1 fits in Spark's cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPARK_SH = ROOT / ".ci" / "spark.sh"
CATALOG = "local"
TABLE = f"{CATALOG}.bench.lineitem"
WARMUP = f"{CATALOG}.bench.warmup"
WARMUP_ROWS = 50_000
DRIVER_MEMORY = "4g"
PARTITION_SQL = {"month": "PARTITIONED BY (months(l_shipdate))", "identity": "PARTITIONED BY (l_shipmode)"}

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def jar_names() -> list[str]:
    """The jar file names pinned in .ci/spark.sh."""
    names = [Path(m.group(1)).name for m in re.finditer(r'"(\S+\.jar) [0-9a-f]{64}"', SPARK_SH.read_text())]
    if not names:
        raise RuntimeError(f"no pinned jars in {SPARK_SH}")
    return names


def choose_spark(names: list[str], is_spark, quick: bool, asked: bool, env: dict) -> tuple[list[str], dict | None]:
    """The competitors to run given Spark's availability: quick mode leaves Spark out unless asked
    (--spark); otherwise .ci/spark.sh runs and, when it cannot provide Spark, the Spark competitors
    are dropped (returned info holds "skip"). On success the children's env gets the jar folder."""
    if not any(is_spark(n) for n in names):
        return names, None
    if quick and not asked:
        return [n for n in names if not is_spark(n)], None
    spark = ensure_spark()
    if "skip" in spark:
        print(f"SKIPPING Spark: {spark['skip']}", flush=True)
        return [n for n in names if not is_spark(n)], spark
    env["BENCH_SPARK_JARS"] = spark["jars"]
    return names, spark


def ensure_spark() -> dict:
    """Runs .ci/spark.sh (idempotent: pyspark and the verified jars); returns {"jars": dir} or {"skip": why}."""
    try:
        p = subprocess.run(["bash", str(SPARK_SH)], capture_output=True, text=True, cwd=ROOT, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"skip": f".ci/spark.sh failed: {e}"}
    if p.returncode != 0:
        return {"skip": f".ci/spark.sh failed: {p.stderr.strip()[-300:]}"}
    jar_dir = Path(p.stdout.strip().splitlines()[-1])
    missing = [n for n in jar_names() if not (jar_dir / n).is_file()]
    if missing:
        return {"skip": f"jars missing from {jar_dir}: {missing}"}
    return {"jars": str(jar_dir)}


def start_session(work: Path, jar_dir: Path):
    """A local[2] SparkSession with Iceberg and catalog `local` (JDBC on work/catalog.db, warehouse work/wh)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    scratch = Path(tempfile.mkdtemp(prefix="spark-", dir=work))
    (scratch / "log4j2.properties").write_text(_LOG4J2)
    jars = os.pathsep.join(str(jar_dir / n) for n in jar_names())
    cat = f"spark.sql.catalog.{CATALOG}"
    return (
        SparkSession.builder.master("local[2]").appName("pyiceberg-go-bench")
        .config("spark.driver.extraClassPath", jars)
        .config("spark.driver.memory", DRIVER_MEMORY)
        .config("spark.driver.extraJavaOptions",
                f"-Dlog4j2.configurationFile=file:{scratch / 'log4j2.properties'} -Duser.timezone=UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", str(scratch / "local"))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(scratch / "spark-warehouse"))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(cat, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{cat}.type", "jdbc")
        .config(f"{cat}.uri", f"jdbc:sqlite:{work / 'catalog.db'}")
        .config(f"{cat}.warehouse", f"file://{work / 'wh'}")
        # The column layout PyIceberg reads (it verifies the table afterwards).
        .config(f"{cat}.jdbc.schema-version", "V1")
        .getOrCreate()
    )


def start_and_load(result: dict, work: Path, path: Path, rows: int):
    """Starts a session on work (timed into result["session_start_s"]) and loads the Parquet at path
    into memory as temp view `src` (read, cache, count: result["load_s"]); fails unless it has rows
    rows. Returns the session, the JVM's pid and the cached DataFrame."""
    t0 = time.perf_counter()
    spark = start_session(work, Path(os.environ["BENCH_SPARK_JARS"]))
    spark.sparkContext.setLogLevel("ERROR")
    result["session_start_s"] = time.perf_counter() - t0
    jvm_pid = str(spark._jvm.java.lang.ProcessHandle.current().pid())
    t0 = time.perf_counter()
    df = spark.read.parquet(str(path)).cache()
    n = df.count()
    result["load_s"] = time.perf_counter() - t0
    if n != rows:
        raise SystemExit(f"Spark loaded {n} rows from {path}, expected {rows}")
    df.createOrReplaceTempView("src")
    return spark, jvm_pid, df


def spark_child(result: dict, workload: str, path: Path, work: Path, facts: dict, status_mb, reset_peak) -> None:
    """Fills result with session start, load, write seconds and the JVM's RSS for one Spark measurement."""
    from run import DISTRIBUTION, PARTITIONED, SORT_KEYS, base_workload

    base = base_workload(workload)
    spark, jvm_pid, df = start_and_load(result, work, path, facts["rows"])
    result["spark_partitions"] = df.rdd.getNumPartitions()
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.bench")
    part = PARTITION_SQL.get(PARTITIONED.get(base, ""), "")

    def make_table(name: str):
        spark.sql(f"CREATE TABLE {name} USING iceberg {part} "
                  "TBLPROPERTIES ('write.parquet.compression-codec'='zstd') AS SELECT * FROM src LIMIT 0")
        if base == "L2":
            spark.sql(f"ALTER TABLE {name} WRITE ORDERED BY {', '.join(SORT_KEYS)}")

    def writer(frame, name: str):
        w = frame.writeTo(name)
        return w.option("distribution-mode", DISTRIBUTION[base]) if base in DISTRIBUTION else w

    # Warm the session: the same write of a slice into a twin table (class loading, JIT, codegen),
    # then drop it, so the timed write runs in a session that has written before.
    make_table(WARMUP)
    t0 = time.perf_counter()
    writer(df.limit(WARMUP_ROWS), WARMUP).append()
    result["warmup_s"] = time.perf_counter() - t0
    spark.sql(f"DROP TABLE {WARMUP} PURGE")
    make_table(TABLE)
    timed = writer(df, TABLE)

    result["rss_baseline_mb"] = status_mb("VmRSS", jvm_pid)
    result["peak_reset"] = reset_peak(jvm_pid)
    t0 = time.perf_counter()
    timed.append()
    result["seconds"] = time.perf_counter() - t0
    result["rss_peak_mb"] = status_mb("VmHWM", jvm_pid)
    result["rss_after_mb"] = status_mb("VmRSS", jvm_pid)
    result["rss_of"] = f"JVM pid {jvm_pid}"
    result["spark_count"] = spark.table(TABLE).count()
    spark.stop()
