"""Sampling-weight role and missing quasi-identifier values as categories or wildcards."""

import json

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import DataError, RecipeError
from deid_core.recipe import ROLE_NAMES, Recipe, Roles
from deid_core.risk.classes import (
    compatible_class_sizes,
    equivalence_class_sizes,
    risk_summary,
)

NAN = np.nan


def small_frame() -> pd.DataFrame:
    # (1, NaN) matches both (1, x) and (1, y), which do not match each other.
    return pd.DataFrame(
        {
            "a": [1.0, 1.0, 1.0, 1.0, 2.0, NAN],
            "b": ["x", "x", None, "y", "x", "x"],
        }
    )


def brute_force(df: pd.DataFrame, qis: list[str]) -> np.ndarray:
    """O(n^2): count the records agreeing on every QI observed in both."""
    values = [df[c].to_numpy(dtype=object) for c in qis]
    observed = [df[c].notna().to_numpy() for c in qis]
    n = len(df)
    sizes = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for j in range(n):
            if all(
                not (obs[i] and obs[j]) or val[i] == val[j]
                for val, obs in zip(values, observed, strict=True)
            ):
                sizes[i] += 1
    return sizes


def random_frame(seed: int, n: int = 200, share_missing: float = 0.1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "q1": rng.integers(0, 3, n).astype(float),
            "q2": rng.choice(["a", "b", "c", "d"], n).astype(object),
            "q3": rng.integers(0, 5, n).astype(float),
        }
    )
    for column in frame.columns:
        frame.loc[rng.random(n) < share_missing, column] = None
    return frame


# ----------------------------------------------------------------- missing values
def test_hand_computed_category_mode():
    summary = risk_summary(small_frame(), ["a", "b"])
    assert summary.missing == "category"
    assert summary.class_size.tolist() == [2, 2, 1, 1, 1, 1]
    assert summary.n_classes == 5
    assert summary.uniques == 4
    assert summary.average_risk == pytest.approx(5 / 6)


def test_hand_computed_wildcard_mode():
    summary = risk_summary(small_frame(), ["a", "b"], missing="wildcard")
    assert summary.missing == "wildcard"
    assert summary.class_size.tolist() == [4, 4, 5, 2, 2, 5]
    assert compatible_class_sizes(small_frame(), ["a", "b"]).tolist() == [4, 4, 5, 2, 2, 5]
    assert summary.n_classes == 5  # distinct value patterns, missing counted as a value
    assert (summary.k, summary.uniques, summary.max_risk) == (2, 0, 0.5)
    expected = (1 / 4 + 1 / 4 + 1 / 5 + 1 / 2 + 1 / 2 + 1 / 5) / 6
    assert summary.average_risk == pytest.approx(expected)
    assert summary.strict_average_risk == 0.5  # k < 3: the maximum
    assert summary.to_dict()["missing"] == "wildcard"
    assert "a missing value matches any value" in str(summary)


@pytest.mark.parametrize("seed", range(5))
def test_wildcard_agrees_with_brute_force(seed):
    frame = random_frame(seed)
    qis = ["q1", "q2", "q3"]
    assert frame[qis].isna().any().all()
    sizes = compatible_class_sizes(frame, qis)
    np.testing.assert_array_equal(sizes, brute_force(frame, qis))
    summary = risk_summary(frame, qis, missing="wildcard")
    np.testing.assert_array_equal(summary.class_size, sizes)
    assert summary.average_risk == pytest.approx(np.mean(1 / sizes))


def test_wildcard_with_categorical_and_all_missing_records():
    frame = random_frame(7, n=120, share_missing=0.3)
    frame["q2"] = frame["q2"].astype("category")
    frame.loc[:4, ["q1", "q2", "q3"]] = None  # records missing on every QI match everyone
    qis = ["q1", "q2", "q3"]
    sizes = compatible_class_sizes(frame, qis)
    np.testing.assert_array_equal(sizes, brute_force(frame, qis))
    assert (sizes[:5] == len(frame)).all()


def test_weighted_wildcard_sums_compatible_weights():
    frame = small_frame()
    weights = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    sums = compatible_class_sizes(frame, ["a", "b"], weights=weights)
    # record 1 (1, x) is compatible with records 1, 2, 3 and 6
    assert sums.tolist() == pytest.approx([12.0, 12.0, 16.0, 7.0, 11.0, 17.0])


def test_no_missing_values_both_modes_agree():
    frame = random_frame(3, share_missing=0.0)
    qis = ["q1", "q2", "q3"]
    category = risk_summary(frame, qis)
    wildcard = risk_summary(frame, qis, missing="wildcard")
    np.testing.assert_array_equal(category.class_size, wildcard.class_size)
    for name in ("n_classes", "k", "uniques", "records_in_small_classes", "max_risk"):
        assert getattr(category, name) == getattr(wildcard, name)
    assert category.average_risk == pytest.approx(wildcard.average_risk)
    assert category.k_violations == wildcard.k_violations


