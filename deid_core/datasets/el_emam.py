"""The 27-record example data set of El Emam & Malin, Table 1.

From K. El Emam and B. Malin, "Concepts and methods for de-identifying clinical trial data",
a paper commissioned by the Institute of Medicine Committee on Strategies for Responsible Sharing
of Clinical Trial Data (the paper calls it a hypothetical data set). The quasi-identifiers are
sex and year of birth; ``lab_result`` is kept as text exactly as printed, since one result is
"Negative". With sex and year of birth the average per-record risk is 16/27 and the maximum 1.
"""

import pandas as pd

EL_EMAM_ROWS = (
    (1, "Male", 1959, "Albumin, Serum", "4.8"),
    (2, "Male", 1969, "Creatine kinase", "86"),
    (3, "Female", 1955, "Alkaline Phosphatase", "66"),
    (4, "Male", 1959, "Bilirubin", "Negative"),
    (5, "Female", 1942, "BUN/Creatinine Ratio", "17"),
    (6, "Female", 1975, "Calcium, Serum", "9.2"),
    (7, "Female", 1966, "Free Thyroxine Index", "2.7"),
    (8, "Female", 1987, "Globulin, Total", "3.5"),
    (9, "Male", 1959, "B-type natriuretic peptide", "134.1"),
    (10, "Male", 1967, "Creatine kinase", "80"),
    (11, "Male", 1968, "Alanine aminotransferase", "24"),
    (12, "Female", 1955, "Cancer antigen 125", "86"),
    (13, "Male", 1967, "Creatine kinase", "327"),
    (14, "Male", 1967, "Creatine kinase", "82"),
    (15, "Female", 1966, "Creatinine", "0.78"),
    (16, "Female", 1955, "Triglycerides", "147"),
    (17, "Male", 1967, "Creatine kinase", "73"),
    (18, "Female", 1956, "Monocytes", "12"),
    (19, "Female", 1956, "HDL Cholesterol", "68"),
    (20, "Male", 1978, "Neutrophils", "83"),
    (21, "Female", 1966, "Prothrombin Time", "16.9"),
    (22, "Male", 1967, "Creatine kinase", "68"),
    (23, "Male", 1971, "White Blood Cell Count", "13.0"),
    (24, "Female", 1954, "Hemoglobin", "14.8"),
    (25, "Female", 1977, "Lipase, Serum", "37"),
    (26, "Male", 1944, "Cholesterol, Total", "147"),
    (27, "Male", 1965, "Hematocrit", "45.3"),
)
EL_EMAM_COLUMNS = ("id", "sex", "year_of_birth", "lab_test", "lab_result")


def el_emam_table() -> pd.DataFrame:
    """Return the 27 records of Table 1 (columns in ``EL_EMAM_COLUMNS``)."""
    frame = pd.DataFrame(list(EL_EMAM_ROWS), columns=list(EL_EMAM_COLUMNS))
    return frame.astype({"id": "int64", "year_of_birth": "int64"})
