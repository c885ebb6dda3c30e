"""The checks the JDBC catalog tests run on every server database (PostgreSQL, MySQL): each test
file brings its server, its catalog properties and how PyIceberg's SqlCatalog opens it. The
write-every-operation check and the row helpers serve the other catalogs' tests too (Glue)."""

from __future__ import annotations

import multiprocessing as mp
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig

from conftest import HANG_S, hooks_library, use_library
from netfault import CuttingProxy
from test_concurrency import check_table, run_appenders, seed_schema


def rows(ids: list[int], tag: str = "a") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([f"{tag}{i}" for i in ids], pa.string()),
            "p": pa.array([i % 3 for i in ids], pa.int32()),
        }
    )


def ids_of(t: Any) -> list[int]:
    return sorted(t.scan().to_arrow().column("id").to_pylist())


@dataclass
class JdbcCat:
    """Catalog ``name`` with ``props`` (configured by ``configure``), and a namespace of the
    test's own."""

    name: str
    props: dict[str, str]
    ns: str = field(default_factory=lambda: "t" + secrets.token_hex(4))

    def configure(self) -> JdbcCat:
        ig.configure(catalogs={self.name: self.props})
        return self


def write_every_operation(name: str, api: Any = ig) -> list[int]:
    """Every write operation on table ``name`` (create, append, overwritePartitions, delete, merge,
    and an append to a new branch ``b``), through ``api`` (the module's default session or an
    ``ig.Session``); returns the ids main holds after, checked by us."""
    api.writeTo(rows([0, 1, 2, 3, 4, 5]), name).partitionedBy("p").create()
    api.writeTo(rows([6, 7]), name).append()
    api.writeTo(rows([9], "o"), name).overwritePartitions()  # partition p=0 is now id 9 only
    api.table(name).delete("id = 1")
    src = rows([2, 10], "m")
    api.mergeInto(src, name, "target.id = source.id").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    api.table(name).create_branch("b")
    api.writeTo(rows([100]), f"{name}.branch_b").append()
    want = [2, 4, 5, 7, 9, 10]
    assert sorted(api.table(name).to_arrow().column("id").to_pylist()) == want
    return want


def every_operation_read(t: Any, want: list[int]) -> None:
    """Another reader's table ``t`` after write_every_operation: main's rows, the branch's, and each
    snapshot's operation."""
    assert ids_of(t) == want
    branch = t.scan(snapshot_id=t.snapshot_by_name("b").snapshot_id).to_arrow().column("id").to_pylist()
    assert sorted(branch) == sorted([*want, 100])
    ops = [s.summary.operation.value for s in t.snapshots()]
    # create, append, overwritePartitions, the delete and the merge (copy-on-write rewrites), the branch's append
    assert ops == ["append", "append", "overwrite", "overwrite", "overwrite", "append"]


def every_write_read_back(cat: JdbcCat, pyiceberg: Any) -> None:
    """Every write operation through catalog ``cat``, read back by PyIceberg's SqlCatalog
    (``pyiceberg``, of the same name) on the same database; then PyIceberg's append read back by us."""
    name = f"{cat.name}.{cat.ns}.t"
    want = write_every_operation(name)
    t = pyiceberg.load_table(f"{cat.ns}.t")
    every_operation_read(t, want)
    # PyIceberg's writes come back to us, through the same catalog rows.
    t.append(rows([500]))
    assert 500 in ig.table(name).to_arrow().column("id").to_pylist()
    assert f"{cat.ns}.t" in [".".join(i) for i in pyiceberg.list_tables(cat.ns)]


def appends_all_land(cat: JdbcCat, tmp_path: Path, pyiceberg: Callable[[str], Any]) -> None:
    """The trust issue's test: 8 processes x 50 appends through catalog "local" with cat's
    properties, default settings, none lost; ``pyiceberg(name)`` opens the SqlCatalog ``name``."""
    props = cat.props
    ig.configure(catalogs={"local": props})
    ig.writeTo(seed_schema(), f"local.{cat.ns}.c").create()
    results = run_appenders(props, f"local.{cat.ns}.c", tmp_path)
    failed = [r for r in results if "error" in r]
    assert not failed, f"{len(failed)} of {len(results)} appends failed, first: {failed[0]}"
    check_table(pyiceberg("local").load_table(f"{cat.ns}.c"), results)


