"""Subsampling: release a random fraction of the records (El Emam & Malin: one of the four
families of de-identification methods, with generalisation, suppression and randomisation).

A simple random sample keeps ``round(fraction x n)`` records drawn without replacement; a
stratified one draws ``round(fraction x n_s)`` records from each stratum ``s`` (the
combinations of the ``strata`` columns' values, a missing value being a value), so each
stratum keeps its share. Halves round up.

The released file is then a sample from a population (the original records) that nobody can
list: an intruder cannot know whether a person is in it, so the risk that applies is the
open-data risk at the sampling fraction the release achieved (see
:mod:`deid_core.risk.population`), which :meth:`deid_core.workspace.Workspace.release_risk`
reports. Each replicate ``r`` of a seeded step draws from ``numpy.random.default_rng([seed,
r])``, like the noise steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import (
    DataOutcome,
    DataStep,
    checked_seed,
    column_names,
    combination_codes,
    require_finite,
    rng_for,
)

#: The fractions the risk-utility map tries.
FRACTION_SWEEP = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)


@dataclass(frozen=True)
class Subsample(DataStep):
    """Release a random ``fraction`` (more than 0, at most 1) of the records, stratified by the
    ``strata`` columns when some are given (see the module docstring). The draw is of
    records whatever ``persons`` says (a person with several rows may keep some of them)."""

    fraction: float = 0.5
    strata: tuple[str, ...] = ()
    seed: int | None = None

    method: ClassVar[str] = "subsample"
    label: ClassVar[str] = "Subsampling"
    random: ClassVar[bool] = True
    sweep_parameter: ClassVar[str | None] = "fraction"
    removes_records: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if isinstance(self.strata, list):
            object.__setattr__(self, "strata", tuple(self.strata))
        super().__post_init__()

    def _validate(self) -> None:
        fraction = require_finite(self.fraction, "fraction", self.label, positive=True)
        if fraction > 1:
            raise RecipeError(f"{self.label}: 'fraction' is a share of the records, at most 1.")
        column_names(self.strata, "strata", self.label)
        object.__setattr__(self, "seed", checked_seed(self.seed, self.label))

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return self.strata

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        n = len(frame)
        stratum = combination_codes(frame, self.strata)
        # Within each stratum, the records with the smallest uniform draws are kept.
        draws = rng_for(self.seed, replicate).random(n)
        order = np.lexsort((draws, stratum))
        sizes = np.bincount(stratum)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        rank = np.arange(n) - starts[stratum[order]]
        wanted = np.floor(self.fraction * sizes + 0.5).astype(np.int64)
        keep = np.zeros(n, dtype=bool)
        keep[order] = rank < wanted[stratum[order]]
        released = int(keep.sum())
        if released == 0:
            raise RecipeError(
                f"{self.label}: a fraction of {self.fraction:g} of {n:,} records keeps none; "
                "choose a larger fraction."
            )
        facts = {
            "fraction": self.fraction,
            "records": n,
            "records_released": released,
            "sampling_fraction": released / n,
            "strata": int(sizes.size),
        }
        return DataOutcome(keep=keep, facts=facts)

    def describe(self) -> str:
        how = f", stratified by {', '.join(self.strata)}" if self.strata else ""
        return f"subsampling: a random {self.fraction:.0%} of the records released{how}"

    def summary(self, facts: Mapping[str, Any]) -> str:
        return (
            f"Subsampling: {facts.get('records_released', 0):,} of {facts.get('records', 0):,} "
            f"records released (sampling fraction {facts.get('sampling_fraction', 0.0):.3f})"
        )

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(FRACTION_SWEEP)
