"""Masking against exact references (hypothesis), over magnitudes from 1e-300 to 1e300,
negatives, halves and values already on the grid.

Two references, both exact, computed value by value in decimal or rational arithmetic:

- **by hand**: the decimal the value is written as (its shortest repr), truncated, rounded
  (halves away from zero) or floored to the decimal base with Python's ``decimal`` module, then
  read back as a float. This is what a person would do on paper. It is the rule wherever the
  grid's decimals near the value have at most 15 significant digits (then no two of them, nor
  the value, read back as the same float); the strategies below keep to that.
- **the rule** (module :mod:`deid_core.masking.decimal_grid`, stated in the README): a grid point is
  ``fl(origin + n * width)``; a value is on the grid when it is one; its cell is
  ``[g_n, g_(n+1))`` comparing floats; the half-way point is ``fl(origin + (n + 1/2) width)``.
  Checked here on any float at all (any bit pattern, any magnitude, any base), with ``n``
  found in closed form from the rounding interval of the value.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from deid_core.errors import RecipeError
from deid_core.io.export import FORMATS, export_release, read_back
from deid_core.masking import (
    STEP_TYPES,
    AbsoluteRound,
    CodePrefix,
    DateReduce,
    GaussianNoise,
    HierarchyLevel,
    HmacPseudonym,
    Icd10Chapter,
    IntervalGroup,
    KernelSmooth,
    MergeLevels,
    Microaggregate,
    Pram,
    RandomPseudonym,
    RelativeRound,
    TopBottomCode,
    Truncate,
    UniformNoise,
    ZipToThreeDigits,
    absolute_round,
    relative_round,
    truncate,
)
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace

HALF = Fraction(1, 2)
# Enough digits and exponent range for every decimal below (up to 1e-340 .. 1e310).
EXACT = Context(prec=400, Emin=-999_999, Emax=999_999)


# ---------------------------------------------------------------------------- references
def written(value: float) -> Decimal:
    """The decimal a float is written as."""
    return Decimal(repr(float(value)))


def read(value: Decimal | Fraction) -> float:
    """The float a decimal reads back as (+0.0 for zero, infinity beyond the largest float)."""
    try:
        return float(value) + 0.0
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def by_hand(value: float, base: float, rounding: str) -> float:
    """``base * integer(value / base)`` in decimal arithmetic, read back as a float."""
    quotient = EXACT.divide(written(value), written(base))
    return read(EXACT.multiply(quotient.to_integral_value(rounding=rounding), written(base)))


def significant_by_hand(value: float, digits: int) -> float:
    """The value's decimal rounded to ``digits`` significant digits, halves away from zero."""
    return read(Context(prec=digits, rounding=ROUND_HALF_UP).plus(written(value)))


def cell_by_hand(value: float, width: float, origin: float) -> tuple[Decimal, Decimal]:
    """The decimal bounds of the interval ``[lower, upper)`` that holds the value."""
    start, step = written(origin), written(width)
    offset = EXACT.divide(EXACT.subtract(written(value), start), step)
    n = offset.to_integral_value(rounding=ROUND_FLOOR)
    return EXACT.add(start, EXACT.multiply(n, step)), EXACT.add(start, EXACT.multiply(n + 1, step))


def decimal_of(value: float) -> Fraction:
    return Fraction(repr(float(value)))


def rule_cell(
    value: float, width: Fraction, origin: Fraction = Fraction(0)
) -> tuple[float, float, float]:
    """``(lower, upper, middle)`` of the value's cell by the rule, exactly.

    ``fl(y) <= x`` holds iff ``y`` is below the midpoint ``beta`` between ``x`` and the next
    float up, or equals it and that tie reads back as ``x``; so the cell's index is found from
    ``beta`` in one step.
    """
    x = Fraction(value)
    beta = (x + Fraction(math.nextafter(value, math.inf))) / 2
    reach = (beta - origin) / width
    n = math.floor(reach) if float(beta) == value else math.ceil(reach) - 1
    lower = read(origin + n * width)
    upper = read(origin + (n + 1) * width)
    gap = abs(x) - Fraction(math.nextafter(abs(value), 0.0))
    if read(width) < gap / 2:  # the grid is finer than the floats: the value is its own cell
        return lower, upper, value + 0.0
    return lower, upper, read(origin + (n + HALF) * width)


