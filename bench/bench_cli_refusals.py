"""How long the command line takes to refuse hostile input: wall time and CPU time (user +
system), median of N runs each, and the largest peak memory.

    nice python bench/bench_cli_refusals.py [--repeat 5] [--root DIR ...] [--cases A,B] [--suite]

Each case is a refusal of the hostile-input suite (tests/unit/test_hostile_input.py,
test_fuzz_cli.py): a file refused from its footer or its first bytes, a recipe refused when
read, a flag refused when parsed, an argument refused before any work. ``--suite`` adds every
command-line input of tests/unit/test_hostile_input.py (its files, recipe files, arguments and
steps on columns of the wrong kind), made as the suite makes them. ``--root`` runs other
checkouts' command lines on the same inputs (before and after a change). Prints the load
average before and after, since the wall times depend on it (CPU time much less); not a test
(no assertion).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))
sys.path.insert(0, str(ROOT))

from hostile_inputs import gzip_long_cell, parquet_claiming_rows, parquet_zeros  # noqa: E402

MB = 1024 * 1024


def _first_column(path: Path) -> str:
    """A Parquet file's first column (from its footer), so that the command passes the names
    check and meets the file's own bound, as the suite does; "a" for other files."""
    if path.suffix != ".parquet":
        return "a"
    import pyarrow.parquet as pq

    return pq.read_schema(path).names[0]


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
        "Parquet claiming 16 GiB (footer)": [
            *("assess", f"{f}/claims_16_gib.parquet"),
            *("--qi", _first_column(folder / "claims_16_gib.parquet")),
        ],
        "Parquet of 50M rows (footer)": [
            *("assess", f"{f}/rows.parquet", "--qi", _first_column(folder / "rows.parquet"))
        ],
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


def _suite_cases(folder: Path) -> dict[str, list[str]]:
    """Every command-line input of tests/unit/test_hostile_input.py, as it makes them."""
    import test_hostile_input as suite
    from hostile_inputs import csv_long_line

    from deid_core.io.reading import SUPPORTED_EXTENSIONS

    f = str(folder)
    cases: dict[str, list[str]] = {}
    for name, make, _ in suite.FILE_BOMBS:
        (folder / name).write_bytes(make())
        cases[f"file {name}"] = ["assess", f"{f}/{name}", "--qi", _first_column(folder / name)]
    for extension in SUPPORTED_EXTENSIONS:
        (folder / f"junk{extension}").write_bytes(os.urandom(200_000))
        cases[f"junk {extension}"] = ["assess", f"{f}/junk{extension}", "--qi", "a"]
    (folder / "long_line.csv").write_bytes(csv_long_line(49 * 1000 * 1000))
    cases["a 49 MB line"] = ["assess", f"{f}/long_line.csv", "--qi", "n"]
    qis = ["city", "sex", "age_at_exposure", "age_at_end", "stomach_dose_gy"]
    (folder / "huge_k.json").write_text(
        json.dumps(
            {
                "schema_version": 3,
                "roles": {"quasi_identifiers": qis},
                "steps": [],
                "data_steps": [{"method": "local_suppression", "k": 10_000}],
            }
        )
    )
    huge_k = ["assess", "demo:cohort", "--recipe", f"{f}/huge_k.json"]
    cases["local suppression k = 10,000"] = huge_k
    for name, text, _ in suite.HOSTILE_RECIPES:
        (folder / f"recipe_{name}.json").write_text(text)
        cases[f"recipe {name}"] = ["assess", "demo:el_emam", "--recipe", f"{f}/recipe_{name}.json"]
    (folder / "empty.json").write_text(suite._recipe([]))
    for name, command, _ in suite.HOSTILE_ARGUMENTS:
        argv = command.replace("RECIPE", f"{f}/empty.json").replace("FOLDER", f).split()
        cases[f"argument {name}"] = argv
    model = ["--exposure", "stomach_dose_gy", "--outcome", "stomach_cancer"]
    noise = suite._noise_recipe(folder)
    cases["--replicates 100000"] = [
        "assess", "demo:cohort", "--replicates", "100000", *model, "--recipe", str(noise)
    ]  # fmt: skip
    cases["--bootstrap 10000000"] = ["assess", "demo:cohort", "--bootstrap", "10000000", *model]
    keys = ",".join(["sex", "age_at_exposure", "stomach_dose_gy"] * 5)
    cases["uniqueness 15 keys"] = ["uniqueness", "demo:cohort", "--keys", keys]
    data = folder / "text.csv"
    rows = ["id,sex,age,dose,visit"]
    for i in range(60):
        dose = "forty" if i == 7 else f"{0.1 * i:.1f}"
        visit = "soon" if i == 5 else f"2019-03-{1 + i % 28:02d}"
        rows.append(f"{i},{'MF'[i % 2]},{30 + i % 40},{dose},{visit}")
    data.write_text("\n".join(rows) + "\n")
    roles = {"quasi_identifiers": ["sex", "age"], "record_id": "id"}
    for name, command, steps, data_steps, _ in suite.WRONG_KINDS:
        recipe = folder / f"kind_{name}.json"
        recipe.write_text(
            json.dumps(
                {"schema_version": 3, "roles": roles, "steps": steps, "data_steps": data_steps}
            )
        )
        verb, *flags = command.replace("OUT", f"{f}/out.csv").split()
        cases[f"wrong kind {name}"] = [verb, str(data), "--recipe", str(recipe), *flags]
    for target in ("/dev/full", "/proc/version"):
        cases[f"apply -o {target}"] = [
            "apply", "demo:el_emam", "--recipe", f"{f}/empty.json", "-o", target
        ]  # fmt: skip
    return cases


