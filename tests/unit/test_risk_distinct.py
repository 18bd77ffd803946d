"""Class sizes counted on the distinct combinations of the original quasi-identifiers (the
search's fast path, :meth:`Workspace._partition_sizes`) equal the sizes of the masked records
grouped one by one, for generalising steps, for steps whose codes do not follow the values
(noise: the per-record path), and with missing values."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.masking import IntervalGroup, MergeLevels, Truncate, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace

QIS = ("sex", "age", "dose")


def _data(seed: int, n: int, ages: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(0, ages, n).astype(float)
    age[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M", "X"], n),
            "age": age,
            "dose": rng.choice([0.0, 0.013, 0.27, 0.5, 1.25, 2.0], n),
        }
    )


def _grouped_sizes(frame: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Per record, the number of records with the same masked values (missing equal to
    missing), by comparing value tuples: independent of the codes under test."""
    rows = [tuple("NA" if pd.isna(v) else v for v in row) for row in frame.itertuples(False)]
    counts: dict[tuple, int] = {}
    for row in rows:
        counts[row] = counts.get(row, 0) + 1
    return np.array([counts[row] for row in rows]), len(counts)


STEPS = {
    "as is": (),
    "ages by 10": (IntervalGroup("age", width=10.0),),
    "dose to 0 decimals and sexes merged": (
        Truncate("dose", decimals=0),
        MergeLevels("sex", groups={"FM": ["F", "M"]}),
    ),
    "noise on the dose": (UniformNoise("dose", half_width=0.3, seed=1),),
}


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 300),
    ages=st.integers(1, 60),
    steps=st.sampled_from(sorted(STEPS)),
)
def test_class_sizes_equal_the_records_grouped_one_by_one(seed, n, ages, steps):
    frame = _data(seed, n, ages)
    recipe = Recipe(Roles(quasi_identifiers=QIS), STEPS[steps])
    workspace = Workspace(frame)
    summary = workspace.risk(recipe, keep=False)
    sizes, n_classes = _grouped_sizes(workspace.masked_frame(recipe)[list(QIS)])
    assert np.array_equal(summary.class_size, sizes)
    assert summary.n_classes == n_classes
    assert summary.k == sizes.min() and summary.max_risk == 1 / sizes.min()
    assert summary.average_risk == n_classes / n
    # not kept in the cache, and the kept summary is the same
    assert workspace.risk(recipe) == summary


def test_the_fast_path_is_taken_for_generalisation_and_not_for_noise():
    frame = _data(3, 2_000, 30)  # 3 x 31 x 6 combinations at most: far fewer than the records
    workspace = Workspace(frame)
    general = Recipe(Roles(quasi_identifiers=QIS), STEPS["ages by 10"])
    noisy = Recipe(Roles(quasi_identifiers=QIS), STEPS["noise on the dose"])
    assert all(workspace._codes_follow_values(general, c) for c in QIS)
    assert workspace._distinct_combinations(QIS) is not None
    assert not workspace._codes_follow_values(noisy, "dose")
    for recipe in (general, noisy):
        sizes, n_classes = _grouped_sizes(workspace.masked_frame(recipe)[list(QIS)])
        summary = workspace.risk(recipe)
        assert np.array_equal(summary.class_size, sizes) and summary.n_classes == n_classes
