"""Figures for the current recipe, computed by the core and cached per session.

The Workspace caches masked columns, codes, class sizes and model fits; this module adds the
pages' own results (linkage under other rules, sweeps, profiles) to the same per-session
cache, and runs long work as background jobs (:mod:`dashboard.jobs`): a page gets a
:class:`Live` figure, the result or, while the job runs, what there is to show so far.
Nothing here uses ``st.cache_data``: every cache lives in this session's state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import jobs, state
from dashboard.text import literal
from deid_core.io.safe_harbor import screen_safe_harbor, unmet_items
from deid_core.masking import MaskingStep, Step
from deid_core.recipe import Recipe
from deid_core.risk import (
    AttributeDisclosure,
    LinkageResult,
    RiskSummary,
    SampleRisk,
    population_uniqueness_curve,
    risk_basis,
)
from deid_core.risk import roc as deid_roc
from deid_core.risk.context import JudgedRisk, Verdict
from deid_core.risk.matching import MatchShareResult, expected_correct_match_share
from deid_core.risk.release import JudgedRelease
from deid_core.risk.roc import RocAttackResult
from deid_core.risk.uniqueness import UniquenessResult, record_uniqueness
from deid_core.search import SearchPoint, SearchResult, SearchSpace, evaluate_recipe, search_space
from deid_core.search.search import explain_no_pass
from deid_core.tradeoff.profile import Profile, SweepSpec, risk_utility_profile, sweep_recipes
from deid_core.tradeoff.rumap import (
    THETA_BOUNDS,
    RUPoint,
    fit_cologne_theta,
    points_frame,
    security_value,
    sweep,
    sweep_values_with_current,
)
from deid_core.utility import ReplicateSummary, UtilityResult
from deid_core.utility.bootstrap import BootstrapInterval
from deid_core.utility.classifier import ClassifierAccuracy
from deid_core.utility.information_loss import InformationLoss
from deid_core.workspace import Workspace

NO_MODEL_REASON = "No model: choose an exposure and an outcome on the Data page to measure utility."


def recipe_key(recipe: Recipe) -> str:
    """A hashable identity of a recipe (seeds included: they change random draws)."""
    return recipe.to_json(include_seeds=True, indent=None)


def unmasked(recipe: Recipe) -> Recipe:
    """The same roles without any masking (the "No masking" baseline)."""
    return Recipe(recipe.roles)


# ---------------------------------------------------------------------------- progress
class LazyProgress:
    """A progress callback that draws a bar in ``where`` only once work actually starts (a
    cache hit calls nothing, so no bar flashes), and removes it when done."""

    def __init__(self, where: Any | None, text: str) -> None:
        self.where = where
        self.text = text
        self.bar = None

    def __call__(self, done: int, total: int) -> None:
        if self.where is None:
            return
        fraction = min(max(done / total, 0.0), 1.0) if total else 1.0
        label = f"{self.text} ({done} of {total})"
        if self.bar is None:
            self.bar = self.where.progress(fraction, text=label)
        else:
            self.bar.progress(fraction, text=label)

    def clear(self) -> None:
        if self.bar is not None:
            self.bar.empty()
            self.bar = None


# ---------------------------------------------------------------------------- background
@dataclass(frozen=True)
class Live:
    """A figure computed in the background. ``value`` is what to show now: the result; while
    its job runs, the partial result so far or else the slot's last result (None before any);
    ``job`` is the job computing it (None when ``value`` is the final result)."""

    value: Any
    job: jobs.Job | None = None

    @property
    def updating(self) -> bool:
        return self.job is not None and self.job.active

    @property
    def stopped(self) -> bool:
        """The user stopped the job: ``value`` is its last partial result."""
        return self.job is not None and self.job.state == jobs.STOPPED

    def shown(self, note: str | None = None) -> Any:
        """Draw what the job is computing while it runs, then ``note`` (what the figures
        below are) when there is an earlier value to show meanwhile; return that value (None:
        nothing to draw yet)."""
        if self.updating:
            jobs.show_status(self.job, st.container())
            if self.value is not None and note:
                st.caption(literal(note))
        return self.value


def cached(slot: str, key: Hashable, value: Any) -> Live:
    """``value``, already computed, shown in ``slot``: a job there computing something else
    is cancelled."""
    jobs.board().cached(slot, key)
    return Live(value)


def large_data() -> bool:
    """Whether the session's data are large enough for long work to run in the background
    while the page shows the last figures (:data:`jobs.WAIT_ROWS`)."""
    return state.current_workspace().n_records > jobs.WAIT_ROWS


def in_background(
    slot: str,
    key: Hashable,
    label: str,
    work: Callable[[jobs.Reporter], Any],
    page_bound: bool = True,
    where: Any | None = None,
    wait: bool = False,
    background: bool = False,
) -> Live:
    """Run ``work`` as the session's job in ``slot`` (or find it running or done), and say what
    to show now. The page waits for it, with a progress bar in ``where``, on a small file or
    when asked to (``wait``: a result the page cannot draw without), unless the work is long
    whatever the size of the data (``background``: it then also counts as heavy work in the
    server's queue). A page-bound job is cancelled when another page is opened. Raises the
    job's error."""
    big = large_data() or background
    board = jobs.board()
    page = state.current_page() if page_bound else None
    job = board.submit(slot, key, label, work, heavy=big, page=page)
    if wait or not big:
        jobs.wait_for(job, where)
    if job.state == jobs.FAILED and job.error is not None:
        raise job.error
    if job.state == jobs.DONE:
        return Live(job.result)
    if job.state == jobs.STOPPED:
        return Live(job.result, job)
    previous = board.previous(slot)
    shown = job.partial if job.partial is not None else previous.result if previous else None
    return Live(shown, job)


# ---------------------------------------------------------------------------- figures
def risk(recipe: Recipe | None = None, workspace: Workspace | None = None) -> RiskSummary:
    """Closed-data risk, with missing values treated as the session's setting says (cached in
    the workspace)."""
    workspace = workspace or state.current_workspace()
    recipe = recipe or state.current_recipe()
    return workspace.risk(recipe, state.setting("missing"))


def judged_risk(recipe: Recipe | None = None, workspace: Workspace | None = None) -> JudgedRelease:
    """Every risk figure of the release and the one it is judged by, in the session's release
    context (:meth:`deid_core.workspace.Workspace.judged_risk`: compatible classes in people,
    linkage to the source when an intruder may hold it, the open-data risk of a subsample,
    record linkage when values are perturbed, against an uploaded source database or the
    original data), cached per session."""
    workspace = workspace or state.current_workspace()
    recipe = recipe or state.current_recipe()
    source = state.current_source()
    context = state.release_context()
    missing, bf_method = state.setting("missing"), state.setting("bf_method")
    cache = state.SessionCache("judged_risk", size=16)
    return cache.get(
        (
            recipe_key(recipe),
            source.token if source else 0,
            context.public,
            context.intruder_holds_source,
            missing,
            bf_method,
        ),
        lambda: workspace.judged_risk(
            recipe,
            missing,
            source.frame if source else None,
            public=context.public,
            holds_source=context.intruder_holds_source,
            bf_method=bf_method,
        ),
    )


def attribute_disclosure(column: str, recipe: Recipe | None = None) -> AttributeDisclosure:
    """l-diversity and t-closeness of ``column`` within the classes the judged measure uses,
    with the session's missing-value rule (cached per session)."""
    workspace = state.current_workspace()
    recipe = recipe or state.current_recipe()
    missing = state.setting("missing")
    cache = state.SessionCache("attribute_disclosure", size=16)
    return cache.get(
        (recipe_key(recipe), column, missing),
        lambda: workspace.attribute_disclosure(recipe, column, missing),
    )


def linkage(
    recipe: Recipe | None = None, rule: str | None = None, tolerance: float | None = None
) -> LinkageResult:
    """Cologne's linkage scores against the source database (an uploaded one, or else the
    original data; cached per session). The tolerance
    rule uses ``tolerance`` or, without one, the masking's own reach per column."""
    workspace = state.current_workspace()
    recipe = recipe or state.current_recipe()
    rule = rule or state.setting("matching_rule")
    if rule == "tolerance" and tolerance is None:
        tolerance = st.session_state.get("risk.tolerance") or None  # the Risk page's override
    source = state.current_source()
    cache = state.SessionCache("linkage", size=32)
    return cache.get(
        (recipe_key(recipe), rule, tolerance, source.token if source else 0),
        lambda: workspace.linkage(
            recipe, rule, source=source.frame if source else None, tolerance=tolerance
        ),
    )


def sample_risk(
    fraction: float | None = None,
    population_size: int | None = None,
    recipe: Recipe | None = None,
) -> SampleRisk:
    """Open-data risk for a sampling fraction, a population size, or (neither) the recipe's
    weight column, with the session's missing-value rule and Benedetti-Franconi method
    (cached per session)."""
    workspace = state.current_workspace()
    recipe = recipe or state.current_recipe()
    missing, bf_method = state.setting("missing"), state.setting("bf_method")
    cache = state.SessionCache("sample_risk", size=16)
    return cache.get(
        (recipe_key(recipe), fraction, population_size, missing, bf_method),
        lambda: workspace.sample_risk(recipe, fraction, population_size, missing, bf_method),
    )


def release_risk(recipe: Recipe | None = None) -> SampleRisk | None:
    """The open-data risk of a subsampled release at the fraction it achieved (None without
    subsampling), with the session's missing-value rule and Benedetti-Franconi method."""
    workspace = state.current_workspace()
    recipe = recipe or state.current_recipe()
    missing, bf_method = state.setting("missing"), state.setting("bf_method")
    cache = state.SessionCache("release_risk", size=16)
    return cache.get(
        (recipe_key(recipe), missing, bf_method),
        lambda: workspace.release_risk(recipe, missing, bf_method),
    )


def information_loss(recipe: Recipe | None = None) -> InformationLoss | None:
    """sdcMicro's IL1s and eigenvalue information loss of the recipe's numeric columns
    (cached per session); None without numeric columns."""
    workspace = state.current_workspace()
    recipe = recipe or state.current_recipe()
    cache = state.SessionCache("information_loss", size=16)
    return cache.get(recipe_key(recipe), lambda: workspace.information_loss(recipe))


#: Sampling fractions of the population-uniqueness plot.
UNIQUENESS_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0)


