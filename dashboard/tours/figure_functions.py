"""The figure functions: what a tour step computes its live figures with.

This is the only Python a new tour may need, and only when it shows a new kind of figure.
Each function takes the current recipe and the keyword parameters its tour file gives, and
returns a dict of named values (numbers, texts, tables, charts); the tour file's figures name
them as ``"<computation>.<output>"`` (see ``README.md`` beside this module). Register a new
function with :func:`figure_function`, listing its outputs: the tour files are checked against
them when they are loaded. A function that has nothing to show for the current recipe (e.g. it
has no smoothing step) raises :class:`FigureUnavailable` with a one-line reason.

The functions compute through :mod:`dashboard.compute` (per-session caches) or the core where
compute has no function for it; each docstring gives the formula and its source.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

import deid_core.risk.uniqueness as ru
from dashboard import charts, compute, state, tables
from deid_core.masking import KernelSmooth, RelativeRound
from deid_core.recipe import Recipe
from deid_core.risk import risk_summary as summarise_risk
from deid_core.risk.roc import path_segments
from deid_core.utility.compare import UtilityComparison
from deid_core.utility.schemes import cologne_schemes, scheme_comparison

#: Replicates of random masking in the tours' figures (Cologne used 500; the Utility page uses
#: the sidebar's setting). Few, so a step draws in seconds.
TOUR_REPLICATES = 20

ComputeFigures = Callable[..., dict[str, Any]]


class FigureUnavailable(Exception):
    """The figure function has nothing to show for the current recipe; the message says why
    in one line (the tour file may replace it with its own text)."""


@dataclass(frozen=True)
class FigureFunction:
    """A registered figure function: its name in the tour files and the outputs it returns."""

    name: str
    compute: ComputeFigures
    outputs: tuple[str, ...]

    @property
    def parameters(self) -> dict[str, inspect.Parameter]:
        """The keyword parameters a tour file may give (every one after the recipe)."""
        return dict(list(inspect.signature(self.compute).parameters.items())[1:])

    def __call__(self, recipe: Recipe, parameters: dict[str, Any]) -> dict[str, Any]:
        values = self.compute(recipe, **parameters)
        if set(values) != set(self.outputs):
            raise TypeError(f"Figure function {self.name} returned other outputs than it lists.")
        return values


#: Every figure function by name.
FIGURE_FUNCTIONS: dict[str, FigureFunction] = {}


def figure_function(*outputs: str) -> Callable[[ComputeFigures], ComputeFigures]:
    """Register the decorated function under its own name, returning ``outputs``."""

    def register(function: ComputeFigures) -> ComputeFigures:
        FIGURE_FUNCTIONS[function.__name__] = FigureFunction(function.__name__, function, outputs)
        return function

    return register


def _unusable_text(value: float | None, digits: int) -> str:
    return "unavailable" if value is None else f"{value:.{digits}f}"


# ---------------------------------------------------------------------------- risk
def _record_ids(recipe: Recipe) -> np.ndarray:
    workspace = state.current_workspace()
    if recipe.roles.record_id:
        return workspace.original[recipe.roles.record_id].to_numpy()
    return np.arange(1, workspace.n_records + 1)


def _record_table(recipe: Recipe) -> pd.DataFrame:
    workspace = state.current_workspace()
    summary = compute.risk(recipe)
    table = pd.DataFrame({"record": _record_ids(recipe)})
    for column in recipe.roles.quasi_identifiers:
        table[column] = workspace.masked_column(recipe, column).to_numpy()
    table["class size"] = summary.class_size
    table["risk 1/f"] = np.round(1.0 / summary.class_size, 3)
    return table


@figure_function(
    "average_risk", "max_risk", "strict_average_risk", "n_classes", "n_records", "uniques"
)
def risk_summary(recipe: Recipe) -> dict[str, Any]:
    """El Emam & Malin's measures: average risk (classes / records), maximum risk (1 / the
    smallest class) and the strict average (the maximum when a class is smaller than 3)."""
    summary = compute.risk(recipe)
    return {
        "average_risk": summary.average_risk,
        "max_risk": summary.max_risk,
        "strict_average_risk": summary.strict_average_risk,
        "n_classes": summary.n_classes,
        "n_records": summary.n_records,
        "uniques": summary.uniques,
    }


@figure_function("table")
def record_classes(recipe: Recipe) -> dict[str, Any]:
    """Every record with its masked quasi-identifiers, class size f and risk 1/f."""
    return {"table": _record_table(recipe)}


@figure_function("table", "disagreements", "listing")
def printed_record_risks(
    recipe: Recipe,
    *,
    printed: dict[str, float],
    original: str,
    original_label: str,
    row: str,
    tolerance: float,
) -> dict[str, Any]:
    """The per-record risks a paper prints (``printed``: record id -> risk) beside the computed
    1/f: they agree within ``tolerance``. The unmasked ``original`` column is shown, as
    ``original_label``, before its masked version; ``row`` describes a disagreeing record
    (fields: its table columns, ``class_size``, ``risk`` and ``printed``)."""
    table = _record_table(recipe)
    unmasked = state.current_workspace().original[original].to_numpy()
    table.insert(int(table.columns.get_loc(original)), original_label, unmasked)
    by_id = {str(key): float(value) for key, value in printed.items()}
    table["printed in the paper"] = table["record"].astype(str).map(by_id)
    computed = 1.0 / table["class size"]
    table["agrees"] = np.isclose(computed, table["printed in the paper"], atol=tolerance)
    wrong = table[~table["agrees"]].to_dict("records")
    listing = "; ".join(
        row.format(
            **r,
            class_size=r["class size"],
            risk=1 / r["class size"],
            printed=r["printed in the paper"],
        )
        for r in wrong
    )
    return {"table": table, "disagreements": len(wrong), "listing": listing}


@figure_function("n_suppressed", "n_records", "strict_average_risk", "table")
def suppression_comparison(
    recipe: Recipe,
    *,
    min_class_size: int,
    label: str,
    compare_dropped: list[int],
    compare_label: str,
) -> dict[str, Any]:
    """Suppress the records in classes smaller than ``min_class_size`` and sum up the risk of
    what is left, beside a paper's own choice of records to drop (``compare_dropped``)."""
    keep = compute.risk(recipe).class_size >= min_class_size
    frame = state.current_workspace().masked_frame(recipe)[list(recipe.roles.quasi_identifiers)]
    ids = _record_ids(recipe)
    choices = [
        (f"{label} ({', '.join(str(i) for i in ids[~keep])})", keep),
        (
            f"{compare_label} ({', '.join(str(i) for i in compare_dropped)})",
            ~np.isin(ids, compare_dropped),
        ),
    ]
    rows, summaries = [], []
    for removed, kept in choices:
        left = summarise_risk(frame[kept].reset_index(drop=True), recipe.roles.quasi_identifiers)
        summaries.append(left)
        rows.append(
            {
                "records removed": removed,
                "records kept": left.n_records,
                "classes": left.n_classes,
                "average risk": f"{left.average_risk:.3f}",
                "maximum risk": f"{left.max_risk:.3f}",
                "strict average risk": f"{left.strict_average_risk:.3f}",
            }
        )
    return {
        "n_suppressed": int((~keep).sum()),
        "n_records": len(keep),
        "strict_average_risk": summaries[0].strict_average_risk,
        "table": pd.DataFrame(rows),
    }


