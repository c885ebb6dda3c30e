"""bench/run.py's table of issue 7's targets: ratios of medians, the same ratios run by run, and the
verdicts, from synthetic measurements (the harness itself runs in CI in quick mode)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(spec.name, None)


def result(competitor, workload, run, seconds, *, ok=True, peak=1000.0, base=900.0, input_bytes=2**30):
    return {"competitor": competitor, "workload": workload, "run": run, "seconds": seconds, "ok": ok,
            "rows": 100, "rss_peak_mb": peak, "rss_baseline_mb": base, "input_bytes": input_bytes,
            "data_bytes": 1, "total_bytes": 1, "data_files": 1, "check": {}}


def by_target(ts):
    return {t["target"]: t for t in ts}


def test_time_targets_pair_runs_and_judge_the_medians(bench):
    results = [
        # W3: ours 1, 2, 9 s against PyIceberg's 3, 5, 10 s: medians 2 / 5 = 0.40, runs 0.33, 0.40, 0.90.
        result("pyiceberg_go.append", "W3", 0, 1.0), result("pyiceberg.append", "W3", 0, 3.0),
        result("pyiceberg_go.append", "W3", 1, 2.0), result("pyiceberg.append", "W3", 1, 5.0),
        result("pyiceberg_go.append", "W3", 2, 9.0), result("pyiceberg.append", "W3", 2, 10.0),
        # W1: a failed run of PyIceberg leaves its run out of the pairs.
        result("pyiceberg_go.append", "W1", 0, 1.0), result("pyiceberg.append", "W1", 0, 4.0),
        result("pyiceberg_go.append", "W1", 1, 1.0), result("pyiceberg.append", "W1", 1, 0.5, ok=False),
    ]
    rows = bench.summarise(results, ["W1", "W3"])
    ts = by_target(bench.targets(rows, results))
    w3 = ts["W3 append / pyiceberg"]
    assert (w3["limit"], w3["value"], w3["met"]) == ("0.33x", "0.40x", False)
    assert w3["per_run"] == "0.40 (0.33-0.90)"
    w1 = ts["W1 append / pyiceberg"]
    assert (w1["value"], w1["per_run"], w1["met"]) == ("0.25x", "0.25 (0.25-0.25)", True)
    # No create measured, no pyarrow, delta-rs or Spark: no rows for them.
    assert not [k for k in ts if "create" in k or "deltalake" in k or "spark" in k or "pyarrow" in k]
    assert "| W3 append / pyiceberg | 0.33x | 0.40x | 0.40 (0.33-0.90) | **no** |" in bench.markdown_targets(rows, results)


def test_write_extra_is_judged_in_the_unit_rss_is_read_in(bench):
    gib = 2**30  # 1024 MiB of input: the line is 0.3 x 1024 = 307 MiB (it would be 322 in decimal MB)
    results = [result("pyiceberg_go.append", "W2", 0, 1.0, peak=1210.0, base=900.0, input_bytes=gib),
               result("pyiceberg_go.create", "W2", 0, 1.0, peak=1200.0, base=900.0, input_bytes=gib)]
    ts = by_target(bench.targets(bench.summarise(results, ["W2"]), results))
    assert ts["W2 append write extra"]["limit"] == "307 MB"
    assert ts["W2 append write extra"]["met"] is False  # 310 MiB
    assert ts["W2 create write extra"]["met"] is True  # 300 MiB


def test_streaming_peak_ratio_pairs_the_runs(bench):
    results = [result("pyiceberg_go.append", "W5x1", 0, 1.0, peak=400.0),
               result("pyiceberg_go.append", "W5x10", 0, 9.0, peak=500.0),
               result("pyiceberg_go.append", "W5x1", 1, 1.0, peak=450.0),
               result("pyiceberg_go.append", "W5x10", 1, 9.0, peak=480.0)]
    ts = by_target(bench.targets(bench.summarise(results, ["W5x1", "W5x10"]), results))
    ratio = ts["W5 10x peak / 1x peak"]
    # medians 490 / 425 = 1.15; runs 1.25 and 1.07
    assert (ratio["value"], ratio["per_run"], ratio["met"]) == ("1.15x", "1.16 (1.07-1.25)", True)
    assert ts["W5 10x peak"]["met"] is True


def test_a_ratio_just_over_its_limit_does_not_print_as_the_limit(bench):
    # 501.2 / 416.7 = 1.203: over 1.2, which two decimals would print as 1.20 beside "no".
    results = [result("pyiceberg_go.append", "W5x1", 0, 1.0, peak=416.7),
               result("pyiceberg_go.append", "W5x10", 0, 9.0, peak=501.2)]
    ratio = by_target(bench.targets(bench.summarise(results, ["W5x1", "W5x10"]), results))["W5 10x peak / 1x peak"]
    assert (ratio["value"], ratio["met"]) == ("1.203x", False)
