"""What a column released unmasked gives away: how well it matches a person, and whether it
determines (or nearly determines) the outcome or a sensitive column.

A column released exactly as in the source can be matched by anyone who knows a person's
value; :func:`column_exposure` counts its distinct values and the records holding a value no
other record has (knowing such a value finds one record). Worse, an unmasked column can carry
another column's value with it: birth weight in grams gives away the low-birth-weight outcome
(``low = bwt < 2500``), so masking the outcome alone hides nothing. :func:`determination`
measures that with a simple rule that predicts the target from the column:

* the rule's groups are the column's own values when it is text, true/false, or a number with
  at most :data:`MAX_LEVELS` distinct values (values held by fewer than :data:`MIN_GROUP`
  records pooled into one group, so a near-unique column cannot "predict" by naming each
  record); otherwise at most :data:`MAX_INTERVALS` intervals of the column, each of at least
  :data:`MIN_GROUP` records, found by a decision tree on the column alone (scikit-learn's CART,
  Breiman et al. 1984); missing values form a group of their own;
* for a categorical target (text, true/false, or at most :data:`MAX_LEVELS` distinct numbers)
  the rule predicts each group's most common value; its strength is Goodman & Kruskal's lambda,
  the share of the errors of always guessing the most common value that the rule removes:
  ``lambda = (accuracy - baseline) / (1 - baseline)``;
* for a numeric target it predicts each group's mean; its strength is the correlation ratio
  ``eta^2 = 1 - SS_within / SS_total``, the share of the target's variance the groups explain.
  A numeric column with many values is also tried as a monotone rule (isotonic regression,
  increasing or decreasing, Barlow et al. 1972; scikit-learn's), whose ``R^2`` is the same
  share: a column that is a rescaled copy of the target (grams and kilograms) determines it,
  which no handful of intervals shows. The better of the two rules counts.

A strength of at least :data:`DETERMINES` means the column determines the target, at least
:data:`NEARLY_DETERMINES` that it nearly does. The rule is fitted and scored on the same
records (an in-sample figure: what an intruder holding the released file can see), on at most
:data:`SAMPLE_ROWS` records drawn at random (seed 0) when the file is larger. A tree finds a
good rule, not always the best one: the strength is a lower bound on what the best such rule
achieves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from deid_core.errors import DataError

#: A number with at most this many distinct values is taken as categories.
MAX_LEVELS = 20
#: The most intervals a rule cuts a numeric column into.
MAX_INTERVALS = 8
#: The fewest records a group of the rule holds (rarer values are pooled).
MIN_GROUP = 5
#: Larger files are measured on a random sample of this many records.
SAMPLE_ROWS = 200_000
#: Strength from which a column determines its target, and nearly determines it.
DETERMINES = 0.99
NEARLY_DETERMINES = 0.9


@dataclass(frozen=True)
class ColumnExposure:
    """How an unmasked column matches people: its distinct values and the records holding a
    value no other record holds (missing values count as one value)."""

    column: str
    n_records: int
    distinct: int
    unique_records: int


def column_exposure(frame: pd.DataFrame, column: str) -> ColumnExposure:
    """Distinct values of ``column`` and the records whose value is unique in it."""
    _check(frame, column)
    counts = frame[column].value_counts(dropna=False)
    return ColumnExposure(
        column=column,
        n_records=len(frame),
        distinct=int(counts.size),
        unique_records=int((counts == 1).sum()),
    )


@dataclass(frozen=True)
class Determination:
    """How well a rule on ``column`` predicts ``target`` (see the module notes).

    ``strength`` is Goodman & Kruskal's lambda (categorical target) or the share of the
    variance explained (numeric target); ``accuracy`` and ``baseline`` (categorical targets
    only) are the shares predicted correctly by the rule and by the most common value alone;
    ``groups`` the rule's number of groups, ``grouping`` "values", "intervals" or "monotone"
    (a monotone function of the column, ``groups`` then its distinct fitted values); ``n`` the
    records used.
    """

    column: str
    target: str
    target_kind: str
    grouping: str
    groups: int
    strength: float
    n: int
    accuracy: float | None = None
    baseline: float | None = None

    @property
    def level(self) -> str | None:
        """ "determines", "nearly determines", or None below :data:`NEARLY_DETERMINES`."""
        if self.strength >= DETERMINES:
            return "determines"
        if self.strength >= NEARLY_DETERMINES:
            return "nearly determines"
        return None

    def __str__(self) -> str:
        rule = {
            "intervals": f"a rule on '{self.column}' with {self.groups} interval(s)",
            "monotone": f"a monotone function of '{self.column}'",
        }.get(self.grouping, f"a rule on the values of '{self.column}' ({self.groups} group(s))")
        if self.target_kind == "categorical":
            return (
                f"{rule} predicts '{self.target}' correctly for {100 * self.accuracy:.1f}% of "
                f"records (its most common value alone: {100 * self.baseline:.1f}%; "
                f"lambda = {self.strength:.3f})"
            )
        return f"{rule} explains {100 * self.strength:.1f}% of the variance of '{self.target}'"


def _check(frame: pd.DataFrame, *columns: str) -> None:
    for column in columns:
        if column not in frame.columns:
            raise DataError(f"Column '{column}' is not in the data.")
    if len(frame) == 0:
        raise DataError("The data have no records.")


def _is_categorical(series: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(series.dtype) or not (
        pd.api.types.is_numeric_dtype(series.dtype)
        or pd.api.types.is_datetime64_any_dtype(series.dtype)
    ):
        return True
    return series.nunique(dropna=True) <= MAX_LEVELS


def _as_numbers(series: pd.Series) -> np.ndarray:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        values = series.dt.tz_localize(None) if getattr(series.dt, "tz", None) else series
        numbers = values.astype("int64").to_numpy(dtype=float)
        numbers[series.isna().to_numpy()] = np.nan
        return numbers
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)


def _value_groups(series: pd.Series) -> np.ndarray:
    """Group codes from the values (missing is a value), rare values pooled into one group."""
    codes, _ = pd.factorize(series, use_na_sentinel=False)
    counts = np.bincount(codes)
    rare = counts[codes] < MIN_GROUP
    codes = codes.copy()
    codes[rare] = counts.size  # one pooled group
    return pd.factorize(codes)[0]


def _interval_groups(x: np.ndarray, y: np.ndarray, categorical: bool) -> np.ndarray:
    """Group codes from at most :data:`MAX_INTERVALS` intervals of ``x`` fitted to ``y`` by a
    decision tree (missing ``x`` is a group of its own)."""
    from sklearn import config_context
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    present = ~np.isnan(x)
    groups = np.full(x.size, -1, dtype=np.int64)
    if present.sum() >= 2 * MIN_GROUP:
        tree_type = DecisionTreeClassifier if categorical else DecisionTreeRegressor
        tree = tree_type(max_leaf_nodes=MAX_INTERVALS, min_samples_leaf=MIN_GROUP, random_state=0)
        with config_context(skip_parameter_validation=True):  # constants: a third of the time
            tree.fit(x[present].reshape(-1, 1), y[present])
            groups[present] = tree.apply(x[present].reshape(-1, 1))
    else:
        groups[present] = 0
    return pd.factorize(groups)[0]


def determination(frame: pd.DataFrame, column: str, target: str) -> Determination | None:
    """How well ``column`` predicts ``target`` (see the module notes); None when the target
    has nothing to reveal (one value only, or no variance)."""
    _check(frame, column, target)
    if column == target:
        raise DataError("A column is compared with another column, not with itself.")
    # The two columns as Series (a two-column frame per pair cost more than the rule on a
    # small file); both sampled alike: the same length and seed draw the same positions.
    values, outcome = frame[column], frame[target]
    if len(frame) > SAMPLE_ROWS:
        values = values.sample(SAMPLE_ROWS, random_state=0)
        outcome = outcome.sample(SAMPLE_ROWS, random_state=0)
    target_categorical = _is_categorical(outcome)
    if target_categorical:
        y = pd.factorize(outcome, use_na_sentinel=False)[0]
    else:
        numbers = _as_numbers(outcome)
        keep = ~np.isnan(numbers)
        values, y = values[keep], numbers[keep]
    if len(values) == 0:
        return None
    if _is_categorical(values):
        groups, grouping = _value_groups(values), "values"
    else:
        groups = _interval_groups(_as_numbers(values), y, target_categorical)
        grouping = "intervals"
    n = len(y)
    n_groups = int(groups.max()) + 1
    if target_categorical:
        levels = int(y.max()) + 1
        table = np.bincount(groups * levels + y, minlength=n_groups * levels)
        table = table.reshape(n_groups, levels)
        accuracy = table.max(axis=1).sum() / n
        baseline = table.sum(axis=0).max() / n
        if baseline >= 1.0:
            return None
        strength = (accuracy - baseline) / (1.0 - baseline)
        return Determination(
            column,
            target,
            "categorical",
            grouping,
            n_groups,
            float(strength),
            n,
            float(accuracy),
            float(baseline),
        )
    total = float(((y - y.mean()) ** 2).sum())
    if total <= 0.0:
        return None
    sums = np.bincount(groups, weights=y, minlength=n_groups)
    sizes = np.bincount(groups, minlength=n_groups)
    within = float(((y - (sums / np.maximum(sizes, 1))[groups]) ** 2).sum())
    result = Determination(column, target, "numeric", grouping, n_groups, _share(within, total), n)
    if grouping == "intervals":
        fitted = _monotone_fit(_as_numbers(values), y)
        monotone = _share(float(((y - fitted) ** 2).sum()), total)
        if monotone > result.strength:
            groups = int(np.unique(fitted).size)
            return Determination(column, target, "numeric", "monotone", groups, monotone, n)
    return result


def _share(residual: float, total: float) -> float:
    """1 - residual / total, within [0, 1]."""
    return min(max(1.0 - residual / total, 0.0), 1.0)


def _monotone_fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The better (smaller squared error) of the increasing and the decreasing isotonic fit
    of ``y`` on ``x``; records with ``x`` missing get their own mean."""
    from sklearn import config_context
    from sklearn.isotonic import IsotonicRegression

    present = ~np.isnan(x)
    best = np.full(y.size, y[~present].mean() if (~present).any() else 0.0)
    with config_context(skip_parameter_validation=True):  # constant parameters
        fits = [
            IsotonicRegression(increasing=increasing).fit_transform(x[present], y[present])
            for increasing in (True, False)
        ]
    best[present] = min(fits, key=lambda fit: float(((y[present] - fit) ** 2).sum()))
    return best