def uniqueness_curve(recipe: Recipe | None = None) -> list[tuple[float, dict[str, float]]]:
    """Estimated population uniqueness against the sampling fraction, with the session's
    missing-value rule (cached per session)."""
    recipe = recipe or state.current_recipe()
    missing = state.setting("missing")
    cache = state.SessionCache("uniqueness_curve", size=8)
    return cache.get(
        (recipe_key(recipe), missing),
        lambda: population_uniqueness_curve(
            state.current_workspace().risk(recipe, missing, people=False).class_size,
            UNIQUENESS_FRACTIONS,
            missing,
        ),
    )


def _utility_job(recipe: Recipe, n: int) -> tuple[Hashable, str, Callable[[jobs.Reporter], Any]]:
    """(key, label, work) of the job that fits the model to ``recipe``'s masked data."""
    workspace = state.current_workspace()
    key = (id(workspace), workspace.utility_key(recipe, n))
    random = key[1] is not None and key[1][3] > 0
    label = (
        f"Fitting the model to {n} random replicates"
        if random
        else "Fitting the model to the masked data"
    )

    def work(reporter: jobs.Reporter) -> UtilityResult | None:
        return workspace.utility(recipe, n, reporter.progress, reporter.partial)

    return key, label, work


def utility(
    recipe: Recipe | None = None, n_replicates: int | None = None, where: Any | None = None
) -> UtilityResult | None:
    """The collaborator's model before and after masking, waiting for the fit (a progress bar
    in ``where`` while replicates are fitted). None when no exposure/outcome is chosen."""
    workspace = state.current_workspace()
    recipe = recipe or state.current_recipe()
    n = n_replicates or state.setting("replicates")
    if workspace.utility_is_cached(recipe, n):
        return workspace.utility(recipe, n)
    key, label, work = _utility_job(recipe, n)
    return in_background(
        "utility", key, label, work, page_bound=False, where=where, wait=True
    ).value


