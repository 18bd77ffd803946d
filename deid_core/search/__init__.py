"""The search of whole recipes: every combination of masking settings of the searched columns,
judged against the release threshold and ranked by the analysis potential of the
collaborator's model (:mod:`deid_core.search.search`), over a space of settings proposed from
the data and editable per column (:mod:`deid_core.search.space`)."""

from deid_core._lazy import lazy_exports

#: Where each name lives; imported on first use (:mod:`deid_core._lazy`), so that the command
#: line can check its flags against :mod:`deid_core.search.limits` without loading the model
#: libraries the search computes with.
_EXPORTS = {
    "DEFAULT_SEARCH_REPLICATES": "limits",
    "DEFAULT_SETTINGS_PER_COLUMN": "limits",
    "MAX_SEARCH_REPLICATES": "limits",
    "SearchPoint": "search",
    "SearchResult": "search",
    "conditional_measure": "search",
    "evaluate_recipe": "search",
    "search_space": "search",
    "suppression_k": "search",
    "MAX_RECIPES": "space",
    "ColumnSettings": "space",
    "SearchSpace": "space",
    "default_settings": "space",
    "default_space": "space",
    "setting_label": "space",
}
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)

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
