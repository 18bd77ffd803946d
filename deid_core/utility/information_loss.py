"""Information loss of numeric columns, as sdcMicro's ``dUtility`` defines it, beside the MSE of
the collaborator's model: how far the released values moved, whatever the analysis.

For original values ``x_ij`` and released values ``x'_ij`` of records ``i`` and numeric
columns ``j``:

* **IL1s** (sdcMicro ``dUtility(method = "IL1s")``; Mateo-Sanz, Sebe & Domingo-Ferrer 2004):
  ``sum_j sum_i |x_ij - x'_ij| / (sqrt(2) S_j)``, ``S_j`` the sample standard deviation of the
  original column. A **sum over cells**, not a mean: it grows with the number of records and
  columns (an older sdcMicro "IL1" divided it by their product). 0 means nothing moved.
  As in sdcMicro, a cell missing in either file is left out of the sum (a suppressed value
  adds nothing).
* **eigen** (sdcMicro ``dUtility(method = "eigen")``): ``sum_j |l_j - l'_j| / l_j``, with
  ``l_1 >= l_2 >= ...`` the eigenvalues of the correlation matrix of the original columns and
  ``l'_j`` those of the released columns (sdcMicro: ``eigen(var(scale(x), use =
  "pairwise.complete.obs"))``; each pair of columns uses the records where both have a
  value). 0 means the same correlation structure; it needs at least two columns.

When the release leaves records out (record suppression, subsampling), each released record is
compared with its own original (sdcMicro would compare the first rows of both files).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deid_core.errors import DataError

IL1S_DEFINITION = (
    "IL1s (sdcMicro): the sum over every released cell of |original - released| / "
    "(sqrt(2) x SD of the original column); a sum, not a mean, so it grows with the records. "
    "0 = nothing moved; lower is better."
)
EIGEN_DEFINITION = (
    "Eigenvalue loss (sdcMicro 'eigen'): the sum over the eigenvalues l of the original "
    "columns' correlation matrix of |l - l_released| / l. 0 = the same correlation structure; "
    "lower is better."
)


@dataclass(frozen=True)
class InformationLoss:
    """sdcMicro's IL1s and eigenvalue information loss of the ``columns`` (see the module
    docstring). ``il1s`` is None when a constant column changed (its SD is 0); ``eigen`` is
    None with fewer than two columns, or when a correlation matrix has a constant column or
    is singular."""

    columns: tuple[str, ...]
    n_records: int
    il1s: float | None
    eigen: float | None
    il1s_by_column: Mapping[str, float | None] = field(default_factory=dict)

    @property
    def cells(self) -> int:
        """The number of cells IL1s sums over (records x columns)."""
        return self.n_records * len(self.columns)

    def to_dict(self) -> dict[str, object]:
        return {
            "columns": list(self.columns),
            "n_records": self.n_records,
            "il1s": self.il1s,
            "il1s_by_column": dict(self.il1s_by_column),
            "eigen": self.eigen,
        }

    def __str__(self) -> str:
        def text(value: float | None) -> str:
            return "unavailable" if value is None else f"{value:.4f}"

        return "\n".join(
            [
                "Information loss (as sdcMicro's dUtility defines it)",
                f"  columns                     {', '.join(self.columns)}",
                f"  IL1s, sum over cells        {text(self.il1s)} ({self.cells:,} cells)",
                f"  eigenvalue loss             {text(self.eigen)}",
            ]
        )


def _numbers(series: pd.Series, column: str) -> np.ndarray:
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise DataError(f"Information loss needs numeric columns; '{column}' is not numeric.")
    return series.to_numpy(dtype="float64", na_value=np.nan)


def _correlation_eigenvalues(values: np.ndarray) -> np.ndarray | None:
    """Eigenvalues, largest first, of sdcMicro's ``var(scale(x), use =
    "pairwise.complete.obs")``: each column scaled by its own mean and SD (over its values),
    then the covariance of each pair over the records where both have a value (the
    correlation matrix when nothing is missing). None when a column has no spread."""
    frame = pd.DataFrame(values)
    sd = frame.std(ddof=1)
    if not (np.isfinite(sd).all() and (sd > 0).all()):
        return None
    scaled = (frame - frame.mean()) / sd
    covariance = scaled.cov(min_periods=2, ddof=1).to_numpy()
    if not np.isfinite(covariance).all():
        return None
    return np.linalg.eigvalsh(covariance)[::-1]


def information_loss(
    original: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str]
) -> InformationLoss:
    """IL1s and the eigenvalue loss of ``columns``, comparing each record of ``released`` with
    the record of ``original`` that has the same index label (see the module docstring)."""
    columns = tuple(columns)
    if not columns:
        raise DataError("Information loss needs at least one numeric column.")
    absent = [c for c in columns if c not in original.columns or c not in released.columns]
    if absent:
        raise DataError(f"Information loss: no column(s) {', '.join(absent)} in the data.")
    if not released.index.isin(original.index).all():
        raise DataError("Information loss: the released records are not among the original ones.")
    before = np.column_stack([_numbers(original[c], c) for c in columns])
    matched = original.loc[released.index]
    paired = np.column_stack([_numbers(matched[c], c) for c in columns])
    after = np.column_stack([_numbers(released[c], c) for c in columns])
    by_column: dict[str, float | None] = {}
    for j, column in enumerate(columns):
        present = before[:, j][~np.isnan(before[:, j])]
        sd = float(np.std(present, ddof=1)) if present.size > 1 else 0.0
        moved = np.abs(paired[:, j] - after[:, j])
        moved = moved[~np.isnan(moved)]
        if sd > 0:
            by_column[column] = float(np.sum(moved / (math.sqrt(2) * sd)))
        else:  # a constant column: no loss if it did not move, else undefined
            by_column[column] = None if np.any(moved) else 0.0
    parts = list(by_column.values())
    il1s = None if any(v is None for v in parts) else float(sum(v for v in parts if v is not None))
    eigen = None
    if len(columns) > 1:
        original_values = _correlation_eigenvalues(before)
        released_values = _correlation_eigenvalues(after)
        regular = original_values is not None and original_values[-1] > 1e-12 * original_values[0]
        if regular and released_values is not None:
            eigen = float(np.sum(np.abs(original_values - released_values) / original_values))
    return InformationLoss(
        columns=columns,
        n_records=len(released),
        il1s=il1s,
        eigen=eigen,
        il1s_by_column=by_column,
    )
