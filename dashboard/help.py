"""One-line, plain-language help for every metric and setting, in one place.

Each text says what the figure is, how it is computed, and which direction is good, so a
teacher can point at any number on screen and its tooltip explains it.
"""

from __future__ import annotations

from deid_core.risk import PerturbedRisk, RiskSummary

METRIC_HELP: dict[str, str] = {
    # ------------------------------------------------------------------ open data (a sample)
    "sampling_fraction": (
        "Share of the population that is in the released file (e.g. 0.1 for a 10% sample). "
        "Smaller fractions make a sample unique less likely to be a population unique."
    ),
    "prosecutor": (
        "Prosecutor risk: the intruder knows the person is in the file, so risk is 1/sample "
        "class size (maximum / average over records). Lower is safer."
    ),
    "journalist": (
        "Journalist risk: the intruder does not know who is in the file; risk is 1/estimated "
        "population class size (sample size / sampling fraction). Lower is safer."
    ),
    "marketer": (
        "Marketer risk: the expected share of records re-identified when every record is "
        "matched to the population (average of 1/estimated population class size). Lower is "
        "safer."
    ),
    "benedetti_franconi": (
        "Benedetti-Franconi individual risk (as in sdcMicro): the expected 1/population class "
        "size given the sample class, from a negative-binomial model; mean and maximum over "
        "records, computed as the method below says. Lower is safer."
    ),
    "bf_method": (
        "Exact computes the Benedetti-Franconi risk exactly; sdcMicro's approximation (its "
        "default) is up to 4% higher for classes of 3 or more records: choose it to reproduce "
        "an sdcMicro report."
    ),
    "expected_reidentifications": (
        "Expected number of correct re-identifications: the sum of the individual "
        "(Benedetti-Franconi) risks over records. Lower is safer."
    ),
    "population_uniques": (
        "Estimated records unique in the population, by the estimator Dankar et al. (2012) "
        "choose for this sampling fraction (Pitman up to 0.1, else the smaller of Zayatz and "
        "SNB). Lower is safer."
    ),
    # ------------------------------------------------------------------ information loss
    "il1s": (
        "IL1s, as sdcMicro defines it: the sum over every released cell of |original - "
        "released| / (sqrt(2) x the original column's SD). A sum, not a mean: it grows with "
        "the records and columns. 0 = nothing moved; lower is better."
    ),
    "eigen": (
        "Eigenvalue loss, as sdcMicro defines it: the sum over the eigenvalues l of the "
        "original columns' correlation matrix of |l - l_released| / l. 0 = the same "
        "correlation structure; lower is better."
    ),
    # ------------------------------------------------------------------ data
    "records": "Number of records (rows) in the data set being assessed.",
    "people": (
        "Number of distinct people (record ids) when some have several rows (visits, events): "
        "class sizes, k, uniques and the risks count people, each judged by their riskiest "
        "row (the smallest class any of their rows is in)."
    ),
    "dataset": "The data set in use. Uploaded data stay in this browser session only.",
    # ------------------------------------------------------------------ closed-data risk
    "k": (
        "k-anonymity level: the size of the smallest group of records sharing all masked "
        "quasi-identifier values. Higher is safer; k = 1 means some record is unique."
    ),
    "uniques": (
        "Records whose masked quasi-identifier values no other record shares (class size 1). "
        "Lower is safer."
    ),
    "n_classes": (
        "Equivalence classes: distinct combinations of masked quasi-identifier values. Fewer "
        "classes for the same records means larger, safer groups."
    ),
    "small_classes": (
        "Records in classes of size 5 or less (the RU program's 'small record sets'). Lower is "
        "safer."
    ),
    "max_risk": (
        "Maximum re-identification risk of the measure the verdict judges: 1 / size of the "
        "smallest class (in people when a person has several rows), or, when an intruder may "
        "hold the source and the recipe suppresses or samples, the largest risk of exact "
        "linkage to the source if that is higher; the risk of the most exposed person. Lower is "
        "safer; judged for public releases."
    ),
    "average_risk": (
        "Average re-identification risk of the judged measure: the mean of 1/class size over "
        "records, or over people when a person has several rows (not over classes; with one "
        "row per person and no wildcards it equals the number of classes / number of records). "
        "Lower is safer."
    ),
    "strict_average_risk": (
        "Strict average risk: the average risk if no class has fewer than 3 records, otherwise "
        "the maximum risk. Lower is safer; judged for non-public releases."
    ),
    "k_violations": (
        "Records in classes smaller than the given size (they break k-anonymity at that k). "
        "Lower is safer; 0 means the data are k-anonymous."
    ),
    # ------------------------------------------------------------------ perturbed values
    "judged_measure": (
        "The risk the verdict judges. The release's compatible classes when every "
        "quasi-identifier is released as it is or generalised (the intruder matches values "
        "exactly; a suppressed value matches any value); for a subsample, the open-data risk at "
        "the fraction released; record linkage when one is perturbed (noise, smoothing, PRAM, "
        "multivariate microaggregation): the intruder matches within the perturbation's reach. "
        "When an intruder may hold the source file, also the exact linkage to it, and the "
        "higher of the two is judged."
    ),
    "linkage_max_risk": (
        "Maximum risk (record linkage): the largest chance that an intruder who knows a "
        "person's true values picks their record among the released records within the "
        "perturbation's reach (1 / the number of such records). Lower is safer; judged for "
        "public releases."
    ),
    "linkage_average_risk": (
        "Average risk (record linkage): the largest of three shares of records an intruder gets "
        "right or pins down: the mean within-reach chance, the nearest-record linkage rate and "
        "the interval disclosure (dRisk). Lower is safer."
    ),
    "linkage_anonymity": (
        "Anonymity score = 1 - the record-linkage average risk: the chance that an intruder "
        "linking released records to people picks a wrong person. Higher is safer (0..1)."
    ),
    "certain_links": (
        "Records whose own record is the only one within the perturbation's reach of the "
        "person's true values: an intruder re-identifies them with certainty (they play the "
        "part of uniques; with no masking they are the uniques). Lower is safer."
    ),
    "fewest_candidates": (
        "The fewest released records within reach of a person whose own record is among them "
        "(the counterpart of k). Higher is safer."
    ),
    "within_reach": (
        "Mean chance of a correct link when the intruder matches each perturbed value within "
        "the perturbation's reach (Cologne's tolerance rule): 1 / the records within reach, 0 "
        "when the own record is out of reach. Lower is safer."
    ),
    "linkage_rate": (
        "Distance-based record linkage: the share of records whose nearest released record "
        "(standardized units, exact on generalised columns, ties shared) is their own. Lower "
        "is safer."
    ),
    "interval_disclosure": (
        "Interval disclosure (sdcMicro's dRisk, k = 0.05): the share of records whose true "
        "values of the perturbed columns all lie within 0.05 SD of the released values, i.e. "
        "the perturbation barely moved them. Lower is safer."
    ),
    # ------------------------------------------------------------------ attribute disclosure
    "l_distinct": (
        "Distinct l-diversity: the fewest different values of the column in a class. 1 means "
        "some class shares one value, so knowing someone's class reveals it. Higher is safer."
    ),
    "l_entropy": (
        "Entropy l-diversity: the smallest exp(entropy) of the column's values in a class, the "
        "effective number of values (lower than the distinct count when one value dominates). "
        "Higher is safer."
    ),
    "t_closeness": (
        "t-closeness: the largest distance (Earth Mover's) between the column's distribution in "
        "a class and in the whole file, 0..1: how much knowing the class changes what an "
        "intruder believes. Lower is safer."
    ),
    "homogeneous": (
        "Records in classes where everyone shares the column's value: an intruder who knows "
        "which class a person is in learns the value without finding their record. Lower is "
        "safer; 0 is best."
    ),
    # ------------------------------------------------------------------ record uniqueness (RU)
    "ru_uniques_pct": (
        "Unique records: the share of records (in %) whose combination of the chosen key "
        "variables, at their masked precision, no other record shares. Lower is safer."
    ),
    "ru_small_pct": (
        "Records in small sets: the share of records (in %) in a combination of key values "
        "shared by at most T records (the RU program's 'unique record sets', T = 5). Lower is "
        "safer; the RU guideline wants at most 20% for a research file and under 5% for a "
        "public file, on the full set of key variables."
    ),
    "ru_weight": (
        "RU weight of a variable: its coefficient in the regression of ln(% unique records) on "
        "0/1 indicators of the variables in each combination. A larger weight means the "
        "variable adds more uniqueness; collapsing (coarsening) the variable with the largest "
        "weight cuts uniques the most. Lower is safer."
    ),
    "ru_verdict": (
        "The RU guideline applied to the full set of key variables: at most 20% of records in "
        "small sets for a research file, fewer than 5% for a public-use file. Meeting it is "
        "necessary, not sufficient: check utility too."
    ),
    "ru_small_class": (
        "Largest size of a 'small record set' (T): records in combinations shared by at most T "
        "records count as at risk. The RU program uses 5; a larger T is stricter."
    ),
    # ------------------------------------------------------------------ linkage (Cologne)
    "identifiability": (
        "Cologne identifiability risk score: average over released records of 1 / number of "
        "matching source records, counting only matches that include the record's own source. "
        "Lower is safer (0..1)."
    ),
    "anonymity": (
        "Cologne anonymity score = 1 - identifiability risk score: the chance an intruder who "
        "links each released record to the source picks a wrong person. Higher is safer (0..1)."
    ),
    "perceived": (
        "Perceived risk: like the identifiability score but counting any match, right or "
        "wrong; what an intruder might believe. Lower is safer."
    ),
    "matching_rule": (
        "How the intruder compares released values with the source: exactly as released; "
        "after masking the source the same way (deterministic steps only); the nearest source "
        "records in standardized units; or every source record within a tolerance (e.g. the "
        "noise half-width)."
    ),
    # ------------------------------------------------------------------ utility
    "match_share": (
        "Expected share of correct matches (Zhou et al. 2010): an intruder who knows every "
        "person's true values of the chosen variables links each person to the released "
        "record closest to them (distance in SD units, ties shared); this is the share linked "
        "to their own record, averaged over people. Lower is safer; 1/N is blind guessing."
    ),
    "roc_status": (
        "Share of the records the intruder does not know whose disease status the published "
        "ROC curve gives away exactly (the same in every arrangement that reproduces the "
        "curve). Lower is safer."
    ),
    "roc_pinned": (
        "Share of the unknown records whose rank among all records (so the score up to its "
        "neighbours) the curve fixes. Lower is safer."
    ),
    "roc_width": (
        "Mean width of the score intervals the intruder can bracket an unknown record's "
        "score in (between its known neighbours). Wider is safer."
    ),
    "roc_auc": (
        "Area under the curve as published, and its change from the empirical curve: the "
        "utility cost of publishing it coarser. Closer to the empirical AUC is better."
    ),
    "analysis_potential": (
        "Analysis-potential score = MSE(original estimate) / MSE(masked estimate), with "
        "MSE = SE² + bias². 1 means no loss; higher is better. Above 1 is chance (the masked "
        "SE came out smaller), not a gain: read it as no loss."
    ),
    "estimate": (
        "Exposure coefficient b of the collaborator's model: the log odds ratio (logistic, "
        "binomial), log rate ratio (Poisson) or log hazard ratio (Cox) per unit of exposure, "
        "the change in mean outcome (linear), the excess relative risk (ERR). Closer to the "
        "unmasked value is better."
    ),
    "effect": (
        "The effect measure an epidemiologist reports: exp(b) as an odds, rate or hazard "
        "ratio per unit of exposure (b itself for linear and ERR models), with its 95% Wald "
        "confidence interval, b ± 1.96 SE. The masked value and interval should stay close "
        "to the original ones."
    ),
    "se": "Standard error of the exposure coefficient. Closer to the unmasked value is better.",
    "relative_bias": (
        "Relative bias = (masked estimate - original estimate) / original estimate, in %. "
        "Closer to 0 is better."
    ),
    "mse": (
        "Mean squared error of the exposure coefficient around the original estimate: "
        "SE² + (masked - original)². Lower is better."
    ),
    "deviance": "Residual deviance (-2 log likelihood) of the fitted model; lower fits better.",
    "lr": (
        "Likelihood-ratio statistic for the exposure (deviance without it minus with it, "
        "1 df) and its p-value; it should stay close to the unmasked value."
    ),
    "replicates": (
        "Random masking (noise) is drawn this many times; utility is reported as the mean and "
        "range over the draws (Cologne used 500). More replicates: steadier figures, slower."
    ),
    # ------------------------------------------------------------------ R-U map and verdict
    "security": (
        "Security = 1 - the chosen risk measure, on 0..1. Higher is safer; the ideal point is "
        "at the top right of the map (safe and useful)."
    ),
    "security_measure": "Which risk the map's vertical axis subtracts from 1.",
    "theta": (
        "Cologne's curve security = (1 - AP^theta)^(1/theta) fitted to the points; a larger "
        "theta bends the curve toward the ideal corner (Cologne found 178)."
    ),
    "threshold": (
        "Release threshold from a minimum cell size: the judged risk must not exceed "
        "1 / minimum cell size (3 -> 0.33, 5 -> 0.2, 11 -> 0.09, 20 -> 0.05)."
    ),
    "release_context": (
        "Who receives the release. Public releases are judged on the maximum risk; releases "
        "shared under a data-use agreement, or kept for internal use, on the worst of three "
        "attack scenarios, deliberate, acquaintance and breach, each its probability x the "
        "strict average risk (El Emam & Malin)."
    ),
    "verdict": (
        "Whether the judged risk is at or below the threshold. Meeting it is necessary, not "
        "sufficient: check utility and the release context too."
    ),
}


#: Short names of the R-U map's security measures (deid_core.tradeoff.rumap.SECURITY_MEASURES keys).
SECURITY_MEASURE_NAMES: dict[str, str] = {
    "identifiability": "Cologne anonymity (1 − identifiability score)",
    "average_risk": "1 − average risk",
    "max_risk": "1 − maximum risk",
}


def metric_help(key: str) -> str:
    """The help text of a metric (a KeyError is a programming error, not a user error)."""
    return METRIC_HELP[key]


def judged_caption(judged: RiskSummary | PerturbedRisk) -> str | None:
    """What the figures beside a perturbed recipe's verdict are (None for class-based risk):
    why the equivalence classes do not apply and how each quasi-identifier is matched."""
    if not isinstance(judged, PerturbedRisk):
        return None
    matches = "; ".join(f"{column}: {how}" for column, how in judged.matches)
    return (
        f"{judged.basis.reason} Judged by {judged.basis.name}; k and uniques do not apply. "
        f"The intruder matches {matches}. Average risk = the largest of the within-reach "
        f"chance, the nearest-record linkage rate and dRisk (here: {judged.average_source})."
    )
