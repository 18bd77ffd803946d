"""Noisy values released at the noise's scale (``round_to_noise_scale``): the base, the
released values, the matching tolerance the risk uses, and the recipe's JSON."""

import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.errors import RecipeError
from deid_core.masking import GaussianNoise, UniformNoise, step_from_dict
from deid_core.masking.base import rng_for
from deid_core.masking.noise import noise_release_base
from deid_core.recipe import Recipe, Roles
from deid_core.risk.linkage import masking_tolerance
from deid_core.workspace import Workspace


@pytest.mark.parametrize(
    ("reach", "base"),
    [(5, 1.0), (0.5, 0.1), (12, 1.0), (50, 10.0), (4.99, 0.1), (0.05, 0.01), (1, 0.1)],
)
def test_the_base_is_the_power_of_ten_at_or_below_a_fifth_of_the_reach(reach, base):
    assert noise_release_base(reach) == base


@given(st.floats(min_value=1e-250, max_value=1e250))
def test_the_base_brackets_a_fifth_of_the_reach(reach):
    """base <= reach / 5 < 10 x base, with base an exact power of ten (checked in decimals)."""
    base = noise_release_base(reach)
    fifth = Decimal(reach) / 5
    assert Decimal(base) <= fifth * (1 + Decimal("1e-15"))
    assert fifth < Decimal(base) * 10 * (1 + Decimal("1e-15"))
    assert float(f"1e{round(math.log10(base))}") == base


@pytest.mark.parametrize("reach", [0.0, -1.0, math.inf, math.nan, 5e-324])
def test_no_base_without_a_reach(reach):
    assert noise_release_base(reach) is None


def weights(n: int = 500) -> pd.Series:
    rng = np.random.default_rng(11)
    values = rng.normal(130, 30, n).round()
    values[::50] = np.nan
    return pd.Series(values, name="lwt")


def test_uniform_noise_of_5_is_released_in_whole_numbers_next_to_the_same_draw():
    series = weights()
    plain = UniformNoise("lwt", half_width=5.0, seed=7).apply(series)
    rounded = UniformNoise("lwt", half_width=5.0, seed=7, round_to_noise_scale=True).apply(series)
    # The draw is the same: the full-precision values are the original plus the seeded noise.
    finite = series.notna().to_numpy()
    noise = rng_for(7, 0).uniform(-5.0, 5.0, len(series))
    np.testing.assert_array_equal(plain.to_numpy()[finite], (series + noise).to_numpy()[finite])
    assert rounded.isna().equals(series.isna())
    r = rounded.to_numpy()[finite]
    assert np.array_equal(r, np.round(r))  # whole numbers
    assert np.all(np.abs(r - plain.to_numpy()[finite]) <= 0.5)
    assert np.all(np.abs(r - series.to_numpy()[finite]) <= 5.5)
    assert not np.array_equal(r, series.to_numpy()[finite])  # the noise is still there


def test_integer_columns_stay_integer_and_the_floor_comes_last():
    series = pd.Series(np.arange(0, 40), dtype="int64", name="age")
    step = UniformNoise("age", half_width=5.0, floor=0.5, seed=3, round_to_noise_scale=True)
    out = step.apply(series)
    assert out.min() >= 0.5  # rounding to 0 would go below the floor: the floor wins
    whole = UniformNoise("age", half_width=5.0, seed=3, round_to_noise_scale=True).apply(series)
    assert whole.dtype == "int64"
    assert series.tolist() == list(range(40))  # the input is never modified


def test_gaussian_noise_is_rounded_to_a_fifth_of_two_sd():
    series = weights()
    step = GaussianNoise("lwt", sd_fraction=0.1, seed=2, round_to_noise_scale=True)
    reach = 2 * 0.1 * series.std()
    assert step.reach(series) == pytest.approx(reach)
    base = noise_release_base(reach)
    assert base == 1.0  # 2 x 0.1 x about 30 = about 6: whole numbers
    out = step.apply(series).dropna().to_numpy()
    assert np.array_equal(out, np.round(out / base) * base)


def test_the_description_says_the_precision():
    assert UniformNoise("w", 5.0, round_to_noise_scale=True).describe() == (
        "w: uniform noise of +/-5 added, released to the nearest 1"
    )
    assert (
        "released to 1 decimal(s)" in UniformNoise("w", 0.5, round_to_noise_scale=True).describe()
    )
    assert "released" not in UniformNoise("w", 0.5).describe()
    assert "noise's scale" in GaussianNoise("w", 0.1, round_to_noise_scale=True).describe()


def test_the_tolerance_grows_by_half_the_base_and_holds_every_record():
    frame = pd.DataFrame({"lwt": weights().fillna(120.0), "low": [0, 1] * 250})
    roles = Roles(quasi_identifiers=("lwt",), exposure="lwt", outcome="low")
    step = UniformNoise("lwt", half_width=5.0, seed=9, round_to_noise_scale=True)
    recipe = Recipe(roles, (step,))
    assert masking_tolerance(recipe, frame) == {"lwt": 5.5}
    assert masking_tolerance(Recipe(roles, (UniformNoise("lwt", 5.0),)), frame) == {"lwt": 5.0}
    gaussian = Recipe(roles, (GaussianNoise("lwt", 0.1, round_to_noise_scale=True),))
    sd_reach = 2 * 0.1 * frame["lwt"].std()
    assert masking_tolerance(gaussian, frame)["lwt"] == pytest.approx(sd_reach + 0.5)
    # Uniform noise reaches every record: nobody's own record is out of reach.
    released = Workspace(frame).masked_column(recipe, "lwt")
    assert np.all(np.abs(released - frame["lwt"]) <= 5.5)
    result = Workspace(frame).perturbed_risk(recipe)
    assert result.out_of_reach == 0 and result.reach["lwt"] == 5.5


def test_the_recipe_carries_the_choice_and_checks_it():
    step = UniformNoise("w", 5.0, seed=1, round_to_noise_scale=True)
    data = step.to_dict()
    assert data["round_to_noise_scale"] is True
    assert step_from_dict(data) == step
    old = {"method": "gaussian_noise", "column": "w", "sd_fraction": 0.1}
    assert step_from_dict(old).round_to_noise_scale is False  # recipes written before
    with pytest.raises(RecipeError, match="round_to_noise_scale must be true or false"):
        step_from_dict({**data, "round_to_noise_scale": "yes"})


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=30),
    st.floats(min_value=1e-3, max_value=1e3),
)
def test_rounding_moves_a_noisy_value_by_at_most_half_the_base(values, half_width):
    series = pd.Series(values, dtype="float64")
    plain = UniformNoise("x", half_width, seed=5).apply(series).to_numpy()
    out = UniformNoise("x", half_width, seed=5, round_to_noise_scale=True).apply(series)
    base = noise_release_base(half_width)
    assert np.all(np.abs(out.to_numpy() - plain) <= base / 2 * (1 + 1e-9) + 1e-9 * np.abs(plain))
    assert not np.signbit(out.to_numpy()[out.to_numpy() == 0]).any()  # never -0.0
