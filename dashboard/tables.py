"""Tables where people compare numbers: risk summary, Cologne's Table 2, sweep points.

Every number is formatted here as text, so "unavailable" can sit where a number cannot be
computed (never a 0 that looks like a result).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard.help import metric_help
from deid_core.report.formatting import fmt_distinct
from deid_core.risk import RiskSummary
from deid_core.search import SearchResult
from deid_core.utility import FitResult, UtilityResult
from deid_core.utility.classifier import ClassifierAccuracy
from deid_core.utility.effects import effect_measure

UNAVAILABLE = "unavailable"
DASH = "—"

UTILITY_COLUMNS = (
    "Records (events)",
    "Estimate b",
    "SE",
    "Deviance",
    "LR statistic (p)",
    "Relative bias %",
    "MSE",
    "Analysis potential",
)


def _pct(value: float | None) -> str:
    return DASH if value is None else f"{100 * value:.2f}"


def _range(low: float | None, high: float | None, digits: int = 4, pct: bool = False) -> str:
    if low is None or high is None:
        return DASH
    if pct:
        return f"({100 * low:.2f}, {100 * high:.2f})"
    return f"({low:.{digits}f}, {high:.{digits}f})"


def _lr(fit: FitResult) -> str:
    p = "< 0.0001" if fit.lr_pvalue < 1e-4 else f"{fit.lr_pvalue:.4f}"
    return f"{fit.lr_statistic:.3f} (p {p})"


def risk_summary_table(summary: RiskSummary) -> pd.DataFrame:
    """Every closed-data risk figure with its definition (counted in people when a person has
    several rows: :attr:`RiskSummary.unit`)."""
    people = summary.unit == "people"
    unit = "People" if people else "Records"
    rows: list[tuple[str, str, str]] = [
        (unit, f"{summary.n_records:,}", metric_help("people" if people else "records")),
    ]
    if people and summary.n_rows is not None:
        rows.append(("Rows (several per person)", f"{summary.n_rows:,}", metric_help("records")))
    rows += [
        ("Equivalence classes", f"{summary.n_classes:,}", metric_help("n_classes")),
        ("k (smallest class)", f"{summary.k:,}", metric_help("k")),
        (f"Unique {unit.lower()}", f"{summary.uniques:,}", metric_help("uniques")),
        (
            f"{unit} in classes of size ≤ {summary.small_class_size}",
            f"{summary.records_in_small_classes:,}",
            metric_help("small_classes"),
        ),
        ("Maximum risk", f"{summary.max_risk:.4f}", metric_help("max_risk")),
        (
            f"Average risk (over {unit.lower()})",
            f"{summary.average_risk:.4f}",
            metric_help("average_risk"),
        ),
        (
            "Strict average risk",
            f"{summary.strict_average_risk:.4f}",
            metric_help("strict_average_risk"),
        ),
    ]
    for level, count in summary.k_violations.items():
        rows.append(
            (
                f"{unit} in classes smaller than {level} (k = {level} violations)",
                f"{count:,} ({100 * count / summary.n_records:.1f}%)",
                metric_help("k_violations"),
            )
        )
    return pd.DataFrame(rows, columns=["Measure", "Value", "Definition and direction"])


def utility_table(result: UtilityResult) -> pd.DataFrame:
    """Cologne et al. (2012) Table 2 layout: the unmasked fit, then the current recipe (for a
    random recipe: the mean over replicates, its (min, max), and one draw with its deviance),
    with the effect measure (odds, rate or hazard ratio, ...) and its 95% CI beside ``b``.
    MSEs carry as many significant digits as it takes for different values to read
    differently."""
    effect = result.effect()
    effect_column = EFFECT_COLUMN if effect is None else f"{effect.name} (95% CI)"
    columns = [*UTILITY_COLUMNS[:3], effect_column, *UTILITY_COLUMNS[3:]]
    original = result.original
    if original is None:
        return _frame({"No masking": {}, "Current recipe": {}}, columns)
    rows: dict[str, dict[str, str]] = {"No masking": _fit_row(original, original, effect_column)}
    mses: dict[str, float | None] = {"No masking": original.se**2}
    reps = result.replicates
    if reps is not None:
        mean_row = f"Current recipe: mean of {reps.n_replicates - reps.n_failed} replicates"
        masked_effect = result.masked_effect()
        rows[mean_row] = {
            "Records (events)": DASH,
            "Estimate b": f"{reps.estimate_mean:.4f}",
            "SE": f"{reps.se_mean:.4f}",
            effect_column: masked_effect.text() if masked_effect else UNAVAILABLE,
            "Deviance": DASH,
            "LR statistic (p)": DASH,
            "Relative bias %": _pct(reps.relative_bias_mean),
            "Analysis potential": f"{reps.analysis_potential:.3f}",
        }
        mses[mean_row] = reps.mse_mean
        low, high = (
            effect_measure(original.spec.family, original.spec.exposure, b, original.se).value
            for b in (reps.estimate_min, reps.estimate_max)
        )
        rows["(min, max) over replicates"] = {
            "Records (events)": DASH,
            "Estimate b": _range(reps.estimate_min, reps.estimate_max),
            "SE": _range(reps.se_min, reps.se_max),
            effect_column: f"({low:#.4g}, {high:#.4g})",
            "Deviance": DASH,
            "LR statistic (p)": DASH,
            "Relative bias %": _range(reps.relative_bias_min, reps.relative_bias_max, pct=True),
            "Analysis potential": DASH,
        }
        if result.masked is not None:
            rows["One draw (the released file)"] = _fit_row(original, result.masked, effect_column)
            mses["One draw (the released file)"] = _mse(original, result.masked)
    elif result.masked is not None:
        rows["Current recipe"] = _fit_row(original, result.masked, effect_column)
        mses["Current recipe"] = _mse(original, result.masked)
    else:
        rows["Current recipe"] = {}
    texts = fmt_distinct(list(mses.values()))
    for name, text in zip(mses, texts, strict=True):
        rows[name]["MSE"] = text
    if reps is not None:
        low_high = fmt_distinct([reps.mse_min, reps.mse_max, *mses.values()])[:2]
        rows["(min, max) over replicates"]["MSE"] = f"({low_high[0]}, {low_high[1]})"
    return _frame(rows, columns)


#: The effect-measure column's name when no model could be fitted.
EFFECT_COLUMN = "Effect (95% CI)"


def _mse(original: FitResult, masked: FitResult) -> float:
    """``MSE(b_m) = se_m^2 + (b_m - b)^2``."""
    return masked.se**2 + (masked.estimate - original.estimate) ** 2


def _fit_row(original: FitResult, fit: FitResult, effect_column: str) -> dict[str, str]:
    """One fit's row (the original's is the reference: bias 0, AP 1)."""
    reference = fit is original
    bias = (fit.estimate - original.estimate) / original.estimate if original.estimate else None
    linear = fit.spec.family == "linear"
    return {
        "Records (events)": f"{fit.n:,}" if linear else f"{fit.n:,} ({fit.n_events:,})",
        "Estimate b": f"{fit.estimate:.4f}",
        "SE": f"{fit.se:.4f}",
        effect_column: fit.effect().text(),
        "Deviance": f"{fit.deviance:.2f}",
        "LR statistic (p)": _lr(fit),
        "Relative bias %": "0.00 (reference)" if reference else _pct(bias),
        "Analysis potential": "1.000 (reference)"
        if reference
        else f"{original.se**2 / _mse(original, fit):.3f}",
    }


def _frame(rows: dict[str, dict[str, str]], columns: list[str]) -> pd.DataFrame:
    """The rows as a table in ``columns`` order; a missing cell (or row) is "unavailable"."""
    table = pd.DataFrame.from_dict(
        {name: {c: row.get(c, UNAVAILABLE) for c in columns} for name, row in rows.items()},
        orient="index",
        columns=columns,
    )
    table.index.name = "Data"
    return table


def classifier_table(lens: ClassifierAccuracy) -> pd.DataFrame:
    """The classifier lens: AUC and accuracy trained on the original and on the masked data
    (both evaluated on the original), with the masked range over replicates if random."""
    ranged = lens.n_replicates > 1

    def masked(value: float, low_high: tuple[float, float]) -> str:
        text = f"{value:.3f}"
        return f"{text} ({low_high[0]:.3f}, {low_high[1]:.3f})" if ranged else text

    rows = [
        {
            "Classifier": s.name,
            "AUC, trained on original": f"{s.auc:.3f}",
            "AUC, trained on masked": masked(s.masked_auc, s.masked_auc_range),
            "Change in AUC": f"{s.auc_change:+.3f}",
            "Accuracy, trained on original": f"{s.accuracy:.3f}",
            "Accuracy, trained on masked": masked(s.masked_accuracy, s.masked_accuracy_range),
        }
        for s in lens.scores
    ]
    return pd.DataFrame(rows).set_index("Classifier")


#: The sweep table's columns of figures (a dash where a value cannot be applied).
FIGURE_COLUMNS = (
    "Security",
    "Analysis potential",
    "k",
    "Uniques",
    "Max risk",
    "Average risk",
    "Identifiability",
)


def sweep_points_table(points: pd.DataFrame, parameter: str, current: Any = None) -> pd.DataFrame:
    """The sweep's points as text, one row per parameter value."""
    rows = []
    for _, p in points.iterrows():
        ap = p["analysis_potential"]
        if pd.isna(p["max_risk"]):  # a value whose recipe cannot be applied: no figures
            rows.append(
                {
                    parameter: p["label"] + ("  (current)" if _same(p["value"], current) else ""),
                    **dict.fromkeys(FIGURE_COLUMNS, "—"),
                    "Risk measure": p["judged_by"],
                    "On the Pareto frontier": "",
                    "Note": p["note"] or "",
                }
            )
            continue
        rows.append(
            {
                parameter: p["label"] + ("  (current)" if _same(p["value"], current) else ""),
                "Security": f"{p['security']:.4f}",
                "Analysis potential": UNAVAILABLE if pd.isna(ap) else f"{ap:.4f}",
                "k": _count_or_na(p["k"]),
                "Uniques": _count_or_na(p["uniques"]),
                "Risk measure": p["judged_by"],
                "Max risk": f"{p['max_risk']:.4f}",
                "Average risk": f"{p['average_risk']:.4f}",
                "Identifiability": _count_or_na(p["identifiability"], "{:.4f}"),
                "On the Pareto frontier": "yes" if p["pareto"] else "",
                "Note": p["note"] or "",
            }
        )
    return pd.DataFrame(rows)