def rule_round_magnitude(magnitude: float, width: Fraction) -> float:
    """Rounding by the rule: a grid point stays, else up from the half-way point on."""
    lower, upper, middle = rule_cell(magnitude, width)
    if lower == magnitude:
        return magnitude
    return upper if magnitude >= middle else lower


def rule_truncate(value: float, base: float) -> float:
    return math.copysign(rule_cell(abs(value), decimal_of(base))[0], value) + 0.0


def rule_round(value: float, base: float) -> float:
    return math.copysign(rule_round_magnitude(abs(value), decimal_of(base)), value) + 0.0


def rule_relative_round(value: float, digits: int) -> float:
    """Rounding by the rule to the grid ``n * 10^(k - digits + 1)``, ``k`` the decade of the
    value: ``fl(10^k) <= |value| < fl(10^(k+1))``."""
    if value == 0:
        return 0.0
    magnitude = abs(value)
    k = math.floor(math.log10(magnitude))
    while read(Fraction(10) ** k) > magnitude:
        k -= 1
    while read(Fraction(10) ** (k + 1)) <= magnitude:
        k += 1
    rounded = rule_round_magnitude(magnitude, Fraction(10) ** (k - digits + 1))
    return math.copysign(rounded, value) + 0.0


def same(a: float, b: float) -> bool:
    """Equal, with the same sign (so -0.0 differs from 0.0)."""
    return a == b and math.copysign(1, a) == math.copysign(1, b)


# ---------------------------------------------------------------------------- strategies
signs = st.sampled_from([1, -1])
#: Widths and bases as people type them: 1-3 significant digits times a power of ten.
mantissas = st.one_of(st.sampled_from([1, 2, 5, 25, 3, 125]), st.integers(1, 999))


@st.composite
def grids(draw, with_origin: bool = False):
    """(m, b, origin): the width m * 10^b and an origin o * 10^(b + j), j >= 0 (so that every
    grid point is a multiple of 10^b)."""
    m, b = draw(mantissas), draw(st.integers(-300, 289))
    origin = 0.0
    if with_origin:
        o = draw(signs) * draw(st.integers(0, 10**6))
        origin = float(f"{o}e{b + draw(st.integers(0, 6))}")
    return m, b, origin


@st.composite
def typed_values(draw, m: int, b: int, digits: int = 13):
    """Decimals below 10^(b + digits) with at most ``digits`` significant digits, near the
    grid of width m * 10^b: on it, at a half-way point, anywhere, or far below the width."""
    kind = draw(st.sampled_from(["grid", "half", "any", "small"]))
    sign = draw(signs)
    if kind == "grid":
        n = draw(st.integers(0, 10 ** (digits - 1) // m))
        return float(f"{sign * n * m}e{b}")
    if kind == "half":
        n = draw(st.integers(0, 10 ** (digits - 2) // m))
        return float(f"{sign * (2 * n + 1) * m * 5}e{b - 1}")
    if kind == "small":
        return float(f"{sign * draw(st.integers(1, 999))}e{b - draw(st.integers(1, 40))}")
    return float(f"{sign * draw(st.integers(0, 10 ** (digits - 1)))}e{b - 1}")


#: Any float with magnitude 1e-300 .. 1e300 or 0, as bits, not as decimals, and some edges.
any_magnitude = st.one_of(
    st.floats(min_value=1e-300, max_value=1e300),
    st.floats(min_value=-1e300, max_value=-1e-300),
    st.sampled_from([0.0, -0.0, 5e-324, -2.5e-323, 2.0**-1022, 2.0**53, 2.0**53 + 2, 1e300]),
)


@st.composite
def value_and_base(draw):
    """Any float, and a decimal base near its scale (where masking does something), or at
    any scale."""
    value = draw(any_magnitude)
    magnitude = abs(value) if value else 1.0
    if draw(st.booleans()):
        exponent = math.floor(math.log10(magnitude)) + draw(st.integers(-18, 3))
    else:
        exponent = draw(st.integers(-320, 300))
    return value, float(f"{draw(mantissas)}e{min(max(exponent, -320), 300)}")


# ---------------------------------------------------------------------------- by hand
@settings(max_examples=400, deadline=None)
@given(data=st.data(), grid=grids())
def test_truncation_and_rounding_agree_with_decimal_arithmetic(data, grid):
    m, b, _ = grid
    width = float(f"{m}e{b}")
    values = [data.draw(typed_values(m, b)) for _ in range(20)]
    masked_down = truncate(np.array(values), width)
    masked_near = absolute_round(np.array(values), width)
    for value, down, near in zip(values, masked_down, masked_near, strict=True):
        assert same(down, by_hand(value, width, ROUND_DOWN)), (value, width)
        assert same(near, by_hand(value, width, ROUND_HALF_UP)), (value, width)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), digits=st.integers(1, 14), exponent=st.integers(-292, 289))
def test_relative_rounding_agrees_with_decimal_arithmetic(data, digits, exponent):
    values = [0.0]
    for _ in range(20):
        mantissa = data.draw(st.integers(1, 10**15 - 1))
        if data.draw(st.booleans()):  # a half at the first digit that goes
            mantissa = data.draw(st.integers(10 ** (digits - 1), 10**digits - 1)) * 10 + 5
        values.append(float(f"{data.draw(signs) * mantissa}e{exponent}"))
    masked = relative_round(np.array(values), digits)
    for value, out in zip(values, masked, strict=True):
        assert same(out, significant_by_hand(value, digits)), (value, digits)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), grid=grids(with_origin=True))
