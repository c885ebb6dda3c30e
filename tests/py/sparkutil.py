"""Apache Spark 4.1 + Iceberg (PySpark, local mode) as an independent engine in the Python tests.

One SparkSession per pytest run, started lazily by the first test that asks for
the ``spark`` fixture. Each test then gets, through ``spark_catalog``, a Spark
catalog on that test's own SQLite catalog and warehouse (see conftest.catalog_dir).

Iceberg's JdbcCatalog writes the Spark catalog's name into the ``catalog_name``
column of its SQLite rows, so the Spark catalog must be called ``local`` like the
tests' catalog; it is re-pointed at the new SQLite file before every test and
Spark's catalog manager is reset so the next query builds it afresh.

Set-up is ``.ci/spark.sh`` (pyspark into .venv, pinned jars into a cache folder);
if Java, pyspark or a jar is missing the fixtures fail with a message saying so.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SETUP_SCRIPT = REPO / ".ci" / "spark.sh"
#: The Spark catalog name; it must equal the tests' catalog name (see module doc).
SPARK_CATALOG = "local"

_session: Any = None
_scratch: Path | None = None
_start_error: str | None = None
#: Seconds the SparkSession took to start (None until started).
start_seconds: float | None = None


def jar_dir() -> Path:
    """The cache folder .ci/spark.sh downloads the jars into."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "pyiceberg-go" / "jars"


def pinned_jars() -> list[str]:
    """File names of the jars pinned in .ci/spark.sh (its JARS list is the one source of truth)."""
    text = SETUP_SCRIPT.read_text()
    names = [Path(m.group(1)).name for m in re.finditer(r'"(\S+\.jar) [0-9a-f]{64}"', text)]
    if not names:
        raise RuntimeError(f"no pinned jars found in {SETUP_SCRIPT}")
    return names


def java_binary() -> str | None:
    """The java that spark-submit will run: $JAVA_HOME/bin/java, else java on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "java", os.X_OK):
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def missing_prerequisites(folder: Path | None = None) -> list[str]:
    """What is missing to start Spark, one sentence each ([] when all is there)."""
    problems = []
    if java_binary() is None:
        problems.append("Java 17+ is not installed (no java on PATH and no $JAVA_HOME/bin/java)")
    try:
        import pyspark  # noqa: F401
    except ImportError as e:
        problems.append(f"pyspark is not importable ({e})")
    folder = folder or jar_dir()
    for name in pinned_jars():
        if not (folder / name).is_file():
            problems.append(f"jar {folder / name} is missing")
    return problems


_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def _start() -> Any:
    global start_seconds, _scratch
    problems = missing_prerequisites()
    if problems:
        raise RuntimeError("cannot start Spark: " + "; ".join(problems) + f". Run `bash {SETUP_SCRIPT.relative_to(REPO)}`.")
    from pyspark.sql import SparkSession

    scratch = _scratch = Path(tempfile.mkdtemp(prefix="pyiceberg-go-spark-"))
    log_config = scratch / "log4j2.properties"
    log_config.write_text(_LOG4J2)
    jars = [str(jar_dir() / name) for name in pinned_jars()]
    # Bind to loopback: Spark otherwise resolves the host name and warns about it.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    began = time.monotonic()
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("pyiceberg-go-tests")
        # In local mode the driver is the only JVM: its class path is enough (no jar distribution).
        .config("spark.driver.extraClassPath", os.pathsep.join(jars))
        .config("spark.driver.memory", "2g")
        # C1 only: these JVMs live for one test run on tiny data, so quick compilation wins.
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log_config} -Duser.timezone=UTC -XX:TieredStopAtLevel=1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(scratch / "spark-warehouse"))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    start_seconds = time.monotonic() - began
    return spark


def get_spark() -> Any:
    """The run's SparkSession, started on first call; a failed start fails every later call at once."""
    global _session, _start_error
    if _session is None:
        if _start_error is not None:
            pytest.fail(_start_error, pytrace=False)
        try:
            _session = _start()
        except Exception as e:  # the message must reach every test that needs Spark
            _start_error = f"Spark could not start: {e}"
        if _session is None:
            pytest.fail(_start_error or "Spark could not start", pytrace=False)
    return _session


