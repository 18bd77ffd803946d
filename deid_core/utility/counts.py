"""How many resamples and replicates the utility measures draw: the defaults and the most a
page, the command line or the report may ask for.

Kept apart from the modules that draw them (which load statsmodels, scipy and scikit-learn),
so that the command line can check its flags against them without loading those libraries.
"""

from deid_core import bounds

#: Fewest, most and default bootstrap resamples (:mod:`deid_core.utility.bootstrap`); the
#: default balances a stable 95% percentile interval against a few seconds of fitting on the
#: demo cohort.
MIN_RESAMPLES = 20
MAX_RESAMPLES = bounds.BOOTSTRAP_RESAMPLES.limit
DEFAULT_RESAMPLES = 200

#: Replicates of a random mask when none are asked for (pages, command line, report).
DEFAULT_REPLICATES = 100
#: Most replicates :func:`~deid_core.utility.replicate_utility` runs (Cologne et al. used 500).
MAX_REPLICATES = bounds.REPLICATES.limit

#: Replicates of a random mask for the classifier test (:mod:`deid_core.utility.classifier`):
#: each costs ``folds`` trainings of every classifier.
DEFAULT_CLASSIFIER_REPLICATES = 5
MAX_CLASSIFIER_REPLICATES = 100