def test_intervals_agree_with_decimal_arithmetic(data, grid):
    m, b, origin = grid
    width = float(f"{m}e{b}")
    values = [data.draw(typed_values(m, b, digits=12)) for _ in range(20)]
    labels = IntervalGroup("x", width=width, origin=origin, release="label").apply(
        pd.Series(values)
    )
    middles = IntervalGroup("x", width=width, origin=origin).apply(pd.Series(values))
    for value, label, middle in zip(values, labels, middles, strict=True):
        lower, upper = cell_by_hand(value, width, origin)
        assert parse_label(label) == (read(lower), read(upper)), (value, width, origin)
        exact_middle = EXACT.divide(EXACT.add(lower, upper), 2)
        assert same(middle, read(exact_middle)), (value, width, origin)


# ---------------------------------------------------------------------------- the rule
@settings(max_examples=1500, deadline=None)
@given(case=value_and_base())
@example(case=(1e14, 1.0))
@example(case=(0.99999999999, 1.0))
@example(case=(71638.54, 0.01))
@example(case=(-0.3, 1.0))
@example(case=(1e300, 3.0))
@example(case=(-1e300, 7e299))
@example(case=(2.0**53 + 2, 3.0))
@example(case=(1.7e308, 1e308))
def test_truncation_and_rounding_follow_the_rule_for_any_float(case):
    value, base = case
    assert same(truncate(np.array([value]), base)[0], rule_truncate(value, base)), case
    expected = rule_round(value, base)
    if math.isinf(expected):
        return  # beyond the largest float: a clear error, tested below
    assert same(absolute_round(np.array([value]), base)[0], expected), case


@settings(max_examples=1000, deadline=None)
@given(value=any_magnitude, digits=st.integers(1, 15))
@example(value=5e-324, digits=1)
@example(value=1.2345e-310, digits=3)
@example(value=9.995e299, digits=3)
@example(value=1e23, digits=15)
def test_relative_rounding_follows_the_rule_for_any_float(value, digits):
    expected = rule_relative_round(value, digits)
    assume(not math.isinf(expected))
    assert same(relative_round(np.array([value]), digits)[0], expected), (value, digits)


@settings(max_examples=800, deadline=None)
@given(case=value_and_base(), origin=st.one_of(st.just(0.0), any_magnitude))
@example(case=(1234561.0, 1.0), origin=0.0)
@example(case=(1000000000.0015, 0.001), origin=0.0)
@example(case=(3.5e-300, 1e-300), origin=0.0)
def test_interval_cells_follow_the_rule_for_any_float(case, origin):
    value, width = case
    lower, upper, middle = rule_cell(value, decimal_of(width), decimal_of(origin))
    assume(math.isfinite(upper) and math.isfinite(lower))
    label = IntervalGroup("x", width=width, origin=origin, release="label").apply(
        pd.Series([value])
    )[0]
    assert parse_label(label) == (lower, upper), (value, width, origin)
    assume(math.isfinite(middle))
    out = IntervalGroup("x", width=width, origin=origin).apply(pd.Series([value]))[0]
    assert same(out, middle), (value, width, origin)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(any_magnitude, min_size=1, max_size=40), case=value_and_base())
