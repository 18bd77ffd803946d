"""The search of whole recipes: every combination of masking settings of the searched columns,
judged against the release threshold and ranked by the analysis potential of the
collaborator's model (:mod:`deid_core.search.search`), over a space of settings proposed from
the data and editable per column (:mod:`deid_core.search.space`)."""

from deid_core.search.search import (
    DEFAULT_SEARCH_REPLICATES,
    MAX_SEARCH_REPLICATES,
    SearchPoint,
    SearchResult,
    conditional_measure,
    evaluate_recipe,
    search_space,
    suppression_k,
)
from deid_core.search.space import (
    DEFAULT_SETTINGS_PER_COLUMN,
    MAX_RECIPES,
    ColumnSettings,
    SearchSpace,
    default_settings,
    default_space,
    setting_label,
)

__all__ = [
    "DEFAULT_SEARCH_REPLICATES",
    "DEFAULT_SETTINGS_PER_COLUMN",
    "MAX_RECIPES",
    "MAX_SEARCH_REPLICATES",
    "ColumnSettings",
    "SearchPoint",
    "SearchResult",
    "SearchSpace",
    "conditional_measure",
    "default_settings",
    "default_space",
    "evaluate_recipe",
    "search_space",
    "setting_label",
    "suppression_k",
]
