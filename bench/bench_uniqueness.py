#!/usr/bin/env python
"""Benchmark of record uniqueness over all combinations (the NAACCR RU program).

A script, not a test: it prints timings, memory and PASS/MISS against the issue's targets
("9 variables x 4.67 million records: all 511 combinations in at most 30 s on 2 cores, at
least 10x faster than a loop of per-combination pandas groupbys, at most 4 GB") and never
fails on them. It fails (assertion error) only if a count differs from the baseline, which is
a correctness bug.

Data: a seeded synthetic registry file with the RU paper's seven variables and their numbers
of values (34 registries, 4 races, 18 age groups, 78 sites, 2 sexes, 7 diagnosis years, 283
county poverty values) plus stage (4 values and missing) and marital status (6): skewed
(Zipf-like or bell-shaped) frequencies, and the poverty value depends on the registry (it is
county-based: each registry draws from its own window of values).

Measured in one process (``time.perf_counter``):

(a) ``record_uniqueness(df, keys)`` on all 511 combinations (encoding, counts and weights),
    with its peak memory (tracemalloc: numpy reports its buffers to it) and the process's
    peak resident set size (``ru_maxrss``: the data plus ours);
(b) baseline: per combination ``df.groupby(list(combo), dropna=False, sort=False)[c]
    .transform("size")``, then the uniques and records in classes of size <= 5. The full
    loop takes many minutes at 4.67 million rows, so by default it runs on a seeded sample
    of ``--sample-per-size`` combinations of each size and is extrapolated to all 511 (mean
    time per size times the number of combinations of that size); ``--full-baseline`` runs
    all 511. The counts of every combination timed are asserted equal to ours.

Run from the repository root::

    .venv/bin/python bench/bench_uniqueness.py                    # 4.67 M rows (a few min)
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
TARGET_GB = 4.0


# --------------------------------------------------------------------------- data
def _zipf(rng: np.random.Generator, levels: int, exponent: float) -> np.ndarray:
    """Zipf-like category probabilities, in a random order of the levels."""
    weights = 1.0 / np.arange(1, levels + 1) ** exponent
    return rng.permutation(weights / weights.sum())


def make_data(n_rows: int, seed: int) -> pd.DataFrame:
    """The synthetic 9-variable registry file (see the module docstring)."""
    rng = np.random.default_rng(seed)
    registry = rng.choice(34, n_rows, p=_zipf(rng, 34, 1.0))
    race = rng.choice(4, n_rows, p=[0.78, 0.12, 0.07, 0.03])
    ages = np.exp(-0.5 * ((np.arange(18) - 13.5) / 3.0) ** 2) + 0.01  # older more common
    age = rng.choice(18, n_rows, p=ages / ages.sum())
    site = rng.choice(78, n_rows, p=_zipf(rng, 78, 1.1))
    sex = rng.choice(2, n_rows, p=[0.52, 0.48])
    trend = np.linspace(1.0, 1.3, 7)
    year = 1995 + rng.choice(7, n_rows, p=trend / trend.sum())
    # county poverty (283 values, one decimal): each registry has its own window of values
    offset = rng.integers(0, 283, 34)
    width = rng.integers(5, 60, 34)
    within = (rng.random(n_rows) ** 2 * width[registry]).astype(np.int64)
    poverty = ((offset[registry] + within) % 283) / 10.0 + 2.0
    stage = rng.choice(4, n_rows, p=[0.4, 0.3, 0.18, 0.12]).astype(float)
    stage[rng.random(n_rows) < 0.05] = np.nan  # unknown stage: missing, its own category
    marital = rng.choice(6, n_rows, p=_zipf(rng, 6, 1.2))
    names = np.array([f"registry {i:02d}" for i in range(34)])
    return pd.DataFrame(
        {
            "registry": pd.Categorical.from_codes(registry, names),
            "race": pd.Categorical.from_codes(race, ["White", "Black", "Other", "Unknown"]),
            "age_group": age * 5,
            "site": site,
            "sex": pd.Categorical.from_codes(sex, ["Female", "Male"]),
            "year_dx": year,
            "poverty_pct": poverty,
            "stage": stage,
            "marital": marital,
        }
    )


def describe_data(df: pd.DataFrame) -> list[str]:
    """Levels per column and how skewed they are: the share of the most frequent level, and
    the effective number of levels exp(entropy) (equal to the levels when uniform)."""
    lines = []
    for column in df.columns:
        shares = df[column].value_counts(dropna=False, normalize=True).to_numpy()
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
    parser.add_argument("--full-baseline", action="store_true", help="baseline on all 511")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.sample_per_size < 1:
        parser.error("--rows and --sample-per-size must be at least 1")

    start = time.perf_counter()
    df = make_data(args.rows, args.seed)
    generate_s = time.perf_counter() - start
    keys = list(df.columns)
    n_combos = 2 ** len(keys) - 1
    print(
        f"Record-uniqueness benchmark: {args.rows:,} records x {len(keys)} key variables, "
        f"all {n_combos} combinations"
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
