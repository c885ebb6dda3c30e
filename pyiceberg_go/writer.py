"""``writeTo``: PySpark's DataFrameWriterV2, writing through libpyiceberg_go."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from . import _session
from .expressions import Column, to_sql
from .results import WriteResult

if TYPE_CHECKING:
    from ._session import Session
    from ._typing import ArrowData

__all__ = [
    "DataFrameWriterV2",
    "PartitionColumn",
    "PartitionTransform",
    "SortTerm",
    "WriteResult",
    "asc",
    "bucket",
    "days",
    "desc",
    "hours",
    "months",
    "truncate",
    "writeTo",
    "years",
]


@dataclass(frozen=True)
class PartitionTransform:
    """A partition field: an Iceberg transform applied to a source column.

    Build it with :func:`years`, :func:`months`, :func:`days`, :func:`hours`,
    :func:`bucket` or :func:`truncate`; a plain column name means identity.

    Example::

        ig.writeTo(df, "local.db.t").partitionedBy(ig.bucket(16, "id")).create()
    """

    transform: str
    column: str

    def to_document(self) -> dict[str, str]:
        """The ``partition_by`` entry of the request document.

        Example::

            ig.bucket(16, "id").to_document()  # {"transform": "bucket[16]", "column": "id"}
        """
        return {"transform": self.transform, "column": self.column}

    def to_sql(self) -> str:
        """The transform as Spark SQL writes it, e.g. in a sort term.

        Example::

            ig.bucket(16, "id").to_sql()  # "bucket(16, id)"
        """
        name, _, arg = self.transform.partition("[")
        column = "`" + self.column.replace("`", "``") + "`" if not self.column.isidentifier() else self.column
        if arg:
            return f"{name}({arg.rstrip(']')}, {column})"
        return column if name == "identity" else f"{name}s({column})"


#: A sort term: ``"col"``, ``"col DESC NULLS LAST"``, ``"days(ts) DESC"`` or a transform.
SortTerm: TypeAlias = str | PartitionTransform


def _sort_term(term: SortTerm, fn: str) -> str:
    if isinstance(term, PartitionTransform):
        return term.to_sql()
    if isinstance(term, str) and term.strip():
        return term
    raise TypeError(f"{fn}() takes sort terms (a str like 'id DESC' or ig.days('ts')), got {term!r}")


def asc(term: SortTerm, nulls_first: bool = True) -> str:
    """An ascending sort term (nulls first by default, as Spark).

    Example::

        ig.writeTo(df, "local.db.t").sortedBy(ig.asc(ig.days("ts"), nulls_first=False)).create()
    """
    return f"{_sort_term(term, 'asc')} ASC NULLS {'FIRST' if nulls_first else 'LAST'}"


def desc(term: SortTerm, nulls_first: bool = False) -> str:
    """A descending sort term (nulls last by default, as Spark).

    Example::

        ig.writeTo(df, "local.db.t").sortedBy(ig.desc("ts"), "id").create()
    """
    return f"{_sort_term(term, 'desc')} DESC NULLS {'FIRST' if nulls_first else 'LAST'}"


#: A partition column: a name (identity) or a transform.
PartitionColumn: TypeAlias = str | PartitionTransform


def _column(col: str, fn: str) -> str:
    if not isinstance(col, str) or not col:
        raise TypeError(f"{fn}() takes a column name (a non-empty str), got {col!r}")
    return col


def _positive(n: int, what: str, fn: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"{fn}(): {what} must be a positive int, got {n!r}")
    return n


def years(col: str) -> PartitionTransform:
    """Partition by year of a date or timestamp column (field ``<col>_year``).

    Example::

        ig.writeTo(df, "local.db.t").partitionedBy(ig.years("ts")).create()
    """
    return PartitionTransform("year", _column(col, "years"))


def months(col: str) -> PartitionTransform:
    """Partition by month of a date or timestamp column (field ``<col>_month``).

    Example::

        ig.writeTo(df, "local.db.t").partitionedBy(ig.months("ts")).create()
    """
    return PartitionTransform("month", _column(col, "months"))


def days(col: str) -> PartitionTransform:
    """Partition by day of a date or timestamp column (field ``<col>_day``).

    Example::

        ig.writeTo(df, "local.db.t").partitionedBy(ig.days("ts")).create()
    """
    return PartitionTransform("day", _column(col, "days"))


def hours(col: str) -> PartitionTransform:
    """Partition by hour of a timestamp column (field ``<col>_hour``).

    Example::

        ig.writeTo(df, "local.db.t").partitionedBy(ig.hours("ts")).create()
    """
    return PartitionTransform("hour", _column(col, "hours"))


def bucket(numBuckets: int, col: str) -> PartitionTransform:
    """Partition by Iceberg's murmur3 hash bucket of a column, ``numBuckets`` buckets.

    Example::

        ig.writeTo(df, "local.db.t").partitionedBy(ig.bucket(16, "id")).create()
    """
    return PartitionTransform(f"bucket[{_positive(numBuckets, 'numBuckets', 'bucket')}]", _column(col, "bucket"))


def truncate(width: int, col: str) -> PartitionTransform:
    """Partition by a column truncated to ``width`` (numbers round down, strings keep ``width`` code points).

    Example::

        ig.writeTo(df, "local.db.t").partitionedBy(ig.truncate(4, "name")).create()
    """
    return PartitionTransform(f"truncate[{_positive(width, 'width', 'truncate')}]", _column(col, "truncate"))


class DataFrameWriterV2:
    """Builder for a write of ``df`` to an Iceberg table; methods chain like PySpark's.

    Get one from :func:`writeTo`. ``partitionedBy``, ``tableProperty`` and
    ``using`` shape the table made by ``create``/``replace``/``createOrReplace``;
    ``option``/``options`` are write options for this write only.

    Example::

        (ig.writeTo(df, "local.db.events")
           .partitionedBy("level", ig.days("ts"))
           .tableProperty("write.parquet.compression-codec", "zstd")
           .option("target-file-size-bytes", str(256 << 20))
           .createOrReplace())
    """

    def __init__(self, df: ArrowData, table: str, session: Session | None = None) -> None:
        if not isinstance(table, str):
            raise TypeError(f"the table identifier must be a str, got {type(table).__name__}")
        self._df = df
        self._table = table
        self._session = session if session is not None else _session.default_session()
        self._partition_by: list[PartitionTransform] | None = None
        self._properties: dict[str, str] = {}
        self._location: str | None = None
        self._options: dict[str, str] = {}
        self._sort_order: list[str] | None = None
        self._stream: dict[str, Any] | None = None

    @property
    def session(self) -> Session:
        """The session this write runs in (the one :func:`writeTo` or ``Session.writeTo`` was called on).

        Example::

            s = ig.Session()
            assert s.writeTo(df, "local.db.t").session is s
        """
        return self._session

    def using(self, provider: str) -> DataFrameWriterV2:
        """Accepted for PySpark compatibility; only ``"iceberg"`` is allowed.

        Example::

            ig.writeTo(df, "local.db.t").using("iceberg").create()
        """
        if provider.lower() != "iceberg":
            raise ValueError(f"using({provider!r}): pyiceberg_go only writes Iceberg tables")
        return self

    def option(self, key: str, value: Any) -> DataFrameWriterV2:
        """Set one write option (values become strings; ``True`` -> ``"true"``).

        Example::

            ig.writeTo(df, "local.db.t").option("compression-codec", "snappy").append()
        """
        self._options[str(key)] = _session._option_value(value)
        return self

    def options(self, **options: Any) -> DataFrameWriterV2:
        """Set several write options at once.

        Example::

            ig.writeTo(df, "local.db.t").options(**{"target-file-size-bytes": "1048576"}).append()
        """
        for k, v in options.items():
            self.option(k, v)
        return self

    def tableProperty(self, key: str | None = None, value: Any = None, **deprecated: Any) -> DataFrameWriterV2:
        """Set a table property of the table being created or replaced; ``"location"`` sets its location.

        The keyword ``property=`` (the former name of ``key``, PySpark's) still
        works for one release, with a DeprecationWarning.

        Example::

            ig.writeTo(df, "local.db.t").tableProperty("format-version", "3").create()
        """
        if "property" in deprecated:
            if key is not None:
                raise TypeError("tableProperty() got both key and the deprecated property=")
            warnings.warn(
                "tableProperty(property=...) is deprecated: pass the name positionally or as key=",
                DeprecationWarning,
                stacklevel=2,
            )
            key = deprecated.pop("property")
        if deprecated:
            raise TypeError(f"tableProperty() got unexpected keyword arguments: {', '.join(sorted(deprecated))}")
        if key is None:
            raise TypeError("tableProperty() needs a property name")
        if key == "location":
            self._location = _session._option_value(value)
        else:
            self._properties[str(key)] = _session._option_value(value)
        return self

    def partitionedBy(self, col: PartitionColumn, *cols: PartitionColumn) -> DataFrameWriterV2:
        """Partition the new table by columns (identity) and transforms, in order.

        Example::

            ig.writeTo(df, "local.db.t").partitionedBy("level", ig.hours("ts")).create()
        """
        fields: list[PartitionTransform] = []
        for c in (col, *cols):
            if isinstance(c, str):
                fields.append(PartitionTransform("identity", _column(c, "partitionedBy")))
            elif isinstance(c, PartitionTransform):
                fields.append(c)
            else:
                raise TypeError(
                    f"partitionedBy() takes column names or ig.years/months/days/hours/bucket/truncate, got {c!r}"
                )
        self._partition_by = fields
        return self

    def sortedBy(self, term: SortTerm, *terms: SortTerm) -> DataFrameWriterV2:
        """Give the new table a sort order (Spark's WRITE ORDERED BY): every file is sorted by it.

        Terms are column names (nested with dots), transforms (``ig.days("ts")``,
        ``ig.bucket(16, "id")``), ``ig.asc``/``ig.desc`` or SQL text such as
        ``"ts DESC NULLS LAST"``.

        Example::

            ig.writeTo(df, "local.db.t").partitionedBy("level").sortedBy(ig.desc("ts"), "id").create()
        """
        self._sort_order = [_sort_term(t, "sortedBy") for t in (term, *terms)]
        return self

    #: Spark SQL's name for :meth:`sortedBy`.
    writeOrderedBy = sortedBy

    def streamBatch(self, query_id: str, batch_id: int) -> DataFrameWriterV2:
        """Make this write batch ``batch_id`` of streaming query ``query_id``, committed exactly once.

        The snapshot summary records ``spark.sql.streaming.queryId`` and
        ``spark.sql.streaming.epochId`` as Spark's streaming sink does. A batch
        id at or below the last one the query committed on the target branch
        commits nothing: the result has ``skipped=True`` (checked again in every
        commit attempt). ``append``, ``overwritePartitions`` and ``overwrite``
        take it; :meth:`pyiceberg_go.Table.last_committed_batch` reads it back.

        Example::

            r = ig.writeTo(df, "local.db.t").streamBatch("q1", 7).option("snapshot-property.offset", "42").append()
            r.skipped  # True when batch 7 (or later) of q1 was committed before
        """
        if not isinstance(query_id, str) or not query_id.strip():
            raise ValueError("streamBatch(): query_id must be a non-empty str")
        self._stream = {"query_id": query_id, "batch_id": _int_batch(batch_id)}
        return self

    def request_document(self, op: str) -> dict[str, Any]:
        """The request document (docs/abi.md#request) this builder sends for ``op``.

        Example::

            ig.writeTo(df, "local.db.t").partitionedBy("a").request_document("create")
        """
        doc: dict[str, Any] = {"op": op, "table": self._table}
        if self._partition_by is not None:
            doc["partition_by"] = [p.to_document() for p in self._partition_by]
        if self._properties:
            doc["properties"] = dict(self._properties)
        if self._location is not None:
            doc["location"] = self._location
        if self._options:
            doc["options"] = dict(self._options)
        if self._sort_order is not None:
            doc["sort_order"] = list(self._sort_order)
        if self._stream is not None:
            doc["stream"] = dict(self._stream)
        return doc

    def _write(self, op: str) -> WriteResult:
        return WriteResult.from_document(self._session._execute(self.request_document(op), self._df))

    def create(self) -> WriteResult:
        """Create the table with the data (CREATE TABLE AS SELECT); fails if it exists.

        Example::

            r = ig.writeTo(df, "local.db.t").create()
        """
        return self._write("create")

    def replace(self) -> WriteResult:
        """Replace the table's schema, spec and data, keeping its history; fails if it is missing.

        Example::

            r = ig.writeTo(df, "local.db.t").replace()
        """
        return self._write("replace")

    def createOrReplace(self) -> WriteResult:
        """Create the table, or replace it if it exists; atomic either way.

        Example::

            r = ig.writeTo(df, "local.db.t").createOrReplace()
        """
        return self._write("createOrReplace")

    def append(self) -> WriteResult:
        """Append the data to an existing table (INSERT INTO).

        Example::

            r = ig.writeTo(df, "local.db.t").append()
        """
        return self._write("append")

    def overwritePartitions(self) -> WriteResult:
        """Replace the partitions the data covers (dynamic INSERT OVERWRITE), for every transform.

        An unpartitioned table is replaced whole; empty data commits nothing. The
        snapshot is an ``overwrite`` with ``replace-partitions=true``. With the
        ``isolation-level`` option (``serializable`` or ``snapshot``) concurrent
        changes to the replaced partitions fail the write with CommitConflictError.

        Example::

            r = ig.writeTo(day_df, "local.db.events").overwritePartitions()
        """
        return self._write("overwritePartitions")

    def overwrite(self, condition: str | Column) -> WriteResult:
        """Delete the rows matching ``condition`` and add the data, in one snapshot.

        Files whose rows all match are dropped; files that match in part are
        rewritten without the matching rows (Spark fails instead). The new rows
        are not checked against the condition.

        Example::

            ig.writeTo(df, "local.db.events").overwrite("day = DATE '2024-05-01'")
            ig.writeTo(df, "local.db.events").overwrite(ig.col("level") == "INFO")
        """
        doc = self.request_document("overwrite")
        doc["filter"] = to_sql(condition, "overwrite condition")
        return WriteResult.from_document(self._session._execute(doc, self._df))


def _int_batch(v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"streamBatch(): batch_id must be an int >= 0, got {v!r}")
    return v


def writeTo(df: ArrowData, table: str) -> DataFrameWriterV2:
    """Start a write of Arrow data ``df`` to ``table`` (``[catalog.]namespace.table``) in the default session.

    ``df`` is anything exporting Arrow data (:data:`pyiceberg_go.ArrowData`): a
    pyarrow Table, RecordBatch or RecordBatchReader, a polars or pandas
    DataFrame, a DuckDB relation, a :class:`pyiceberg_go.ScanStream`, or an
    ``arrow_array_stream`` PyCapsule. A stream is consumed by the write.

    Example::

        import pyiceberg_go as ig
        r = ig.writeTo(df, "local.db.events").partitionedBy(ig.days("ts")).createOrReplace()
    """
    return _session.default_session().writeTo(df, table)