@example(values=[0.1, 0.1, 0.1], case=(0.1, 1.0))
@example(values=[-0.3, -0.2, -0.1, 0.1, 0.2, 0.3], case=(0.0, 1.0))
def test_interval_means_lie_within_their_values_and_near_the_exact_mean(values, case):
    width = case[1]
    cells = [rule_cell(v, decimal_of(width))[:2] for v in values]
    assume(all(math.isfinite(bound) for cell in cells for bound in cell))
    means = IntervalGroup("x", width=width, release="mean").apply(pd.Series(values))
    for cell in set(cells):
        members = [v for v, c in zip(values, cells, strict=True) if c == cell]
        released = {m for m, c in zip(means, cells, strict=True) if c == cell}
        assert len(released) == 1
        mean = released.pop()
        exact = sum(map(Fraction, members)) / len(members)
        assert min(members) <= mean <= max(members)
        # Compensated summation, then one division (and subnormals' coarser spacing).
        bound = Fraction(2.0**-50) * max(map(abs, members)) + Fraction(2.0**-1074)
        assert abs(Fraction(mean) - exact) <= bound
        if len(set(members)) == 1:
            assert same(mean, members[0] + 0.0)


def test_the_issue_examples():
    assert truncate(np.array([71638.54]), 0.01)[0] == 71638.54
    assert truncate(np.array([1e14]), 1)[0] == 1e14
    assert truncate(np.array([0.99999999999]), 1)[0] == 0.0
    assert np.isfinite(truncate(np.array([1e300, -1e300]), 0.01)).all()
    assert absolute_round(np.array([0.35, -0.35, 0.25]), 0.1).tolist() == [0.4, -0.4, 0.3]
    labels = IntervalGroup("x", width=1, release="label").apply(
        pd.Series([1234560, 1234561, 1234562.5])
    )
    assert labels.tolist() == ["[1234560, 1234561)", "[1234561, 1234562)", "[1234562, 1234563)"]


def test_seven_significant_digit_values_on_the_grid_stay_put():
    # The issue's count: 1,170 of 20,000 such values were lowered by truncation.
    rng = np.random.default_rng(13)
    cents = rng.integers(10**6, 10**7, 20_000)
    values = np.array([float(f"{c}e-2") for c in cents])
    assert np.array_equal(truncate(values, 0.01), values)
    assert np.array_equal(absolute_round(values, 0.01), values)
    assert np.array_equal(relative_round(values, 7), values)


def test_rounding_beyond_the_largest_float_is_a_clear_error():
    with pytest.raises(RecipeError, match="largest"):
        AbsoluteRound("x", base=1e308).apply(pd.Series([1.7e308]))


# ---------------------------------------------------------------------------- labels
LABEL = re.compile(r"^\[(?P<lower>[^,]+), (?P<upper>[^)]+)\)$")


def parse_label(label: str) -> tuple[float, float]:
    match = LABEL.match(label)
    assert match, label
    for bound in match.groups():
        # Each bound is the shortest decimal that reads back as its float, without "-0".
        number = float(bound)
        assert bound == short(number), label
    return float(match["lower"]), float(match["upper"])


def short(number: float) -> str:
    text = repr(number + 0.0)
    return text[:-2] if text.endswith(".0") else text


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(any_magnitude, min_size=2, max_size=30),
    case=value_and_base(),
    origin=st.one_of(st.just(0.0), any_magnitude),
)
def test_labels_are_distinct_iff_intervals_are(values, case, origin):
    width = case[1]
    cells = [rule_cell(v, decimal_of(width), decimal_of(origin))[:2] for v in values]
    assume(all(math.isfinite(b) for cell in cells for b in cell))
    labels = IntervalGroup("x", width=width, origin=origin, release="label").apply(
        pd.Series(values)
    )
    for i in range(len(values)):
        for j in range(i):
            assert (labels[i] == labels[j]) == (cells[i] == cells[j])


