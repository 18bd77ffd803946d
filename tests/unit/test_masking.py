"""Masking steps: values computed by hand, validation messages, JSON round trips."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.errors import RecipeError
from deid_core.masking import (
    DATA_STEP_TYPES,
    STEP_TYPES,
    AbsoluteRound,
    AgeAt,
    CodePrefix,
    DateReduce,
    DateShift,
    EventOrder,
    GaussianNoise,
    HierarchyLevel,
    HmacPseudonym,
    Icd10Chapter,
    Interval,
    IntervalGroup,
    KernelSmooth,
    LocalSuppression,
    MergeLevels,
    Microaggregate,
    MultivariateMicroaggregate,
    Pram,
    RandomPseudonym,
    RecordSuppression,
    RelativeDates,
    RelativeRound,
    Subsample,
    TopBottomCode,
    Truncate,
    UniformNoise,
    ZipToThreeDigits,
    data_step_from_dict,
    relative_round,
    step_from_dict,
)
from deid_core.masking.base import unique_rows

DOSES = pd.Series([0.0, 0.3125, 0.35, 1.2345, 2.74, -0.35, np.nan, 123.456], name="dose")


def values(series: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in series.tolist()]


def test_absolute_round_to_decimals_rounds_halves_away_from_zero():
    out = AbsoluteRound("dose", decimals=1).apply(DOSES)
    assert values(out) == [0.0, 0.3, 0.4, 1.2, 2.7, -0.4, None, 123.5]


def test_absolute_round_to_base():
    out = AbsoluteRound("dose", base=0.25).apply(DOSES)
    assert values(out) == [0.0, 0.25, 0.25, 1.25, 2.75, -0.25, None, 123.5]
    assert values(AbsoluteRound("x", base=5).apply(pd.Series([2, 3, 7, 12]))) == [0, 5, 5, 10]


def test_relative_round_significant_digits():
    out = RelativeRound("dose", digits=2).apply(DOSES)
    assert values(out) == [0.0, 0.31, 0.35, 1.2, 2.7, -0.35, None, 120.0]
    assert relative_round(np.array([0.00012345, 12345.0, 999.6]), 3).tolist() == [
        0.000123,
        12300.0,
        1000.0,
    ]


def test_truncation_goes_toward_zero():
    out = Truncate("dose", decimals=1).apply(DOSES)
    assert values(out) == [0.0, 0.3, 0.3, 1.2, 2.7, -0.3, None, 123.4]
    ages = pd.Series([39.99, 40.0, 40.5])
    assert values(Truncate("age", decimals=0).apply(ages)) == [39.0, 40.0, 40.0]


def test_integer_columns_stay_integer_when_rounded():
    out = AbsoluteRound("n", base=10).apply(pd.Series([14, 15, 26], dtype="int64"))
    assert out.dtype == np.int64
    assert out.tolist() == [10, 20, 30]


def test_interval_grouping_labels_midpoints_and_means():
    labels = IntervalGroup("dose", width=0.5, release="label").apply(DOSES)
    assert values(labels)[:6] == [
        "[0, 0.5)",
        "[0, 0.5)",
        "[0, 0.5)",
        "[1, 1.5)",
        "[2.5, 3)",
        "[-0.5, 0)",
    ]
    assert values(labels)[6] is None
    mid = IntervalGroup("dose", width=0.5, origin=0.25, release="midpoint").apply(DOSES)
    assert values(mid) == [0.0, 0.5, 0.5, 1.0, 2.5, -0.5, None, 123.5]
    means = IntervalGroup("dose", width=0.5, release="mean").apply(DOSES)
    assert means.iloc[0] == pytest.approx((0.0 + 0.3125 + 0.35) / 3)
    assert means.iloc[3] == 1.2345


def test_interval_grouping_with_break_points_has_open_ends():
    step = IntervalGroup("dose", breaks=(0, 0.5, 1), release="label")
    assert values(step.apply(DOSES)) == [
        "[0, 0.5)",
        "[0, 0.5)",
        "[0, 0.5)",
        ">=1",
        ">=1",
        "<0",
        None,
        ">=1",
    ]
    # Open-ended intervals have no midpoint: their mean is released instead.
    mid = IntervalGroup("dose", breaks=(0, 0.5, 1), release="midpoint").apply(DOSES)
    assert mid.iloc[3] == pytest.approx((1.2345 + 2.74 + 123.456) / 3)
    assert mid.iloc[0] == 0.25


def test_top_and_bottom_coding():
    out = TopBottomCode("dose", top=2, bottom=0).apply(DOSES)
    assert values(out) == [0.0, 0.3125, 0.35, 1.2345, 2.0, 0.0, None, 2.0]


def test_uniform_noise_is_bounded_floored_and_reproducible():
    x = pd.Series(np.linspace(0, 3, 2000))
    step = UniformNoise("x", half_width=0.1, floor=0.0, seed=7)
    first, again, other = step.apply(x), step.apply(x), step.apply(x, replicate=1)
    assert first.equals(again)
    assert not first.equals(other)
    assert (first >= 0).all()
    inner = x > 0.1
    assert (np.abs(first[inner] - x[inner]) <= 0.1).all()
    assert np.abs(first[inner] - x[inner]).max() > 0.09


def test_gaussian_noise_scales_with_the_sd():
    x = pd.Series(np.random.default_rng(1).normal(10, 2, 20000))
    out = GaussianNoise("x", sd_fraction=0.5, seed=3).apply(x)
    assert np.std(out - x) == pytest.approx(0.5 * x.std(), rel=0.03)


def test_merge_levels_and_dates():
    merged = MergeLevels("age_group", {"40-59": ["40-49", "50-59"]}).apply(
        pd.Series(["40-49", "50-59", "60-69", None])
    )
    assert values(merged) == ["40-59", "40-59", "60-69", None]
    dates = pd.Series(["2011-07-03", "1999-12-31", None])
    assert values(DateReduce("d", to="year").apply(dates)) == [2011, 1999, None]
    assert values(DateReduce("d", to="year-month").apply(dates)) == ["2011-07", "1999-12", None]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: RelativeRound("x", digits=0), "between 1 and 15"),
        (lambda: AbsoluteRound("x"), "either a base"),
        (lambda: AbsoluteRound("x", base=0.1, decimals=1), "either a base"),
        (lambda: AbsoluteRound("x", base=-1), "greater than zero"),
        (lambda: IntervalGroup("x"), "width or break points"),
        (lambda: IntervalGroup("x", breaks=(1, 1, 2)), "strictly increasing"),
        (lambda: IntervalGroup("x", width=1, release="median"), "release must be"),
        (lambda: TopBottomCode("x"), "top cut"),
        (lambda: TopBottomCode("x", top=1, bottom=2), "below the top"),
        (lambda: UniformNoise("x", half_width=0), "greater than zero"),
        (lambda: UniformNoise("x", half_width=float("nan")), "finite"),
        (lambda: GaussianNoise("x", seed=-1), "seed"),
        (lambda: MergeLevels("x", {}), "at least one group"),
        (lambda: DateReduce("x", to="day"), "'to' must be one of year, quarter, year-month, week"),
        (lambda: RelativeRound("", digits=2), "column name"),
        (lambda: Microaggregate("x", k=1), "'k' must be between 2"),
        (lambda: Microaggregate("x", aggregate="mode"), "'mean' or 'median'"),
        (lambda: MultivariateMicroaggregate(columns=("a",)), "at least 2 column"),
        (lambda: MultivariateMicroaggregate(columns=("a", "a")), "lists a column twice"),
        (lambda: MultivariateMicroaggregate(columns=("a",), strata=("a",)), "both aggregated"),
        (lambda: Pram("x", retention=1.5), "probability, from 0 to 1"),
        (lambda: Pram("x", invariant="yes"), "true or false"),
        (lambda: Pram("x", seed=-2), "seed"),
        (lambda: LocalSuppression(k=1), "'k' must be between 2"),
        (lambda: LocalSuppression(importance="age"), "list of column names"),
        (lambda: RecordSuppression(limit=2), "share of the records"),
        (lambda: Subsample(fraction=0), "greater than zero"),
        (lambda: Subsample(fraction=1.5), "at most 1"),
        (lambda: Subsample(strata=("a", "")), "list of column names"),
    ],
)
def test_invalid_parameters_get_clear_messages(build, message):
    with pytest.raises(RecipeError, match=message):
        build()


def test_text_in_a_numeric_column_is_reported_without_its_values():
    series = pd.Series(["0.5", "1.2", "SECRET-VALUE", "3"])
    with pytest.raises(RecipeError) as caught:
        RelativeRound("dose", digits=2).apply(series)
    assert "1 entry" in str(caught.value)
    assert "SECRET" not in str(caught.value)


def test_numeric_text_is_accepted():
    out = RelativeRound("dose", digits=1).apply(pd.Series(["0.54", "1.26", None]))
    assert values(out) == [0.5, 1.0, None]


def test_every_step_round_trips_through_json():
    steps = [
        AbsoluteRound("a", decimals=2),
        AbsoluteRound("a", base=5.0),
        RelativeRound("b", digits=3),
        Truncate("c", decimals=0),
        IntervalGroup("d", width=5.0, origin=2.5, release="label"),
        IntervalGroup("d", breaks=(0.0, 1.0, 2.0), release="mean"),
        TopBottomCode("e", top=90.0),
        UniformNoise("f", half_width=0.1, floor=0.0, seed=3),
        GaussianNoise("g", sd_fraction=0.2, seed=None),
        MergeLevels("h", {"x": ["a", "b"]}),
        DateReduce("i", to="year-month"),
        KernelSmooth("j", locations=("x", "y"), kernel="gaussian", bandwidth=0.2, rho=0.3),
        Microaggregate("k", k=4, aggregate="median"),
        Pram("l", retention=0.7, invariant=True, seed=5),
        ZipToThreeDigits("k"),
        RandomPseudonym("l", length=12, released_as="study_id"),
        HmacPseudonym("m", length=20, key_fingerprint="0123456789abcdef"),
        CodePrefix("n", length=3),
        Icd10Chapter("o"),
        HierarchyLevel("p", level=1, hierarchy=[["a", "x", "*"], ["b", "x", "*"]]),
    ]
    assert {type(s) for s in steps} == set(STEP_TYPES.values())
    for step in steps:
        assert step_from_dict(json.loads(json.dumps(step.to_dict()))) == step


def test_every_whole_data_step_round_trips_through_json():
    steps = [
        LocalSuppression(k=3, importance=("age", "sex")),
        RecordSuppression(k=5, limit=0.1),
        MultivariateMicroaggregate(columns=("a", "b"), k=4, aggregate="median", strata=("s",)),
        Subsample(fraction=0.25, strata=("s",), seed=9),
        RelativeDates(columns=("a", "b"), anchor="c", anchor_as="year"),
        DateShift(columns=("a",), max_days=14, seed=2),
        AgeAt(column="dob", reference="a", first=True, width=5, top_code=90),
        Interval(start="a", end="b", name="los"),
        EventOrder(column="a", name="visit", ties="same"),
    ]
    assert {type(s) for s in steps} == set(DATA_STEP_TYPES.values())
    for step in steps:
        assert data_step_from_dict(json.loads(json.dumps(step.to_dict()))) == step


def test_a_step_listed_in_the_wrong_section_is_named():
    with pytest.raises(RecipeError, match="whole-data step: list it under 'data_steps'"):
        step_from_dict({"method": "local_suppression", "k": 3})
    with pytest.raises(RecipeError, match="column step: list it under 'steps'"):
        data_step_from_dict({"method": "pram", "column": "x"})


def test_seed_left_out_on_request():
    step = UniformNoise("f", half_width=0.1, seed=3)
    assert "seed" in step.to_dict()
    assert "seed" not in step.to_dict(include_seed=False)


def test_step_from_dict_rejects_unknown_methods_and_fields():
    with pytest.raises(RecipeError, match="Unknown masking method"):
        step_from_dict({"method": "blur", "column": "x"})
    with pytest.raises(RecipeError, match="no parameter"):
        step_from_dict({"method": "relative_round", "column": "x", "digts": 2})


def test_sweep_values_are_offered():
    x = pd.Series(np.linspace(0, 3, 100))
    assert RelativeRound("x").sweep_values(x) == [5, 4, 3, 2, 1]
    widths = IntervalGroup("x", width=0.5).sweep_values(x)
    assert widths and all(0.03 <= w <= 1.5 for w in widths)
    assert len(UniformNoise("x").sweep_values(x)) >= 5


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(-1, 6), min_size=3, max_size=3), min_size=1, max_size=40))
def test_unique_rows_is_numpys_row_unique(rows):
    array = np.array(rows, dtype=np.int64)
    _check_unique_rows(array)
    _check_unique_rows(array / 4 - 0.5)  # numbers, not codes


def _check_unique_rows(array):
    expected = np.unique(array, axis=0, return_inverse=True, return_counts=True)
    found = unique_rows(array)
    for want, got in zip(expected, found, strict=True):
        np.testing.assert_array_equal(np.asarray(want).reshape(np.asarray(got).shape), got)


def test_rounding_sweeps_follow_the_data_scale():
    grams = pd.Series(np.arange(709, 4991, 7))  # whole numbers up to 4,990
    assert AbsoluteRound("bwt", decimals=0).sweep_values(grams) == [0, -1, -2, -3]
    assert Truncate("bwt", decimals=0).sweep_values(grams) == [0, -1, -2, -3]
    ages = pd.Series([14, 23, 45])
    assert AbsoluteRound("age", decimals=0).sweep_values(ages) == [0, -1]
    doses = pd.Series([0.125, 1.5, 3.25])  # three decimals, largest below 10
    assert AbsoluteRound("dose", decimals=2).sweep_values(doses) == [3, 2, 1, 0]
    fine = pd.Series(np.linspace(0.0, 3.0, 101) + 1e-7)  # more decimals than worth sweeping
    assert AbsoluteRound("x", decimals=2).sweep_values(fine) == [4, 3, 2, 1, 0]
    # every swept value changes the released values differently (no identical points)
    released = [tuple(AbsoluteRound("bwt", decimals=d).apply(grams)) for d in (0, -1, -2, -3)]
    assert len(set(released)) == 4
    assert AbsoluteRound("x", decimals=0).sweep_values(pd.Series([0.0, np.nan])) == [4, 3, 2, 1, 0]


def test_negative_decimals_read_as_the_nearest_ten():
    assert AbsoluteRound("bwt", decimals=-1).describe() == "bwt: rounded to the nearest 10"
    assert AbsoluteRound("bwt", decimals=-2).describe() == "bwt: rounded to the nearest 100"
    assert Truncate("bwt", decimals=-1).describe().startswith("bwt: truncated to a multiple of 10")
    assert AbsoluteRound("x", decimals=2).describe() == "x: rounded to 2 decimal(s)"
