"""The per-session workspace: one place that turns (original data, recipe) into risk and
utility figures, fast.

A :class:`Workspace` holds one data set, never modified, and caches what a slider move does not
change: each masked column and its integer codes are keyed by the column's own masking steps, so
moving one slider re-masks and re-encodes that column alone, and the equivalence classes are
recombined from cached codes. The dashboard keeps one workspace per session (never shared
between users); the command line makes one per run.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from deid_core.errors import DataError, DeidError, ModelFitError, RecipeError
from deid_core.recipe import Recipe, Release
from deid_core.risk import (
    MATCH_RULES,
    EncodedColumn,
    LinkageResult,
    People,
    RiskSummary,
    SampleRisk,
    class_sizes_from_key,
    combine_codes,
    encode_column,
    encode_columns,
    linkage_risk,
    masking_tolerance,
    people_class_sizes,
    people_of,
    sample_risk,
    summarise_class_sizes,
)
from deid_core.risk.classes import check_missing_mode, compatible_class_sizes_from_codes
from deid_core.utility import (
    DEFAULT_REPLICATES,
    MAX_REPLICATES,
    FitResult,
    ModelSpec,
    UtilityResult,
    fit_model,
    replicate_utility,
)
from deid_core.utility.bootstrap import DEFAULT_RESAMPLES, BootstrapInterval, bootstrap_interval
from deid_core.utility.classifier import (
    DEFAULT_CLASSIFIER_REPLICATES,
    ClassifierAccuracy,
    classifier_accuracy,
)

Progress = Callable[[int, int], None]


def _pairs(references: Mapping[str, str] | tuple[tuple[str, str], ...]) -> tuple:
    return tuple(references.items()) if isinstance(references, Mapping) else tuple(references)


@dataclass(frozen=True)
class Assessment:
    """Risk and utility of one recipe on one data set."""

    n_records: int
    risk: RiskSummary
    linkage: LinkageResult
    utility: UtilityResult | None

    def to_dict(self) -> dict[str, Any]:
        risk = self.risk.to_dict()
        risk["identifiability_score"] = self.linkage.identifiability_score
        risk["anonymity_score"] = self.linkage.anonymity_score
        risk["perceived_score"] = self.linkage.perceived_score
        risk["matching_rule"] = self.linkage.rule
        out: dict[str, Any] = {"n_records": self.n_records, "risk": risk}
        if self.utility is not None:
            out["utility"] = self.utility.to_dict()
        return out


def _steps_key(recipe: Recipe, column: str) -> str:
    return json.dumps([s.to_dict() for s in recipe.steps_for(column)], sort_keys=True)


class LRUCache(OrderedDict):
    """A dict that keeps its ``size`` most recently stored or fetched entries: the caches of a
    workspace, and of a dashboard session (never shared between sessions)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def __setitem__(self, key: Hashable, value: Any) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)

    def __reduce__(self) -> tuple[Any, ...]:
        # Copies and pickles keep the size (OrderedDict's own would call LRUCache() without it).
        return (type(self), (self.size,), None, None, iter(self.items()))

    def copy(self) -> LRUCache:
        return copy.copy(self)

    def get_or_make(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The entry for ``key``, made by ``make()`` and stored when it is not there."""
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = make()
        self[key] = value
        return value


class Workspace:
    """One data set and the cached work of assessing recipes on it."""

    def __init__(self, original: pd.DataFrame, name: str = "data", cache_size: int = 256) -> None:
        if not isinstance(original, pd.DataFrame) or original.empty:
            raise DataError("The data set is empty: there are no records to assess.")
        self._original = original
        self.name = name
        self._columns = LRUCache(cache_size)
        self._codes = LRUCache(cache_size)
        self._fits = LRUCache(32)
        self._utilities = LRUCache(cache_size)
        self._factorized = LRUCache(cache_size)
        self.model_family: str = "logistic"
        self.model_offset: str | None = None
        self.model_trials: str | None = None
        self.model_factors: tuple[str, ...] = ()
        self.model_references: tuple[tuple[str, str], ...] = ()
        self.model_time: str | None = None
        self.model_ties: str = "breslow"
        self._levels = LRUCache(cache_size)
        self._step_work = LRUCache(2)

    @property
    def original(self) -> pd.DataFrame:
        """The data as loaded (a copy, so callers cannot change the workspace's own)."""
        return self._original.copy()

    @property
    def n_records(self) -> int:
        return len(self._original)

    # -------------------------------------------------------------- masking
    def _factors(self, column: str) -> tuple[np.ndarray, pd.Series]:
        """The original column as (codes, distinct values), computed once per data set."""

        def make() -> tuple[np.ndarray, pd.Series]:
            codes, uniques = pd.factorize(self._original[column], use_na_sentinel=False)
            return codes, pd.Series(uniques, name=column)

        return self._factorized.get_or_make(column, make)

    def _masked_levels(self, recipe: Recipe, column: str) -> pd.Series | None:
        """The column's distinct values after its steps, when every step is elementwise
        (masking each distinct value once then gives the whole column); else None."""
        steps = recipe.steps_for(column)
        if not steps or not all(step.elementwise for step in steps):
            return None

        def make() -> pd.Series | None:
            levels = self._factors(column)[1]
            try:
                for step in steps:
                    levels = step.apply(levels)
            except RecipeError:
                return None  # the full column gives the error with the right counts
            return levels

        return self._levels.get_or_make((column, _steps_key(recipe, column)), make)

    def masked_column(self, recipe: Recipe, column: str, replicate: int = 0) -> pd.Series:
        """The column after its own steps; cached on (column, steps, replicate)."""
        if column not in self._original.columns:
            raise DataError(f"The data have no column '{column}'.")

        def make() -> pd.Series:
            levels = self._masked_levels(recipe, column)
            if levels is None:
                return recipe.apply_to_column(
                    self._original, column, replicate, cache=self._step_work
                )
            masked = levels.take(self._factors(column)[0])
            masked.index = self._original.index
            return masked

        return self._columns.get_or_make((column, _steps_key(recipe, column), replicate), make)

    def masked_frame(self, recipe: Recipe, replicate: int = 0) -> pd.DataFrame:
        """The whole masked data set (a new frame; the original is untouched)."""
        recipe.check_columns(self._original.columns)
        masked = self._original.copy()
        for column in recipe.masked_columns:
            masked[column] = self.masked_column(recipe, column, replicate)
        return masked

    def released_frame(
        self, recipe: Recipe, keep_record_id: bool = False, key: bytes | None = None
    ) -> pd.DataFrame:
        """The masked file to send, without direct identifiers (nor the record id) unless
        they are replaced by pseudonyms (:meth:`release` also gives the crosswalk)."""
        return self.release(recipe, keep_record_id, key).frame

    def release(
        self, recipe: Recipe, keep_record_id: bool = False, key: bytes | None = None
    ) -> Release:
        """The masked file to send and the crosswalk of its pseudonyms
        (:meth:`Recipe.released`); ``key`` is the secret key of keyed-hash pseudonyms."""
        return recipe.released(self.masked_frame(recipe), keep_record_id, key)

    # -------------------------------------------------------------- risk
    def _encoded(self, recipe: Recipe, column: str) -> EncodedColumn:
        def make() -> EncodedColumn:
            levels = self._masked_levels(recipe, column)
            if levels is None:
                return encode_column(self.masked_column(recipe, column))
            # Codes of the masked distinct values, composed with the original codes.
            level_codes, distinct = pd.factorize(levels, use_na_sentinel=False)
            codes = level_codes.astype(np.int64)[self._factors(column)[0]]
            return EncodedColumn(codes, max(len(distinct), 1))

        return self._codes.get_or_make((column, _steps_key(recipe, column)), make)

    def people(self, recipe: Recipe) -> People | None:
        """Which person each row belongs to, from the recipe's record id, when some person
        has several rows (visits, events); None with one row per person or no record id."""
        column = recipe.roles.record_id
        if column is None or column not in self._original.columns:
            return None
        found = self._factorized.get_or_make(
            ("people", column), lambda: people_of(self._original[column])
        )
        return found if found.repeats else None

    def risk(self, recipe: Recipe, missing: str = "category", people: bool = True) -> RiskSummary:
        """Closed-data risk of the masked quasi-identifiers (see :mod:`deid_core.risk`);
        ``missing``: a missing value is a "category" of its own, or a "wildcard" that matches
        any value (then a record's class is every record compatible with it).

        When the record id repeats (several rows per person) and ``people`` is true, class
        sizes count distinct people and each person is judged by their riskiest row
        (:mod:`deid_core.risk.people`; missing values as categories only: with the wildcard
        rule, and with ``people=False``, rows are counted, one per record)."""
        missing = check_missing_mode(missing)
        key, cardinality = self.class_key(recipe)
        persons = self.people(recipe) if people and missing == "category" else None
        if persons is not None:
            sizes = people_class_sizes(key, persons)
            return summarise_class_sizes(
                sizes.per_person,
                sizes.n_classes,
                recipe.roles.quasi_identifiers,
                missing=missing,
                unit="people",
                n_rows=self.n_records,
                row_class_size=sizes.per_row,
            )
        sizes, n_classes = class_sizes_from_key(key, cardinality)
        if missing == "wildcard":
            sizes = self._compatible_sizes(recipe)
        return summarise_class_sizes(
            sizes, n_classes, recipe.roles.quasi_identifiers, missing=missing
        )

    def _compatible_sizes(self, recipe: Recipe, weights: np.ndarray | None = None) -> np.ndarray:
        """Per record, the number of records compatible with it on the masked
        quasi-identifiers (a missing value matching any value), or with ``weights`` the sum of
        their weights (:func:`compatible_class_sizes_from_codes`)."""
        qis = recipe.roles.quasi_identifiers
        observed = (
            np.column_stack([self.masked_column(recipe, c).notna().to_numpy() for c in qis])
            if qis
            else np.ones((self.n_records, 0), dtype=bool)
        )
        columns = [self._encoded(recipe, column) for column in qis]
        return compatible_class_sizes_from_codes(columns, observed, weights)

    def sample_risk(
        self,
        recipe: Recipe,
        sampling_fraction: float | None = None,
        population_size: int | None = None,
        missing: str = "category",
        bf_method: str = "exact",
    ) -> SampleRisk:
        """Open-data risk when the file is a sample of a population (see
        :mod:`deid_core.risk.population`): give the sampling fraction or the population size,
        or set a weight column in the roles (population class sizes are then the summed
        weights). ``missing`` as for :meth:`risk` (with "wildcard" a record's sample and
        population class are the records compatible with it); ``bf_method`` "exact" or
        "sdcmicro" (sdcMicro's default approximation of the Benedetti-Franconi risk)."""
        missing = check_missing_mode(missing)
        weights = recipe.weights(self._original)
        key = compatible = None
        if missing == "wildcard" and weights is not None:
            compatible = self._compatible_sizes(recipe, weights)
        elif weights is not None:
            key = self.class_key(recipe)[0]
        return sample_risk(
            self.risk(recipe, missing, people=False).class_size,
            sampling_fraction=sampling_fraction,
            population_size=population_size,
            weights=weights,
            class_key=key,
            compatible_weights=compatible,
            missing=missing,
            bf_method=bf_method,
        )

    def class_key(self, recipe: Recipe) -> tuple[np.ndarray, int]:
        """One integer per record, equal for records in the same equivalence class, and the
        key's range (from the cached codes of each masked quasi-identifier)."""
        recipe.check_columns(self._original.columns)
        qis = recipe.roles.quasi_identifiers
        missing = [
            c
            for c in qis
            if (c, _steps_key(recipe, c)) not in self._codes
            and self._masked_levels(recipe, c) is None
        ]
        if len(missing) > 1:  # a first assessment: encode the columns together (in threads)
            masked = pd.DataFrame({c: self.masked_column(recipe, c) for c in missing})
            for column, codes in zip(missing, encode_columns(masked, missing), strict=True):
                self._codes.get_or_make(
                    (column, _steps_key(recipe, column)), lambda codes=codes: codes
                )
        encoded = [self._encoded(recipe, column) for column in qis]
        return combine_codes(encoded, self.n_records)

    def linkage(
        self,
        recipe: Recipe,
        rule: str = "same_masking",
        source: pd.DataFrame | None = None,
        tolerance: float | dict[str, float] | None = None,
    ) -> LinkageResult:
        """Cologne's identifiability score against ``source`` (default: the original data).

        The ``tolerance`` rule without a tolerance uses :func:`masking_tolerance`."""
        if rule not in MATCH_RULES:
            raise DataError(f"Unknown matching rule '{rule}'.")
        source = self._original if source is None else source
        if rule == "tolerance" and tolerance is None:
            tolerance = masking_tolerance(recipe, self._original)
            if not tolerance:
                raise DataError(
                    "The tolerance rule needs a tolerance: no quasi-identifier is masked with "
                    "noise or rounding, so give one."
                )
        released = self.masked_frame(recipe)
        return linkage_risk(recipe, released, source, rule, tolerance=tolerance)

    # -------------------------------------------------------------- utility
    def set_model(
        self,
        family: str = "logistic",
        offset: str | None = None,
        trials: str | None = None,
        *,
        factors: tuple[str, ...] = (),
        references: Mapping[str, str] | tuple[tuple[str, str], ...] = (),
        time: str | None = None,
        ties: str = "breslow",
    ) -> None:
        """Choose the collaborator's model family (see ``SUPPORTED_FAMILIES``), for the
        Poisson model the person-time column whose log is the offset, for the binomial
        model of grouped counts the trials column, for the Cox model the follow-up time and
        the handling of ties; ``factors`` are numeric covariates fitted as categories and
        ``references`` the reference level of categorical covariates (:class:`ModelSpec`).
        Factors and references apply to the covariates the recipe's roles name (others are
        ignored, so a change of roles never breaks the model). Validated here."""
        spec = ModelSpec(
            "outcome",
            "exposure",
            covariates=tuple(dict.fromkeys([*factors, *dict(_pairs(references))])),
            family=family,
            offset=offset,
            trials=trials,
            factors=factors,
            references=references,
            time=time,
            ties=ties,
        )
        for role, column in (("offset", offset), ("trials", trials), ("time", time)):
            if column is not None and column not in self._original.columns:
                raise DataError(f"The data have no {role} column '{column}'.")
        self.model_family, self.model_offset, self.model_trials = family, offset, trials
        self.model_factors, self.model_references = spec.factors, spec.references
        self.model_time, self.model_ties = time, ties

    @property
    def model_key(self) -> tuple[Any, ...]:
        """Every model setting, as one hashable key (for caches outside the workspace)."""
        return (
            self.model_family,
            self.model_offset,
            self.model_trials,
            self.model_factors,
            self.model_references,
            self.model_time,
            self.model_ties,
        )

    def model_spec(self, recipe: Recipe) -> ModelSpec | None:
        """The model of the recipe's exposure and outcome (None without both). When the
        recipe smooths the outcome (or the trials), the masked outcome is fractional and is
        fitted by quasi-likelihood (:class:`ModelSpec`); the original data are always fitted
        with the strict checks (:meth:`original_fit`)."""
        roles = recipe.roles
        if not roles.has_model:
            return None
        smoothed = any(
            not step.elementwise and step.method == "kernel_smooth"
            for column in (roles.outcome, self.model_trials)
            if column is not None
            for step in recipe.steps_for(column)
        )
        covariates = tuple(roles.covariates)
        return ModelSpec(
            outcome=roles.outcome,
            exposure=roles.exposure,
            covariates=covariates,
            family=self.model_family,
            offset=self.model_offset,
            trials=self.model_trials,
            fractional_outcome=smoothed,
            factors=tuple(c for c in self.model_factors if c in covariates),
            references=tuple((c, r) for c, r in self.model_references if c in covariates),
            time=self.model_time,
            ties=self.model_ties,
        )

    def original_fit(self, spec: ModelSpec) -> FitResult:
        """The model on the original data, validated strictly (no fractional outcome)."""
        strict = replace(spec, fractional_outcome=False)
        return self._fits.get_or_make(("fit", strict), lambda: fit_model(self._original, strict))

    def utility(
        self,
        recipe: Recipe,
        n_replicates: int = DEFAULT_REPLICATES,
        progress: Progress | None = None,
    ) -> UtilityResult | None:
        """The collaborator's model before and after masking; None without exposure/outcome.

        Random recipes are summarised over ``n_replicates`` draws (1..500).
        """
        spec = self.model_spec(recipe)
        if spec is None:
            return None
        recipe.check_columns(self._original.columns)
        model_columns = list(spec.columns)
        relevant = tuple(_steps_key(recipe, c) for c in model_columns)
        random = any(step.random for c in model_columns for step in recipe.steps_for(c))
        key = (spec, relevant, n_replicates if random else 0)

        def compute() -> UtilityResult:
            try:
                original = self.original_fit(spec)
            except ModelFitError as error:
                return UtilityResult(spec, error=f"Original data: {error}")
            try:
                masked = fit_model(self.masked_frame(recipe), spec)
                if not random:
                    return UtilityResult(spec, original, masked)
                if not 1 <= n_replicates <= MAX_REPLICATES:
                    raise ModelFitError(f"Replicates must be between 1 and {MAX_REPLICATES}.")
                summary = replicate_utility(
                    self._original,
                    lambda r: self._masked_model_columns(recipe, spec, r),
                    spec,
                    original,
                    n_replicates=n_replicates,
                    progress=progress,
                )
            except DeidError as error:
                return UtilityResult(spec, original, error=f"Masked data: {error}")
            return UtilityResult(spec, original, masked, summary)

        return self._utilities.get_or_make(key, compute)

    def bootstrap(
        self,
        recipe: Recipe,
        n_resamples: int = DEFAULT_RESAMPLES,
        level: float = 0.95,
        seed: int | None = None,
        progress: Progress | None = None,
    ) -> BootstrapInterval | None:
        """Naive and percentile-bootstrap intervals of the masked estimate (see
        :mod:`deid_core.utility.bootstrap`): each resample of the original records is
        masked by the recipe's steps for the model columns and refitted. None without a
        model; a ModelFitError when the masked data or too many resamples cannot be fitted.
        Cached per (model, the model columns' steps, resamples, level, seed)."""
        spec = self.model_spec(recipe)
        if spec is None:
            return None
        recipe.check_columns(self._original.columns)
        masked_columns = [c for c in spec.columns if recipe.steps_for(c)]
        key = (
            "bootstrap",
            spec,
            tuple(_steps_key(recipe, c) for c in spec.columns),
            n_resamples,
            level,
            seed,
        )

        def mask(resample: pd.DataFrame, replicate: int) -> pd.DataFrame:
            out = resample.copy()
            for column in masked_columns:
                out[column] = recipe.apply_to_column(resample, column, replicate)
            return out

        def compute() -> BootstrapInterval:
            masked_fit = fit_model(self.masked_frame(recipe), spec)
            return bootstrap_interval(
                self._original,
                mask,
                spec,
                masked_fit,
                n_resamples=n_resamples,
                level=level,
                seed=seed,
                progress=progress,
            )

        return self._utilities.get_or_make(key, compute)

    def classifier(
        self,
        recipe: Recipe,
        n_replicates: int = DEFAULT_CLASSIFIER_REPLICATES,
        seed: int = 0,
        progress: Progress | None = None,
    ) -> ClassifierAccuracy | None:
        """The classifier lens of utility (:mod:`deid_core.utility.classifier`): classifiers
        predicting the model's 0/1 outcome from its exposure and covariates (factors as
        categories), trained on the original and on the masked data, evaluated on the
        original. A random recipe is drawn ``n_replicates`` times. None without a model;
        a DataError when the outcome is not 0/1 or the model is a Cox model. Cached per
        (model, the model columns' steps, replicates, seed)."""
        spec = self.model_spec(recipe)
        if spec is None:
            return None
        if spec.family == "cox":
            raise DataError(
                "The classifier lens needs a 0/1 outcome without follow-up time; a Cox model's "
                "events are censored, so classifying them would mislead."
            )
        recipe.check_columns(self._original.columns)
        columns = (spec.outcome, spec.exposure, *spec.covariates)
        random = any(step.random for c in columns for step in recipe.steps_for(c))
        replicates = n_replicates if random else 1
        key = (
            "classifier",
            spec,
            tuple(_steps_key(recipe, c) for c in columns),
            replicates,
            seed,
        )

        def masked(replicate: int) -> pd.DataFrame:
            return pd.DataFrame({c: self.masked_column(recipe, c, replicate) for c in columns})

        return self._utilities.get_or_make(
            key,
            lambda: classifier_accuracy(
                self._original,
                masked,
                spec.outcome,
                columns[1:],
                categorical=spec.factors,
                n_replicates=replicates,
                seed=seed,
                progress=progress,
            ),
        )

    def _masked_model_columns(
        self, recipe: Recipe, spec: ModelSpec, replicate: int
    ) -> pd.DataFrame:
        """Replicate ``replicate`` of every masked model column (not cached: used once)."""
        masked = [c for c in (spec.exposure, *spec.covariates) if recipe.steps_for(c)]
        if recipe.steps_for(spec.outcome):
            raise ModelFitError("Replicates with a masked outcome are not supported.")
        for role, column in (("offset", spec.offset), ("trials", spec.trials), ("time", spec.time)):
            if column is not None and recipe.steps_for(column):
                raise ModelFitError(
                    f"Replicates of a random mask cannot include a masked {role} column "
                    f"('{column}'); leave it unmasked."
                )
        frame = pd.DataFrame(index=self._original.index)
        for column in masked:
            values = recipe.apply_to_column(self._original, column, replicate)
            if not pd.api.types.is_numeric_dtype(values.dtype):
                raise ModelFitError(
                    f"Replicates need numeric model columns, but masked '{column}' is not "
                    "numeric: release midpoints or means instead of labels."
                )
            frame[column] = values
        return frame

    # -------------------------------------------------------------- both
    def assess(
        self,
        recipe: Recipe,
        rule: str = "same_masking",
        n_replicates: int = DEFAULT_REPLICATES,
        progress: Progress | None = None,
        tolerance: float | dict[str, float] | None = None,
        source: pd.DataFrame | None = None,
        missing: str = "category",
    ) -> Assessment:
        return Assessment(
            n_records=self.n_records,
            risk=self.risk(recipe, missing),
            linkage=self.linkage(recipe, rule, source=source, tolerance=tolerance),
            utility=self.utility(recipe, n_replicates, progress),
        )
