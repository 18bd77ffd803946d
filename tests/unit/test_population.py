"""Open-data risk: prosecutor / journalist / marketer, Benedetti-Franconi, population uniques."""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from deid_core.risk.population import (
    benedetti_franconi_risk,
    estimate_population_uniques,
    pitman_expected_singletons,
    population_uniqueness_curve,
    sample_risk,
    snb_expected_s1_s2,
)

# classes of size 1, 2 and 3: six records
F_SMALL = np.array([1, 2, 2, 3, 3, 3])
KEY_SMALL = np.array([0, 1, 1, 2, 2, 2])


def sizes_from_key(key: np.ndarray) -> np.ndarray:
    codes = np.unique(key, return_inverse=True)[1]
    return np.bincount(codes)[codes]


# ---------------------------------------------------------------- hand-computed examples


def test_hand_computed_prosecutor_journalist_marketer():
    r = sample_risk(F_SMALL, sampling_fraction=0.5)
    assert r.population_size == 12
    assert r.prosecutor_max == 1.0
    assert r.prosecutor_average == pytest.approx((1 + 2 * 0.5 + 3 / 3) / 6)  # 0.5
    # F_hat = f / 0.5 = 2, 4, 4, 6, 6, 6
    np.testing.assert_allclose(r.population_class_size, [2, 4, 4, 6, 6, 6])
    assert r.journalist_max == pytest.approx(0.5)
    assert r.journalist_average == pytest.approx((1 / 2 + 2 / 4 + 3 / 6) / 6)  # 0.25
    assert r.marketer == pytest.approx(0.25)
    assert "journalist" in str(r) and "Benedetti-Franconi" in str(r)


def test_population_size_gives_the_fraction():
    a = sample_risk(F_SMALL, population_size=24)
    assert a.sampling_fraction == pytest.approx(0.25)
    assert a.journalist_max == pytest.approx(0.25)  # F_hat of the unique = 4


def test_census_journalist_equals_prosecutor_and_bf_is_one_over_f():
    r = sample_risk(F_SMALL, sampling_fraction=1.0)
    assert r.journalist_max == r.prosecutor_max
    assert r.journalist_average == pytest.approx(r.prosecutor_average)
    np.testing.assert_allclose(r.individual_risk, 1.0 / F_SMALL)
    assert r.expected_reidentifications == pytest.approx(3.0)  # number of classes


def test_weights_equal_to_inverse_fraction_match_the_fraction():
    rng = np.random.default_rng(5)
    key = rng.integers(0, 40, size=300)
    f = sizes_from_key(key)
    by_fraction = sample_risk(f, sampling_fraction=0.2)
    by_weights = sample_risk(f, weights=np.full(f.size, 5.0), class_key=key)
    assert by_weights.sampling_fraction == pytest.approx(0.2)
    assert by_weights.population_size == by_fraction.population_size
    for name in (
        "journalist_max",
        "journalist_average",
        "marketer",
        "bf_max",
        "bf_mean",
        "expected_reidentifications",
    ):
        assert getattr(by_weights, name) == pytest.approx(getattr(by_fraction, name))
    np.testing.assert_allclose(by_weights.individual_risk, by_fraction.individual_risk)


def test_weights_are_summed_within_classes():
    w = np.array([10.0, 1.0, 3.0, 2.0, 2.0, 2.0])
    r = sample_risk(F_SMALL, weights=w, class_key=KEY_SMALL)
    # F_hat = 10, 4, 4, 6, 6, 6 -> journalist max 1/4
    np.testing.assert_allclose(r.population_class_size, [10, 4, 4, 6, 6, 6])
    assert r.journalist_max == pytest.approx(0.25)
    assert r.population_size == 20


# ---------------------------------------------------------------- Benedetti-Franconi


def bf_by_integral(f: int, big_f: float) -> float:
    p = f / big_f
    q = 1 - p
    value, _ = integrate.quad(lambda t: p**f * t ** (f - 1) * (1 - q * t) ** (-f), 0, 1)
    return value


