"""Benchmark of the recipe search (deid_core.search): the full frontier of a space of 1,372
recipes on the 16,000-person demo resampled to 100,000 and 1,000,000 records; time to the first
recipe that meets the threshold (the first partial result holding one, as the dashboard streams
it), the whole time and the CPU time of the process (fairer than wall time on a loaded
machine), recipes judged and model fits, where the time goes, and the ratio against an earlier
implementation (default commit fe704cc, before the grouped fits of issue 30 item 4; 67651d1 is
the one before issue 30), extracted with ``git archive`` into a temporary directory and run by
this same script in a subprocess, so both run the same code path on the same data.

    python bench/bench_search.py                        # 100k and 1M, this tree and fe704cc
    python bench/bench_search.py --rows 16000 --brute-force
    python bench/bench_search.py --rows 1000000 --no-old

Targets (issue 30 item 4): at 1M records the first passing recipe within 30 s and the whole
space within 2 minutes (issue 16: 10 s at 16k). The script fails only if the two
implementations (or, with ``--brute-force``, the search and brute force) disagree on the
recipes that meet the threshold, their risk figures, or their analysis potential.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import harness
import numpy as np
import pandas as pd

from deid_core.datasets import load_demo
from deid_core.masking import IntervalGroup, MergeLevels, TopBottomCode, Truncate
from deid_core.recipe import Recipe, Roles
from deid_core.risk.context import ReleaseContext
from deid_core.search import ColumnSettings, SearchSpace, search_space
from deid_core.search import search as search_module
from deid_core.workspace import Workspace

OLD_COMMIT = "fe704cc"

ROLES = Roles(
    quasi_identifiers=("city", "sex", "age_at_exposure", "age_at_end", "stomach_dose_gy"),
    exposure="stomach_dose_gy",
    outcome="stomach_cancer",
    covariates=("city", "sex", "age_at_exposure", "age_at_end"),
)


def _ages(column: str, bottom: float, top: float) -> ColumnSettings:
    return ColumnSettings(
        column,
        (
            (),
            (Truncate(column, decimals=0),),
            (IntervalGroup(column, width=2.0),),
            (IntervalGroup(column, width=5.0),),
            (IntervalGroup(column, width=10.0),),
            (IntervalGroup(column, width=20.0),),
            (TopBottomCode(column, top=top, bottom=bottom), IntervalGroup(column, width=20.0)),
        ),
    )


SPACE = SearchSpace(
    (
        ColumnSettings(
            "city", ((), (MergeLevels("city", groups={"all": ["Hiroshima", "Nagasaki"]}),))
        ),
        ColumnSettings("sex", ((), (MergeLevels("sex", groups={"all": ["F", "M"]}),))),
        _ages("age_at_exposure", 10.0, 50.0),
        _ages("age_at_end", 60.0, 99.0),
        ColumnSettings(
            "stomach_dose_gy",
            (
                (),
                (Truncate("stomach_dose_gy", decimals=2),),
                (Truncate("stomach_dose_gy", decimals=1),),
                (IntervalGroup("stomach_dose_gy", width=0.2),),
                (IntervalGroup("stomach_dose_gy", width=0.5),),
                (IntervalGroup("stomach_dose_gy", width=1.0),),
                (
                    TopBottomCode("stomach_dose_gy", top=2.0),
                    IntervalGroup("stomach_dose_gy", width=1.0),
                ),
            ),
        ),
    ),
    suppression_limit=0.02,
)

#: Where the time goes: the search's own steps, timed by wrapping them (names shared by this
#: tree and the old commit).
PHASES = {
    "judge": "risk of each recipe (classes, verdict, record suppression)",
    "with_utility": "utility of the recipes that meet the threshold (masking + fits)",
    "_fit_together": "  of which shared-design logistic fits",
    "_fit_subsets": "  of which fits on the records a suppressing recipe keeps",
}


def data(rows: int, distinct: bool = False) -> pd.DataFrame:
    """The demo resampled to ``rows`` records. Resampled, it has at most 16,000 distinct
    records, so every recipe's model fits on few patterns; ``distinct`` moves each record's
    ages (by up to 0.05 years) and dose (by up to 0.0005 Gy, kept at least 0) so that, as in a
    real cohort of that size, recipes that leave a continuous column exact have about one
    pattern per record and are fitted record by record."""
    demo = load_demo("cohort")
    if rows == len(demo) and not distinct:
        return demo
    rng = np.random.default_rng(0)
    frame = demo.iloc[rng.integers(0, len(demo), rows)].reset_index(drop=True)
    if distinct:
        for column, half in (("age_at_exposure", 0.05), ("age_at_end", 0.05)):
            frame[column] = frame[column] + rng.uniform(-half, half, rows)
        dose = frame["stomach_dose_gy"] + rng.uniform(-0.0005, 0.0005, rows)
        frame["stomach_dose_gy"] = dose.clip(lower=0.0)
    return frame


def _timed_phases() -> Counter[str]:
    """Wrap the search's steps so their wall time adds up in the returned counter."""
    spent: Counter[str] = Counter()
    for name in PHASES:
        method = getattr(search_module._Search, name, None)
        if method is None:
            continue

        def wrapper(
            *args: Any, _method: Callable[..., Any] = method, _name: str = name, **kw: Any
        ) -> Any:
            start = time.perf_counter()
            try:
                return _method(*args, **kw)
            finally:
                spent[_name] += time.perf_counter() - start

        setattr(search_module._Search, name, wrapper)
    return spent


