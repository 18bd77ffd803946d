"""Utility of masked data: does the collaborator's analysis give the same answer?

Fit the collaborator's model to the original and to the masked data and compare the
exposure coefficient by its mean squared error, giving the analysis-potential score of
Cologne et al. (2012). The model is logistic, Poisson (with a person-time offset), linear or
the linear excess-relative-risk odds model (:data:`FAMILY_HELP`): :func:`fit_model` and
:func:`compare_fits` for one masked data set, :func:`replicate_utility` for a random mask over
replicates.
"""

from deid_core._lazy import lazy_exports

#: Where each name lives; imported on first use (:mod:`deid_core._lazy`).
_EXPORTS = {
    "UtilityComparison": "compare",
    "compare_fits": "compare",
    "FitResult": "models",
    "fit_design": "models",
    "fit_model": "models",
    "DEFAULT_REPLICATES": "counts",
    "MAX_REPLICATES": "counts",
    "ReplicateFits": "replicates",
    "ReplicateSummary": "replicates",
    "fit_logistic_replicates": "replicates",
    "replicate_utility": "replicates",
    "UtilityResult": "result",
    "FAMILY_HELP": "spec",
    "SUPPORTED_FAMILIES": "spec",
    "ModelSpec": "spec",
}
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)

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
