"""Subsampling: exactly round(f n) records (per stratum when stratified), seeded like the noise
steps, and the records it keeps are what the workspace releases and assesses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import RecipeError
from deid_core.masking import Subsample
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace


def frame(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"sex": rng.choice(["F", "M"], n, p=[0.8, 0.2]), "v": np.arange(n)})


def test_simple_random_sample_keeps_the_rounded_share():
    outcome = Subsample(fraction=0.3, seed=2).apply(frame())
    assert outcome.keep.sum() == 60
    assert outcome.facts["sampling_fraction"] == pytest.approx(0.3)
    again = Subsample(fraction=0.3, seed=2).apply(frame())
    assert np.array_equal(again.keep, outcome.keep)
    other = Subsample(fraction=0.3, seed=2).apply(frame(), replicate=1)
    assert not np.array_equal(other.keep, outcome.keep)


def test_stratified_sample_keeps_each_strata_share():
    data = frame()
    keep = Subsample(fraction=0.25, strata=("sex",), seed=4).apply(data).keep
    for sex, group in data.groupby("sex"):
        assert keep[group.index].sum() == int(np.floor(0.25 * len(group) + 0.5)), sex


def test_whole_file_and_too_small_fractions():
    assert Subsample(fraction=1.0, seed=1).apply(frame()).keep.all()
    with pytest.raises(RecipeError, match="keeps none"):
        Subsample(fraction=0.001, seed=1).apply(frame(100))


def test_the_workspace_releases_the_sample():
    data = frame()
    recipe = Recipe(Roles(quasi_identifiers=("sex",)), data_steps=(Subsample(0.5, seed=7),))
    workspace = Workspace(data)
    released = workspace.masked_frame(recipe)
    kept = Subsample(0.5, seed=7).apply(data).keep
    assert released["v"].tolist() == data["v"][kept].tolist()
    assert recipe.apply(data)["v"].tolist() == released["v"].tolist()
    assert workspace.risk(recipe).n_records == 100
    link = workspace.linkage(recipe)  # no record id: matched by the released rows' positions
    assert 0 <= link.identifiability_score <= 1
