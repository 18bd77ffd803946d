"""The per-session workspace: one place that turns (original data, recipe) into risk and
utility figures, fast.

A :class:`Workspace` holds one data set, never modified, and caches what a slider move does not
change: each masked column and its integer codes are keyed by the column's own masking steps, so
moving one slider re-masks and re-encodes that column alone, and the equivalence classes are
recombined from cached codes. The dashboard keeps one workspace per session (never shared
between users); the command line makes one per run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from deid_core import bounds
from deid_core.cache import CacheNamespace, LRUCache, default_cache_bytes
from deid_core.errors import DataError, DeidError, ModelFitError, RecipeError
from deid_core.masking import RecordSuppression
from deid_core.recipe import Recipe, Release, ReleaseStage
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
    people_of,
    sample_risk,
    summarise_class_sizes,
)
from deid_core.risk.attribute import (
    AttributeDisclosure,
    attribute_disclosure_from_classes,
    attribute_disclosure_from_counts,
)
from deid_core.risk.classes import (
    check_missing_mode,
    class_ids_from_key,
    compatible_class_sizes_from_codes,
)
from deid_core.risk.interval import DEFAULT_INTERVAL_K
from deid_core.risk.judged import (
    PerturbedRisk,
    perturbed_risk,
    risk_basis,
    within_reach_counter,
)
from deid_core.risk.linkage import mask_source_like, recompute_like_release
from deid_core.risk.release import (
    JudgedRelease,
    OpenDataJudged,
    ReleasedKeys,
    SourceLinkage,
    choose_judged,
    class_risk,
    frame_codes,
    linkage_of_candidates,
    people_in_classes,
    shared_codes,
    source_linkage,
)
from deid_core.utility.counts import (
    DEFAULT_CLASSIFIER_REPLICATES,
    DEFAULT_REPLICATES,
    DEFAULT_RESAMPLES,
)
from deid_core.utility.information_loss import InformationLoss, information_loss
from deid_core.utility.spec import ModelSpec

# The model libraries (statsmodels, scipy.stats, scikit-learn: seconds to import) load where a
# model is fitted, not with the workspace: the command line refuses a recipe whose whole-data
# step passes its bound (e.g. local suppression's search work) within a second or two, before
# any of them is needed (see deid_core._lazy).
if TYPE_CHECKING:
    from deid_core.utility import FitResult, UtilityResult
    from deid_core.utility.bootstrap import BootstrapInterval
    from deid_core.utility.classifier import ClassifierAccuracy

Progress = Callable[[int, int], None]

#: Model rows (records x replicates) of one chunk of random replicates: progress, partial
#: results and cancellation come between chunks, so a chunk stays well under a second at any
#: size (one logistic replicate of 1,000,000 records takes about 50 ms).
REPLICATE_CHUNK_ROWS = 1 << 20


def _pairs(references: Mapping[str, str] | tuple[tuple[str, str], ...]) -> tuple:
    return tuple(references.items()) if isinstance(references, Mapping) else tuple(references)


@dataclass(frozen=True)
class Assessment:
    """Risk and utility of one recipe on one data set: ``judged`` holds every risk figure of
    the release and the one it is judged by (:class:`deid_core.risk.release.JudgedRelease`);
    ``risk`` is its compatible-class figures."""

    n_records: int
    judged: JudgedRelease
    linkage: LinkageResult
    utility: UtilityResult | None

    @property
    def risk(self) -> RiskSummary:
        return self.judged.classes

    @property
    def perturbed(self) -> PerturbedRisk | None:
        return self.judged.perturbed

    def to_dict(self) -> dict[str, Any]:
        risk = self.risk.to_dict()
        risk["identifiability_score"] = self.linkage.identifiability_score
        risk["anonymity_score"] = self.linkage.anonymity_score
        risk["perceived_score"] = self.linkage.perceived_score
        risk["matching_rule"] = self.linkage.rule
        out: dict[str, Any] = {"n_records": self.n_records, "risk": risk}
        out["judged_risk"] = self.judged.to_dict()
        if self.utility is not None:
            out["utility"] = self.utility.to_dict()
        return out


def _release_key(recipe: Recipe) -> str:
    """What the whole-data steps' result depends on: the steps, the quasi-identifiers, the
    column steps of every column they read and the record id (steps count people)."""
    qis = recipe.roles.quasi_identifiers
    reads = dict.fromkeys(c for step in recipe.data_steps for c in step.reads(qis))
    return json.dumps(
        {
            "data_steps": [step.to_dict() for step in recipe.data_steps],
            "quasi_identifiers": list(qis),
            "record_id": recipe.roles.record_id,
            "columns": {c: [s.to_dict() for s in recipe.steps_for(c)] for c in reads},
        },
        sort_keys=True,
        default=str,
    )


def _steps_key(recipe: Recipe, column: str) -> str:
    """What a masked column depends on: its own steps, and the whole-data steps when they
    change it."""
    own = [s.to_dict() for s in recipe.steps_for(column)]
    if column in recipe.data_columns:
        own.append({"release": _release_key(recipe)})
    return json.dumps(own, sort_keys=True)


def _compact(codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Integer codes in 4 bytes when they fit (half the memory of the cached codes)."""
    return codes.astype(np.int32, copy=False) if n_levels < 2**31 else codes


def _same_equality(values: pd.Series) -> bool:
    """Whether exact matching (:mod:`deid_core.risk.linkage`, which tells 1, 1.0 and True
    apart in a text column) groups ``values`` as the equivalence classes do (pandas
    equality, which does not)."""
    if values.dtype != object:
        return True
    tagged = values.map(lambda v: (type(v).__name__, v) if pd.notna(v) else v)
    n_tagged = len(pd.unique(tagged))
    return n_tagged == len(pd.factorize(values, use_na_sentinel=False)[1])