def live_utility(recipe: Recipe | None = None, where: Any | None = None) -> Live:
    """The utility of the live panel and the sidebar: on a large file fitted in the
    background (the session's one "utility" job, whichever page started it), the replicates'
    running mean shown as they arrive."""
    workspace = state.current_workspace()
    recipe = recipe or state.current_recipe()
    n = state.setting("replicates")
    key, label, work = _utility_job(recipe, n)
    if workspace.utility_is_cached(recipe, n):
        return cached("utility", key, workspace.utility(recipe, n))
    return in_background("utility", key, label, work, page_bound=False, where=where)


def bootstrap(recipe: Recipe, n_resamples: int, where: Any | None = None) -> Live:
    """Naive and bootstrap intervals of the masked estimate, in the background (a progress
    bar in ``where`` on a small file); the bootstrap's seed, kept for the session, makes a
    rerun give the same interval."""
    workspace = state.current_workspace()
    seed = state.seed_for("bootstrap")
    spec = workspace.model_spec(recipe)
    key = (id(workspace), recipe_key(recipe), spec, n_resamples, seed)

    def work(reporter: jobs.Reporter) -> BootstrapInterval | None:
        return workspace.bootstrap(recipe, n_resamples, seed=seed, progress=reporter.progress)

    label = f"Refitting the model to {n_resamples} bootstrap resamples"
    return in_background("utility.bootstrap", key, label, work, where=where)


