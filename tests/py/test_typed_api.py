"""The typed surface: input protocols, typed results, no parameter named after a builtin,
the deprecated keywords, and the package checked by mypy from a user's point of view."""

from __future__ import annotations

import builtins
import inspect
import textwrap
import warnings
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import pyiceberg_go as ig

from conftest import REPO

T = "local.db.t"


def keys_of(td: Any) -> set[str]:
    return set(td.__required_keys__) | set(td.__optional_keys__)


def test_inputs_match_the_protocols() -> None:
    t = pa.table({"a": [1]})
    assert isinstance(t, ig.ArrowStreamExportable)
    assert isinstance(pa.RecordBatchReader.from_batches(t.schema, t.to_batches()), ig.ArrowStreamExportable)
    assert isinstance(pl.DataFrame({"a": [1]}), ig.ArrowStreamExportable)
    assert isinstance(pd.DataFrame({"a": [1]}), ig.ArrowStreamExportable)
    assert isinstance(duckdb.sql("SELECT 1 AS a"), ig.ArrowStreamExportable)
    assert isinstance(t.to_batches()[0], ig.ArrowArrayExportable)
    assert isinstance(t.schema, ig.ArrowSchemaExportable)
    assert isinstance(t.__arrow_c_stream__(), ig._typing.CapsuleType)
    assert not isinstance([{"a": 1}], (ig.ArrowStreamExportable, ig.ArrowArrayExportable))


def test_results_are_typed_dicts_with_the_documented_keys() -> None:
    r = ig.writeTo(pa.table({"id": pa.array([1, 2, 3], pa.int64())}), T).create()
    assert set(r.metrics) == keys_of(ig.WriteMetrics)
    assert isinstance(r.metrics["rows"], int) and isinstance(r.metrics["seconds"], float)
    assert r.merge == {}
    t = ig.table(T)
    (snap,) = t.snapshots()
    assert set(snap) == keys_of(ig.SnapshotInfo) and snap["current"] and snap["parent_id"] is None
    assert set(t.refs()["main"]) == keys_of(ig.RefInfo)
    made = t.create_branch("b")
    assert set(made) == keys_of(ig.RefResult) and made["type"] == "branch"
    assert set(t.fast_forward("b", "main")) == keys_of(ig.RefResult)
    tag = t.create_tag("v1")
    assert tag["type"] == "tag"
    assert t.remove_tag("v1") == {"table": T, "ref": "v1", "removed": True}
    assert set(t.remove_branch("b")) == keys_of(ig.RefRemoval)
    m = t.upsert(pa.table({"id": pa.array([3, 4], pa.int64())}), ["id"])
    assert set(m.merge) == keys_of(ig.MergeCounts)
    assert m.merge["num-target-rows-inserted"] == 1 and m.merge["num-target-rows-updated"] == 1


def test_write_result_keeps_metrics_a_newer_library_adds() -> None:
    r = ig.WriteResult.from_document(
        {"table": "t", "operation": "append", "snapshot_id": 1, "metrics": {"rows": 2, "seconds": 1, "future": 5}}
    )
    assert r.metrics == {"rows": 2, "files": 0, "bytes": 0, "seconds": 1.0, "future": 5}
    assert ig.WriteResult("t", "append", None).metrics == {"rows": 0, "files": 0, "bytes": 0, "seconds": 0.0}


