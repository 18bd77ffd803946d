"""The risk that fits the mask: which measure judges a release (risk_basis), the record-linkage
risk of perturbed quasi-identifiers against brute-force loops, and the figures that follow it
(verdict, security, assessment)."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import DataError
from deid_core.masking import (
    AbsoluteRound,
    GaussianNoise,
    IntervalGroup,
    KernelSmooth,
    MergeLevels,
    RelativeRound,
    UniformNoise,
)
from deid_core.recipe import Recipe, Roles
from deid_core.risk import PerturbedRisk, RiskSummary, perturbed_risk, risk_basis
from deid_core.risk.context import ReleaseContext
from deid_core.tradeoff.rumap import security_of, security_value
from deid_core.workspace import Workspace

ROLES = Roles(quasi_identifiers=("sex", "age", "weight"), exposure="weight", outcome="sick")


def small_frame(n: int = 40, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 30, n),
            "weight": rng.normal(70, 12, n).round(1),
            "sick": rng.integers(0, 2, n),
        }
    )


# ---------------------------------------------------------------------------- the decision
def test_generalising_recipes_are_judged_by_classes():
    recipe = Recipe(
        ROLES,
        (
            IntervalGroup("age", width=5.0, release="label"),
            RelativeRound("weight", 2),
            MergeLevels("sex", groups={"any": ["F", "M"]}),
        ),
    )
    basis = risk_basis(recipe)
    assert basis.kind == "classes" and basis.class_based
    assert basis.perturbed == () and basis.generalised == ("sex", "age", "weight")
    assert dict(basis.matches)["age"].startswith("exact value (generalised")
    assert risk_basis(Recipe(ROLES)).matches[0][1] == "exact value (released as it is)"


def test_noise_on_a_quasi_identifier_calls_for_record_linkage():
    recipe = Recipe(ROLES, (UniformNoise("weight", 2.0, seed=1), IntervalGroup("age", width=5)))
    basis = risk_basis(recipe)
    assert basis.kind == "record_linkage"
    assert basis.perturbed == ("weight",) and basis.generalised == ("sex", "age")
    assert "uniform noise" in dict(basis.matches)["weight"]
    assert "weight" in basis.reason and "exactly" in basis.reason


def test_noise_on_a_column_that_is_not_a_quasi_identifier_keeps_the_classes():
    roles = Roles(quasi_identifiers=("sex", "age"), exposure="weight", outcome="sick")
    assert risk_basis(Recipe(roles, (GaussianNoise("weight", 0.1, seed=1),))).class_based


def test_smoothing_a_quasi_identifier_is_perturbation():
    roles = Roles(quasi_identifiers=("x", "y", "z"), outcome="sick")
    step = KernelSmooth("z", bandwidth=1.0, locations=("x", "y"))
    assert risk_basis(Recipe(roles, (step,))).perturbed == ("z",)


def test_interval_means_are_generalisation_with_the_classes_of_the_labels():
    """Released interval means relabel the intervals one to one (a mean lies inside its
    interval), so an intruder who knows a true value matches its interval exactly: the
    classes are those of the labels and the class-based measure applies."""
    frame = small_frame(200)
    means = IntervalGroup("weight", width=10.0, release="mean")
    labels = IntervalGroup("weight", width=10.0, release="label")
    assert not means.perturbative
    assert risk_basis(Recipe(ROLES, (means,))).class_based
    workspace = Workspace(frame)
    by_mean = workspace.risk(Recipe(ROLES, (means,))).class_size
    by_label = workspace.risk(Recipe(ROLES, (labels,))).class_size
    assert np.array_equal(by_mean, by_label)


# ---------------------------------------------------------------------------- brute force
def brute_force(original: pd.DataFrame, released: pd.DataFrame, recipe: Recipe, reach: dict):
    """Per record: within-reach probability, candidate count, nearest-rule probability."""
    qis = list(recipe.roles.quasi_identifiers)
    basis = risk_basis(recipe)
    source = original.copy()
    for column in basis.generalised:  # the intruder coarsens their copy the same way
        for step in recipe.steps_for(column):
            source[column] = step.apply(source[column])
    sds = {c: float(original[c].std(ddof=1)) for c in basis.perturbed}
    n = len(original)
    within, candidates, nearest = [], [], []
    for i in range(n):
        matches = []
        distances = []
        for j in range(n):
            equal = all(
                released[c].iloc[i] == source[c].iloc[j] for c in qis if c not in basis.perturbed
            )
            inside = all(
                abs(released[c].iloc[i] - source[c].iloc[j]) <= reach[c] * (1 + 1e-9)
                for c in basis.perturbed
            )
            if equal and inside:
                matches.append(j)
            if equal:
                distances.append(
                    (
                        math.sqrt(
                            sum(
                                ((released[c].iloc[i] - source[c].iloc[j]) / sds[c]) ** 2
                                for c in basis.perturbed
                            )
                        ),
                        j,
                    )
                )
        candidates.append(len(matches))
        within.append(1 / len(matches) if i in matches else 0.0)
        best = min(d for d, _ in distances)
        tied = [j for d, j in distances if d <= best * (1 + 1e-12) + 1e-12]
        nearest.append(1 / len(tied) if i in tied else 0.0)
    return np.array(within), np.array(candidates), np.array(nearest)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_record_linkage_agrees_with_brute_force(seed):
    frame = small_frame(40, seed)
    recipe = Recipe(
        ROLES, (UniformNoise("weight", 4.0, seed=seed), IntervalGroup("age", width=5.0))
    )
    workspace = Workspace(frame)
    released = workspace.masked_frame(recipe)
    result = workspace.perturbed_risk(recipe)
    assert result.reach == {"weight": 4.0}
    within, candidates, nearest = brute_force(frame, released, recipe, result.reach)
    assert np.array_equal(result.candidates, candidates)
    assert np.allclose(result.record_risk, within)
    assert result.max_risk == pytest.approx(within.max())
    assert result.within_reach_average == pytest.approx(within.mean())
    assert result.linkage_rate == pytest.approx(nearest.mean())
    assert result.certain == int((within == 1).sum())
    assert result.fewest_candidates == int(candidates[within > 0].min())
    share = result.interval.share
    assert result.average_risk == pytest.approx(max(within.mean(), nearest.mean(), share))
    strict = result.average_risk if result.max_risk <= 1 / 3 else result.max_risk
    assert result.strict_average_risk == pytest.approx(strict)
    assert result.anonymity_score == pytest.approx(1 - result.average_risk)
    assert result.out_of_reach == 0  # uniform noise never leaves its half-width


def test_worked_example_by_hand():
    """Four people; weights 60, 61, 70, 90, noise moves them to 62, 60, 71, 90 (recorded as
    the released file); reach +/-2. Within reach of 62: 60, 61 (own: 60) -> 1/2; of 60: 60,
    61 (own: 61) -> 1/2; of 71: 70 -> 1; of 90: 90 -> 1. Maximum 1, mean 3/4, 2 certain
    links."""
    original = pd.DataFrame({"w": [60.0, 61.0, 70.0, 90.0]})
    released = pd.DataFrame({"w": [62.0, 60.0, 71.0, 90.0]})
    recipe = Recipe(Roles(quasi_identifiers=("w",)), (UniformNoise("w", 2.0, seed=0),))
    result = perturbed_risk(recipe, original, released)
    assert result.candidates.tolist() == [2, 2, 1, 1]
    assert result.record_risk.tolist() == [0.5, 0.5, 1.0, 1.0]
    assert (result.max_risk, result.within_reach_average, result.certain) == (1.0, 0.75, 2)
    # nearest: 62 -> 61 (not its own 60), 60 -> 60 (not its own 61), 71 -> 70, 90 -> 90
    assert result.linkage_rate == 0.5
    assert result.average_risk == 0.75 and result.average_source == "within reach"
    assert result.fewest_candidates == 1
    assert "within +/-2 of the released value" in dict(result.matches)["w"]


def test_gaussian_reach_is_two_sd_and_records_out_of_reach_have_no_risk():
    frame = small_frame(300, 5)
    recipe = Recipe(ROLES, (GaussianNoise("weight", 0.3, seed=4),))
    workspace = Workspace(frame)
    result = workspace.perturbed_risk(recipe)
    assert result.reach["weight"] == pytest.approx(2 * 0.3 * frame["weight"].std())
    out = ~result.within_reach.correct
    assert result.out_of_reach == int(out.sum()) > 0
    assert np.all(result.record_risk[out] == 0)


def test_a_step_without_a_stated_reach_uses_the_95th_percentile_of_the_change():
    frame = small_frame(100, 6)
    frame["x"] = np.arange(100.0)
    frame["y"] = np.zeros(100)
    roles = Roles(quasi_identifiers=("sex", "weight"))
    recipe = Recipe(roles, (KernelSmooth("weight", bandwidth=3.0, locations=("x", "y")),))
    workspace = Workspace(frame)
    released = workspace.masked_frame(recipe)
    result = workspace.perturbed_risk(recipe)
    change = np.abs(released["weight"] - frame["weight"])
    assert result.reach["weight"] == pytest.approx(float(np.quantile(change, 0.95)))


def test_an_uploaded_source_is_linked_through_the_record_id():
    frame = small_frame(60, 7)
    frame["pid"] = np.arange(60) + 1000
    roles = Roles(quasi_identifiers=("sex", "age", "weight"), record_id="pid")
    recipe = Recipe(roles, (UniformNoise("weight", 3.0, seed=2),))
    workspace = Workspace(frame)
    own = workspace.perturbed_risk(recipe)
    bigger = pd.concat([frame, frame.assign(pid=frame["pid"] + 5000)], ignore_index=True)
    linked = workspace.perturbed_risk(recipe, source=bigger)
    # every person now has a double in the source: at least two candidates within reach
    assert linked.max_risk <= 0.5 + 1e-12 < own.max_risk
    assert np.allclose(linked.record_risk, own.record_risk / 2)


def test_class_based_recipes_have_no_record_linkage_risk():
    with pytest.raises(DataError, match="equivalence classes"):
        perturbed_risk(Recipe(ROLES), small_frame(), small_frame())


# ---------------------------------------------------------------------------- what follows
def test_the_verdict_names_the_measure_and_judges_the_linkage_risk():
    frame = small_frame(80, 8)
    workspace = Workspace(frame)
    noisy = Recipe(ROLES, (UniformNoise("weight", 5.0, seed=3),))
    judged = workspace.judged_risk(noisy)
    assert judged.basis == "record_linkage" and isinstance(judged.perturbed, PerturbedRisk)
    assert judged.max_risk == judged.perturbed.max_risk and judged.unit == "records"
    public = ReleaseContext().judge(judged)
    assert public.measure == "maximum record-linkage risk"
    assert public.value == judged.max_risk
    private = ReleaseContext(public=False).judge(judged)
    assert private.measure.startswith("overall record-linkage risk (")
    assert private.scenarios["deliberate"] == pytest.approx(0.3 * judged.strict_average_risk)
    # generalising recipes: the class risk and the same words as before
    coarse = Recipe(ROLES, (RelativeRound("weight", 1),))
    summary = workspace.judged_risk(coarse)
    assert summary.basis == "classes" and isinstance(summary.classes, RiskSummary)
    assert summary.max_risk == summary.classes.max_risk
    assert ReleaseContext().judge(summary).measure == "maximum risk"


def test_the_assessment_and_the_security_axis_follow_the_judged_measure():
    frame = small_frame(80, 9)
    workspace = Workspace(frame)
    noisy = Recipe(ROLES, (UniformNoise("weight", 5.0, seed=3),))
    assessment = workspace.assess(noisy, n_replicates=2)
    judged = assessment.judged
    assert assessment.perturbed is judged.perturbed and judged.basis == "record_linkage"
    # exact matching under the default rule never links noise: the old contradictory figure
    assert assessment.linkage.anonymity_score == 1.0
    assert security_of(assessment, "identifiability") == pytest.approx(1 - judged.average_risk)
    assert security_of(assessment, "average_risk") == pytest.approx(1 - judged.average_risk)
    assert security_of(assessment, "max_risk") == pytest.approx(1 - judged.max_risk)
    out = assessment.to_dict()["judged_risk"]
    assert out["basis"] == "record_linkage" and out["max_risk"] == judged.max_risk
    coarse = workspace.assess(Recipe(ROLES, (RelativeRound("weight", 1),)), n_replicates=2)
    assert coarse.perturbed is None and coarse.judged.judged is coarse.risk
    assert security_of(coarse, "identifiability") == coarse.linkage.anonymity_score
    assert coarse.to_dict()["judged_risk"]["basis"] == "classes"
    assert math.isnan(security_value("identifiability", coarse.risk, None))


def test_rounding_and_noise_on_one_column_add_their_reach():
    frame = small_frame(50, 10)
    steps = (AbsoluteRound("weight", base=2.0), UniformNoise("weight", 1.0, seed=5))
    result = Workspace(frame).perturbed_risk(Recipe(ROLES, steps))
    assert result.reach == {"weight": 2.0}  # half the base plus the half-width
    assert np.all(result.within_reach.correct)


def test_perturbed_categories_are_matched_as_released():
    """A categorical quasi-identifier with a perturbative step (as PRAM will be) is matched
    on its released category: a changed category loses the own record."""
    frame = pd.DataFrame({"c": list("aabbccdd"), "w": [1.0, 2, 3, 4, 5, 6, 7, 8]})
    released = frame.assign(c=list("abbbccdd"))
    recipe = Recipe(Roles(quasi_identifiers=("c", "w")), (UniformNoise("w", 0.1, seed=0),))

    class Flip(MergeLevels):
        _PERTURBATIVE = True

    flip = Flip("c", groups={"b": ["a"]})
    recipe = Recipe(recipe.roles, (*recipe.steps, flip))
    result = perturbed_risk(recipe, frame, released.assign(w=frame["w"]))
    assert "released category" in dict(result.matches)["c"]
    assert result.record_risk[1] == 0  # its category changed: never linked to its own record
    assert result.record_risk[0] == 1


def test_combinations_of_perturbed_columns_use_every_reach():
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"a": rng.normal(0, 3, 30), "b": rng.normal(0, 3, 30)})
    recipe = Recipe(
        Roles(quasi_identifiers=("a", "b")),
        (UniformNoise("a", 1.0, seed=1), UniformNoise("b", 0.5, seed=2)),
    )
    workspace = Workspace(frame)
    released = workspace.masked_frame(recipe)
    result = workspace.perturbed_risk(recipe)
    expected = [
        sum(
            abs(released["a"][i] - frame["a"][j]) <= 1.0 + 1e-9
            and abs(released["b"][i] - frame["b"][j]) <= 0.5 + 1e-9
            for j in range(30)
        )
        for i in range(30)
    ]
    assert result.candidates.tolist() == expected
    assert list(itertools.islice(result.reach, 2)) == ["a", "b"]