def classifier(recipe: Recipe, where: Any | None = None) -> Live:
    """The classifier lens of utility (classifiers trained on the original and on the masked
    data, evaluated on the original), in the background (a progress bar in ``where`` on a
    small file). The folds and the forests use seed 0, as the command line and the report do
    by default, so the three show the same figures (the seed is no secret: it draws no
    masking)."""
    workspace = state.current_workspace()
    key = (id(workspace), recipe_key(recipe), workspace.model_spec(recipe))

    def work(reporter: jobs.Reporter) -> ClassifierAccuracy | None:
        return workspace.classifier(recipe, progress=reporter.progress)

    label = "Training classifiers on the original and the masked data"
    return in_background("utility.classifier", key, label, work, where=where)


def match_share(recipe: Recipe, known: tuple[str, ...]) -> MatchShareResult:
    """Zhou's expected share of correct matches of the released data, per session cache."""
    workspace = state.current_workspace()
    cache = state.SessionCache("match_share", size=32)
    return cache.get(
        (id(workspace), recipe_key(recipe), known),
        lambda: expected_correct_match_share(
            workspace.original, workspace.masked_frame(recipe), known
        ),
    )


def smoothing_profile(
    recipe: Recipe,
    kernels: tuple[str, ...],
    low: float,
    high: float,
    n_points: int,
    n_bootstrap: int,
    known: tuple[str, ...],
    pattern: str | None,
    spatial_weight: float = 1.0,
    where: Any | None = None,
) -> Live:
    """The bandwidth profile of the recipe's smoothing for each kernel, in the background
    (progress in ``where`` on a small file); the prior-knowledge kernel weighs distance by
    ``spatial_weight``. Cached per session."""
    workspace = state.current_workspace()
    seed = state.seed_for("bootstrap")
    sweep = SweepSpec("kernel_smooth", "bandwidth", tuple(np.linspace(low, high, n_points)))
    forms = [
        (
            k,
            {
                "kernel": k,
                "pattern": pattern if k == "prior" else None,
                "spatial_weight": spatial_weight if k == "prior" else 0.0,
                "rho": 0.0,
            },
        )
        for k in kernels
    ]
    key = (
        id(workspace),
        recipe_key(recipe),
        workspace.model_key,
        forms.__repr__(),
        sweep,
        n_bootstrap,
        known,
    )
    cache = state.SessionCache("profiles", size=8)
    if (drawn := cache.peek(key)) is not None:
        return cached("smoothing.profile", key, drawn)

    def work(reporter: jobs.Reporter) -> Profile:
        return cache.get(
            key,
            lambda: risk_utility_profile(
                workspace,
                sweep_recipes(recipe, sweep, forms),
                "bandwidth",
                known,
                n_bootstrap=n_bootstrap,
                seed=seed,
                progress=reporter.progress,
            ),
        )

    label = "Smoothing, fitting and matching at each bandwidth"
    return in_background("smoothing.profile", key, label, work, where=where)


