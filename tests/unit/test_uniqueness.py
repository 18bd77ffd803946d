"""Record uniqueness over all combinations (the NAACCR RU program): counts against brute-force
pandas groupby, the OLS weights against an independent fit, the tables and the errors."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core.errors import DataError, LimitError
from deid_core.risk.uniqueness import (
    DEFAULT_SMALL_CLASS,
    MAX_KEYS,
    PUBLIC_THRESHOLD,
    RESEARCH_THRESHOLD,
    CombinationCounts,
    UniquenessResult,
    combination_masks,
    fit_weights,
    iteration_table,
    record_uniqueness,
)


def brute_force(frame: pd.DataFrame, variables, small_class=DEFAULT_SMALL_CLASS):
    """(uniques, small) by a pandas groupby that keeps missing values as a group."""
    sizes = frame.groupby(list(variables), dropna=False, sort=False)[variables[0]].transform("size")
    sizes = sizes.to_numpy()
    return int((sizes == 1).sum()), int((sizes <= small_class).sum())


def random_frame(rng: np.random.Generator, n: int, cards) -> pd.DataFrame:
    columns = {}
    for j, card in enumerate(cards):
        weights = 1.0 / np.arange(1, card + 1) ** 1.2
        values = rng.choice(card, n, p=weights / weights.sum()).astype(float)
        values[rng.random(n) < 0.05] = np.nan
        columns[f"v{j}"] = values
    frame = pd.DataFrame(columns)
    frame["v0"] = frame["v0"].map(lambda x: None if pd.isna(x) else f"level{x:.0f}")
    return frame


def race_file() -> pd.DataFrame:
    codes = ["Chinese"] * 150 + ["Japanese"] * 50 + ["Korean"] * 4 + ["Vietnamese"]
    return pd.DataFrame({"race": codes})


def test_seed_race_example():
    result = record_uniqueness(race_file(), ["race"])
    full = result.full
    assert (full.records, full.uniques, full.small) == (205, 1, 5)
    assert round(full.uniques_pct, 2) == 0.49
    assert round(full.small_pct, 1) == 2.4
    assert result.weights is None and result.weights_note


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 12])
def test_number_of_combinations(k):
    rng = np.random.default_rng(k)
    frame = pd.DataFrame({f"c{i}": rng.integers(0, 3, 40) for i in range(k)})
    result = record_uniqueness(frame, list(frame.columns))
    assert len(result.combinations) == 2**k - 1
    assert len({c.variables for c in result.combinations}) == 2**k - 1
    assert result.combinations[0].variables == tuple(frame.columns)
    sizes = [c.n_variables for c in result.combinations]
    assert sizes == sorted(sizes, reverse=True)


def test_order_full_set_first_then_size_descending_ties_in_key_order():
    frame = pd.DataFrame({"a": [1, 2], "b": [1, 1], "c": [2, 2]})
    order = [c.variables for c in record_uniqueness(frame, ["a", "b", "c"]).combinations]
    assert order == [
        ("a", "b", "c"),
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
        ("a",),
        ("b",),
        ("c",),
    ]


@pytest.mark.parametrize("keys", [[], [f"c{i}" for i in range(MAX_KEYS + 1)]])
def test_zero_or_too_many_keys_is_an_error(keys):
    frame = pd.DataFrame({f"c{i}": [1, 2] for i in range(MAX_KEYS + 1)})
    with pytest.raises((DataError, LimitError), match="key variable"):
        record_uniqueness(frame, keys)


@pytest.mark.parametrize("seed", range(4))
def test_counts_equal_brute_force_groupby(seed):
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, 600, [2, 3, 7, 15, 40][: 3 + seed % 3])
    keys = list(frame.columns)
    for small_class in (1, 3, 5):
        result = record_uniqueness(frame, keys, small_class=small_class)
        for counts in result.combinations:
            expected = brute_force(frame, list(counts.variables), small_class)
            assert (counts.uniques, counts.small) == expected, counts.variables
            assert counts.records == len(frame)


def test_large_key_space_uses_the_exact_fallback():
    # 12 columns of 200 levels: the product of the cardinalities overflows the packed keys.
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({f"c{i}": rng.integers(0, 200, 300) for i in range(12)})
    frame.iloc[0, 0] = 1000  # levels are the values present, not a range
    keys = list(frame.columns)
    result = record_uniqueness(frame, keys)
    for counts in result.combinations[::97]:
        assert (counts.uniques, counts.small) == brute_force(frame, list(counts.variables))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    n=st.integers(1, 60),
    k=st.integers(1, 5),
    small_class=st.integers(1, 6),
)
def test_property_counts_equal_brute_force(data, n, k, small_class):
    columns = {}
    for j in range(k):
        values = data.draw(
            st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=n, max_size=n),
            label=f"column {j}",
        )
        columns[f"k{j}"] = pd.Series(values, dtype="Int64" if j % 2 else "object")
    frame = pd.DataFrame(columns)
    before = frame.copy()
    result = record_uniqueness(frame, list(frame.columns), small_class=small_class)
    pd.testing.assert_frame_equal(frame, before)
    assert len(result.combinations) == 2**k - 1
    for counts in result.combinations:
        expected = brute_force(frame, list(counts.variables), small_class)
        assert (counts.uniques, counts.small) == expected


def test_missing_values_are_their_own_category():
    frame = pd.DataFrame({"a": [1.0, np.nan, np.nan, 2.0, 2.0], "b": ["x", None, None, "y", "y"]})
    result = record_uniqueness(frame, ["a", "b"], small_class=1)
    assert result.full.uniques == 1  # only the record (1, x); the two missing ones pair up


def test_weights_agree_with_an_independent_least_squares_fit():
    rng = np.random.default_rng(3)
    frame = random_frame(rng, 3000, [3, 5, 9, 30])
    keys = list(frame.columns)
    result = record_uniqueness(frame, keys)
    rows, response = [], []
    for counts in result.combinations:
        sizes = frame.groupby(list(counts.variables), dropna=False).size()
        uniques = int((sizes == 1).sum())
        if uniques:
            rows.append([1.0] + [float(k in counts.variables) for k in keys])
            response.append(np.log(100.0 * uniques / len(frame)))
    coef, *_ = np.linalg.lstsq(np.array(rows), np.array(response), rcond=None)
    assert result.n_fit == len(rows)
    assert result.intercept == pytest.approx(coef[0], abs=1e-9)
    for key, expected in zip(keys, coef[1:], strict=True):
        assert result.weights[key] == pytest.approx(expected, abs=1e-9)
    assert result.worst_variable == max(keys, key=lambda k: result.weights[k])
    frame_w = result.weights_frame()
    assert list(frame_w["weight"]) == sorted(result.weights.values(), reverse=True)


def test_weights_with_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(11)
    frame = random_frame(rng, 1500, [8, 12, 40])
    result = record_uniqueness(frame, list(frame.columns))
    used = [c for c in result.combinations if c.uniques]
    x = np.array([[float(k in c.variables) for k in result.keys] for c in used])
    fit = sm.OLS(np.log([c.uniques_pct for c in used]), sm.add_constant(x)).fit()
    assert np.allclose(fit.params[1:], [result.weights[k] for k in result.keys], atol=1e-9)


def test_weights_none_when_too_few_combinations_have_uniques():
    frame = pd.DataFrame({"a": [1, 1, 2, 2, 3], "b": [1, 1, 1, 1, 1]})
    result = record_uniqueness(frame, ["a", "b"])
    assert result.weights is None and result.intercept is None and result.worst_variable is None
    assert result.n_fit == 2
    assert "needed" in result.weights_note
    assert result.weights_frame().empty


def test_weights_none_when_one_variable_is_in_every_fitted_combination():
    frame = pd.DataFrame({"a": range(8), "b": [0, 0, 0, 0, 1, 1, 1, 1], "c": [0, 1] * 4})
    result = record_uniqueness(frame, ["a", "b", "c"])
    assert result.weights is None
    assert "every combination with a unique record contains a" in result.weights_note


def test_fit_weights_notes_left_out_combinations():
    keys = ("a", "b")
    combos = [
        CombinationCounts(("a", "b"), 100, 10, 20),
        CombinationCounts(("a",), 100, 5, 10),
        CombinationCounts(("b",), 100, 2, 10),
    ]
    weights, intercept, n_fit, note = fit_weights(keys, combos)
    assert n_fit == 3 and note is None
    assert weights["a"] == pytest.approx(np.log(10 / 2))  # exact fit: 3 points, 3 coefficients
    assert intercept + weights["a"] + weights["b"] == pytest.approx(np.log(10.0))
    combos.append(CombinationCounts(("a",), 100, 0, 0))
    assert "left out" in fit_weights(keys, combos)[3]


def test_omit_one_rows_equal_the_k_minus_one_combinations():
    rng = np.random.default_rng(5)
    frame = random_frame(rng, 500, [3, 4, 10, 20])
    keys = list(frame.columns)
    result = record_uniqueness(frame, keys)
    table = result.omit_one()
    assert list(table.columns) == [
        "omitted",
        "uniques",
        "uniques_pct",
        "small",
        "small_pct",
        "variables",
    ]
    assert list(table["omitted"]) == ["None", *keys]
    assert table.iloc[0]["uniques"] == result.full.uniques
    for omitted, row in zip(keys, table.iloc[1:].itertuples(), strict=True):
        rest = [k for k in keys if k != omitted]
        assert row.variables == ", ".join(rest)
        assert (row.uniques, row.small) == brute_force(frame, rest)
        assert row.small_pct == pytest.approx(100.0 * row.small / len(frame))


def test_omit_one_with_one_key_has_only_the_full_set():
    assert list(record_uniqueness(race_file(), ["race"]).omit_one()["omitted"]) == ["None"]


def _result_with_small(small: int, n: int = 1000) -> UniquenessResult:
    combos = (CombinationCounts(("a",), n, 0, small),)
    return UniquenessResult(("a",), n, 5, combos, None, None, 0, "none")


@pytest.mark.parametrize(
    ("small", "research", "public"),
    [(0, True, True), (49, True, True), (50, True, False), (200, True, False), (201, False, False)],
)
def test_verdict_thresholds(small, research, public):
    assert RESEARCH_THRESHOLD == 20.0 and PUBLIC_THRESHOLD == 5.0
    assert _result_with_small(small).verdict() == {"research": research, "public": public}


def test_input_never_modified():
    rng = np.random.default_rng(9)
    frame = random_frame(rng, 300, [2, 5, 8])
    frame["v1"] = frame["v1"].astype("category")
    before = frame.copy()
    record_uniqueness(frame, list(frame.columns))
    pd.testing.assert_frame_equal(frame, before)


def test_progress_reports_every_combination():
    rng = np.random.default_rng(2)
    frame = random_frame(rng, 400, [2, 3, 4, 5])
    calls = []
    record_uniqueness(frame, list(frame.columns), progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (15, 15)
    assert all(t == 15 for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_to_frame_and_to_dict():
    rng = np.random.default_rng(4)
    frame = random_frame(rng, 300, [2, 4, 6])
    result = record_uniqueness(frame, list(frame.columns))
    table = result.to_frame()
    assert list(table.columns) == [
        "variables",
        "n_variables",
        "records",
        "uniques",
        "uniques_pct",
        "small",
        "small_pct",
    ]
    assert len(table) == 7 and table.iloc[0]["variables"] == "v0, v1, v2"
    d = result.to_dict()
    for name in ("combinations", "weights", "n_fit", "worst_variable", "verdict", "omit_one"):
        assert name in d
    assert d["combinations"][0]["uniques"] == result.full.uniques
    assert "Record uniqueness" in str(result)


def test_iteration_table_layout():
    rng = np.random.default_rng(6)
    first = record_uniqueness(random_frame(rng, 1500, [8, 12, 40]), ["v0", "v1", "v2"])
    assert first.weights is not None
    second = record_uniqueness(race_file(), ["race"])
    table = iteration_table([("fine", first), ("", second)])
    assert list(table.columns[:7]) == [
        "run",
        "row",
        "weight",
        "uniques",
        "uniques_pct",
        "small",
        "small_pct",
    ]
    assert len(table) == (1 + 3) + (1 + 1)
    header = table.iloc[0]
    assert (header["run"], header["row"], header["uniques"]) == (
        "fine",
        "variables",
        first.full.uniques,
    )
    weights = table.iloc[1:4]
    assert list(weights["weight"]) == sorted(first.weights.values(), reverse=True)
    assert table.iloc[4]["run"] == "race" and table.iloc[4]["row"] == "variables"
    assert np.isnan(table.iloc[5]["weight"])


@pytest.mark.parametrize(
    ("frame", "keys", "small_class", "message"),
    [
        (pd.DataFrame({"a": ["secret"]}), ["nope"], 5, "not in the data: nope"),
        (pd.DataFrame({"a": pd.Series([], dtype=object)}), ["a"], 5, "no records"),
        (pd.DataFrame({"a": ["secret"]}), ["a"], 0, "at least 1"),
        (pd.DataFrame({"a": ["secret"]}), ["a"], 2.5, "whole number"),
        (pd.DataFrame({"a": ["secret"]}), ["a", "a"], 5, "only once"),
    ],
)
def test_bad_input_gives_clear_errors_without_data_values(frame, keys, small_class, message):
    with pytest.raises(DataError, match=message) as error:
        record_uniqueness(frame, keys, small_class=small_class)
    assert "secret" not in str(error.value)


def test_combination_masks_cover_every_subset_once():
    masks = combination_masks(4)
    assert sorted(masks) == list(range(1, 16))
    assert masks[0] == 15
    assert [bin(m).count("1") for m in masks] == sorted(
        (bin(m).count("1") for m in masks), reverse=True
    )
    assert len(list(itertools.combinations(range(4), 2))) == sum(
        bin(m).count("1") == 2 for m in masks
    )
