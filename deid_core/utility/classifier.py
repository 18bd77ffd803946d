"""A second utility lens: how well a classifier trained on the masked data predicts the outcome
in the original data (the classification-accuracy utility of ARX and of Iyengar 2002).

The analysis potential asks whether one regression coefficient survives masking. A
collaborator who will *train a classifier* cares about something else: whether the released
records still carry the patterns that tell cases from non-cases, across all the features at
once and including interactions and non-linear shapes a single coefficient ignores. A mask can
keep ``b`` intact and still blur what a classifier uses (or the reverse), so the two lenses
complement each other.

Protocol (:func:`classifier_accuracy`):

1. Records: those complete on the outcome (0/1) and on every feature in the original data.
2. Folds: ``folds``-fold cross-validation, stratified by the original outcome, shuffled with
   ``seed`` (scikit-learn's ``StratifiedKFold``). The same folds serve every model and every
   masked data set, so the comparison is paired.
3. In each fold, each classifier is trained twice on the fold's training records: on their
   original values, and on their masked values (row ``i`` of the masked data is the masked
   version of row ``i`` of the original; a training record missing a masked feature, e.g.
   after local suppression, is left out of the masked training set). The masked model learns
   the masked outcome when the outcome itself is masked.
4. Both models are **always evaluated on the fold's test records as they are in the original
   data** (original features, original outcome): the question is how well a model built from
   the release predicts the truth.
5. Scores: the area under the ROC curve (AUC, from the predicted probabilities; 0.5 is
   chance, 1 perfect) and the accuracy (share of test records classified right at a 0.5
   probability threshold), each averaged over the folds. The accuracy of always predicting
   the more common class (the no-information rate) is given beside it: with a rare outcome a
   high accuracy alone says nothing.
6. A random mask is drawn ``n_replicates`` times (replicate ``r`` from ``masked(r)``); the
   masked scores are the mean over replicates, with their (min, max).

Classifiers (scikit-learn, in a pipeline fitted on the training records only): numeric
features standardised, categorical ones (text, or numeric factors) one-hot coded with
categories unseen in training ignored; then logistic regression (L2 penalty with C = 1,
lbfgs) or a random forest (100 trees, at least 5 records per leaf, seeded with ``seed``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from deid_core.errors import DataError
from deid_core.utility.counts import DEFAULT_CLASSIFIER_REPLICATES as DEFAULT_CLASSIFIER_REPLICATES
from deid_core.utility.counts import MAX_CLASSIFIER_REPLICATES as MAX_CLASSIFIER_REPLICATES
from deid_core.utility.spec import level_label

#: The classifiers, by key, with their names on screen.
CLASSIFIERS = {"logistic_regression": "Logistic regression", "random_forest": "Random forest"}
DEFAULT_FOLDS = 5
#: Random forest settings (module docstring).
FOREST_TREES = 100
FOREST_MIN_LEAF = 5

MaskedData = Callable[[int], pd.DataFrame]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ClassifierScore:
    """One classifier's cross-validated scores, trained on the original and on the masked data
    (both evaluated on the original). For a random mask the masked figures are means over
    replicates and ``*_range`` their (min, max); otherwise the range is the value itself."""

    classifier: str
    auc: float
    accuracy: float
    masked_auc: float
    masked_accuracy: float
    masked_auc_range: tuple[float, float]
    masked_accuracy_range: tuple[float, float]

    @property
    def name(self) -> str:
        return CLASSIFIERS[self.classifier]

    @property
    def auc_change(self) -> float:
        """Masked AUC minus original AUC: 0 is no loss, negative a loss."""
        return self.masked_auc - self.auc

    def to_dict(self) -> dict[str, Any]:
        return {
            "auc": self.auc,
            "accuracy": self.accuracy,
            "masked_auc": self.masked_auc,
            "masked_accuracy": self.masked_accuracy,
            "masked_auc_min": self.masked_auc_range[0],
            "masked_auc_max": self.masked_auc_range[1],
            "masked_accuracy_min": self.masked_accuracy_range[0],
            "masked_accuracy_max": self.masked_accuracy_range[1],
            "auc_change": self.auc_change,
        }


@dataclass(frozen=True)
class ClassifierAccuracy:
    """The classifier lens of one masking (module docstring for the protocol)."""

    outcome: str
    features: tuple[str, ...]
    n: int
    n_events: int
    folds: int
    n_replicates: int
    seed: int
    scores: tuple[ClassifierScore, ...] = field(default=())

    @property
    def no_information_accuracy(self) -> float:
        """Accuracy of always predicting the more common class."""
        return max(self.n_events, self.n - self.n_events) / self.n

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "features": list(self.features),
            "n": self.n,
            "n_events": self.n_events,
            "folds": self.folds,
            "replicates": self.n_replicates,
            "seed": self.seed,
            "no_information_accuracy": self.no_information_accuracy,
            "protocol": PROTOCOL,
            "classifiers": {s.classifier: s.to_dict() for s in self.scores},
        }

    def __str__(self) -> str:
        lines = [
            f"Classifier accuracy for {self.outcome!r} ({self.folds}-fold stratified CV, "
            f"{self.n:,} records, {self.n_events:,} events; evaluated on the original data)",
            f"{'':22s}{'AUC orig':>10s}{'AUC masked':>12s}{'acc orig':>10s}{'acc masked':>12s}",
        ]
        for s in self.scores:
            lines.append(
                f"{s.name:22s}{s.auc:10.4f}{s.masked_auc:12.4f}{s.accuracy:10.4f}"
                f"{s.masked_accuracy:12.4f}"
            )
        lines.append(f"No-information accuracy: {self.no_information_accuracy:.4f}")
        return "\n".join(lines)


#: What this lens adds to the analysis potential, in plain words (the page and the report).
WHAT_IT_ADDS = (
    "The analysis potential asks whether one number, the exposure's coefficient, survives "
    "masking. This lens asks whether the released records still let a classifier tell cases "
    "from non-cases, using every feature at once, with their interactions and non-linear "
    "shapes, as a collaborator who trains a prediction model would. A mask can keep the "
    "coefficient and blur what a classifier uses, or the reverse. AUC (0.5 = chance, 1 = "
    "perfect) and accuracy trained on the masked data should stay close to those trained on "
    "the original; accuracy means little next to the accuracy of always predicting the more "
    "common class."
)

#: The protocol in one paragraph, for the CLI's JSON and the report.
PROTOCOL = (
    "Stratified k-fold cross-validation on the records complete in the original data; in each "
    "fold every classifier is trained on the training records' original values and, "
    "separately, on the same records' masked values, and both are evaluated on the test "
    "records' original values and outcome. AUC and accuracy (0.5 threshold) are averaged over "
    "the folds; a random mask is averaged over replicates."
)


def classifier_accuracy(
    original: pd.DataFrame,
    masked: pd.DataFrame | MaskedData,
    outcome: str,
    features: Sequence[str],
    *,
    categorical: Sequence[str] = (),
    n_replicates: int = 1,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    classifiers: Sequence[str] = tuple(CLASSIFIERS),
    progress: Progress | None = None,
) -> ClassifierAccuracy:
    """Cross-validated AUC and accuracy of classifiers trained on the original and on the
    masked data, always evaluated on the original (module docstring for the protocol).

    ``masked`` is the masked data set (aligned row for row with ``original``), or for a
    random mask a function giving replicate ``r``'s masked data (``n_replicates`` of them).
    ``categorical`` names numeric features to one-hot code as categories (text features
    always are). ``progress(done, total)`` is called after every training; it may raise to
    cancel the work (a background job's way to stop it). The original is not modified.

    Raises
    ------
    DataError
        If a column is missing, the outcome is not 0/1 or has fewer than ``folds`` records
        of a class, a masked feature turned from numbers into labels, or a setting is out of
        range.
    """
    features = tuple(features)
    if not features:
        raise DataError("The classifier lens needs at least one feature (exposure or covariate).")
    unknown = [c for c in classifiers if c not in CLASSIFIERS]
    if unknown or not classifiers:
        raise DataError(f"Unknown classifier(s); known: {', '.join(CLASSIFIERS)}.")
    if not 2 <= folds <= 20:
        raise DataError("The number of folds must be between 2 and 20.")
    if not 1 <= n_replicates <= MAX_CLASSIFIER_REPLICATES:
        raise DataError(f"Classifier replicates must be between 1 and {MAX_CLASSIFIER_REPLICATES}.")
    columns = (outcome, *features)
    absent = [c for c in columns if c not in original.columns]
    if absent:
        raise DataError(f"Column(s) not found: {', '.join(map(repr, absent))}.")
    text = [c for c in features if not _is_number(original[c])]
    kinds = {c: (c in text or c in categorical) for c in features}
    complete = original[list(columns)].notna().all(axis=1).to_numpy()
    y = _binary(original[outcome], outcome)
    rows = np.flatnonzero(complete)
    y = y[rows]
    n_events = int(y.sum())
    if min(n_events, y.size - n_events) < folds:
        raise DataError(
            f"The outcome {outcome!r} needs at least {folds} events and {folds} non-events "
            f"among the complete records for {folds}-fold cross-validation."
        )
    X = _as_labels(original.iloc[rows][list(features)].reset_index(drop=True), kinds)
    splits = list(
        StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(np.zeros(y.size), y)
    )
    total = len(classifiers) * folds * (1 + n_replicates)
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    baseline: dict[str, tuple[float, float]] = {}
    for name in classifiers:
        fold_scores = []
        for train, test in splits:
            model = _pipeline(name, kinds, seed).fit(X.iloc[train], y[train])
            fold_scores.append(_scores(model, X.iloc[test], y[test]))
            step()
        baseline[name] = _mean(fold_scores)

    replicate_scores: dict[str, list[tuple[float, float]]] = {name: [] for name in classifiers}
    for r in range(n_replicates):
        frame = masked(r) if callable(masked) else masked
        Xm, ym = _masked_training(frame, original, rows, outcome, features, kinds)
        for name in classifiers:
            fold_scores = []
            for train, test in splits:
                keep = train[ym.notna().to_numpy()[train] & Xm.iloc[train].notna().all(axis=1)]
                labels = ym.iloc[keep].to_numpy(dtype=float)
                if np.unique(labels).size < 2:
                    raise DataError(
                        "A masked training fold holds only one outcome class, so no classifier "
                        "can be trained on it."
                    )
                model = _pipeline(name, kinds, seed).fit(Xm.iloc[keep], labels)
                fold_scores.append(_scores(model, X.iloc[test], y[test]))
                step()
            replicate_scores[name].append(_mean(fold_scores))

    scores = []
    for name in classifiers:
        per = np.array(replicate_scores[name])
        scores.append(
            ClassifierScore(
                classifier=name,
                auc=baseline[name][0],
                accuracy=baseline[name][1],
                masked_auc=float(per[:, 0].mean()),
                masked_accuracy=float(per[:, 1].mean()),
                masked_auc_range=(float(per[:, 0].min()), float(per[:, 0].max())),
                masked_accuracy_range=(float(per[:, 1].min()), float(per[:, 1].max())),
            )
        )
    return ClassifierAccuracy(
        outcome=outcome,
        features=features,
        n=int(y.size),
        n_events=n_events,
        folds=folds,
        n_replicates=n_replicates,
        seed=seed,
        scores=tuple(scores),
    )


def _is_number(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def _binary(column: pd.Series, name: str) -> np.ndarray:
    """A 0/1 (or True/False) outcome as floats, NaN for missing."""
    if _is_number(column):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        observed = values[~np.isnan(values)]
        if np.isin(observed, (0.0, 1.0)).all():
            return values
    raise DataError(
        f"The classifier lens needs a 0/1 outcome; {name!r} is not coded 0/1 (or True/False)."
    )


def _masked_training(
    frame: pd.DataFrame,
    original: pd.DataFrame,
    rows: np.ndarray,
    outcome: str,
    features: tuple[str, ...],
    kinds: dict[str, bool],
) -> tuple[pd.DataFrame, pd.Series]:
    """The masked features and outcome of the original's complete records, checked."""
    if not isinstance(frame, pd.DataFrame) or len(frame) != len(original):
        raise DataError("The masked data must have one row per original record.")
    absent = [c for c in (outcome, *features) if c not in frame.columns]
    if absent:
        raise DataError(f"The masked data lack column(s): {', '.join(map(repr, absent))}.")
    for column in features:
        if not kinds[column] and not _is_number(frame[column]):
            raise DataError(
                f"The masked {column!r} holds labels where the original holds numbers; "
                "release midpoints or means to train a classifier on it."
            )
    labels = frame[outcome]
    if not _is_number(labels):
        raise DataError(f"The masked outcome {outcome!r} is not 0/1.")
    values = labels.to_numpy(dtype=float, na_value=np.nan)
    if not np.isin(values[~np.isnan(values)], (0.0, 1.0)).all():
        raise DataError(
            f"The masked outcome {outcome!r} is no longer 0/1 (smoothed?), so no classifier "
            "can be trained on it."
        )
    Xm = _as_labels(frame.iloc[rows][list(features)].reset_index(drop=True), kinds)
    ym = pd.Series(values[rows])
    return Xm, ym


def _as_labels(frame: pd.DataFrame, kinds: dict[str, bool]) -> pd.DataFrame:
    """Categorical features as their labels (:func:`level_label`: the codes 2 and 2.0 are one
    category), once per data set rather than once per training."""
    out = frame.copy()
    for column, categorical in kinds.items():
        if categorical:
            codes, uniques = pd.factorize(out[column])
            labels = np.array([level_label(v) for v in uniques] + [None], dtype=object)
            out[column] = labels[codes]
    return out


def _pipeline(name: str, kinds: dict[str, bool], seed: int) -> Pipeline:
    """Preprocessing fitted on the training records, then the classifier ``name``."""
    numeric = [c for c, categorical in kinds.items() if not categorical]
    categorical = [c for c, is_categorical in kinds.items() if is_categorical]
    steps = []
    if numeric:
        steps.append(("numeric", StandardScaler(), numeric))
    if categorical:
        steps.append(("categorical", OneHotEncoder(handle_unknown="ignore"), categorical))
    prepare = ColumnTransformer(steps)
    if name == "logistic_regression":
        model: Any = LogisticRegression(C=1.0, max_iter=1000)
    else:
        model = RandomForestClassifier(
            n_estimators=FOREST_TREES, min_samples_leaf=FOREST_MIN_LEAF, random_state=seed, n_jobs=1
        )
    return Pipeline([("prepare", prepare), ("classify", model)])


def _scores(model: Pipeline, X: pd.DataFrame, y: np.ndarray) -> tuple[float, float]:
    """(AUC, accuracy at 0.5) of a fitted model on test records."""
    probability = model.predict_proba(X)[:, list(model.classes_).index(1.0)]
    return float(roc_auc_score(y, probability)), float(accuracy_score(y, probability >= 0.5))


def _mean(scores: list[tuple[float, float]]) -> tuple[float, float]:
    values = np.array(scores)
    mean = values.mean(axis=0)
    if not all(math.isfinite(v) for v in mean):
        raise DataError("The classifier scores could not be computed.")
    return float(mean[0]), float(mean[1])