@dataclass(frozen=True)
class APStatus:
    """The analysis-potential score, or why it is unavailable (never a made-up 0)."""

    value: float | None
    reason: str | None

    @property
    def text(self) -> str:
        return "unavailable" if self.value is None else f"{self.value:.3f}"


def ap_status(result: UtilityResult | None) -> APStatus:
    if result is None:
        return APStatus(None, NO_MODEL_REASON)
    if not result.available:
        return APStatus(None, result.error or "The model could not be fitted.")
    value = result.analysis_potential
    if value is None or not np.isfinite(value):
        return APStatus(None, result.error or "The masked data could not be fitted.")
    return APStatus(float(value), None)


def running_mean_text(replicates: ReplicateSummary, total: float | None) -> str:
    """The replicates fitted so far: AP and the masked estimate with their Monte-Carlo errors
    (how far the means could still move with more replicates)."""
    fitted = replicates.n_replicates - replicates.n_failed
    of = f" of {total:g}" if total else ""
    text = (
        f"Running mean over {replicates.n_replicates}{of} replicates: "
        f"AP {replicates.analysis_potential:.3f}"
    )
    if (error := replicates.analysis_potential_mc_error) is not None:
        text += f" (Monte-Carlo error ± {error:.3f})"
    text += f", masked estimate {replicates.estimate_mean:.4g}"
    if (error := replicates.estimate_mc_error) is not None:
        text += f" (± {error:.2g})"
    if replicates.n_failed:
        text += f"; {replicates.n_failed} of them could not be fitted ({fitted} used)"
    return text + "."


def verdict(summary: JudgedRisk, recipe: Recipe | None = None) -> Verdict:
    """The one verdict every page shows: the session's release context applied to the judged
    risk (see :mod:`deid_core.risk.context`), with HIPAA Safe Harbor's unmet items for
    ``recipe`` (default: the current one) when the user asked for Safe Harbor."""
    found = state.release_context().judge(summary)
    if state.setting("safe_harbor"):
        found = found.with_safe_harbor(safe_harbor_unmet(recipe or state.current_recipe()))
    return found


def safe_harbor_unmet(recipe: Recipe) -> tuple[str, ...]:
    """Safe Harbor's items the release of ``recipe`` does not meet (cached per session)."""
    workspace = state.current_workspace()
    keep = bool(st.session_state.get("export.keep_id", False))
    screen = state.SessionCache("safe_harbor_screen", size=2).get(
        recipe.roles.record_id,
        lambda: screen_safe_harbor(workspace.original, recipe.roles.record_id),
    )
    return unmet_items(screen, recipe, keep)


def current_verdict(recipe: Recipe | None = None) -> Verdict:
    """The verdict of ``recipe`` (default: the current one) as every page shows it."""
    recipe = recipe or state.current_recipe()
    return verdict(judged_risk(recipe), recipe)


# ---------------------------------------------------------------------------- sweeps
def sweep_parameter_values(
    recipe: Recipe, step_index: int, series: pd.Series
) -> tuple[str | None, list[Any]]:
    """(parameter, default values) of a step's sweep, including its current value; the
    values are computed from the original column ``series`` once per data set and step."""
    step = recipe.all_steps[step_index]
    return state.SessionCache("sweep_values", size=64).get(
        json.dumps(step.to_dict(), sort_keys=True, default=str),
        lambda: sweep_values_with_current(recipe, step_index, series),
    )


def with_swept_value(recipe: Recipe, step_index: int, parameter: str, value: Any) -> Recipe:
    """The recipe with one swept value applied to the step and every step linked to it (all
    smoothing steps share their bandwidth); absolute rounding by decimals drops its base."""
    params = {parameter: value}
    if parameter in ("decimals", "base"):
        params["base" if parameter == "decimals" else "decimals"] = None
    return recipe.with_step_params(step_index, **params)


def step_name(step: Step) -> str:
    """What a step is called in a sweep's caption: its column, or a whole-data step's name."""
    return step.column if isinstance(step, MaskingStep) else step.label


