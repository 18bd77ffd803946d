"""Codes generalised along their own hierarchy: the first characters of a code, or the ICD-10
chapter it belongs to.

Hierarchical code systems put the general before the specific: an ICD-10 code's first three
characters are its category (``A41.9``, sepsis, unspecified organism, is in ``A41``, other
sepsis), an ATC code's first 1, 3, 4, 5 and 7 characters are its five levels, a ZIP code's
first digits its wider area. Cutting a code to its first ``L`` characters (:class:`CodePrefix`,
the dot of ICD-10 not counted) is then generalisation along the hierarchy, as El Emam & Malin
(seed 001) treat diagnosis, procedure and adverse event codes (quasi-identifiers, generalised
like dates and ZIP codes). Above the category, ICD-10 groups categories into 22 chapters by
ranges (:class:`Icd10Chapter`; WHO ICD-10, 2019 edition).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import CODES, MaskingStep, require_int

#: Longest prefix :class:`CodePrefix` keeps.
MAX_CODE_LENGTH = 20

#: The chapters of ICD-10 (WHO, 2019): (first category, label). A category belongs to the
#: last chapter whose first category is at or before it (so the categories ICD-10-CM adds,
#: such as K94, fall in the chapter around them).
ICD10_CHAPTERS: tuple[tuple[str, str], ...] = (
    ("A00", "A00-B99"),
    ("C00", "C00-D48"),
    ("D50", "D50-D89"),
    ("E00", "E00-E90"),
    ("F00", "F00-F99"),
    ("G00", "G00-G99"),
    ("H00", "H00-H59"),
    ("H60", "H60-H95"),
    ("I00", "I00-I99"),
    ("J00", "J00-J99"),
    ("K00", "K00-K93"),
    ("L00", "L00-L99"),
    ("M00", "M00-M99"),
    ("N00", "N00-N99"),
    ("O00", "O00-O99"),
    ("P00", "P00-P96"),
    ("Q00", "Q00-Q99"),
    ("R00", "R00-R99"),
    ("S00", "S00-T98"),
    ("U00", "U00-U85"),
    ("V00", "V01-Y98"),
    ("Z00", "Z00-Z99"),
)
_CHAPTER_STARTS = [start for start, _ in ICD10_CHAPTERS]
_ICD10 = re.compile(r"^[A-Z][0-9]{2}")


def code_text(series: pd.Series) -> pd.Series:
    """Codes as text without surrounding spaces or dots (``" A41.9 "`` -> ``"A419"``);
    missing stays missing."""
    text = series.astype("string").str.strip().str.replace(".", "", regex=False)
    return text.astype(object).where(series.notna(), None)


def _bad_count(what: str, column: str, bad: int, kind: str) -> RecipeError:
    return RecipeError(
        f"{what}: '{column}' has {bad} entr{'y' if bad == 1 else 'ies'} that "
        f"{'is not' if bad == 1 else 'are not'} {kind}."
    )


@dataclass(frozen=True)
class CodePrefix(MaskingStep):
    """Each code cut to its first ``length`` characters, dots and surrounding spaces not
    counted (``A41.9`` at 3 gives ``A41``; ``N02BE01`` at 4 gives ``N02B``). Codes must be
    text: a code column read as numbers has lost its leading zeros, which is a RecipeError."""

    length: int = 3

    method: ClassVar[str] = "code_prefix"
    label: ClassVar[str] = "Code to its first characters"
    sweep_parameter: ClassVar[str | None] = "length"
    _ELEMENTWISE: ClassVar[bool] = True
    takes: ClassVar[str] = CODES

    def _validate(self) -> None:
        object.__setattr__(
            self, "length", require_int(self.length, "length", self.label, 1, MAX_CODE_LENGTH)
        )

    def check_kind(self, series: pd.Series, column: str) -> None:
        if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
            raise RecipeError(
                f"{self.label}: '{column}' holds numbers; codes are cut as text (a code "
                "read as a number has lost its leading zeros: read the column as text)."
            )

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        self.check_kind(series, self.column)
        text = code_text(series)
        return text.str[: self.length].astype(object).where(text.notna(), None)

    def describe(self) -> str:
        return f"{self.column}: codes cut to their first {self.length} characters"

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        longest = MAX_CODE_LENGTH
        if series is not None and not pd.api.types.is_numeric_dtype(series.dtype):
            lengths = code_text(series.dropna().head(10_000)).str.len()
            longest = int(lengths.max()) if lengths.size else 1
        return list(range(1, max(1, min(longest, MAX_CODE_LENGTH)) + 1))


def icd10_chapters(series: pd.Series) -> tuple[pd.Series, int]:
    """(each ICD-10 code's chapter, as its range of categories "A00-B99"; the number of
    present values that do not start with a letter and two digits, left out as missing)."""
    text = code_text(series)
    upper = text.str.upper()
    valid = upper.str.match(_ICD10.pattern).fillna(False).astype(bool)
    chapters = np.full(len(series), None, dtype=object)
    for i, code in enumerate(upper.to_numpy()):
        if valid.iat[i]:
            position = bisect.bisect_right(_CHAPTER_STARTS, code[:3]) - 1
            chapters[i] = ICD10_CHAPTERS[position][1]
    bad = int((~valid & text.notna()).sum())
    return pd.Series(chapters, index=series.index, dtype=object), bad


@dataclass(frozen=True)
class Icd10Chapter(MaskingStep):
    """Each ICD-10 code released as its chapter, named by its range of categories
    ("J00-J99", diseases of the respiratory system); see :data:`ICD10_CHAPTERS`. A value that
    does not start with a letter and two digits is a RecipeError (counted, never quoted)."""

    method: ClassVar[str] = "icd10_chapter"
    label: ClassVar[str] = "ICD-10 code to its chapter"
    _ELEMENTWISE: ClassVar[bool] = True
    takes: ClassVar[str] = CODES

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        return self._chapters(series, self.column)

    def check_kind(self, series: pd.Series, column: str) -> None:
        self._chapters(series, column)

    def _chapters(self, series: pd.Series, column: str) -> pd.Series:
        """Each code's chapter, or a RecipeError counting the values that are not ICD-10
        codes."""
        chapters, bad = icd10_chapters(series)
        if bad:
            kind = "an ICD-10 code" if bad == 1 else "ICD-10 codes"
            raise _bad_count(self.label, column, bad, kind)
        return chapters

    def describe(self) -> str:
        return f"{self.column}: ICD-10 codes released as their chapter (range of categories)"
