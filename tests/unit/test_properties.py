"""Property-based tests (hypothesis) of the masking and risk core."""

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deid_core.masking import (
    RESTRICTED_ZIP3,
    AbsoluteRound,
    GaussianNoise,
    HmacPseudonym,
    IntervalGroup,
    Microaggregate,
    Pram,
    RandomPseudonym,
    RelativeRound,
    TopBottomCode,
    Truncate,
    UniformNoise,
    ZipToThreeDigits,
    relative_round,
)
from deid_core.recipe import Recipe, Roles
from deid_core.risk import risk_summary
from deid_core.workspace import Workspace

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
values_with_missing = st.lists(st.one_of(finite, st.just(float("nan"))), min_size=1, max_size=60)

steps = st.one_of(
    st.builds(AbsoluteRound, column=st.just("x"), decimals=st.integers(0, 4)),
    st.builds(RelativeRound, column=st.just("x"), digits=st.integers(1, 6)),
    st.builds(Truncate, column=st.just("x"), decimals=st.integers(0, 4)),
    st.builds(
        IntervalGroup,
        column=st.just("x"),
        width=st.floats(0.01, 1000),
        release=st.sampled_from(["label", "midpoint", "mean"]),
    ),
    st.builds(TopBottomCode, column=st.just("x"), top=st.floats(-100, 100)),
    st.builds(
        UniformNoise, column=st.just("x"), half_width=st.floats(0.001, 10), seed=st.integers(0, 99)
    ),
    st.builds(
        GaussianNoise, column=st.just("x"), sd_fraction=st.floats(0.001, 2), seed=st.integers(0, 99)
    ),
    st.builds(
        Pram,
        column=st.just("x"),
        retention=st.floats(0, 1),
        invariant=st.booleans(),
        seed=st.integers(0, 99),
    ),
)


@given(values=values_with_missing, k=st.integers(2, 5), median=st.booleans())
def test_microaggregation_keeps_missing_values_and_groups_of_k(values, k, median):
    series = pd.Series(values, name="x")
    assume(series.notna().sum() >= k)
    before = series.copy()
    out = Microaggregate("x", k=k, aggregate="median" if median else "mean").apply(series)
    pd.testing.assert_series_equal(series, before)
    assert out.isna().tolist() == series.isna().tolist()
    assert out.dropna().value_counts().min() >= k  # each released value is shared by k or more


@given(values=values_with_missing, step=steps)
def test_masking_never_mutates_its_input_and_keeps_missing_values_missing(values, step):
    series = pd.Series(values, name="x")
    before = series.copy()
    out = step.apply(series)
    pd.testing.assert_series_equal(series, before)
    assert len(out) == len(series)
    assert out.isna().tolist() == series.isna().tolist()


@given(values=values_with_missing, step=steps)
def test_recipe_apply_never_mutates_the_frame(values, step):
    frame = pd.DataFrame({"x": values, "y": range(len(values))})
    before = frame.copy(deep=True)
    Recipe(Roles(quasi_identifiers=("x", "y")), (step,)).apply(frame)
    pd.testing.assert_frame_equal(frame, before)


@given(
    rows=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", None]), st.integers(0, 9)),
        min_size=1,
        max_size=80,
    )
)
def test_risks_lie_in_zero_one_and_are_ordered(rows):
    frame = pd.DataFrame(rows, columns=["a", "b", "c"])
    summary = risk_summary(frame, ["a", "b", "c"])
    assert 0 < summary.average_risk <= summary.max_risk <= 1
    assert summary.strict_average_risk in (summary.average_risk, summary.max_risk)
    assert summary.record_risk.min() > 0 and summary.record_risk.max() <= 1
    assert summary.uniques <= summary.records_in_small_classes <= summary.n_records


