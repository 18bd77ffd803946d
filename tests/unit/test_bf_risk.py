"""Benedetti-Franconi individual risk: exact for every class size and sampling fraction, against
independent high-precision computations (mpmath), sdcMicro's published values and the worked
examples of issue 13; sdcMicro's approximation as an option."""

from pathlib import Path

import mpmath
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.recipe import Recipe, Roles
from deid_core.risk import REFERENCE_TOOL_NOTES, compatible_class_sizes
from deid_core.risk.population import BF_METHODS, benedetti_franconi_risk, sample_risk
from deid_core.workspace import Workspace

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference-data"
needs_reference = pytest.mark.skipif(
    not REFERENCE.is_dir(), reason="../shared/reference-data is not beside the project"
)

mpmath.mp.dps = 40


def reference_pfaff(f: int, p: float) -> float:
    """``E[1/F | f] = (1/f) 2F1(1, f; f+1; -(1-p)/p)`` (Pfaff's transformation of
    ``(p/f) 2F1(1, 1; f+1; 1-p)``), in 40-digit arithmetic."""
    p = mpmath.mpf(p)
    return float(mpmath.hyp2f1(1, f, f + 1, -(1 - p) / p) / f)


def reference_euler(f: int, p: float) -> float:
    """``(p/f) 2F1(1, 1; f+1; 1-p)`` in 40-digit arithmetic (another mpmath path)."""
    p = mpmath.mpf(p)
    return float(p / f * mpmath.hyp2f1(1, 1, f + 1, 1 - p))


def reference_sum(f: int, p: float) -> float:
    """The definition: ``sum_{h >= f} (1/h) C(h-1, f-1) p^f (1-p)^(h-f)``, term by term in
    40-digit arithmetic until the terms are negligible."""
    p = mpmath.mpf(p)
    q = 1 - p
    term = p**f  # P(F = f)
    total = term / f
    h = f
    while True:
        term *= q * h / (h - f + 1)  # P(F = h + 1) from P(F = h)
        h += 1
        total += term / h
        if h > f / p and term / h < mpmath.mpf(10) ** -30 * total:
            return float(total)


def exact(f, p) -> np.ndarray:
    """The code under test at (f, p): population class size f / p."""
    f = np.asarray(f, dtype=float)
    return benedetti_franconi_risk(f, f / np.asarray(p, dtype=float))


def used_p(f: int, p: float) -> float:
    """The p the code works with (f / (f / p), within a rounding of p)."""
    return f / (f / p)


F_GRID = [1, 2, 3, 5, 10, 30, 59, 60, 61, 99, 100, 101, 200, 1000, 10**4, 10**5, 10**6, 10**7]
P_GRID = [
    1e-9,
    1e-7,
    1e-5,
    1e-3,
    0.01,
    0.05,
    0.1,
    0.2,
    0.2999,
    0.3,
    0.5,
    0.7,
    0.9,
    0.99,
    0.999999,
    1 - 1e-12,
    1.0,
]


def test_exact_over_the_whole_range_against_high_precision():
    """Every f from 1 to 10^7 and p from 1e-9 to 1 (scipy's hyp2f1 gave NaN or inf for
    f >= 100 and p < 0.1), to 1e-13 relative."""
    f = np.repeat(F_GRID, len(P_GRID))
    p = np.tile(P_GRID, len(F_GRID))
    got = exact(f, p)
    want = np.array([reference_pfaff(int(a), used_p(a, b)) for a, b in zip(f, p, strict=True)])
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


@pytest.mark.parametrize("f", [1, 2, 5, 59, 60, 100, 101, 1000, 10**5])
@pytest.mark.parametrize("p", [1e-6, 0.01, 0.05, 0.3, 0.9])
def test_exact_against_the_euler_form(f, p):
    assert exact([f], [p])[0] == pytest.approx(reference_euler(f, used_p(f, p)), rel=1e-13)


@pytest.mark.parametrize(
    ("f", "p"),
    [(1, 0.05), (2, 0.1), (3, 0.3), (10, 0.2), (59, 0.25), (60, 0.25), (100, 0.05), (150, 0.5)],
)
def test_exact_against_the_defining_sum(f, p):
    assert exact([f], [p])[0] == pytest.approx(reference_sum(f, used_p(f, p)), rel=1e-13)


