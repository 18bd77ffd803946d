"""Search every recipe of a space for the release that meets the threshold with the least harm
to the collaborator's model.

**What is judged.** Each recipe's release is judged as the dashboard judges it: the risk that
fits the mask (:meth:`Workspace.judged_risk`: equivalence classes when every quasi-identifier is
generalised, record linkage when one is perturbed) against the release context
(:meth:`ReleaseContext.judge`). Its *conditional risk* is the figure the threshold line of the
R-U map reads: the maximum risk for a public release, the strict average risk otherwise; its
security is 1 - that risk. A recipe that fails may remove the records of classes smaller than
``k = ceil(1 / conditional limit)`` when they are at most the space's suppression limit
(:class:`RecordSuppression`, ARX's suppression limit); it then meets the threshold, its maximum
risk being at most 1/k.

**Utility.** The analysis potential of Cologne et al. (2012), ``AP = MSE(b) / MSE(b_m)``, of the
collaborator's model (:class:`UtilityResult`), for every recipe that meets the threshold.
Recipes are ranked by AP (highest first), then by how little they coarsen, then by security.

**Pruning (Flash, Kohlmayer et al. 2012).** A setting of a column *coarsens* another when every
class of the other lies within one of its classes (checked on the data from the cached codes,
not assumed: relative rounding to fewer digits, for instance, does not always coarsen). When
every searched setting of a recipe is a deterministic generalisation and every other
quasi-identifier is too, the class-based risks are monotone: coarsening never lowers a class
size, so it never raises the maximum, average or strict average risk, and never adds records to
classes smaller than k. So if a recipe fails the threshold (even with suppression), every recipe
that is finer on every column fails as well and is not evaluated. The recipes are visited from
the coarsest down, so one failure prunes its whole down-set. Pruning drops failing recipes only:
every recipe that meets the threshold is evaluated, so none on the frontier is lost.

**Speed.** Risk comes from the workspace's per-column codes (each setting of each column is
masked and encoded once), counted on the distinct combinations of the original values when
every quasi-identifier is generalised value by value (:meth:`Workspace.risk`); the recipes'
class summaries are not kept in the workspace cache (``keep=False``), so those codes stay
there for the whole search. Utility takes one fit per deterministic recipe, warm-started from
the original fit: logistic models of recipes that change only numeric model columns are fitted
together by one :class:`SharedDesignFitter` prepared once per search (vectorised
Newton-Raphson; every numeric model column searched varies; a recipe whose masked design has
few distinct (outcome, design row) patterns is fitted on those patterns weighted by their
counts: the same fit, in time proportional to the patterns), other families and other recipes
by :func:`refit`; a recipe that removes records (suppression) is fitted on the records it
keeps, grouped the same way (their patterns found from the outcome and unchanged columns coded
once per search and the changed columns coded once per setting); recipes that differ only in
columns outside the model share one fit (kept by
the steps of the model columns and the records released); random recipes are summarised over
a bounded number of replicates (:meth:`Workspace.utility`). A fit that fails there is redone
by :meth:`Workspace.utility`, whose message then says why.

**Progress and stopping.** ``progress(done, total)`` is called as recipes are settled and may
raise to stop the search (the project's convention); ``partial(result)`` receives the result so
far (the best so far and the frontier) after each batch of fits, and at least every
:data:`PARTIAL_SECONDS` once a recipe meets the threshold.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import product
from typing import Any

import numpy as np
import pandas as pd

from deid_core.errors import DataError, DeidError, ModelFitError, RecipeError
from deid_core.masking import LocalSuppression, RecordSuppression
from deid_core.recipe import Recipe, Roles
from deid_core.risk import risk_basis
from deid_core.risk.context import ReleaseContext
from deid_core.risk.release import JudgedRelease
from deid_core.search.limits import DEFAULT_SEARCH_REPLICATES, MAX_SEARCH_REPLICATES
from deid_core.search.space import SearchSpace
from deid_core.tradeoff.rumap import pareto_front
from deid_core.utility import UtilityComparison, UtilityResult, fit_logistic_replicates
from deid_core.utility.effects import effect_measure
from deid_core.utility.models import refit
from deid_core.utility.replicates import (
    GROUPING_SHARE,
    SharedDesignFitter,
    fit_logistic_patterns,
    masked_model_columns,
    pattern_codes,
)
from deid_core.utility.spec import Design, ModelSpec, build_design, check_rank
from deid_core.workspace import Workspace

#: Recipes whose models are fitted together (and between two partial results), at most...
FIT_BATCH = 64
#: ...and at most this many masked model values held at once (memory: 8 bytes each).
FIT_BATCH_VALUES = 16_000_000
#: With a ``partial`` callback, the recipes found to meet the threshold are fitted and passed
#: on at least this often (seconds), so the best so far shows while few recipes meet it.
PARTIAL_SECONDS = 1.0

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SearchPoint:
    """One evaluated recipe: its settings (one label per searched column), the judged risk and
    the collaborator's model on its release. ``risk`` is the conditional risk (see the module
    notes); ``estimate``/``ci_low``/``ci_high`` the masked effect measure (odds ratio, ...)
    with its 95% Wald interval; ``note`` why AP is unavailable."""

    choice: tuple[int, ...]
    settings: tuple[str, ...]
    recipe: Recipe
    judged_by: str
    risk: float
    max_risk: float
    average_risk: float
    k: int | None
    meets: bool
    records_removed: int = 0
    coarsening: int = 0
    analysis_potential: float | None = None
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    effect_name: str | None = None
    note: str | None = None

    @property
    def security(self) -> float:
        """1 - the conditional risk (the R-U map's vertical axis)."""
        return 1.0 - self.risk

    def to_dict(self, columns: Sequence[str]) -> dict[str, Any]:
        return {
            "settings": dict(zip(columns, self.settings, strict=True)),
            "judged_by": self.judged_by,
            "risk": self.risk,
            "security": self.security,
            "max_risk": self.max_risk,
            "average_risk": self.average_risk,
            "k": self.k,
            "meets_threshold": self.meets,
            "records_removed": self.records_removed,
            "analysis_potential": self.analysis_potential,
            "effect": None
            if self.estimate is None
            else {
                "measure": self.effect_name,
                "value": self.estimate,
                "low": self.ci_low,
                "high": self.ci_high,
            },
            "note": self.note,
            "recipe": self.recipe.to_dict(include_seeds=False),
        }


def _recipe_id(recipe: Recipe) -> str:
    return recipe.to_json(indent=None)


def _rank_key(point: SearchPoint) -> tuple[float, int, float]:
    ap = point.analysis_potential
    return (-(ap if ap is not None else -math.inf), point.coarsening, -point.security)


@dataclass(frozen=True)
class SearchResult:
    """The recipes of a space that meet the threshold, ranked, and their frontier.

    ``points``: every evaluated recipe that meets the threshold, best first (highest AP, then
    the least coarsening, then the highest security); ``frontier``: those no other beats on both
    security and AP (the risk-utility frontier of whole recipes), by AP. Counts: ``n_recipes``
    in the space, ``n_evaluated`` whose risk was measured, ``n_pruned`` known to fail without
    it, ``n_failing`` measured and failing, ``n_fits`` model fits. ``complete`` is False for
    the partial result of a search still running or stopped."""

    columns: tuple[str, ...]
    threshold: float
    measure: str
    points: tuple[SearchPoint, ...]
    n_recipes: int
    n_evaluated: int
    n_pruned: int
    n_failing: int
    n_fits: int
    seconds: float
    complete: bool = True
    has_model: bool = True
    frontier: tuple[SearchPoint, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        ranked = tuple(sorted(self.points, key=_rank_key))
        object.__setattr__(self, "points", ranked)
        object.__setattr__(self, "frontier", tuple(pareto_front(ranked)))

    @property
    def best(self) -> SearchPoint | None:
        """The recipe that meets the threshold with the highest AP (None: none does, or no
        model could be fitted to any)."""
        usable = [p for p in self.points if p.analysis_potential is not None]
        return usable[0] if usable else (self.points[0] if self.points else None)

    @property
    def recipes_per_second(self) -> float:
        settled = self.n_evaluated + self.n_pruned
        return settled / self.seconds if self.seconds > 0 else math.inf

    def top(self, n: int = 10) -> tuple[SearchPoint, ...]:
        return self.points[:n]

    def differing_columns(self, points: Sequence[SearchPoint] | None = None) -> list[int]:
        """Positions of the searched columns whose setting differs among ``points`` (default
        the frontier): what a point's label needs to say."""
        points = list(self.frontier if points is None else points)
        return [
            j
            for j in range(len(self.columns))
            if len({p.settings[j] for p in points}) > 1 or len(points) == 1
        ]

    def label(self, point: SearchPoint, points: Sequence[SearchPoint] | None = None) -> str:
        """The point's settings of the columns that differ among ``points`` (the frontier)."""
        columns = self.differing_columns(points) or range(len(self.columns))
        return "; ".join(f"{self.columns[j]}: {point.settings[j]}" for j in columns)

    def to_dict(self, top: int = 10) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "measure": self.measure,
            "threshold": self.threshold,
            "complete": self.complete,
            "recipes": self.n_recipes,
            "evaluated": self.n_evaluated,
            "pruned": self.n_pruned,
            "failing": self.n_failing,
            "meeting_threshold": len(self.points),
            "model_fits": self.n_fits,
            "seconds": self.seconds,
            "recipes_per_second": self.recipes_per_second,
            "best": None if self.best is None else self.best.to_dict(self.columns),
            "frontier": [p.to_dict(self.columns) for p in self.frontier],
            "top": [p.to_dict(self.columns) for p in self.top(top)],
        }

    def summary(self) -> str:
        """A few plain lines: what was searched and the best recipe."""
        lines = [
            f"Search of {self.n_recipes:,} recipes over {', '.join(self.columns)}"
            + (
                ""
                if self.complete
                else f" (partial result: {self.n_evaluated + self.n_pruned:,} of "
                f"{self.n_recipes:,} recipes settled)"
            ),
            f"Judged by the {self.measure} against {self.threshold:.3g}: "
            f"{len(self.points):,} meet it, {self.n_failing:,} measured and fail, "
            f"{self.n_pruned:,} pruned (finer than a failing recipe).",
            f"{self.n_fits:,} model fits in {self.seconds:.1f} s "
            f"({self.recipes_per_second:,.0f} recipes/s).",
        ]
        best = self.best
        if best is None:
            lines.append("No recipe of the space meets the threshold: add coarser settings.")
        else:
            ap = (
                "unavailable"
                if best.analysis_potential is None
                else f"{best.analysis_potential:.4f}"
            )
            lines.append(f"Best: {self.label(best, self.points)} (AP {ap}, risk {best.risk:.3f}).")
        lines.append(f"Frontier: {len(self.frontier)} recipe(s).")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def conditional_measure(context: ReleaseContext) -> str:
    """The risk the threshold line reads: the maximum risk for a public release, the strict
    average risk otherwise."""
    return "maximum risk" if context.public else "strict average risk"


def suppression_k(context: ReleaseContext) -> int:
    """The class size suppression reaches so that the maximum risk, 1/k, is within the
    conditional limit: ``ceil(1 / limit)`` (the minimum cell size for a public release)."""
    return max(2, math.ceil(1 / context.conditional_limit - 1e-9))


def _judged_in(
    workspace: Workspace, recipe: Recipe, missing: str, context: ReleaseContext
) -> JudgedRelease:
    """``recipe``'s release judged as the verdict judges it in ``context``."""
    return workspace.judged_risk(
        recipe,
        missing,
        public=context.public,
        holds_source=context.intruder_holds_source,
        keep=False,
    )


def _conditional_risk(judged: JudgedRelease, context: ReleaseContext) -> float:
    return float(judged.max_risk if context.public else judged.strict_average_risk)


def coarsens(fine: np.ndarray, coarse: np.ndarray) -> bool:
    """Whether the partition with codes ``coarse`` is a coarsening of ``fine``'s: records with
    the same fine code always share the coarse code."""
    if fine.size == 0:
        return True
    first = np.full(int(fine.max()) + 1, -1, dtype=np.int64)
    first[fine] = coarse
    return bool(np.array_equal(first[fine], coarse))


@dataclass
class _Column:
    """What the search knows about one searched column."""

    name: str
    generalising: np.ndarray  # per setting: deterministic and not perturbative
    finer_or_equal: np.ndarray  # [i, j]: setting i's partition is finer than or equal to j's
    height: np.ndarray  # per setting: how many settings it strictly coarsens
    single: np.ndarray  # per setting: deterministic and leaves the column one value


def _column_order(workspace: Workspace, space: SearchSpace, index: int, missing: str) -> _Column:
    settings = space.columns[index]
    name = settings.column
    m = len(settings.settings)
    generalising = np.array(
        [not any(s.random or s.perturbative for s in setting) for setting in settings.settings]
    )
    codes: list[np.ndarray | None] = []
    single = np.zeros(m, dtype=bool)
    missing_masks: list[np.ndarray | None] = []
    for i, setting in enumerate(settings.settings):
        if not generalising[i]:
            codes.append(None)
            missing_masks.append(None)
            continue
        alone = Recipe(Roles(quasi_identifiers=(name,)), setting)
        key, levels = workspace.class_key(alone)
        codes.append(key)
        single[i] = levels == 1
        missing_masks.append(
            workspace.masked_column(alone, name).isna().to_numpy()
            if missing == "wildcard"
            else None
        )
    order = np.eye(m, dtype=bool)
    for i, j in product(range(m), range(m)):
        fine, coarse = codes[i], codes[j]
        if i == j or fine is None or coarse is None:
            continue
        same_missing = missing_masks[i] is None or np.array_equal(
            missing_masks[i], missing_masks[j]
        )
        order[i, j] = same_missing and coarsens(fine, coarse)
    height = order.sum(axis=0) - 1
    return _Column(name, generalising, order, height, single)


class _Search:
    """One run of :func:`search_space` (its state between batches)."""

    def __init__(
        self,
        workspace: Workspace,
        base: Recipe,
        space: SearchSpace,
        context: ReleaseContext,
        missing: str,
        n_replicates: int,
    ) -> None:
        self.workspace, self.base, self.space, self.context = workspace, base, space, context
        self.missing, self.n_replicates = missing, n_replicates
        self.columns = space.column_names
        self.spec = workspace.model_spec(base)
        self.design: Design | None = None
        self.frame: pd.DataFrame | None = None
        self.original_fit = None
        self.model_error: str | None = None
        self.n_fits = 0
        #: (column, setting) pairs that leave the column a single value.
        self.single: set[tuple[str, int]] = set()
        #: The records each suppressing recipe releases, kept while its release is at hand.
        self.released: dict[str, np.ndarray | None] = {}
        #: The prepared logistic fitter of the shared design and its varying columns.
        self._fitter: tuple[SharedDesignFitter, dict[str, int]] | None = None
        #: Fast fits by :meth:`_fit_key` ((estimate, SE), or None: failed, refitted by the
        #: full path), for the recipes that differ from a fitted one outside the model.
        self._fits: dict[tuple[str, bytes | None], tuple[float, float] | None] = {}
        #: Coded model columns by (column, steps), see :meth:`_codes`.
        self._coded: dict[tuple[str, str], tuple[np.ndarray, int]] = {}
        #: The model's records coded by outcome and unchanged columns, see :meth:`_fixed_codes`.
        self._fixed: dict[tuple[str, ...], tuple[np.ndarray, int]] = {}

    # ------------------------------------------------------------------ risk
    def _judged(self, recipe: Recipe) -> JudgedRelease:
        """The release judged as the verdict judges it in this context."""
        return _judged_in(self.workspace, recipe, self.missing, self.context)

    def judge(
        self, recipe: Recipe, suppress: bool = True
    ) -> tuple[Recipe, JudgedRelease, bool, int]:
        """(the recipe, with suppression if it needed and could use it (``suppress``); its
        judged risk; whether it meets the threshold; the records it removes)."""
        judged = self._judged(recipe)
        meets = self.context.judge(judged).meets
        limit = self.space.suppression_limit
        if meets or not suppress or limit <= 0 or not risk_basis(recipe).class_based:
            return recipe, judged, meets, 0
        k = suppression_k(self.context)
        sizes = judged.classes.class_size
        # Without wildcards the step removes exactly the records of classes below k, in one
        # pass: more than the limit, and it would refuse.
        exact = self.missing == "category" and sizes.size == self.workspace.n_records
        if exact and int((sizes < k).sum()) > limit * sizes.size:
            return recipe, judged, False, 0
        suppressed = recipe.with_data_steps(
            (*recipe.data_steps, RecordSuppression(k=k, limit=limit))
        )
        try:
            judged_after = self._judged(suppressed)
        except RecipeError:  # more records in small classes than the limit allows
            return recipe, judged, False, 0
        if not self.context.judge(judged_after).meets:
            return recipe, judged, False, 0
        rows = self.workspace.released_rows(suppressed)
        self.released[_recipe_id(suppressed)] = rows
        removed = 0 if rows is None else self.workspace.n_records - rows.size
        return suppressed, judged_after, True, removed

    def point(
        self, choice: tuple[int, ...], coarsening: int, recipe: Recipe | None = None
    ) -> SearchPoint:
        """The risk side of a point (utility is added in batches)."""
        given = recipe is not None
        recipe = self.space.recipe(self.base, choice) if recipe is None else recipe
        recipe, judged, meets, removed = self.judge(recipe, suppress=not given)
        classes = judged.basis != "record_linkage"
        labels = tuple(
            self.space.columns[j].labels[i] if i >= 0 else "(current)" for j, i in enumerate(choice)
        )
        return SearchPoint(
            choice=choice,
            settings=labels,
            recipe=recipe,
            judged_by=judged.basis.replace("_", " "),
            risk=_conditional_risk(judged, self.context),
            max_risk=float(judged.max_risk),
            average_risk=float(judged.average_risk),
            k=int(judged.classes.k) if classes else None,
            meets=meets,
            records_removed=removed,
            coarsening=coarsening,
        )

    # ------------------------------------------------------------------ utility
    def _prepare_model(self) -> None:
        if self.design is not None or self.model_error is not None or self.spec is None:
            return
        try:
            self.original_fit = self.workspace.original_fit(self.spec)
            self.frame = self.workspace.original
            self.design = build_design(self.frame, self.spec)
        except DeidError as error:
            self.model_error = f"Original data: {error}"

    def _fast_columns(self, recipe: Recipe, spec: ModelSpec) -> list[str] | None:
        """The numeric model columns a deterministic recipe changes (fitted from the shared
        design, on the records it releases), or None when it needs :meth:`Workspace.utility`
        (random steps, whole-data steps that change values, masked categories or outcome)."""
        assert self.design is not None
        if recipe.is_random or spec != self.spec or set(recipe.data_columns) & set(spec.columns):
            return None
        changed = [c for c in spec.columns if recipe.steps_for(c)]
        numeric = {spec.exposure} | {
            c for c, s in zip(self.design.names, self.design.sources, strict=True) if c == s
        }
        if any(c not in numeric or c == spec.outcome for c in changed):
            return None
        return changed

    def _constant_model_column(self, point: SearchPoint, spec: ModelSpec) -> str | None:
        """A model column (exposure or covariate) that the point's setting leaves a single
        value on every record (so on the released ones too), or None."""
        model = {spec.exposure, *spec.covariates}
        for name, i in zip(self.columns, point.choice, strict=True):
            if name in model and (name, i) in self.single:
                return name
        return None

    def _released_rows(self, recipe: Recipe) -> np.ndarray | None:
        """Positions of the records the recipe releases (None: all of them)."""
        key = _recipe_id(recipe)
        if key in self.released:
            return self.released.pop(key)
        return self.workspace.released_rows(recipe)

    def with_utility(self, points: list[SearchPoint]) -> list[SearchPoint]:
        """``points`` with their analysis potential, estimate and interval."""
        if self.spec is None:
            note = "No model: choose an exposure and an outcome to rank by utility."
            return [replace(p, note=note) for p in points]
        self._prepare_model()
        if self.model_error is not None:
            return [replace(p, note=self.model_error) for p in points]
        assert self.design is not None and self.original_fit is not None
        shared: list[tuple[int, dict[str, np.ndarray], Recipe]] = []
        subsets: list[tuple[int, dict[str, np.ndarray], np.ndarray, Recipe]] = []
        results: dict[int, tuple[float, float] | UtilityResult | str] = {}
        rows_of: dict[int, np.ndarray | None] = {}
        same: dict[int, tuple[str, bytes | None]] = {}  # point -> its fit's key
        first: dict[tuple[str, bytes | None], int] = {}  # key -> the point fitted for it
        for i, point in enumerate(points):
            spec = self.workspace.model_spec(point.recipe)
            if spec is None or point.recipe.is_random:
                continue
            constant = self._constant_model_column(point, spec)
            if constant is not None:
                self._released_rows(point.recipe)  # forget the kept release
                results[i] = (
                    f"Masked data: '{constant}' takes a single value, so the model cannot "
                    "estimate its effect."
                )
                continue
            rows_of[i] = rows = self._released_rows(point.recipe)
            columns = self._fast_columns(point.recipe, spec)
            if columns is None:
                continue
            key = self._fit_key(point.recipe, columns, rows)
            same[i] = key
            if key in self._fits or key in first:
                continue  # the fit of an earlier recipe with the same model columns
            first[key] = i
            frame = pd.DataFrame(
                {c: self.workspace.masked_column(point.recipe, c) for c in columns},
                index=self.frame.index,
            )
            try:
                masked = (
                    masked_model_columns(frame, self.frame, self.design, spec) if columns else {}
                )
            except ModelFitError:
                continue
            if rows is not None:
                kept = np.zeros(self.workspace.n_records, dtype=bool)
                kept[rows] = True
                subsets.append((i, masked, kept[self.design.rows], point.recipe))
            elif masked:
                shared.append((i, masked, point.recipe))
            else:
                results[i] = (self.original_fit.estimate, self.original_fit.se)
        results.update(self._fit_together(shared))
        results.update(self._fit_subsets(subsets))
        for key, i in first.items():
            self._fits[key] = results.get(i)
        for i, key in same.items():
            if i not in results and self._fits.get(key) is not None:
                results[i] = self._fits[key]
        out = []
        for i, point in enumerate(points):
            found = results.get(i)
            if found is None and i in rows_of:  # masked categories, or a fit that failed
                found = self._fit_released(point.recipe, rows_of[i])
            if found is None:  # random: replicates
                found = self.workspace.utility(point.recipe, self.n_replicates)
                self.n_fits += 1
            out.append(self._with_fit(point, found))
        return out

    @staticmethod
    def _fit_key(
        recipe: Recipe, columns: list[str], rows: np.ndarray | None
    ) -> tuple[str, bytes | None]:
        """What a fast fit depends on: the steps of the model columns the recipe changes
        (the other model columns are the original ones) and the records it releases (a
        SHA-256 of their positions; None: all). Recipes that differ only in columns outside
        the model share it."""
        steps = [[c, [s.to_dict() for s in recipe.steps_for(c)]] for c in columns]
        released = None if rows is None else hashlib.sha256(rows.tobytes()).digest()
        return json.dumps(steps, sort_keys=True), released

    def _fit_released(self, recipe: Recipe, rows: np.ndarray | None) -> tuple[float, float] | str:
        """One fit of the recipe's own model to its released model columns (the path of
        :meth:`Workspace.utility` without the refit that drops the exposure, which AP does not
        need): (estimate, SE), or why it cannot be fitted."""
        spec = self.workspace.model_spec(recipe)
        assert spec is not None and self.frame is not None
        self.n_fits += 1
        frame = pd.DataFrame(
            {
                c: self.workspace.masked_column(recipe, c) if recipe.steps_for(c) else self.frame[c]
                for c in spec.columns
            },
            index=self.frame.index,
        )
        if rows is not None:
            frame = frame.iloc[rows]
        try:
            design = build_design(frame, spec)
            fit = refit(spec, design)
        except DeidError as error:
            return f"Masked data: {error}"
        j = design.exposure_index
        return float(fit.params[j]), float(fit.bse[j])

    def _design_with(self, columns: dict[str, np.ndarray]) -> np.ndarray:
        """The shared design with the masked columns in place of the original ones."""
        assert self.design is not None
        X = self.design.X.copy()
        for c, values in columns.items():
            X[:, self.design.sources.index(c)] = values
        return X

    def _fit_together(
        self, fast: list[tuple[int, dict[str, np.ndarray], Recipe]]
    ) -> dict[int, tuple[float, float]]:
        """Exposure estimate and SE of each recipe that changes numeric model columns and
        releases every record (those whose fit fails are left out): logistic models together
        from the shared design, other families one by one."""
        if not fast:
            return {}
        design, spec = self.design, self.spec
        assert design is not None and spec is not None and self.original_fit is not None
        varying = sorted({c for _, columns, _ in fast for c in columns})
        j = design.exposure_index
        start = np.asarray(self.original_fit.params, dtype=float)
        found: dict[int, tuple[float, float]] = {}
        self.n_fits += len(fast)
        if spec.family == "logistic":
            fitter, index = self._shared_fitter(varying)
            stacked = {
                i: np.stack([cols.get(c, design.X[:, i]) for _, cols, _ in fast])
                for c, i in index.items()
            }
            columns = sorted(index, key=index.__getitem__)  # the fitter's order
            codes = [[self._codes(recipe, c, cols) for c in columns] for _, cols, recipe in fast]
            fits = fitter.fit(stacked, codes=codes)
            for r, (i, _, _) in enumerate(fast):
                if fits.ok[r]:
                    found[i] = (float(fits.params[r, j]), float(fits.bse[r, j]))
            return found
        for i, columns, _ in fast:
            fit = self._refit(self._design_with(columns), design, start)
            if fit is not None:
                found[i] = fit
        return found

    def _codes(
        self, recipe: Recipe, column: str, masked: dict[str, np.ndarray]
    ) -> tuple[np.ndarray, int]:
        """The model column ``column`` of ``recipe`` on the model's records (``masked[column]``,
        or the original values when the recipe leaves it as it is) coded by
        ``pd.factorize`` (equal codes exactly for equal values), kept per column and steps:
        the recipes of a search share a few settings of each column, and the fitter groups
        each recipe's records by these codes."""
        assert self.design is not None
        steps = [s.to_dict() for s in recipe.steps_for(column)] if column in masked else []
        key = (column, json.dumps(steps, sort_keys=True))
        if key not in self._coded:
            values = masked.get(column, self.design.X[:, self.design.sources.index(column)])
            codes, levels = pd.factorize(values)
            small = codes.astype(np.int32) if levels.size < 2**31 else codes
            self._coded[key] = (small, int(levels.size))
        return self._coded[key]

    def _shared_fitter(self, varying: list[str]) -> tuple[SharedDesignFitter, dict[str, int]]:
        """The logistic fitter of the shared design whose varying columns are every numeric
        model column the space searches (at least ``varying``), prepared once per search:
        each batch of recipes is fitted by it, a recipe passing the columns it leaves as they
        are at their original values (the same fit as with fewer varying columns, up to
        rounding)."""
        design = self.design
        assert design is not None and self.original_fit is not None
        if self._fitter is None or not set(varying) <= set(self._fitter[1]):
            numeric = {c for c, s in zip(design.names, design.sources, strict=True) if c == s}
            searched = [
                c
                for c in self.columns
                if c in design.sources and (c == self.spec.exposure or c in numeric)
            ]
            columns = sorted(set(searched) | set(varying))
            index = {c: design.sources.index(c) for c in columns}
            start = np.asarray(self.original_fit.params, dtype=float)
            fitter = SharedDesignFitter(design.X, design.y, start, sorted(index.values()))
            self._fitter = (fitter, index)
        return self._fitter

    def _fit_subsets(
        self, items: list[tuple[int, dict[str, np.ndarray], np.ndarray, Recipe]]
    ) -> dict[int, tuple[float, float]]:
        """Exposure estimate and SE of each recipe that releases a subset of the records
        (suppression), fitted on those records alone, one by one: a logistic model on the
        distinct (outcome, design row) patterns of the kept records weighted by their counts
        when they are few (:meth:`_subset_patterns`), else record by record."""
        design = self.design
        assert design is not None and self.original_fit is not None and self.spec is not None
        start = np.asarray(self.original_fit.params, dtype=float)
        j = design.exposure_index
        found: dict[int, tuple[float, float]] = {}
        for i, columns, kept, recipe in items:
            self.n_fits += 1
            grouped = (
                self._subset_patterns(recipe, columns, kept)
                if self.spec.family == "logistic"
                else None
            )
            if grouped is not None:
                X, y, counts = grouped
                try:
                    # sqrt(counts) x the patterns' rows: the same X'X, so the same singular
                    # values (and rank) as the kept records' design.
                    check_rank(np.sqrt(counts)[:, None] * X, design.sources)
                except ModelFitError:
                    continue
                fits = fit_logistic_patterns(X, y, counts, start)
                if fits.ok[0]:
                    found[i] = (float(fits.params[0, j]), float(fits.bse[0, j]))
                continue
            subset = replace(
                design,
                X=self._design_with(columns)[kept],
                y=design.y[kept],
                rows=kept,
                offset=None if design.offset is None else design.offset[kept],
                trials=None if design.trials is None else design.trials[kept],
                time=None if design.time is None else design.time[kept],
            )
            fit = self._refit(subset.X, subset, start)
            if fit is not None:
                found[i] = fit
        return found

    def _subset_patterns(
        self, recipe: Recipe, columns: dict[str, np.ndarray], kept: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The distinct (outcome, design row) patterns of the records ``kept`` (a mask of the
        model's records) with the recipe's masked model ``columns`` in place, in the order of
        their first record: (patterns' design rows, outcomes, counts); None when there are
        more than ``GROUPING_SHARE`` of the kept records (then fitted record by record).

        These are the patterns :func:`fit_logistic_replicates` groups the kept records' design
        by (the same partition in the same order, each pattern's rows read from its last
        record), so the fit on them is the same to the last bit; they are found from codes
        instead of hashing every design column of the kept records: the outcome and the
        columns no recipe of the search changes are coded once per search
        (:meth:`_fixed_codes`), the changed ones per column and setting (:meth:`_codes`)."""
        design = self.design
        assert design is not None
        varying = self._varying(columns)
        fixed = self._fixed_codes(varying)
        coded = [(fixed[0][kept], fixed[1])]
        for c in varying:
            codes, size = self._codes(recipe, c, columns)
            coded.append((codes[kept], size))
        found = pattern_codes(coded)  # no early stop: the codes' sizes count every record
        assert found is not None
        codes, size = found
        if size > int(GROUPING_SHARE * codes.size):
            return None
        last = np.empty(size, dtype=np.int64)
        last[codes] = np.flatnonzero(kept)
        X = design.X[last]
        for c, values in columns.items():
            X[:, design.sources.index(c)] = values[last]
        return X, design.y[last], np.bincount(codes, minlength=size).astype(float)

    def _varying(self, columns: dict[str, np.ndarray]) -> tuple[str, ...]:
        """The numeric model columns the search may change (those it searches, and
        ``columns``, which a recipe changes): coded per setting, the others once."""
        design = self.design
        assert design is not None
        numeric = {c for c, s in zip(design.names, design.sources, strict=True) if c == s}
        searched = {
            c
            for c in self.columns
            if c in design.sources and (c == self.spec.exposure or c in numeric)
        }
        return tuple(sorted(searched | set(columns)))

    def _fixed_codes(self, varying: tuple[str, ...]) -> tuple[np.ndarray, int]:
        """The model's records coded by their outcome and the design columns outside
        ``varying`` (:func:`pattern_codes`), kept per ``varying``."""
        design = self.design
        assert design is not None
        if varying not in self._fixed:
            fixed = [
                design.X[:, j] for j, source in enumerate(design.sources) if source not in varying
            ]
            found = pattern_codes([design.y, *fixed])
            assert found is not None
            self._fixed[varying] = found
        return self._fixed[varying]

    def _refit(
        self, X: np.ndarray, design: Design, start: np.ndarray
    ) -> tuple[float, float] | None:
        """One fit of the model to ``X`` (None when it fails: the full path says why)."""
        assert self.spec is not None
        j = design.exposure_index
        try:
            check_rank(X, design.sources)
            if self.spec.family == "logistic":
                fits = fit_logistic_replicates(X[None], design.y, start)
                if not fits.ok[0]:
                    return None
                return float(fits.params[0, j]), float(fits.bse[0, j])
            fit = refit(self.spec, design, X, start=start)
        except ModelFitError:
            return None
        return float(fit.params[j]), float(fit.bse[j])

    def _with_fit(
        self, point: SearchPoint, found: tuple[float, float] | UtilityResult | str
    ) -> SearchPoint:
        assert self.spec is not None
        if isinstance(found, str):
            return replace(point, note=found)
        if isinstance(found, UtilityResult):
            ap = found.analysis_potential if found.available else None
            effect = found.masked_effect() if ap is not None else None
            note = None if ap is not None else (found.error or "The model could not be fitted.")
        else:
            b, se = found
            original = self.original_fit
            assert original is not None
            ap = UtilityComparison(original.estimate, original.se, b, se).analysis_potential
            effect = effect_measure(self.spec.family, self.spec.exposure, b, se)
            note = None
        return replace(
            point,
            analysis_potential=None if ap is None or not math.isfinite(ap) else float(ap),
            estimate=None if effect is None else float(effect.value),
            ci_low=None if effect is None else float(effect.low),
            ci_high=None if effect is None else float(effect.high),
            effect_name=None if effect is None else effect.name,
            note=note,
        )

    # ------------------------------------------------------------------ result
    def result(
        self, points: list[SearchPoint], counts: dict[str, int], start: float, complete: bool
    ) -> SearchResult:
        return SearchResult(
            columns=self.columns,
            threshold=self.context.conditional_limit,
            measure=conditional_measure(self.context),
            points=tuple(points),
            n_recipes=self.space.size,
            n_evaluated=counts["evaluated"],
            n_pruned=counts["pruned"],
            n_failing=counts["failing"],
            n_fits=self.n_fits,
            seconds=time.perf_counter() - start,
            complete=complete,
            has_model=self.spec is not None,
        )


def _check(workspace: Workspace, base: Recipe, space: SearchSpace, n_replicates: int) -> None:
    if not base.roles.quasi_identifiers:
        raise DataError("Search: choose the quasi-identifiers first (the risk is theirs).")
    columns = workspace.columns
    base.check_columns(columns)
    missing = [c for c in space.column_names if c not in columns]
    if missing:
        raise DataError(f"Search: the data have no column '{missing[0]}'.")
    if isinstance(n_replicates, bool) or not 1 <= n_replicates <= MAX_SEARCH_REPLICATES:
        raise DataError(
            f"Search: replicates per random recipe must be from 1 to {MAX_SEARCH_REPLICATES}."
        )


def search_space(
    workspace: Workspace,
    base: Recipe,
    space: SearchSpace,
    context: ReleaseContext,
    *,
    missing: str = "category",
    n_replicates: int = DEFAULT_SEARCH_REPLICATES,
    progress: Progress | None = None,
    partial: Callable[[SearchResult], None] | None = None,
    prune: bool = True,
) -> SearchResult:
    """Evaluate every recipe of ``space`` (``base``'s roles and other steps, each searched
    column's steps replaced by one of its settings) against ``context``, and rank those that
    meet the threshold by the analysis potential of the workspace's model (module notes).
    ``prune=False`` evaluates every recipe (the brute force the tests and the benchmark
    compare with)."""
    _check(workspace, base, space, n_replicates)
    start = time.perf_counter()
    run = _Search(workspace, base, space, context, missing, n_replicates)
    order = [_column_order(workspace, space, j, missing) for j in range(len(space.columns))]
    run.single = {(c.name, i) for c in order for i in range(len(c.single)) if c.single[i]}
    others = base.with_data_steps(())
    for name in space.column_names:
        others = others.with_steps_for(name, ())
    monotone = risk_basis(others).class_based and not (
        space.suppression_limit > 0 and missing == "wildcard"
    )
    # Kept whole-data steps (local suppression's greedy choices) need not keep the order of
    # coarser and finer settings: no pruning then.
    monotone = monotone and not (space.keep_data_steps and base.data_steps)
    choices = list(product(*(range(len(c.settings)) for c in space.columns)))
    heights = [sum(int(order[j].height[i]) for j, i in enumerate(c)) for c in choices]
    visit = sorted(range(len(choices)), key=lambda r: -heights[r])
    batch = max(1, min(FIT_BATCH, FIT_BATCH_VALUES // (workspace.n_records * len(choices[0]))))
    failing: list[tuple[int, ...]] = []
    counts = {"evaluated": 0, "pruned": 0, "failing": 0}
    done: list[SearchPoint] = []
    pending: list[SearchPoint] = []
    total = len(choices)

    def generalising(choice: tuple[int, ...]) -> bool:
        return monotone and all(order[j].generalising[i] for j, i in enumerate(choice))

    def known_to_fail(choice: tuple[int, ...]) -> bool:
        return any(
            all(order[j].finer_or_equal[i, f[j]] for j, i in enumerate(choice)) for f in failing
        )

    last_partial = [time.perf_counter()]

    def flush(complete: bool = False) -> None:
        if pending:
            done.extend(run.with_utility(pending))
            pending.clear()
        if partial is not None and not complete:
            partial(run.result(done, counts, start, complete=False))
            last_partial[0] = time.perf_counter()

    def partial_due() -> bool:
        return (
            partial is not None
            and bool(pending)
            and time.perf_counter() - last_partial[0] >= PARTIAL_SECONDS
        )

    for settled, r in enumerate(visit, start=1):
        choice = choices[r]
        if prune and generalising(choice) and known_to_fail(choice):
            counts["pruned"] += 1
        else:
            point = run.point(choice, heights[r])
            counts["evaluated"] += 1
            if point.meets:
                pending.append(point)
            else:
                counts["failing"] += 1
                if generalising(choice):
                    failing.append(choice)
        if len(pending) >= batch or partial_due():
            flush()
        if progress is not None and (settled % 16 == 0 or settled == total):
            progress(settled, total)
    flush(complete=True)
    return run.result(done, counts, start, complete=True)


def evaluate_recipe(
    workspace: Workspace,
    recipe: Recipe,
    space: SearchSpace,
    context: ReleaseContext,
    *,
    missing: str = "category",
    n_replicates: int = DEFAULT_SEARCH_REPLICATES,
) -> SearchPoint:
    """One recipe (e.g. the session's current one) judged and scored as the search does, so it
    can be drawn beside the frontier (as it is: no suppression is added); its settings are
    labelled by the space when they are one of its settings."""
    run = _Search(workspace, recipe, space, context, missing, n_replicates)
    choice = []
    for settings in space.columns:
        mine = recipe.steps_for(settings.column)
        choice.append(next((i for i, s in enumerate(settings.settings) if s == mine), -1))
    point = run.point(tuple(choice), 0, recipe=recipe)
    return run.with_utility([point])[0]


def explain_no_pass(
    workspace: Workspace,
    base: Recipe,
    space: SearchSpace,
    context: ReleaseContext,
    *,
    missing: str = "category",
) -> dict[str, Any]:
    """Why no recipe of ``space`` meets the threshold, in plain words, and what would.

    The coarsest recipe of the space (every searched column at its last setting, with the
    whole-data steps the space keeps) is the safest it holds for the class-based measure: if it
    fails, every recipe fails. Its judged risk, the records (or people) whose risk is above the
    threshold, and for each quasi-identifier the judged risk with that column left out of the
    release (the others as in the coarsest recipe) say which columns hold the risk. Remedies:
    a suppression limit of at least the share of records above the threshold, coarser
    settings, or leaving a column out."""
    coarsest = space.recipe(base, [len(c.settings) - 1 for c in space.columns])
    judged = _judged_in(workspace, coarsest, missing, context)
    limit = context.conditional_limit
    risk = _conditional_risk(judged, context)
    record_risk = np.asarray(judged.record_risk, dtype=float)
    above = int((record_risk > limit + 1e-12).sum())
    n = int(record_risk.size)
    unit = getattr(judged, "unit", "records")
    qis = base.roles.quasi_identifiers
    without: dict[str, float] = {}
    for column in qis:
        roles = replace(coarsest.roles, quasi_identifiers=tuple(c for c in qis if c != column))
        try:
            without[column] = _conditional_risk(
                _judged_in(workspace, coarsest.with_roles(roles), missing, context), context
            )
        except DeidError:  # e.g. a kept step needs the column as a quasi-identifier
            continue
    unsearched = [c for c in qis if c not in space.column_names]
    settings = {c.column: c.labels[-1] for c in space.columns}
    measure = "maximum risk" if context.public else "strict average risk"
    listed = "; ".join(f"{c}: {label}" for c, label in settings.items())
    message = (
        f"No recipe meets the threshold: even with every searched column at its coarsest "
        f"setting ({listed}), the {measure} is {risk:.3f}, above {limit:.3g}; {above:,} of "
        f"{n:,} {unit} are at a risk above it."
    )
    local = [step for step in coarsest.data_steps if isinstance(step, LocalSuppression)]
    kept = sorted({c for step in local for c in step.keep})
    if not local:
        single = ", or local suppression of single values (Mask page, Whole data)"
    elif kept:
        single = (
            ", or letting local suppression blank the columns it now never suppresses: "
            + ", ".join(kept)
        )
    else:  # the recipe's local suppression is already there and left these above
        single = ""
    helps = [
        f"a suppression limit of at least {above / max(n, 1):.1%} of the {unit} (record "
        f"suppression){single}"
    ]
    passing = [c for c, r in without.items() if r <= limit + 1e-12]
    if passing:
        helps.append("leaving one of these columns out of the release: " + ", ".join(passing))
    if unsearched:
        helps.append(
            "searching, or coarsening, the quasi-identifiers the search left as they are: "
            + ", ".join(unsearched)
        )
    helps.append("coarser settings for the searched columns (edit the settings tried)")
    return {
        "message": message,
        "measure": measure,
        "risk": risk,
        "threshold": limit,
        "above_threshold": above,
        "unit": unit,
        "n": n,
        "coarsest_settings": settings,
        "risk_without_column": without,
        "unsearched_quasi_identifiers": unsearched,
        "would_help": helps,
    }