def wrong_password_refused(cat: JdbcCat, bad_uris: list[str], wrong: str, secrets_: list[str], says: str) -> None:
    """A catalog opened with each of bad_uris (password ``wrong``) refuses an append with a typed
    error saying ``says`` and naming no secret; nothing is committed."""
    name = f"{cat.name}.{cat.ns}.w"
    ig.writeTo(rows([1]), name).create()
    for uri in bad_uris:
        ig.configure(catalogs={"bad": {"type": "sql", "uri": uri, "warehouse": cat.props["warehouse"]}})
        with pytest.raises(ig.IcebergIOError) as e:
            ig.writeTo(rows([2]), f"bad.{cat.ns}.w").append()
        assert says in str(e.value)
        for secret in [wrong, *secrets_]:
            assert secret not in str(e.value)
    cat.configure()
    assert ig.table(name).to_arrow().num_rows == 1  # nothing was committed


def spark_reads_every_write(spark: Any, s: Any, name: str) -> None:
    """Every write operation through session ``s`` on a new table ``name``; Spark (already
    configured for its catalog) reads main, the branch and the snapshot history as we wrote them."""
    want = write_every_operation(name, api=s)
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {name}").collect()) == want
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {name} VERSION AS OF 'b'").collect()) == sorted([*want, 100])
    ops = [r.operation for r in spark.sql(f"SELECT operation FROM {name}.snapshots ORDER BY committed_at, snapshot_id").collect()]
    assert sorted(ops) == sorted(["append", "append", "overwrite", "overwrite", "overwrite", "append"]), ops


def spark_shares_the_tables(spark: Any, conf: dict[str, str], name: str) -> None:
    """Spark's settings verbatim (spark_conf) open the catalog; Spark's JdbcCatalog with the same
    settings reads every write we made (table ``name``, and ``name`` + "_every") and writes what
    we read."""
    s = ig.Session(spark_conf=conf)
    s.writeTo(rows([1, 2, 3]), name).create()
    for k, v in conf.items():
        spark.conf.set(k, v)
    spark_reads_every_write(spark, s, name + "_every")
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {name}").collect()) == [1, 2, 3]
    spark.sql(f"INSERT INTO {name} VALUES (4, 'spark', 1)")
    spark.sql(f"DELETE FROM {name} WHERE id = 2")
    assert sorted(s.table(name).to_arrow().column("id").to_pylist()) == [1, 3, 4]


def append_waits_for_held_lock(name: str, waiting: Callable[[], int], read_ids: Callable[[], list[int]], release: Callable[[], None]) -> None:
    """Table ``name`` holds id 1 and another session holds its commit lock: an append of id 2
    (in a thread) waits, seen by ``waiting`` (the server's count of waiting lock requests, 1) while
    it has not returned and the table (``read_ids``, another reader) still holds [1]; after
    ``release`` it returns and the table holds [1, 2]."""
    errors: list[BaseException] = []
    done = threading.Event()

    def append() -> None:
        try:
            ig.writeTo(rows([2]), name).append()
        except BaseException as e:
            errors.append(e)
        finally:
            done.set()

    t = threading.Thread(target=append)
    t.start()
    try:
        deadline = time.monotonic() + HANG_S
        seen = 0
        while not seen and time.monotonic() < deadline and not done.is_set():
            seen = waiting()
            time.sleep(0.05)
        assert seen == 1 and not done.is_set(), errors
        assert read_ids() == [1]
    finally:
        release()
        t.join(timeout=HANG_S)
    assert done.is_set() and not errors, errors
    assert read_ids() == [1, 2]


# ---- a commit whose answer is lost, or whose server stops, mid-commit ---------------------


def _paused_delete(library: str, cat: str, props: dict[str, str], name: str, signal: str, release: str, out: Any) -> None:
    """A child: deletes id 1 from ``name`` of catalog ``cat``, paused just before its commit until
    ``release`` exists."""
    use_library(library)
    ig.configure(
        catalogs={cat: props},
        conf={"test.hooks": "true", "test.commit-delay-signal": signal, "test.commit-delay-release": release},
    )
    try:
        ig.table(f"{cat}.{name}").delete("id = 1")
        out.put({"ok": True})
    except ig.IcebergGoError as e:
        out.put({"ok": False, "type": type(e).__name__, "message": str(e)})