def bf_by_series(f: int, big_f: float) -> float:
    """E[1/F] with F = f + M, M ~ NegBin(f, p): sum over M directly."""
    p = f / big_f
    m = np.arange(0, 20_000)
    return float(np.sum(stats.nbinom.pmf(m, f, p) / (f + m)))


@pytest.mark.parametrize(
    ("f", "big_f"), [(1, 10.0), (1, 1.5), (2, 5.5), (3, 30.0), (5, 6.0), (8, 80.0), (20, 25.0)]
)
def test_benedetti_franconi_matches_integral_and_series(f, big_f):
    got = benedetti_franconi_risk(np.array([f]), np.array([big_f]))[0]
    assert got == pytest.approx(bf_by_integral(f, big_f), rel=1e-7)
    assert got == pytest.approx(bf_by_series(f, big_f), rel=1e-7)


def test_benedetti_franconi_closed_form_for_uniques():
    p = 0.2
    got = benedetti_franconi_risk(np.array([1]), np.array([1 / p]))[0]
    assert got == pytest.approx(p * math.log(1 / p) / (1 - p))


def test_bf_expected_reidentifications_is_sum_of_individual_risks():
    r = sample_risk(F_SMALL, sampling_fraction=0.3)
    assert r.expected_reidentifications == pytest.approx(r.individual_risk.sum())
    assert r.bf_mean == pytest.approx(r.individual_risk.mean())
    assert r.bf_max == pytest.approx(r.individual_risk.max())
    # open data: below the closed-data risk 1/f, above the naive 1/F_hat
    assert np.all(r.individual_risk <= 1.0 / F_SMALL + 1e-12)
    assert np.all(r.individual_risk >= 1.0 / r.population_class_size - 1e-12)


# ---------------------------------------------------------------- ranges and monotonicity


def test_risks_within_unit_interval_and_journalist_not_above_prosecutor():
    rng = np.random.default_rng(11)
    for _ in range(20):
        key = rng.integers(0, rng.integers(2, 200), size=rng.integers(5, 500))
        f = sizes_from_key(key)
        pi = float(rng.uniform(0.01, 1.0))
        r = sample_risk(f, sampling_fraction=pi)
        for value in (
            r.prosecutor_max,
            r.prosecutor_average,
            r.journalist_max,
            r.journalist_average,
            r.marketer,
            r.bf_max,
            r.bf_mean,
        ):
            assert 0.0 <= value <= 1.0
        assert r.journalist_max <= r.prosecutor_max
        assert r.journalist_average <= r.prosecutor_average + 1e-12
        assert r.bf_max <= r.prosecutor_max + 1e-12


def test_smaller_sampling_fraction_never_raises_journalist_risk():
    rng = np.random.default_rng(3)
    f = sizes_from_key(rng.integers(0, 60, size=400))
    previous = None
    for pi in (1.0, 0.8, 0.5, 0.3, 0.1, 0.05, 0.01):
        r = sample_risk(f, sampling_fraction=pi)
        if previous is not None:
            assert r.journalist_max <= previous.journalist_max + 1e-12
            assert r.journalist_average <= previous.journalist_average + 1e-12
            assert r.marketer <= previous.marketer + 1e-12
            assert r.bf_mean <= previous.bf_mean + 1e-12
        previous = r


# ---------------------------------------------------------------- population uniques


def test_census_population_uniques_equal_sample_uniques():
    rng = np.random.default_rng(8)
    f = sizes_from_key(rng.integers(0, 3000, size=4000))
    s1 = int(np.count_nonzero(f == 1))
    est = estimate_population_uniques(f, 1.0)
    assert est.sample_uniques == s1
    assert est.zayatz == pytest.approx(s1)
    assert est.snb == pytest.approx(s1, rel=1e-6)
    # Pitman is the fitted model's expected singletons, not the observed count (documented)
    assert est.pitman == pytest.approx(s1, rel=0.3)
    assert est.estimate == pytest.approx(s1, rel=1e-6)


def test_no_sample_uniques_gives_zero():
    est = estimate_population_uniques(np.array([2, 2, 3, 3, 3]), 0.1)
    assert est.estimate == 0.0 and est.selected == "none"


