"""The collaborator's analysis moved to areas: step 1 of two-step smoothing (Zhou, Dominici &
Louis 2010).

The records are aggregated to areas (:mod:`deid_core.masking.areas`); the analysis on the area
table takes the outcome's sum (its mean for a linear model), the means of the exposure and the
covariates, and the area-level model family of the individual-level one (:data:`AREA_FAMILY`),
so that step 2 can smooth the areas and fit the area-level model.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from deid_core.errors import DataError
from deid_core.masking.areas import (
    AREA_SIZE,
    MEAN_SUFFIX,
    AreaTable,
    aggregate_to_areas,
    grid_areas,
)
from deid_core.recipe import Roles

#: The area-level model for each individual-level model family: grouped binary outcomes are
#: binomial counts out of the area's records; counts are Poisson with the area's records (or
#: person-time) as the offset; a numeric outcome is averaged and stays linear.
AREA_FAMILY = {
    "logistic": "binomial",
    "err": "binomial",
    "binomial": "binomial",
    "poisson": "poisson",
    "linear": "linear",
}


@dataclass(frozen=True)
class AreaLevelData:
    """An individual-level analysis moved to areas (step 1 of Zhou et al.'s two-step mode).

    ``areas`` is the aggregated table; ``roles`` the analysis on it (the outcome's sum, or its
    mean for a linear model; the exposure's and covariates' means; the area id as record id);
    ``family`` with ``trials`` (binomial: events out of the area's records, or out of the
    summed trials of grouped data) or ``offset`` (poisson: the area's records or person-time).
    The coordinates are the areas' centroids, under their own names, for step 2 (smoothing).
    """

    areas: AreaTable
    roles: Roles
    family: str
    trials: str | None = None
    offset: str | None = None

    @property
    def frame(self) -> pd.DataFrame:
        return self.areas.table

    def __str__(self) -> str:
        model = {"binomial": f"binomial, trials '{self.trials}'", "poisson": "poisson"}.get(
            self.family, self.family
        )
        if self.offset:
            model += f", offset log('{self.offset}')"
        return f"{self.areas}\nArea-level model: {model}."


def area_level_data(
    df: pd.DataFrame,
    roles: Roles,
    family: str,
    *,
    area: str | None = None,
    grid: tuple[str, str, int] | None = None,
    offset: str | None = None,
    trials: str | None = None,
) -> AreaLevelData:
    """Aggregate an individual-level analysis to areas: by the ``area`` column, or by equal
    square cells ``grid = (x, y, cells per side)`` (Zhou et al.'s simulations).

    The outcome is summed (averaged for ``family="linear"``), the exposure and numeric
    covariates averaged, ``offset`` (person-time) and ``trials`` summed; the area-level
    family is :data:`AREA_FAMILY` of ``family``. Coordinates for smoothing: the grid's
    ``x`` and ``y``, else none (pass a grid, or add centroids yourself). Raises DataError
    without an exposure and outcome, with text covariates (a mean needs numbers), or with
    neither or both of ``area`` and ``grid``.
    """
    if roles.exposure is None or roles.outcome is None:
        raise DataError("Aggregating to areas needs an exposure and an outcome.")
    if (area is None) == (grid is None):
        raise DataError("Aggregate by an area column or by a grid of cells (one of the two).")
    if family == "cox":
        raise DataError(
            "The Cox model has no area-level form: follow-up times do not add up over an "
            "area. Choose another model to aggregate to areas."
        )
    if family not in AREA_FAMILY:
        raise DataError(f"Unknown model family '{family}'.")
    text = [c for c in roles.covariates if not pd.api.types.is_numeric_dtype(df[c])]
    if text:
        raise DataError(
            f"The covariate(s) {', '.join(map(repr, text))} are text: an area mean needs numbers. "
            "Recode them as 0/1 indicators or drop them from the model first."
        )
    coordinates: tuple[str, ...] = ()
    if grid is not None:
        x, y, cells = grid
        area, coordinates = "cell", (x, y)
        df = df.assign(cell=grid_areas(df, x, y, cells))
    else:
        area = str(area)
    area_family = AREA_FAMILY[family]
    linear = area_family == "linear"
    counts = [c for c in (None if linear else roles.outcome, trials) if c is not None]
    means = [roles.exposure, *roles.covariates, *([roles.outcome] if linear else [])]
    table = aggregate_to_areas(
        df,
        area,
        coordinates=coordinates,
        count_columns=counts,
        mean_columns=[c for c in means if c not in coordinates],
        person_time=offset,
    )
    covariates = tuple(c if c in coordinates else c + MEAN_SUFFIX for c in roles.covariates)
    exposure = roles.exposure + MEAN_SUFFIX
    outcome = roles.outcome + MEAN_SUFFIX if linear else roles.outcome
    area_roles = Roles(
        quasi_identifiers=(exposure,),
        exposure=exposure,
        outcome=outcome,
        covariates=covariates,
        record_id=area,
    )
    if area_family == "binomial":
        return AreaLevelData(table, area_roles, "binomial", trials=trials or AREA_SIZE)
    if area_family == "poisson":
        return AreaLevelData(table, area_roles, "poisson", offset=offset or AREA_SIZE)
    return AreaLevelData(table, area_roles, "linear")