def data_files_on_disk(warehouse: str) -> set[str]:
    root = Path(warehouse.removeprefix("file://"))
    return {f"file://{p}" for p in root.rglob("*.parquet")}


def reachable_data_files(t: Any) -> set[str]:
    """Every data and delete file any snapshot of PyIceberg's table ``t`` refers to."""
    out: set[str] = set()
    for s in t.snapshots():
        for task in t.scan(snapshot_id=s.snapshot_id).plan_files():
            out.add(task.file.file_path)
            out.update(d.file_path for d in task.delete_files)
    return out


# The COMMIT (as its own word: not "autocommit") of the transaction that moves a JDBC catalog
# table's metadata location.
SQL_COMMIT = (rb"(?i)(?<![a-z_])commit(?![a-z_])", rb"(?i)update\s+[\"`]?iceberg_tables")


def commit_survives_cut(
    cat: str,
    props: dict[str, str],
    proxy: CuttingProxy,
    pyiceberg: Any,
    ns: str,
    tmp_path: Path,
    stage: str,
    cut: tuple[bytes, bytes | None] = SQL_COMMIT,
) -> dict[str, Any]:
    """Catalog ``cat`` with ``props`` reaches the server through ``proxy``. A child process deletes a row and
    pauses before its commit; then, by ``stage``:

    - ``"before"``: the server stops (the proxy goes down) before the commit starts;
    - ``"answer-lost"``: the server commits but its answer to the client message matching
      ``cut`` (a pattern, and one an earlier message must match first; default: a JDBC
      catalog's COMMIT) never arrives, and the server stays reachable;
    - ``"answer-lost-down"``: the same, and the server then stops until the child has answered.

    Whatever the child reports must be true afterwards (read by PyIceberg, straight to the
    server): success means the row is gone; a failure that is not CommitStateUnknownError means
    nothing was committed and the child's files are gone; every file any snapshot refers to
    exists (the table reads). Returns the child's report."""
    ig.configure(catalogs={cat: props})
    name = f"{ns}.cut"
    ig.writeTo(rows([0, 1, 2, 3]), f"{cat}.{name}").create()
    ig.writeTo(rows([4, 5]), f"{cat}.{name}").append()
    before = set(data_files_on_disk(props["warehouse"]))
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    signal, release = tmp_path / f"waiting-{stage}", tmp_path / f"release-{stage}"
    p = ctx.Process(target=_paused_delete, args=(hooks_library(), cat, props, name, str(signal), str(release), out))
    p.start()
    deadline = time.monotonic() + HANG_S
    while not signal.exists():
        assert p.is_alive(), "the delete ended before its commit pause"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    if stage == "before":
        proxy.down()
    else:
        proxy.cut_at(cut[0], after=cut[1], stay_down=stage == "answer-lost-down")
    release.touch()
    if stage == "answer-lost-down":
        # The server comes back only after the child has answered (it must not wait for it).
        res: dict[str, Any] = out.get(timeout=HANG_S)
        assert proxy.cut.is_set(), res
        proxy.up()
    else:
        res = out.get(timeout=HANG_S)
    p.join(timeout=HANG_S)
    proxy.up()
    t = pyiceberg.load_table(name)
    ids = ids_of(t)  # every live file is there
    reached = reachable_data_files(t)
    assert reached <= data_files_on_disk(props["warehouse"]), "a snapshot refers to a deleted file"
    # The outcome each stage must give: a known failure before the commit; a lost answer
    # settled by reading the table again when the server is there; unknown when it is not.
    want = {"before": "IcebergIOError", "answer-lost": None, "answer-lost-down": "CommitStateUnknownError"}[stage]
    assert (None if res["ok"] else res["type"]) == want, res
    if res["ok"]:
        assert ids == [0, 2, 3, 4, 5], res
    elif res["type"] != "CommitStateUnknownError":
        assert ids == [0, 1, 2, 3, 4, 5], res
        # Nothing of the failed delete is left behind.
        assert data_files_on_disk(props["warehouse"]) == before, res
    else:
        assert ids in ([0, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]), res
    return res
