"""The collaborator's model as data, and its design matrix.

:class:`ModelSpec` names the outcome, the exposure of interest, the covariates (some of them
categorical factors, each with its reference level) and the family (with a person-time offset
for Poisson, trials for binomial counts, the follow-up time for Cox); :func:`build_design`
validates the columns for that family and builds the design matrix on the complete records
(:class:`Design`). The fits are in :mod:`deid_core.utility.models`.

Every problem is a :class:`~deid_core.errors.ModelFitError` with a one-line message naming the
column at fault and never quoting a data value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from deid_core import bounds
from deid_core.errors import ModelFitError

#: Families :class:`ModelSpec` accepts, with the left-hand side of their formula.
_FORMULA_LHS = {
    "logistic": "logit P({outcome} = 1)",
    "poisson": "log E({outcome})",
    "linear": "E({outcome})",
    "err": "odds({outcome})",
    "binomial": "logit P({outcome} of {trials})",
    "cox": "log h(t)",
}
SUPPORTED_FAMILIES = tuple(_FORMULA_LHS)
#: Families whose outcome is binary (0/1) record by record (for cox: the event indicator).
BINARY_FAMILIES = ("logistic", "err", "cox")
#: How a Cox fit handles tied event times (statsmodels' ``PHReg`` ``ties``).
TIES_METHODS = ("breslow", "efron")

#: One-line plain description of each family for the user interface: what ``b`` means and
#: which direction is good for utility (the masked ``b`` should stay close to the original).
FAMILY_HELP = {
    "logistic": (
        "Logistic regression of a 0/1 outcome: b is the log odds ratio per unit of exposure "
        "(b > 0 means higher exposure, higher odds); utility is good when the masked b stays "
        "close to the original b."
    ),
    "poisson": (
        "Poisson regression of an event count, optionally per person-time: b is the log rate "
        "ratio per unit of exposure (b > 0 means higher exposure, higher rate); utility is good "
        "when the masked b stays close to the original b."
    ),
    "linear": (
        "Linear regression (least squares) of a numeric outcome: b is the change in the mean "
        "outcome per unit of exposure; utility is good when the masked b stays close to the "
        "original b."
    ),
    "binomial": (
        "Logistic regression of grouped counts, e.g. deaths out of the population of each "
        "area: b is the log odds ratio per unit of exposure; utility is good when the masked "
        "b stays close to the original b."
    ),
    "err": (
        "Linear excess-relative-risk model of a 0/1 outcome, odds = exp(a + g'z) (1 + b dose): "
        "b is the excess relative risk per unit dose (b = 0.5 per Gy means 50% more risk per "
        "Gy); utility is good when the masked b stays close to the original b."
    ),
    "cox": (
        "Cox proportional-hazards model of the time to an event (0/1 event indicator, 1 = the "
        "event happened, 0 = censored, with a follow-up time column): b is the log hazard ratio "
        "per unit of exposure (b > 0 means higher exposure, earlier events); utility is good "
        "when the masked b stays close to the original b."
    ),
}

#: Fewest complete records a model is fitted to.
MIN_COMPLETE_ROWS = 10
#: Most categories a text covariate or a factor may have before dummy coding is refused.
MAX_LEVELS = 50
#: A numeric covariate of whole-number codes with at least 3 and at most this many distinct
#: values is offered as a factor (:func:`suggested_factors`).
MAX_SUGGESTED_CODES = 10
#: Relative tolerance on singular values below which the design counts as rank-deficient.
RANK_RTOL = 1e-7

INTERCEPT = "Intercept"
#: Position of the exposure in the design matrix of the families with an intercept (the
#: intercept comes first); a Cox design has no intercept (:attr:`Design.exposure_index`).
EXPOSURE_INDEX = 1


@dataclass(frozen=True)
class ModelSpec:
    """The collaborator's model: an outcome, one exposure of interest and covariates.

    Parameters
    ----------
    outcome : str
        Outcome column: 0/1 (or True/False) for ``"logistic"`` and ``"err"``, a non-negative
        whole-number count for ``"poisson"``, numeric for ``"linear"``.
    exposure : str
        Numeric exposure column whose coefficient ``b`` is the quantity of interest (the
        dose for ``"err"``).
    covariates : tuple of str
        Adjustment columns. Numeric and boolean columns enter as they are (one linear term),
        unless listed in ``factors``; text and categorical columns are dummy-coded: one 0/1
        indicator per category other than the reference.
    family : str
        Model family, one of :data:`SUPPORTED_FAMILIES` (see :data:`FAMILY_HELP`).
    offset : str or None
        ``"poisson"`` only: person-time column (positive); its log enters as an offset, so
        ``exp(b)`` is a rate ratio. ``None`` models the counts themselves.
    trials : str or None
        ``"binomial"`` only, and required there: the column of trials per row (e.g. the
        population of an area); the outcome is the events among them.
    fractional_outcome : bool
        Accept a smoothed (non-integer) outcome, fitted by quasi-likelihood (module
        docstring). Used for masked data whose outcome was smoothed.
    factors : tuple of str
        Numeric covariates to dummy-code as categories (e.g. race coded 1/2/3) instead of
        fitting one linear term across their codes.
    references : tuple of (str, str) pairs, or a mapping
        Reference level of a categorical covariate, by its label (:func:`level_label`: a
        whole-number code is written without decimals, e.g. ``"1"``); a covariate not listed
        takes its first level (category order, else sorted).
    time : str or None
        ``"cox"`` only, and required there: the follow-up time column (non-negative); the
        outcome is then the event indicator (1 event, 0 censored; R's 1/2 coding with 2 the
        event is accepted too).
    ties : str
        ``"cox"`` only: how tied event times are handled, ``"breslow"`` (default) or
        ``"efron"``.
    event : str or None
        Binary families (logistic, err, cox) only: the outcome's value that is the event, by
        its label (:func:`level_label`: ``"2"`` for survival's ``pbc`` status 2, death); the
        outcome is then ``1`` where its label equals ``event`` and ``0`` for every other
        value (censored, for the Cox model), missing where it is missing. None: the outcome
        is already 0/1 (or 1/2 for the Cox model).
    """

    outcome: str
    exposure: str
    covariates: tuple[str, ...] = ()
    family: str = "logistic"
    offset: str | None = None
    trials: str | None = None
    fractional_outcome: bool = False
    factors: tuple[str, ...] = ()
    references: tuple[tuple[str, str], ...] = ()
    time: str | None = None
    ties: str = "breslow"
    event: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "covariates", tuple(self.covariates))
        if self.event is not None:
            if not isinstance(self.event, str) or not self.event:
                raise ModelFitError("the event must be a non-empty value of the outcome")
            if self.family not in BINARY_FAMILIES:
                raise ModelFitError(
                    f"an event value is for a 0/1 outcome ({', '.join(BINARY_FAMILIES)}), "
                    f"not the {self.family} model"
                )
        object.__setattr__(self, "factors", tuple(self.factors))
        object.__setattr__(self, "references", _reference_pairs(self.references))
        for role, name in (("outcome", self.outcome), ("exposure", self.exposure)):
            if not isinstance(name, str) or not name:
                raise ModelFitError(f"the {role} must be a non-empty column name")
        if not all(isinstance(c, str) and c for c in self.covariates):
            raise ModelFitError("every covariate must be a non-empty column name")
        if self.offset is not None and (not isinstance(self.offset, str) or not self.offset):
            raise ModelFitError("the offset must be a non-empty column name or None")
        if self.trials is not None and (not isinstance(self.trials, str) or not self.trials):
            raise ModelFitError("the trials column must be a non-empty column name or None")
        if self.time is not None and (not isinstance(self.time, str) or not self.time):
            raise ModelFitError("the time column must be a non-empty column name or None")
        if len(set(self.columns)) != len(self.columns):
            raise ModelFitError(
                "the outcome, exposure, covariates, offset, trials and time must be distinct "
                "columns"
            )
        stray = [c for c in self.factors if c not in self.covariates]
        if stray:
            raise ModelFitError(
                f"factor(s) {', '.join(map(repr, stray))} must be among the covariates"
            )
        stray = [c for c, _ in self.references if c not in self.covariates]
        if stray:
            raise ModelFitError(
                f"a reference level is set for {', '.join(map(repr, stray))}, which is not a "
                "covariate"
            )
        if self.family not in SUPPORTED_FAMILIES:
            raise ModelFitError(
                f"unsupported model family {self.family!r}; "
                f"supported: {', '.join(SUPPORTED_FAMILIES)}"
            )
        if self.offset is not None and self.family != "poisson":
            raise ModelFitError(
                f"a person-time offset is only for the poisson family, not {self.family!r}"
            )
        if (self.trials is not None) != (self.family == "binomial"):
            raise ModelFitError(
                "the binomial family needs a trials column (e.g. the population of each "
                "area), and only it takes one"
            )
        if (self.time is not None) != (self.family == "cox"):
            raise ModelFitError(
                "the Cox model needs a follow-up time column, and only it takes one"
            )
        if self.ties not in TIES_METHODS:
            raise ModelFitError(f"ties must be one of {', '.join(TIES_METHODS)}, not {self.ties!r}")

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the model uses: outcome, exposure, covariates, then any offset,
        trials or time column."""
        extra = tuple(c for c in (self.offset, self.trials, self.time) if c is not None)
        return (self.outcome, self.exposure, *self.covariates, *extra)

    def reference(self, covariate: str) -> str | None:
        """The chosen reference level (label) of a categorical covariate, or None."""
        return dict(self.references).get(covariate)

    def formula(self) -> str:
        """Readable model formula, e.g. ``logit P(y = 1) = a + b * dose + g1 * age``.

        ``"err"`` gives ``odds(y) = exp(a + g1 * city) * (1 + b * dose)``; ``"poisson"``
        with an offset ``t`` gives ``log E(y) = log(t) + a + b * x``. A factor shows as
        ``factor(race)`` (``factor(race, ref 2)`` with a chosen reference); ``"cox"`` gives
        ``log h(t) = log h0(t) + b * x + ...  (time: t, event: y, breslow ties)``.
        """
        lhs = _FORMULA_LHS[self.family].format(outcome=self.outcome, trials=self.trials)
        gs = [f"g{i} * {self._term(c)}" for i, c in enumerate(self.covariates, start=1)]
        if self.family == "err":
            return f"{lhs} = exp({' + '.join(['a', *gs])}) * (1 + b * {self.exposure})"
        if self.family == "cox":
            terms = ["log h0(t)", f"b * {self.exposure}", *gs]
            event = self.outcome if self.event is None else f"{self.outcome} = {self.event}"
            return (
                f"{lhs} = {' + '.join(terms)}  (time: {self.time}, event: {event}, "
                f"{self.ties} ties)"
            )
        terms = ["a", f"b * {self.exposure}", *gs]
        if self.offset is not None:
            terms.insert(0, f"log({self.offset})")
        return f"{lhs} = {' + '.join(terms)}"

    def _term(self, covariate: str) -> str:
        reference = self.reference(covariate)
        if covariate in self.factors or reference is not None:
            ref = "" if reference is None else f", ref {reference}"
            return f"factor({covariate}{ref})"
        return covariate


def _reference_pairs(references: object) -> tuple[tuple[str, str], ...]:
    """Reference levels as sorted (covariate, label) pairs, from pairs or a mapping."""
    items = references.items() if isinstance(references, Mapping) else references
    if not isinstance(items, Iterable) or isinstance(items, str):
        raise ModelFitError("reference levels must map covariates to level labels")
    pairs: dict[str, str] = {}
    for item in items:
        if not (isinstance(item, tuple | list) and len(item) == 2):
            raise ModelFitError("reference levels must map covariates to level labels")
        column, label = item
        if not (isinstance(column, str) and column and isinstance(label, str) and label):
            raise ModelFitError("a reference level is a non-empty label for a covariate")
        if column in pairs:
            raise ModelFitError(f"the covariate {column!r} has more than one reference level")
        pairs[column] = label
    return tuple(sorted(pairs.items()))


def level_label(value: object) -> str:
    """How a category is named in a design column and a reference level: a whole-number
    code without decimals (``2.0`` as ``"2"``), other numbers as ``str``, text as it is."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def suggested_factors(df: pd.DataFrame, columns: Iterable[str]) -> tuple[str, ...]:
    """Numeric columns among ``columns`` that look like category codes: whole numbers with at
    least 3 and at most :data:`MAX_SUGGESTED_CODES` distinct values (e.g. race 1/2/3). Fitted
    as one linear term, such a column forces equal steps between successive codes; as a
    factor, each code gets its own coefficient. A 0/1 column fits the same either way."""
    out = []
    for name in columns:
        if name not in df.columns:
            continue
        column = df[name]
        if pd.api.types.is_bool_dtype(column) or not pd.api.types.is_numeric_dtype(column):
            continue
        values = column.dropna().unique()
        if not 3 <= len(values) <= MAX_SUGGESTED_CODES:
            continue
        values = np.asarray(values, dtype=float)
        if np.all(np.isfinite(values)) and np.all(values == np.round(values)):
            out.append(name)
    return tuple(out)


@dataclass(frozen=True)
class Design:
    """A model's design matrix on the complete records of a data frame.

    ``X`` has the intercept in column 0 and the exposure in column 1, then the covariate
    columns (one indicator per non-reference category of a categorical covariate).
    ``sources[j]`` is the data column behind design column ``j``; ``rows`` marks the
    records of the data frame that were used (complete on every model column); ``offset``
    is ``log`` of the person-time column of a poisson model, else ``None``; ``trials`` the
    trials of a binomial model, else ``None``; ``time`` the follow-up times of a Cox model
    (whose ``y`` is the 0/1 event indicator and whose design has no intercept: the baseline
    hazard takes its place), else ``None``.
    """

    X: np.ndarray
    y: np.ndarray
    names: tuple[str, ...]
    sources: tuple[str, ...]
    rows: np.ndarray
    offset: np.ndarray | None = None
    trials: np.ndarray | None = None
    time: np.ndarray | None = None

    @property
    def n_dropped(self) -> int:
        """Records left out because a model column was missing."""
        return int(self.rows.size - self.rows.sum())

    @property
    def exposure_index(self) -> int:
        """Position of the exposure's column: after the intercept, or first without one."""
        return EXPOSURE_INDEX if self.names[0] == INTERCEPT else 0


def build_design(df: pd.DataFrame, spec: ModelSpec) -> Design:
    """Validate the model's columns and build its design matrix on the complete records.

    Checks, in order: the columns exist; the outcome suits the family (0/1 or boolean for
    logistic and err, the event indicator for cox, a non-negative whole-number count for
    poisson, numeric for linear); the exposure is numeric; text covariates and factors have
    at most ``MAX_LEVELS`` categories; the offset (poisson) is numeric and positive; the
    follow-up time (cox) is numeric and not negative; no value is infinite; at least
    ``MIN_COMPLETE_ROWS`` records are complete; there are events and non-events (binary),
    events (poisson) or a varying outcome (linear); the exposure varies; a chosen reference
    level occurs; the design has full column rank (for cox, together with the baseline
    hazard, which a constant column duplicates). ``df`` is not modified.

    Raises
    ------
    ModelFitError
        With a one-line message naming the column at fault.
    """
    absent = [c for c in spec.columns if c not in df.columns]
    if absent:
        raise ModelFitError(f"column(s) not found in the data: {', '.join(map(repr, absent))}")
    duplicated = [c for c in spec.columns if isinstance(df[c], pd.DataFrame)]
    if duplicated:
        raise ModelFitError(
            f"column name(s) appear more than once in the data: {', '.join(map(repr, duplicated))}"
        )

    if spec.event is not None:
        y_all = event_indicator(df[spec.outcome], spec.outcome, spec.event)
    else:
        y_all = _outcome_values(
            df[spec.outcome], spec.outcome, spec.family, fractional=spec.fractional_outcome
        )
    x_all = _numeric_values(df[spec.exposure], spec.exposure, role="exposure")
    covariates = [_covariate_values(df[c], c, c in spec.factors) for c in spec.covariates]
    t_all = None
    if spec.offset is not None:
        t_all = _numeric_values(df[spec.offset], spec.offset, role="person-time offset")
        if (t_all[~np.isnan(t_all)] <= 0).any():
            raise ModelFitError(
                f"the person-time offset {spec.offset!r} must be positive for every record"
            )
    time_all = None
    if spec.time is not None:
        time_all = _numeric_values(df[spec.time], spec.time, role="follow-up time")
        if (time_all[~np.isnan(time_all)] < 0).any():
            raise ModelFitError(f"the follow-up time {spec.time!r} must not be negative")

    n_all = None
    if spec.trials is not None:
        n_all = _trials_values(df[spec.trials], spec.trials, spec.fractional_outcome)
        over = ~np.isnan(y_all) & ~np.isnan(n_all) & (y_all > n_all)
        if over.any():
            raise ModelFitError(
                f"the outcome {spec.outcome!r} exceeds the trials {spec.trials!r} in "
                f"{int(over.sum())} row(s); events cannot outnumber trials"
            )

    rows = ~np.isnan(y_all) & ~np.isnan(x_all)
    for extra in (t_all, n_all, time_all):
        if extra is not None:
            rows &= ~np.isnan(extra)
    for values in covariates:
        rows &= ~(pd.isna(values) if values.dtype == object else np.isnan(values))
    n = int(rows.sum())
    if n < MIN_COMPLETE_ROWS:
        raise ModelFitError(
            f"only {n} records are complete on the model's columns; "
            f"at least {MIN_COMPLETE_ROWS} are needed"
        )
    y = y_all[rows]
    if spec.family in BINARY_FAMILIES:
        n_events = int(y.sum())
        if n_events == 0:
            raise ModelFitError(f"the outcome {spec.outcome!r} has no events (no 1s) to model")
        if n_events == n and spec.family != "cox":
            raise ModelFitError(f"the outcome {spec.outcome!r} has no non-events (no 0s) to model")
    elif spec.family in ("poisson", "binomial"):
        if y.sum() == 0:
            raise ModelFitError(f"the outcome {spec.outcome!r} has no events (all counts 0)")
        if n_all is not None and (y == n_all[rows]).all():
            raise ModelFitError(
                f"the outcome {spec.outcome!r} equals the trials in every row (no non-events)"
            )
    elif np.ptp(y) == 0:
        raise ModelFitError(
            f"the outcome {spec.outcome!r} does not vary among the complete records"
        )
    x = x_all[rows]
    if np.ptp(x) == 0:
        raise ModelFitError(
            f"the exposure {spec.exposure!r} does not vary among the complete records"
        )

    cox = spec.family == "cox"
    widths = [1 if v.dtype != object else max(1, pd.unique(v[rows]).size - 1) for v in covariates]
    bounds.DESIGN_COLUMNS.check((1 if cox else 2) + sum(widths), "The model asks for")
    columns = [x] if cox else [np.ones(n), x]
    names = [spec.exposure] if cox else [INTERCEPT, spec.exposure]
    sources = list(names)
    for name, values in zip(spec.covariates, covariates, strict=True):
        values = values[rows]
        if values.dtype != object:
            columns.append(values)
            names.append(name)
            sources.append(name)
            continue
        levels = _levels(df[name], values)
        if len(levels) < 2:
            raise ModelFitError(
                f"the covariate {name!r} has a single category among the complete records"
            )
        labels = [level_label(level) for level in levels]
        reference = spec.reference(name)
        if reference is not None:
            if reference not in labels:
                raise ModelFitError(
                    f"the reference level chosen for the covariate {name!r} does not occur "
                    "among the complete records"
                )
            position = labels.index(reference)
            levels.insert(0, levels.pop(position))
            labels.insert(0, labels.pop(position))
        for level, label in zip(levels[1:], labels[1:], strict=True):
            columns.append((values == level).astype(float))
            names.append(f"{name}[{label}]")
            sources.append(name)
    X = np.column_stack(columns)
    check_rank(X, sources)
    if spec.family == "linear" and n <= X.shape[1]:
        raise ModelFitError(
            f"the linear model has {X.shape[1]} coefficients but only {n} complete records; "
            "drop covariates or categories"
        )
    offset = None if t_all is None else np.log(t_all[rows])
    trials = None if n_all is None else n_all[rows]
    time = None if time_all is None else time_all[rows]
    return Design(
        X=X,
        y=y,
        names=tuple(names),
        sources=tuple(sources),
        rows=rows,
        offset=offset,
        trials=trials,
        time=time,
    )


def event_indicator(column: pd.Series, name: str, event: str) -> np.ndarray:
    """1.0 where the outcome's label (:func:`level_label`) is ``event``, 0.0 for any other
    value, NaN where it is missing; a ModelFitError when no record has the event."""
    present = column.notna().to_numpy()
    labels = np.array([level_label(v) for v in column.to_numpy(dtype=object)], dtype=object)
    values = np.where(labels == event, 1.0, 0.0)
    values[~present] = np.nan
    if not (values == 1.0).any():
        raise ModelFitError(
            f"no record has {name!r} = {event!r}: choose one of the outcome's values as the event"
        )
    return values


def _outcome_values(
    column: pd.Series, name: str, family: str = "logistic", fractional: bool = False
) -> np.ndarray:
    """The outcome as floats with NaN for missing, checked for the family.

    Binary families need 0/1 (booleans accepted), poisson and binomial non-negative whole
    numbers, linear any finite numbers. With ``fractional`` (a smoothed outcome), binary
    families accept proportions in [0, 1] and counts need not be whole. The Cox model's
    event indicator may also be coded 1/2 with 2 the event (as R's ``Surv`` reads it); it is
    returned as 0/1.
    """
    if family == "cox":
        if fractional:
            raise ModelFitError(
                f"the event indicator {name!r} was smoothed; the Cox model needs 0/1 events"
            )
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            values = column.to_numpy(dtype=float, na_value=np.nan)
            observed = values[~np.isnan(values)]
            if (
                observed.size
                and np.all((observed == 1) | (observed == 2))
                and (observed == 2).any()
            ):
                return values - 1.0
        try:
            return _outcome_values(column, name)
        except ModelFitError:
            raise ModelFitError(
                f"the event indicator {name!r} must be coded 0/1 (1 = event, 0 = censored), "
                "True/False or 1/2 (2 = event); recode other codes first, e.g. "
                "death = (status == 2)"
            ) from None
    if family in ("poisson", "binomial"):
        values = _numeric_values(column, name, role="outcome")
        observed = values[~np.isnan(values)]
        if np.any(observed < 0) or (not fractional and np.any(observed != np.round(observed))):
            raise ModelFitError(
                f"the outcome {name!r} must be a count (non-negative whole numbers) "
                f"for the {family} model"
            )
        return values
    if family == "linear":
        return _numeric_values(column, name, role="outcome")
    if fractional and not pd.api.types.is_bool_dtype(column):
        values = _numeric_values(column, name, role="outcome")
        observed = values[~np.isnan(values)]
        if np.all((observed >= 0) & (observed <= 1)):
            return values
        raise ModelFitError(f"the smoothed outcome {name!r} must lie between 0 and 1")
    if pd.api.types.is_bool_dtype(column) or pd.api.types.is_numeric_dtype(column):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        observed = values[~np.isnan(values)]
        if np.all((observed == 0) | (observed == 1)):
            return values
    elif column.dtype == object and column.dropna().map(type).eq(bool).all():
        return column.to_numpy(dtype=float, na_value=np.nan)
    raise ModelFitError(f"the outcome {name!r} must be coded 0/1 (or True/False)")


def _trials_values(column: pd.Series, name: str, fractional: bool) -> np.ndarray:
    """The trials of a binomial model: positive (whole unless smoothed) numbers, NaN missing."""
    values = _numeric_values(column, name, role="trials column")
    observed = values[~np.isnan(values)]
    if np.any(observed <= 0) or (not fractional and np.any(observed != np.round(observed))):
        raise ModelFitError(
            f"the trials column {name!r} must hold positive whole numbers (e.g. population "
            "counts); drop rows with no trials"
        )
    return values


def _numeric_values(column: pd.Series, name: str, role: str) -> np.ndarray:
    """A numeric (or boolean) column as floats with NaN for missing."""
    if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)):
        raise ModelFitError(
            f"the {role} {name!r} is not numeric (it may hold interval labels after masking); "
            "release midpoints or means instead"
        )
    values = column.to_numpy(dtype=float, na_value=np.nan)
    if np.isinf(values).any():
        raise ModelFitError(f"the {role} {name!r} contains infinite values")
    return values


