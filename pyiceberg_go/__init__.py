"""pyiceberg_go: write Apache Iceberg tables with Spark's DataFrameWriterV2 semantics, no JVM.

A thin layer over the Go library ``libpyiceberg_go``: Python builds request
documents and hands Arrow data over through the Arrow C Stream Interface.
Importing the package does not load the library; the first call does.

Example::

    import pyiceberg_go as ig

    ig.configure(catalogs={"local": {"type": "sql", "uri": "sqlite:////tmp/x/catalog.db",
                                     "warehouse": "file:///tmp/x/wh"}})
    r = (ig.writeTo(df, "local.db.events")
           .partitionedBy("level", ig.days("ts"), ig.bucket(16, "id"))
           .tableProperty("write.parquet.compression-codec", "zstd")
           .createOrReplace())
    print(r.snapshot_id, r.metrics)
    ig.table("local.db.events").to_arrow()

Two configurations in one process: ``ig.Session(catalogs=..., conf=...)`` has
the same methods (``writeTo``, ``table``, ``mergeInto``, ``configure``).
"""

from __future__ import annotations

from typing import Any

from . import _native
from ._session import Session, configure, default_session, set_runtime
from ._typing import ArrowArrayExportable, ArrowData, ArrowSchemaExportable, ArrowStreamExportable
from .distributed import DistributedWrite
from .errors import (
    CommitConflictError,
    CommitStateUnknownError,
    ForkSafetyError,
    IcebergGoError,
    IcebergIOError,
    InternalError,
    InvalidArgumentError,
    LibraryPoisonedError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NotSupportedError,
    OperationCancelledError,
    SessionClosedError,
    StreamConsumedError,
    TableAlreadyExistsError,
    ValidationError,
)
from .evolution import UpdateSchema, UpdateSortOrder, UpdateSpec
from .expressions import Column, col, expr, lit
from .merge import MergeIntoWriter, mergeInto
from .readstream import DataStreamReader, readStream
from .results import (
    CommittedBatch,
    ExpireSnapshotsResult,
    MergeCounts,
    RefInfo,
    RefRemoval,
    RefResult,
    RemoveOrphanFilesResult,
    RewriteDataFilesResult,
    RewriteManifestsResult,
    RewritePositionDeleteFilesResult,
    RollbackResult,
    ScanProgress,
    SnapshotInfo,
    WriteMetrics,
    WriteResult,
)
from .scan import ScanStream
from .sql import SqlResult, register, sql, unregister
from .streaming import DataStreamWriter, StreamingQuery, StreamingQueryException, writeStream
from .table import Table, table
from .writer import (
    DataFrameWriterV2,
    PartitionTransform,
    asc,
    bucket,
    days,
    desc,
    hours,
    months,
    truncate,
    writeTo,
    years,
)


def __getattr__(name: str) -> Any:
    # ig.ray and ig.dask import their engine on first use: the package imports without them
    # (pip install pyiceberg-go[ray] / [dask]).
    if name in ("ray", "dask"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _package_version() -> str:
    # One version number for the library and the package: build.sh copies the library's
    # version file (core/version/VERSION) beside it.
    from pathlib import Path

    try:
        return (Path(__file__).parent / "_lib" / "VERSION").read_text().strip()
    except OSError:
        return "0+unknown"


#: The version of this Python package (the library's; see :func:`library_version`).
__version__ = _package_version()


def abi_version() -> int:
    """The C ABI version of the loaded library (loads it if needed).

    Example::

        assert ig.abi_version() == 1
    """
    return int(_native.lib().pig_abi_version())


def library_version() -> str:
    """The version string of the loaded library (loads it if needed).

    Example::

        print(ig.library_version())
    """
    return (_native.lib().pig_version() or b"").decode()


__all__ = [
    "ArrowArrayExportable",
    "ArrowData",
    "ArrowSchemaExportable",
    "ArrowStreamExportable",
    "Column",
    "CommitConflictError",
    "CommitStateUnknownError",
    "CommittedBatch",
    "DataFrameWriterV2",
    "DataStreamReader",
    "DataStreamWriter",
    "DistributedWrite",
    "ExpireSnapshotsResult",
    "ForkSafetyError",
    "IcebergGoError",
    "IcebergIOError",
    "InternalError",
    "InvalidArgumentError",
    "LibraryPoisonedError",
    "MergeCounts",
    "MergeIntoWriter",
    "NoSuchNamespaceError",
    "NoSuchTableError",
    "NoSuchViewError",
    "NotSupportedError",
    "OperationCancelledError",
    "PartitionTransform",
    "RefInfo",
    "RefRemoval",
    "RefResult",
    "RemoveOrphanFilesResult",
    "RewriteDataFilesResult",
    "RewriteManifestsResult",
    "RewritePositionDeleteFilesResult",
    "RollbackResult",
    "ScanProgress",
    "ScanStream",
    "Session",
    "SessionClosedError",
    "SnapshotInfo",
    "SqlResult",
    "StreamConsumedError",
    "StreamingQuery",
    "StreamingQueryException",
    "Table",
    "TableAlreadyExistsError",
    "UpdateSchema",
    "UpdateSortOrder",
    "UpdateSpec",
    "ValidationError",
    "WriteMetrics",
    "WriteResult",
    "__version__",
    "abi_version",
    "asc",
    "bucket",
    "col",
    "configure",
    "days",
    "default_session",
    "desc",
    "expr",
    "hours",
    "library_version",
    "lit",
    "mergeInto",
    "months",
    "readStream",
    "register",
    "set_runtime",
    "sql",
    "table",
    "truncate",
    "unregister",
    "writeStream",
    "writeTo",
    "years",
]