@settings(max_examples=150, deadline=None)
@given(
    f=st.one_of(st.integers(1, 120), st.integers(1, 10**7)),
    p=st.floats(1e-9, 1.0, allow_nan=False),
)
def test_exact_at_random_points(f, p):
    got = exact([f], [p])[0]
    assert got == pytest.approx(reference_pfaff(f, used_p(f, p)), rel=1e-13)
    assert 0 < got <= 1 / f


def test_census_and_repeated_pairs():
    f = np.array([1, 3, 3, 3, 7] * 1000)
    np.testing.assert_array_equal(benedetti_franconi_risk(f, f), 1 / f)  # p = 1
    # Evaluated once per distinct (f, p) pair: identical records get identical risks.
    big_f = np.where(f == 3, 300.0, 40.0)
    risk = benedetti_franconi_risk(f, big_f)
    for size in (1, 3, 7):
        values = risk[f == size]
        assert np.all(values == values[0])
        assert values[0] == pytest.approx(reference_pfaff(size, size / big_f[f == size][0]))


def test_one_class_of_100_and_20_pairs_at_five_percent():
    """Issue 13: the old code reported a maximum of 1.0 and 101.8 expected
    re-identifications; the correct values are 0.044 and 1.82."""
    f = np.array([100] * 100 + [2] * 40)
    result = sample_risk(f, sampling_fraction=0.05)
    pair, big = reference_pfaff(2, 0.05), reference_pfaff(100, 0.05)
    assert result.bf_max == pytest.approx(pair, rel=1e-13)
    assert result.expected_reidentifications == pytest.approx(40 * pair + 100 * big, rel=1e-13)
    assert round(result.bf_max, 3) == 0.044
    assert round(result.expected_reidentifications, 2) == 1.82


# ---------------------------------------------------------------- sdcMicro's approximation


def test_sdcmicro_approximation_formula_and_its_distance_from_exact():
    f = np.repeat(np.arange(1, 200), 400).astype(float)
    p = np.tile(np.geomspace(1e-9, 1, 400), 199)
    exact_risk = exact(f, p)
    approx = benedetti_franconi_risk(f, f / p, "sdcmicro")
    big = f >= 3
    p_used = f / (f / p)
    # p / (f - (1 - p)), sdcMicro's pk / (fk - (1 - pk))
    np.testing.assert_allclose(approx[big], p_used[big] / (f[big] - (1 - p_used[big])), rtol=1e-12)
    # sdcMicro's closed forms for f = 1 and 2 are exact
    np.testing.assert_array_equal(approx[~big], exact_risk[~big])
    excess = approx / exact_risk - 1
    assert excess.min() >= -1e-14  # never below the exact value
    # the bounds the Risk page, the report and the README state
    assert 0.039 < excess[f == 3].max() < 0.041
    assert 0.011 < excess[f == 5].max() < 0.013
    assert excess[f >= 10].max() < 0.003
    assert "4.0%" in REFERENCE_TOOL_NOTES[0] and "1.2%" in REFERENCE_TOOL_NOTES[0]


def test_unknown_method_is_rejected():
    assert set(BF_METHODS) == {"exact", "sdcmicro"}
    with pytest.raises(ValueError, match=r"'exact'.*'sdcmicro'"):
        benedetti_franconi_risk(np.array([1]), np.array([2.0]), "approx")
    with pytest.raises(ValueError, match="bf_method"):
        sample_risk(np.array([1, 1]), sampling_fraction=0.5, bf_method="approx")