def public_callables() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for name in ig.__all__:
        obj = getattr(ig, name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if callable(member) and (not attr.startswith("_") or attr == "__init__"):
                    out.append((f"{name}.{attr}", member))
        elif callable(obj) and not isinstance(obj, type):
            out.append((name, obj))
    # The builder objects that public methods return.
    from pyiceberg_go.merge import WhenMatched, WhenNotMatched, WhenNotMatchedBySource

    for cls in (WhenMatched, WhenNotMatched, WhenNotMatchedBySource):
        out += [(f"{cls.__name__}.{a}", m) for a, m in vars(cls).items() if callable(m) and not a.startswith("_")]
    return out


def test_no_public_parameter_is_named_after_a_builtin() -> None:
    shadowing = []
    for name, fn in public_callables():
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in params:
            if p.kind is p.VAR_KEYWORD:
                continue  # only the deprecated spellings come through **
            if p.name in dir(builtins):
                shadowing.append(f"{name}({p.name})")
    assert not shadowing, shadowing
    assert len(public_callables()) > 60


def test_update_takes_assignments_and_the_old_set_keyword_with_a_warning() -> None:
    ig.writeTo(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array([0, 0, 0], pa.int64())}), T).create()
    t = ig.table(T)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t.update({"v": "1"}, "id = 1")  # positional, as before
        t.update(assignments={"v": 2}, where="id = 2")
    with pytest.warns(DeprecationWarning, match=r"update\(set=\.\.\.\) is deprecated"):
        r = t.update(set={"v": "id * 10"}, where="id = 3")
    assert r.snapshot_id is not None
    assert dict(zip(*t.to_arrow().sort_by("id").to_pydict().values())) == {1: 1, 2: 2, 3: 30}
    with pytest.raises(TypeError, match="both"):
        t.update({"v": 1}, set={"v": 2})
    with pytest.raises(TypeError, match="unexpected keyword"):
        t.update({"v": 1}, wehre="id = 1")
    with pytest.raises(ValueError, match="non-empty mapping"):
        t.update()


def test_table_property_takes_key_and_the_old_property_keyword_with_a_warning() -> None:
    w = ig.writeTo(None, T).tableProperty("a", 1).tableProperty(key="b", value=True)  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning, match="tableProperty"):
        w.tableProperty(property="c", value="3")
    assert w.request_document("create")["properties"] == {"a": "1", "b": "true", "c": "3"}
    with pytest.raises(TypeError, match="unexpected keyword"):
        w.tableProperty("x", "y", prop="z")


MYPY_SNIPPET = """
from __future__ import annotations

import duckdb
import polars as pl
import pyiceberg_go as ig


def save(df: ig.ArrowData, name: str) -> int:
    r: ig.WriteResult = ig.writeTo(df, name).append()
    rows: int = r.metrics["rows"]
    return rows


save(pl.DataFrame({"a": [1]}), "db.t")
save(duckdb.sql("select 1"), "db.t")
save(ig.table("db.t").scan(), "db.t")
s = ig.Session(conf={"wap.id": "x"})
snaps: list[ig.SnapshotInfo] = s.table("db.t").snapshots()
first: int | None = snaps[0]["parent_id"]
updated: int = s.mergeInto(pl.DataFrame(), "db.t", "true").merge().merge["num-target-rows-updated"]
kind: str = s.table("db.t").refs()["main"]["type"]
save([{"a": 1}], "db.t")  # E: not Arrow data
snaps[0]["snapshot"]  # E: no such key
"""


def test_a_users_code_type_checks_against_the_package(tmp_path: Path) -> None:
    from mypy import api

    src = tmp_path / "user_code.py"
    src.write_text(textwrap.dedent(MYPY_SNIPPET))
    out, err, _status = api.run(
        ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), "--python-version", "3.10", str(src)]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    lines = {int(line.split(":")[1]) for line in errors}
    expected = {i + 1 for i, line in enumerate(textwrap.dedent(MYPY_SNIPPET).splitlines()) if "# E:" in line}
    assert lines == expected, out + err
    assert 'incompatible type "list[dict[str, int]]"' in out and '"snapshot"' in out
    assert str(REPO) in str(Path(ig.__file__).resolve())


def test_every_public_name_has_a_docstring_with_an_example() -> None:
    missing = []
    for name in ig.__all__:
        obj = getattr(ig, name)
        if name in ("__version__", "ArrowData"):  # a string and a type alias
            continue
        if "Example" not in (obj.__doc__ or ""):
            missing.append(name)
        if inspect.isclass(obj) and not getattr(obj, "_is_protocol", False):
            for attr, member in vars(obj).items():
                public = not attr.startswith("_") or attr in ("__arrow_c_stream__", "__arrow_c_schema__")
                documented = "Example" in (getattr(member, "__doc__", None) or "")
                if public and (callable(member) or isinstance(member, property)) and not documented:
                    missing.append(f"{name}.{attr}")
    assert not missing, missing
