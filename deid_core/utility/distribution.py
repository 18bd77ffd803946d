"""Utility beyond the model coefficient: confidence-interval overlap and changes in means,
standard deviations and correlations (Karr et al. 2006, "A framework for evaluating the utility
of data altered to protect confidentiality")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from deid_core.errors import DataError


def ci_overlap(
    estimate: float,
    se: float,
    masked_estimate: float,
    masked_se: float,
    level: float = 0.95,
) -> float:
    """Karr et al.'s interval overlap of the original and masked Wald confidence intervals:

        J = (overlap / length of the original CI + overlap / length of the masked CI) / 2,

    where overlap = min(U_o, U_m) - max(L_o, L_m). J = 1 for identical intervals, 0 when they
    just touch, negative (how far apart) when they are disjoint. Higher is better.
    """
    if not 0 < level < 1:
        raise DataError("The confidence level must be between 0 and 1.")
    if not (se > 0 and masked_se > 0):
        raise DataError("Interval overlap needs positive standard errors.")
    z = float(norm.ppf(0.5 + level / 2))
    low, high = estimate - z * se, estimate + z * se
    masked_low, masked_high = masked_estimate - z * masked_se, masked_estimate + z * masked_se
    overlap = min(high, masked_high) - max(low, masked_low)
    return 0.5 * (overlap / (high - low) + overlap / (masked_high - masked_low))


def distribution_changes(
    original: pd.DataFrame, masked: pd.DataFrame, columns: Sequence[str]
) -> pd.DataFrame:
    """Mean and standard deviation of each numeric column before and after masking, their
    differences, and the largest absolute change of its correlation with the other columns.
    Non-numeric columns (e.g. interval labels) are reported as not comparable."""
    numeric = [
        c
        for c in columns
        if pd.api.types.is_numeric_dtype(original[c]) and pd.api.types.is_numeric_dtype(masked[c])
    ]
    if len(numeric) > 1:
        corr_original = original[numeric].corr()
        corr_masked = masked[numeric].corr()
        corr_change = (corr_masked - corr_original).abs()
    rows = []
    for column in columns:
        if column not in numeric:
            note = (
                "not numeric after masking: not compared"
                if pd.api.types.is_numeric_dtype(original[column])
                else "categorical: not compared"
            )
            rows.append({"column": column, "note": note})
            continue
        before, after = original[column].astype(float), masked[column].astype(float)
        row = {
            "column": column,
            "note": "",
            "mean": before.mean(),
            "masked mean": after.mean(),
            "mean change": after.mean() - before.mean(),
            "SD": before.std(),
            "masked SD": after.std(),
            "SD ratio": after.std() / before.std() if before.std() > 0 else np.nan,
        }
        if len(numeric) > 1:
            others = corr_change.loc[column].drop(column)
            row["largest correlation change"] = float(others.max())
        rows.append(row)
    return pd.DataFrame(rows)
