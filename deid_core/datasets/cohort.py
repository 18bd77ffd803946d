"""A synthetic cohort modelled on the stomach-cancer example of Cologne et al. (2012).

Cologne et al. (section 2.4) analysed 64 stomach-cancer cases among about 16,000 members of the
Adult Health Study with a precise stomach dose (Gy), city, sex, age at exposure and age at
diagnosis; doses had median 0.31 Gy, mean 0.61 Gy and interquartile range 0.0-0.88 Gy, and a
linear excess-relative-risk (ERR) model gave 0.52 per Gy (their Table 2). The real data are not
public, so :func:`synthetic_cohort` draws a cohort of the same shape. No row describes a real
person.

How the columns are drawn (``n`` records, one random generator seeded with ``seed``):

- ``person_id``: 1..n (the record id).
- ``city``: Hiroshima with probability 2/3, else Nagasaki.
- ``sex``: F with probability 0.6, else M.
- ``age_at_exposure``: 72 x Beta(1.3, 2.0) years, 2 decimals (mean about 28).
- ``age_at_end``: age at diagnosis or end of follow-up, 2 decimals: the smaller of the age at
  the end of follow-up (60.4 years after exposure) and an age at death drawn from Normal(82, 10)
  restricted to at least 13 years after exposure (members were alive when the study began), at
  least 40 and at most 104.
- ``stomach_dose_gy``: with probability 0.37 essentially zero (half exactly 0, half between
  0.0001 and 0.0049 Gy), else 4 x Beta(1.05, 3.5) Gy; 4 decimals. Dose does not depend on the
  other columns.
- ``stomach_cancer``: 0/1, drawn with odds
  ``exp(BASELINE_LOG_ODDS + LOG_ODDS_PER_DECADE_OF_AGE_AT_END x (age_at_end - 70) / 10
  + LOG_ODDS_MALE x male) x (1 + TRUE_ERR_PER_GY x dose)``, so the true excess relative risk
  is 0.5 per Gy.

Summary of the default cohort (``n=16000, seed=20120101``), as printed when this module was
written: 16,000 records and 85 cases; stomach dose median 0.2969 Gy, mean 0.5920 Gy (SD 0.729),
quartiles 0.0019 and 0.9862 Gy, maximum 3.7894 Gy, 36.5% below 0.005 Gy (18.0% exactly 0); age
at exposure 0.00-71.80 years (mean 28.1); age at end 44.37-103.86 years (median 76.9); 10,618
in Hiroshima; 6,427 men. A logistic regression of cancer on dose alone gives a slope of 0.378
per Gy (SE 0.127); the linear ERR model with age at end and sex gives an ERR of 0.76 per Gy
(95% profile-likelihood interval about 0.28-1.6, which contains the true 0.5).
"""

import numpy as np
import pandas as pd

from deid_core.errors import DataError

TRUE_ERR_PER_GY = 0.5
"""Excess relative risk per Gy of stomach dose used to draw the outcome."""

BASELINE_LOG_ODDS = -6.25
"""Log odds of stomach cancer for an unexposed woman whose age at end is 70."""

LOG_ODDS_PER_DECADE_OF_AGE_AT_END = 0.4
"""Change in log odds per 10 years of age at diagnosis or end of follow-up."""

LOG_ODDS_MALE = 0.7
"""Log odds ratio of men against women."""

SHARE_NEAR_ZERO_DOSE = 0.37
"""Share of records whose stomach dose is below 0.005 Gy."""

MAX_DOSE_GY = 4.0
"""Upper bound of the stomach dose."""

FOLLOW_UP_YEARS = 60.4
"""Years from exposure to the end of follow-up."""

DEFAULT_N = 16000
DEFAULT_SEED = 20120101


def synthetic_cohort(n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Draw the synthetic cohort: the same ``n`` and ``seed`` always give the same table.

    Columns: person_id, city, sex, age_at_exposure, age_at_end, stomach_dose_gy,
    stomach_cancer (see the module docstring for how each is drawn).
    """
    if n < 1:
        raise DataError("The synthetic cohort needs at least one record (n >= 1).")
    rng = np.random.default_rng(seed)

    city = np.where(rng.random(n) < 2 / 3, "Hiroshima", "Nagasaki")
    male = rng.random(n) < 0.4
    age_at_exposure = np.round(72 * rng.beta(1.3, 2.0, n), 2)

    earliest_end = np.maximum(age_at_exposure + 13, 40)
    age_at_death = _truncated_normal(rng, mean=82, sd=10, low=earliest_end, high=104)
    age_at_end = np.round(np.minimum(age_at_death, age_at_exposure + FOLLOW_UP_YEARS), 2)

    near_zero = rng.random(n) < SHARE_NEAR_ZERO_DOSE
    tiny_dose = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(0.0001, 0.0049, n))
    positive_dose = MAX_DOSE_GY * rng.beta(1.05, 3.5, n)
    dose = np.round(np.where(near_zero, tiny_dose, positive_dose), 4)

    log_odds = (
        BASELINE_LOG_ODDS
        + LOG_ODDS_PER_DECADE_OF_AGE_AT_END * (age_at_end - 70) / 10
        + LOG_ODDS_MALE * male
    )
    odds = np.exp(log_odds) * (1 + TRUE_ERR_PER_GY * dose)
    cancer = rng.random(n) < odds / (1 + odds)

    return pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            "city": city,
            "sex": np.where(male, "M", "F"),
            "age_at_exposure": age_at_exposure,
            "age_at_end": age_at_end,
            "stomach_dose_gy": dose,
            "stomach_cancer": cancer.astype("int64"),
        }
    )


def _truncated_normal(
    rng: np.random.Generator, mean: float, sd: float, low: np.ndarray, high: float
) -> np.ndarray:
    """Draw Normal(mean, sd) values restricted to [low, high] by redrawing those outside."""
    draws = rng.normal(mean, sd, len(low))
    outside = (draws < low) | (draws > high)
    while outside.any():
        draws[outside] = rng.normal(mean, sd, int(outside.sum()))
        outside = (draws < low) | (draws > high)
    return draws
