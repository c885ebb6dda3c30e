"""Keeping metadata small: rewrite_manifests and write.metadata.delete-after-commit.enabled.

Checked against Spark 4.1's ``CALL system.rewrite_manifests`` and its own commits on twin tables,
and read back with PyIceberg 0.12 and DuckDB. The race with a concurrent writer uses the test-hooks
library's commit pause (no sleeps): PyIceberg, which does not queue on our commit lock (as Spark
does not), appends while our rewrite waits between staging and committing.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyiceberg_go as ig

from conftest import HANG_S, CatalogDir, assert_same_rows, duckdb_scan, hooks_library, use_library
from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)


def rows(first: int, n: int) -> pa.Table:
    ids = list(range(first, first + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": pa.array([["a", "é/b", "c%d", ""][i % 4] for i in ids], pa.string()),
        }
    )


def build(name: str, appends: int, partitioned: bool = True, props: dict[str, str] | None = None) -> pa.Table:
    """A table of ``appends`` + 1 commits (one data manifest each); returns every row written."""
    w = ig.writeTo(rows(0, 7), name)
    if partitioned:
        w = w.partitionedBy("cat")
    for k, v in (props or {}).items():
        w = w.tableProperty(k, v)
    w.create()
    for i in range(appends):
        ig.writeTo(rows(7 + 5 * i, 5), name).append()
    return rows(0, 7 + 5 * appends)


def manifest_shape(pi_table: Any) -> tuple[list[tuple[int, int]], list[str]]:
    """Data manifests of main's head as (spec id, live files) sorted, and the live data files."""
    snap = pi_table.current_snapshot()
    io = pi_table.io
    shape, files = [], []
    for mf in snap.manifests(io):
        if int(mf.content) != 0:
            continue
        live = [e.data_file.file_path for e in mf.fetch_manifest_entry(io, discard_deleted=True)]
        shape.append((mf.partition_spec_id, len(live)))
        files.extend(live)
    return sorted(shape), sorted(files)


@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
def test_rewrite_manifests_matches_spark(partitioned: bool, spark: Any, spark_catalog: str, pyiceberg_catalog: Any) -> None:
    """Twin tables of six commits: Spark's procedure on one, ours on the other. Same result row,
    same manifests after (one per spec holding every live file), same rows; a second call on
    each does nothing."""
    expected = build("local.db.a", 5, partitioned)
    build("local.db.b", 5, partitioned)
    before = {n: manifest_shape(pyiceberg_catalog.load_table(n)) for n in ("db.a", "db.b")}
    assert len(before["db.b"][0]) == 6

    spark_row = spark.sql(f"CALL {spark_catalog}.system.rewrite_manifests(table => 'db.a')").collect()[0].asDict()
    ours = ig.table("db.b").rewrite_manifests()
    assert {"rewritten_manifests_count": ours.rewritten_manifests_count, "added_manifests_count": ours.added_manifests_count} == spark_row
    assert spark_row == {"rewritten_manifests_count": 6, "added_manifests_count": 1}

    for name in ("db.a", "db.b"):
        t = pyiceberg_catalog.load_table(name)
        shape, files = manifest_shape(t)
        assert [n for _, n in shape] == [len(before[name][1])], name
        assert files == before[name][1], f"{name}: the rewrite changed the live files"
        assert t.current_snapshot().summary.operation.value == "replace"
        assert_same_rows(t.scan().to_arrow(), expected)
    b = pyiceberg_catalog.load_table("db.b")
    assert ours.snapshot_id == b.current_snapshot().snapshot_id
    assert_same_rows(duckdb_scan(b.metadata_location), expected)
    # Spark's summary keys of a manifest rewrite, with the same values (not entries-processed:
    # Spark's action writes the manifests itself and its commit processes none; ours counts them).
    keys = ("manifests-created", "manifests-replaced", "manifests-kept")
    summaries = [pyiceberg_catalog.load_table(n).current_snapshot().summary for n in ("db.a", "db.b")]
    spark_summary, our_summary = ({k: s[k] for k in keys} for s in summaries)
    assert spark_summary == our_summary

    # Nothing left to do: neither commits.
    heads = {n: pyiceberg_catalog.load_table(n).current_snapshot().snapshot_id for n in ("db.a", "db.b")}
    again = spark.sql(f"CALL {spark_catalog}.system.rewrite_manifests(table => 'db.a')").collect()[0].asDict()
    second = ig.table("db.b").rewrite_manifests()
    assert again == {"rewritten_manifests_count": 0, "added_manifests_count": 0}
    assert (second.rewritten_manifests_count, second.added_manifests_count, second.snapshot_id) == (0, 0, None)
    assert heads == {n: pyiceberg_catalog.load_table(n).current_snapshot().snapshot_id for n in ("db.a", "db.b")}