#: Where a class figure does not apply (the point's quasi-identifiers are perturbed).
NOT_APPLICABLE = "n/a (perturbed)"


def _count_or_na(value: Any, form: str = "{:,.0f}") -> str:
    return NOT_APPLICABLE if value is None or pd.isna(value) else form.format(value)


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    try:
        return abs(float(a) - float(b)) <= 1e-12 * max(1.0, abs(float(b)))
    except (TypeError, ValueError):
        return a == b


def comparison_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`deid_core.workspace.scheme_comparison` as text in Cologne's Table 2 layout."""

    def num(value: Any, digits: int) -> str:
        return DASH if value is None or pd.isna(value) else f"{value:.{digits}f}"

    def finite(value: Any) -> float | None:
        return None if value is None or pd.isna(value) else float(value)

    # Every MSE in the table (means and ranges) with enough digits that different ones differ.
    mse_columns = ("mse", "mse_min", "mse_max")
    values = [finite(v) for c in mse_columns for v in table[c]] if len(table) else []
    texts = iter(fmt_distinct(values))
    mse_text = {c: [next(texts) for _ in range(len(table))] for c in mse_columns}
    rows = []
    for i, (_, r) in enumerate(table.iterrows()):
        unavailable = pd.isna(r["estimate"])
        ranged = not pd.isna(r["estimate_min"])
        rows.append(
            {
                "Scheme": r["scheme"],
                "Estimate b": UNAVAILABLE
                if unavailable
                else num(r["estimate"], 4)
                + (f" ({r['estimate_min']:.4f}, {r['estimate_max']:.4f})" if ranged else ""),
                "SE": UNAVAILABLE if unavailable else num(r["se"], 4),
                "Deviance": num(r["deviance"], 2),
                "LR statistic (p)": DASH
                if pd.isna(r["lr_statistic"])
                else f"{r['lr_statistic']:.2f} (p {r['lr_pvalue']:.4f})",
                "Relative bias %": UNAVAILABLE if unavailable else num(r["relative_bias_pct"], 2),
                "MSE": UNAVAILABLE
                if unavailable
                else mse_text["mse"][i]
                + (f" ({mse_text['mse_min'][i]}, {mse_text['mse_max'][i]})" if ranged else ""),
                "Analysis potential": UNAVAILABLE
                if unavailable
                else num(r["analysis_potential"], 3),
                "Note": "" if pd.isna(r["note"]) else str(r["note"]),
            }
        )
    return pd.DataFrame(rows)


