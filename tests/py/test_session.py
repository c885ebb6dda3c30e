"""Sessions: several configurations in one process, used in turn and from threads at once;
builders keep their session; closing; the default session behind the module-level API."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig

from conftest import CatalogDir

T = "local.db.t"


def other_catalog(root: Path) -> dict[str, str]:
    (root / "wh").mkdir(parents=True)
    return {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": f"file://{root / 'wh'}"}


def pyiceberg_ids(props: dict[str, str], name: str = "db.t") -> list[int]:
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("local", uri=props["uri"], warehouse=props["warehouse"])
    return sorted(cat.load_table(name).scan().to_arrow()["id"].to_pylist())


def rows(first: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(first, first + n), pa.int64())})


def test_two_sessions_with_their_own_catalogs_used_in_turn(catalog_dir: CatalogDir, tmp_path: Path) -> None:
    b_props = other_catalog(tmp_path / "b")
    a = ig.Session(catalogs={"local": catalog_dir.properties}, conf={"snapshot-property.owner": "a"})
    b = ig.Session(catalogs={"local": b_props}, conf={"snapshot-property.owner": "b"})
    with a, b:
        a.writeTo(rows(0, 3), T).create()
        b.writeTo(rows(100, 5), T).create()
        for i in range(3):  # alternately, same identifier, different catalogs
            a.writeTo(rows(10 + i, 1), T).append()
            b.writeTo(rows(200 + i, 1), T).append()
        assert sorted(a.table(T).to_arrow()["id"].to_pylist()) == [0, 1, 2, 10, 11, 12]
        assert sorted(b.table(T).to_arrow()["id"].to_pylist()) == [100, 101, 102, 103, 104, 200, 201, 202]
        assert {s["summary"]["owner"] for s in a.table(T).snapshots()} == {"a"}
        assert {s["summary"]["owner"] for s in b.table(T).snapshots()} == {"b"}
    assert pyiceberg_ids(catalog_dir.properties) == [0, 1, 2, 10, 11, 12]
    assert pyiceberg_ids(b_props) == [100, 101, 102, 103, 104, 200, 201, 202]
    # The default session (configured by the fixture) was never touched by either.
    assert ig.default_session().session_document().get("conf") is None
    assert len(ig.table(T).snapshots()) == 4


def test_one_sessions_wap_id_does_not_leak_into_another_on_the_same_catalog(catalog_dir: CatalogDir) -> None:
    ig.writeTo(rows(0, 5), T).tableProperty("write.wap.enabled", "true").create()
    main0 = ig.table(T).refs()["main"]["snapshot_id"]
    staging = ig.Session(catalogs={"local": catalog_dir.properties}, conf={"wap.id": "job-7"})
    plain = ig.Session(catalogs={"local": catalog_dir.properties})
    with staging, plain:
        staged = staging.writeTo(rows(100, 2), T).append()
        landed = plain.writeTo(rows(200, 2), T).append()
        staged_again = staging.writeTo(rows(300, 2), T).option("snapshot-property.k", "v").append()
        also_landed = ig.writeTo(rows(400, 2), T).append()  # the default session
    assert staged.summary["wap.id"] == "job-7" and staged_again.summary["wap.id"] == "job-7"
    assert "wap.id" not in landed.summary and "wap.id" not in also_landed.summary
    assert "k" not in also_landed.summary  # a builder's option stays with its builder
    main = ig.table(T).refs()["main"]["snapshot_id"]
    assert main == also_landed.snapshot_id != main0
    assert sorted(ig.table(T).to_arrow()["id"].to_pylist()) == [0, 1, 2, 3, 4, 200, 201, 400, 401]


def test_two_sessions_from_two_threads_at_once(catalog_dir: CatalogDir, tmp_path: Path) -> None:
    b_props = other_catalog(tmp_path / "b")
    ig.writeTo(rows(0, 1), T).tableProperty("write.wap.enabled", "true").create()
    sessions = {
        "a": ig.Session(catalogs={"local": catalog_dir.properties}, conf={"wap.id": "from-a"}),
        "b": ig.Session(catalogs={"local": b_props}, conf={"snapshot-property.owner": "b"}),
    }
    sessions["b"].writeTo(rows(0, 1), T).create()
    n = 8
    start = threading.Barrier(2)
    results: dict[str, list[ig.WriteResult]] = {"a": [], "b": []}
    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            s = sessions[name]
            start.wait()
            for i in range(n):
                results[name].append(s.writeTo(rows(1000 * (1 + i), 10), T).append())
                s.table(T).snapshots()  # reads interleave with the other thread's writes too
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(name,)) for name in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert all(r.summary.get("wap.id") == "from-a" and "owner" not in r.summary for r in results["a"])
    assert all(r.summary.get("owner") == "b" and "wap.id" not in r.summary for r in results["b"])
    # a's writes were all staged: its main still has the one row; b's all landed.
    assert ig.table(T).to_arrow().num_rows == 1
    assert len(ig.table(T).snapshots()) == 1 + n
    assert sessions["b"].table(T).to_arrow().num_rows == 1 + 10 * n
    for s in sessions.values():
        s.close()


def test_builders_and_tables_keep_their_session(catalog_dir: CatalogDir, tmp_path: Path) -> None:
    s = ig.Session(catalogs={"local": other_catalog(tmp_path / "s")})
    assert s.writeTo(None, T).session is s  # type: ignore[arg-type]
    assert s.table(T).session is s
    assert s.mergeInto(None, T, "target.id = source.id").session is s  # type: ignore[arg-type]
    assert ig.writeTo(None, T).session is ig.default_session()  # type: ignore[arg-type]
    assert ig.table(T).session is ig.default_session()
    assert ig.mergeInto(None, T, "target.id = source.id").session is ig.default_session()  # type: ignore[arg-type]

    # What a builder of s writes lands in s's catalog, even after the default is reconfigured.
    w = s.writeTo(rows(0, 4), T)
    t = s.table(T)
    ig.configure(catalogs={"local": catalog_dir.properties}, conf={"wap.id": "never"})
    w.create()
    assert t.to_arrow().num_rows == 4 and "wap.id" not in t.snapshots()[0]["summary"]
    r = t.upsert(pa.table({"id": pa.array([3, 9], pa.int64())}), ["id"])
    assert r.merge["num-target-rows-inserted"] == 1
    with pytest.raises((ig.NoSuchTableError, ig.NoSuchNamespaceError)):
        ig.table(T).snapshots()  # not in the default session's catalog
    s.close()


def test_closed_session_raises_and_close_is_idempotent(tmp_path: Path) -> None:
    with ig.Session(catalogs={"local": other_catalog(tmp_path / "s")}) as s:
        s.writeTo(rows(0, 2), T).create()
        t = s.table(T)
        w = s.writeTo(rows(2, 2), T)
        assert not s.closed and "open" in repr(s)
    assert s.closed and "closed" in repr(s)
    s.close()
    for call in (t.snapshots, t.scan, w.append, lambda: s.table(T).refs(), lambda: s.configure()):
        with pytest.raises(ig.SessionClosedError, match="closed"):
            call()
    assert isinstance(ig.SessionClosedError("x"), ig.IcebergGoError)


def test_closing_the_default_session_does_not_break_module_level_calls(catalog_dir: CatalogDir) -> None:
    ig.writeTo(rows(0, 3), T).create()
    t = ig.table(T)
    ig.default_session().close()
    assert not ig.default_session().closed
    assert len(t.snapshots()) == 1  # reopened, same configuration
    ig.default_session().close()
    ig.writeTo(rows(3, 1), T).append()
    assert ig.table(T).to_arrow().num_rows == 4
    with ig.default_session():  # a with block on it only releases it, too
        pass
    assert len(ig.table(T).snapshots()) == 2


def slow_rows(batches: int, delay: float) -> pa.RecordBatchReader:
    schema = pa.schema([("id", pa.int64())])

    def gen() -> Iterator[pa.RecordBatch]:
        for i in range(batches):
            time.sleep(delay)
            yield pa.record_batch({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64())}, schema=schema)

    return pa.RecordBatchReader.from_batches(schema, gen())


@pytest.mark.parametrize("how", ["close", "configure"])
def test_a_write_running_when_its_session_is_closed_or_reconfigured_completes(tmp_path: Path, how: str) -> None:
    props = other_catalog(tmp_path / "s")
    s = ig.Session(catalogs={"local": props})
    s.writeTo(rows(0, 0), T).create()
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(s.writeTo(slow_rows(10, 0.1), T).append()))
    worker.start()
    time.sleep(0.4)  # the write is pulling its slow input now
    if how == "close":
        s.close()
    else:
        s.configure(catalogs={"local": other_catalog(tmp_path / "elsewhere")})
    worker.join(120)
    assert len(out) == 1 and out[0].metrics["rows"] == 100, out
    assert pyiceberg_ids(props) == list(range(100))
    if how == "configure":  # the next call opens a session on the new catalog
        with pytest.raises((ig.NoSuchTableError, ig.NoSuchNamespaceError)):
            s.table(T).snapshots()
        s.close()


def test_session_documents_are_separate_and_values_become_strings() -> None:
    a = ig.Session(catalogs={"x": {"type": "sql", "n": 3}}, conf={"wap.id": "a", "flag": True})
    b = ig.Session(conf={"wap.id": "b"})
    assert a.session_document()["catalogs"] == {"x": {"type": "sql", "n": "3"}}
    assert a.session_document()["conf"] == {"wap.id": "a", "flag": "true"}
    assert b.session_document()["conf"] == {"wap.id": "b"} and "catalogs" not in b.session_document()
    b.configure(catalogs={"y": {"type": "sql"}})
    assert b.session_document()["catalogs"] == {"y": {"type": "sql"}} and "conf" not in b.session_document()
    with pytest.raises(TypeError, match="option values cannot be None"):
        ig.Session(conf={"k": None})
    assert repr(a) == "<pyiceberg_go Session catalogs=['x'] (not opened yet)>"  # names only, no secrets


def test_an_unreferenced_session_is_collected(tmp_path: Path) -> None:
    s = ig.Session(catalogs={"local": other_catalog(tmp_path / "s")})
    s.writeTo(rows(0, 1), T).create()
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None
