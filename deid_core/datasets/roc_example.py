"""Small data sets for the ROC-curve disclosure example (Matthews & Harel).

``matthews_harel_table()``: the ten records of Table 1 of G. J. Matthews and O. Harel, "An
examination of data confidentiality and disclosure issues related to publication of empirical
ROC curves", Academic Radiology (2013): test ``score``, disease ``status`` (1 = diseased) and
``known``, the flag of the records in the intruder's subset (all but the record scoring 0.61).
Its empirical ROC curve is the paper's Table 2.

``diagnostic_test_data(n, seed)``: a simulated diagnostic test, our own: ``status`` is 1 with
probability ``PREVALENCE`` (0.3); the score is normal with mean 0 and SD 1 for the healthy and
mean ``DISEASED_MEAN`` (1.5) and SD ``DISEASED_SD`` (1.2) for the diseased (a binormal model,
as in the paper's simulations, whose exact parameters are not in our copy), rounded to 3
decimals. No row describes a real person.
"""

import numpy as np
import pandas as pd

MATTHEWS_HAREL_ROWS = (
    (2.98, 1),
    (2.71, 1),
    (1.50, 1),
    (1.32, 0),
    (1.05, 0),
    (0.61, 1),
    (0.53, 0),
    (0.51, 1),
    (-0.20, 0),
    (-1.85, 0),
)
#: Score of the record the intruder does not know in the paper's first example.
MATTHEWS_HAREL_MISSING = 0.61

PREVALENCE = 0.3
DISEASED_MEAN = 1.5
DISEASED_SD = 1.2


def matthews_harel_table() -> pd.DataFrame:
    """The ten records of the paper's Table 1, with the intruder's ``known`` flag."""
    frame = pd.DataFrame(MATTHEWS_HAREL_ROWS, columns=["score", "status"])
    frame["known"] = frame["score"] != MATTHEWS_HAREL_MISSING
    return frame


def diagnostic_test_data(n: int = 200, seed: int = 20130601) -> pd.DataFrame:
    """``n`` simulated patients: ``score`` (binormal) and ``status`` (prevalence about 30%)."""
    rng = np.random.default_rng(seed)
    status = (rng.random(n) < PREVALENCE).astype(np.int64)
    score = np.where(
        status == 1,
        rng.normal(DISEASED_MEAN, DISEASED_SD, n),
        rng.normal(0.0, 1.0, n),
    )
    return pd.DataFrame({"score": np.round(score, 3), "status": status})