def run_once(
    rows: int, limit: float, cell: int, prune: bool = True, distinct: bool = False
) -> dict[str, Any]:
    """One search of SPACE on ``rows`` records: timings, counts and every passing point."""
    frame = data(rows, distinct)
    spent = _timed_phases()
    start = time.perf_counter()
    cpu = time.process_time()
    first: list[float] = []
    first_cpu: list[float] = []

    def partial(result: Any) -> None:
        if not first and result.points:
            first.append(time.perf_counter() - start)
            first_cpu.append(time.process_time() - cpu)

    result = search_space(
        Workspace(frame),
        Recipe(ROLES),
        SPACE.with_suppression_limit(limit),
        ReleaseContext(min_cell_size=cell),
        partial=partial,
        prune=prune,
    )
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu
    return {
        "rows": rows,
        "seconds": seconds,
        "first": first[0] if first else (seconds if result.points else None),
        "cpu": cpu_seconds,
        "first_cpu": first_cpu[0] if first_cpu else cpu_seconds,
        "recipes": result.n_recipes,
        "evaluated": result.n_evaluated,
        "pruned": result.n_pruned,
        "meeting": len(result.points),
        "fits": result.n_fits,
        "frontier": [list(p.choice) for p in result.frontier],
        "phases": dict(spent),
        "points": {
            ",".join(map(str, p.choice)): [
                p.risk,
                p.max_risk,
                p.average_risk,
                p.k,
                p.records_removed,
                p.analysis_potential,
            ]
            for p in result.points
        },
    }


def in_subprocess(
    script: Path, rows: int, limit: float, cell: int, distinct: bool
) -> dict[str, Any]:
    """This script's worker run by another tree's copy (its harness puts that tree first)."""
    command = [sys.executable, str(script), "--worker", str(rows)]
    command += ["--suppression-limit", str(limit), "--min-cell-size", str(cell)]
    command += ["--distinct"] if distinct else []
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": ""}
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def disagreement(new: dict[str, Any], old: dict[str, Any]) -> str | None:
    """Why two runs differ (None: the same passing recipes, figures and frontier)."""
    if set(new["points"]) != set(old["points"]):
        return "different recipes meet the threshold"
    if new["frontier"] != old["frontier"]:
        return "different frontiers"
    for choice, figures in new["points"].items():
        other = old["points"][choice]
        if figures[:5] != other[:5]:
            return f"recipe {choice}: risk figures {figures[:5]} != {other[:5]}"
        a, b = figures[5], other[5]
        if (a is None) != (b is None) or (a is not None and not math.isclose(a, b, rel_tol=1e-6)):
            return f"recipe {choice}: analysis potential {a} != {b}"
    return None