# sdcMicro's own tests (tests/testthat/test_indivRisk.R): eight records, keys A, B, C,
# weights w; per-record risk by indivRisk(freqCalc(...), method = "approx" / "exact").
SDC_KEYS = {
    "A": [2, 3, 2, 2, 3, 3, 1, 2],
    "B": [3, 3, 3, 3, 3, 3, 4, 3],
    "C": [1, 3, 1, 2, 1, 1, 1, 1],
}
SDC_WEIGHTS = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0]
SDC_PUBLISHED = {
    ("complete", "sdcmicro"): [
        0.01369863,
        0.08579129,
        0.01369863,
        0.17707583,
        0.01877883,
        0.01877883,
        0.03931625,
        0.01369863,
    ],
    ("complete", "exact"): [
        0.01355297,
        0.08579129,
        0.01355297,
        0.17707583,
        0.01877883,
        0.01877883,
        0.03931625,
        0.01355297,
    ],
    ("missing", "sdcmicro"): [
        0.013698630,
        0.085791288,
        0.010554090,
        0.032466112,
        0.009836066,
        0.009836066,
        0.039316254,
        0.005973716,
    ],
    ("missing", "exact"): [
        0.013552968,
        0.085791288,
        0.010504889,
        0.032466112,
        0.009756889,
        0.009756889,
        0.039316254,
        0.005962551,
    ],
}


def sdcmicro_test_frame(with_missing: bool) -> pd.DataFrame:
    frame = pd.DataFrame({k: np.array(v, dtype=float) for k, v in SDC_KEYS.items()})
    if with_missing:  # sdcMicro's NA positions
        frame.loc[7, "A"] = np.nan
        frame.loc[[2, 6], "C"] = np.nan
    frame["w"] = SDC_WEIGHTS
    return frame


@pytest.mark.parametrize(("data", "method"), list(SDC_PUBLISHED))
def test_sdcmicro_published_individual_risks(data, method):
    frame = sdcmicro_test_frame(data == "missing")
    recipe = Recipe(Roles(quasi_identifiers=("A", "B", "C"), weight="w"))
    # sdcMicro treats a missing key as matching any value (freqCalc)
    result = Workspace(frame).sample_risk(recipe, missing="wildcard", bf_method=method)
    np.testing.assert_allclose(result.individual_risk, SDC_PUBLISHED[data, method], rtol=2e-7)
    if data == "complete":  # no missing values: both rules give the same figures
        same = Workspace(frame).sample_risk(recipe, missing="category", bf_method=method)
        np.testing.assert_allclose(same.individual_risk, result.individual_risk, rtol=1e-15)


# ---------------------------------------------------------------- sdcMicro's testdata

TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


@needs_reference
def test_testdata_with_weights_gives_finite_exact_figures():
    """Issue 13: the BF figures were null (NaN); the exact expected number of
    re-identifications is 10.7755, sdcMicro's approximation 10.7783."""
    frame = pd.read_csv(REFERENCE / "sdcmicro" / "testdata.csv")
    recipe = Recipe(Roles(quasi_identifiers=tuple(TESTDATA_KEYS), weight="sampling_weight"))
    workspace = Workspace(frame)
    result = workspace.sample_risk(recipe)
    # Independent reference: class sizes and weight sums by pandas, risks in mpmath.
    classes = frame.groupby(TESTDATA_KEYS)["sampling_weight"]
    f = classes.transform("size").to_numpy()
    big_f = classes.transform("sum").to_numpy()
    pairs = pd.DataFrame({"f": f, "F": big_f}).value_counts()
    want = sum(n * reference_pfaff(int(a), a / b) for (a, b), n in pairs.items())
    assert np.isfinite([result.bf_max, result.bf_mean, result.expected_reidentifications]).all()
    assert result.expected_reidentifications == pytest.approx(want, rel=1e-12)
    assert round(result.expected_reidentifications, 4) == 10.7755
    approx = workspace.sample_risk(recipe, bf_method="sdcmicro")
    assert round(approx.expected_reidentifications, 4) == 10.7783
    assert approx.to_dict()["bf_method"] == "sdcmicro"


def test_compatible_weights_are_what_wildcard_sample_risk_uses():
    frame = sdcmicro_test_frame(with_missing=True)
    keys = ["A", "B", "C"]
    f = compatible_class_sizes(frame, keys)
    sums = compatible_class_sizes(frame, keys, weights=frame["w"].to_numpy())
    result = sample_risk(
        f, weights=frame["w"].to_numpy(), compatible_weights=sums, missing="wildcard"
    )
    np.testing.assert_allclose(result.population_class_size, sums)
    assert result.f_estimator == "sum of sampling weights of the compatible records"
    with pytest.raises(ValueError, match="compatible_weights"):
        sample_risk(f, weights=frame["w"].to_numpy(), missing="wildcard")
