"""The records at risk: the riskiest records with their original and masked values side by
side, and the quasi-identifier to drop or coarsen first."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.recipe import Recipe
from deid_core.risk.classes import RiskSummary


class MaskedData(Protocol):
    """What :func:`records_at_risk` reads: the original data, a masked column and the risk of a
    recipe (a :class:`deid_core.workspace.Workspace`, with its caches, has all three)."""

    @property
    def original(self) -> pd.DataFrame: ...

    def masked_column(self, recipe: Recipe, column: str) -> pd.Series: ...

    def risk(self, recipe: Recipe) -> RiskSummary: ...

    def released_rows(self, recipe: Recipe) -> np.ndarray | None: ...


def records_at_risk(
    workspace: MaskedData, recipe: Recipe, top: int = 50, min_class_size: int = 5
) -> pd.DataFrame:
    """The ``top`` riskiest records (smallest equivalence classes first), with each
    quasi-identifier's original and masked values side by side, and the quasi-identifiers whose
    removal alone would put the record in a class of at least ``min_class_size`` records (the
    ones to drop or coarsen first). "two or more" means no single one is enough.

    The record is named by the record id when there is one, otherwise by its row number.
    When a person has several rows, a row's class size counts the people in its class.
    """
    if top < 1 or min_class_size < 1:
        raise DataError("Records at risk: the number of records and the class size must be >= 1.")
    roles = recipe.roles
    qis = list(roles.quasi_identifiers)
    summary = workspace.risk(recipe)
    by_size = summary.sizes_by_row  # in people when a person has several rows
    order = np.argsort(by_size, kind="stable")[:top]
    rows = _positions(workspace, recipe, len(by_size))[order]
    sizes_without = {}
    for q in qis:
        variant = recipe.with_roles(
            replace(roles, quasi_identifiers=tuple(c for c in qis if c != q))
        )
        sizes = workspace.risk(variant).sizes_by_row
        # the variant may release other records (record suppression): match by position
        by_row = dict(zip(_positions(workspace, variant, len(sizes)), sizes, strict=True))
        sizes_without[q] = np.array([by_row.get(r, 0) for r in rows])
    original = workspace.original.iloc[rows]
    table = pd.DataFrame(index=range(len(order)))
    table["record"] = original[roles.record_id].to_numpy() if roles.record_id else rows + 1
    table["class size"] = by_size[order]
    table["risk 1/f"] = 1.0 / by_size[order]
    for q in qis:
        table[f"{q} (original)"] = original[q].to_numpy()
        table[f"{q} (masked)"] = workspace.masked_column(recipe, q).iloc[rows].to_numpy()
    table[f"drop or coarsen to reach {min_class_size}"] = [
        ", ".join(q for q in qis if sizes_without[q][i] >= min_class_size) or "two or more"
        for i in range(len(order))
    ]
    return table


def _positions(workspace: MaskedData, recipe: Recipe, n: int) -> np.ndarray:
    """Positions among the original records of the ``n`` records the recipe releases."""
    rows = workspace.released_rows(recipe)
    return np.arange(n) if rows is None else rows
