"""The smoothing benchmark still runs and its results equal plain numpy (tiny sizes; no timings)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_smoothing_benchmark_runs_small_and_agrees_with_plain_numpy():
    result = subprocess.run(
        [
            sys.executable,
            "bench/bench_smoothing.py",
            "--n-dense",
            "200",
            "--n-compact",
            "2000",
            "--n-baseline",
            "500",
            "--repeat",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "every result equals the plain dense numpy computation" in result.stdout
