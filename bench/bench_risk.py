#!/usr/bin/env python
"""Benchmark of the equivalence-class risk on 1,000,000 records x 5 quasi-identifiers.

A script, not a test: it prints timings and never fails on them. It only fails (assertion
error) if the figures of the implementations differ, which is a correctness bug.

What it measures, in one process, as the median of ``--repeat`` runs (``time.perf_counter``):

(a) baselines, each giving the same figures:
    (a1) plain pandas, ``groupby(qis, dropna=False)`` with the per-record class size from
         ``transform("size")``;
    (a2) DuckDB (embedded, on the same frame, as many threads as CPUs): ``GROUP BY`` the
         quasi-identifiers, then the figures from the class counts in the same query (figures
         only: no per-record class sizes);
    (a3) numpy: ``pd.factorize`` of each column, one mixed-radix key, ``np.unique(key,
         return_inverse=True, return_counts=True)``;
(b) ``deid_core.risk.risk_summary(df, qis)`` cold, on a fresh copy of the data each run (new
    text arrays, so every column is encoded from scratch);
(b') the same on the same data again: the text columns' dictionary codes are kept with the
    data (pyarrow's immutable text arrays), the rest is encoded and counted again;
(c) the dashboard's warm path: a ``Workspace`` whose caches hold every column, then
    ``ws.risk(recipe)`` after ONE quasi-identifier's masking changed (re-mask and re-encode
    that column, recombine the others from cached codes). Each run uses a parameter value not
    seen before, so no cache can serve it:
    (c1) the interval width of age grouping (1.0, 1.5, 2.0, ...),
    (c2) the relative rounding of the dose (3 -> 2, 4, 1, 5 ... significant digits);
(d) ``ws.risk(recipe)`` when no masking changed: pure recombination of cached codes.

(a) and (b) run on the original data and on the data masked by the base recipe. Every summary
of (a2), (a3), (b), (c) and (d) is checked against (a1) on the same data (all figures, and
the per-record class sizes where the method gives them, must be identical).

Run from the repository root::

    .venv/bin/python bench/bench_risk.py                          # 1,000,000 rows, 5 runs
    .venv/bin/python bench/bench_risk.py --rows 20000 --repeat 2  # quick (CI)
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from harness import load_average, machine, timed, verdict  # puts the repository on sys.path

from deid_core.masking import AbsoluteRound, IntervalGroup, MaskingStep, RelativeRound
from deid_core.recipe import Recipe, Roles
from deid_core.risk import (
    K_LEVELS,
    SMALL_CLASS_SIZE,
    RiskSummary,
    class_sizes_from_key,
    combine_codes,
    encode_column,
    risk_summary,
    summarise_class_sizes,
)
from deid_core.workspace import Workspace

QIS = ("sex", "age", "region", "year_dx", "dose")
TARGET_SPEEDUP = 2.0  # "at least 2x faster than DuckDB's GROUP BY and pandas' groupby"
TARGET_RECOMPUTE_MS = 150.0  # "recompute within 150 ms after one QI's masking changes"
BASE_AGE_WIDTH = 5.0
BASE_DOSE_DIGITS = 3

REGIONS = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut",
    "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa",
    "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan",
    "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire",
    "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio",
    "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota",
    "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington", "West Virginia",
    "Wisconsin", "Wyoming",
)  # fmt: skip


# --------------------------------------------------------------------------- data
def make_data(n_rows: int, seed: int) -> pd.DataFrame:
    """Seeded synthetic registry extract with mixed dtypes, as a CSV reader would give them.

    sex: str, 2 levels; age: int64 whole years 0-100; region: str, 50 levels with skewed
    frequencies and 0.3% missing; year_dx: int64, 30 levels (1990-2019); dose: float64,
    log-normal (skewed, many near zero), 3 decimals, 0.5% missing.
    """
    rng = np.random.default_rng(seed)
    sex = np.where(rng.random(n_rows) < 0.51, "F", "M").astype(object)
    adult = np.rint(rng.normal(58.0, 17.0, n_rows))
    child = rng.integers(0, 18, n_rows)
    age = np.clip(np.where(rng.random(n_rows) < 0.04, child, adult), 0, 100).astype(np.int64)
    weights = 1.0 / np.arange(1, len(REGIONS) + 1) ** 0.8
    region = np.array(REGIONS, dtype=object)[
        rng.choice(len(REGIONS), n_rows, p=weights / weights.sum())
    ]
    region[rng.random(n_rows) < 0.003] = None
    trend = np.linspace(1.0, 2.0, 30)  # more diagnoses in later years
    year_dx = (1990 + rng.choice(30, n_rows, p=trend / trend.sum())).astype(np.int64)
    dose = np.round(rng.lognormal(np.log(0.08), 1.4, n_rows), 3)
    dose[rng.random(n_rows) < 0.005] = np.nan
    return pd.DataFrame(
        {
            "sex": pd.Series(sex, dtype="str"),
            "age": age,
            "region": pd.Series(region, dtype="str"),
            "year_dx": year_dx,
            "dose": dose,
        }
    )


def describe_data(df: pd.DataFrame) -> str:
    parts = []
    for column in df.columns:
        s = df[column]
        parts.append(
            f"{column} ({s.dtype}, {s.nunique(dropna=False)} levels, {int(s.isna().sum())} missing)"
        )
    return ", ".join(parts)


# --------------------------------------------------------------------------- recipes
def base_recipe() -> Recipe:
    return Recipe(
        roles=Roles(quasi_identifiers=QIS),
        steps=(
            IntervalGroup("age", width=BASE_AGE_WIDTH, release="midpoint"),
            RelativeRound("dose", digits=BASE_DOSE_DIGITS),
        ),
    )


def age_steps(count: int) -> list[MaskingStep]:
    """Age grouping widths 1.0, 1.5, 2.0, ... never equal to the base recipe's."""
    widths = [1.0 + 0.5 * i for i in range(count + 1)]
    widths = [w for w in widths if w != BASE_AGE_WIDTH][:count]
    return [IntervalGroup("age", width=w, release="midpoint") for w in widths]