@dataclass(frozen=True)
class SweepResult:
    parameter: str
    column: str
    points: pd.DataFrame
    theta: float | None
    random: bool
    n_replicates: int


#: What the map's table says in place of the figures of a value that cannot be applied.
UNREACHABLE = "not reachable"


def _sweep_result(
    points: list[RUPoint], parameter: str, name: str, random: bool, n: int
) -> SweepResult:
    """The map's table of assessed points (:func:`points_frame`, with the figures of the
    measure each point is judged by) and Cologne's fitted theta."""
    table = points_frame(points)
    judged_by, ks, uniques, max_risk, average_risk, identifiability, notes = ([] for _ in range(7))
    for p in points:
        a = p.assessment
        if a is None:  # this value's recipe cannot be applied (RUPoint.unreachable)
            judged_by.append(UNREACHABLE)
            ks.append(None)
            uniques.append(None)
            max_risk.append(None)
            average_risk.append(None)
            identifiability.append(None)
            notes.append(p.unreachable)
            continue
        classes = a.perturbed is None  # class figures do not apply to perturbed values
        judged_by.append(a.judged.basis.replace("_", " "))
        ks.append(a.risk.k if classes else None)
        uniques.append(a.risk.uniques if classes else None)
        max_risk.append(a.judged.max_risk)
        average_risk.append(a.judged.average_risk)
        identifiability.append(a.linkage.identifiability_score if classes else None)
        notes.append(None if p.analysis_potential is not None else ap_status(a.utility).reason)
    table["judged_by"] = judged_by
    table["k"] = ks
    table["uniques"] = uniques
    table["max_risk"] = max_risk
    table["average_risk"] = average_risk
    table["identifiability"] = identifiability
    table["note"] = notes
    theta = fit_cologne_theta([p.analysis_potential for p in points], [p.security for p in points])
    return SweepResult(parameter, name, table, theta, random, n if random else 0)


def run_sweep(
    recipe: Recipe,
    step_index: int,
    values: Sequence[Any],
    slot: str,
    start: bool = True,
    where: Any | None = None,
    n_replicates: int | None = None,
    wait: bool = False,
) -> Live | None:
    """Sweep one step's parameter over ``values`` in the background, as the job of ``slot``
    (cached per session on everything but the step's current value, so moving that slider
    does not recompute the path; the points so far are shown as they come). Without
    ``start``, only a cached map is returned (else None); ``wait`` as for
    :func:`in_background`."""
    workspace = state.current_workspace()
    measure = state.setting("security_measure")
    rule = state.setting("matching_rule")
    n = n_replicates or state.setting("replicates")
    step = recipe.all_steps[step_index]
    parameter = step.sweep_parameter
    if parameter is None or not values:
        raise ValueError("This step has no parameter to sweep.")
    base = with_swept_value(recipe, step_index, parameter, values[0])
    random = base.is_random
    model = workspace.model_key
    missing, context = state.setting("missing"), state.release_context()
    key = (
        recipe_key(base),
        model,
        step_index,
        tuple(values),
        measure,
        rule,
        n if random else 0,
        missing,
        context,
    )
    cache = state.SessionCache("sweeps", size=16)
    job_key = (id(workspace), key)
    if (known := cache.peek(key)) is not None:
        return cached(slot, job_key, known)
    if not start and not jobs.board().has(slot, job_key):
        jobs.board().cached(slot, job_key)  # a sweep of another setting is stale
        return None

    def work(reporter: jobs.Reporter) -> SweepResult:
        def table(points: list[RUPoint]) -> SweepResult:
            return _sweep_result(points, parameter, step_name(step), random, n)

        points = sweep(
            workspace,
            recipe,
            step_index,
            list(values),
            parameter=parameter,
            measure=measure,
            rule=rule,
            n_replicates=n,
            progress=reporter.progress,
            partial=lambda so_far: reporter.partial(table(so_far)),
            missing=missing,
            context=context,
        )
        result = table(points)
        cache.put(key, result)
        return result

    label = f"Drawing the risk-utility map: {len(values)} values of {parameter}"
    return in_background(slot, job_key, label, work, where=where, wait=wait)


