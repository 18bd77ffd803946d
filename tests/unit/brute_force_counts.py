"""Pair-by-pair counts that the tests compare the tool's figures with."""

from __future__ import annotations

import pandas as pd


def compatible(a: list, b: list, wildcard: bool) -> bool:
    """Whether two rows of quasi-identifier values match: equal where both are present; a
    missing value matches any value under the wildcard rule, only another missing value under
    the category rule."""
    for x, y in zip(a, b, strict=True):
        x_missing, y_missing = pd.isna(x), pd.isna(y)
        if wildcard and (x_missing or y_missing):
            continue
        if x_missing != y_missing or (not x_missing and x != y):
            return False
    return True
