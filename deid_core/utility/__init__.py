"""Utility of masked data: does the collaborator's analysis give the same answer?

Fit the collaborator's model to the original and to the masked data and compare the
exposure coefficient by its mean squared error, giving the analysis-potential score of
Cologne et al. (2012). The model is logistic, Poisson (with a person-time offset), linear or
the linear excess-relative-risk odds model (:data:`FAMILY_HELP`): :func:`fit_model` and
:func:`compare_fits` for one masked data set, :func:`replicate_utility` for a random mask over
replicates.
"""

from deid_core.utility.compare import UtilityComparison, compare_fits
from deid_core.utility.models import FitResult, fit_design, fit_model
from deid_core.utility.replicates import (
    DEFAULT_REPLICATES,
    MAX_REPLICATES,
    ReplicateFits,
    ReplicateSummary,
    fit_logistic_replicates,
    replicate_utility,
)
from deid_core.utility.result import UtilityResult
from deid_core.utility.spec import FAMILY_HELP, SUPPORTED_FAMILIES, ModelSpec

__all__ = [
    "DEFAULT_REPLICATES",
    "FAMILY_HELP",
    "MAX_REPLICATES",
    "SUPPORTED_FAMILIES",
    "FitResult",
    "ModelSpec",
    "ReplicateFits",
    "ReplicateSummary",
    "UtilityComparison",
    "UtilityResult",
    "compare_fits",
    "fit_design",
    "fit_logistic_replicates",
    "fit_model",
    "replicate_utility",
]
