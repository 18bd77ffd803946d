#!/usr/bin/env python
"""Benchmark of record uniqueness over all combinations (the NAACCR RU program).

A script, not a test: it prints timings, memory and PASS/MISS against the issue's targets
("9 variables x 4.67 million records: all 511 combinations in at most 30 s on 2 cores, at
least 10x faster than a loop of per-combination pandas groupbys, at most 2 GB, whatever the
coding") and never
fails on them. It fails (assertion error) only if a count differs from the baseline, which is
a correctness bug.

Data: a seeded synthetic registry file with the RU paper's variables and their numbers of
values (34 registries, 4 races, 18 age groups, 78 sites, 2 sexes, 7 diagnosis years) with the
county itself (3,000 counties, each within one registry) in place of the paper's county-based
poverty measure, plus stage (4 values and missing) and marital status (6); ``--keys 12`` adds
grade (4 values and missing), laterality (3) and insurance (5). Frequencies are skewed
(Zipf-like, Pareto or bell-shaped). ``--coding`` stores the same values either as registries
do ("sparse", the default: ages 0, 5, ..., 85, FIPS-like county numbers, ICD-O-like site
numbers, categoricals with unused levels) or as codes 0..m-1 ("dense"): the counts are the
same, and so should the time be.

Measured in one process (``time.perf_counter``):

(a) ``record_uniqueness(df, keys)`` on all 511 (or 4,095) combinations (encoding, counts and
    weights), with its peak memory (tracemalloc: numpy reports its buffers to it) and the process's
    peak resident set size (``ru_maxrss``: the data plus ours);
(b) baseline: per combination ``df.groupby(list(combo), dropna=False, sort=False)[c]
    .transform("size")``, then the uniques and records in classes of size <= 5. The full
    loop takes many minutes at 4.67 million rows, so by default it runs on a seeded sample
    of ``--sample-per-size`` combinations of each size and is extrapolated to all 511 (mean
    time per size times the number of combinations of that size); ``--full-baseline`` runs
    all of them. The counts of every combination timed are asserted equal to ours.

Run from the repository root::

    .venv/bin/python bench/bench_uniqueness.py                    # 4.67 M rows (a few min)
    .venv/bin/python bench/bench_uniqueness.py --coding dense     # the same values, dense codes
    .venv/bin/python bench/bench_uniqueness.py --rows 10000000 --keys 12 --sample-per-size 1
    .venv/bin/python bench/bench_uniqueness.py --rows 20000       # quick (CI)
    .venv/bin/python bench/bench_uniqueness.py --full-baseline    # all 511 baseline groupbys
"""

from __future__ import annotations

import argparse
import itertools
import math
import resource
import time
import tracemalloc
from collections.abc import Sequence

import numpy as np
import pandas as pd
from harness import load_average, machine, verdict  # puts the repository on sys.path

from deid_core.risk.uniqueness import DEFAULT_SMALL_CLASS, record_uniqueness

N_ROWS = 4_670_000
TARGET_SECONDS = 30.0
TARGET_SPEEDUP = 10.0
TARGET_GB = 2.0


# --------------------------------------------------------------------------- data
def _zipf(rng: np.random.Generator, levels: int, exponent: float) -> np.ndarray:
    """Zipf-like category probabilities, in a random order of the levels."""
    weights = 1.0 / np.arange(1, levels + 1) ** exponent
    return rng.permutation(weights / weights.sum())


CODINGS = ("sparse", "dense")
EXTRA_KEYS = ("grade", "laterality", "insurance")