def test_labels_stay_exact_at_every_magnitude():
    cases = [
        (1.0, [1234560, 1234561, 1234562.5]),
        (0.001, [1e9, 1e9 + 0.001, 1e9 + 0.0025]),
        (1e-300, [1e-300, 2e-300, 3.5e-300]),
        (0.1, [-0.05, 0.05, 0.15]),
    ]
    for width, values in cases:
        labels = IntervalGroup("x", width=width, release="label").apply(pd.Series(values))
        assert labels.nunique() == len(values), labels.tolist()
        for value, label in zip(values, labels, strict=True):
            lower, upper = parse_label(label)
            assert lower <= value < upper
    assert IntervalGroup("x", width=0.1, release="label").apply(pd.Series([-0.05]))[0] == (
        "[-0.1, 0)"
    )


# ---------------------------------------------------------------------------- signs, inputs
all_steps = st.one_of(
    st.builds(AbsoluteRound, column=st.just("x"), decimals=st.integers(-3, 6)),
    st.builds(AbsoluteRound, column=st.just("x"), base=st.sampled_from([0.1, 0.25, 5.0, 1e-300])),
    st.builds(RelativeRound, column=st.just("x"), digits=st.integers(1, 15)),
    st.builds(Truncate, column=st.just("x"), decimals=st.integers(-3, 6)),
    st.builds(
        IntervalGroup,
        column=st.just("x"),
        width=st.sampled_from([0.5, 1.0, 3.0, 1e-300]),
        origin=st.sampled_from([0.0, -0.0, 0.25]),
        release=st.sampled_from(["label", "midpoint", "mean"]),
    ),
    st.builds(
        IntervalGroup,
        column=st.just("x"),
        breaks=st.sampled_from([(-0.0, 1.0), (-1.0, -0.0), (0.0,)]),
        release=st.sampled_from(["label", "midpoint", "mean"]),
    ),
    st.builds(TopBottomCode, column=st.just("x"), top=st.sampled_from([-0.0, 1.0])),
    st.builds(TopBottomCode, column=st.just("x"), bottom=st.sampled_from([-0.0, -1.0])),
    st.builds(
        UniformNoise,
        column=st.just("x"),
        half_width=st.sampled_from([1e-3, 1.0]),
        floor=st.sampled_from([None, -0.0, 0.0]),
        seed=st.integers(0, 9),
    ),
    st.builds(
        GaussianNoise,
        column=st.just("x"),
        sd_fraction=st.sampled_from([1e-3, 1.0]),
        floor=st.sampled_from([None, -0.0]),
        seed=st.integers(0, 9),
    ),
    st.builds(KernelSmooth, column=st.just("x"), locations=st.just(("u",)), bandwidth=st.just(0.0)),
    st.builds(KernelSmooth, column=st.just("x"), locations=st.just(("u",)), bandwidth=st.just(1.0)),
    st.builds(
        Microaggregate,
        column=st.just("x"),
        k=st.integers(2, 4),
        aggregate=st.sampled_from(["mean", "median"]),
    ),
    st.builds(
        Pram,
        column=st.just("x"),
        retention=st.sampled_from([0.0, 0.5, 1.0]),
        invariant=st.booleans(),
        seed=st.integers(0, 9),
    ),
)
small_and_signed = st.lists(
    st.one_of(
        st.just(-0.0),
        st.just(0.0),
        st.floats(-1.0, 1.0),
        st.floats(-1e-300, 1e-300),
        any_magnitude,
        st.just(float("nan")),
    ),
    min_size=1,
    max_size=30,
)


def assume_enough_values(step, values: list[float]) -> None:
    """Microaggregation needs k values to form a group (it refuses fewer, by design)."""
    if isinstance(step, Microaggregate):
        assume(int(pd.Series(values, dtype=float).notna().sum()) >= step.k)


def released(step, values: list[float]) -> pd.Series:
    assume_enough_values(step, values)
    frame = pd.DataFrame({"x": values, "u": np.arange(len(values), dtype=float)})
    return step.apply(frame["x"], frame=frame, cache={})


@settings(max_examples=400, deadline=None)
@given(values=small_and_signed, step=all_steps)
def test_no_masked_value_carries_a_sign_its_magnitude_does_not(values, step):
    out = released(step, values)
    if out.dtype == object:  # labels: no "-0" bound
        assert not any(re.search(r"(^|[\[<=, ])-0([,)]|$)", str(v)) for v in out.dropna())
        return
    numbers = out.to_numpy(dtype="float64", na_value=np.nan)
    assert not np.any((numbers == 0) & np.signbit(numbers))


