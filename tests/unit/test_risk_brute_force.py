"""Every risk figure against a brute-force reference written independently of the code under
test: record-by-record comparison loops for the classes (a missing value as a category of its
own, or as a wildcard matching any value), the risk measures from their definitions, and the
Benedetti-Franconi risk from its defining sum. Random small data with missing values, both
modes, with and without sampling weights; and sdcMicro's francdat with its missing pattern."""

import functools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core.cli import main
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference-data"

NA = object()  # a missing value in the brute-force records


# ---------------------------------------------------------------- the brute force


def records_of(frame: pd.DataFrame, qis: list[str]) -> list[tuple]:
    """Each record's quasi-identifier values as a tuple, NA for a missing value."""
    return [
        tuple(NA if pd.isna(value) else value for value in row)
        for row in frame[qis].itertuples(index=False)
    ]


def matches(a: tuple, b: tuple, missing: str) -> bool:
    """Could an intruder confuse records a and b?"""
    for x, y in zip(a, b, strict=True):
        if missing == "wildcard" and (x is NA or y is NA):
            continue  # a missing value matches anything
        if (x is NA) != (y is NA) or (x is not NA and x != y):
            return False
    return True


def brute_classes(records: list[tuple], weights: list[float], missing: str):
    """Per record: the number of records it matches (itself included), and their weights."""
    sizes, sums = [], []
    for a in records:
        size, total = 0, 0.0
        for b, w in zip(records, weights, strict=True):
            if matches(a, b, missing):
                size += 1
                total += w
        sizes.append(size)
        sums.append(total)
    return sizes, sums


@functools.cache
def brute_bf(f: int, big_f: float) -> float:
    """E[1/F | f] by its definition, sum_h (1/h) C(h-1, f-1) p^f (1-p)^(h-f), p = f / F,
    summed in floating point until the terms are negligible."""
    p = f / max(big_f, f)
    if p == 1.0:
        return 1.0 / f
    total, h = 0.0, f
    log_term = f * math.log(p)  # log P(F = f)
    while True:
        term = math.exp(log_term)
        total += term / h
        if h > f / p and term < 1e-18 * total:
            return total
        log_term += math.log((1 - p) * h / (h - f + 1))
        h += 1


def brute_closed(sizes: list[int]) -> dict[str, float]:
    n = len(sizes)
    k = min(sizes)
    average = sum(1 / s for s in sizes) / n
    return {
        "k": k,
        "uniques": sum(1 for s in sizes if s == 1),
        "max_risk": 1 / k,
        "average_risk": average,
        "strict_average_risk": average if k >= 3 else 1 / k,
    }


def brute_open(sizes: list[int], population: list[float]) -> dict[str, float]:
    n = len(sizes)
    bf = [brute_bf(s, big) for s, big in zip(sizes, population, strict=True)]
    return {
        "prosecutor_max": max(1 / s for s in sizes),
        "prosecutor_average": sum(1 / s for s in sizes) / n,
        "journalist_max": max(1 / big for big in population),
        "journalist_average": sum(1 / big for big in population) / n,
        "marketer": sum(1 / big for big in population) / n,
        "bf_max": max(bf),
        "bf_mean": sum(bf) / n,
        "expected_reidentifications": sum(bf),
        "sample_uniques": sum(1 for s in sizes if s == 1),
    }


# ---------------------------------------------------------------- random data

value = st.one_of(st.none(), st.integers(0, 2))


