#!/usr/bin/env python
"""Local suppression at biobank scale: time, peak memory and values suppressed (issue 30).

A script, not a test: it prints timings and never fails on them. It fails (assertion error)
only if a release misses k (a correctness bug).

**Data.** sdcMicro's ``testdata`` (``/work/shared/reference-data/sdcmicro/testdata.csv``, or
``--testdata``) bootstrapped to each size: whole records drawn with replacement for its seven
categorical keys (urbrur, roof, walls, water, electcon, relat, sex), and ``age`` drawn on its
own from its distribution, so that the eighth key makes new combinations as the file grows (a
plain bootstrap of whole records would only repeat the 4,580 records, with no record at risk
at a million). Seed 0; generated in memory, never written.

**Cases.** For each size and k (``LocalSuppression(k)`` on the eight keys, default importance),
in a fresh process so that its peak memory is the case's own: wall and CPU time of the step, peak
resident memory of the process (data included) and above the data, values suppressed,
records below k before. The *present* implementation (the quadratic search of commit a082fe8,
read from git) runs too at the sizes given by ``--old-rows`` (it refuses a million records);
the ratio is its time over the indexed search's. Every release is checked to reach k (counted
again from the released values, a suppressed value matching any value).

Targets (issue 30): 1,000,000 x 8 keys, k = 3 and 5, within 10 s and 2 GB; 5,000,000 within
60 s.

Run from the repository root (nice it on a shared machine)::

    nice .venv/bin/python bench/bench_local_suppression.py
    nice .venv/bin/python bench/bench_local_suppression.py --rows 100000 --k 3
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
from harness import ROOT, load_average, machine, verdict  # puts the repository on sys.path

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex", "age"]
TESTDATA = Path("/work/shared/reference-data/sdcmicro/testdata.csv")
#: The commit whose search (each record at risk against every combination) is "present".
OLD_COMMIT = "a082fe8"


def bootstrapped(path: Path, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` records: seven keys of whole testdata records, age drawn on its own."""
    base = pd.read_csv(path, usecols=KEYS)[KEYS]
    rng = np.random.default_rng(seed)
    frame = base.iloc[rng.integers(0, len(base), n)].reset_index(drop=True)
    frame["age"] = base["age"].to_numpy()[rng.integers(0, len(base), n)]
    return frame


def old_step_class() -> type:
    """LocalSuppression as of ``OLD_COMMIT`` (source from git, loaded in memory)."""
    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:deid_core/masking/suppression.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("suppression_as_of_a082fe8")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, module.__name__, "exec"), module.__dict__)
    return module.LocalSuppression


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(path: Path, n: int, k: int, which: str) -> dict[str, object]:
    """One case in this process: the figures as a dict."""
    from deid_core.errors import RecipeError
    from deid_core.masking import LocalSuppression
    from deid_core.masking.suppression import DistinctKeys

    frame = bootstrapped(path, n)
    step_class = LocalSuppression if which == "new" else old_step_class()
    before = DistinctKeys.of(frame, KEYS, {})
    below = int((before.compatible_counts()[before.inverse] < k).sum())
    distinct = len(before.weight)
    del before
    data_mb = peak_mb()
    start, cpu = time.perf_counter(), time.process_time()
    try:
        outcome = step_class(k=k).apply(frame, KEYS)
    except RecipeError as error:
        return {"refused": str(error), "seconds": time.perf_counter() - start}
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = peak_mb()
    released = frame.copy()
    for column, values in outcome.values.items():
        released[column] = values
    after = DistinctKeys.of(released, KEYS, {})
    reached = int(after.compatible_counts().min())
    assert reached >= k, f"k = {k} missed: a record is compatible with {reached}"
    return {
        "seconds": seconds,
        "cpu": cpu,
        "peak_mb": peak,
        "above_data_mb": peak - data_mb,
        "suppressed": int(outcome.facts["total_suppressed"]),
        "below_k": below,
        "distinct": distinct,
    }


def run_case(path: Path, n: int, k: int, which: str) -> dict[str, object]:
    command = [sys.executable, __file__, "--child", which, str(n), str(k), "--testdata", str(path)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    parser.add_argument("--k", type=int, nargs="+", default=[3, 5])
    parser.add_argument("--old-rows", type=int, nargs="*", default=[100_000])
    parser.add_argument("--testdata", type=Path, default=TESTDATA)
    parser.add_argument("--child", nargs=3, metavar=("WHICH", "N", "K"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        which, n, k = args.child
        print(json.dumps(child(args.testdata, int(n), int(k), which)))
        return
    print(machine(np, pd))
    print(
        f"{'records':>10} {'k':>2} {'distinct':>8} {'below k':>8} {'time s':>7} {'cpu s':>6} "
        f"{'peak MB':>8} "
        f"{'+data MB':>8} {'suppressed':>10} {'old s':>7} {'old supp.':>9} {'ratio':>6} target"
    )
    for n in args.rows:
        for k in args.k:
            new = run_case(args.testdata, n, k, "new")
            old_text = f"{'':>7} {'':>9} {'':>6}"
            if n in args.old_rows:
                old = run_case(args.testdata, n, k, "old")
                if "refused" in old:
                    old_text = f"{'refused after ' + format(old['seconds'], '.0f') + ' s':>24}"
                else:
                    ratio = float(old["seconds"]) / float(new["seconds"])
                    old_text = f"{old['seconds']:7.1f} {old['suppressed']:9,} {ratio:6.1f}"
            target = ""
            if n == 1_000_000:
                target = verdict(float(new["seconds"]) <= 10 and float(new["peak_mb"]) <= 2048)
            elif n == 5_000_000:
                target = verdict(float(new["seconds"]) <= 60)
            print(
                f"{n:>10,} {k:>2} {new['distinct']:>8,} {new['below_k']:>8,} "
                f"{new['seconds']:7.1f} {new['cpu']:6.1f} {new['peak_mb']:8.0f} "
                f"{new['above_data_mb']:8.0f} "
                f"{new['suppressed']:>10,} {old_text} {target} (load {load_average()})",
                flush=True,
            )
    print(f"every release reaches its k (checked on the released values); load {load_average()}")


if __name__ == "__main__":
    main()
