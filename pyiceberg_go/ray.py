"""Ray Data: write a Dataset to an Iceberg table in one commit, and read a table as a Dataset.

Needs ``pip install pyiceberg-go[ray]``; importing :mod:`pyiceberg_go` does not import Ray.
``ds.write_datasink(ig.ray.IcebergDatasink("local.db.t", mode="append"))`` runs our writer in
every write task (``write_files``) and commits every task's files as one snapshot when the
job completes (``commit_files``); a failed job commits nothing and its files are deleted.
``ray.data.read_datasource(ig.ray.IcebergDatasource("local.db.t", ...))`` reads one snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ray.data import Datasink, Datasource, ReadTask
from ray.data.block import BlockAccessor, BlockMetadata

from .distributed import DistributedWrite, ReadSplit, read_splits
from .results import WriteResult

if TYPE_CHECKING:
    from ._session import Session
    from .expressions import Column
    from .writer import PartitionColumn, SortTerm

__all__ = ["IcebergDatasink", "IcebergDatasource", "read_iceberg"]


class IcebergDatasink(Datasink[dict[str, Any]]):
    """A Ray Data sink writing to an Iceberg table with one commit (``mode`` as :class:`DistributedWrite`).

    Each write task writes its blocks partitioned and sorted as one machine would; for
    ``hash``/``range`` distribution repartition the Dataset first (``ds.repartition(...,
    keys=[...])`` / ``ds.sort(...)``). After ``write_datasink`` returns, ``result`` is the
    commit's :class:`pyiceberg_go.WriteResult`.

    Example::

        sink = ig.ray.IcebergDatasink("local.db.events", mode="append")
        ray.data.from_pandas(df).write_datasink(sink)
        print(sink.result.snapshot_id)
    """

    def __init__(
        self,
        table: str,
        mode: str = "append",
        *,
        partition_by: Sequence[PartitionColumn] = (),
        sort_order: Sequence[SortTerm] = (),
        properties: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        where: str | Column | None = None,
        stream: tuple[str, int] | None = None,
        session: Session | None = None,
        write_id: str | None = None,
    ) -> None:
        self.distributed = DistributedWrite(
            table,
            mode,
            partition_by=partition_by,
            sort_order=sort_order,
            properties=properties,
            options=options,
            where=where,
            stream=stream,
            session=session,
            write_id=write_id,
        )
        self.result: WriteResult | None = None
        self._schema: Any = None

    def get_name(self) -> str:
        """The write tasks' name.

        Example::

            IcebergDatasink("local.db.t").get_name()  # "Iceberg"
        """
        return "Iceberg"

    def on_write_start(self, schema: Any = None) -> None:
        """Keep the schema Ray gives (a create commits the table with it when no task wrote rows).

        Example::

            sink.on_write_start(pa.schema([("id", pa.int64())]))
        """
        self._schema = schema

    def write(self, blocks: Iterable[Any], ctx: Any) -> dict[str, Any]:
        """Write one task's blocks (on a worker); return its file descriptions and the blocks'
        Arrow schema (serialized), which a create commits the table with.

        Example::

            out = sink.write([block], ctx)   # {"files": [...], "schema": b"..."}
        """
        import pyarrow as pa

        tables = [BlockAccessor.for_block(b).to_arrow() for b in blocks]
        tables = [t for t in tables if t.num_rows > 0]
        if not tables:
            return {"files": [], "schema": None}
        reader = pa.RecordBatchReader.from_batches(tables[0].schema, (b for t in tables for b in t.to_batches()))
        files = self.distributed.write_task(reader, task=ctx.task_idx)
        return {"files": files, "schema": tables[0].schema.serialize().to_pybytes()}

    def on_write_complete(self, write_result: Any) -> None:
        """Commit every task's files as one snapshot (on the driver).

        Example::

            sink.on_write_complete(write_result)
        """
        import pyarrow as pa

        returns: list[dict[str, Any]] = list(write_result.write_returns)
        files = [r["files"] for r in returns]
        schema = None
        if self.distributed.mode in ("create", "replace", "createOrReplace"):
            # The schema of the blocks the tasks wrote; the one Ray hands on_write_start can be
            # that of its own file listing (Ray 2.60's read_parquet: __path, __file_size, ...).
            written = next((r["schema"] for r in returns if r["schema"] is not None), None)
            if written is not None:
                schema = pa.ipc.read_schema(pa.py_buffer(written)).empty_table()
            elif self._schema is not None:
                schema = self._schema.empty_table()
            else:
                what = f"{self.distributed.mode} of {self.distributed.table}"
                raise ValueError(f"{what}: Ray gave no schema for the data")
        try:
            self.result = self.distributed.commit(files, schema=schema)
        except BaseException:
            self.distributed.abort(files)
            raise

    def on_write_failed(self, error: Exception) -> None:
        """Delete every file of the write (on the driver); nothing is committed.

        Example::

            sink.on_write_failed(RuntimeError("task failed"))
        """
        self.distributed.abort()


class IcebergDatasource(Datasource):
    """A Ray Data source reading one snapshot of an Iceberg table (projection and filter pushed down).

    Example::

        ds = ray.data.read_datasource(ig.ray.IcebergDatasource("local.db.events", columns=["id"], where="id > 10"))
    """

    def __init__(
        self,
        table: str,
        *,
        columns: Sequence[str] | None = None,
        where: str | Column | None = None,
        snapshot_id: int | None = None,
        session: Session | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._args: dict[str, Any] = {
            "columns": columns,
            "where": where,
            "snapshot_id": snapshot_id,
            "session": session,
        }
        self._table = table

    def estimate_inmemory_data_size(self) -> int | None:
        """Unknown before reading (``None``).

        Example::

            IcebergDatasource("local.db.t").estimate_inmemory_data_size()  # None
        """
        return None

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, data_context: Any = None
    ) -> list[ReadTask]:
        """One read task per share of the table's files (``parallelism`` shares), at one snapshot.

        Example::

            tasks = IcebergDatasource("local.db.t").get_read_tasks(4)
        """
        splits = read_splits(self._table, max(1, parallelism), **self._args)
        return [
            ReadTask(_reader(s), BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None, input_files=None))
            for s in splits
        ]


def _reader(split: ReadSplit) -> Any:
    def read() -> list[Any]:
        return [split.to_arrow()]

    return read


def read_iceberg(
    table: str,
    *,
    columns: Sequence[str] | None = None,
    where: str | Column | None = None,
    snapshot_id: int | None = None,
    session: Session | None = None,
    **read_args: Any,
) -> Any:
    """Read ``table`` into a Ray Dataset (``ray.data.read_datasource`` of an :class:`IcebergDatasource`).

    Example::

        ds = ig.ray.read_iceberg("local.db.events", where="level = 'WARN'")
    """
    import ray.data

    src = IcebergDatasource(table, columns=columns, where=where, snapshot_id=snapshot_id, session=session)
    return ray.data.read_datasource(src, **read_args)
