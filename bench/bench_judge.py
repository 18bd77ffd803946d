"""Benchmark of judging the record-suppressing recipes of the search (issue 30 item 4 at a
million distinct records): the recipes of ``bench_search.SPACE`` that the search judges with
record suppression, judged by this tree and by an earlier commit (default bde194a, before the
judging fast paths), each on its own fresh workspace of the same data, in a subprocess that runs
this same script from the old commit's tree extracted with ``git archive``.

    python bench/bench_judge.py                              # 100k and 1M, 8 recipes each
    python bench/bench_judge.py --rows 100000 --recipes 20 --profile

The recipes are the first ``--recipes`` of the search's visiting order (coarsest first) that
this tree judges with record suppression. Before timing, each run masks and encodes every
searched column setting once, as the search does before its first recipe, so the time is the
judging alone: the recipe judged as it is, then with :class:`RecordSuppression` (its records,
its class risk and its linkage to the source). The data are ``bench_search.data(rows,
distinct=True)``: every record's ages and dose moved slightly, so fine settings leave about one
class per record, as in a real cohort.

The script prints each run's CPU and wall time per recipe and, with ``--profile``, where this
tree's time goes; it fails only if the two trees disagree on any figure of any recipe (records
removed, whether it meets the threshold, the judged basis, maximum and average risk, k, the
linkage figures).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from itertools import product
from pathlib import Path
from typing import Any

import harness
import numpy as np
import pandas as pd
from bench_search import ROLES, SPACE, data

from deid_core.recipe import Recipe
from deid_core.risk.context import ReleaseContext
from deid_core.search.search import _column_order, _Search
from deid_core.workspace import Workspace

OLD_COMMIT = "bde194a"
CONTEXT = ReleaseContext(min_cell_size=5)


def _prepared(rows: int) -> tuple[Workspace, _Search, list[tuple[int, ...]]]:
    """A fresh workspace on the data, a search run on it and the choices in visiting order,
    every column setting masked and encoded (as the search's first step does)."""
    workspace = Workspace(data(rows, distinct=True))
    run = _Search(workspace, Recipe(ROLES), SPACE, CONTEXT, "category", 20)
    order = [_column_order(workspace, SPACE, j, "category") for j in range(len(SPACE.columns))]
    choices = list(product(*(range(len(c.settings)) for c in SPACE.columns)))
    heights = [sum(int(order[j].height[i]) for j, i in enumerate(c)) for c in choices]
    return (
        workspace,
        run,
        [choices[r] for r in sorted(range(len(choices)), key=lambda r: -heights[r])],
    )


def _figures(recipe: Recipe, judged: Any, meets: bool, removed: int) -> dict[str, Any]:
    link = judged.source
    return {
        "suppressed": bool(recipe.data_steps),
        "meets": bool(meets),
        "removed": int(removed),
        "basis": judged.basis,
        "max_risk": float(judged.max_risk),
        "average_risk": float(judged.average_risk),
        "k": int(judged.classes.k),
        "n_classes": int(judged.classes.n_classes),
        "link": None
        if link is None
        else [link.max_risk, link.average_risk, link.certain, link.n_source_people],
    }


def select(rows: int, n: int) -> list[tuple[int, ...]]:
    """The first ``n`` choices in visiting order that this tree judges with suppression."""
    _, run, visit = _prepared(rows)
    chosen = []
    for choice in visit:
        recipe, *_ = run.judge(SPACE.recipe(Recipe(ROLES), choice))
        if recipe.data_steps:
            chosen.append(choice)
            if len(chosen) == n:
                break
    return chosen


def judge_all(rows: int, choices: list[tuple[int, ...]], profile: bool) -> dict[str, Any]:
    """Judge ``choices`` (after preparing, untimed): CPU and wall time, and the figures."""
    _, run, _ = _prepared(rows)
    profiler = cProfile.Profile() if profile else None
    figures, cpu, wall = [], [], []
    for choice in choices:
        recipe = SPACE.recipe(Recipe(ROLES), choice)
        start_cpu, start = time.process_time(), time.perf_counter()
        if profiler is not None:
            profiler.enable()
        judged_recipe, judged, meets, removed = run.judge(recipe)
        if profiler is not None:
            profiler.disable()
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start)
        figures.append(_figures(judged_recipe, judged, meets, removed))
    if profiler is not None:
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
    return {"cpu": cpu, "wall": wall, "figures": figures}


def in_subprocess(script: Path, rows: int, choices: list[tuple[int, ...]]) -> dict[str, Any]:
    command = [sys.executable, str(script), "--worker", str(rows), "--choices", json.dumps(choices)]
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": ""}
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(name: str, run: dict[str, Any]) -> None:
    n = len(run["cpu"])
    print(
        f"  {name:10s} {n} recipes: CPU {sum(run['cpu']):8.2f} s ({sum(run['cpu']) / n:6.3f} s "
        f"per recipe, slowest {max(run['cpu']):6.3f} s), wall {sum(run['wall']):8.2f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--recipes", type=int, default=8)
    parser.add_argument("--old", default=OLD_COMMIT, help="commit to compare with")
    parser.add_argument("--no-old", action="store_true", help="time this tree alone")
    parser.add_argument("--profile", action="store_true", help="where this tree's time goes")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--choices", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        choices = [tuple(c) for c in json.loads(args.choices)]
        print(json.dumps(judge_all(args.worker, choices, profile=False)))
        return 0
    print(harness.machine(np, pd))
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        old_script = None if args.no_old else harness.old_tree(args.old, Path(tmp), Path(__file__))
        if not args.no_old and old_script is None:
            print(f"commit {args.old} unavailable (git archive failed): this tree alone")
        for rows in args.rows:
            choices = select(rows, args.recipes)
            print(
                f"{rows:,} distinct records (load average {harness.load_average()}): "
                f"{len(choices)} record-suppressing recipes {choices}"
            )
            new = judge_all(rows, choices, args.profile)
            report("this tree", new)
            if old_script is None:
                continue
            old = in_subprocess(old_script, rows, choices)
            report(args.old, old)
            print(
                f"  ratio {args.old} / this tree: CPU {sum(old['cpu']) / sum(new['cpu']):.1f}x, "
                f"wall {sum(old['wall']) / sum(new['wall']):.1f}x"
            )
            differ = [
                (choice, a, b)
                for choice, a, b in zip(choices, new["figures"], old["figures"], strict=True)
                if a != b
            ]
            failed |= bool(differ)
            for choice, a, b in differ:
                print(f"  FAIL: recipe {choice}: this tree {a} != {args.old} {b}")
            if not differ:
                print(f"  this tree and {args.old} give the same figures for every recipe")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
