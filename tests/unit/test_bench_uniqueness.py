"""The record-uniqueness benchmark still runs and agrees with the groupby baseline (tiny size;
no timings)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_uniqueness_benchmark_runs_small_and_agrees_with_groupby():
    result = subprocess.run(
        [sys.executable, "bench/bench_uniqueness.py", "--rows", "3000", "--sample-per-size", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "counts equal to the groupby baseline" in result.stdout
    assert "EXTRAPOLATED to 511 from 9 timed combinations" in result.stdout
