"""What comes back from an engine, and every figure computed from it locally.

A :class:`CrossTab` is the finest cross-tabulation of the key columns: one cell per distinct
combination of (generalised) key values, a missing value a value of its own, with the number of
records in the cell and the sum of their sampling weights. At most one row per combination
leaves the engine, never a record. From it:

- the closed-data risk summary and the class-size distribution (:func:`risk_from_cells`): with
  missing values as a category each cell is an equivalence class; with missing values as
  wildcards a record's class size is the number of records compatible with it. Compatibility
  depends only on the record's values, so every record of a cell has the same compatible set:
  the records of every cell that agrees with it wherever both are observed. That set is summed
  over cells (:func:`deid_core.risk.classes.compatible_class_sizes_from_codes` with the cells'
  record counts as weights), and the figures are averaged over records by weighting each cell
  by its records. The same holds for the compatible weight sums of the open-data figures;
- the open-data figures (:func:`sample_risk_from_cells`): the sample class size f and the
  population estimate F (the weight sum, or f / sampling fraction) per cell;
- the record-uniqueness lattice (:func:`uniqueness_from_crosstab`): every combination of keys
  is rolled up from the cells (:func:`deid_core.risk.uniqueness.uniqueness_from_cells`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from deid_core.engines.query import RECORDS, WEIGHT_SUM
from deid_core.errors import DataError
from deid_core.risk.classes import (
    SMALL_CLASS_SIZE,
    EncodedColumn,
    RiskSummary,
    check_missing_mode,
    class_size_distribution,
    compatible_class_sizes_from_codes,
    summarise_class_sizes,
)
from deid_core.risk.population import SampleRisk, sample_risk
from deid_core.risk.uniqueness import (
    DEFAULT_SMALL_CLASS,
    Progress,
    UniquenessResult,
    uniqueness_from_cells,
)


@dataclass(frozen=True, eq=False)
class CrossTab:
    """The finest cross-tabulation of ``keys``: per cell, one code per key (a missing value a
    code of its own), whether each value is observed, the records and the weight sum."""

    keys: tuple[str, ...]
    codes: tuple[EncodedColumn, ...]
    observed: np.ndarray  # (cells, keys) booleans
    records: np.ndarray  # int64 per cell
    weight_sums: np.ndarray | None = None  # float per cell, with a weight column

    @property
    def n_records(self) -> int:
        return int(self.records.sum())

    @property
    def n_cells(self) -> int:
        return int(self.records.size)

    @classmethod
    def from_arrow(cls, table: pa.Table, keys: Sequence[str], weighted: bool) -> CrossTab:
        """From an engine's result: key columns ``k0, k1, ...``, the records and, when
        ``weighted``, the weight sums (other columns, the checks, are ignored); the cells are
        put in the order of their key values."""
        if table.num_rows == 0:
            raise DataError("The data have no rows.")
        # One order whatever the engine's, so that sums over cells agree to the last bit.
        table = table.sort_by([(f"k{i}", "ascending") for i in range(len(keys))])
        codes, observed = [], np.ones((table.num_rows, len(keys)), dtype=bool)
        for i in range(len(keys)):
            encoded = table[f"k{i}"].combine_chunks().dictionary_encode()
            n_levels = len(encoded.dictionary)
            indices = encoded.indices
            if indices.null_count:
                observed[:, i] = indices.is_valid().to_numpy(zero_copy_only=False)
                indices = indices.fill_null(n_levels)
                n_levels += 1
            codes.append(EncodedColumn(indices.to_numpy(zero_copy_only=False).astype(np.int64),
                                       max(n_levels, 1)))  # fmt: skip
        records = table[RECORDS].to_numpy().astype(np.int64)
        weight_sums = table[WEIGHT_SUM].to_numpy().astype(np.float64) if weighted else None
        return cls(tuple(keys), tuple(codes), observed, records, weight_sums)

    def compatible(self, values: np.ndarray) -> np.ndarray:
        """Per cell, the sum of ``values`` over the cells compatible with it (agreeing wherever
        both are observed; a cell is compatible with itself)."""
        return compatible_class_sizes_from_codes(list(self.codes), self.observed, values)

    def class_sizes(self, missing: str = "category") -> np.ndarray:
        """Per cell, the class size of its records: the cell's own records (category) or the
        records of the compatible cells (wildcard)."""
        if check_missing_mode(missing) == "category":
            return self.records
        return np.rint(self.compatible(self.records.astype(np.float64))).astype(np.int64)


def risk_from_cells(
    crosstab: CrossTab, missing: str = "category", small_class_size: int = SMALL_CLASS_SIZE
) -> RiskSummary:
    """The closed-data risk summary (k, uniques, records in small classes, maximum, average
    and strict average risk, k-anonymity violations) from the cells; the same figures as
    :func:`deid_core.risk.risk_summary` on the records."""
    return summarise_class_sizes(
        crosstab.class_sizes(missing),
        crosstab.n_cells,
        crosstab.keys,
        small_class_size,
        missing=missing,
        records=crosstab.records,
    )


def distribution_from_cells(crosstab: CrossTab, missing: str = "category") -> pd.DataFrame:
    """The class-size distribution (:func:`deid_core.risk.classes.class_size_distribution`)."""
    return class_size_distribution(crosstab.class_sizes(missing), crosstab.records, missing)


def sample_risk_from_cells(
    crosstab: CrossTab,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    missing: str = "category",
    bf_method: str = "exact",
) -> SampleRisk:
    """The open-data figures (:func:`deid_core.risk.sample_risk`) from the cells: sample class
    sizes, and population class sizes from the weight sums when the cross-tabulation has them
    (summed over the compatible cells for wildcards), else from the sampling fraction."""
    weights = crosstab.weight_sums
    compatible = None
    if weights is not None and check_missing_mode(missing) == "wildcard":
        compatible = crosstab.compatible(weights)
    return sample_risk(
        crosstab.class_sizes(missing),
        sampling_fraction=sampling_fraction,
        population_size=population_size,
        weights=weights,
        compatible_weights=compatible,
        missing=missing,
        bf_method=bf_method,
        records=crosstab.records,
    )


def uniqueness_from_crosstab(
    crosstab: CrossTab, small_class: int = DEFAULT_SMALL_CLASS, progress: Progress | None = None
) -> UniquenessResult:
    """The record-uniqueness lattice of the keys, every combination rolled up from the cells
    (missing values a category, as the RU program counts them)."""
    return uniqueness_from_cells(
        list(crosstab.codes), crosstab.records, crosstab.keys, small_class, progress
    )