def test_rewrite_manifests_by_spec_and_bad_input(pyiceberg_catalog: Any) -> None:
    """After a spec change only the current spec's manifests are rewritten by default;
    ``spec_id`` picks another; an unknown spec is a typed error and commits nothing."""
    expected = build("local.db.t", 2)
    with pyiceberg_catalog.load_table("db.t").update_spec() as u:
        u.add_identity("id")
    for i in range(3):
        ig.writeTo(rows(100 + 3 * i, 3), "local.db.t").append()
    expected = pa.concat_tables([expected] + [rows(100 + 3 * i, 3) for i in range(3)])

    t = pyiceberg_catalog.load_table("db.t")
    cur = t.metadata.default_spec_id
    before, files = manifest_shape(t)
    old = [m for m in before if m[0] != cur]
    old_spec = old[0][0]
    new_files = sum(n for spec, n in before if spec == cur)
    assert len(old) == 3 and len(before) == 6 and {m[0] for m in old} == {old_spec}

    r = ig.table("db.t").rewrite_manifests()
    assert (r.rewritten_manifests_count, r.added_manifests_count) == (3, 1)
    shape, after = manifest_shape(pyiceberg_catalog.load_table("db.t"))
    assert shape == sorted(old + [(cur, new_files)]) and after == files

    r = ig.table("db.t").rewrite_manifests(spec_id=old_spec)
    assert (r.rewritten_manifests_count, r.added_manifests_count) == (3, 1)
    t = pyiceberg_catalog.load_table("db.t")
    shape, after = manifest_shape(t)
    assert shape == sorted([(old_spec, sum(n for _, n in old)), (cur, new_files)]) and after == files
    assert_same_rows(t.scan().to_arrow(), expected)

    head = t.current_snapshot().snapshot_id
    with pytest.raises(ig.InvalidArgumentError, match="Invalid spec id 7"):
        ig.table("db.t").rewrite_manifests(spec_id=7)
    with pytest.raises(TypeError):
        ig.table("db.t").rewrite_manifests(spec_id="0")  # type: ignore[arg-type]
    with pytest.raises(ig.NoSuchTableError):
        ig.table("db.missing").rewrite_manifests()
    assert pyiceberg_catalog.load_table("db.t").current_snapshot().snapshot_id == head


def _slow_rewrite(library: str, props: dict[str, str], signal: str, release: str, out: Any) -> None:
    use_library(library)
    ig.configure(
        catalogs={"local": props},
        conf={"test.hooks": "true", "test.commit-delay-signal": signal, "test.commit-delay-release": release},
    )
    try:
        r = ig.table("local.db.t").rewrite_manifests()
        out.put(json.dumps({"ok": True, "rewritten": r.rewritten_manifests_count, "added": r.added_manifests_count}))
    except ig.IcebergGoError as e:
        out.put(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))


