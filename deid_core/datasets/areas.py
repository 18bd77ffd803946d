"""Synthetic area-level mortality by group, modelled on the Medicare analysis of Zhou et al.

Zhou, Dominici & Louis ("A smoothing approach for masking spatial data", Annals of Applied
Statistics, 2010, section 4) aggregated the yearly deaths of more than 4 million black and white
Medicare enrollees to 2095 zip codes of the north-east United States, then smoothed the
zip-code table (death rates, shares of each race, age and sex) with bivariate normal kernels
in the zip-code centroids, and compared the race odds ratio of death from the masked table with
the one from the original data. The Medicare data are not public, so :func:`area_data` draws a
table of the same kind: one row per area and group, with the area's location, the group's
population and its deaths. There are no age or sex columns. No row describes a real person.

How the columns are drawn (``n_areas`` areas, one random generator seeded with ``seed``):

- ``x``, ``y``: area centroid in km on a 100 x 100 km square, 2 decimals. 85% of the areas lie
  around one of the ``CITIES`` (bivariate normal with the city's spread, redrawn until inside
  the square, the city chosen with probability proportional to its weight), the rest are
  uniform on the square (rural areas).
- ``population``: the area's total, ``round(exp(Normal(6.8, 0.9)))`` restricted to
  ``MIN_AREA_POPULATION``..``MAX_AREA_POPULATION`` (median about 900, right-skewed), split
  between the groups by a Binomial draw with the group-1 share
  ``expit(-1.9 + 2.2 u(x, y) + 0.8 ((x - 50) + (y - 50)) / 50)``, where ``u`` (0 to 1) is the
  sum of Gaussian bumps of width ``URBAN_WIDTH_KM`` around the city centres, capped at 1 (see
  :func:`urban_index`); each group keeps at least one person. The share of group 1 therefore
  varies smoothly in space: highest in the cities, and higher toward the north-east.
- ``deaths``: Binomial(population, p) with
  ``logit p = TRUE_AREA_INTERCEPT + TRUE_AREA_GROUP_LOG_OR x group + g(x, y)``, where the
  spatial effect is a smooth gradient ``g(x, y) = GRADIENT_EAST x (x - 50) / 50
  + GRADIENT_NORTH x (y - 50) / 50`` (mortality rises toward the north-east, where the largest
  city is). The one-year death risk is about 5%, as among Medicare enrollees.
- ``row_id``: 1..2 n_areas (the record id, unique per row); ``area_id``: 1..n_areas, shared by
  the two rows of an area; ``group``: 0 or 1 (for Zhou, white and black).

Because the share of group 1 rises toward the north-east, where mortality is higher, a model of
deaths on the group alone overstates the group log odds ratio (confounding by place). The model
the data owner would fit, a binomial regression of (deaths, population - deaths) on ``group``,
``x`` and ``y``, is the generating model and recovers it.

Summary of the default table (``n_areas=2000, seed=20100402``), as printed when this module was
written: 4,000 rows; area populations 50 to 17,485 (median 924), 2,763,560 people in all, 42.5%
of them in group 1 (the share per area runs from 2% to 76%, median 44%); 162,958 deaths (5.9%),
0 to 824 per row. Binomial regressions of (deaths, population - deaths): on group alone, log OR
0.359 (SE 0.005), confounded by place; on group, x and y, log OR 0.2500 (SE 0.0053), so the
true 0.25 is recovered.
"""

import numpy as np
import pandas as pd

from deid_core.errors import DataError

TRUE_AREA_GROUP_LOG_OR = 0.25
"""Log odds ratio of death, group 1 against group 0, in the same place (b)."""

TRUE_AREA_INTERCEPT = -2.95
"""Log odds of death in group 0 at the centre of the square (a); expit(-2.95) = 5.0%."""

GRADIENT_EAST = 0.4
"""Change in log odds of death from the centre to the east edge of the square."""

GRADIENT_NORTH = 0.2
"""Change in log odds of death from the centre to the north edge of the square."""