def report(name: str, run: dict[str, Any]) -> None:
    print(
        f"  {name:12s} first passing recipe {run['first']:7.2f} s, whole space "
        f"{run['seconds']:7.2f} s; {run['recipes']:,} recipes: evaluated {run['evaluated']:,}, "
        f"pruned {run['pruned']:,}, meeting {run['meeting']:,}, model fits {run['fits']:,}"
    )
    print(
        f"    CPU time of the process: {run['first_cpu']:.2f} s to the first passing recipe, "
        f"{run['cpu']:.2f} s in all"
    )
    for phase, what in PHASES.items():
        if phase in run["phases"]:
            print(f"    {run['phases'][phase]:8.2f} s  {what}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--min-cell-size", type=int, default=5)
    parser.add_argument(
        "--suppression-limit",
        type=float,
        default=SPACE.suppression_limit,
        help=f"share of records a recipe may remove (default {SPACE.suppression_limit})",
    )
    parser.add_argument("--old", default=OLD_COMMIT, help="commit to compare with")
    parser.add_argument("--no-old", action="store_true", help="time this tree alone")
    parser.add_argument(
        "--brute-force", action="store_true", help="also judge every recipe (no pruning)"
    )
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="move each record's ages and dose slightly (no repeated records; see data())",
    )
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    limit, cell = args.suppression_limit, args.min_cell_size
    if args.worker is not None:
        print(json.dumps(run_once(args.worker, limit, cell, distinct=args.distinct)))
        return 0
    print(harness.machine(np, pd))
    print(
        f"{SPACE.size:,} recipes, threshold 1/{cell}, suppression limit {limit:.0%}"
        + (", records moved apart (--distinct)" if args.distinct else "")
    )
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        old_script = None if args.no_old else harness.old_tree(args.old, Path(tmp), Path(__file__))
        if not args.no_old and old_script is None:
            print(f"commit {args.old} unavailable (git archive failed): this tree alone")
        for rows in args.rows:
            print(f"{rows:,} records (load average {harness.load_average()})")
            new = run_once(rows, limit, cell, distinct=args.distinct)
            report("this tree", new)
            target_first, target_all = (10.0, 10.0) if rows <= 20_000 else (30.0, 120.0)
            print(
                f"  first passing recipe within {target_first:.0f} s: "
                f"{harness.verdict(new['first'] is not None and new['first'] <= target_first)}; "
                f"whole space within {target_all:.0f} s: "
                f"{harness.verdict(new['seconds'] <= target_all)}"
            )
            if args.brute_force:
                brute = run_once(rows, limit, cell, prune=False, distinct=args.distinct)
                report("brute force", brute)
                why = disagreement(new, brute)
                failed |= why is not None
                print(
                    f"  FAIL: the search and brute force disagree: {why}"
                    if why
                    else "  search and brute force agree on the recipes meeting the threshold, "
                    "their figures and the frontier"
                )
            if old_script is not None:
                old = in_subprocess(old_script, rows, limit, cell, args.distinct)
                report(args.old, old)
                print(
                    f"  ratio {args.old} / this tree: whole space "
                    f"{old['seconds'] / new['seconds']:.2f}x, first passing recipe "
                    f"{old['first'] / new['first']:.2f}x"
                )
                why = disagreement(new, old)
                failed |= why is not None
                print(
                    f"  FAIL: this tree and {args.old} disagree: {why}"
                    if why
                    else f"  this tree and {args.old} agree on the recipes meeting the "
                    "threshold, their figures and the frontier"
                )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