def dose_steps(count: int) -> list[MaskingStep]:
    """Relative rounding of the dose to 2, 4, 1, 5, 6 ... 15 significant digits (never the base
    recipe's 3), then absolute rounding to 0.002, 0.003 ... when the digits run out."""
    digits = [2, 4, 1, *range(5, 16)]
    steps: list[MaskingStep] = [RelativeRound("dose", digits=d) for d in digits[:count]]
    k = 2
    while len(steps) < count:
        steps.append(AbsoluteRound("dose", base=round(0.001 * k, 6)))
        k += 1
    return steps


# --------------------------------------------------------------------------- baseline
def baseline_summary(df: pd.DataFrame, qis: Sequence[str]) -> dict[str, Any]:
    """The risk summary in plain pandas: one groupby, per-record class size by transform."""
    grouped = df.groupby(list(qis), dropna=False, sort=False)
    sizes = grouped[qis[0]].transform("size").to_numpy(dtype=np.int64)
    return figures_from_sizes(sizes, grouped.ngroups)


def figures_from_counts(
    n: int, n_classes: int, k: int, uniques: int, small: int, violations: Sequence[int]
) -> dict[str, Any]:
    """The summary's figures from the counts a baseline computed (its own way)."""
    max_risk, average_risk = 1.0 / k, n_classes / n
    return {
        "n_records": n,
        "n_classes": n_classes,
        "k": k,
        "uniques": uniques,
        "records_in_small_classes": small,
        "max_risk": max_risk,
        "average_risk": average_risk,
        "strict_average_risk": average_risk if k >= 3 else max_risk,
        "k_violations": dict(zip(K_LEVELS, violations, strict=True)),
    }


def figures_from_sizes(sizes: np.ndarray, n_classes: int) -> dict[str, Any]:
    """The figures and per-record class sizes from the per-record class sizes."""
    out = figures_from_counts(
        len(sizes),
        n_classes,
        int(sizes.min()),
        int((sizes == 1).sum()),
        int((sizes <= SMALL_CLASS_SIZE).sum()),
        [int((sizes < level).sum()) for level in K_LEVELS],
    )
    out["class_size"] = sizes
    return out