def theta_text(theta: float | None) -> str:
    """Cologne's theta for display; a value at the search bound is shown as a bound."""
    if theta is None:
        return "unavailable"
    if theta >= THETA_BOUNDS[1] * 0.999:
        return f"≥ {THETA_BOUNDS[1]:,.0f}"
    if theta <= THETA_BOUNDS[0] * 1.001:
        return f"≤ {THETA_BOUNDS[0]:g}"
    return f"{theta:.4g}"


#: What a theta at the edge of its search range means (shown beside it).
THETA_AT_LIMIT_NOTE = (
    "at the edge of the search range: these points do not bend like Cologne's curve "
    "(typically because utility hardly changes while security does)"
)


def theta_at_limit(theta: float | None) -> bool:
    return theta is not None and (
        theta >= THETA_BOUNDS[1] * 0.999 or theta <= THETA_BOUNDS[0] * 1.001
    )


def current_point(
    recipe: Recipe, utility: UtilityResult | None, measure: str | None = None
) -> tuple[float, float | None]:
    """(security, analysis potential) of the current recipe, for highlighting on a map."""
    measure = measure or state.setting("security_measure")
    judged = judged_risk(recipe)
    link = (
        linkage(recipe) if measure == "identifiability" and risk_basis(recipe).class_based else None
    )
    return security_value(measure, judged, link), ap_status(utility).value


# ---------------------------------------------------------------------------- record uniqueness
def uniqueness(
    recipe: Recipe,
    keys: Sequence[str],
    small_class: int,
    where: Any | None = None,
    wait: bool = False,
) -> Live:
    """The NAACCR RU program on the masked key columns, in the background (on a small file a
    progress bar in ``where`` counts the combinations): every combination's uniques and small
    record sets, and the variables' weights. Cached per session on (data set, the key
    columns' steps, keys, T), so changing the masking of another column does not recount."""
    workspace = state.current_workspace()
    keys = tuple(keys)
    steps = tuple(
        json.dumps(step.to_dict(), sort_keys=True, default=str)
        for step in recipe.steps
        if step.column in keys
    )
    key = (id(workspace), steps, keys, int(small_class))
    cache = state.SessionCache("uniqueness", size=16)
    if (known := cache.peek(key)) is not None:
        return cached("uniqueness.lattice", key, known)

    def work(reporter: jobs.Reporter) -> UniquenessResult:
        def make() -> UniquenessResult:
            frame = workspace.masked_frame(recipe)[list(keys)]
            return record_uniqueness(
                frame, keys, small_class=small_class, progress=reporter.progress
            )

        return cache.get(key, make)

    label = f"Counting the {2 ** len(keys) - 1:,} combinations of the key variables"
    return in_background("uniqueness.lattice", key, label, work, where=where, wait=wait)


# ---------------------------------------------------------------------------- ROC release
def roc_attack(
    score: str,
    status: str,
    known: tuple[str, Any],
    options: dict[str, Any],
    audited: int | None = None,
) -> RocAttackResult:
    """The reconstruction of the unknown records from the curve published with ``options``;
    ``known`` is ("fraction", f), ("missing", m) or ("flag", column); ``audited`` records
    drawn at random, by status (None: all, see :func:`roc_records`); random choices use the
    session's seed. Cached per session."""
    workspace = state.current_workspace()
    key = (id(workspace), score, status, known, tuple(sorted(options.items())), audited)
    cache = state.SessionCache("roc_attack", size=16)

    def make() -> RocAttackResult:
        frame = roc_records(audited, status)
        flags = known_flags(frame, known)
        return deid_roc.roc_attack(frame, score, status, flags, **options)

    return cache.get(key, make)


def roc_mitigations(
    score: str,
    status: str,
    known: tuple[str, Any],
    options: tuple[tuple[tuple[str, Any], ...], ...],
    where: Any | None = None,
    audited: int | None = None,
) -> pd.DataFrame:
    """Risk and utility of each publication option (an R-U view of the released curve) on
    the ``audited`` records, with a progress bar in ``where``; cached per session."""
    workspace = state.current_workspace()
    key = (id(workspace), score, status, known, options, audited)
    cache = state.SessionCache("roc_mitigations", size=8)

    def make() -> pd.DataFrame:
        frame = roc_records(audited, status)
        flags = known_flags(frame, known)
        progress = LazyProgress(where, "Attacking each version of the curve")
        rows = []
        try:
            for done, option in enumerate(options, start=1):
                rows.append(deid_roc.mitigation_sweep(frame, score, status, flags, [dict(option)]))
                progress(done, len(options))
        finally:
            progress.clear()
        return pd.concat(rows, ignore_index=True)

    return cache.get(key, make)