def search_map_frame(result: SearchResult, limit: int = 400) -> pd.DataFrame:
    """The recipes of a search that meet the threshold (the best ``limit``), as
    :func:`deid_core.charts.ru_map` draws them: label (what differs among the frontier's
    recipes), security, analysis_potential, pareto (on the frontier) and mark (a frontier
    point's number in :func:`search_frontier_table`, written on the chart; empty elsewhere)."""
    number = {p.choice: i for i, p in enumerate(frontier_order(result), start=1)}
    shown = list(result.points[:limit]) + [
        p for p in result.frontier if p not in result.points[:limit]
    ]
    return pd.DataFrame(
        {
            "label": [result.label(p) for p in shown],
            "security": [p.security for p in shown],
            "analysis_potential": [p.analysis_potential for p in shown],
            "pareto": [p.choice in number for p in shown],
            "mark": [str(number[p.choice]) if p.choice in number else "" for p in shown],
        },
        columns=["label", "security", "analysis_potential", "pareto", "mark"],
    )


def frontier_order(result: SearchResult) -> list:
    """The search's frontier as the page lists it, most useful first: the numbers of
    :func:`search_frontier_table` and the chart's marks."""
    return list(result.frontier[::-1])


def search_frontier_table(result: SearchResult) -> pd.DataFrame:
    """The frontier's recipes, numbered as on the chart: each searched column's setting, the
    judged risk and the analysis potential (a table names each point, so that the chart's
    labels are short numbers that never need to overlap)."""
    rows = []
    for number, point in enumerate(frontier_order(result), start=1):
        row: dict[str, Any] = {"#": number}
        row.update(dict(zip(result.columns, point.settings, strict=True)))
        row.update({"risk": point.risk, "analysis potential": point.analysis_potential})
        rows.append(row)
    return pd.DataFrame(rows)


def search_top_table(result: SearchResult, n: int = 10) -> pd.DataFrame:
    """The best ``n`` recipes: each searched column's setting, the judged risk, AP and the
    masked effect with its 95% interval."""
    rows = []
    for rank, point in enumerate(result.top(n), start=1):
        row: dict[str, Any] = {"rank": rank}
        row.update(dict(zip(result.columns, point.settings, strict=True)))
        row.update(
            {
                "risk": point.risk,
                "k": point.k,
                "records removed": point.records_removed,
                "analysis potential": point.analysis_potential,
                "masked effect": point.estimate,
                "95% CI low": point.ci_low,
                "95% CI high": point.ci_high,
                "note": point.note,
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


def in_words(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``frame`` as ``st.dataframe`` should show it: missing text ("None") as a dash, and a
    column configuration that labels each code-like column name in words (``true_score`` as
    "true score"); the data keep their names."""
    shown = frame.copy()
    for column in shown.columns:
        if shown[column].dtype == object:
            shown[column] = shown[column].map(lambda v: DASH if v is None else v)
    labels = {
        column: st.column_config.Column(column.replace("_", " "))
        for column in shown.columns
        if isinstance(column, str) and "_" in column
    }
    return shown, labels