def duckdb_summary(
    connection: duckdb.DuckDBPyConnection, table: str, qis: Sequence[str]
) -> dict[str, Any]:
    """The risk figures in DuckDB: class counts by ``GROUP BY`` (NULLs form one group, as
    missing values do in (a1)), then every figure from the counts in the same query."""
    columns = ", ".join(f'"{c}"' for c in qis)
    levels = ", ".join(
        f"SUM(CASE WHEN f < {level} THEN f ELSE 0 END)::BIGINT" for level in K_LEVELS
    )
    row = connection.execute(
        f"WITH classes AS (SELECT COUNT(*) AS f FROM {table} GROUP BY {columns}) "
        "SELECT SUM(f)::BIGINT, COUNT(*), MIN(f), "
        "SUM(CASE WHEN f = 1 THEN 1 ELSE 0 END)::BIGINT, "
        f"SUM(CASE WHEN f <= {SMALL_CLASS_SIZE} THEN f ELSE 0 END)::BIGINT, {levels} "
        "FROM classes"
    ).fetchall()[0]
    n, n_classes, k, uniques, small, *violations = row
    return figures_from_counts(n, n_classes, k, uniques, small, violations)


def factorize_summary(df: pd.DataFrame, qis: Sequence[str]) -> dict[str, Any]:
    """The risk figures in numpy: ``pd.factorize`` each column, one mixed-radix key (the
    product of the levels fits an int64 here), ``np.unique`` with inverse and counts."""
    key = np.zeros(len(df), dtype=np.int64)
    for column in qis:
        codes, uniques = pd.factorize(df[column], use_na_sentinel=False)
        key = key * len(uniques) + codes
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return figures_from_sizes(counts[inverse], len(counts))