def make_data(n_rows: int, seed: int, coding: str = "sparse", n_keys: int = 9) -> pd.DataFrame:
    """The synthetic registry file (see the module docstring): 9 key variables, or 12 with
    grade, laterality and insurance. ``coding`` stores the same values densely (codes 0..m-1)
    or as registries store them ("sparse": ages 0, 5, ..., 85, FIPS-like county numbers,
    ICD-O-like site numbers, categoricals with unused levels)."""
    if coding not in CODINGS:
        raise ValueError(f"coding must be one of {CODINGS}")
    rng = np.random.default_rng(seed)
    registry = rng.choice(34, n_rows, p=_zipf(rng, 34, 1.0))
    race = rng.choice(4, n_rows, p=[0.78, 0.12, 0.07, 0.03])
    ages = np.exp(-0.5 * ((np.arange(18) - 13.5) / 3.0) ** 2) + 0.01  # older more common
    age = rng.choice(18, n_rows, p=ages / ages.sum())
    site = rng.choice(78, n_rows, p=_zipf(rng, 78, 1.1))
    sex = rng.choice(2, n_rows, p=[0.52, 0.48])
    trend = np.linspace(1.0, 1.3, 7)
    year = 1995 + rng.choice(7, n_rows, p=trend / trend.sum())
    # 3,000 counties, each in one registry (registries hold 20 to 150 of them), populous
    # counties more common within each registry
    per_registry = rng.multinomial(3000 - 34 * 20, np.full(34, 1 / 34)) + 20
    first = np.concatenate([[0], np.cumsum(per_registry)[:-1]])
    rank = (rng.pareto(1.2, n_rows) * per_registry[registry] / 20).astype(np.int64)
    county = first[registry] + np.minimum(rank, per_registry[registry] - 1)
    stage = rng.choice(4, n_rows, p=[0.4, 0.3, 0.18, 0.12]).astype(float)
    stage[rng.random(n_rows) < 0.05] = np.nan  # unknown stage: missing, its own category
    marital = rng.choice(6, n_rows, p=_zipf(rng, 6, 1.2))
    names = np.array([f"registry {i:02d}" for i in range(36)])  # 2 unused
    if coding == "dense":
        columns = {
            "registry": registry,
            "race": race,
            "age_group": age,
            "site": site,
            "sex": sex,
            "year_dx": year - 1995,
            "county": county,
        }
    else:
        state = rng.permutation(np.arange(1, 57))[:34]  # FIPS state numbers
        columns = {
            "registry": pd.Categorical.from_codes(registry, names),
            "race": pd.Categorical.from_codes(race, ["White", "Black", "Other", "Unknown"]),
            "age_group": age * 5,
            "site": 800 + 7 * site,
            "sex": pd.Categorical.from_codes(sex, ["Female", "Male", "Other"]),
            "year_dx": year,
            "county": state[registry] * 1000 + 2 * (county - first[registry]) + 1,
        }
    columns["stage"] = stage
    columns["marital"] = marital
    if n_keys == 12:
        grade = rng.choice(4, n_rows, p=[0.2, 0.4, 0.3, 0.1]).astype(float)
        grade[rng.random(n_rows) < 0.08] = np.nan
        columns["grade"] = grade
        columns["laterality"] = rng.choice(3, n_rows, p=[0.45, 0.45, 0.1])
        columns["insurance"] = rng.choice(5, n_rows, p=_zipf(rng, 5, 1.0))
    elif n_keys != 9:
        raise ValueError("n_keys must be 9 or 12")
    return pd.DataFrame(columns)


def describe_data(df: pd.DataFrame) -> list[str]:
    """Levels per column and how skewed they are: the share of the most frequent level, and
    the effective number of levels exp(entropy) (equal to the levels when uniform)."""
    lines = []
    for column in df.columns:
        shares = df[column].value_counts(dropna=False, normalize=True).to_numpy()
        shares = shares[shares > 0]  # a categorical's unused levels
        effective = math.exp(-float(np.sum(shares * np.log(shares))))
        lines.append(
            f"  {column:<12s} {len(shares):>4d} levels ({int(df[column].isna().sum()):,} "
            f"missing), top level {100 * shares[0]:5.1f}%, effective levels {effective:6.1f}"
        )
    return lines


# --------------------------------------------------------------------------- baseline
def baseline_counts(df: pd.DataFrame, combo: Sequence[str]) -> tuple[int, int]:
    """(uniques, records in classes <= 5) of one combination by a pandas groupby."""
    sizes = (
        df.groupby(list(combo), dropna=False, sort=False, observed=True)[combo[0]]
        .transform("size")
        .to_numpy()
    )
    return int((sizes == 1).sum()), int((sizes <= DEFAULT_SMALL_CLASS).sum())


def sample_combinations(
    keys: Sequence[str], per_size: int, seed: int
) -> dict[int, list[tuple[str, ...]]]:
    """A seeded sample of ``per_size`` combinations of each size (all when fewer)."""
    rng = np.random.default_rng(seed)
    chosen: dict[int, list[tuple[str, ...]]] = {}
    for size in range(1, len(keys) + 1):
        combos = list(itertools.combinations(keys, size))
        if len(combos) <= per_size:
            chosen[size] = combos
        else:
            picks = rng.choice(len(combos), per_size, replace=False)
            chosen[size] = [combos[i] for i in sorted(picks)]
    return chosen


def peak_rss_gb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


