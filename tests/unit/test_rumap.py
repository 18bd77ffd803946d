"""The R-U map: Cologne's curve and its fit, sweeps, the Pareto frontier."""

import numpy as np
import pandas as pd
import pytest

from deid_core.datasets.cohort import synthetic_cohort
from deid_core.errors import RecipeError
from deid_core.masking import (
    IntervalGroup,
    RecordSuppression,
    RelativeRound,
    Truncate,
    UniformNoise,
)
from deid_core.recipe import Recipe, Roles
from deid_core.tradeoff.rumap import (
    cologne_curve,
    fit_cologne_theta,
    pareto_front,
    security_of,
    sweep,
)
from deid_core.workspace import Workspace

ROLES = Roles(
    quasi_identifiers=("city", "sex", "age_at_exposure", "stomach_dose_gy"),
    exposure="stomach_dose_gy",
    outcome="stomach_cancer",
    record_id="person_id",
)


@pytest.fixture(scope="module")
def workspace() -> Workspace:
    return Workspace(synthetic_cohort(n=4000))


def test_cologne_curve_endpoints_and_large_theta():
    assert cologne_curve(np.array([0.0]), 178)[0] == pytest.approx(1.0)
    assert cologne_curve(np.array([1.0]), 178)[0] == 0.0
    # theta = 1 is the straight line security = 1 - AP.
    assert cologne_curve(np.array([0.25, 0.5]), 1.0) == pytest.approx([0.75, 0.5])
    # Direct formula where it is numerically safe.
    ap = np.array([0.9, 0.99])
    assert cologne_curve(ap, 50) == pytest.approx((1 - ap**50) ** (1 / 50))


def test_theta_fit_recovers_a_known_theta():
    ap = np.array([0.95, 0.98, 0.99, 0.995, 0.999])
    security = cologne_curve(ap, 178.0)
    assert fit_cologne_theta(ap, security) == pytest.approx(178.0, rel=1e-3)
    assert fit_cologne_theta([0.9], [0.5]) is None


def test_sweep_of_significant_digits_trades_security_for_utility(workspace):
    recipe = Recipe(
        ROLES, (RelativeRound("stomach_dose_gy", 3), Truncate("age_at_exposure", decimals=0))
    )
    progress = []
    points = sweep(workspace, recipe, 0, [4, 3, 2, 1], progress=lambda d, t: progress.append(d))
    assert progress == [1, 2, 3, 4]
    assert [p.value for p in points] == [4, 3, 2, 1]
    securities = [p.security for p in points]
    assert securities == sorted(securities)  # fewer digits, more security
    assert all(0 <= s <= 1 for s in securities)
    assert all(p.analysis_potential is not None and p.analysis_potential > 0 for p in points)
    # Security is 1 - Cologne's identifiability score under the same-masking rule.
    assert points[0].security == pytest.approx(
        1 - points[0].assessment.linkage.identifiability_score
    )
    assert security_of(points[0].assessment, "average_risk") == pytest.approx(
        1 - points[0].assessment.risk.average_risk
    )


def test_sweep_of_noise_uses_replicates(workspace):
    recipe = Recipe(ROLES, (UniformNoise("stomach_dose_gy", 0.1, floor=0.0, seed=5),))
    points = sweep(workspace, recipe, 0, [0.01, 0.5], n_replicates=10)
    assert all(p.assessment.utility.replicates.n_replicates == 10 for p in points)
    assert points[0].analysis_potential > points[1].analysis_potential


def test_a_value_record_suppression_cannot_reach_is_a_point_that_says_why(workspace):
    """Before, one such value ended the whole sweep with its error (seen on the R-U map page
    after applying a searched recipe with record suppression)."""
    recipe = Recipe(
        ROLES,
        (IntervalGroup("age_at_exposure", width=20), IntervalGroup("stomach_dose_gy", width=1)),
        data_steps=(RecordSuppression(k=5, limit=0.05),),
    )
    with pytest.raises(RecipeError, match="cannot reach k"):
        workspace.release(recipe.with_step_params(1, width=0.01))
    points = sweep(workspace, recipe, 1, [0.01, 1, 5])
    unreachable = [p for p in points if p.unreachable]
    assert [p.value for p in unreachable] == [0.01]
    (point,) = unreachable
    assert "cannot reach k = 5 within the limit" in point.unreachable
    assert point.assessment is None and point.analysis_potential is None
    assert np.isnan(point.security) and point not in pareto_front(points)
    reached = [p for p in points if not p.unreachable]
    assert [p.value for p in reached] == [1, 5]
    for p in reached:  # each drawn point is the figure of its recipe's release
        judged = workspace.judged_risk(recipe.with_step_params(1, width=p.value), "category")
        assert p.assessment.judged.max_risk == pytest.approx(judged.max_risk)


def test_sweep_rejects_a_missing_step(workspace):
    with pytest.raises(RecipeError, match="not in the recipe"):
        sweep(workspace, Recipe(ROLES), 0, [1])


def test_pareto_front_drops_dominated_points(workspace):
    recipe = Recipe(ROLES, (RelativeRound("stomach_dose_gy", 3),))
    points = sweep(workspace, recipe, 0, [4, 3, 2, 1])
    front = pareto_front(points)
    assert front
    for p in points:
        if p not in front:
            assert any(
                q.security >= p.security and q.analysis_potential >= p.analysis_potential
                for q in front
            )


def test_points_without_a_model_have_no_utility():
    frame = pd.DataFrame({"a": range(20), "x": np.linspace(0, 2, 20), "y": [0] * 20})
    roles = Roles(quasi_identifiers=("a",), exposure="x", outcome="y")
    points = sweep(Workspace(frame), Recipe(roles, (RelativeRound("x", 2),)), 0, [2, 1])
    assert all(p.analysis_potential is None for p in points)
    assert "no events" in points[0].assessment.utility.error


def test_records_at_risk_name_the_quasi_identifier_to_coarsen():
    from deid_core.risk.records_at_risk import records_at_risk

    # Record 4 is alone because of its age; records 1-3 share everything.
    frame = pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5, 6],
            "sex": ["F", "F", "F", "F", "M", "M"],
            "age": [40, 40, 40, 41, 50, 51],
        }
    )
    recipe = Recipe(Roles(quasi_identifiers=("sex", "age"), record_id="id"))
    table = records_at_risk(Workspace(frame), recipe, top=3, min_class_size=2)
    assert table["record"].tolist() == [4, 5, 6]
    assert table["class size"].tolist() == [1, 1, 1]
    assert table["drop or coarsen to reach 2"].tolist() == ["age", "age", "age"]
    assert table["age (original)"].tolist() == [41, 50, 51]
    wide = records_at_risk(Workspace(frame), recipe, top=1, min_class_size=5)
    assert wide["drop or coarsen to reach 5"].tolist() == ["two or more"]  # age alone gives 4