def fresh_copy(df: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text columns are new pyarrow arrays (a deep copy shares the immutable
    ones, and with them the text codes kept by ``encode_column``)."""
    out = df.copy()
    for column in out.columns:
        if isinstance(out[column].array, pd.arrays.ArrowStringArray):
            out[column] = out[column].astype(object).astype("str")
    return out


def check_figures(expected: dict[str, Any], got: dict[str, Any], what: str) -> None:
    for name, value in got.items():
        if name == "class_size":
            assert np.array_equal(value, expected[name]), f"{what}: per-record class sizes"
        else:
            assert value == expected[name], f"{what}: {name} {value!r} != (a1) {expected[name]!r}"


def figures(summary: RiskSummary) -> dict[str, Any]:
    return {
        "n_records": summary.n_records,
        "n_classes": summary.n_classes,
        "k": summary.k,
        "uniques": summary.uniques,
        "records_in_small_classes": summary.records_in_small_classes,
        "max_risk": summary.max_risk,
        "average_risk": summary.average_risk,
        "strict_average_risk": summary.strict_average_risk,
        "k_violations": dict(summary.k_violations),
        "class_size": summary.class_size,
    }


def check_same(expected: dict[str, Any], summary: RiskSummary, what: str) -> None:
    got = figures(summary)
    for name, value in expected.items():
        if name == "class_size":
            assert np.array_equal(np.asarray(got[name]), value), f"{what}: per-record class sizes"
        else:
            assert got[name] == value, f"{what}: {name} {got[name]!r} != baseline {value!r}"


# --------------------------------------------------------------------------- timing
def timed_ms(
    run: Callable[[int], Any], repeat: int, warmup: int | None = None
) -> tuple[float, list[Any]]:
    """:func:`harness.timed` in milliseconds, without a warm-up unless one is given."""
    seconds, results = timed(run, repeat, warmup)
    return 1000.0 * seconds, results


def stage_breakdown(df: pd.DataFrame, qis: Sequence[str], repeat: int) -> list[tuple[str, float]]:
    """Median ms of each stage of the cold path (what risk_summary does, step by step)."""
    rows = []
    for column in qis:
        ms, _ = timed_ms(lambda _i, c=column: encode_column(df[c]), repeat)
        rows.append((f"encode_column({column})", ms))
    encoded = [encode_column(df[c]) for c in qis]
    ms, out = timed_ms(lambda _i: combine_codes(encoded, len(df)), repeat, warmup=0)
    key, cardinality = out[0]
    rows.append((f"combine_codes (key cardinality {cardinality:,})", ms))
    ms, out = timed_ms(lambda _i: class_sizes_from_key(key, cardinality), repeat, warmup=0)
    sizes, n_classes = out[0]
    rows.append((f"class_sizes_from_key ({n_classes:,} classes)", ms))
    ms, _ = timed_ms(lambda _i: summarise_class_sizes(sizes, n_classes, qis), repeat)
    rows.append(("summarise_class_sizes", ms))
    return rows


# --------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="records (default 1000000)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument("--seed", type=int, default=20240611, help="data seed")
    parser.add_argument("--no-stages", action="store_true", help="skip the stage breakdown")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.repeat < 1:
        parser.error("--rows and --repeat must be at least 1")
    repeat, qis = args.repeat, list(QIS)

    start = time.perf_counter()
    original = make_data(args.rows, args.seed)
    generate_s = time.perf_counter() - start
    recipe = base_recipe()
    masked = recipe.apply(original)[qis]

    print(
        f"Equivalence-class risk benchmark: {args.rows:,} records x {len(qis)} quasi-identifiers,"
        f" median of {repeat} run(s)"
    )
    print(f"{machine(np, pd)}; data generated in {generate_s:.1f} s (seed {args.seed})")
    print(f"original: {describe_data(original)}")
    print(f"masked:   {describe_data(masked)}")
    print(f"base recipe: {'; '.join(recipe.describe())}")
    print()

    # (a) and (b) on the original and on the masked data.
    connection = duckdb.connect()
    connection.execute(f"SET threads = {os.cpu_count() or 1}")
    cold: dict[str, dict[str, float]] = {}
    checks = 0
    for label, frame in (("original", original), ("masked", masked)):
        connection.register("frame", frame)
        ms: dict[str, float] = {}
        ms["a1"], base = timed_ms(lambda _i, f=frame: baseline_summary(f, qis), repeat, warmup=0)
        ms["a2"], ducks = timed_ms(
            lambda _i: duckdb_summary(connection, "frame", qis), repeat, warmup=1
        )
        ms["a3"], numpys = timed_ms(lambda _i, f=frame: factorize_summary(f, qis), repeat, warmup=0)
        for got in (*ducks, *numpys):
            check_figures(base[0], got, f"(a2)/(a3) on the {label} data")
            checks += 1
        copies = [fresh_copy(frame) for _ in range(repeat + 1)]  # the last: the warm-up
        ms["b"], summaries = timed_ms(
            lambda i, c=copies: risk_summary(c[i], qis), repeat, warmup=repeat
        )
        del copies
        ms["b'"], kept = timed_ms(lambda _i, f=frame: risk_summary(f, qis), repeat, warmup=1)
        for summary in (*summaries, *kept):
            check_same(base[0], summary, f"(b) risk_summary on the {label} data")
            checks += 1
        cold[label] = ms
        connection.unregister("frame")
    expected_masked = baseline_summary(masked, qis)

    # (c) and (d): the workspace, caches filled by one first assessment.
    ws = Workspace(original, name="bench")
    first_ms, _ = timed_ms(lambda _i: ws.risk(recipe), 1)
    check_same(expected_masked, ws.risk(recipe), "(c) first workspace assessment")
    warm: dict[str, float] = {}
    for label, steps in (("c1", age_steps(repeat + 1)), ("c2", dose_steps(repeat + 1))):
        # One more new value than timed runs: the last one is the untimed warm-up.
        recipes = [recipe.with_steps_for(step.column, [step]) for step in steps]
        ms_c, summaries = timed_ms(lambda i, r=recipes: ws.risk(r[i]), repeat, warmup=repeat)
        for changed, summary in zip(recipes[:repeat], summaries, strict=True):
            frame = ws.masked_frame(changed)[qis]
            expected = baseline_summary(frame, qis)
            check_same(expected, summary, f"({label}) workspace after {changed.describe()}")
            check_same(expected, risk_summary(frame, qis), f"({label}) risk_summary cold")
            checks += 2
        warm[label] = ms_c
    ms_d, summaries = timed_ms(lambda _i: ws.risk(recipe), repeat, warmup=0)
    for summary in summaries:
        check_same(expected_masked, summary, "(d) workspace, nothing changed")
        checks += 1
    warm["d"] = ms_d

    # ------------------------------------------------------------------ report
    orig, mask = cold["original"], cold["masked"]
    width = 72
    print(f"{'timing (median ms)':<{width}}{'original':>10}{'masked':>10}")
    for key, name in (
        ("a1", "(a1) pandas groupby(dropna=False) + transform(size)"),
        ("a2", "(a2) DuckDB GROUP BY, figures in the same query"),
        ("a3", "(a3) numpy: pd.factorize per column, np.unique on the key"),
        ("b", "(b) risk_summary(df, qis), cold: new data each run"),
        ("b'", "(b') risk_summary(df, qis) on the same data: text codes kept"),
    ):
        print(f"{name:<{width}}{orig[key]:>10.1f}{mask[key]:>10.1f}")
    for ours in ("b", "b'"):
        for base in ("a1", "a2", "a3"):
            name = f"    ratio ({base}) / ({ours})"
            ratios = orig[base] / orig[ours], mask[base] / mask[ours]
            print(f"{name:<{width}}{ratios[0]:>9.2f}x{ratios[1]:>9.2f}x")
    print()
    a_mask = mask["a1"]
    heading = f"workspace on the masked data (first ws.risk, caches empty: {first_ms:.0f} ms)"
    print(f"{heading:<{width}}{'ms':>10}{'(a)/this':>10}")
    rows = (
        ("(c1) age grouping width changed (re-mask, re-encode, recombine)", warm["c1"]),
        ("(c2) dose relative rounding changed (same)", warm["c2"]),
        ("(d) no masking changed: recombine cached codes", warm["d"]),
    )
    for name, ms in rows:
        print(f"{name:<{width}}{ms:>10.1f}{a_mask / ms:>9.2f}x")
    print()
    worst_recompute = max(warm["c1"], warm["c2"])
    print("targets (printed only, never enforced):")
    for ours, what in (("b", "cold, new data"), ("b'", "text codes kept")):
        for base, name in (("a1", "pandas"), ("a2", "DuckDB")):
            ratios = [orig[base] / orig[ours], mask[base] / mask[ours]]
            print(
                f"  at least {TARGET_SPEEDUP:g}x faster than {name} ({what}): "
                f"{ratios[0]:.2f}x (original), {ratios[1]:.2f}x (masked) "
                f"{verdict(min(ratios) >= TARGET_SPEEDUP)}"
            )
    print(
        f"  recompute within {TARGET_RECOMPUTE_MS:g} ms after one QI's masking changes: "
        f"worst of (c1), (c2) {worst_recompute:.1f} ms "
        f"{verdict(worst_recompute <= TARGET_RECOMPUTE_MS)}"
    )
    print(f"correctness: (a), (b), (c), (d) figures and class sizes identical ({checks} checks)")
    print(f"load average at the end of the timings: {load_average()}")

    if not args.no_stages:
        print()
        print("stages of the cold path on the masked data (median ms):")
        for name, ms in stage_breakdown(masked, qis, repeat):
            print(f"  {name:<{width - 2}}{ms:>10.1f}")
        print("stages of the warm path, one new masking of each column (single run, ms):")
        for step in (*age_steps(1), *dose_steps(1)):
            changed = recipe.with_steps_for(step.column, [step])
            t0 = time.perf_counter()
            column = changed.apply_to_column(original, step.column)
            t1 = time.perf_counter()
            encoded = encode_column(column)
            t2 = time.perf_counter()
            print(
                f"  {step.describe()}: mask {(t1 - t0) * 1000:.1f}, encode "
                f"{(t2 - t1) * 1000:.1f} ({encoded.n_levels:,} levels)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
