"""Utility of masked data: does the collaborator's analysis give the same answer?

Fit the collaborator's model to the original and to the masked data and compare the
exposure coefficient by its mean squared error, giving the analysis-potential score of
Cologne et al. (2012): :func:`fit_model` and :func:`compare_fits` for one masked data set,
:func:`replicate_utility` for a random mask over replicates.
"""

from deid_core.utility.compare import UtilityComparison, compare_fits
from deid_core.utility.models import SUPPORTED_FAMILIES, FitResult, ModelSpec, fit_model
from deid_core.utility.replicates import (
    MAX_REPLICATES,
    ReplicateFits,
    ReplicateSummary,
    fit_logistic_replicates,
    replicate_utility,
)

__all__ = [
    "MAX_REPLICATES",
    "SUPPORTED_FAMILIES",
    "FitResult",
    "ModelSpec",
    "ReplicateFits",
    "ReplicateSummary",
    "UtilityComparison",
    "compare_fits",
    "fit_logistic_replicates",
    "fit_model",
    "replicate_utility",
]
