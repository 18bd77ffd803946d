"""Synthetic point-source exposure data modelled on example I of Zhou, Dominici & Louis (2010).

Zhou et al. ("A smoothing approach for masking spatial data", Annals of Applied Statistics,
section 3, example I) drew 1000 random locations in the study area [-1, 1] x [-1, 1], gave each
an exposure "eradiated from a point source" that "decreases symmetrically in all directions as
the Euclidean distance from the source increases", and drew a Poisson outcome whose log mean is
linear in the exposure, with coefficients chosen "to achieve reasonable variability" of the
outcome. The printed formulas of the paper were lost in our copy, so the exact exposure function
and coefficients below are ours; the design is theirs. No row describes a real person.

How the columns are drawn (``n`` locations, one random generator seeded with ``seed``):

- ``id``: 1..n (the record id).
- ``x``, ``y``: uniform on [-1, 1], independently, rounded to 4 decimals.
- ``dist_to_source``: Euclidean distance ``d`` from the point source at ``SOURCE = (0, 0)`` (the
  centre of the square), from the rounded coordinates, 6 decimals. This is the exposure
  *pattern* a "ring" kernel uses: two locations at the same distance get the same exposure.
- ``exposure``: ``exp(-d / EXPOSURE_SCALE)`` with ``EXPOSURE_SCALE = 0.5``, 6 decimals; 1 at
  the source, 0.37 at distance 0.5, 0.06 in the corners (d = sqrt 2).
- ``cases``: Poisson with ``log E(cases) = TRUE_POINT_SOURCE_INTERCEPT
  + TRUE_POINT_SOURCE_COEF x exposure`` = 0 + 2 x exposure, so the mean count runs from about
  1.1 in the corners to 7.4 at the source.

Summary of the default table (``n=1000, seed=20100401``), as printed when this module was
written: 1,000 locations, 1,781 cases (mean 1.78, 0 to 10 per location, 21.6% zero); exposure
mean 0.263 (0.062 to 0.988). A Poisson regression of cases on exposure gives b0 = 0.004
(SE 0.043) and b1 = 1.931 (SE 0.108), so the true b1 = 2 lies within 1 SE.
"""

import numpy as np
import pandas as pd

from deid_core.errors import DataError

TRUE_POINT_SOURCE_COEF = 2.0
"""Log rate ratio of ``cases`` per unit of ``exposure`` used to draw the outcome (b1)."""

TRUE_POINT_SOURCE_INTERCEPT = 0.0
"""Log mean count where the exposure is 0 (b0)."""

SOURCE = (0.0, 0.0)
"""Location of the point source in the study area [-1, 1] x [-1, 1]."""

EXPOSURE_SCALE = 0.5
"""Distance over which the exposure falls by a factor e."""

DEFAULT_N = 1000
DEFAULT_SEED = 20100401


def point_source_data(n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Draw the point-source table: the same ``n`` and ``seed`` always give the same table.

    Columns: id, x, y, dist_to_source, exposure, cases (see the module docstring).
    """
    if n < 1:
        raise DataError("The point-source data need at least one location (n >= 1).")
    rng = np.random.default_rng(seed)
    x = np.round(rng.uniform(-1.0, 1.0, n), 4)
    y = np.round(rng.uniform(-1.0, 1.0, n), 4)
    distance = np.round(np.hypot(x - SOURCE[0], y - SOURCE[1]), 6)
    exposure = np.round(np.exp(-distance / EXPOSURE_SCALE), 6)
    mean_cases = np.exp(TRUE_POINT_SOURCE_INTERCEPT + TRUE_POINT_SOURCE_COEF * exposure)
    return pd.DataFrame(
        {
            "id": np.arange(1, n + 1),
            "x": x,
            "y": y,
            "dist_to_source": distance,
            "exposure": exposure,
            "cases": rng.poisson(mean_cases).astype("int64"),
        }
    )
