"""The identifiable visits file and the custodian's recipe shared by the release-link tests
(AppTest and browser; imported as ``release_files``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from deid_core.masking import DateReduce, RandomPseudonym, ZipToThreeDigits
from deid_core.recipe import Recipe, Roles

#: Names only the source has: never in the link, never on the recipient's page.
SOURCE_ONLY = ("name", "mrn", "date_of_birth")


def visits_csv(n_people: int = 80, seed: int = 5) -> bytes:
    """An identifiable visits file: name, medical record number, date of birth, ZIP code,
    sex, 1 to 3 admissions per patient with their date, length of stay and readmission."""
    rng = np.random.default_rng(seed)
    people = pd.DataFrame(
        {
            "name": [f"Patient {chr(65 + i % 26)}{i}" for i in range(n_people)],
            "mrn": [f"MRN{700000 + i}" for i in range(n_people)],
            "date_of_birth": (
                pd.Timestamp("1935-01-01")
                + pd.to_timedelta(rng.integers(0, 25_000, n_people), unit="D")
            ).strftime("%Y-%m-%d"),
            "zip": rng.choice(["02134", "02139", "03601"], n_people),
            "sex": rng.choice(["F", "M"], n_people),
        }
    )
    rows = people.loc[people.index.repeat(rng.integers(1, 4, n_people))].reset_index(drop=True)
    n = len(rows)
    rows["admission_date"] = (
        pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D")
    ).strftime("%Y-%m-%d")
    rows["length_of_stay"] = rng.geometric(0.25, n)
    logit = -1.5 + 0.2 * (rows["length_of_stay"] - 4)
    rows["readmitted"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return rows.to_csv(index=False).encode()


RECIPE = Recipe(
    Roles(
        quasi_identifiers=("zip", "sex", "admission_date"),
        direct_identifiers=("name", "date_of_birth"),
        record_id="mrn",
        exposure="length_of_stay",
        outcome="readmitted",
        covariates=("sex",),
    ),
    (
        RandomPseudonym("mrn", released_as="study_id"),
        ZipToThreeDigits("zip"),
        DateReduce("admission_date", to="year"),
    ),
)