@st.composite
def small_data(draw):
    n = draw(st.integers(1, 25))
    n_qis = draw(st.integers(1, 3))
    columns = {f"q{j}": draw(st.lists(value, min_size=n, max_size=n)) for j in range(n_qis)}
    frame = pd.DataFrame(columns, dtype="float64")
    weighted = draw(st.booleans())
    if weighted:
        frame["w"] = draw(st.lists(st.floats(1.0, 60.0), min_size=n, max_size=n))
    fraction = None if weighted else draw(st.floats(0.02, 1.0))
    return frame, list(columns), weighted, fraction


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=small_data(), missing=st.sampled_from(["category", "wildcard"]))
def test_every_risk_figure_equals_the_brute_force(data, missing):
    frame, qis, weighted, fraction = data
    recipe = Recipe(Roles(quasi_identifiers=tuple(qis), weight="w" if weighted else None))
    workspace = Workspace(frame)
    records = records_of(frame, qis)
    weights = frame["w"].tolist() if weighted else [1.0] * len(frame)
    sizes, sums = brute_classes(records, weights, missing)

    closed = workspace.risk(recipe, missing)
    assert closed.class_size.tolist() == sizes
    for name, want in brute_closed(sizes).items():
        assert getattr(closed, name) == pytest.approx(want, rel=1e-12), name

    n = len(frame)
    # population class size: the summed weights, or f / sampling fraction
    population = sums if weighted else [s / fraction for s in sizes]
    for method in ("exact", "sdcmicro"):
        result = workspace.sample_risk(recipe, fraction, missing=missing, bf_method=method)
        assert result.missing == missing
        np.testing.assert_allclose(result.population_class_size, population, rtol=1e-12)
        want = brute_open(sizes, population)
        if method == "sdcmicro":  # p / (f - 1 + p) for classes of 3 or more
            bf = [
                brute_bf(s, big) if s < 3 else (s / big) / (s - 1 + s / big)
                for s, big in zip(sizes, population, strict=True)
            ]
            want |= {
                "bf_max": max(bf),
                "bf_mean": sum(bf) / n,
                "expected_reidentifications": sum(bf),
            }
        got = result.to_dict()
        for name, expected in want.items():
            assert got[name] == pytest.approx(expected, rel=1e-9), name


# ---------------------------------------------------------------- sdcMicro's francdat

FRANCDAT_KEYS = ["Key1", "Key2", "Key3", "Key4"]


@pytest.fixture
def francdat_with_missing(tmp_path: Path) -> Path:
    """francdat with the missing values of sdcMicro's freqCalc example (x[3,5], x[4,2],
    x[4,4], x[5,6], x[6,2] in R's 1-based row and column numbers)."""
    path = REFERENCE / "sdcmicro" / "francdat.csv"
    if not path.is_file():
        pytest.skip("../shared/reference-data is not beside the project")
    frame = pd.read_csv(path)
    for row, column in [(3, 5), (4, 2), (4, 4), (5, 6), (6, 2)]:
        frame.iloc[row - 1, column - 1] = np.nan
    out = tmp_path / "francdat_missing.csv"
    frame.to_csv(out, index=False)
    return out


@pytest.mark.parametrize("missing", ["category", "wildcard"])
def test_francdat_with_missing_values_in_both_modes(capsys, francdat_with_missing, missing):
    """sdcMicro (missing values match any value) reports no uniques, k = 2 and 0.134 expected
    re-identifications; with missing values as a category there are 6 uniques."""
    frame = pd.read_csv(francdat_with_missing)
    records = records_of(frame, FRANCDAT_KEYS)
    sizes, sums = brute_classes(records, frame["w"].tolist(), missing)
    code = main(
        [
            "assess",
            str(francdat_with_missing),
            "--qi",
            *FRANCDAT_KEYS,
            "--weight",
            "w",
            "--missing",
            missing,
            "--bf-method",
            "sdcmicro",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    closed, open_data = result["risk"], result["open_data"]
    # One partition for both blocks: the open-data block uses the same classes.
    assert closed["uniques"] == open_data["sample_uniques"] == sum(s == 1 for s in sizes)
    assert open_data["missing"] == missing
    want = brute_open(sizes, sums)
    exact = Workspace(frame).sample_risk(
        Recipe(Roles(quasi_identifiers=tuple(FRANCDAT_KEYS), weight="w")), missing=missing
    )
    assert exact.expected_reidentifications == pytest.approx(
        want["expected_reidentifications"], rel=1e-9
    )
    if missing == "wildcard":
        assert (closed["k"], closed["uniques"]) == (2, 0)
        assert round(open_data["expected_reidentifications"], 3) == 0.134  # sdcMicro's figure
        assert open_data["population_uniques_estimate"] == 0
    else:
        assert closed["uniques"] == 6
        assert round(open_data["expected_reidentifications"], 3) == 1.105
