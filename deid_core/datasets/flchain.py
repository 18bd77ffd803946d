"""The serum free light chain (flchain) cohort: real, public, de-identified data on 7,874 people.

The data set ``flchain`` of the R package *survival* (Terry Therneau): an age- and
sex-stratified random half of the residents of Olmsted County, Minnesota, aged 50 or more,
whose serum free light chain was assayed (Kyle et al. 2006, N Engl J Med 354:1362-1369;
Dispenzieri et al. 2012, Mayo Clin Proc 87:512-523). Original identifiers and dates were
removed by the data owners.

The shipped file ``flchain.csv.gz`` was converted from the copy ``flchain.arff`` inside the
scikit-survival 0.28.0 wheel (from PyPI): all 7,874 rows and 11 original columns, dots in names
replaced by underscores, ``death`` and ``mgus`` recoded to 0/1 as in the R original (the ARFF
spells them alive/dead and no/yes), and a ``record_id`` 1..n added in file order. Missing
values: creatinine (1,350) and chapter (5,705: everyone alive). Licence and attribution:
``FLCHAIN_LICENSE.md`` next to this file.
"""

from pathlib import Path

import pandas as pd

FLCHAIN_PATH = Path(__file__).with_name("flchain.csv.gz")
FLCHAIN_COLUMNS = (
    "record_id",
    "age",
    "sex",
    "sample_yr",
    "kappa",
    "lambda",
    "flc_grp",
    "creatinine",
    "mgus",
    "futime",
    "death",
    "chapter",
)


def load_flchain() -> pd.DataFrame:
    """Read the shipped flchain table (7,874 rows, the columns in ``FLCHAIN_COLUMNS``)."""
    return pd.read_csv(FLCHAIN_PATH, compression="gzip")