@pytest.mark.parametrize("seed", range(5))
def test_wildcard_never_smaller_than_category(seed):
    frame = random_frame(seed, share_missing=0.2)
    qis = ["q1", "q2", "q3"]
    wildcard = compatible_class_sizes(frame, qis)
    category = equivalence_class_sizes(frame, qis)
    assert (wildcard >= category).all()


def test_wildcard_edge_cases():
    empty_qis = risk_summary(small_frame(), [], missing="wildcard")
    assert empty_qis.class_size.tolist() == [6] * 6
    assert compatible_class_sizes(small_frame().iloc[:0], ["a", "b"]).size == 0
    with pytest.raises(DataError, match="not in the data"):
        compatible_class_sizes(small_frame(), ["a", "zip"])


def test_unknown_missing_mode_is_rejected():
    with pytest.raises(DataError, match=r"'category'.*'wildcard'"):
        risk_summary(small_frame(), ["a", "b"], missing="ignore")


# ----------------------------------------------------------------- weight role
ROLES = Roles(
    quasi_identifiers=("sex", "age"),
    direct_identifiers=("name",),
    exposure="dose",
    outcome="case",
    record_id="id",
    weight="w",
)


def test_weight_round_trips_through_json():
    recipe = Recipe(ROLES)
    data = json.loads(recipe.to_json())
    assert data["schema_version"] == 2
    assert data["roles"]["weight"] == "w"
    assert Recipe.from_json(recipe.to_json()) == recipe
    assert ROLES.roles_of("w") == ["weight"]
    assert "w" in ROLES.columns()
    assert "weight" in ROLE_NAMES


def test_old_json_without_weight_loads_and_is_unchanged():
    old = {
        "schema_version": 1,
        "roles": {
            "quasi_identifiers": ["sex"],
            "direct_identifiers": [],
            "exposure": None,
            "outcome": None,
            "covariates": [],
            "record_id": None,
        },
        "steps": [],
    }
    recipe = Recipe.from_json(json.dumps(old))
    assert recipe.roles.weight is None
    # Written again as version 2, with no "weight" key when there is none.
    assert recipe.to_dict() == {**old, "schema_version": 2}


@pytest.mark.parametrize(
    ("changes", "clash"),
    [
        ({"weight": "sex"}, "a quasi-identifier"),
        ({"weight": "dose"}, "the exposure"),
        ({"weight": "case"}, "the outcome"),
        ({"weight": "age", "covariates": ("age",), "quasi_identifiers": ()}, "a covariate"),
        ({"weight": "id"}, "the record id"),
    ],
)
def test_weight_conflicting_with_other_roles_is_rejected(changes, clash):
    data = ROLES.to_dict() | changes
    with pytest.raises(RecipeError, match=f"sampling weight '{changes['weight']}'.*{clash}"):
        Roles.from_dict(data)


def test_weight_may_be_withheld_as_a_direct_identifier():
    roles = Roles(quasi_identifiers=("sex",), direct_identifiers=("w",), weight="w")
    assert roles.roles_of("w") == ["direct_identifier", "weight"]
    frame = pd.DataFrame({"sex": ["M", "F"], "w": [10.0, 20.0]})
    recipe = Recipe(roles)
    assert "w" not in recipe.release(frame).columns
    assert recipe.weights(frame).tolist() == [10.0, 20.0]


def test_weights_are_checked():
    recipe = Recipe(Roles(quasi_identifiers=("sex",), weight="w"))
    assert Recipe(Roles()).weights(pd.DataFrame({"w": [1.0]})) is None
    assert recipe.weights(pd.DataFrame({"sex": ["M"], "w": [3]})).tolist() == [3.0]
    bad = {
        "no weight column": pd.DataFrame({"sex": ["M"]}),
        "must be numeric": pd.DataFrame({"w": ["a"]}),
        "has missing values": pd.DataFrame({"w": [1.0, NAN]}),
        "positive and finite": pd.DataFrame({"w": [1.0, 0.0]}),
    }
    for message, frame in bad.items():
        with pytest.raises(DataError, match=message):
            recipe.weights(frame)


def test_workspace_uses_the_weight_role_for_open_data_risk():
    from deid_core.workspace import Workspace

    frame = pd.DataFrame({"sex": ["F", "F", "M", "M", "M"], "w": [10.0, 10.0, 4.0, 4.0, 4.0]})
    weighted = Recipe(Roles(quasi_identifiers=("sex",), weight="w"))
    result = Workspace(frame).sample_risk(weighted)
    # Population class sizes are the summed weights: F 20, M 12 (population 32).
    assert result.population_size == 32
    assert result.journalist_max == pytest.approx(1 / 12)
    assert result.journalist_average == pytest.approx((2 / 20 + 3 / 12) / 5)