# --------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=N_ROWS, help=f"records (default {N_ROWS})")
    parser.add_argument("--seed", type=int, default=20080415, help="data seed")
    parser.add_argument(
        "--sample-per-size",
        type=int,
        default=2,
        help="baseline combinations timed per size, extrapolated to all (default 2)",
    )
    parser.add_argument("--full-baseline", action="store_true", help="baseline on all")
    parser.add_argument(
        "--coding",
        choices=CODINGS,
        default="sparse",
        help="how the values are stored: sparse (ages 0, 5, ..., 85, FIPS-like counties; "
        "default) or dense (codes 0..m-1); the counts are the same",
    )
    parser.add_argument("--keys", type=int, choices=(9, 12), default=9, help="key variables")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.sample_per_size < 1:
        parser.error("--rows and --sample-per-size must be at least 1")

    start = time.perf_counter()
    df = make_data(args.rows, args.seed, args.coding, args.keys)
    generate_s = time.perf_counter() - start
    keys = list(df.columns)
    n_combos = 2 ** len(keys) - 1
    print(
        f"Record-uniqueness benchmark: {args.rows:,} records x {len(keys)} key variables, "
        f"all {n_combos} combinations, {args.coding} coding"
    )
    print(f"{machine(np, pd)}; data generated in {generate_s:.1f} s (seed {args.seed})")
    print("\n".join(describe_data(df)))
    rss_data = peak_rss_gb()

    # (a) ours, with its peak memory
    calls: list[tuple[int, int]] = []
    tracemalloc.start()
    start = time.perf_counter()
    result = record_uniqueness(df, keys, progress=lambda d, t: calls.append((d, t)))
    ours_s = time.perf_counter() - start
    traced_gb = tracemalloc.get_traced_memory()[1] / 1024**3
    tracemalloc.stop()
    rss_ours = peak_rss_gb()
    assert calls and calls[-1] == (n_combos, n_combos), "progress did not reach the total"

    # (b) the baseline, sampled and extrapolated (or all of it)
    if args.full_baseline:
        sample = {
            size: list(itertools.combinations(keys, size)) for size in range(1, len(keys) + 1)
        }
    else:
        sample = sample_combinations(keys, args.sample_per_size, args.seed)
    timed = 0
    baseline_s = 0.0
    estimate_s = 0.0
    for size, combos in sample.items():
        spent = 0.0
        for combo in combos:
            start = time.perf_counter()
            expected = baseline_counts(df, combo)
            spent += time.perf_counter() - start
            got = result.combination(combo)
            assert (got.uniques, got.small) == expected, f"{combo}: ours differs from groupby"
            timed += 1
        baseline_s += spent
        estimate_s += spent / len(combos) * math.comb(len(keys), size)
    ratio = estimate_s / ours_s

    full = result.full
    print()
    print(
        f"full set: {full.uniques:,} uniques ({full.uniques_pct:.2f}%), {full.small:,} records in "
        f"classes <= {result.small_class} ({full.small_pct:.2f}%); weights from "
        f"{result.n_fit} combinations; collapse first: {result.worst_variable}"
    )
    print()
    print(f"(a) record_uniqueness, all {n_combos} combinations       {ours_s:9.2f} s")
    print(f"    progress callbacks                                 {len(calls):9d}")
    print(f"    peak memory traced during the call (tracemalloc)   {traced_gb:9.2f} GB")
    print(
        f"    peak RSS of the process: after the data {rss_data:.2f} GB, "
        f"after (a) {rss_ours:.2f} GB"
    )
    if args.full_baseline:
        print(f"(b) baseline groupby loop, all {timed} combinations        {baseline_s:9.2f} s")
    else:
        print(
            f"(b) baseline groupby loop, EXTRAPOLATED to {n_combos} from {timed} timed "
            f"combinations ({args.sample_per_size} per size, {baseline_s:.1f} s): "
            f"{estimate_s:.1f} s"
        )
    print(f"    speed-up (b) / (a)                                 {ratio:9.1f}x")
    print(f"counts equal to the groupby baseline for all {timed} combinations timed")
    print()
    print("targets (printed only, never enforced):")
    print(f"  {n_combos} combinations in at most {TARGET_SECONDS:g} s: {ours_s:.1f} s "
          f"{verdict(ours_s <= TARGET_SECONDS)}")  # fmt: skip
    print(f"  at least {TARGET_SPEEDUP:g}x faster than the groupby loop: {ratio:.1f}x "
          f"{verdict(ratio >= TARGET_SPEEDUP)}")  # fmt: skip
    print(f"  at most {TARGET_GB:g} GB: process peak RSS {rss_ours:.2f} GB "
          f"{verdict(rss_ours <= TARGET_GB)}")  # fmt: skip
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