@figure_function("identifiability", "anonymity", "perceived", "n_released", "n_source", "table")
def linkage_scores(recipe: Recipe) -> dict[str, Any]:
    """Cologne's linkage of the released records to the source under the session's matching
    rule: identifiability = Σ 1/i over correct matches / N, anonymity = 1 − identifiability."""
    link = compute.linkage(recipe, state.setting("matching_rule"))
    match = link.match_table()
    match["risk 1/i"] = match["risk 1/i"].map(lambda v: "—" if v != v else f"{v:.3f}")
    return {
        "identifiability": link.identifiability_score,
        "anonymity": link.anonymity_score,
        "perceived": link.perceived_score,
        "n_released": link.n_released,
        "n_source": link.n_source,
        "table": match,
    }


# ---------------------------------------------------------------------------- utility
@figure_function("table", "mse", "masked_mse")
def printed_mse_arithmetic(
    recipe: Recipe,
    *,
    schemes: list[str],
    estimates: list[float],
    standard_errors: list[float],
    printed_mse: list[float],
) -> dict[str, Any]:
    """A paper's MSE arithmetic recomputed from its printed estimates and standard errors of
    the unmasked fit (first) and the masked one (second): MSE = se², masked MSE =
    se_m² + (b_m − b)² (Cologne et al. 2012)."""
    (b, bm), (se, sem) = estimates, standard_errors
    comparison = UtilityComparison(b, se, bm, sem)
    table = pd.DataFrame(
        {
            "scheme": schemes,
            "ERR (printed)": estimates,
            "SE (printed)": standard_errors,
            "MSE computed": [f"{comparison.mse:.4f}", f"{comparison.masked_mse:.4f}"],
            "MSE printed": [f"{v:.4f}" for v in printed_mse],
            "formula": ["se²", "se_m² + (b_m − b)²"],
        }
    )
    return {"table": table, "mse": comparison.mse, "masked_mse": comparison.masked_mse}