@given(
    mantissa=st.integers(1, 10**7),
    exponent=st.integers(-8, 4),
    power=st.integers(-6, 6),
    digits=st.integers(1, 6),
    sign=st.sampled_from([1, -1]),
)
def test_relative_rounding_commutes_with_scaling_by_powers_of_ten(
    mantissa, exponent, power, digits, sign
):
    # Data are decimal numbers written with finitely many digits, mantissa x 10^exponent, read
    # as a file's reader reads them: the float nearest the decimal. (Multiplying by a power of
    # ten in floats can land a float away from it: 1964835 * 10.0**-6 is 1.9648349999999999,
    # truly below the half-way point 1.964835 that the data would hold.)
    x = float(f"{sign * mantissa}e{exponent}")
    scaled = float(f"{sign * mantissa}e{exponent + power}")
    lhs = relative_round(np.array([scaled]), digits)[0]
    rhs = relative_round(np.array([x]), digits)[0] * 10.0**power
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=0)


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=60)
@given(
    ages=st.lists(st.floats(0, 100, allow_nan=False), min_size=2, max_size=80),
    sexes=st.data(),
    finer=st.integers(0, 3),
    extra=st.integers(1, 3),
)
def test_coarser_masking_never_lowers_k(ages, sexes, finer, extra):
    sex = sexes.draw(st.lists(st.sampled_from("MF"), min_size=len(ages), max_size=len(ages)))
    frame = pd.DataFrame({"age": ages, "sex": sex})
    qis = ("age", "sex")

    def k_of(step) -> int:
        return risk_summary(Recipe(Roles(quasi_identifiers=qis), (step,)).apply(frame), qis).k

    # Fewer decimals is a coarsening (truncation nests: each finer cell lies in one coarser).
    assert k_of(Truncate("age", decimals=finer)) <= k_of(
        Truncate("age", decimals=max(finer - extra, 0))
    )
    # Width w grouping nests inside width w * m grouping from the same origin.
    width = 10.0 ** (1 - finer)
    assert k_of(IntervalGroup("age", width=width, release="label")) <= k_of(
        IntervalGroup("age", width=width * 2**extra, release="label")
    )
    # No masking is the finest of all.
    assert risk_summary(frame, qis).k <= k_of(Truncate("age", decimals=finer))


dose_steps = st.one_of(
    st.builds(RelativeRound, column=st.just("dose"), digits=st.integers(1, 4)),
    st.builds(AbsoluteRound, column=st.just("dose"), decimals=st.integers(0, 3)),
    st.builds(Truncate, column=st.just("dose"), decimals=st.integers(0, 3)),
    st.builds(TopBottomCode, column=st.just("dose"), top=st.floats(0, 3)),
    st.builds(
        IntervalGroup,
        column=st.just("dose"),
        width=st.sampled_from([0.1, 0.25, 1.0]),
        release=st.sampled_from(["label", "midpoint", "mean"]),
    ),
    st.builds(UniformNoise, column=st.just("dose"), half_width=st.floats(0.01, 1), seed=st.just(1)),
)


@settings(max_examples=60)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 4),
            st.one_of(st.floats(0, 3, allow_nan=False), st.just(float("nan"))),
        ),
        min_size=1,
        max_size=60,
    ),
    steps=st.lists(dose_steps, min_size=1, max_size=4),
)
def test_workspace_cache_agrees_with_direct_computation(rows, steps):
    # The workspace masks distinct values once for elementwise steps and caches codes; the
    # result must be the recipe applied to the whole frame, step for step.
    frame = pd.DataFrame(rows, columns=["a", "dose"])
    roles = Roles(quasi_identifiers=("a", "dose"))
    workspace = Workspace(frame)
    for step in steps:
        recipe = Recipe(roles, (step,))
        direct_frame = recipe.apply(frame)
        pd.testing.assert_series_equal(
            workspace.masked_column(recipe, "dose"), direct_frame["dose"]
        )
        direct = risk_summary(direct_frame, ["a", "dose"])
        cached = workspace.risk(recipe)
        assert np.array_equal(direct.class_size, cached.class_size)
        assert cached.average_risk == direct.average_risk


identifiers = st.lists(
    st.one_of(st.integers(0, 30), st.sampled_from(["a", "b", "00123", "Zoë"]), st.none()),
    min_size=1,
    max_size=60,
)


@given(values=identifiers, keyed=st.booleans())
def test_pseudonyms_keep_people_apart_and_together(values, keyed):
    series = pd.Series(values, name="pid", dtype=object)
    before = series.copy()
    step = HmacPseudonym("pid") if keyed else RandomPseudonym("pid")
    result = step.pseudonymise(series, bytes(range(16)))
    pd.testing.assert_series_equal(series, before)
    assert result.values.isna().tolist() == series.isna().tolist()
    pairs = {(str(v), p) for v, p in zip(values, result.values, strict=True) if v is not None}
    originals = {v for v, _ in pairs}
    assert len(pairs) == len(originals) == len({p for _, p in pairs})  # one to one


@given(st.lists(st.one_of(st.integers(501, 99_999), st.none()), min_size=1, max_size=60))
def test_zip_codes_keep_three_digits_or_become_000(codes):
    series = pd.Series([None if c is None else f"{c:05d}" for c in codes], dtype=object)
    out = ZipToThreeDigits("zip").apply(series)
    for code, prefix in zip(codes, out, strict=True):
        if code is None:
            assert prefix is None
        else:
            three = f"{code:05d}"[:3]
            assert prefix == ("000" if three in RESTRICTED_ZIP3 else three)
