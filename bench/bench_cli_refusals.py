"""How long the command line takes to refuse hostile input: wall time, median of N runs each.

    nice python bench/bench_cli_refusals.py [--repeat 5] [--root DIR]

Each case is a refusal of the hostile-input suite (tests/unit/test_hostile_input.py,
test_fuzz_cli.py): a file refused from its footer or its first bytes, a recipe refused when
read, a flag refused when parsed, an argument refused before any work. ``--root`` runs another
checkout's command line on the same inputs (before and after a change). Prints the load
average before and after, since the figures depend on it; not a test (no assertion).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from hostile_inputs import gzip_long_cell, parquet_claiming_rows, parquet_zeros  # noqa: E402

MB = 1024 * 1024


def _cases(folder: Path) -> dict[str, list[str]]:
    (folder / "claims_16_gib.parquet").write_bytes(parquet_claiming_rows())
    (folder / "rows.parquet").write_bytes(parquet_zeros(50_000_000))
    (folder / "long_cell.csv.gz").write_bytes(gzip_long_cell(500 * MB))
    (folder / "text_in_number.csv").write_text("age,sex\n34,1\nforty,2\n")
    (folder / "junk.parquet").write_bytes(os.urandom(4096))
    (folder / "round_age.json").write_text(
        json.dumps({"steps": [{"method": "absolute_round", "column": "age", "base": 5}]})
    )
    (folder / "bad_recipe.json").write_text(json.dumps({"steps": [{"method": "nope"}]}))
    (folder / "empty_recipe.json").write_text(json.dumps({"steps": []}))
    f = str(folder)
    return {
        "--help": ["--help"],
        "bad flag (--replicates 0)": ["assess", "demo:cohort", "--replicates", "0"],
        "unknown command": ["asess", "demo:cohort"],
        "Parquet claiming 16 GiB (footer)": ["assess", f"{f}/claims_16_gib.parquet", "--qi", "a"],
        "Parquet of 50M rows (footer)": ["assess", f"{f}/rows.parquet", "--qi", "a"],
        "csv.gz with a 500 MB cell": ["assess", f"{f}/long_cell.csv.gz", "--qi", "a"],
        "junk bytes as .parquet": ["assess", f"{f}/junk.parquet", "--qi", "a"],
        "text in a numeric column (rounded)": [
            "assess",
            f"{f}/text_in_number.csv",
            "--recipe",
            f"{f}/round_age.json",
            "--qi",
            "sex",
        ],
        "unknown masking method in recipe": [
            "assess",
            "demo:el_emam",
            "--recipe",
            f"{f}/bad_recipe.json",
        ],
        "uniqueness --small-class 1e23": [
            "uniqueness",
            "demo:el_emam",
            "--keys",
            "sex",
            "--small-class",
            "1e23",
        ],
        "profile sweep of 1e9 points": [
            "profile",
            "demo:cohort",
            "--sweep",
            "0.digits=1:2:1000000000",
        ],
        "roc-attack --quantiles 0": ["roc-attack", "demo:diagnostic_test", "--quantiles", "0"],
        "search --settings -2": ["search", "demo:cohort", "--threshold", "5", "--settings", "-2"],
        "apply -o a folder": [
            "apply",
            "demo:el_emam",
            "--recipe",
            f"{f}/empty_recipe.json",
            "-o",
            f,
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, default=ROOT)
    options = parser.parse_args()
    print(f"root {options.root}; load average {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as folder:
        for name, argv in _cases(Path(folder)).items():
            walls = []
            for _ in range(options.repeat):
                start = time.perf_counter()
                run = subprocess.run(
                    [sys.executable, "-m", "deid_core", *argv],
                    cwd=options.root,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                walls.append(time.perf_counter() - start)
            last = (run.stderr.strip().splitlines() or [run.stdout.strip()[:60]])[-1][:90]
            print(
                f"{name:42s} median {statistics.median(walls):5.2f} s "
                f"(min {min(walls):.2f}, max {max(walls):.2f}) exit {run.returncode}: {last}"
            )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
