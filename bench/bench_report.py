#!/usr/bin/env python
"""Benchmark of the release report on wide data (the hostile-input issue's item 8).

A script, not a test: it prints timings and memory and never fails on them. The target: a file
of 300 columns, one of whose names is 500 characters long, gives both the HTML and the PDF
report in reasonable time (before the fix the PDF failed after 127 s and neither format was
produced).

Measured in one process (``time.perf_counter``), each phase on its own: assembling the report
(:func:`build_report`: risk, linkage, utility, the R-U sweep), rendering the HTML and rendering
the PDF, for the wide file and for a baseline of the same records with only its first 7
columns. The roles are those the dashboard suggests (every other numeric column becomes a
covariate of the collaborator's model, as after an upload). The wide figures are printed as
ratios of the baseline's. Peak memory is the process's peak resident set size
(``ru_maxrss``) after each phase.

Run from the repository root::

    .venv/bin/python bench/bench_report.py                 # 2,000 records, 300 columns
    .venv/bin/python bench/bench_report.py --rows 500      # quick (CI)
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd
from harness import load_average, machine  # puts the repository on sys.path

from dashboard.state import roles_from_primary
from deid_core.io.roles import infer_roles
from deid_core.masking import IntervalGroup, RelativeRound
from deid_core.recipe import Recipe
from deid_core.report import build_report
from deid_core.risk.context import ReleaseContext
from deid_core.workspace import Workspace

LONG_NAME = "measurement " + "x" * 488  # 500 characters


def wide_frame(rows: int, columns: int, seed: int = 5) -> pd.DataFrame:
    """7 analysis columns, then numeric and text columns up to ``columns`` (one of them named
    with :data:`LONG_NAME`)."""
    rng = np.random.default_rng(seed)
    dose = rng.gamma(0.8, 0.6, rows).round(4)
    age = rng.integers(20, 80, rows)
    logit = -3.0 + 0.6 * dose + 0.01 * (age - 50)
    frame = {
        "person_id": np.arange(1, rows + 1),
        "city": rng.choice(["Hiroshima", "Nagasaki", "Kyoto"], rows),
        "sex": rng.choice(["F", "M"], rows),
        "age": age,
        "dose": dose,
        "cancer": (rng.random(rows) < 1 / (1 + np.exp(-logit))).astype(int),
        LONG_NAME: rng.normal(size=rows).round(3),
    }
    for i in range(columns - len(frame)):
        if i % 3 == 2:
            frame[f"code_{i:03d}"] = rng.choice(["a", "b", "c", "d"], rows)
        else:
            frame[f"lab_value_{i:03d}"] = rng.normal(size=rows).round(2)
    return pd.DataFrame(frame)


def recipe(frame: pd.DataFrame) -> Recipe:
    """The roles the dashboard suggests for ``frame`` (every other numeric column is a
    covariate of the model), with the dose rounded and the age grouped."""
    roles = roles_from_primary(infer_roles(frame))
    return Recipe(roles, (RelativeRound("dose", digits=2), IntervalGroup("age", width=5.0)))


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(frame: pd.DataFrame) -> dict[str, float | str]:
    figures: dict[str, float | str] = {}
    start = time.perf_counter()
    report = build_report(
        Workspace(frame),
        recipe(frame),
        dataset_name="wide.csv",
        synthetic=True,
        context=ReleaseContext(),
    )
    figures["build s"] = time.perf_counter() - start
    start = time.perf_counter()
    html = report.html()
    figures["html s"] = time.perf_counter() - start
    figures["html MB"] = len(html.encode()) / 1e6
    start = time.perf_counter()
    try:
        pdf = report.pdf()
    except Exception as error:  # the figure to print is that it failed, and when
        figures["pdf s"] = time.perf_counter() - start
        figures["pdf"] = f"failed ({type(error).__name__})"
    else:
        figures["pdf s"] = time.perf_counter() - start
        figures["pdf"] = f"{len(pdf) / 1e6:.2f} MB"
    figures["peak RSS MB"] = peak_mb()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--columns", type=int, default=300)
    args = parser.parse_args()
    print(machine(np, pd))
    wide = wide_frame(args.rows, args.columns)
    print(f"{args.rows:,} records; baseline 7 columns, wide {wide.shape[1]} columns")
    base = run(wide.iloc[:, :7].copy())
    print("baseline:", ", ".join(f"{k} {_text(v)}" for k, v in base.items()))
    wide_figures = run(wide)
    print("wide:    ", ", ".join(f"{k} {_text(v)}" for k, v in wide_figures.items()))
    for key in ("build s", "html s", "pdf s"):
        ratio = float(wide_figures[key]) / max(float(base[key]), 1e-9)
        print(f"{key}: wide / baseline = {ratio:.1f}x")
    print(f"load average {load_average()}")


def _text(value: float | str) -> str:
    return f"{value:.2f}" if isinstance(value, float) else value


if __name__ == "__main__":
    main()
