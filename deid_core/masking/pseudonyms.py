"""Pseudonym steps: a direct identifier or the record id released as a pseudonym instead of
being dropped (El Emam & Malin; the pseudonyms themselves are in
:mod:`deid_core.identifiers.pseudonyms`).

A pseudonym step masks a *withheld* column (a direct identifier or the record id), which is
otherwise dropped from the release; with the step, the column is released as pseudonyms, under
``released_as`` when given (e.g. ``"study_id"``). The steps are applied when the release is
written (:meth:`deid_core.recipe.Recipe.released`), which also returns the crosswalk; they never
take part in the risk (a withheld column is no quasi-identifier).

The secret key of :class:`HmacPseudonym` is not a parameter of the step: it is given when the
release is written, so a recipe, a link or a report never holds it. The step may record the
key's fingerprint (:func:`deid_core.identifiers.pseudonyms.key_fingerprint`), so that a later
release with another key is refused instead of silently breaking the link between years.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from deid_core.errors import RecipeError
from deid_core.identifiers.pseudonyms import (
    DEFAULT_LENGTH,
    MAX_HMAC_LENGTH,
    MAX_RANDOM_LENGTH,
    MIN_LENGTH,
    Pseudonymised,
    hmac_pseudonyms,
    key_fingerprint,
    random_pseudonyms,
)
from deid_core.masking.base import MaskingStep, require_int

_FINGERPRINT = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class PseudonymStep(MaskingStep):
    """What the two pseudonym steps share: the length in hexadecimal digits and the name the
    pseudonyms are released under (None: the column's own name)."""

    length: int = DEFAULT_LENGTH
    released_as: str | None = None

    pseudonym: ClassVar[bool] = True
    needs_key: ClassVar[bool] = False
    _MAX_LENGTH: ClassVar[int] = MAX_HMAC_LENGTH

    def _validate(self) -> None:
        length = require_int(self.length, "length", self.label, MIN_LENGTH, self._MAX_LENGTH)
        object.__setattr__(self, "length", length)
        if self.released_as is not None:
            if not isinstance(self.released_as, str) or not self.released_as.strip():
                raise RecipeError(f"{self.label}: 'released_as' must be a column name.")
            object.__setattr__(self, "released_as", self.released_as.strip())

    @property
    def released_name(self) -> str:
        """The name of the released column of pseudonyms."""
        return self.released_as or self.column

    @abstractmethod
    def pseudonymise(self, series: pd.Series, key: bytes | None = None) -> Pseudonymised:
        """The pseudonyms of ``series`` row by row, and its crosswalk."""

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        return self.pseudonymise(series).values

    def _released_text(self) -> str:
        return f", released as '{self.released_as}'" if self.released_as else ""


@dataclass(frozen=True)
class RandomPseudonym(PseudonymStep):
    """Each distinct value replaced by a random code of ``length`` hexadecimal digits drawn
    from the operating system's entropy (the same code on all of a person's rows). A new
    release draws new codes: only the crosswalk links them to the originals."""

    method: ClassVar[str] = "random_pseudonym"
    label: ClassVar[str] = "Random pseudonym"
    _MAX_LENGTH: ClassVar[int] = MAX_RANDOM_LENGTH

    def pseudonymise(self, series: pd.Series, key: bytes | None = None) -> Pseudonymised:
        return random_pseudonyms(series, self.length)

    def describe(self) -> str:
        return (
            f"{self.column}: replaced by a random pseudonym ({self.length} hexadecimal digits)"
            f"{self._released_text()}; the crosswalk stays with the custodian"
        )


@dataclass(frozen=True)
class HmacPseudonym(PseudonymStep):
    """Each value replaced by the first ``length`` hexadecimal digits of
    HMAC-SHA-256(key, its text): the same key gives the same pseudonyms next year. The key is
    given when the release is written; ``key_fingerprint`` (optional) is checked against it."""

    key_fingerprint: str | None = None

    method: ClassVar[str] = "hmac_pseudonym"
    label: ClassVar[str] = "Keyed-hash pseudonym"
    needs_key: ClassVar[bool] = True

    def _validate(self) -> None:
        super()._validate()
        if self.key_fingerprint is not None and not (
            isinstance(self.key_fingerprint, str) and _FINGERPRINT.fullmatch(self.key_fingerprint)
        ):
            raise RecipeError(
                f"{self.label}: 'key_fingerprint' must be 16 hexadecimal digits (a-f, 0-9)."
            )

    def pseudonymise(self, series: pd.Series, key: bytes | None = None) -> Pseudonymised:
        if key is None:
            raise RecipeError(
                f"The keyed-hash pseudonym of '{self.column}' needs its secret key: give the key "
                "file (it is never stored in the recipe)."
            )
        if self.key_fingerprint is not None and key_fingerprint(key) != self.key_fingerprint:
            raise RecipeError(
                f"The key given for '{self.column}' is not the one this recipe was made with "
                "(its fingerprint differs): the pseudonyms would not match earlier releases."
            )
        return hmac_pseudonyms(series, key, self.length)

    def describe(self) -> str:
        return (
            f"{self.column}: replaced by a keyed-hash pseudonym (HMAC-SHA-256, first "
            f"{self.length} hexadecimal digits){self._released_text()}; the key stays with the "
            "custodian"
        )
