"""Cologne et al.'s masking schemes for the exposure, and their comparison in the layout of the
paper's Table 2 (estimate, SE, deviance, LR statistic, relative bias, MSE, analysis potential)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from deid_core.errors import DataError
from deid_core.masking import AbsoluteRound, IntervalGroup, RelativeRound, UniformNoise
from deid_core.recipe import Recipe
from deid_core.utility.result import UtilityResult

#: Columns of :func:`scheme_comparison` (Cologne et al. 2012, Table 2).
COMPARISON_COLUMNS = (
    "scheme",
    "estimate",
    "se",
    "deviance",
    "lr_statistic",
    "lr_pvalue",
    "relative_bias_pct",
    "mse",
    "analysis_potential",
    "replicates",
    "estimate_min",
    "estimate_max",
    "mse_min",
    "mse_max",
    "note",
)


def scheme_comparison(results: Sequence[tuple[str, UtilityResult | None]]) -> pd.DataFrame:
    """Cologne's Table 2 as numbers: a "No masking" row from the first usable result, then one
    row per masking scheme. Random schemes give means over replicates with (min, max) columns;
    their deviance and LR statistic are those of the released draw (replicate 0). A scheme
    whose model cannot be fitted has empty figures and the reason in ``note``."""
    rows: list[dict[str, Any]] = []
    reference = next((r for _, r in results if r is not None and r.original), None)
    if reference is not None and reference.original is not None:
        fit = reference.original
        rows.append(
            {
                "scheme": "No masking",
                "estimate": fit.estimate,
                "se": fit.se,
                "deviance": fit.deviance,
                "lr_statistic": fit.lr_statistic,
                "lr_pvalue": fit.lr_pvalue,
                "relative_bias_pct": 0.0,
                "mse": fit.se**2,
                "analysis_potential": 1.0,
                "replicates": 0,
            }
        )
    for name, result in results:
        row: dict[str, Any] = {"scheme": name}
        if result is None or not result.available or result.masked_estimate is None:
            row["note"] = (result.error if result is not None else None) or "no model"
            rows.append(row)
            continue
        bias = result.relative_bias
        row.update(
            estimate=result.masked_estimate,
            se=result.masked_se,
            relative_bias_pct=None if bias is None else 100 * bias,
            mse=result.masked_mse,
            analysis_potential=result.analysis_potential,
            replicates=result.replicates.n_replicates if result.replicates else 0,
        )
        if result.masked is not None:
            row.update(
                deviance=result.masked.deviance,
                lr_statistic=result.masked.lr_statistic,
                lr_pvalue=result.masked.lr_pvalue,
            )
        if result.replicates is not None:
            reps = result.replicates
            row.update(
                estimate_min=reps.estimate_min,
                estimate_max=reps.estimate_max,
                mse_min=reps.mse_min,
                mse_max=reps.mse_max,
                note=f"mean of {reps.n_replicates - reps.n_failed} replicates"
                + (f"; {reps.n_failed} failed" if reps.n_failed else ""),
            )
        rows.append(row)
    return pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))


def cologne_schemes(recipe: Recipe, seed: int | None = None) -> list[tuple[str, Recipe]]:
    """Cologne et al.'s Table 2 schemes for the recipe's exposure (other steps kept): rounding
    to 3 significant digits, to 2 and 1 decimals, stratification (10 intervals from 0 released
    as their means), and uniform noise of +/-0.01 and +/-0.1 (floored at 0)."""
    exposure = recipe.roles.exposure
    if exposure is None:
        raise DataError("Choose an exposure to compare masking schemes of it.")
    schemes = [
        ("rounded to 3 significant digits", [RelativeRound(exposure, digits=3)]),
        ("rounded to 2 decimals", [AbsoluteRound(exposure, decimals=2)]),
        ("rounded to 1 decimal", [AbsoluteRound(exposure, decimals=1)]),
        (
            "stratified (width 0.25, interval means)",
            [IntervalGroup(exposure, 0.25, release="mean")],
        ),
        ("noise +/-0.01", [UniformNoise(exposure, 0.01, floor=0.0, seed=seed)]),
        ("noise +/-0.1", [UniformNoise(exposure, 0.1, floor=0.0, seed=seed)]),
    ]
    return [(name, recipe.with_steps_for(exposure, steps)) for name, steps in schemes]