def test_rewrite_manifests_keeps_a_concurrent_append(catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    """PyIceberg appends while our rewrite waits with its snapshot staged: the rewrite's commit
    fails on main's moved head, plans again on the new head, and commits on top; the append's
    rows and file survive, every live file is listed once."""
    expected = build("local.db.t", 3)
    _, files_before = manifest_shape(pyiceberg_catalog.load_table("db.t"))
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    signal, release = catalog_dir.root / "waiting", catalog_dir.root / "release"
    p = ctx.Process(target=_slow_rewrite, args=(hooks_library(), catalog_dir.properties, str(signal), str(release), out))
    p.start()
    deadline = time.monotonic() + HANG_S
    while not signal.exists():
        assert p.is_alive(), "the rewrite ended before its commit pause"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    try:
        extra = rows(500, 4)
        pyiceberg_catalog.load_table("db.t").append(extra)
        appended = pyiceberg_catalog.load_table("db.t").current_snapshot().snapshot_id
    finally:
        release.touch()
    res = json.loads(out.get(timeout=HANG_S))
    p.join(timeout=HANG_S)
    assert p.exitcode == 0
    assert res == {"ok": True, "rewritten": 5, "added": 1}, res
    t = pyiceberg_catalog.load_table("db.t")
    head = t.current_snapshot()
    assert head.summary.operation.value == "replace" and head.parent_snapshot_id == appended
    shape, files = manifest_shape(t)
    added = len(files) - len(files_before)
    assert added > 0 and set(files_before) <= set(files)
    assert [n for _, n in shape] == [len(files)] and len(set(files)) == len(files)
    assert_same_rows(t.scan().to_arrow(), pa.concat_tables([expected, extra]))


# ---- write.metadata.delete-after-commit.enabled ----------------------------------------------


def metadata_files(table_dir: Path) -> set[str]:
    return {p.name for p in (table_dir / "metadata").glob("*.metadata.json")}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keep=st.integers(min_value=1, max_value=4), commits=st.integers(min_value=1, max_value=7), enabled=st.booleans())
def test_delete_after_commit_keeps_the_logged_versions(keep: int, commits: int, enabled: bool, tmp_path_factory: Any) -> None:
    """On the SQLite and directory catalogs, with ``previous-versions-max`` = keep: when enabled
    exactly the current metadata file and the ones its log lists stay (Java's rule), else every
    version stays; the table reads back whole (PyIceberg, DuckDB)."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.table import StaticTable

    root = tmp_path_factory.mktemp("meta")
    for kind in ("sql", "hadoop"):
        wh = root / kind
        wh.mkdir()
        props = (
            {"type": "sql", "uri": f"sqlite:///{wh / 'catalog.db'}", "warehouse": f"file://{wh}"}
            if kind == "sql"
            else {"type": "hadoop", "warehouse": f"file://{wh}"}
        )
        ig.configure(catalogs={"local": props})
        expected = build(
            "local.db.t",
            commits,
            props={"write.metadata.delete-after-commit.enabled": str(enabled).lower(), "write.metadata.previous-versions-max": str(keep)},
        )
        tdir = next(p.parent for p in wh.rglob("metadata") if p.is_dir())
        if kind == "sql":
            loc = SqlCatalog("local", uri=props["uri"], warehouse=props["warehouse"]).load_table("db.t").metadata_location
        else:
            hint = (tdir / "metadata" / "version-hint.text").read_text().strip()
            loc = str(tdir / "metadata" / f"v{hint}.metadata.json")
        pt = StaticTable.from_metadata(loc)
        logged = {Path(e.metadata_file).name for e in pt.metadata.metadata_log}
        on_disk = metadata_files(tdir)
        assert len(logged) == min(keep, commits), kind
        if enabled:
            assert on_disk == logged | {Path(loc).name}, kind
        else:
            assert len(on_disk) == commits + 1, kind
        assert_same_rows(pt.scan().to_arrow(), expected)
        assert_same_rows(duckdb_scan(loc), expected)
    ig.configure()


def test_delete_after_commit_matches_spark(spark: Any, spark_catalog: str, catalog_dir: CatalogDir, pyiceberg_catalog: Any) -> None:
    """Twin tables with the property on: Spark appends to one, we to the other; both keep the
    same number of metadata files: the current one and those its log lists."""
    props = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "2"}
    for name in ("db.a", "db.b"):
        build(f"local.{name}", 0, props=props)
    for i in range(4):
        spark.createDataFrame(rows(50 + i, 1).to_pandas()).writeTo(f"{spark_catalog}.db.a").append()
        ig.writeTo(rows(50 + i, 1), "local.db.b").append()
    dirs = {n: Path(catalog_dir.root) / "wh" / "db.db" / n.split(".")[1] for n in ("db.a", "db.b")}
    counts = {n: len(metadata_files(d)) for n, d in dirs.items()}
    assert counts == {"db.a": 3, "db.b": 3}
    for name in ("db.a", "db.b"):
        t = pyiceberg_catalog.load_table(name)
        assert metadata_files(dirs[name]) == {Path(e.metadata_file).name for e in t.metadata.metadata_log} | {
            Path(t.metadata_location).name
        }
        assert t.scan().to_arrow().num_rows == 11
