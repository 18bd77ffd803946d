"""The benchmark script still runs and its correctness checks hold (small size; no timings)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_risk_benchmark_runs_small_and_its_implementations_agree():
    result = subprocess.run(
        [sys.executable, "bench/bench_risk.py", "--rows", "5000", "--repeat", "1", "--no-stages"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "figures and class sizes identical" in result.stdout
