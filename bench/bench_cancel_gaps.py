"""The longest stretches of CPU time between two cancellation checks in the report build.

    nice python bench/bench_cancel_gaps.py [--records 200000] [--replicates 500] [--top 6]
        [--wide 0]

A closed tab (or a newer setting) cancels work at its next check
(:func:`deid_core.cancellation.check_cancelled`), so the longest stretch without a check
bounds how long the server keeps computing for a tab that is gone. This script does what the
Export page's "Build the report" does on the synthetic cohort (uniform noise on the exposure,
``--replicates`` replicates): the released frame, its CSV, the report, its HTML and its PDF,
all under a check that records the process's CPU time, the wall time and the caller at every
call. It prints the number of checks, the CPU time, and the ``--top`` longest CPU stretches
with where each began and ended. ``--wide N`` adds N numeric columns released unmasked
(``lab_000``, ...: a wide file, whose report states what each gives away). A measurement, not
a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import itertools
import time
import traceback

import numpy as np
import pandas as pd
from harness import load_average, machine  # puts the repository on sys.path

from deid_core.cancellation import cancellable
from deid_core.datasets.cohort import synthetic_cohort
from deid_core.io.export import export_release
from deid_core.masking import UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.report import build_report
from deid_core.risk.context import ReleaseContext
from deid_core.workspace import Workspace

ROLES = Roles(
    quasi_identifiers=("city", "sex", "age_at_exposure", "age_at_end"),
    exposure="stomach_dose_gy",
    outcome="stomach_cancer",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--replicates", type=int, default=500)
    parser.add_argument("--top", type=int, default=6)
    parser.add_argument("--wide", type=int, default=0, help="extra numeric columns")
    args = parser.parse_args()
    print(machine(np, pd))
    frame = synthetic_cohort(n=args.records, seed=7).drop(columns=["person_id"])
    if args.wide:
        rng = np.random.default_rng(2)
        labs = {f"lab_{i:03d}": rng.normal(size=len(frame)).round(2) for i in range(args.wide)}
        frame = pd.concat([frame, pd.DataFrame(labs, index=frame.index)], axis=1)
    recipe = Recipe(ROLES, (UniformNoise("stomach_dose_gy", half_width=0.5),))
    workspace = Workspace(frame, name="cohort")
    marks: list[tuple[float, float, str]] = []

    def mark(where: str) -> None:
        marks.append((time.process_time(), time.perf_counter(), where))

    def check() -> None:
        stack = traceback.extract_stack(limit=12)[:-1]
        mark(
            " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in stack[::-1])
        )

    with cancellable(check):
        mark("start")
        released = workspace.released_frame(recipe)
        mark("released frame made")
        if released is not None:
            export_release(released, "csv", shuffle_seed=1)
            mark("CSV written")
        report = build_report(
            workspace,
            recipe,
            dataset_name="cohort",
            synthetic=True,
            context=ReleaseContext(),
            n_replicates=args.replicates,
        )
        mark("report built")
        report.html()
        mark("HTML rendered")
        report.pdf()
        mark("PDF rendered")
    total = marks[-1][0] - marks[0][0]
    print(
        f"{args.records:,} records, {frame.shape[1]} columns, {args.replicates} replicates: "
        f"{len(marks):,} checks "
        f"in {total:.1f} CPU s"
    )
    gaps = sorted(
        ((b[0] - a[0], b[1] - a[1], a[2], b[2]) for a, b in itertools.pairwise(marks)), reverse=True
    )
    print(f"load average at the end: {load_average()}")
    for cpu, wall, start, end in gaps[: args.top]:
        print(f"CPU {cpu:.2f} s (wall {wall:.2f} s)\n  from {start}\n  to   {end}")


if __name__ == "__main__":
    main()