@figure_function("table", "replicates")
def cologne_schemes_table(recipe: Recipe, *, replicates: int = TOUR_REPLICATES) -> dict[str, Any]:
    """The current recipe beside Cologne et al.'s six schemes for its exposure (Table 2
    layout); random schemes are averaged over ``replicates``."""
    try:
        schemes = [("Current recipe", recipe), *cologne_schemes(recipe, seed=state.session_seed())]
    except Exception as error:  # e.g. no exposure chosen
        raise FigureUnavailable(state.user_message(error)) from error
    results = [(name, compute.utility(scheme, n_replicates=replicates)) for name, scheme in schemes]
    return {
        "table": tables.comparison_display(scheme_comparison(results)),
        "replicates": replicates,
    }


@figure_function("theta", "chart", "table", "parameter", "column")
def exposure_sweep(
    recipe: Recipe, *, digits: list[int], replicates: int = TOUR_REPLICATES
) -> dict[str, Any]:
    """The security-utility sweep of the step masking the exposure (``digits`` significant
    digits when it rounds relatively, else its own default values) with Cologne's fitted
    curve security = (1 − AP^θ)^(1/θ)."""
    exposure = recipe.roles.exposure
    index = next(
        (
            i
            for i, step in enumerate(recipe.steps)
            if step.column == exposure and step.sweep_parameter is not None
        ),
        None,
    )
    if index is None:
        raise FigureUnavailable("The current recipe does not mask the exposure with a parameter.")
    step = recipe.steps[index]
    values = list(digits) if isinstance(step, RelativeRound) else None
    if values is None:
        series = state.current_workspace().original[step.column]
        values = compute.sweep_parameter_values(recipe, index, series)[1]
    result = compute.run_sweep(
        recipe, index, values, "learn.sweep", n_replicates=replicates, wait=True
    ).value
    threshold = 1 - state.release_context().conditional_limit
    chart = charts.ru_map(
        result.points, theta=result.theta, threshold_security=threshold, parameter=result.parameter
    )
    return {
        "theta": compute.theta_text(result.theta),
        "chart": chart,
        "table": tables.sweep_points_table(result.points, result.parameter),
        "parameter": result.parameter,
        "column": result.column,
    }


# ---------------------------------------------------------------------------- record uniqueness
def _uniqueness_values(result: ru.UniquenessResult) -> dict[str, Any]:
    full = result.full
    return {
        "records": full.records,
        "uniques": full.uniques,
        "uniques_pct": full.uniques_pct,
        "small": full.small,
        "small_pct": full.small_pct,
    }


@figure_function("records", "uniques", "uniques_pct", "small", "small_pct", "table")
def value_counts_uniqueness(
    recipe: Recipe,
    *,
    column: str,
    counts: dict[str, int],
    small_class: int = ru.DEFAULT_SMALL_CLASS,
) -> dict[str, Any]:
    """NAACCR's RU count on one variable given as value counts (a paper's example, not the
    data in use): unique records and records in sets of at most ``small_class``."""
    frame = pd.DataFrame({column: [value for value, n in counts.items() for _ in range(n)]})
    result = ru.record_uniqueness(frame, (column,), small_class=small_class)
    table = pd.DataFrame({column: list(counts), "records": list(counts.values())})
    return {**_uniqueness_values(result), "table": table}