@settings(max_examples=300, deadline=None)
@given(values=small_and_signed, step=all_steps)
def test_masking_never_mutates_its_input(values, step):
    assume_enough_values(step, values)
    frame = pd.DataFrame({"x": values, "u": np.arange(len(values), dtype=float)})
    before = frame.copy(deep=True)
    array = frame["x"].to_numpy()
    array_before = array.copy()
    step.apply(frame["x"], frame=frame, cache={})
    pd.testing.assert_frame_equal(frame, before)
    assert np.array_equal(np.signbit(frame["x"]), np.signbit(before["x"]))
    for function, parameter in ((truncate, 0.1), (absolute_round, 0.1), (relative_round, 2)):
        function(array, parameter)
        np.testing.assert_array_equal(array, array_before)
        assert np.array_equal(np.signbit(array), np.signbit(array_before))


def test_every_step_type_is_in_the_sign_and_input_checks():
    covered = {AbsoluteRound, RelativeRound, Truncate, IntervalGroup, TopBottomCode}
    covered |= {UniformNoise, GaussianNoise, KernelSmooth, Microaggregate, Pram}
    text_only = {MergeLevels, DateReduce}  # no numbers out: dates and text levels
    text_only |= {ZipToThreeDigits, RandomPseudonym, HmacPseudonym}  # text: prefixes, codes
    text_only |= {CodePrefix, Icd10Chapter}  # text codes in, text codes out
    text_only |= {HierarchyLevel}  # a look-up of text labels
    assert covered | text_only == set(STEP_TYPES.values())


# ---------------------------------------------------------------------------- the file
FILE_CASES = [
    # The issue's example: rounding to whole numbers gave -0.0 for the three negatives.
    (AbsoluteRound("x", decimals=0), [-0.3, -0.2, -0.1, 0.1, 0.2, 0.3]),
    (AbsoluteRound("x", base=5.0), [-0.3, -0.2, -0.1, 0.1, 0.2, 0.3]),
    (Truncate("x", decimals=0), [-0.3, -0.2, -0.1, 0.1, 0.2, 0.3]),
    (Truncate("x", base=0.5), [-0.3, -0.2, -0.1, 0.1, 0.2, 0.3]),
    # Masked values that keep the sign of an original zero.
    (RelativeRound("x", digits=2), [-0.0, -0.0, -0.0, 0.0, 0.0, 0.0]),
    (TopBottomCode("x", top=-0.0), [0.0, 0.0, 0.0, 0.1, 0.2, 0.3]),
    (IntervalGroup("x", width=1.0, release="midpoint"), [-0.0, -0.0, -0.0, 0.0, 0.0, 0.0]),
    (KernelSmooth("x", locations=("u",), bandwidth=0.0), [-0.0, -0.0, -0.0, 0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize(("step", "values"), FILE_CASES, ids=lambda c: getattr(c, "method", ""))
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_released_file_has_the_classes_the_risk_reports(step, values, fmt):
    """Six records that mask to zero: the risk sees one class of 6 (k = 6); the file must not
    hold -0.0 beside 0.0 (two classes of 3, telling the recipient which were negative)."""
    frame = pd.DataFrame({"x": values, "u": np.arange(6.0)})
    recipe = Recipe(Roles(quasi_identifiers=("x",)), (step,))
    workspace = Workspace(frame)
    risk = workspace.risk(recipe)
    assert (risk.n_classes, risk.k) == (1, 6)
    file = export_release(workspace.released_frame(recipe), fmt, shuffle_seed=1)
    if fmt == "csv":
        column = file.data.decode().splitlines()[0].split(",").index("x")
        on_disk = pd.Series(
            [line.split(",")[column] for line in file.data.decode().splitlines()[1:]]
        )
    else:
        numbers = read_back(file.data, fmt)["x"].to_numpy(dtype="float64")
        assert not np.any((numbers == 0) & np.signbit(numbers))
        on_disk = pd.Series([repr(v) for v in numbers])
    assert on_disk.nunique() == risk.n_classes
    assert on_disk.value_counts().min() == risk.k
