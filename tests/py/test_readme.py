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
