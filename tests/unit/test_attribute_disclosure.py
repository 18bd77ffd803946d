"""Attribute disclosure: l-diversity and t-closeness against Li et al.'s worked example,
sdcMicro's published test cases, a brute-force loop (equivalence classes, wildcards, records
within reach), and the sensitive role."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.errors import DataError, RecipeError
from deid_core.masking import (
    IntervalGroup,
    LocalSuppression,
    RecordSuppression,
    Subsample,
    UniformNoise,
)
from deid_core.recipe import Recipe, Roles
from deid_core.risk import attribute, attribute_disclosure
from deid_core.risk.attribute import attribute_disclosure_from_counts
from deid_core.workspace import Workspace


def brute_force(frame, qis, column, missing="category", members_of=None):
    """Per record (distinct l, entropy l, EMD) straight from the definitions: the class of
    record i is every record agreeing with it on the quasi-identifiers (missing as a value,
    or as a wildcard), or ``members_of(i)``."""
    values = frame[column]
    n = len(frame)
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    observed_all = [v for v in values if not pd.isna(v)]
    levels = sorted(set(observed_all))

    def key(v):
        return ("missing",) if pd.isna(v) else ("value", v)

    overall = {}
    for v in values:
        overall[key(v)] = overall.get(key(v), 0) + 1 / n

    def agrees(i, j):
        for c in qis:
            a, b = frame[c].iloc[i], frame[c].iloc[j]
            if missing == "wildcard" and (pd.isna(a) or pd.isna(b)):
                continue
            if pd.isna(a) and pd.isna(b):
                continue
            if pd.isna(a) or pd.isna(b) or a != b:
                return False
        return True

    rows = []
    for i in range(n):
        members = members_of(i) if members_of else [j for j in range(n) if agrees(i, j)]
        if not members:
            rows.append((0, math.nan, math.nan))
            continue
        counts = {}
        for j in members:
            counts[key(values.iloc[j])] = counts.get(key(values.iloc[j]), 0) + 1
        size = len(members)
        entropy = -sum(c / size * math.log(c / size) for c in counts.values())
        if numeric:
            mine = [values.iloc[j] for j in members if not pd.isna(values.iloc[j])]
            if not mine:
                emd = math.nan
            elif len(levels) == 1:
                emd = 0.0
            else:
                total, p_cum, q_cum = 0.0, 0.0, 0.0
                for level in levels:
                    p_cum += sum(v == level for v in mine) / len(mine)
                    q_cum += sum(v == level for v in observed_all) / len(observed_all)
                    total += abs(p_cum - q_cum)
                emd = total / (len(levels) - 1)
        else:
            emd = 0.5 * sum(
                abs(counts.get(k, 0) / size - overall.get(k, 0)) for k in set(counts) | set(overall)
            )
        rows.append((len(counts), math.exp(entropy), emd))
    return np.array(rows, dtype=float)


def figures(result):
    return np.column_stack([result.distinct_l, result.entropy_l, result.emd])


# ---------------------------------------------------------------------------- worked examples
def test_li_et_al_salary_example_ordered_distance():
    """Li, Li & Venkatasubramanian (2007), section 4: salaries 3k..11k, one record each; the
    class {3k, 4k, 5k} is 0.375 from the whole table, {6k, 8k, 11k} 0.167."""
    frame = pd.DataFrame(
        {
            "zip": ["a", "a", "a", "b", "b", "b", "c", "c", "c"],
            "salary": [3, 4, 5, 6, 8, 11, 7, 9, 10],
        }
    )
    result = attribute_disclosure(frame, ["zip"], "salary")
    assert result.distance == "ordered"
    assert result.emd[0] == pytest.approx(0.375)
    assert result.emd[3] == pytest.approx(1 / 6)
    assert result.t == pytest.approx(0.375)
    assert result.l_distinct == 3 and result.l_entropy == pytest.approx(3.0)
    assert result.n_homogeneous == 0


def test_equal_distance_is_the_total_variation():
    frame = pd.DataFrame({"g": [1, 1, 1, 1, 2, 2], "d": ["flu", "flu", "flu", "hiv", "hiv", "hiv"]})
    result = attribute_disclosure(frame, ["g"], "d")
    assert result.distance == "equal"
    # class 1: flu 3/4, hiv 1/4 against 1/2, 1/2 -> 1/4; class 2: hiv only -> 1/2
    assert result.emd.tolist() == pytest.approx([0.25] * 4 + [0.5] * 2)
    assert result.distinct_l.tolist() == [2, 2, 2, 2, 1, 1]
    assert result.homogeneous.tolist() == [False] * 4 + [True] * 2
    assert result.entropy_l[0] == pytest.approx(
        math.exp(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    )
    assert result.l_distinct == 1 and result.n_homogeneous == 2


def test_a_binary_outcome_gets_the_same_distance_either_way():
    frame = pd.DataFrame({"g": [1, 1, 1, 2, 2, 2, 2], "y": [0, 1, 1, 0, 0, 0, 1]})
    as_numbers = attribute_disclosure(frame, ["g"], "y")
    as_text = attribute_disclosure(frame.assign(y=frame["y"].map({0: "no", 1: "yes"})), ["g"], "y")
    assert as_numbers.distance == "ordered" and as_text.distance == "equal"
    assert np.allclose(as_numbers.emd, as_text.emd)


def test_sdcmicro_published_cases():
    """sdcMicro's tests/testthat/test_ldiversity.R: missing key values and several sensitive
    variables (distinct l per record)."""
    data = pd.DataFrame(
        {
            "sex": ["female", "female", "female", "male", "male", "female", "female"],
            "occupation": [None, None, None, "teacher", "teacher", "nurse", "nurse"],
            "ethnicity": ["other", "other", "other", "other", "other", "majority", "majority"],
            "sensitive": [1, 0, 2, 1, 0, 0, 1],
        }
    )
    keys = ["sex", "occupation", "ethnicity"]
    for missing in ("category", "wildcard"):
        result = attribute_disclosure(data, keys, "sensitive", missing)
        assert result.distinct_l.tolist() == [3, 3, 3, 2, 2, 2, 2]
    multi = pd.DataFrame({"key": [1, 1, 1], "sens1": ["A", "B", "A"], "sens2": ["X", "Y", "Z"]})
    assert attribute_disclosure(multi, ["key"], "sens1").distinct_l.tolist() == [2, 2, 2]
    assert attribute_disclosure(multi, ["key"], "sens2").distinct_l.tolist() == [3, 3, 3]


def test_missing_sensitive_values_count_as_a_value_of_their_own():
    frame = pd.DataFrame({"g": [1, 1, 2, 2], "s": ["a", None, None, None]})
    result = attribute_disclosure(frame, ["g"], "s")
    assert result.distinct_l.tolist() == [2, 2, 1, 1]
    numeric = attribute_disclosure(frame.assign(s=[1.0, np.nan, np.nan, np.nan]), ["g"], "s")
    assert np.isnan(numeric.emd[2])  # no observed value: no ordered distance
    assert numeric.emd[0] == 0.0  # a single observed value everywhere


def test_bad_input_is_a_clear_message(monkeypatch):
    frame = pd.DataFrame({"g": [1, 2], "s": [0, 1]})
    with pytest.raises(DataError, match="no column"):
        attribute_disclosure(frame, ["g"], "nope")
    with pytest.raises(DataError, match="quasi-identifier"):
        attribute_disclosure(frame, ["g", "s"], "s")
    monkeypatch.setattr(attribute, "MAX_OVERLAP_WORK", 100)
    with pytest.raises(DataError, match="too many to count"):
        attribute_disclosure_from_counts(
            lambda selected: selected.astype(int),
            pd.Series(np.arange(10, dtype=float)),
            "s",
            "wildcard",
        )


# ---------------------------------------------------------------------------- brute force
@settings(max_examples=15, deadline=None)
@given(st.integers(4, 25), st.integers(0, 2**31 - 1))
def test_classes_and_wildcards_agree_with_brute_force(n, seed):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 3, n).astype(float),
            "b": rng.choice(["x", "y"], n),
            "num": rng.integers(0, 5, n).astype(float),
            "cat": rng.choice(["p", "q", "r"], n).astype(object),
        }
    )
    frame.loc[rng.random(n) < 0.2, "a"] = np.nan
    frame.loc[rng.random(n) < 0.15, "num"] = np.nan
    frame.loc[rng.random(n) < 0.15, "cat"] = None
    for column in ("num", "cat"):
        for missing in ("category", "wildcard"):
            result = attribute_disclosure(frame, ["a", "b"], column, missing)
            expected = brute_force(frame, ["a", "b"], column, missing)
            assert np.allclose(figures(result), expected, equal_nan=True)


def test_within_reach_classes_agree_with_brute_force():
    rng = np.random.default_rng(42)
    n = 60
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 40, n),
            "weight": rng.normal(70, 10, n).round(1),
            "low": rng.integers(0, 2, n),
            "bwt": rng.normal(3000, 500, n).round(-1),
        }
    )
    roles = Roles(quasi_identifiers=("sex", "age", "weight"), outcome="low", sensitive=("bwt",))
    recipe = Recipe(roles, (UniformNoise("weight", 3.0, seed=9), IntervalGroup("age", width=5)))
    workspace = Workspace(frame)
    released = workspace.masked_frame(recipe)
    coarse_age = IntervalGroup("age", width=5).apply(frame["age"])

    def members_of(i):  # released records within reach of person i's true values
        return [
            j
            for j in range(n)
            if released["sex"][j] == frame["sex"][i]
            and released["age"][j] == coarse_age[i]
            and abs(released["weight"][j] - frame["weight"][i]) <= 3.0 + 1e-9
        ]

    for column in ("low", "bwt"):
        result = workspace.attribute_disclosure(recipe, column)
        assert result.classes == "within_reach"
        expected = brute_force(released, [], column, members_of=members_of)
        assert np.allclose(figures(result), expected, equal_nan=True)


@pytest.mark.parametrize("data_step", ["subsample", "local_suppression", "record_suppression"])
def test_whole_data_steps_measure_the_released_records(data_step):
    """After subsampling or suppression the classes are those of the released records (a
    suppressed value matches any value), one figure per released record, as brute force on
    the released file gives."""
    rng = np.random.default_rng(5)
    n = 80
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 30, n),
            "race": rng.choice(["a", "b", "c"], n),
            "low": rng.integers(0, 2, n),
        }
    )
    roles = Roles(quasi_identifiers=("sex", "age", "race"), outcome="low")
    step = {
        "subsample": Subsample(fraction=0.5, seed=3),
        "local_suppression": LocalSuppression(k=3),
        "record_suppression": RecordSuppression(k=2, limit=0.5),
    }[data_step]
    recipe = Recipe(roles, (IntervalGroup("age", width=2),), data_steps=(step,))
    workspace = Workspace(frame)
    released = workspace.masked_frame(recipe).reset_index(drop=True)
    result = workspace.attribute_disclosure(recipe, "low")
    missing = "wildcard" if data_step == "local_suppression" else "category"
    assert len(result.distinct_l) == len(released)
    if data_step != "local_suppression":
        assert len(released) < n
    expected = brute_force(released, list(roles.quasi_identifiers), "low", missing)
    assert np.allclose(figures(result), expected, equal_nan=True)


def test_the_workspace_uses_the_recipes_classes_and_missing_rule():
    frame = pd.DataFrame(
        {"g": [1.0, 1, 2, 2, np.nan], "h": ["x", "x", "x", "y", "y"], "s": [0, 1, 0, 0, 1]}
    )
    roles = Roles(quasi_identifiers=("g", "h"), outcome="s")
    workspace = Workspace(frame)
    category = workspace.attribute_disclosure(Recipe(roles), "s")
    assert category.classes == "classes"
    assert category.distinct_l.tolist() == [2, 2, 1, 1, 1]
    wildcard = workspace.attribute_disclosure(Recipe(roles), "s", "wildcard")
    assert wildcard.classes == "wildcard"
    assert wildcard.distinct_l.tolist() == [2, 2, 1, 2, 2]
    with pytest.raises(DataError, match="quasi-identifier"):
        workspace.attribute_disclosure(Recipe(roles), "g")


# ---------------------------------------------------------------------------- the role
def test_the_sensitive_role_round_trips_and_old_recipes_stay_readable():
    roles = Roles(quasi_identifiers=("age",), outcome="low", sensitive=("hiv", "income"))
    recipe = Recipe(roles)
    again = Recipe.from_json(recipe.to_json())
    assert again.roles.sensitive == ("hiv", "income")
    assert again.roles.roles_of("hiv") == ["sensitive"]
    assert again.roles.attribute_targets == ("low", "hiv", "income")
    plain = Recipe(Roles(quasi_identifiers=("age",)))
    assert "sensitive" not in plain.to_dict()["roles"]  # older readers see nothing new
    old = '{"roles": {"quasi_identifiers": ["age"], "outcome": "low"}, "steps": []}'
    assert Recipe.from_json(old).roles.sensitive == ()
    assert Recipe.from_json(old).roles.attribute_targets == ("low",)


def test_the_sensitive_role_is_validated():
    with pytest.raises(RecipeError, match="cannot also be a quasi-identifier"):
        Roles(quasi_identifiers=("age", "hiv"), sensitive=("hiv",))
    with pytest.raises(RecipeError, match="never released"):
        Roles(direct_identifiers=("name",), sensitive=("name",))
    with pytest.raises(RecipeError, match="list of column names"):
        Roles(sensitive="hiv")
    outcome_qi = Roles(quasi_identifiers=("age", "low"), outcome="low", sensitive=("hiv",))
    assert outcome_qi.attribute_targets == ("hiv",)
