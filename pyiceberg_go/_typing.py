"""Types of the Arrow data pyiceberg_go accepts, for annotating code that calls it.

Data is accepted through the Arrow PyCapsule interface: an object with
``__arrow_c_stream__`` (pyarrow Table and RecordBatchReader, pandas >= 2.2,
polars, DuckDB relations, arro3, a :class:`pyiceberg_go.ScanStream`, ...), an
object with ``__arrow_c_array__`` (a pyarrow RecordBatch), or a bare PyCapsule
named ``arrow_array_stream``. None of these needs pyarrow.

Example::

    import pyiceberg_go as ig

    def save(df: ig.ArrowData, name: str) -> ig.WriteResult:
        return ig.writeTo(df, name).append()
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from typing_extensions import CapsuleType  # type checkers only: no runtime dependency
else:
    # The type of every PyCapsule (types.CapsuleType from Python 3.13 on);
    # the datetime module's C API is one on every CPython version.
    CapsuleType = type(datetime.datetime_CAPI)

__all__ = [
    "ArrowArrayExportable",
    "ArrowData",
    "ArrowSchemaExportable",
    "ArrowStreamExportable",
    "CapsuleType",
]


@runtime_checkable
class ArrowStreamExportable(Protocol):
    """An object that exports an Arrow C stream: ``__arrow_c_stream__`` returns an
    ``arrow_array_stream`` PyCapsule (pyarrow Table/RecordBatchReader, pandas,
    polars, DuckDB relations, :class:`pyiceberg_go.ScanStream`).

    Example::

        def rows(data: ig.ArrowStreamExportable) -> int:
            return pa.RecordBatchReader.from_stream(data).read_all().num_rows
    """

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


@runtime_checkable
class ArrowArrayExportable(Protocol):
    """An object that exports one Arrow C array (a record batch): ``__arrow_c_array__``
    returns an ``(arrow_schema, arrow_array)`` pair of PyCapsules.

    Example::

        batch: ig.ArrowArrayExportable = pa.record_batch({"id": [1, 2]})
        ig.writeTo(batch, "local.db.t").append()
    """

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...


@runtime_checkable
class ArrowSchemaExportable(Protocol):
    """An object that exports its Arrow schema: ``__arrow_c_schema__`` returns an
    ``arrow_schema`` PyCapsule.

    Example::

        schema: ig.ArrowSchemaExportable = ig.table("local.db.t").scan()
    """

    def __arrow_c_schema__(self) -> object: ...


#: Anything pyiceberg_go writes from: a stream or array exporter, or a bare
#: ``arrow_array_stream`` PyCapsule.
ArrowData: TypeAlias = ArrowStreamExportable | ArrowArrayExportable | CapsuleType
