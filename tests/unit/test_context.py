"""Release context: thresholds from cell sizes, public vs non-public verdicts, scenarios."""

import pytest

from deid_core.datasets.el_emam import el_emam_table
from deid_core.errors import DataError
from deid_core.masking import IntervalGroup
from deid_core.recipe import Recipe, Roles
from deid_core.risk import equivalence_class_sizes, risk_summary
from deid_core.risk.context import CELL_SIZE_PRECEDENTS, ReleaseContext

QIS = ["sex", "year_of_birth"]


@pytest.fixture
def table_5_summary():
    """El Emam & Malin Table 5: decade of birth, uniques and doubles removed."""
    recipe = Recipe(Roles(quasi_identifiers=tuple(QIS)), (IntervalGroup("year_of_birth", 10),))
    masked = recipe.apply(el_emam_table())
    return risk_summary(masked[equivalence_class_sizes(masked, QIS) >= 3], QIS)


def test_thresholds_from_minimum_cell_sizes():
    assert [round(ReleaseContext(min_cell_size=c).threshold, 2) for c in (3, 5, 11, 20)] == [
        0.33,
        0.2,
        0.09,
        0.05,
    ]
    assert CELL_SIZE_PRECEDENTS[20] == 0.05  # not the 0.02 printed in the seed's figure


def test_public_release_is_judged_by_the_maximum_risk():
    summary = risk_summary(el_emam_table(), QIS)
    verdict = ReleaseContext(public=True, min_cell_size=5).judge(summary)
    assert verdict.measure == "maximum risk" and verdict.value == 1.0
    assert not verdict.meets and verdict.excess == pytest.approx(0.8)
    assert "Above the threshold by 0.800" in str(verdict)


def test_non_public_release_takes_the_largest_scenario(table_5_summary):
    strict = table_5_summary.strict_average_risk
    context = ReleaseContext(public=False, min_cell_size=5, pr_attempt=0.4, pr_acquaintance=0.1)
    verdict = context.judge(table_5_summary)
    assert verdict.scenarios == pytest.approx(
        {"deliberate": 0.4 * strict, "acquaintance": 0.1 * strict, "breach": 0.27 * strict}
    )
    assert verdict.value == pytest.approx(0.4 * strict)
    assert "deliberate" in verdict.measure
    assert verdict.meets == (0.4 * strict <= 0.2)
    assert context.conditional_limit == pytest.approx(0.2 / 0.4)


def test_uniques_make_the_strict_average_the_maximum():
    summary = risk_summary(el_emam_table(), QIS)
    verdict = ReleaseContext(public=False, pr_attempt=0.1, pr_acquaintance=0.1).judge(summary)
    assert verdict.value == pytest.approx(0.27 * 1.0)  # breach x strict average (= max = 1)


def test_breach_may_use_the_maximum_risk(table_5_summary):
    context = ReleaseContext(public=False, breach_uses_maximum=True, pr_attempt=0.0)
    verdict = context.judge(table_5_summary)
    assert verdict.scenarios["breach"] == pytest.approx(0.27 * table_5_summary.max_risk)


@pytest.mark.parametrize(
    "kwargs",
    [{"min_cell_size": 1}, {"min_cell_size": 2.5}, {"pr_breach": 1.2}, {"pr_attempt": -0.1}],
)
def test_invalid_contexts_are_rejected(kwargs):
    with pytest.raises(DataError, match="Release context"):
        ReleaseContext(**kwargs)