def stop_spark() -> None:
    """Stop the run's SparkSession if it was started."""
    global _session, _scratch
    if _session is not None:
        _session.stop()
        _session = None
    if _scratch is not None:
        shutil.rmtree(_scratch, ignore_errors=True)
        _scratch = None


def register_catalog(spark: Any, uri: str, warehouse: str) -> str:
    """Point Spark catalog ``local`` at a SQLite catalog (``sqlite:///path`` URI) and warehouse; returns its name.

    ``jdbc.schema-version=V1`` makes Iceberg create (or keep) the ``iceberg_type``
    column PyIceberg 0.12 and iceberg-go use; ``cache-enabled=false`` makes Spark
    reload metadata on every query, since other writers commit between queries.
    """
    path = uri.removeprefix("sqlite:///")
    if path == uri:
        raise ValueError(f"expected a sqlite:/// URI, got {uri!r}")
    prefix = f"spark.sql.catalog.{SPARK_CATALOG}"
    settings = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": f"jdbc:sqlite:{path}",
        f"{prefix}.warehouse": warehouse,
        f"{prefix}.jdbc.schema-version": "V1",
        f"{prefix}.cache-enabled": "false",
    }
    for key, value in settings.items():
        spark.conf.set(key, value)
    # Drop the catalog built for the previous test; the next use re-reads the settings above.
    spark._jsparkSession.sessionState().catalogManager().reset()
    return SPARK_CATALOG


def close_catalog(spark: Any) -> None:
    """Close the JDBC connections and file IO of Spark's ``local`` catalog."""
    manager = spark._jsparkSession.sessionState().catalogManager()
    manager.catalog(SPARK_CATALOG).icebergCatalog().close()
    manager.reset()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The run's SparkSession (local[2], UTC, Iceberg extensions), started on first use."""
    yield get_spark()
    stop_spark()


@pytest.fixture
def spark_catalog(spark: Any, catalog_dir: Any) -> Iterator[str]:
    """Name of the Spark catalog on this test's SQLite catalog and warehouse, for ``f"{name}.db.t"``."""
    name = register_catalog(spark, catalog_dir.uri, catalog_dir.warehouse)
    yield name
    close_catalog(spark)


def register_rest_catalog(spark: Any, name: str, uri: str, **properties: str) -> str:
    """Register Spark catalog ``name`` on an Iceberg REST catalog server at ``uri``; returns ``name``.

    The server decides the warehouse; ``cache-enabled=false`` makes Spark reload
    metadata on every query since other writers commit between queries. Extra
    ``properties`` (``-`` spelled ``_``) are passed as catalog properties.
    """
    prefix = f"spark.sql.catalog.{name}"
    settings = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "rest",
        f"{prefix}.uri": uri,
        f"{prefix}.cache-enabled": "false",
    }
    settings.update({f"{prefix}.{k.replace('_', '-')}": v for k, v in properties.items()})
    for key, value in settings.items():
        spark.conf.set(key, value)
    spark._jsparkSession.sessionState().catalogManager().reset()
    return name


def close_rest_catalog(spark: Any, name: str) -> None:
    """Close the HTTP client and file IO of Spark's REST catalog ``name`` and forget its settings."""
    manager = spark._jsparkSession.sessionState().catalogManager()
    if manager.isCatalogRegistered(name):
        manager.catalog(name).icebergCatalog().close()
    prefix = f"spark.sql.catalog.{name}"
    for key in [k for k, _ in spark.conf.getAll.items() if k == prefix or k.startswith(prefix + ".")]:
        spark.conf.unset(key)
    manager.reset()
