"""Concurrent appenders: appends never conflict in meaning, so none may fail.

On the SQLite catalog, committers of one table queue on a per-table lock beside the catalog
file, so eight processes appending fifty times each land every append with default settings.
On a REST catalog the server arbitrates: conflicts are retried within the table's
``commit.retry.*`` budget, and what fails fails cleanly (typed, nothing half-committed).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig

from conftest import CatalogDir
from servers import RestServer, S3Server, rest_server, s3_server  # noqa: F401  (fixtures)

PROCS = 8
APPENDS = 50
ROWS = 3


def _appender(props: dict[str, str], table: str, worker: int, out: str, appends: int) -> None:
    os.environ["PYICEBERG_GO_PROGRESS"] = "0"
    ig.configure(catalogs={"local": props})
    with open(out, "w") as f:
        for i in range(appends):
            base = (worker * APPENDS + i) * ROWS
            batch = pa.table({"id": pa.array(range(base, base + ROWS), pa.int64()), "worker": pa.array([worker] * ROWS, pa.int64())})
            try:
                r = ig.writeTo(batch, table).append()
                f.write(json.dumps({"ok": r.snapshot_id, "first": base}) + "\n")
            except ig.IcebergGoError as e:
                f.write(json.dumps({"error": type(e).__name__, "first": base, "message": str(e)[:300]}) + "\n")
            f.flush()


def run_appenders(props: dict[str, str], table: str, tmp: Path, appends: int = APPENDS, workers: int = PROCS) -> list[dict[str, Any]]:
    ctx = mp.get_context("spawn")  # the library must not be loaded before a fork
    outs = [tmp / f"worker-{w}.jsonl" for w in range(workers)]
    procs = [ctx.Process(target=_appender, args=(props, table, w, str(outs[w]), appends)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=900)
    assert [p.exitcode for p in procs] == [0] * workers
    results = [json.loads(line) for o in outs for line in o.read_text().splitlines()]
    assert len(results) == workers * appends
    return results


def check_table(t: Any, results: list[dict[str, Any]]) -> None:
    """The table holds exactly the appends that returned, each once, on one chain of snapshots."""
    ok = [r for r in results if "ok" in r]
    snaps = t.snapshots()
    appends = {s.snapshot_id for s in snaps if s.summary and s.summary.operation.value == "append"}
    assert {r["ok"] for r in ok} == appends
    ids = sorted(t.scan().to_arrow()["id"].to_pylist())
    assert ids == sorted(r["first"] + k for r in ok for k in range(ROWS))
    chain = {s.snapshot_id: s.parent_snapshot_id for s in snaps}
    n, cur = 0, t.current_snapshot().snapshot_id
    while cur is not None:
        n, cur = n + 1, chain[cur]
    assert n == len(snaps)


def seed_schema() -> pa.Table:
    return pa.table({"id": pa.array([], pa.int64()), "worker": pa.array([], pa.int64())})


def test_eight_processes_append_fifty_times_each_with_default_settings(catalog_dir: CatalogDir, pyiceberg_catalog: Any, tmp_path: Path) -> None:
    ig.writeTo(seed_schema(), "local.db.events").create()
    results = run_appenders(catalog_dir.properties, "local.db.events", tmp_path)
    failed = [r for r in results if "error" in r]
    assert not failed, f"{len(failed)} of {len(results)} appends failed, first: {failed[0]}"
    check_table(pyiceberg_catalog.load_table("db.events"), results)


def test_eight_processes_append_fifty_times_each_on_a_directory_catalog(tmp_path: Path) -> None:
    """The directory ("hadoop") catalog on a local warehouse queues committers the same way (its
    commits rewrite a growing metadata file each, so fewer appends keep the test short)."""
    from pyiceberg.table import StaticTable

    wh = tmp_path / "hwh"
    props = {"type": "hadoop", "warehouse": f"file://{wh}"}
    ig.configure(catalogs={"local": props})
    ig.writeTo(seed_schema(), "local.db.events").create()
    results = run_appenders(props, "local.db.events", tmp_path, appends=15)
    failed = [r for r in results if "error" in r]
    assert not failed, f"{len(failed)} of {len(results)} appends failed, first: {failed[0]}"
    meta = wh / "db" / "events" / "metadata"
    version = (meta / "version-hint.text").read_text().strip()
    check_table(StaticTable.from_metadata(str(meta / f"v{version}.metadata.json")), results)


@pytest.mark.parametrize("retries", [None, "100"], ids=["default-retries", "retries-100"])
def test_eight_processes_append_on_rest(retries: str | None, rest_server: RestServer, tmp_path: Path, record_property: Any) -> None:
    from pyiceberg.catalog.rest import RestCatalog

    props = {"type": "rest", "uri": rest_server.uri, "warehouse": str(tmp_path / "wh")}
    ns = f"conc_{tmp_path.name[-12:].replace('-', '_')}"
    table = f"local.{ns}.events"
    w = ig.writeTo(seed_schema(), table)
    if retries:
        w = w.tableProperty("commit.retry.num-retries", retries).tableProperty("commit.retry.max-wait-ms", "2000")
    ig.configure(catalogs={"local": props})
    w.create()
    results = run_appenders(props, table, tmp_path)
    landed = sum("ok" in r for r in results)
    record_property("rest_appends_landed", f"{landed}/{len(results)}")
    print(f"REST, commit.retry.num-retries={retries or 'default (4)'}: {landed}/{len(results)} appends landed")
    # Whatever failed, failed as a typed commit conflict and left nothing behind.
    assert {r["error"] for r in results if "error" in r} <= {"CommitConflictError"}
    if retries:
        assert landed == len(results)
    check_table(RestCatalog("local", uri=rest_server.uri).load_table(f"{ns}.events"), results)


def test_racing_appends_with_manifest_merging_keep_every_row_once(rest_server: RestServer, tmp_path: Path) -> None:
    """With ``commit.manifest-merge.enabled`` an append's snapshot may carry a manifest that
    merged its parent's manifests. A retry that moved that snapshot onto a newer head by a new
    manifest list alone would list the parent's files twice (once in the merged manifest, once
    in the new head's); a retry must stage such an append afresh. Run on REST, where commits
    race (the SQLite catalog queues them), with merging after every second manifest."""
    from pyiceberg.catalog.rest import RestCatalog

    props = {"type": "rest", "uri": rest_server.uri, "warehouse": str(tmp_path / "wh")}
    ns = f"merge_{tmp_path.name[-12:].replace('-', '_')}"
    table = f"local.{ns}.events"
    ig.configure(catalogs={"local": props})
    (
        ig.writeTo(seed_schema(), table)
        .tableProperty("commit.retry.num-retries", "100")
        .tableProperty("commit.retry.max-wait-ms", "2000")
        .tableProperty("commit.manifest-merge.enabled", "true")
        .tableProperty("commit.manifest.min-count-to-merge", "2")
        .create()
    )
    results = run_appenders(props, table, tmp_path, appends=10, workers=4)
    failed = [r for r in results if "error" in r]
    assert not failed, f"{len(failed)} of {len(results)} appends failed, first: {failed[0]}"
    t = RestCatalog("local", uri=rest_server.uri).load_table(f"{ns}.events")
    check_table(t, results)
    # Every data file is live in exactly one manifest entry, and merging did happen.
    files = t.inspect.files()["file_path"].to_pylist()
    assert len(files) == len(set(files)) == len(results)
    assert len(t.inspect.manifests()) < len(results)