class Workspace:
    """One data set and the cached work of assessing recipes on it."""

    def __init__(
        self, original: pd.DataFrame, name: str = "data", cache_bytes: int | None = None
    ) -> None:
        if not isinstance(original, pd.DataFrame) or original.empty:
            raise DataError("The data set is empty: there are no records to assess.")
        self._original = original
        self.name = name
        self.cache = LRUCache(cache_bytes or default_cache_bytes(original))
        """Everything computed on these data: masked columns, codes, class sizes, fits, and
        the dashboard's per-page results."""
        self._step_work = CacheNamespace(self.cache, "step_work", limit=2)
        self.model_family: str = "logistic"
        self.model_offset: str | None = None
        self.model_trials: str | None = None
        self.model_factors: tuple[str, ...] = ()
        self.model_references: tuple[tuple[str, str], ...] = ()
        self.model_time: str | None = None
        self.model_event: str | None = None
        self.model_ties: str = "breslow"

    @property
    def original(self) -> pd.DataFrame:
        """The data as loaded. A shallow copy: pandas copies on write, so changing it never
        changes the workspace's own data, and reading it copies nothing."""
        return self._original.copy(deep=False)

    @property
    def n_records(self) -> int:
        return len(self._original)

    @property
    def columns(self) -> list[str]:
        """The data's column names (without copying the data)."""
        return list(self._original.columns)

    # -------------------------------------------------------------- masking
    def _factors(self, column: str) -> tuple[np.ndarray, pd.Series]:
        """The original column as (codes, distinct values), computed once per data set."""

        def make() -> tuple[np.ndarray, pd.Series]:
            codes, uniques = pd.factorize(self._original[column], use_na_sentinel=False)
            return _compact(codes, len(uniques)), pd.Series(uniques, name=column)

        return self.cache.get_or_make(("factors", column), make)

    def _masked_levels(self, recipe: Recipe, column: str) -> pd.Series | None:
        """The column's distinct values after its steps, when every step is elementwise
        (masking each distinct value once then gives the whole column); else None."""
        steps = recipe.steps_for(column)
        if not steps or not all(step.elementwise for step in steps):
            return None
        if column in recipe.data_columns:
            return None

        def make() -> pd.Series | None:
            levels = self._factors(column)[1]
            try:
                for step in steps:
                    levels = step.apply(levels)
            except RecipeError:
                return None  # the full column gives the error with the right counts
            return levels

        return self.cache.get_or_make(("levels", column, _steps_key(recipe, column)), make)

    def masked_column(self, recipe: Recipe, column: str, replicate: int = 0) -> pd.Series:
        """The column after its own steps and the whole-data steps that change it, one value
        per original record (a record the release leaves out keeps the value it had when it
        left; see :meth:`released_rows`); cached on (column, steps, replicate)."""
        if column not in self._original.columns:
            raise DataError(f"The data have no column '{column}'.")

        def make() -> pd.Series:
            if column in recipe.data_columns:
                stage = self.release_stage(recipe, replicate)
                if stage is not None and column in stage.values:
                    return stage.values[column]
            return self._column_stepped(recipe, column, replicate)

        key = ("column", column, _steps_key(recipe, column), replicate)
        return self.cache.get_or_make(key, make)

    def _column_stepped(self, recipe: Recipe, column: str, replicate: int = 0) -> pd.Series:
        """The column after its own column steps only."""
        levels = self._masked_levels(recipe, column)
        if levels is None:
            return recipe.apply_to_column(self._original, column, replicate, cache=self._step_work)
        masked = levels.take(self._factors(column)[0])
        masked.index = self._original.index
        return masked

    def release_stage(self, recipe: Recipe, replicate: int = 0) -> ReleaseStage | None:
        """What the recipe's whole-data steps did (None without any): the columns they changed,
        the records released, the suppressed cells and each step's facts (values suppressed per
        column, records removed...). Cached on the steps it depends on."""
        if not recipe.data_steps:
            return None
        recipe.check_columns(self._original.columns)

        def make() -> ReleaseStage:
            qis = recipe.roles.quasi_identifiers
            step = recipe.data_steps[0]
            if (
                len(recipe.data_steps) == 1
                and isinstance(step, RecordSuppression)
                and qis
                and not self._keys_missing(recipe)
            ):
                # Record suppression alone on keys without a missing value: their classes are
                # a partition, counted once from the cached codes (RecordSuppression's own
                # pass on the masked frame gives the same records; see outcome_of_classes).
                class_of, class_people = self._source_classes(recipe)
                outcome = step.outcome_of_classes(
                    class_of, class_people, qis, self._person_codes(recipe)
                )
                keep = np.asarray(outcome.keep, dtype=bool)
                return ReleaseStage({}, None if keep.all() else keep, {}, ((step, outcome.facts),))
            reads = dict.fromkeys(
                c for step in recipe.data_steps for c in (*step.reads(qis), *step.writes(qis))
            )
            record_id = recipe.roles.record_id
            if record_id is not None and any(s.needs_person for s in recipe.data_steps):
                reads[record_id] = None
            masked = pd.DataFrame(
                {c: self._column_stepped(recipe, c, replicate) for c in reads},
                index=self._original.index,
            )
            return recipe.release_stage(
                masked, replicate, persons=self._person_codes(recipe), source=self._original
            )

        return self.cache.get_or_make(("stage", _release_key(recipe), replicate), make, limit=16)

    def _person_codes(self, recipe: Recipe) -> np.ndarray | None:
        """The person of each original row (None: one per row), for the whole-data steps,
        which count people: a class of k visits of one patient is not k-anonymous."""
        everyone = self.people(recipe)
        return None if everyone is None else everyone.codes

    def _source_classes(self, recipe: Recipe) -> tuple[np.ndarray, np.ndarray]:
        """The equivalence classes of every original record on the quasi-identifiers after
        the recipe's column steps (its whole-data steps left out): (per record, its class
        ``0..C-1``; per class, the distinct people in it by the record id, or its records
        without a repeated id). Built from the cached per-column codes (equal codes for
        values pandas holds equal, a missing value one category), and cached on the column
        steps and the record id, so the recipes of a search that add record suppression to
        the same column steps share one count."""
        plain = recipe.with_data_steps(())

        def make() -> tuple[np.ndarray, np.ndarray]:
            class_of, n_classes = class_ids_from_key(*self.class_key(plain))
            everyone = self.people(plain)
            people = None if everyone is None else everyone.codes
            return _compact(class_of, n_classes), people_in_classes(class_of, people, n_classes)

        key = ("source_classes", self._risk_key(plain), recipe.roles.record_id)
        return self.cache.get_or_make(key, make, limit=4)

    def _keys_missing(self, recipe: Recipe) -> bool:
        """Whether a quasi-identifier after the recipe's column steps has a missing value
        (cached per column and steps)."""
        plain = recipe.with_data_steps(())

        def has_missing(column: str) -> bool:
            def make() -> bool:
                # Elementwise steps: the masked distinct values, each held by some record.
                levels = self._masked_levels(plain, column)
                values = self.masked_column(plain, column) if levels is None else levels
                return bool(values.isna().any())

            return self.cache.get_or_make(("has_missing", column, _steps_key(plain, column)), make)

        return any(has_missing(c) for c in recipe.roles.quasi_identifiers)

    def released_rows(self, recipe: Recipe) -> np.ndarray | None:
        """Positions of the records the recipe releases (None: all of them)."""
        stage = self.release_stage(recipe)
        return None if stage is None else stage.released_rows

    def masked_frame(self, recipe: Recipe, replicate: int = 0) -> pd.DataFrame:
        """The whole masked data set, the released records only (a new frame; the original is
        untouched)."""
        recipe.check_columns(self._original.columns)
        masked = self._original.copy(deep=False)
        for column in recipe.masked_columns:
            masked[column] = self.masked_column(recipe, column, replicate)
        stage = self.release_stage(recipe, replicate)
        if stage is not None and stage.kept is not None:
            masked = masked.iloc[stage.released_rows]
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
                encoded = encode_column(self.masked_column(recipe, column))
                return EncodedColumn(_compact(encoded.codes, encoded.n_levels), encoded.n_levels)
            # Codes of the masked distinct values, composed with the original codes.
            level_codes, distinct = pd.factorize(levels, use_na_sentinel=False)
            n_levels = max(len(distinct), 1)
            codes = _compact(level_codes, n_levels)[self._factors(column)[0]]
            return EncodedColumn(codes, n_levels)

        return self.cache.get_or_make(("codes", column, _steps_key(recipe, column)), make)

    def _risk_key(self, recipe: Recipe) -> tuple[tuple[str, str], ...]:
        """What the equivalence classes depend on: each quasi-identifier and its steps, and
        the whole-data steps (they choose the records released and the suppressed cells)."""
        key = tuple((c, _steps_key(recipe, c)) for c in recipe.roles.quasi_identifiers)
        return (*key, ("release", _release_key(recipe))) if recipe.data_steps else key

    def people(self, recipe: Recipe, rows: np.ndarray | None = None) -> People | None:
        """Which person each row belongs to, from the recipe's record id, when some person
        has several rows (visits, events); None with one row per person or no record id.
        ``rows``: only these rows (the released ones, when a step leaves records out)."""
        column = recipe.roles.record_id
        if column is None or column not in self._original.columns:
            return None
        found = self.cache.get_or_make(
            ("people", column), lambda: people_of(self._original[column])
        )
        if rows is not None and found.repeats:
            codes, uniques = pd.factorize(found.codes[rows])
            found = People(codes.astype(np.int64), len(uniques))
        return found if found.repeats else None

    def release_missing_rule(self, recipe: Recipe, missing: str = "category") -> str:
        """The missing-value rule the release is read under: ``missing``, except that a release
        with suppressed values is read under the wildcard rule. In the exported file a
        suppressed cell is blank, as is a value missing before, and an intruder cannot tell
        them apart: both match any value (and local suppression reaches its k that way)."""
        missing = check_missing_mode(missing)
        stage = self.release_stage(recipe)
        if stage is not None and any(bool(np.any(w)) for w in stage.wildcards.values()):
            return "wildcard"
        return missing

    def _released_qis(self, recipe: Recipe) -> pd.DataFrame:
        """The masked quasi-identifiers of the released rows, as the exported file holds them
        (suppressed cells missing)."""
        qis = recipe.roles.quasi_identifiers
        frame = pd.DataFrame(
            {c: self.masked_column(recipe, c) for c in qis}, index=self._original.index
        )
        rows = self.released_rows(recipe)
        return frame if rows is None else frame.iloc[rows]

    def released_keys(self, recipe: Recipe, missing: str = "category") -> ReleasedKeys:
        """The released file's quasi-identifier codes, matchable values and people, read under
        :meth:`release_missing_rule` (see :class:`deid_core.risk.release.ReleasedKeys`): what
        every class figure of the release is counted on. Cached on the release."""
        recipe.check_columns(self._original.columns)
        rule = self.release_missing_rule(recipe, missing)

        def make() -> ReleasedKeys:
            qis = recipe.roles.quasi_identifiers
            codes, observed = frame_codes(self._released_qis(recipe), qis, rule)
            people = self.people(recipe, self.released_rows(recipe))
            return ReleasedKeys(tuple(qis), codes, observed, people, rule)

        key = ("released_keys", self._risk_key(recipe), rule, recipe.roles.record_id)
        return self.cache.get_or_make(key, make, limit=8)

    def risk(
        self, recipe: Recipe, missing: str = "category", people: bool = True, *, keep: bool = True
    ) -> RiskSummary:
        """Closed-data risk of the released quasi-identifiers (see :mod:`deid_core.risk`);
        ``missing``: a missing value is a "category" of its own, or a "wildcard" that matches
        any value (then a record's class is every record compatible with it); a release with
        suppressed values is read under the wildcard rule (:meth:`release_missing_rule`).
        Cached on the quasi-identifiers' steps, so the class sizes of a recipe are counted once.

        When the record id repeats (several rows per person) and ``people`` is true, class
        sizes count the distinct people among the compatible rows and each person is judged by
        their riskiest row (:func:`deid_core.risk.release.class_risk`), under either rule and
        after any whole-data step; with ``people=False`` rows are counted.

        ``keep=False``: a summary not yet cached is computed and not kept (a search judges
        hundreds of recipes once each; at a million records each summary holds 8 MB of class
        sizes, and keeping them would push the per-column codes every recipe reuses out of
        the cache)."""
        missing = self.release_missing_rule(recipe, check_missing_mode(missing))

        def make() -> RiskSummary:
            rows = self.released_rows(recipe)
            if people and self.people(recipe, rows) is not None:
                return class_risk(self.released_keys(recipe, missing))
            partition = not self._counts_compatible(recipe, missing)
            sizes, n_classes = self._partition_sizes(recipe, rows)
            if not partition:
                sizes = self._compatible_sizes(recipe, missing=missing)
            return summarise_class_sizes(
                sizes,
                n_classes,
                recipe.roles.quasi_identifiers,
                missing=missing,
                partition=partition,
            )

        recipe.check_columns(self._original.columns)
        people_key = recipe.roles.record_id if people else None
        key = ("risk", self._risk_key(recipe), missing, people_key)
        if not keep:
            found = self.cache.peek(key)
            return make() if found is None else found
        return self.cache.get_or_make(key, make)

    def _partition_sizes(self, recipe: Recipe, rows: np.ndarray | None) -> tuple[np.ndarray, int]:
        """(per released record, the size of its equivalence class; the number of classes).

        When every record is released and each quasi-identifier's codes are a function of its
        original value (no steps, or deterministic value-by-value steps: generalisation), the
        classes are unions of the :meth:`_distinct_combinations` of the original values, so
        they are counted on one record per combination, weighted by the combination's records:
        the same partition as the combined key of every record, in time that grows with the
        combinations rather than the records (a search judges hundreds of recipes of a file
        with a million records and some tens of thousands of combinations)."""
        qis = tuple(recipe.roles.quasi_identifiers)
        distinct = None
        if rows is None and all(self._codes_follow_values(recipe, c) for c in qis):
            distinct = self._distinct_combinations(qis)
        if distinct is None and not set(qis) & set(recipe.data_columns):
            # Values as the column steps made them: the classes of the source (cached, so the
            # same recipe with record suppression added reuses them), restricted to the
            # released records.
            class_of = self._source_classes(recipe)[0]
            if rows is not None:
                class_of = class_of[rows]
            counts = np.bincount(class_of)
            return counts[class_of].astype(np.int64), int(np.count_nonzero(counts))
        if distinct is None:
            key, cardinality = self.class_key(recipe)
            return class_sizes_from_key(key if rows is None else key[rows], cardinality)
        codes, first, counts = distinct
        columns = []
        for column in qis:
            encoded = self._encoded(recipe, column)
            columns.append(EncodedColumn(encoded.codes[first], encoded.n_levels))
        key, _ = combine_codes(columns, first.size)
        group, uniques = pd.factorize(key)
        per_class = np.bincount(group, weights=counts).astype(np.int64)
        return per_class[group][codes], len(uniques)

    def _codes_follow_values(self, recipe: Recipe, column: str) -> bool:
        """Whether the column's cached codes under the recipe are equal for records with equal
        original values (checked on the data once per column and steps)."""
        if column in recipe.data_columns:
            return False

        def make() -> bool:
            original = self._factors(column)[0]
            codes = self._encoded(recipe, column).codes
            first = np.full(int(original.max()) + 1 if original.size else 0, -1, dtype=np.int64)
            first[original] = codes
            return bool(np.array_equal(first[original], codes))

        return self.cache.get_or_make(("follows", column, _steps_key(recipe, column)), make)

    def _distinct_combinations(
        self, qis: tuple[str, ...]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The records grouped by their original values of ``qis``: (per record, its
        combination; a record of each combination; the records of each), or None when the
        combinations are more than half the records (counting on them saves little)."""

        def make() -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
            factors = [self._factors(c) for c in qis]
            columns = [EncodedColumn(codes, max(len(values), 1)) for codes, values in factors]
            key, _ = combine_codes(columns, self.n_records)
            codes, uniques = pd.factorize(key)
            if len(uniques) > self.n_records // 2:
                return None
            _, first = np.unique(codes, return_index=True)
            counts = np.bincount(codes, minlength=len(uniques)).astype(float)
            return _compact(codes, len(uniques)), first, counts

        return self.cache.get_or_make(("distinct", qis), make)

    def source_linkage(
        self, recipe: Recipe, missing: str = "category", source: pd.DataFrame | None = None
    ) -> SourceLinkage:
        """The risk of linking the release to ``source`` (default: the original data) by an
        intruder who holds it and coarsens it as the recipe's column steps do (see
        :func:`deid_core.risk.release.source_linkage`), in people when the record id repeats,
        under :meth:`release_missing_rule`."""
        recipe.check_columns(self._original.columns)
        rule = self.release_missing_rule(recipe, missing)
        qis = list(recipe.roles.quasi_identifiers)
        record_id = recipe.roles.record_id

        def make() -> SourceLinkage:
            if source is None and self._links_by_classes(recipe, rule):
                # Every value matchable and the release's rows the source's own, coarsened
                # alike: a released row's compatible source people are those of its class.
                class_of, class_people = self._source_classes(recipe)
                rows = self.released_rows(recipe)
                candidates = class_people[class_of if rows is None else class_of[rows]]
                everyone = self.people(recipe)
                n_source = self.n_records if everyone is None else everyone.n_people
                people = self.people(recipe, rows)
                return linkage_of_candidates(qis, candidates, people, rule, n_source)
            if source is None:
                pool = recompute_like_release(
                    recipe,
                    pd.DataFrame(
                        {c: self._column_stepped(recipe, c) for c in qis},
                        index=self._original.index,
                    ),
                    self._original,
                )
                ids = self._original[record_id] if record_id in self._original.columns else None
            else:
                absent = [c for c in qis if c not in source.columns]
                if absent:
                    raise DataError(
                        f"The source lacks quasi-identifier column(s): {', '.join(absent)}."
                    )
                pool = mask_source_like(recipe, source, qis)
                ids = source[record_id] if record_id in source.columns else None
            pool_people = np.arange(len(pool)) if ids is None else people_of(ids).codes
            (rc, ro), (sc, so) = shared_codes(self._released_qis(recipe), pool, qis, rule)
            people = self.people(recipe, self.released_rows(recipe))
            keys = ReleasedKeys(tuple(qis), rc, ro, people, rule)
            return source_linkage(keys, sc, so, pool_people)

        if source is not None:
            return make()
        return self.cache.get_or_make(
            ("source_linkage", self._risk_key(recipe), rule, record_id), make, limit=8
        )

    def _links_by_classes(self, recipe: Recipe, rule: str) -> bool:
        """Whether linking the release to the original data is counting the source people of
        each released row's class (:meth:`_source_classes`): no whole-data step changes a
        quasi-identifier, suppresses a cell or is recomputed by the intruder (the released
        values are the source's, coarsened as the intruder coarsens it), and every value is
        matchable (the category rule, or no missing value)."""
        qis = set(recipe.roles.quasi_identifiers)
        if not qis or qis & set(recipe.data_columns):
            return False
        if any(step.recomputable for step in recipe.data_steps):
            return False
        stage = self.release_stage(recipe)
        if stage is not None and any(bool(np.any(w)) for w in stage.wildcards.values()):
            return False
        return rule == "category" or not self._keys_missing(recipe)

    def _counts_compatible(self, recipe: Recipe, missing: str) -> bool:
        """Whether class sizes are counts of compatible records (a missing value under the
        wildcard rule, or a suppressed value under either rule, matches any value) rather than
        the sizes of a partition."""
        stage = self.release_stage(recipe)
        return missing == "wildcard" or (stage is not None and bool(stage.wildcards))

    def _compatible_sizes(
        self, recipe: Recipe, weights: np.ndarray | None = None, missing: str = "wildcard"
    ) -> np.ndarray:
        """Per released record, the number of released records compatible with it on the
        masked quasi-identifiers, or with ``weights`` (one per released record) the sum of
        their weights (:func:`compatible_class_sizes_from_codes`). A suppressed value matches
        any value; a value missing before suppression does too under the ``"wildcard"`` rule,
        and is a value of its own under ``"category"``."""
        qis = recipe.roles.quasi_identifiers
        stage = self.release_stage(recipe)
        wildcards = stage.wildcards if stage is not None else {}
        rows = stage.released_rows if stage is not None else None
        observed = np.ones((self.n_records, len(qis)), dtype=bool)
        for j, column in enumerate(qis):
            if missing == "wildcard":
                observed[:, j] = self.masked_column(recipe, column).notna().to_numpy()
            if column in wildcards:
                observed[:, j] &= ~wildcards[column]
        columns = [self._encoded(recipe, column) for column in qis]
        if rows is not None:
            observed = observed[rows]
            columns = [EncodedColumn(c.codes[rows], c.n_levels) for c in columns]
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
        rows = self.released_rows(recipe)
        if weights is not None and rows is not None:
            weights = weights[rows]
        compatible = self._counts_compatible(recipe, missing)
        key = compatible_weights = None
        if compatible and weights is not None:
            compatible_weights = self._compatible_sizes(recipe, weights, missing)
        elif weights is not None:
            key = self.class_key(recipe)[0]
            key = key if rows is None else key[rows]
        result = sample_risk(
            self.risk(recipe, missing, people=False).class_size,
            sampling_fraction=sampling_fraction,
            population_size=population_size,
            weights=weights,
            class_key=key,
            compatible_weights=compatible_weights,
            missing="wildcard" if compatible else "category",
            bf_method=bf_method,
        )
        return replace(result, missing=missing)

    def release_risk(
        self, recipe: Recipe, missing: str = "category", bf_method: str = "exact"
    ) -> SampleRisk | None:
        """The open-data risk of a subsampled release (None when the recipe does not
        subsample): the released records are a sample, at the fraction the subsampling
        achieved, of the original records, so an intruder cannot know who is in it (see
        :mod:`deid_core.masking.subsampling`). :meth:`sample_risk` at that fraction; when a
        person has several rows (and no weights are set), in people: the class sizes of
        :meth:`risk` and the fraction of the people released."""
        stage = self.release_stage(recipe)
        fraction = stage.sampling_fraction if stage is not None else None
        if fraction is None:
            return None
        everyone = self.people(recipe)
        if everyone is not None and recipe.weights(self._original) is None:
            summary = self.risk(recipe, missing)
            if summary.unit == "people":
                result = sample_risk(
                    summary.class_size,
                    sampling_fraction=summary.n_records / everyone.n_people,
                    missing="wildcard",  # sizes per person: no partition of the records
                    bf_method=bf_method,
                )
                return replace(result, missing=summary.missing)
        return self.sample_risk(recipe, fraction, missing=missing, bf_method=bf_method)

    def class_key(self, recipe: Recipe) -> tuple[np.ndarray, int]:
        """One integer per original record, equal for records in the same equivalence class,
        and the key's range (from the cached codes of each masked quasi-identifier; a recipe
        that leaves records out releases only :meth:`released_rows` of them)."""
        recipe.check_columns(self._original.columns)
        qis = recipe.roles.quasi_identifiers
        missing = [
            c
            for c in qis
            if ("codes", c, _steps_key(recipe, c)) not in self.cache
            and self._masked_levels(recipe, c) is None
        ]
        if len(missing) > 1:  # a first assessment: encode the columns together (in threads)
            masked = pd.DataFrame({c: self.masked_column(recipe, c) for c in missing})
            for column, encoded in zip(missing, encode_columns(masked, missing), strict=True):
                compact = EncodedColumn(_compact(encoded.codes, encoded.n_levels), encoded.n_levels)
                self.cache.put(("codes", column, _steps_key(recipe, column)), compact)
        encoded = [self._encoded(recipe, column) for column in qis]
        return combine_codes(encoded, self.n_records)

    def perturbed_risk(
        self,
        recipe: Recipe,
        source: pd.DataFrame | None = None,
        k: float = DEFAULT_INTERVAL_K,
        missing: str = "category",
    ) -> PerturbedRisk:
        """The record-linkage risk of a recipe that perturbs a quasi-identifier (see
        :func:`deid_core.risk.judged.perturbed_risk`), against ``source`` (default: the
        original data), a blank released value matching any value under
        :meth:`release_missing_rule`'s wildcard rule. Cached on the quasi-identifiers' steps
        when the source is the original data."""
        recipe.check_columns(self._original.columns)

        blanks_match_any = self.release_missing_rule(recipe, missing) == "wildcard"

        def make() -> PerturbedRisk:
            rows = self.released_rows(recipe)
            if rows is None or source is not None:
                return perturbed_risk(
                    recipe,
                    self._original,
                    self.masked_frame(recipe),
                    source=source,
                    k=k,
                    blanks_match_any=blanks_match_any,
                )
            # The release leaves records out (a subsample): the intruder holds every record.
            return perturbed_risk(
                recipe,
                self._original.iloc[rows],
                self.masked_frame(recipe),
                source=self._original,
                k=k,
                blanks_match_any=blanks_match_any,
                truth=rows,
            )

        if source is not None:
            return make()
        roles = recipe.roles
        key = ("perturbed", self._risk_key(recipe), roles.record_id, float(k), blanks_match_any)
        return self.cache.get_or_make(key, make, limit=16)

    def judged_risk(
        self,
        recipe: Recipe,
        missing: str = "category",
        source: pd.DataFrame | None = None,
        *,
        public: bool = True,
        holds_source: bool = True,
        bf_method: str = "exact",
        keep: bool = True,
    ) -> JudgedRelease:
        """Every risk figure of the release and the one it is judged by
        (:class:`deid_core.risk.release.JudgedRelease`):

        - a quasi-identifier perturbed (a column step, or microaggregation of several columns):
          record linkage within the perturbation's reach against ``source`` (default: the
          original data), :func:`deid_core.risk.judged.perturbed_risk`;
        - otherwise the compatible classes of the release (:meth:`risk`), or for a subsample
          the open-data risk at the fraction released (:meth:`release_risk`); and when the
          recipe has whole-data steps and an intruder may hold the source (``holds_source``),
          the exact linkage to the source (:meth:`source_linkage`): the release is judged by
          whichever is higher in its context (the maximum for a ``public`` release, the strict
          average risk otherwise).

        ``keep=False``: the class summary of a recipe without whole-data steps is not kept in
        the cache (:meth:`risk`)."""
        classes = self.risk(recipe, missing, keep=keep or bool(recipe.data_steps))
        basis = risk_basis(recipe)
        if not basis.class_based:
            perturbed = self.perturbed_risk(recipe, source, missing=missing)
            reason = (
                f"{', '.join(basis.perturbed)} perturbed: an intruder matches within the "
                "perturbation's reach, not exactly (record linkage, counted in records)."
            )
            return JudgedRelease(classes, "record_linkage", reason, perturbed=perturbed)
        candidates: list[tuple[str, Any]] = []
        open_data = None
        sample = self.release_risk(recipe, missing, bf_method)
        if sample is not None:
            open_data = OpenDataJudged(sample, classes.unit)
            candidates.append(("open_data", open_data))
        else:
            candidates.append(("classes", classes))
        link = None
        if holds_source and (recipe.data_steps or source is not None):
            link = self.source_linkage(recipe, missing, source)
            candidates.append(("source_linkage", link))
        chosen = choose_judged(candidates, public)
        reasons = {
            "classes": "Every quasi-identifier is released as it is or generalised: an intruder "
            "matches the released values exactly (a suppressed value matches any value).",
            "open_data": "A subsample: an intruder cannot know who is in it, so it is judged by "
            "the open-data risk at the fraction released "
            f"({sample.sampling_fraction:.3f} of the {classes.unit})."
            if sample is not None
            else "",
            "source_linkage": "An intruder who holds the source file links each released row to "
            "the source people compatible with it; here that is higher than the risk within "
            "the release alone (a row left unsuppressed, or released from a sample, can be "
            "unique in the source).",
        }
        reason = reasons[chosen]
        if link is not None and chosen != "source_linkage":
            reason += " Linkage to the source, by an intruder who holds it, is no higher."
        elif link is None and recipe.data_steps:
            reason += " The release context says an intruder cannot hold the source file."
        return JudgedRelease(classes, chosen, reason, source=link, open_data=open_data)

    def attribute_disclosure(
        self, recipe: Recipe, column: str, missing: str = "category"
    ) -> AttributeDisclosure:
        """Distinct and entropy l-diversity and t-closeness of the released ``column`` within
        each record's class (see :mod:`deid_core.risk.attribute`): the equivalence class
        (``missing`` as for :meth:`risk`; with "wildcard" and missing values, every compatible
        record) when the release is judged by its classes, else the records within the
        perturbation's reach of the person's true values (:func:`risk_basis`)."""
        missing = check_missing_mode(missing)
        recipe.check_columns(self._original.columns)
        if column not in self._original.columns:
            raise DataError(f"The data have no column '{column}'.")
        if column in recipe.roles.quasi_identifiers:
            raise DataError(
                f"'{column}' is a quasi-identifier: its value defines the class, so its "
                "attribute disclosure is not measured."
            )
        values = self.masked_column(recipe, column) if recipe.steps_for(column) else None
        values = self._original[column] if values is None else values
        rows = self.released_rows(recipe)  # a recipe that leaves records out: those released
        if rows is not None:
            values = values.iloc[rows]
        if not risk_basis(recipe).class_based:
            people = self._original if rows is None else self._original.iloc[rows]
            count = within_reach_counter(
                recipe,
                people,
                self.masked_frame(recipe),
                blanks_match_any=self.release_missing_rule(recipe, missing) == "wildcard",
            )
            return attribute_disclosure_from_counts(count, values, column, "within_reach")
        qis = recipe.roles.quasi_identifiers
        has_missing = any(self.masked_column(recipe, c).isna().any() for c in qis)
        stage = self.release_stage(recipe)
        if (missing == "wildcard" and has_missing) or (stage is not None and stage.wildcards):
            # A suppressed value (and, under the wildcard rule, a missing one) matches any.

            def count(selected: np.ndarray) -> np.ndarray:
                return self._compatible_sizes(recipe, selected.astype(float), missing)

            return attribute_disclosure_from_counts(count, values, column, "wildcard")
        key = self.class_key(recipe)[0]
        return attribute_disclosure_from_classes(key if rows is None else key[rows], values, column)

    def linkage(
        self,
        recipe: Recipe,
        rule: str = "same_masking",
        source: pd.DataFrame | None = None,
        tolerance: float | dict[str, float] | None = None,
    ) -> LinkageResult:
        """Cologne's identifiability score against ``source`` (default: the original data).

        The ``tolerance`` rule without a tolerance uses :func:`masking_tolerance`. Against the
        original data with the ``same_masking`` rule and deterministic masking, each released
        record matches exactly the records of its own equivalence class, its own among them,
        so ``i = f`` and the score ``sum_r 1/f_r / N`` is the average risk (number of classes
        / N): it is taken from :meth:`risk` (:meth:`_linkage_is_average_risk` says when)."""
        if rule not in MATCH_RULES:
            raise DataError(f"Unknown matching rule '{rule}'.")
        if (
            rule == "same_masking"
            and source is None
            and tolerance is None
            and self._linkage_is_average_risk(recipe)
        ):
            summary = self.risk(recipe)
            return LinkageResult(
                rule=rule,
                n_released=self.n_records,
                n_source=self.n_records,
                identifiability_score=summary.average_risk,
                perceived_score=summary.average_risk,
                match_count=summary.class_size,
                correct=np.ones(self.n_records, dtype=bool),
            )
        source = self._original if source is None else source
        if rule == "tolerance" and tolerance is None:
            tolerance = masking_tolerance(recipe, self._original)
            if not tolerance:
                raise DataError(
                    "The tolerance rule needs a tolerance: no quasi-identifier is masked with "
                    "noise or rounding, so give one."
                )
        released = self.masked_frame(recipe)
        rows = self.released_rows(recipe)
        truth = None
        if rows is not None and source is self._original:
            # each released record is its original row (also with several rows per person,
            # where the record id cannot say which of a person's rows a released one is)
            truth = rows
        return linkage_risk(recipe, released, source, rule, tolerance=tolerance, truth=truth)

    def _linkage_is_average_risk(self, recipe: Recipe) -> bool:
        """Whether same-masking linkage against the original data is the average risk: every
        quasi-identifier is masked deterministically by column steps (the intruder's copy of
        the source then equals the release record for record), the truth is row order or a unique,
        unmasked record id, and exact matching groups each quasi-identifier as the classes do
        (:func:`_same_equality`: only text columns mixing numbers and booleans differ)."""
        roles = recipe.roles
        recipe.check_columns(self._original.columns)
        if recipe.data_steps:
            return False  # records left out or cells suppressed: the full matching counts them
        if any(step.random for c in roles.quasi_identifiers for step in recipe.steps_for(c)):
            return False
        record_id = roles.record_id
        if record_id is not None and (
            record_id not in self._original.columns
            or recipe.steps_for(record_id)
            or not self.cache.get_or_make(
                ("unique_ids", record_id), lambda: not self._original[record_id].duplicated().any()
            )
        ):
            return False  # the full computation says what is wrong
        for column in roles.quasi_identifiers:
            for masked in (False, True):

                def check(column: str = column, masked: bool = masked) -> bool:
                    levels = self._masked_levels(recipe, column) if masked else None
                    if levels is not None:  # the released values are these levels
                        return _same_equality(levels)
                    values = self.masked_column(recipe, column) if masked else None
                    return _same_equality(self._original[column] if values is None else values)

                steps = _steps_key(recipe, column) if masked else "[]"
                if not self.cache.get_or_make(("same_equality", column, steps), check):
                    return False
        return True

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
        event: str | None = None,
    ) -> None:
        """Choose the collaborator's model family (see ``SUPPORTED_FAMILIES``), for the
        Poisson model the person-time column whose log is the offset, for the binomial
        model of grouped counts the trials column, for the Cox model the follow-up time and
        the handling of ties, for the binary families the outcome's value that is the
        ``event`` (others: no event); ``factors`` are numeric covariates fitted as categories and
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
            event=event,
        )
        for role, column in (("offset", offset), ("trials", trials), ("time", time)):
            if column is not None and column not in self._original.columns:
                raise DataError(f"The data have no {role} column '{column}'.")
        self.model_family, self.model_offset, self.model_trials = family, offset, trials
        self.model_factors, self.model_references = spec.factors, spec.references
        self.model_time, self.model_ties = time, ties
        self.model_event = event

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
            self.model_event,
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
            event=self.model_event,
        )

    def original_fit(self, spec: ModelSpec) -> FitResult:
        """The model on the original data, validated strictly (no fractional outcome)."""
        from deid_core.utility.models import fit_model

        strict = replace(spec, fractional_outcome=False)
        return self.cache.get_or_make(("fit", strict), lambda: fit_model(self._original, strict))

    def utility_key(self, recipe: Recipe, n_replicates: int) -> tuple[Any, ...] | None:
        """What the utility of ``recipe`` depends on (None without a model)."""
        spec = self.model_spec(recipe)
        if spec is None:
            return None
        model_columns = list(spec.columns)
        relevant = tuple(_steps_key(recipe, c) for c in model_columns)
        if recipe.removes_records:
            relevant += (_release_key(recipe),)
        # Replicates redraw the model columns' own random steps; when whole-data steps change
        # the model's columns or records, the model is fitted to the released draw instead.
        whole = recipe.removes_records or bool(set(recipe.data_columns) & set(model_columns))
        random = not whole and any(
            step.random for c in model_columns for step in recipe.steps_for(c)
        )
        return ("utility", spec, relevant, n_replicates if random else 0)

    def utility_is_cached(self, recipe: Recipe, n_replicates: int = DEFAULT_REPLICATES) -> bool:
        """Whether :meth:`utility` would answer at once (no model, or already computed)."""
        key = self.utility_key(recipe, n_replicates)
        return key is None or key in self.cache

    def replicate_chunk_size(self) -> int:
        """Replicates drawn and fitted together (:data:`REPLICATE_CHUNK_ROWS`)."""
        from deid_core.utility.replicates import DEFAULT_CHUNK_SIZE

        return max(1, min(DEFAULT_CHUNK_SIZE, REPLICATE_CHUNK_ROWS // self.n_records))

    def utility(
        self,
        recipe: Recipe,
        n_replicates: int = DEFAULT_REPLICATES,
        progress: Progress | None = None,
        partial: Callable[[UtilityResult], None] | None = None,
    ) -> UtilityResult | None:
        """The collaborator's model before and after masking; None without exposure/outcome.

        Random recipes are summarised over ``n_replicates`` draws (1..500), fitted
        :meth:`replicate_chunk_size` at a time; after each chunk ``progress(done, total)`` is
        called and ``partial`` receives the result over the replicates fitted so far (either
        may raise :class:`~deid_core.errors.Cancelled` to stop). The masked data are fitted
        starting from the original fit.
        """
        key = self.utility_key(recipe, n_replicates)
        if key is None:
            return None
        recipe.check_columns(self._original.columns)
        spec = key[1]
        random = key[3] > 0
        from deid_core.utility import UtilityResult, fit_model, replicate_utility

        def compute() -> UtilityResult:
            try:
                original = self.original_fit(spec)
            except ModelFitError as error:
                return UtilityResult(spec, error=f"Original data: {error}")
            try:
                summary = None
                if random:
                    if n_replicates < 1:
                        raise ModelFitError("Replicates must be at least 1.")
                    bounds.REPLICATES.check(n_replicates, "The analysis asks for")
                    summary = replicate_utility(
                        self._original,
                        lambda r: self._masked_model_columns(recipe, spec, r),
                        spec,
                        original,
                        n_replicates=n_replicates,
                        progress=progress,
                        chunk_size=self.replicate_chunk_size(),
                        partial=None
                        if partial is None
                        else lambda s: partial(UtilityResult(spec, original, replicates=s)),
                    )
                if self._changes_model(recipe, spec):
                    masked = fit_model(self.masked_frame(recipe), spec, start=original)
                else:  # the model's data are released as they are: the same fit, AP exactly 1
                    masked = original
            except DeidError as error:
                return UtilityResult(spec, original, error=f"Masked data: {error}")
            return UtilityResult(spec, original, masked, summary)

        return self.cache.get_or_make(key, compute)

    def _changes_model(self, recipe: Recipe, spec: ModelSpec) -> bool:
        """Whether the release differs from the original on the model's data: a step on one
        of its columns, a whole-data step that writes one, or one that leaves records out."""
        qis = recipe.roles.quasi_identifiers
        columns = set(spec.columns)
        if any(recipe.steps_for(c) for c in columns):
            return True
        for step in recipe.data_steps:
            if step.removes_records or columns & set(step.writes(qis)):
                return True
        return False

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
            "utility",
            "bootstrap",
            spec,
            (*(_steps_key(recipe, c) for c in spec.columns), _release_key(recipe)),
            n_resamples,
            level,
            seed,
        )

        def mask(resample: pd.DataFrame, replicate: int) -> pd.DataFrame:
            if recipe.data_steps:  # whole-data steps work on the resample as a whole
                return recipe.apply(resample, replicate)
            out = resample.copy()
            for column in masked_columns:
                out[column] = recipe.apply_to_column(resample, column, replicate)
            return out

        from deid_core.utility.bootstrap import bootstrap_interval
        from deid_core.utility.models import fit_model

        def compute() -> BootstrapInterval:
            masked_fit = fit_model(self.masked_frame(recipe), spec, start=self.original_fit(spec))
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

        return self.cache.get_or_make(key, compute)

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
        if recipe.removes_records:
            raise DataError(
                "The classifier lens compares classifiers trained on the same records before "
                "and after masking; this recipe leaves records out (record suppression or "
                "subsampling)."
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

        from deid_core.utility.classifier import classifier_accuracy

        return self.cache.get_or_make(
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

    def information_columns(self, recipe: Recipe) -> list[str]:
        """The columns whose information loss is measured by default: the numeric
        quasi-identifiers, exposure, outcome, covariates and masked columns (numeric in the
        original data and after masking)."""
        roles = recipe.roles
        wanted = [
            *roles.quasi_identifiers,
            *(c for c in (roles.exposure, roles.outcome) if c),
            *roles.covariates,
            *recipe.masked_columns,
        ]
        found = []
        for column in dict.fromkeys(wanted):
            if column not in self._original.columns or column == roles.weight:
                continue
            series = self._original[column]
            numeric = pd.api.types.is_numeric_dtype(series.dtype) and not (
                pd.api.types.is_bool_dtype(series.dtype)
            )
            masked = self.masked_column(recipe, column)
            if numeric and pd.api.types.is_numeric_dtype(masked.dtype):
                found.append(column)
        return found

    def information_loss(
        self, recipe: Recipe, columns: Sequence[str] | None = None
    ) -> InformationLoss | None:
        """sdcMicro's IL1s and eigenvalue information loss of ``columns`` (default:
        :meth:`information_columns`) between the original and the released records (see
        :mod:`deid_core.utility.information_loss`); None without numeric columns."""
        columns = list(self.information_columns(recipe) if columns is None else columns)
        if not columns:
            return None
        released = self.masked_frame(recipe)
        return information_loss(self._original, released, columns)

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
        *,
        public: bool = True,
        holds_source: bool = True,
        bf_method: str = "exact",
    ) -> Assessment:
        judged = self.judged_risk(
            recipe,
            missing,
            source,
            public=public,
            holds_source=holds_source,
            bf_method=bf_method,
        )
        return Assessment(
            n_records=self.n_records,
            judged=judged,
            linkage=self.linkage(recipe, rule, source=source, tolerance=tolerance),
            utility=self.utility(recipe, n_replicates, progress),
        )
