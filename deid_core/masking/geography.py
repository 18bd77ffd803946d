"""Geography: US ZIP codes cut to the three digits HIPAA's Safe Harbor method allows.

Safe Harbor (45 CFR 164.514(b)(2)(i)(B); El Emam & Malin, Box 2, item 2) removes every
geographic unit smaller than a state except the first three digits of a ZIP code, and only
where the area those three digits cover holds more than 20,000 people; the others are released
as ``"000"``. HHS's de-identification guidance lists the 17 restricted prefixes (2000 Census);
:data:`RESTRICTED_ZIP3` holds them. The seed notes a weakness worth telling the user: in a
state with a single restricted prefix (New Hampshire's 036), ``000`` plus the trial site's
state gives the prefix back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import CODES, MaskingStep

#: The 3-digit ZIP prefixes of 20,000 people or fewer, released as "000" (HHS guidance).
RESTRICTED_ZIP3 = frozenset(
    {
        "036",
        "059",
        "063",
        "102",
        "203",
        "556",
        "692",
        "790",
        "821",
        "823",
        "830",
        "831",
        "878",
        "879",
        "884",
        "890",
        "893",
    }
)
RESTRICTED_RELEASED_AS = "000"
_ZIP = re.compile(r"^(\d{5})(?:-\d{4})?$")


def zip_text(series: pd.Series) -> pd.Series:
    """ZIP codes as 5-digit text: text as it is (spaces stripped), whole numbers padded with
    leading zeros (a ZIP read as a number has lost them: 2134 is 02134). Missing stays
    missing; anything else becomes missing too (see :func:`zip3`)."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return pd.Series(np.nan, index=series.index, dtype=object)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        ok = np.isfinite(values) & (values == np.round(values)) & (values >= 0) & (values < 1e5)
        out = np.full(len(values), None, dtype=object)
        out[ok] = pd.Series(values[ok].astype(np.int64)).astype(str).str.zfill(5).to_numpy()
        return pd.Series(out, index=series.index, dtype=object)
    text = series.astype("string").str.strip()
    digits = text.str.extract(_ZIP.pattern, expand=False)
    return pd.Series(
        np.where(digits.isna(), None, digits.astype(object)), index=series.index, dtype=object
    )


def zip3(series: pd.Series) -> tuple[pd.Series, int]:
    """(first three digits of each ZIP code, with the restricted prefixes as "000"; the number
    of present values that are not 5-digit ZIP codes, left out as missing)."""
    text = zip_text(series)
    bad = int((text.isna() & series.notna()).sum())
    prefix = text.str[:3]
    prefix = prefix.where(~prefix.isin(RESTRICTED_ZIP3), RESTRICTED_RELEASED_AS)
    return prefix.astype(object).where(text.notna(), None), bad


@dataclass(frozen=True)
class ZipToThreeDigits(MaskingStep):
    """US ZIP codes (5 digits, or ZIP+4) released as their first three digits, the 17
    restricted prefixes of :data:`RESTRICTED_ZIP3` as "000" (HIPAA Safe Harbor). Released as
    text ("021"); a value that is not a ZIP code is a RecipeError (counted, never quoted)."""

    method: ClassVar[str] = "zip3"
    label: ClassVar[str] = "ZIP code to 3 digits (Safe Harbor)"
    _ELEMENTWISE: ClassVar[bool] = True
    takes: ClassVar[str] = CODES

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        return self._prefixes(series, self.column)

    def check_kind(self, series: pd.Series, column: str) -> None:
        self._prefixes(series, column)

    def _prefixes(self, series: pd.Series, column: str) -> pd.Series:
        """Each ZIP code's first three digits, or a RecipeError counting the values that are
        not ZIP codes."""
        prefix, bad = zip3(series)
        if bad:
            raise RecipeError(
                f"{self.label}: '{column}' has {bad} entr{'y' if bad == 1 else 'ies'} that "
                "are not 5-digit ZIP codes."
            )
        return prefix

    def describe(self) -> str:
        return (
            f"{self.column}: ZIP codes cut to their first 3 digits; the 17 prefixes of areas of "
            "20,000 people or fewer released as 000"
        )
