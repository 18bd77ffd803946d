"""Linkage of released records to a source database (Cologne et al. 2012, section 2.1.2).

An intruder holds the source records and matches each released record to them on the
quasi-identifiers. If ``i`` source records match a released record, the intruder picks the
right one with probability ``1/i``. With ``n_i`` the number of released records that have
``i`` matches *including their own true source record*,

    identifiability risk score = sum_i n_i / i / N,    anonymity score = 1 - risk score

(Cologne eq. 1-2; N = number of released records). The *perceived* score counts any match,
right or wrong (Cologne Table 1b: rounded doses matched other people's doses).

Matching rules:

- ``exact``: released values are compared as they are with the source values;
- ``same_masking``: the intruder masks the source with the recipe's deterministic steps
  (random draws cannot be reproduced, so random steps are not applied to the source), then
  matches. Against the original data this equals the closed-data average risk.

The truth (which source row is each released record's own) comes from the record-id column,
or, without one, from row order (released row r is source row r).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.recipe import Recipe
from deid_core.risk.classes import EncodedColumn, combine_codes

MATCH_RULES = {
    "exact": "Exact: released values compared as they are with the source values",
    "same_masking": "Same masking: the intruder applies the recipe's deterministic steps to the "
    "source first",
}


@dataclass(frozen=True)
class LinkageResult:
    """Cologne's identifiability and anonymity scores for one matching rule."""

    rule: str
    n_released: int
    n_source: int
    identifiability_score: float
    perceived_score: float
    match_count: np.ndarray = field(repr=False, compare=False)
    correct: np.ndarray = field(repr=False, compare=False)

    @property
    def anonymity_score(self) -> float:
        return 1.0 - self.identifiability_score

    def match_table(self, max_matches: int = 3) -> pd.DataFrame:
        """Cologne Table 1 layout: released records with 1, 2, ... source matches.

        Columns ``correct`` (the true source record is among the matches) and ``any`` (at
        least one match, right or wrong), one row per number of matches up to
        ``max_matches``, then a row for more ("4+"), and one for none.
        """
        rows = []
        for i in range(1, max_matches + 1):
            at_i = self.match_count == i
            rows.append((str(i), 1.0 / i, int((at_i & self.correct).sum()), int(at_i.sum())))
        more = self.match_count > max_matches
        label = f"{max_matches + 1}+"
        rows.append((label, np.nan, int((more & self.correct).sum()), int(more.sum())))
        rows.append(("0", 0.0, 0, int((self.match_count == 0).sum())))
        return pd.DataFrame(rows, columns=["source matches", "risk 1/i", "correct", "any"])

    def __str__(self) -> str:
        return (
            f"Linkage to the source ({self.rule}; {self.n_released} released, "
            f"{self.n_source} source records)\n"
            f"  identifiability risk score {self.identifiability_score:.4f}\n"
            f"  anonymity score            {self.anonymity_score:.4f}\n"
            f"  perceived risk (any match) {self.perceived_score:.4f}"
        )


def truth_positions(
    released: pd.DataFrame, source: pd.DataFrame, record_id: str | None
) -> np.ndarray:
    """For each released record, the position of its own record in ``source`` (-1: absent)."""
    if record_id is None:
        if len(released) != len(source):
            raise DataError(
                "Without a record-id column the released and source records are matched by row "
                "order, so they must have the same number of rows."
            )
        return np.arange(len(released))
    for frame, what in ((released, "released"), (source, "source")):
        if record_id not in frame.columns:
            raise DataError(f"The record-id column '{record_id}' is not in the {what} data.")
    if source[record_id].duplicated().any():
        raise DataError(f"The record-id column '{record_id}' has repeated values in the source.")
    position = pd.Series(np.arange(len(source)), index=source[record_id].to_numpy())
    return position.reindex(released[record_id].to_numpy()).fillna(-1).to_numpy(dtype=np.int64)


def link_to_source(
    released: pd.DataFrame,
    source: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    truth: np.ndarray,
    rule: str = "exact",
) -> LinkageResult:
    """Match ``released`` to ``source`` on ``quasi_identifiers`` (both already in the form the
    rule compares: pass the masked source for ``same_masking``) and score the matches."""
    if rule not in MATCH_RULES:
        raise DataError(f"Unknown matching rule '{rule}'; use one of {', '.join(MATCH_RULES)}.")
    n_released, n_source = len(released), len(source)
    if n_released == 0:
        raise DataError("There are no released records to assess.")
    encoded_released, encoded_source = [], []
    for column in quasi_identifiers:
        both = pd.concat([released[column], source[column]], ignore_index=True)
        if both.dtype == object:
            # Numbers and numeric text are different values to an exact match; keep them apart.
            both = both.map(lambda v: (type(v).__name__, v) if pd.notna(v) else v)
        codes, uniques = pd.factorize(both, use_na_sentinel=False)
        n_levels = max(len(uniques), 1)
        encoded_released.append(EncodedColumn(codes[:n_released].astype(np.int64), n_levels))
        encoded_source.append(EncodedColumn(codes[n_released:].astype(np.int64), n_levels))
    released_key, _ = combine_codes(encoded_released, n_released)
    source_key, _ = combine_codes(encoded_source, n_source)
    keys = np.concatenate([released_key, source_key])
    codes, uniques = pd.factorize(keys)
    source_codes = codes[n_released:]
    counts = np.bincount(source_codes, minlength=len(uniques))
    match_count = counts[codes[:n_released]]
    has_truth = truth >= 0
    correct = np.zeros(n_released, dtype=bool)
    correct[has_truth] = source_key[truth[has_truth]] == released_key[has_truth]
    inverse = np.divide(1.0, match_count, out=np.zeros(n_released), where=match_count > 0)
    return LinkageResult(
        rule=rule,
        n_released=n_released,
        n_source=n_source,
        identifiability_score=float(inverse[correct].sum() / n_released),
        perceived_score=float(inverse.sum() / n_released),
        match_count=match_count,
        correct=correct,
    )


def mask_source_like(recipe: Recipe, source: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The source as an intruder who knows the deterministic masking would see it."""
    out = source[list(columns)].copy()
    for column in columns:
        series = source[column]
        for step in recipe.steps_for(column):
            if not step.random:
                series = step.apply(series)
        out[column] = series
    return out


def linkage_risk(
    recipe: Recipe,
    released: pd.DataFrame,
    source: pd.DataFrame,
    rule: str = "exact",
) -> LinkageResult:
    """Cologne's scores for a released (masked) file against ``source`` under ``rule``."""
    qis = list(recipe.roles.quasi_identifiers)
    missing = [c for c in qis if c not in source.columns]
    if missing:
        raise DataError(f"The source lacks quasi-identifier column(s): {', '.join(missing)}.")
    truth = truth_positions(released, source, recipe.roles.record_id)
    compared = mask_source_like(recipe, source, qis) if rule == "same_masking" else source
    return link_to_source(released, compared, qis, truth, rule)


__all__ = [
    "MATCH_RULES",
    "LinkageResult",
    "link_to_source",
    "linkage_risk",
    "mask_source_like",
    "truth_positions",
]
