"""Seeds: 128-bit seeds drawn independently for each purpose, written so that any JSON reader
keeps them exactly, while old small seeds still load."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import RecipeError
from deid_core.masking import GaussianNoise, UniformNoise, step_from_dict
from deid_core.masking.base import JSON_SAFE_INTEGER
from deid_core.recipe import Recipe, Roles
from deid_core.share import configuration_json, load_configuration

BIG_SEED = 2**127 + 12345


def test_a_128_bit_seed_is_written_as_digits_and_read_back_exactly():
    step = UniformNoise("dose", 0.1, seed=BIG_SEED)
    written = step.to_dict()
    assert written["seed"] == str(BIG_SEED)
    assert step_from_dict(json.loads(json.dumps(written))).seed == BIG_SEED
    recipe = Recipe(Roles(), (step, GaussianNoise("age", 0.2, seed=BIG_SEED + 1)))
    text = configuration_json(recipe, include_seeds=True)
    assert f'"seed": "{BIG_SEED}"' in text
    assert load_configuration(text).recipe == recipe
    assert '"seed"' not in configuration_json(recipe)  # left out unless asked


def test_old_small_seeds_still_load_and_stay_numbers():
    old = {"method": "uniform_noise", "column": "dose", "half_width": 0.1, "seed": 20240611}
    step = step_from_dict(old)
    assert step.seed == 20240611 and step.to_dict()["seed"] == 20240611
    assert step.to_dict()["seed"] <= JSON_SAFE_INTEGER


def test_a_big_seed_draws_reproducibly_and_differs_from_its_neighbour():
    frame = pd.Series(np.zeros(1000), name="dose")
    first = UniformNoise("dose", 1.0, seed=BIG_SEED).apply(frame)
    again = UniformNoise("dose", 1.0, seed=str(BIG_SEED)).apply(frame)
    other = UniformNoise("dose", 1.0, seed=BIG_SEED + 1).apply(frame)
    pd.testing.assert_series_equal(first, again)
    assert not np.allclose(first, other)


@pytest.mark.parametrize("seed", [-1, 2**256, "12a", "", 1.5, True, "9" * 100])
def test_bad_seeds_are_refused_with_a_plain_message(seed):
    with pytest.raises(RecipeError, match="seed must be a whole number"):
        UniformNoise("dose", 0.1, seed=seed)
