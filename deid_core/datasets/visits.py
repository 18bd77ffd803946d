"""A synthetic hospital visits file: several admissions per patient, as El Emam & Malin (seed
001) describe clinical data (dates, ZIP codes, diagnosis codes as quasi-identifiers).

No row describes a real person. How the columns are drawn (``n_patients`` patients, one
random generator seeded with ``seed``):

- ``mrn``: the medical record number, "MRN" and 6 digits, one per patient (the record id).
- ``name``: a first and a last name drawn from short lists (a direct identifier).
- ``birth_date``: uniform between 1925-01-01 and 2004-12-31.
- ``zip``: 5-digit text, one per patient: a 3-digit prefix drawn from :data:`ZIP_PREFIXES`
  (weights falling with the position in the list) and two uniform digits.
- ``sex``: F with probability 0.52, else M.
- visits: 1 + Poisson(1.2) per patient; the first admission uniform over 2018-2022, each next
  one 1 + Exponential(mean 150) days after the previous discharge.
- ``admission_date`` / ``discharge_date``: ISO text; ``length_of_stay`` = discharge - admission
  in days, Geometric(1/4) (at least 1, mean 4).
- ``icd10``: a code of :data:`ICD10_CODES` (weights falling with the position) and a random
  fourth character 0-9, written with its dot ("J18.9").
- ``readmitted``: 0/1, drawn with log odds -2.2 + 0.12 x (length_of_stay - 4) + 0.3 x male:
  the true log odds ratio per day of stay is 0.12.
"""

import numpy as np
import pandas as pd

from deid_core.errors import DataError

#: 3-digit ZIP prefixes the patients live in (Massachusetts and nearby).
ZIP_PREFIXES = (
    "021", "022", "020", "024", "017", "018", "019", "014", "015", "016", "010", "011",
    "012", "013", "023", "025", "026", "027", "028", "029", "030", "031", "032", "033",
    "034", "035", "036", "060", "061", "062", "063", "064", "065", "066", "067", "068",
)  # fmt: skip
#: ICD-10 categories of the admissions (respiratory, circulatory, digestive, injuries...).
ICD10_CODES = (
    "J18", "I50", "I21", "J44", "N39", "A41", "K35", "I63", "E11", "K80", "S72", "I48",
    "F32", "C34", "K57", "N17", "E86", "R07", "I10", "J96", "K56", "M17", "O80", "Z38",
    "T81", "L03", "G40", "D64", "C50", "B34", "H66", "Q21", "P07", "F10", "S06", "K92",
)  # fmt: skip
FIRST_NAMES = (
    "Ana", "Ben", "Chloe", "David", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jack",
    "Keiko", "Liam", "Maria", "Noah", "Olga", "Pedro", "Quinn", "Rosa", "Sam", "Tara",
)  # fmt: skip
LAST_NAMES = (
    "Smith", "Garcia", "Nguyen", "Brown", "Kowalski", "Okafor", "Rossi", "Cohen", "Silva",
    "Murphy", "Tanaka", "Dubois", "Schmidt", "Khan", "Larsen", "Popov", "Walsh", "Ortiz",
)  # fmt: skip
TRUE_LOG_ODDS_PER_DAY = 0.12
"""Log odds ratio of readmission per day of stay used to draw the outcome."""


def _falling(n: int) -> np.ndarray:
    """Weights 1/(i+1), normalised: the first items are drawn most often."""
    weights = 1.0 / np.arange(1, n + 1)
    return weights / weights.sum()


def visits_data(n_patients: int = 2000, seed: int = 20260101) -> pd.DataFrame:
    """The synthetic visits file (see the module docstring), one row per admission, sorted by
    patient then admission date."""
    if not isinstance(n_patients, int) or not 1 <= n_patients <= 1_000_000:
        raise DataError("The visits demo needs between 1 and 1,000,000 patients.")
    rng = np.random.default_rng(seed)
    mrn = np.array([f"MRN{i:06d}" for i in rng.choice(999_999, n_patients, replace=False) + 1])
    names = np.char.add(
        np.char.add(rng.choice(FIRST_NAMES, n_patients), " "), rng.choice(LAST_NAMES, n_patients)
    )
    birth_start = np.datetime64("1925-01-01")
    span = int((np.datetime64("2004-12-31") - birth_start).astype(int))
    birth = birth_start + rng.integers(0, span + 1, n_patients).astype("timedelta64[D]")
    prefixes = rng.choice(ZIP_PREFIXES, n_patients, p=_falling(len(ZIP_PREFIXES)))
    zips = np.char.add(prefixes, np.char.zfill(rng.integers(0, 100, n_patients).astype(str), 2))
    male = rng.random(n_patients) >= 0.52
    n_visits = 1 + rng.poisson(1.2, n_patients)

    patient = np.repeat(np.arange(n_patients), n_visits)
    total = int(n_visits.sum())
    first = np.concatenate([[True], patient[1:] != patient[:-1]])
    stay = rng.geometric(0.25, total)
    gap = 1 + np.floor(rng.exponential(150.0, total)).astype(np.int64)
    start = np.datetime64("2018-01-01")
    first_day = rng.integers(0, 365 * 5, n_patients)
    admission = np.empty(total, dtype=np.int64)
    for i in range(total):
        if first[i]:
            admission[i] = first_day[patient[i]]
        else:
            admission[i] = admission[i - 1] + stay[i - 1] + gap[i]
    admitted = start + admission.astype("timedelta64[D]")
    discharged = admitted + stay.astype("timedelta64[D]")
    codes = rng.choice(ICD10_CODES, total, p=_falling(len(ICD10_CODES)))
    icd10 = np.char.add(np.char.add(codes, "."), rng.integers(0, 10, total).astype(str))
    log_odds = -2.2 + TRUE_LOG_ODDS_PER_DAY * (stay - 4) + 0.3 * male[patient]
    readmitted = (rng.random(total) < 1 / (1 + np.exp(-log_odds))).astype(np.int64)
    return pd.DataFrame(
        {
            "mrn": mrn[patient],
            "name": names[patient],
            "birth_date": pd.Series(birth[patient]).dt.strftime("%Y-%m-%d"),
            "admission_date": pd.Series(admitted).dt.strftime("%Y-%m-%d"),
            "discharge_date": pd.Series(discharged).dt.strftime("%Y-%m-%d"),
            "zip": zips[patient],
            "sex": np.where(male[patient], "M", "F"),
            "icd10": icd10,
            "length_of_stay": stay.astype(np.int64),
            "readmitted": readmitted,
        }
    ).astype({"mrn": object, "name": object, "zip": object, "sex": object, "icd10": object})
