"""Interval overlap and changes in means, SDs and correlations."""

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import DataError
from deid_core.utility.distribution import ci_overlap, distribution_changes


def test_ci_overlap_identical_touching_and_disjoint():
    assert ci_overlap(1.0, 0.1, 1.0, 0.1) == pytest.approx(1.0)
    z = 1.959963984540054
    # Intervals [1 - z/10, 1 + z/10] and [1 + z/10, 1 + 3z/10] just touch.
    assert ci_overlap(1.0, 0.1, 1.0 + 2 * z * 0.1, 0.1) == pytest.approx(0.0, abs=1e-12)
    assert ci_overlap(1.0, 0.1, 3.0, 0.1) < 0
    # By hand: original [0, 2] (se = 1/z), masked [1, 2] -> overlap 1: (1/2 + 1/1) / 2.
    assert ci_overlap(1.0, 1 / z, 1.5, 0.5 / z) == pytest.approx(0.75)
    with pytest.raises(DataError):
        ci_overlap(1.0, 0.0, 1.0, 0.1)


def test_distribution_changes_by_hand():
    original = pd.DataFrame(
        {"x": [1.0, 2.0, 3.0, 4.0], "y": [2.0, 4.0, 6.0, 8.0], "g": list("abab")}
    )
    masked = pd.DataFrame({"x": [1.0, 2.0, 3.0, 6.0], "y": [2.0, 4.0, 6.0, 8.0], "g": list("abab")})
    table = distribution_changes(original, masked, ["x", "y", "g"]).set_index("column")
    assert table.loc["x", "mean change"] == pytest.approx(0.5)
    assert table.loc["x", "SD ratio"] == pytest.approx(masked["x"].std() / original["x"].std())
    expected = abs(np.corrcoef(masked["x"], masked["y"])[0, 1] - 1.0)
    assert table.loc["x", "largest correlation change"] == pytest.approx(expected)
    assert table.loc["g", "note"] == "categorical: not compared"
