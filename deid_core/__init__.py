"""deid_core: statistical disclosure control of health microdata, without any UI.

The package masks a copy of a data set according to a :class:`~deid_core.recipe.Recipe`
(roles and ordered masking steps, :mod:`deid_core.masking`), measures the disclosure risk of
the result (:mod:`deid_core.risk`) and the utility of the collaborator's regression
(:mod:`deid_core.utility`), and weighs one against the other (:mod:`deid_core.tradeoff`). A
:class:`~deid_core.workspace.Workspace` holds one data set and caches what a slider move does
not change. Files come in and go out through :mod:`deid_core.io`; the release report is
:mod:`deid_core.report`, the command line :mod:`deid_core.cli`, shared links
:mod:`deid_core.share`, the demo data :mod:`deid_core.datasets`.
"""

from deid_core.errors import DataError, DeidError, ModelFitError, RecipeError

__all__ = ["DataError", "DeidError", "ModelFitError", "RecipeError"]
__version__ = "0.1.0"