def test_snb_moment_formulas_match_direct_sums():
    k, pi, a, b = 1000.0, 0.3, 0.7, 0.4
    big_f = 1 + np.arange(0, 5000)
    p_big_f = stats.nbinom.pmf(big_f - 1, a, b)
    e1 = k * np.sum(p_big_f * stats.binom.pmf(1, big_f, pi))
    e2 = k * np.sum(p_big_f * stats.binom.pmf(2, big_f, pi))
    got1, got2 = snb_expected_s1_s2(k, pi, a, b)
    assert got1 == pytest.approx(e1, rel=1e-9)
    assert got2 == pytest.approx(e2, rel=1e-9)


def test_pitman_exact_expectation_tends_to_published_large_n_form():
    theta, alpha, big_n = 300.0, 0.4, 10_000_000
    published = math.exp(special.gammaln(theta + 1) - special.gammaln(theta + alpha)) * big_n**alpha
    assert pitman_expected_singletons(theta, alpha, big_n) == pytest.approx(published, rel=1e-3)


def gem_weights(rng, theta, alpha, m):
    v = rng.beta(1 - alpha, theta + np.arange(1, m + 1) * alpha)
    w = v * np.exp(np.concatenate([[0.0], np.cumsum(np.log1p(-v))[:-1]]))
    return w / w.sum()


@pytest.fixture(scope="module")
def synthetic_population():
    """40,000 people in classes drawn from a (truncated) Pitman-Yor process; seeded."""
    rng = np.random.default_rng(20120066)
    weights = gem_weights(rng, 2000.0, 0.4, 400_000)
    people = rng.choice(weights.size, size=40_000, p=weights)
    true_uniques = int(np.count_nonzero(np.bincount(people) == 1))
    return rng, people, true_uniques


def draw_sample(rng, people, pi):
    chosen = people[rng.choice(people.size, size=round(pi * people.size), replace=False)]
    return sizes_from_key(chosen)


def test_pitman_estimate_near_truth_for_small_fraction(synthetic_population):
    rng, people, truth = synthetic_population
    for pi in (0.05, 0.1):
        est = estimate_population_uniques(draw_sample(rng, people, pi), pi, people.size)
        assert est.selected == "pitman"
        assert est.pitman == pytest.approx(truth, rel=0.3)
        # the sample uniques alone are far from the truth at this fraction
        assert est.sample_uniques < 0.8 * truth


def test_zayatz_and_snb_estimates_near_truth_for_large_fraction(synthetic_population):
    rng, people, truth = synthetic_population
    est = estimate_population_uniques(draw_sample(rng, people, 0.5), 0.5, people.size)
    assert est.zayatz == pytest.approx(truth, rel=0.1)
    assert est.snb == pytest.approx(truth, rel=0.1)
    assert est.selected in ("zayatz", "snb")
    assert est.estimate == min(est.zayatz, est.snb)


def test_decision_rule_uses_pitman_below_cutoff_and_min_above():
    rng = np.random.default_rng(4)
    f = sizes_from_key(rng.integers(0, 2000, size=3000))
    low = estimate_population_uniques(f, 0.05)
    assert low.selected == "pitman" and "<= 0.1" in low.reason
    high = estimate_population_uniques(f, 0.4)
    assert high.selected in ("zayatz", "snb")
    assert high.estimate == pytest.approx(min(high.zayatz, high.snb))


def test_population_uniqueness_curve():
    rng = np.random.default_rng(9)
    f = sizes_from_key(rng.integers(0, 1500, size=2000))
    curve = population_uniqueness_curve(f, [0.05, 0.2, 1.0])
    assert [pi for pi, _ in curve] == [0.05, 0.2, 1.0]
    for _, shares in curve:
        assert set(shares) == {"zayatz", "pitman", "snb", "dankar"}
        for value in shares.values():
            assert math.isnan(value) or 0.0 <= value <= 1.0
    census = curve[-1][1]
    assert census["zayatz"] == pytest.approx(np.count_nonzero(f == 1) / f.size)


