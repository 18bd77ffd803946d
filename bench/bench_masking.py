#!/usr/bin/env python
"""Benchmark of exact rounding, truncation and interval grouping (``deid_core.masking``).

A script, not a test: it prints timings and never fails on them. It only fails (assertion
error) if a sampled result differs from the decimal arithmetic a person would do by hand
(Python's ``decimal``), which is a correctness bug.

What it measures, in one process, as the median of ``--repeat`` runs (``time.perf_counter``,
after one untimed warm-up), on ``--rows`` values (default 1,000,000) of two kinds:

- doses: log-normal (median 1, wide spread), written with 4 decimals;
- amounts: whole cents with 7 significant digits, so every value is on the grid of 0.01
  (the issue's example: the old truncation lowered about 6% of them by a cent).

Each masking is timed against the plain numpy formula a programmer would write (the
baseline): ``trunc(x / b) * b``, ``sign(x) floor(|x| / b + 1/2) b``, the same with ``b =
10^(floor(log10 |x|) - digits + 1)``, ``floor((x - o) / w)`` for intervals, and a pandas
groupby mean. The script prints the ratio and how many of the baseline's values differ from
the exact result.

Run from the repository root::

    .venv/bin/python bench/bench_masking.py                 # 1,000,000 values (about 30 s)
    .venv/bin/python bench/bench_masking.py --rows 20000    # quick (CI)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from decimal import ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal

import numpy as np
import pandas as pd
from harness import load_average, machine, timed  # puts the repository on sys.path

from deid_core.masking import IntervalGroup, absolute_round, relative_round, truncate

EXACT = Context(prec=60)
BASE, DIGITS, WIDTH = 0.01, 3, 0.5


def median_ms(run: Callable[[], object], repeat: int) -> tuple[float, object]:
    """:func:`harness.timed` of ``run()`` in ms (after one warm-up), and its last result."""
    seconds, results = timed(lambda _i: run(), repeat)
    return 1000.0 * seconds, results[-1]


# ---------------------------------------------------------------------------- baselines
def numpy_truncate(x: np.ndarray) -> np.ndarray:
    return np.trunc(x / BASE) * BASE


def numpy_round(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) / BASE + 0.5) * BASE


def numpy_relative(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 10.0 ** (np.floor(np.log10(np.abs(x))) - DIGITS + 1)
        return np.where(x == 0, 0.0, np.sign(x) * np.floor(np.abs(x) / scale + 0.5) * scale)


def numpy_midpoint(x: np.ndarray) -> np.ndarray:
    return (np.floor(x / WIDTH) + 0.5) * WIDTH


def numpy_labels(x: np.ndarray) -> np.ndarray:
    lower = np.floor(x / WIDTH) * WIDTH
    bounds, codes = np.unique(lower, return_inverse=True)
    return np.array([f"[{b:g}, {b + WIDTH:g})" for b in bounds], dtype=object)[codes]


def numpy_mean(x: np.ndarray) -> np.ndarray:
    return pd.Series(x).groupby(np.floor(x / WIDTH)).transform("mean").to_numpy()


# ---------------------------------------------------------------------------- by hand
def by_hand(value: float, method: str) -> object:
    """The exact result for one value, in decimal arithmetic on its written decimal."""
    decimal, base, width = Decimal(repr(value)), Decimal(repr(BASE)), Decimal(repr(WIDTH))
    if method == "truncate":
        return float(EXACT.divide(decimal, base).to_integral_value(ROUND_DOWN) * base)
    if method == "absolute_round":
        return float(EXACT.divide(decimal, base).to_integral_value(ROUND_HALF_UP) * base)
    if method == "relative_round":
        return float(Context(prec=DIGITS, rounding=ROUND_HALF_UP).plus(decimal))
    n = EXACT.divide(decimal, width).to_integral_value(ROUND_FLOOR)
    if method == "midpoint":
        return float((n + Decimal("0.5")) * width)
    return f"[{n * width:f}, {(n + 1) * width:f})"


def label_bounds(label: str) -> tuple[Decimal, Decimal]:
    lower, upper = label[1:-1].split(", ")
    return Decimal(lower), Decimal(upper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sample", type=int, default=20_000, help="values checked by hand")
    parser.add_argument("--seed", type=int, default=20240613)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    data = {
        "doses (log-normal, 4 decimals)": np.round(rng.lognormal(0.0, 1.5, args.rows), 4),
        "amounts (whole cents, 7 digits)": rng.integers(10**6, 10**7, args.rows) / 100,
    }
    methods: dict[str, tuple[Callable, Callable]] = {
        "truncate": (lambda x: truncate(x, BASE), numpy_truncate),
        "absolute_round": (lambda x: absolute_round(x, BASE), numpy_round),
        "relative_round": (lambda x: relative_round(x, DIGITS), numpy_relative),
        "midpoint": (
            lambda x: IntervalGroup("x", width=WIDTH).apply(pd.Series(x)).to_numpy(),
            numpy_midpoint,
        ),
        "label": (
            lambda x: IntervalGroup("x", width=WIDTH, release="label").apply(pd.Series(x)),
            numpy_labels,
        ),
        "mean": (
            lambda x: IntervalGroup("x", width=WIDTH, release="mean").apply(pd.Series(x)),
            numpy_mean,
        ),
    }
    titles = {
        "truncate": f"truncate to {BASE}",
        "absolute_round": f"round to {BASE}",
        "relative_round": f"round to {DIGITS} significant digits",
        "midpoint": f"intervals of {WIDTH}, midpoints",
        "label": f"intervals of {WIDTH}, labels",
        "mean": f"intervals of {WIDTH}, means",
    }
    print(
        f"Exact masking benchmark: {args.rows:,} values, median of {args.repeat} run(s)\n"
        f"{machine(np, pd)}\n"
    )
    header = f"{'exact':>8s} {'numpy':>8s} {'ratio':>7s} {'numpy differs':>14s}"
    print(f"{'timing (median ms)':44s} {header}")
    checks = mismatches = 0
    sample = rng.choice(args.rows, size=min(args.sample, args.rows), replace=False)
    for name, values in data.items():
        print(name)
        for method, (exact, baseline) in methods.items():
            ours_ms, ours = median_ms(lambda f=exact, v=values: f(v), args.repeat)
            numpy_ms, theirs = median_ms(lambda f=baseline, v=values: f(v), args.repeat)
            ours, theirs = np.asarray(ours), np.asarray(theirs)
            differs = int((ours != theirs).sum())
            print(
                f"  {titles[method]:42s} {ours_ms:8.1f} {numpy_ms:8.1f} "
                f"{ours_ms / numpy_ms:6.1f}x {differs:14,d}"
            )
            if method == "mean":
                continue  # a compensated float mean: the unit tests bound its error
            for i in sample:
                expected = by_hand(float(values[i]), method)
                if method == "label":
                    good = label_bounds(ours[i]) == label_bounds(expected)
                else:
                    good = ours[i] == expected
                checks += 1
                mismatches += not good
    if "amounts (whole cents, 7 digits)" in data:
        cents = data["amounts (whole cents, 7 digits)"]
        print(
            "\non the grid of 0.01, values moved: "
            f"exact truncation {int((truncate(cents, BASE) != cents).sum()):,}, "
            f"numpy truncation {int((numpy_truncate(cents) != cents).sum()):,} "
            f"of {cents.size:,}"
        )
    print(f"load average at the end: {load_average()}")
    assert mismatches == 0, f"{mismatches} of {checks} sampled results differ from by hand"
    print(f"correctness: every sampled result equals the decimal reference ({checks:,} checks)")


if __name__ == "__main__":
    main()