def _python(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "deid_core", *argv]


def _run(
    argv: list[str], root: Path, memory_mb: int, cpu_seconds: int
) -> tuple[float, float, float, subprocess.CompletedProcess]:
    """(wall s, user + system CPU s, peak MB) of one fresh interpreter running ``argv``, as
    GNU time reports them (a child forked from this process would report this process's own
    peak memory as its own: Linux keeps the larger of the two across fork and exec). Its
    address space and CPU time are capped as the hostile-input suite caps them: the command
    line sizes its read bounds to the memory it may use, and without a cap some of the
    suite's files are read whole (11.8 GB for its text.parquet, then refused for a missing
    column)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * MB,) * 2)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    with tempfile.NamedTemporaryFile(mode="r") as report:
        run = subprocess.run(
            [*("/usr/bin/time", "-f", "%e %U %S %M", "-o", report.name), *_python(argv)],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
            preexec_fn=limit,
        )
        wall, user, system, peak_kb = report.read().split()[-4:]
    return float(wall), float(user) + float(system), int(peak_kb) / 1024, run


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
    parser.add_argument("--memory-mb", type=int, default=3072, help="address-space cap (MB)")
    parser.add_argument("--cpu-seconds", type=int, default=90, help="CPU-time cap (s)")
    parser.add_argument(
        "--suite", action="store_true", help="add the inputs of tests/unit/test_hostile_input.py"
    )
    options = parser.parse_args()
    roots = options.root or [ROOT]
    wanted = options.cases.split(",") if options.cases else None
    print(
        f"roots {[str(r) for r in roots]}; caps {options.memory_mb} MB, "
        f"{options.cpu_seconds} s of CPU; load average {os.getloadavg()}"
    )
    with tempfile.TemporaryDirectory() as folder:
        cases = _cases(Path(folder))
        if options.suite:
            cases |= _suite_cases(Path(folder))
        for name, argv in cases.items():
            if wanted and not any(part in name for part in wanted):
                continue
            walls: dict[Path, list[float]] = {root: [] for root in roots}
            cpus: dict[Path, list[float]] = {root: [] for root in roots}
            peaks: dict[Path, float] = dict.fromkeys(roots, 0.0)
            last: dict[Path, str] = {}
            for _ in range(options.repeat):
                for root in roots:
                    wall, cpu, peak, run = _run(argv, root, options.memory_mb, options.cpu_seconds)
                    walls[root].append(wall)
                    cpus[root].append(cpu)
                    peaks[root] = max(peaks[root], peak)
                    lines = run.stderr.strip().splitlines() or [run.stdout.strip()[:60]]
                    last[root] = f"exit {run.returncode}: {lines[-1][:80]}"
            for root in roots:
                times, cpu = walls[root], cpus[root]
                print(
                    f"{name:40s} {root.name:12s} wall {statistics.median(times):5.2f} s "
                    f"(min {min(times):.2f}, max {max(times):.2f}) "
                    f"CPU {statistics.median(cpu):5.2f} s (max {max(cpu):.2f}) "
                    f"peak {peaks[root]:4.0f} MB {last[root]}",
                    flush=True,
                )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
