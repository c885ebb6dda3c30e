"""Dask: write a Dask DataFrame to an Iceberg table in one commit, and read a table into one.

Needs ``pip install pyiceberg-go[dask]``; importing :mod:`pyiceberg_go` does not import Dask.
:func:`to_iceberg` runs one write task per partition (``write_files``) and one final commit
task (``commit_files``) over every task's file descriptions; if the job fails, nothing is
committed and the write's files are deleted. :func:`read_iceberg` reads a table's files in
``npartitions`` shares at one snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .distributed import DistributedWrite, ReadSplit, read_splits
from .results import WriteResult
from .writer import PartitionColumn, PartitionTransform, SortTerm

if TYPE_CHECKING:
    from ._session import Session
    from .expressions import Column

__all__ = ["read_iceberg", "to_iceberg"]


def _write_partition(dw: DistributedWrite, part: Any, task: int) -> list[dict[str, Any]]:
    # A Dask index is not a column (a shuffle leaves one that pandas would export).
    return dw.write_task(part.reset_index(drop=True), task=task)


def _commit(dw: DistributedWrite, files: list[list[dict[str, Any]]], meta: Any) -> WriteResult:
    return dw.commit(files, schema=meta if dw.mode in ("create", "replace", "createOrReplace") else None)


def _columns(partition_by: Sequence[PartitionColumn]) -> list[str]:
    return [p.column if isinstance(p, PartitionTransform) else str(p) for p in partition_by]


def _spec_columns(table: str, dw: DistributedWrite) -> list[str]:
    # The top-level source columns of the table's partition spec (table_info's metadata).
    info = dw.session._execute({"op": "table_info", "table": table})
    names = {f["id"]: f["name"] for f in info["current_schema"].get("fields", [])}
    return [names[f["source-id"]] for f in info["default_spec"].get("fields", []) if f.get("source-id") in names]


def to_iceberg(
    ddf: Any,
    table: str,
    mode: str = "append",
    *,
    partition_by: Sequence[PartitionColumn] = (),
    sort_order: Sequence[SortTerm] = (),
    properties: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    where: str | Column | None = None,
    stream: tuple[str, int] | None = None,
    distribution: str | None = None,
    shuffle_on: Sequence[str] | None = None,
    session: Session | None = None,
    write_id: str | None = None,
) -> WriteResult:
    """Write a Dask DataFrame to ``table`` with one Iceberg commit (``mode`` as :class:`DistributedWrite`).

    Each partition is one task writing its rows partitioned and sorted as one machine would
    (Spark's per-task semantics); ``distribution="hash"`` first shuffles rows by
    ``shuffle_on`` (default: the source columns of ``partition_by``) so each table partition
    is written by one task; ``"range"`` sorts by them (``ddf.sort_values``). The commit is one
    more task. On failure nothing is committed and the write's files are deleted.

    Example::

        import dask.dataframe as dd
        ddf = dd.from_pandas(df, npartitions=8)
        r = ig.dask.to_iceberg(ddf, "local.db.events", mode="append")
        print(r.snapshot_id, r.summary["added-records"])
    """
    from dask.delayed import delayed

    dw = DistributedWrite(
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
    if distribution not in (None, "none", "hash", "range"):
        raise ValueError(f"distribution must be none, hash or range, got {distribution!r}")
    if distribution in ("hash", "range"):
        on = list(shuffle_on) if shuffle_on is not None else _columns(partition_by)
        if not on and mode not in ("create", "replace", "createOrReplace"):
            on = _spec_columns(table, dw)
        if not on:
            raise ValueError(f"distribution={distribution!r} needs shuffle_on or partition_by columns")
        ddf = ddf.shuffle(on=on) if distribution == "hash" else ddf.sort_values(on)
    writes = [delayed(_write_partition)(dw, part, i) for i, part in enumerate(ddf.to_delayed())]
    meta = ddf._meta.reset_index(drop=True)
    client = _distributed_client()
    if client is not None:
        return _run_on(client, dw, writes, meta)
    job = delayed(_commit)(dw, writes, meta)
    try:
        result: WriteResult = job.compute()
    except BaseException:
        # A task still running deletes its own files when it ends (the write's fence).
        dw.abort()
        raise
    return result


def _distributed_client() -> Any:
    """The dask.distributed client the current scheduler is, or None (a local scheduler)."""
    from dask.base import get_scheduler

    client = getattr(get_scheduler(), "__self__", None)  # type: ignore[no-untyped-call]
    try:
        from distributed import Client
    except ImportError:
        return None
    return client if isinstance(client, Client) else None


def _run_on(client: Any, dw: DistributedWrite, writes: list[Any], meta: Any) -> WriteResult:
    """Run the write tasks on a cluster; commit their files, or abort once every task has ended.

    When one task fails, Dask reports it while others still run; waiting for all of them
    before aborting leaves no file behind when this returns.
    """
    from distributed import wait

    futures = client.compute(writes)
    try:
        wait(futures)  # type: ignore[no-untyped-call]
    except BaseException:
        client.cancel(futures)
        dw.abort()
        raise
    failed = [f for f in futures if f.status != "finished"]
    if failed:
        dw.abort()
        failed[0].result()  # raises the task's error
        raise RuntimeError(f"write {dw.write_id}: task {futures.index(failed[0])} {failed[0].status}")
    commit = client.submit(_commit, dw, futures, meta, pure=False)
    try:
        result: WriteResult = commit.result()
    except BaseException:
        dw.abort()
        raise
    return result


def _read_split(split: ReadSplit) -> Any:
    return split.to_arrow().to_pandas()


def read_iceberg(
    table: str,
    *,
    columns: Sequence[str] | None = None,
    where: str | Column | None = None,
    snapshot_id: int | None = None,
    npartitions: int = 8,
    session: Session | None = None,
) -> Any:
    """Read ``table`` (one snapshot) into a Dask DataFrame of ``npartitions`` partitions.

    Each partition reads a disjoint share of the table's files with the projection
    ``columns`` and filter ``where``; the snapshot (default the current one) is fixed when
    this is called.

    Example::

        ddf = ig.dask.read_iceberg("local.db.events", columns=["id", "level"], where="id > 10")
        ddf.groupby("level").id.count().compute()
    """
    import dask.dataframe as dd
    from dask.delayed import delayed

    splits = read_splits(table, npartitions, columns=columns, where=where, snapshot_id=snapshot_id, session=session)
    # The columns and types, from a read that matches no row.
    meta = ReadSplit({**splits[0].scan, "filter": "false"}, splits[0].config).to_arrow().to_pandas()
    return dd.from_delayed([delayed(_read_split)(s) for s in splits], meta=meta, verify_meta=False)
