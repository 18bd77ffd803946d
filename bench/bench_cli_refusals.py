"""How long the command line takes to refuse hostile input: wall time, median of N runs each.

    nice python bench/bench_cli_refusals.py [--repeat 5] [--root DIR ...] [--cases A,B]

Each case is a refusal of the hostile-input suite (tests/unit/test_hostile_input.py,
test_fuzz_cli.py): a file refused from its footer or its first bytes, a recipe refused when
read, a flag refused when parsed, an argument refused before any work. ``--root`` runs other
checkouts' command lines on the same inputs (before and after a change). Prints the load
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
    parser.add_argument(
        "--root",
        type=Path,
        action="append",
        help="a checkout to run (repeatable: the runs alternate between them, so that a change "
        "of the machine's load weighs on each alike); default: this one",
    )
    parser.add_argument("--cases", help="only the cases whose name contains one of these (a,b)")
    options = parser.parse_args()
    roots = options.root or [ROOT]
    wanted = options.cases.split(",") if options.cases else None
    print(f"roots {[str(r) for r in roots]}; load average {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as folder:
        for name, argv in _cases(Path(folder)).items():
            if wanted and not any(part in name for part in wanted):
                continue
            walls: dict[Path, list[float]] = {root: [] for root in roots}
            last: dict[Path, str] = {}
            for _ in range(options.repeat):
                for root in roots:
                    start = time.perf_counter()
                    run = subprocess.run(
                        [sys.executable, "-m", "deid_core", *argv],
                        cwd=root,
                        capture_output=True,
                        text=True,
                        check=False,
                    )
                    walls[root].append(time.perf_counter() - start)
                    lines = run.stderr.strip().splitlines() or [run.stdout.strip()[:60]]
                    last[root] = f"exit {run.returncode}: {lines[-1][:80]}"
            for root in roots:
                times = walls[root]
                print(
                    f"{name:40s} {root.name:12s} median {statistics.median(times):5.2f} s "
                    f"(min {min(times):.2f}, max {max(times):.2f}) {last[root]}"
                )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