def roc_records(audited: int | None, status: str) -> pd.DataFrame:
    """The records the ROC audit works on: all of them (``audited`` None or at least the
    number of records), else a random sample of ``audited`` records that keeps each status's
    share (:func:`deid_core.risk.roc.audit_sample`), drawn with a seed of its own (kept for the
    session), in their original order (the exact reconstruction grows as the square of the
    number of records)."""
    frame = state.current_workspace().original
    if audited is None or audited >= len(frame):
        return frame
    seed = state.seed_for("roc audit")
    return frame.iloc[deid_roc.audit_sample(frame[status].to_numpy(), int(audited), seed)]


def known_flags(frame: pd.DataFrame, known: tuple[str, Any]) -> np.ndarray:
    how, value = known
    seed = state.seed_for("roc known records")
    if how == "flag":
        return deid_roc.known_records(len(frame), flag=frame[value].to_numpy())
    if how == "missing":
        return deid_roc.known_records(len(frame), missing=int(value), seed=seed)
    return deid_roc.known_records(len(frame), fraction=float(value), seed=seed)


# ---------------------------------------------------------------------------- recipe search
def search_key(base: Recipe, space: SearchSpace) -> tuple[Any, ...]:
    """What a search's result depends on: the recipe, the space, the model and the release
    settings of this session."""
    context = state.release_context()
    return (
        recipe_key(base),
        space.to_json(indent=None),
        state.current_workspace().model_key,
        context,
        state.setting("missing"),
    )


def run_search(
    base: Recipe, space: SearchSpace, slot: str, start: bool = True, where: Any | None = None
) -> Live | None:
    """Search ``space`` from ``base`` (:func:`deid_core.search.search_space`) with the
    session's release context and missing-value rule, in the background as the job of
    ``slot``, whatever the size of the data (a search takes seconds even on a small file, and
    the page stays usable: its Stop button keeps the best recipes found so far). The partial
    results stream in as they come; the finished result is cached per session. Without
    ``start``, only a cached, running or stopped search is returned (else None, and a search of
    other settings running in the slot is cancelled as stale)."""
    workspace = state.current_workspace()
    context = state.release_context()
    missing = state.setting("missing")
    key = search_key(base, space)
    cache = state.SessionCache("searches", size=4)
    job_key = (id(workspace), key)
    if (known := cache.peek(key)) is not None:
        return cached(slot, job_key, known)
    if not start and not jobs.board().has(slot, job_key):
        jobs.board().cached(slot, job_key)
        return None

    def work(reporter: jobs.Reporter) -> SearchResult:
        result = search_space(
            workspace,
            base,
            space,
            context,
            missing=missing,
            progress=reporter.progress,
            partial=reporter.partial,
        )
        cache.put(key, result)
        return result

    label = f"Searching {space.size:,} recipes"
    return in_background(slot, job_key, label, work, where=where, background=True)


def search_explanation(base: Recipe, space: SearchSpace) -> dict[str, Any]:
    """Why no recipe of the space meets the threshold, and what would
    (:func:`deid_core.search.search.explain_no_pass`; cached per session)."""
    cache = state.SessionCache("search_why", size=4)
    return cache.get(
        search_key(base, space),
        lambda: explain_no_pass(
            state.current_workspace(),
            base,
            space,
            state.release_context(),
            missing=state.setting("missing"),
        ),
    )


def search_current_point(base: Recipe, space: SearchSpace) -> SearchPoint:
    """The current recipe scored as the search scores its recipes (cached per session)."""
    cache = state.SessionCache("search_current", size=4)
    return cache.get(
        search_key(base, space),
        lambda: evaluate_recipe(
            state.current_workspace(),
            base,
            space,
            state.release_context(),
            missing=state.setting("missing"),
        ),
    )
