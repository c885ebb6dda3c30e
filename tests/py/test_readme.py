"""The README's first example runs as written, on the default embedded catalog of a fresh home."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO, run_python


def test_readme_example_runs_and_prints_the_updated_rows(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", readme, re.S)
    assert block, "the README has no python example"
    code = block.group(1)
    assert len(code.strip().splitlines()) <= 6, "the opening example should stay short"
    env = {"HOME": str(tmp_path), "PYICEBERG_GO_HOME": str(tmp_path / "pig"), "PYICEBERG_HOME": str(tmp_path)}
    r = run_python(code, env=env)
    assert r.returncode == 0, r.stderr
    # The update took effect: id 2 is ERROR, id 1 kept INFO, and the table lives in the fresh home.
    assert re.search(r"level: \[\[.*\]\]", r.stdout.replace("\n", " ")), r.stdout
    out = r.stdout.replace("\n", " ")
    assert '"ERROR"' in out and '"INFO"' in out and '"WARN"' not in out, r.stdout
    assert list((tmp_path / "pig").rglob("*.parquet")), "no data file under the fresh home"


def test_readme_layout_names_every_package() -> None:
    """Every Go package with source (not only tests) is named in the README's Layout section."""
    layout = (REPO / "README.md").read_text().split("## Layout", 1)[1]
    packages = sorted(
        str(d.relative_to(REPO))
        for top in ("core", "capi")
        for d in [REPO / top, *(REPO / top).rglob("*")]
        if d.is_dir() and any(not f.name.endswith("_test.go") for f in d.glob("*.go"))
    )
    assert "core/ops" in packages and "capi" in packages, packages
    missing = [
        p
        for p in packages
        if f"`{p}`" not in layout
        and f"`{p}," not in layout
        and f", `{p}`" not in layout
        and not (p.startswith("core/internal/") and "`core/internal/*`" in layout)
        and not (p.startswith("capi/internal/") and "`capi`" in layout)
    ]
    assert not missing, f"packages missing from the README's Layout: {missing}"
