"""Model choices shared by the custodian's Utility page and the recipient's view of a release:
which of an outcome's values is the event, and the reference level of a categorical
covariate. Only the lists offered are computed here; the pages draw the widgets."""

from __future__ import annotations

import pandas as pd

from deid_core.utility.spec import MAX_LEVELS, category_labels, level_label

#: The choice of no event value: the outcome is used as it is (0/1).
AS_CODED = "(the outcome as it is: 0/1)"
#: Most distinct values an outcome may have for its event to be chosen from a list.
MAX_EVENT_LEVELS = 20

EVENT_HELP = (
    "For an outcome coded with more than two values (survival's pbc: status 0 censored, "
    "1 transplant, 2 death): the value that is the event; every other value is censored "
    "(Cox) or 0 (logistic)."
)
REFERENCE_HELP = (
    "The category the others are compared with: each other category's coefficient is its "
    "log odds (or rate, hazard) ratio against this one. It does not change the exposure's "
    "estimate."
)


def _label_order(label: str) -> tuple:
    """Numbers in numeric order first, then text in alphabetical order."""
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def event_options(column: pd.Series) -> list[str] | None:
    """``[AS_CODED, value labels...]`` for an outcome of at most :data:`MAX_EVENT_LEVELS`
    values (their labels as the model reads them), else None (no list offered)."""
    labels = sorted({level_label(v) for v in column.dropna().unique()}, key=_label_order)
    if len(labels) > MAX_EVENT_LEVELS:
        return None
    return [AS_CODED, *labels]


def reference_options(column: pd.Series) -> list[str] | None:
    """The levels of a categorical covariate in the order the model takes its default
    reference (the first), or None when it has more than ``MAX_LEVELS`` levels."""
    if column.nunique() > MAX_LEVELS:
        return None
    return category_labels(column)