SIDE_KM = 100.0
"""Side of the square study area, in km."""

CITIES = (
    # (x km, y km, spread km, weight): the largest city lies in the north-east.
    (72.0, 70.0, 7.0, 0.45),
    (25.0, 30.0, 6.0, 0.25),
    (30.0, 78.0, 5.0, 0.15),
    (78.0, 22.0, 5.0, 0.15),
)
"""City centres, spreads and shares of the urban areas."""

URBAN_SHARE = 0.85
"""Share of the areas drawn around a city; the rest are uniform on the square."""

URBAN_WIDTH_KM = 10.0
"""Width of the Gaussian bumps that make the urban index ``u`` behind the group-1 share."""

MIN_AREA_POPULATION = 50
MAX_AREA_POPULATION = 50_000

DEFAULT_N_AREAS = 2000
DEFAULT_SEED = 20100402

AREA_COLUMNS = ("row_id", "area_id", "x", "y", "group", "population", "deaths")


def area_data(n_areas: int = DEFAULT_N_AREAS, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Draw the area table (2 rows per area): the same arguments always give the same table.

    Columns: ``AREA_COLUMNS`` (see the module docstring for how each is drawn).
    """
    # scipy is imported where it is used: the command line imports the demo catalogue to
    # refuse bad input and must not spend seconds loading scipy first (see deid_core._lazy).
    from scipy.special import expit

    if n_areas < 1:
        raise DataError("The area data need at least one area (n_areas >= 1).")
    rng = np.random.default_rng(seed)
    x, y = _locations(rng, n_areas)

    total = np.exp(rng.normal(6.8, 0.9, n_areas)).round()
    total = np.clip(total, MIN_AREA_POPULATION, MAX_AREA_POPULATION).astype("int64")
    share = expit(-1.9 + 2.2 * urban_index(x, y) + 0.8 * ((x - 50) + (y - 50)) / 50)
    in_group_1 = np.clip(rng.binomial(total, share), 1, total - 1)

    group = np.tile([0, 1], n_areas)
    population = np.column_stack([total - in_group_1, in_group_1]).ravel()
    gradient = GRADIENT_EAST * (x - 50) / 50 + GRADIENT_NORTH * (y - 50) / 50
    log_odds = TRUE_AREA_INTERCEPT + TRUE_AREA_GROUP_LOG_OR * group + np.repeat(gradient, 2)
    deaths = rng.binomial(population, expit(log_odds))

    return pd.DataFrame(
        {
            "row_id": np.arange(1, 2 * n_areas + 1),
            "area_id": np.repeat(np.arange(1, n_areas + 1), 2),
            "x": np.repeat(x, 2),
            "y": np.repeat(y, 2),
            "group": group,
            "population": population.astype("int64"),
            "deaths": deaths.astype("int64"),
        }
    )


def urban_index(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``u(x, y) = min(1, sum_c exp(-|s - c|^2 / (2 URBAN_WIDTH_KM^2)))`` over the city
    centres ``c``: about 1 in a city core, near 0 in the countryside."""
    bumps = sum(
        np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * URBAN_WIDTH_KM**2))
        for cx, cy, _, _ in CITIES
    )
    return np.minimum(bumps, 1.0)


def _locations(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Area centroids: around a city with probability ``URBAN_SHARE``, else uniform."""
    centres = np.array([(cx, cy) for cx, cy, _, _ in CITIES])
    spreads = np.array([spread for _, _, spread, _ in CITIES])
    weights = np.array([weight for _, _, _, weight in CITIES])
    city = rng.choice(len(CITIES), size=n, p=weights / weights.sum())
    urban = rng.random(n) < URBAN_SHARE
    points = rng.uniform(0.0, SIDE_KM, (n, 2))
    pending = urban.copy()
    while pending.any():
        draws = rng.normal(centres[city[pending]], spreads[city[pending], None])
        points[pending] = draws
        pending = urban & ((points < 0) | (points > SIDE_KM)).any(axis=1)
    points = np.round(points, 2)
    return points[:, 0], points[:, 1]
