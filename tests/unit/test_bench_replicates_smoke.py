"""The replicate benchmark still runs and agrees with statsmodels (small size; no timings)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bench/bench_replicates.py", "--replicates", "5", "--n", "2000", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_replicate_benchmark_runs_small_and_agrees_with_statsmodels():
    result = _run("--repeat", "1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "estimates and standard errors agree to 1e-06 relative" in result.stdout
    assert "(5 replicates, none failed)" in result.stdout


def test_replicate_benchmark_with_covariates_agrees_with_statsmodels():
    result = _run("--repeat", "1", "--covariates")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "estimates and standard errors agree to 1e-06 relative" in result.stdout