def test_population_uniques_with_wildcard_class_sizes():
    """Compatible-record counts overlap: the class-size distribution is s_j = (records with
    f = j) / j, not necessarily whole."""
    rng = np.random.default_rng(21)
    f = sizes_from_key(rng.integers(0, 700, size=1000))
    for pi in (0.05, 0.3):  # a partition: both rules give the same estimates
        category = estimate_population_uniques(f, pi)
        wildcard = estimate_population_uniques(f, pi, missing="wildcard")
        assert wildcard.as_dict() == pytest.approx(category.as_dict(), nan_ok=True)
        assert wildcard.selected == category.selected
    # A record compatible with two others that are not compatible with each other: sizes
    # (2, 3, 2) are no partition, which the category rule rejects.
    overlapping = np.concatenate([f, [2, 3, 2]])
    with pytest.raises(ValueError, match="multiple of j"):
        estimate_population_uniques(overlapping, 0.05)
    est = estimate_population_uniques(overlapping, 0.05, missing="wildcard")
    assert est.sample_uniques == np.count_nonzero(f == 1)
    assert est.selected == "pitman" and np.isfinite(est.pitman)
    # one more unique-free record moves the estimate a little, not a lot
    assert est.pitman == pytest.approx(estimate_population_uniques(f, 0.05).pitman, rel=0.05)
    curve = population_uniqueness_curve(overlapping, [0.05, 1.0], missing="wildcard")
    assert curve[-1][1]["zayatz"] == pytest.approx(est.sample_uniques / overlapping.size)


def test_sample_risk_states_the_missing_rule_and_the_method():
    r = sample_risk(F_SMALL, sampling_fraction=0.5, bf_method="sdcmicro")
    assert r.to_dict()["missing"] == "category" and r.to_dict()["bf_method"] == "sdcmicro"
    assert "sdcMicro's default approximation" in str(r)
    assert "a missing value is a category of its own" in str(r)
    with pytest.raises(ValueError, match=r"'category'.*'wildcard'"):
        sample_risk(F_SMALL, sampling_fraction=0.5, missing="ignore")


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sampling_fraction": 0.0}, "in \\(0, 1\\]"),
        ({"sampling_fraction": 1.5}, "in \\(0, 1\\]"),
        ({"sampling_fraction": float("nan")}, "in \\(0, 1\\]"),
        ({"population_size": 3}, "at least the sample size"),
        ({}, "Give the sampling_fraction"),
        ({"sampling_fraction": 0.5, "population_size": 100}, "disagree"),
        ({"weights": np.ones(6)}, "class_key is needed"),
        ({"weights": np.ones(5), "class_key": KEY_SMALL}, "one value per record"),
        ({"weights": np.array([1, 1, 1, 0, 1, 1.0]), "class_key": KEY_SMALL}, "positive"),
        ({"weights": np.array([1, 1, 1, np.inf, 1, 1]), "class_key": KEY_SMALL}, "finite"),
        ({"weights": np.ones(6), "class_key": np.arange(6)}, "does not match"),
    ],
)
def test_validation_messages(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sample_risk(F_SMALL, **kwargs)


def test_invalid_class_sizes():
    with pytest.raises(ValueError, match="non-empty"):
        sample_risk(np.array([], dtype=int), sampling_fraction=0.5)
    with pytest.raises(ValueError, match="at least 1"):
        sample_risk(np.array([0, 1]), sampling_fraction=0.5)
    with pytest.raises(ValueError, match="multiple of j"):
        sample_risk(np.array([2, 1, 1]), sampling_fraction=0.5)


def test_sample_design_validates_and_describes_itself():
    from deid_core.risk import SampleDesign

    assert SampleDesign(0.1).describe() == "a sample with sampling fraction 0.1"
    assert SampleDesign(population_size=64000.0).population_size == 64000
    assert "population of 64,000" in SampleDesign(population_size=64000).describe()
    assert "sampling weights" in SampleDesign().describe()
    for kwargs, message in (
        ({"sampling_fraction": 0.0}, r"in \(0, 1\]"),
        ({"sampling_fraction": "a"}, "a number"),
        ({"population_size": 10.5}, "whole number"),
        ({"population_size": True}, "whole number"),
        ({"population_size": 0}, "at least 1"),
    ):
        with pytest.raises(ValueError, match=message):
            SampleDesign(**kwargs)