def _uniqueness_run(recipe: Recipe, small_class: int) -> ru.UniquenessResult:
    keys = tuple(recipe.roles.quasi_identifiers[: ru.MAX_KEYS])
    return compute.uniqueness(recipe, keys, small_class, wait=True).value


@figure_function(
    "records",
    "uniques",
    "uniques_pct",
    "small",
    "small_pct",
    "small_class",
    "worst_variable",
    "has_weights",
    "weights_chart",
)
def record_uniqueness(
    recipe: Recipe, *, small_class: int = ru.DEFAULT_SMALL_CLASS
) -> dict[str, Any]:
    """NAACCR's RU program on the quasi-identifiers: every combination counted, each
    variable's weight from the regression of ln(% unique) on the variables present."""
    result = _uniqueness_run(recipe, small_class)
    chart = None
    if result.weights:
        weights = pd.DataFrame(
            {"variable": list(result.weights), "weight": list(result.weights.values())}
        )
        chart = charts.uniqueness_weights_chart(weights, result.worst_variable)
    return {
        **_uniqueness_values(result),
        "small_class": result.small_class,
        "worst_variable": result.worst_variable or None,
        "has_weights": chart is not None,
        "weights_chart": chart,
    }


@figure_function("table")
def uniqueness_history(
    recipe: Recipe,
    *,
    baseline_label: str,
    current_label: str,
    small_class: int = ru.DEFAULT_SMALL_CLASS,
) -> dict[str, Any]:
    """RU's iteration table: the demo's own masking (``baseline_label``) and the current
    recipe (``current_label``) side by side."""
    baseline = state.demo_recipe(state.current_dataset().demo_key)
    runs = [
        (baseline_label, _uniqueness_run(baseline, small_class)),
        (current_label, _uniqueness_run(recipe, small_class)),
    ]
    return {"table": ru.iteration_table(runs)}


# ---------------------------------------------------------------------------- smoothing
def _smoothing_steps(recipe: Recipe) -> list[int]:
    steps = [i for i, s in enumerate(recipe.steps) if isinstance(s, KernelSmooth)]
    if not steps:
        raise FigureUnavailable("The current recipe has no kernel smoothing step.")
    return steps


def _with_smoothing(recipe: Recipe, **params: Any) -> Recipe:
    steps = list(recipe.steps)
    for i in _smoothing_steps(recipe):
        steps[i] = steps[i].with_params(**params)
    return Recipe(recipe.roles, tuple(steps))


def _smoothing_outcome(recipe: Recipe) -> dict[str, Any]:
    """Zhou's expected share of correct matches and the exposure coefficient's MSE (None
    where the model cannot be fitted)."""
    share = compute.match_share(recipe, tuple(recipe.roles.quasi_identifiers) or ("exposure",))
    result = compute.utility(recipe, n_replicates=1)
    usable = result is not None and result.available and result.masked_estimate is not None
    return {
        "share": share.share,
        "masked_estimate": result.masked_estimate if usable else None,
        "estimate": result.estimate if usable else None,
        "mse": result.masked_mse if usable else None,
    }


def _smoothing_row(name: str, outcome: dict[str, Any]) -> dict[str, str]:
    return {
        "masking": name,
        "expected correct matches": f"{100 * outcome['share']:.1f}%",
        "masked b": _unusable_text(outcome["masked_estimate"], 3),
        "original b": _unusable_text(outcome["estimate"], 3),
        "MSE": _unusable_text(outcome["mse"], 4),
    }


@figure_function("share_pct", "masked_estimate", "estimate", "mse")
def smoothing_outcome(recipe: Recipe) -> dict[str, Any]:
    """Zhou et al.'s risk (expected % of correct matches) and the masked exposure coefficient
    with its MSE, for the current smoothing."""
    _smoothing_steps(recipe)
    outcome = _smoothing_outcome(recipe)
    return {
        "share_pct": 100 * outcome["share"],
        "masked_estimate": outcome["masked_estimate"],
        "estimate": outcome["estimate"],
        "mse": outcome["mse"],
    }


@figure_function("table", "kernel")
def smoothing_degrees(recipe: Recipe, *, bandwidths: list[float]) -> dict[str, Any]:
    """The degree of masking: risk and MSE of the current kernel at each bandwidth."""
    kernel = recipe.steps[_smoothing_steps(recipe)[0]].kernel
    rows = [
        _smoothing_row(
            f"bandwidth {bw:g}", _smoothing_outcome(_with_smoothing(recipe, bandwidth=bw))
        )
        for bw in bandwidths
    ]
    return {"table": pd.DataFrame(rows), "kernel": kernel}


