"""The risk-utility (R-U) map of Cologne et al. 2012 (section 2.3, Figure 3).

Each masking configuration is a point: utility (the analysis-potential score) on x, security
(1 - risk) on y, both on 0..1, ideal at the top right. Sweeping one parameter of one step
(digits, width, noise range) draws a path. Cologne fitted

    security = (1 - AP^theta)^(1/theta)

by nonlinear least squares (theta = 178 in their data).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np
import pandas as pd

from deid_core.errors import DeidError, RecipeError
from deid_core.recipe import Recipe
from deid_core.risk import LinkageResult, RiskSummary
from deid_core.risk.context import ReleaseContext
from deid_core.risk.judged import PerturbedRisk
from deid_core.risk.release import JudgedRelease
from deid_core.utility import DEFAULT_REPLICATES

# scipy is imported where it is used: the command line imports this module to refuse bad
# input and must not spend seconds loading scipy first (see deid_core._lazy).
if TYPE_CHECKING:  # the workspace loads the model libraries
    from deid_core.workspace import Assessment, Workspace

#: The range within which :func:`fit_cologne_theta` searches; a fit at either end means the
#: points do not follow Cologne's curve (e.g. security changes while utility does not).
THETA_BOUNDS = (0.05, 1e5)

#: Which risk the y axis subtracts from 1, with a plain-language description.
SECURITY_MEASURES = {
    "identifiability": "1 - Cologne identifiability score (average over released records of "
    "1/number of matching source records, counting only correct matches)",
    "average_risk": "1 - average re-identification risk over records (mean of 1/class size)",
    "max_risk": "1 - maximum re-identification risk (1/smallest class size)",
}


#: What each measure reads when the recipe perturbs a quasi-identifier.
PERTURBED_SECURITY = {
    "identifiability": "1 - the record-linkage average risk (Cologne's score under a matching "
    "rule that fits the perturbation, or the nearest-record linkage rate or dRisk if larger)",
    "average_risk": "1 - the record-linkage average risk",
    "max_risk": "1 - the record-linkage maximum risk (1 / the fewest records within reach)",
}


def security_value(
    measure: str,
    judged: RiskSummary | PerturbedRisk | JudgedRelease,
    linkage: LinkageResult | None,
) -> float:
    """Security = 1 - the chosen risk of the judged measure (see :mod:`deid_core.risk.judged`).

    For a class-based release: Cologne's anonymity score (``linkage``, NaN when it could not be
    computed), 1 - average risk or 1 - maximum risk. When a quasi-identifier is perturbed the
    class figures and an exact-matching anonymity score do not apply (every perturbed value is
    unique, yet none matches exactly), so the measures read the record-linkage risk
    (:data:`PERTURBED_SECURITY`): both average measures 1 - its average risk (which is
    1 - Cologne's anonymity score under the within-reach rule unless the nearest-record rate
    or dRisk is larger), the maximum 1 - its maximum risk."""
    if measure not in SECURITY_MEASURES:
        raise RecipeError(f"Unknown security measure '{measure}'.")
    if isinstance(judged, PerturbedRisk) or getattr(judged, "basis", None) == "record_linkage":
        return 1.0 - (judged.max_risk if measure == "max_risk" else judged.average_risk)
    if measure == "identifiability":
        return linkage.anonymity_score if linkage is not None else float("nan")
    if measure == "average_risk":
        return 1.0 - judged.average_risk
    return 1.0 - judged.max_risk


def security_of(assessment: Assessment, measure: str = "identifiability") -> float:
    """Security = 1 - the chosen risk of the measure the release is judged by."""
    return security_value(measure, assessment.judged, assessment.linkage)


@dataclass(frozen=True)
class RUPoint:
    """One configuration on the map (``analysis_potential`` is None if no model could be
    fitted). A value whose recipe cannot be applied (record suppression that cannot reach k
    within its limit, a setting the step refuses) is a point with no figures: ``assessment``
    None, security NaN, and ``unreachable`` saying why; it is listed, never drawn."""

    label: str
    value: object
    security: float
    analysis_potential: float | None
    assessment: Assessment | None
    unreachable: str | None = None


def _assess_point(
    workspace: Workspace,
    recipe: Recipe,
    label: str,
    value: object = None,
    measure: str = "identifiability",
    rule: str = "same_masking",
    n_replicates: int = DEFAULT_REPLICATES,
    progress: Callable[[int, int], None] | None = None,
    missing: str = "category",
    context: ReleaseContext | None = None,
) -> RUPoint:
    context = context or ReleaseContext()
    assessment = workspace.assess(
        recipe,
        rule=rule,
        n_replicates=n_replicates,
        progress=progress,
        missing=missing,
        public=context.public,
        holds_source=context.intruder_holds_source,
    )
    utility = assessment.utility
    ap = utility.analysis_potential if utility is not None and utility.available else None
    return RUPoint(label, value, security_of(assessment, measure), ap, assessment)


def sweep(
    workspace: Workspace,
    recipe: Recipe,
    step_index: int,
    values: Sequence[object],
    parameter: str | None = None,
    measure: str = "identifiability",
    rule: str = "same_masking",
    n_replicates: int = DEFAULT_REPLICATES,
    progress: Callable[[int, int], None] | None = None,
    partial: Callable[[list[RUPoint]], None] | None = None,
    missing: str = "category",
    context: ReleaseContext | None = None,
) -> list[RUPoint]:
    """Assess ``recipe`` with one step's parameter set to each of ``values`` in turn (on every
    step linked to it, see :meth:`Recipe.linked_steps`: all smoothing steps move together).
    ``step_index`` counts in :attr:`Recipe.all_steps` (column steps, then whole-data steps).

    ``progress(done, total)`` counts the points (it is also called, with the same count,
    between chunks of a point's replicates) and ``partial`` receives the points so far after
    each one; either may raise (e.g. :class:`~deid_core.errors.Cancelled`) to stop.
    ``missing`` and ``context`` (the missing-value rule and the release context, default a
    public release whose intruder may hold the source) decide the judged figure, as for the
    verdict (:meth:`Workspace.judged_risk`). A value whose recipe cannot be applied (e.g. a
    finer width after which record suppression cannot reach k within its limit) gives an
    unreachable point (:class:`RUPoint`) instead of ending the sweep."""
    if not 0 <= step_index < len(recipe.all_steps):
        raise RecipeError("The step to sweep is not in the recipe.")
    step = recipe.all_steps[step_index]
    parameter = parameter or step.sweep_parameter
    if parameter is None:
        raise RecipeError(f"{step.label} has no parameter to sweep.")
    points = []
    for done, value in enumerate(values, start=1):
        params = {parameter: value}
        if parameter in ("decimals", "base"):
            params["base" if parameter == "decimals" else "decimals"] = None
        variant = recipe.with_step_params(step_index, **params)
        label = f"{parameter} = {value:g}" if isinstance(value, float) else f"{parameter} = {value}"
        within = None
        if progress is not None:

            def within(_done: int, _total: int, before: int = done - 1) -> None:
                progress(before, len(values))

        try:
            point = _assess_point(
                workspace,
                variant,
                label,
                value,
                measure,
                rule,
                n_replicates,
                within,
                missing,
                context,
            )
        except RecipeError as error:  # this value's recipe cannot be applied: say why
            point = RUPoint(label, value, math.nan, None, None, unreachable=str(error))
        points.append(point)
        if progress is not None:
            progress(done, len(values))
        if partial is not None:
            partial(list(points))
    return points


def cologne_curve(analysis_potential: np.ndarray, theta: float) -> np.ndarray:
    """``(1 - AP^theta)^(1/theta)``, computed in logs so that large theta stays accurate."""
    ap = np.clip(np.asarray(analysis_potential, dtype=float), 1e-12, 1.0)
    with np.errstate(divide="ignore"):
        return np.exp(np.log1p(-np.exp(theta * np.log(ap))) / theta)


def fit_cologne_theta(
    analysis_potential: Sequence[float], security: Sequence[float]
) -> float | None:
    """Least-squares theta of Cologne's curve; None with fewer than two usable points.

    AP above 1 (possible with a lower-variance estimate) is clipped to 1 for the fit.
    """
    ap = np.asarray([a for a, s in zip(analysis_potential, security, strict=True) if a], float)
    sec = np.asarray([s for a, s in zip(analysis_potential, security, strict=True) if a], float)
    keep = np.isfinite(ap) & np.isfinite(sec)
    ap, sec = np.clip(ap[keep], 1e-12, 1.0), sec[keep]
    if ap.size < 2:
        return None

    def loss(log_theta: float) -> float:
        return float(np.sum((sec - cologne_curve(ap, math.exp(log_theta))) ** 2))

    from scipy.optimize import minimize_scalar

    bounds = (math.log(THETA_BOUNDS[0]), math.log(THETA_BOUNDS[1]))
    result = minimize_scalar(loss, bounds=bounds, method="bounded")
    return float(math.exp(result.x))


class FrontierPoint(Protocol):
    """What :func:`pareto_front` reads of a point: an R-U map point or a searched recipe."""

    @property
    def security(self) -> float: ...

    @property
    def analysis_potential(self) -> float | None: ...


PointT = TypeVar("PointT", bound=FrontierPoint)


def pareto_front(points: Sequence[PointT]) -> list[PointT]:
    """Points no other point beats on both security and analysis potential (by AP).

    Sorted by AP from the highest, a point is on the frontier when its security is the largest
    among the points of its AP and exceeds that of every point of a higher AP; equal points all
    stay (none beats another), and so does a point whose security is NaN (no comparison beats
    it). O(n log n)."""
    usable = sorted(
        (p for p in points if p.analysis_potential is not None and not math.isnan(p.security)),
        key=lambda p: (-p.analysis_potential, -p.security),
    )
    unknown = [p for p in points if p.analysis_potential is not None and math.isnan(p.security)]
    front: list[PointT] = []
    best_higher = -math.inf  # the highest security among points of a higher AP
    i = 0
    while i < len(usable):
        ap = usable[i].analysis_potential
        group_end = i
        while group_end < len(usable) and usable[group_end].analysis_potential == ap:
            group_end += 1
        top = usable[i].security
        if top > best_higher:
            front.extend(p for p in usable[i:group_end] if p.security == top)
        best_higher = max(best_higher, top)
        i = group_end
    return sorted(front + unknown, key=lambda p: p.analysis_potential)


def value_text(value: object) -> str:
    """A swept value as the map labels it (floats in their shortest form)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def points_frame(points: Sequence[RUPoint]) -> pd.DataFrame:
    """One row per point, as :func:`deid_core.charts.ru_map` draws it: value, label (the
    swept value), security, analysis_potential (None where no model could be fitted) and
    pareto (on the Pareto frontier)."""
    front = {id(p) for p in pareto_front(points)}
    return pd.DataFrame(
        {
            "value": [p.value for p in points],
            "label": [value_text(p.value) for p in points],
            "security": [p.security for p in points],
            "analysis_potential": [p.analysis_potential for p in points],
            "pareto": [id(p) in front for p in points],
        },
        columns=["value", "label", "security", "analysis_potential", "pareto"],
    )


def sweep_values_with_current(
    recipe: Recipe, step_index: int, series: pd.Series
) -> tuple[str | None, list[object]]:
    """(parameter, values) of a step's sweep on ``series``: the step's own sweep values and
    its current value, sorted; (None, []) when the step has no parameter to sweep
    (``step_index`` in :attr:`Recipe.all_steps`; ``series``: a column step's column)."""
    step = recipe.all_steps[step_index]
    parameter = step.sweep_parameter
    if parameter is None:
        return None, []
    values = list(step.sweep_values(series))
    current = getattr(step, parameter, None)
    if current is not None and current not in values:
        values.append(current)
    if not values:
        return parameter, []
    with contextlib.suppress(TypeError):
        values = sorted(set(values))
    return parameter, values


def sweepable_steps(recipe: Recipe, original: pd.DataFrame) -> list[int]:
    """Positions of the steps with a parameter and values to sweep on the R-U map."""
    found = []
    for i, step in enumerate(recipe.steps):
        if not step.sweep_parameter or step.column not in original.columns:
            continue
        try:
            if step.sweep_values(original[step.column]):
                found.append(i)
        except (DeidError, TypeError, ValueError):
            continue
    return found


def default_sweep_step(recipe: Recipe, original: pd.DataFrame) -> int | None:
    """The step the R-U map sweeps when none is chosen: the exposure's first sweepable step,
    else the first sweepable step (None if no step has values to sweep)."""
    candidates = sweepable_steps(recipe, original)
    exposure = recipe.roles.exposure
    preferred = [i for i in candidates if recipe.steps[i].column == exposure]
    return (preferred or candidates or [None])[0]