def _covariate_values(column: pd.Series, name: str, factor: bool = False) -> np.ndarray:
    """A covariate as floats, or as an object array of categories to be dummy-coded (text,
    categorical, or a numeric column fitted as a ``factor``)."""
    numeric = pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)
    if numeric and not factor:
        return _numeric_values(column, name, role="covariate")
    if column.nunique(dropna=True) > MAX_LEVELS:
        if numeric:
            raise ModelFitError(
                f"the factor {name!r} has more than {MAX_LEVELS} distinct values; fit it as a "
                "number or group its values first"
            )
        raise ModelFitError(
            f"the covariate {name!r} is text with more than {MAX_LEVELS} categories; if it "
            "holds numbers or interval labels, release midpoints or means instead, "
            "or merge categories"
        )
    if numeric:
        values = _numeric_values(column, name, role="covariate")
        return np.where(np.isnan(values), None, values).astype(object)
    return column.astype(object).to_numpy()


def category_labels(column: pd.Series) -> list[str]:
    """A categorical covariate's categories as labels (:func:`level_label`), in the order
    :func:`build_design` takes them: the first is the reference unless one is chosen."""
    values = column.dropna()
    return list(dict.fromkeys(level_label(v) for v in _levels(column, values.to_numpy(object))))


def _levels(column: pd.Series, values: np.ndarray) -> list[object]:
    """Observed categories of a covariate: category order if categorical, else sorted."""
    observed = set(values)
    if isinstance(column.dtype, pd.CategoricalDtype):
        return [c for c in column.cat.categories if c in observed]
    try:
        return sorted(observed)
    except TypeError:  # mixed types in an object column
        return sorted(observed, key=str)


def check_rank(X: np.ndarray, sources: Sequence[str]) -> None:
    """Raise if the design is rank-deficient, naming the first redundant term's column.

    Columns are scaled to unit length first, so the rank does not depend on units; a
    singular value below ``RANK_RTOL`` times the largest counts as zero. A design without an
    intercept (Cox) is checked together with a constant column, which its baseline hazard
    absorbs: a constant covariate is as redundant there as beside an intercept.
    """
    if sources[0] != INTERCEPT:
        X = np.column_stack([np.ones(X.shape[0]), X])
        sources = (INTERCEPT, *sources)
    norms = np.linalg.norm(X, axis=0)
    scaled = X / np.where(norms == 0, 1.0, norms)
    if norms.all() and np.linalg.matrix_rank(scaled, rtol=RANK_RTOL) == X.shape[1]:
        return
    for j in range(1, X.shape[1]):
        if norms[j] == 0 or np.linalg.matrix_rank(scaled[:, : j + 1], rtol=RANK_RTOL) <= j:
            term = "exposure" if j == EXPOSURE_INDEX else "covariate"
            raise ModelFitError(
                f"the {term} {sources[j]!r} is constant or collinear with other model terms "
                "among the complete records; drop it or one of the terms it duplicates"
            )