@figure_function("table", "compared", "lower_mse_higher_risk")
def smoothing_forms(
    recipe: Recipe, *, reference: dict[str, Any], alternative: dict[str, Any]
) -> dict[str, Any]:
    """The form of masking at one degree: two kernels at the current bandwidth. Each form has
    a ``name`` and smoothing parameters (``kernel``; ``pattern`` and ``spatial_weight`` for the
    prior-knowledge kernel, reset when not given). ``lower_mse_higher_risk``: "yes" when the
    alternative has the lower MSE and the higher share of correct matches."""
    bandwidth = recipe.steps[_smoothing_steps(recipe)[0]].bandwidth
    outcomes, rows = [], []
    for form in (reference, alternative):
        params = {"pattern": None, "spatial_weight": 0.0, **form}
        name = params.pop("name")
        outcome = _smoothing_outcome(_with_smoothing(recipe, **params))
        outcomes.append(outcome)
        rows.append(_smoothing_row(f"{name}, bandwidth {bandwidth:g}", outcome))
    first, second = outcomes
    compared = first["mse"] is not None and second["mse"] is not None
    better = compared and second["mse"] < first["mse"] and second["share"] > first["share"]
    return {
        "table": pd.DataFrame(rows),
        "compared": compared,
        "lower_mse_higher_risk": "yes" if better else "no",
    }


# ---------------------------------------------------------------------------- ROC release
def _roc_columns(recipe: Recipe) -> tuple[str, str]:
    return recipe.roles.exposure or "score", recipe.roles.outcome or "status"


@figure_function(
    "statuses_recovered",
    "one_missing",
    "recovered_status",
    "score_interval",
    "true_score",
    "chart",
    "table",
)
def roc_attack(recipe: Recipe, *, known: list[Any]) -> dict[str, Any]:
    """Matthews & Harel's attack: the records the intruder lacks (``known``: how they are
    marked, see :func:`dashboard.compute.known_flags`), rebuilt from the published curve. With
    exactly one missing record, its recovered status and the score interval around it."""
    score, status = _roc_columns(recipe)
    result = compute.roc_attack(score, status, tuple(known), {})
    table = result.to_frame()
    missing: dict[str, Any] = {"recovered_status": None, "score_interval": None, "true_score": None}
    if len(table) == 1:
        row = table.iloc[0]
        status_value = row["recovered_status"]
        missing = {
            "recovered_status": "unknown" if pd.isna(status_value) else f"{int(status_value)}",
            "score_interval": f"({row['interval_low']:.2f}, {row['interval_high']:.2f})",
            "true_score": row["true_score"],
        }
    frame = state.current_workspace().original
    flags = compute.known_flags(frame, tuple(known))
    segments = path_segments(frame[score], frame[status], flags)
    recovered = table["recovered_status"].notna().reset_index(drop=True)
    published = result.published
    return {
        "statuses_recovered": result.share_status_recovered,
        "one_missing": len(table) == 1,
        **missing,
        "chart": charts.roc_attack_chart(segments, recovered, published.fpr, published.tpr),
        "table": table,
    }


@figure_function("table")
def roc_mitigations(
    recipe: Recipe, *, known: list[Any], options: list[dict[str, Any]]
) -> dict[str, Any]:
    """Risk and utility of publishing the curve in each way of ``options`` (an empty one: as
    it is; ``every``, ``decimals``, ``binormal``: see
    :func:`deid_core.risk.roc.mitigation_sweep`)."""
    score, status = _roc_columns(recipe)
    publications = tuple(tuple(option.items()) for option in options)
    table = compute.roc_mitigations(score, status, tuple(known), publications)
    shown = table[
        ["published", "share_status_recovered", "share_pinned", "mean_finite_width", "auc_change"]
    ].rename(
        columns={
            "share_status_recovered": "statuses recovered",
            "share_pinned": "pinned to a rank",
            "mean_finite_width": "score interval width",
            "auc_change": "AUC change",
        }
    )
    return {"table": shown}
