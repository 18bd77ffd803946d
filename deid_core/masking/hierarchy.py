"""Generalisation along a hierarchy the user supplies, in ARX's format.

ARX (Prasser & Kohlmayer 2015; its manual, "Generalization hierarchies") describes a
categorical quasi-identifier's generalisation by a table with one row per value and one column
per level: column 0 holds the value itself, column ``i`` what the value becomes at level ``i``
(the last column is often ``*``, the value suppressed). ARX writes it as CSV separated by
``;`` without a header::

    A41.9;A41;A00-B99;*
    J18.9;J18;J00-J99;*

Releasing the column at level ``L`` replaces each value ``v`` by the label in its row at
column ``L``: ``g_L(v)``; level 0 leaves the values as they are. A hierarchy is *consistent*
when each level is a coarsening of the one below it: two values with the same label at level
``i - 1`` have the same label at level ``i`` (``g_{i-1}(u) = g_{i-1}(v)`` implies ``g_i(u) =
g_i(v)``), so that every class at level ``i`` is a union of classes at level ``i - 1`` and a
higher level never separates records that a lower one joined (the monotonicity ARX's lattice
search and our sweeps rely on). Every value of the column must have a row.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from deid_core import bounds
from deid_core.errors import RecipeError
from deid_core.masking.base import MaskingStep, require_int

#: ARX's separator.
ARX_SEPARATOR = ";"


def hierarchy_from_csv(text: str, separator: str = ARX_SEPARATOR) -> tuple[tuple[str, ...], ...]:
    """The rows of a hierarchy file as ARX writes it (``;`` separated, no header, one row per
    value), each cell stripped of surrounding spaces; blank lines are skipped. A RecipeError
    when the file is empty or its rows differ in length (checked again by the step)."""
    if not isinstance(text, str):
        raise RecipeError("A hierarchy file must be text (CSV).")
    rows = [
        tuple(cell.strip() for cell in row)
        for row in csv.reader(io.StringIO(text), delimiter=separator)
        if any(cell.strip() for cell in row)
    ]
    bounds.LIST_ITEMS.check(sum(len(r) for r in rows), "The hierarchy file lists")
    if not rows:
        raise RecipeError("The hierarchy file has no rows: give one row per value.")
    return tuple(rows)


def _as_text(series: pd.Series) -> pd.Series:
    """The column's values as the hierarchy's text (missing stays missing): whole numbers
    stored as floats (1.0) read as "1", as a CSV writes them."""
    present = series.notna()

    def text(value: Any) -> str:
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value).strip()

    return series.astype(object).where(~present, series[present].map(text))


@dataclass(frozen=True)
class HierarchyLevel(MaskingStep):
    """Each value of a categorical column released as its label at ``level`` of a
    user-supplied hierarchy (ARX's format: ``hierarchy`` lists one row per value, column 0
    the value, column ``i`` its label at level ``i``; see the module docstring). Level 0
    releases the values unchanged. The hierarchy must be consistent (each level a coarsening
    of the one below) and hold a row for every value of the column (else a RecipeError that
    counts the values missing from it)."""

    level: int = 1
    hierarchy: Any = ()

    method: ClassVar[str] = "hierarchy"
    label: ClassVar[str] = "Hierarchy level (ARX)"
    sweep_parameter: ClassVar[str | None] = "level"
    _ELEMENTWISE: ClassVar[bool] = True

    def __post_init__(self) -> None:
        rows = self.hierarchy
        if isinstance(rows, str) or not isinstance(rows, Sequence):
            raise RecipeError(
                f"{self.label}: 'hierarchy' lists the rows of the hierarchy, one per value "
                "(each a list: the value, then its label at each level)."
            )
        normalised = []
        for row in rows:
            if isinstance(row, str) or not isinstance(row, Sequence):
                raise RecipeError(f"{self.label}: each row of 'hierarchy' must be a list.")
            normalised.append(tuple(str(cell).strip() for cell in row))
        object.__setattr__(self, "hierarchy", tuple(normalised))
        super().__post_init__()

    @property
    def depth(self) -> int:
        """The highest level (columns of the hierarchy less one)."""
        return len(self.hierarchy[0]) - 1

    def _validate(self) -> None:
        rows = self.hierarchy
        if not rows:
            raise RecipeError(f"{self.label}: the hierarchy has no rows.")
        widths = {len(row) for row in rows}
        if len(widths) > 1:
            raise RecipeError(
                f"{self.label}: the hierarchy's rows have different numbers of levels "
                f"({', '.join(str(w) for w in sorted(widths))} columns); ARX writes one "
                "column per level in every row."
            )
        if self.depth < 1:
            raise RecipeError(
                f"{self.label}: the hierarchy has one column only; it needs the value and at "
                "least one level above it."
            )
        require_int(self.level, "level", self.label, 0, self.depth)
        values = [row[0] for row in rows]
        if any(not v for v in values):
            raise RecipeError(f"{self.label}: a row of the hierarchy has an empty value.")
        repeated = len(values) - len(set(values))
        if repeated:
            raise RecipeError(
                f"{self.label}: {repeated} value(s) have more than one row in the hierarchy; "
                "give each value one row."
            )
        for level in range(1, self.depth + 1):
            above: dict[str, str] = {}
            split = 0
            for row in rows:
                known = above.setdefault(row[level - 1], row[level])
                split += known != row[level]
            if split:
                raise RecipeError(
                    f"{self.label}: the hierarchy is not consistent at level {level}: {split} "
                    f"row(s) share their label at level {level - 1} with another row but not "
                    f"at level {level} (each level must merge whole groups of the level below)."
                )

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        text = _as_text(series)
        mapping = {row[0]: row[self.level] for row in self.hierarchy}
        present = text.notna()
        unknown = present & ~text.isin(list(mapping))
        if unknown.any():
            count = int(text[unknown].nunique())
            raise RecipeError(
                f"{self.label}: {count} distinct value(s) of '{self.column}' "
                f"({int(unknown.sum()):,} records) have no row in the hierarchy; every value "
                "of the column needs one."
            )
        if self.level == 0:
            return series
        return text.map(mapping).astype(object).where(present, None)

    def to_dict(self, include_seed: bool = True) -> dict[str, Any]:
        return {
            "method": self.method,
            "column": self.column,
            "level": self.level,
            "hierarchy": [list(row) for row in self.hierarchy],
        }

    def describe(self) -> str:
        return (
            f"{self.column}: released at level {self.level} of {self.depth} of its hierarchy "
            f"({len(self.hierarchy):,} values)"
        )

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(range(self.depth + 1))
