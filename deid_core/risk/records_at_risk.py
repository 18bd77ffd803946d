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
    sizes = summary.sizes_by_row  # in people when a person has several rows
    order = np.argsort(sizes, kind="stable")[:top]
    sizes_without = {
        q: workspace.risk(
            recipe.with_roles(replace(roles, quasi_identifiers=tuple(c for c in qis if c != q)))
        ).sizes_by_row[order]
        for q in qis
    }
    original = workspace.original.iloc[order]
    table = pd.DataFrame(index=range(len(order)))
    table["record"] = original[roles.record_id].to_numpy() if roles.record_id else order + 1
    table["class size"] = sizes[order]
    table["risk 1/f"] = 1.0 / sizes[order]
    for q in qis:
        table[f"{q} (original)"] = original[q].to_numpy()
        table[f"{q} (masked)"] = workspace.masked_column(recipe, q).iloc[order].to_numpy()
    table[f"drop or coarsen to reach {min_class_size}"] = [
        ", ".join(q for q in qis if sizes_without[q][i] >= min_class_size) or "two or more"
        for i in range(len(order))
    ]
    return table
