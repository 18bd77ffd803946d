"""deid_core: statistical disclosure control of health microdata, without any UI.

The package masks a copy of a data set according to a :class:`~deid_core.recipe.Recipe`,
measures the disclosure risk of the result (:mod:`deid_core.risk`) and the utility of the
collaborator's regression (:mod:`deid_core.utility`), and places each configuration on a
risk-utility map (:mod:`deid_core.tradeoff.rumap`).
"""

from deid_core.errors import DataError, DeidError, ModelFitError, RecipeError

__all__ = ["DataError", "DeidError", "ModelFitError", "RecipeError"]
__version__ = "0.1.0"
