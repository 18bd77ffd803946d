"""Tables where people compare numbers: risk summary, Cologne's Table 2, sweep points.

Every number is formatted here as text, so "unavailable" can sit where a number cannot be
computed (never a 0 that looks like a result).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from dashboard.help import metric_help
from deid_core.risk import RiskSummary
from deid_core.utility import FitResult, UtilityResult

UNAVAILABLE = "unavailable"
DASH = "—"

UTILITY_COLUMNS = (
    "Estimate b",
    "SE",
    "Deviance",
    "LR statistic (p)",
    "Relative bias %",
    "MSE",
    "Analysis potential",
)


def _num(value: float | None, digits: int = 4) -> str:
    return UNAVAILABLE if value is None else f"{value:.{digits}f}"


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
    """Every closed-data risk figure with its definition."""
    rows: list[tuple[str, str, str]] = [
        ("Records", f"{summary.n_records:,}", metric_help("records")),
        ("Equivalence classes", f"{summary.n_classes:,}", metric_help("n_classes")),
        ("k (smallest class)", f"{summary.k:,}", metric_help("k")),
        ("Unique records", f"{summary.uniques:,}", metric_help("uniques")),
        (
            f"Records in classes of size ≤ {summary.small_class_size}",
            f"{summary.records_in_small_classes:,}",
            metric_help("small_classes"),
        ),
        ("Maximum risk", f"{summary.max_risk:.4f}", metric_help("max_risk")),
        ("Average risk (over records)", f"{summary.average_risk:.4f}", metric_help("average_risk")),
        (
            "Strict average risk",
            f"{summary.strict_average_risk:.4f}",
            metric_help("strict_average_risk"),
        ),
    ]
    for level, count in summary.k_violations.items():
        rows.append(
            (
                f"Records in classes smaller than {level} (k = {level} violations)",
                f"{count:,} ({100 * count / summary.n_records:.1f}%)",
                metric_help("k_violations"),
            )
        )
    return pd.DataFrame(rows, columns=["Measure", "Value", "Definition and direction"])


def _original_row(result: UtilityResult) -> dict[str, str]:
    fit = result.original
    assert fit is not None
    return {
        "Estimate b": f"{fit.estimate:.4f}",
        "SE": f"{fit.se:.4f}",
        "Deviance": f"{fit.deviance:.2f}",
        "LR statistic (p)": _lr(fit),
        "Relative bias %": "0.00 (reference)",
        "MSE": f"{fit.se**2:.5f}",
        "Analysis potential": "1.000 (reference)",
    }


def _unavailable_row() -> dict[str, str]:
    return dict.fromkeys(UTILITY_COLUMNS, UNAVAILABLE)


def utility_table(result: UtilityResult) -> pd.DataFrame:
    """Cologne et al. (2012) Table 2 layout: the unmasked fit, then the current recipe (for a
    random recipe: the mean over replicates, its (min, max), and one draw with its deviance)."""
    rows: dict[str, dict[str, str]] = {}
    if result.original is None:
        rows["No masking"] = _unavailable_row()
        rows["Current recipe"] = _unavailable_row()
        return _frame(rows)
    rows["No masking"] = _original_row(result)
    original = result.original
    reps = result.replicates
    if reps is not None:
        rows[f"Current recipe: mean of {reps.n_replicates - reps.n_failed} replicates"] = {
            "Estimate b": f"{reps.estimate_mean:.4f}",
            "SE": f"{reps.se_mean:.4f}",
            "Deviance": DASH,
            "LR statistic (p)": DASH,
            "Relative bias %": _pct(reps.relative_bias_mean),
            "MSE": f"{reps.mse_mean:.5f}",
            "Analysis potential": f"{reps.analysis_potential:.3f}",
        }
        rows["(min, max) over replicates"] = {
            "Estimate b": _range(reps.estimate_min, reps.estimate_max),
            "SE": _range(reps.se_min, reps.se_max),
            "Deviance": DASH,
            "LR statistic (p)": DASH,
            "Relative bias %": _range(reps.relative_bias_min, reps.relative_bias_max, pct=True),
            "MSE": _range(reps.mse_min, reps.mse_max, digits=5),
            "Analysis potential": DASH,
        }
        if result.masked is not None:
            rows["One draw (the released file)"] = _masked_row(original, result.masked)
        return _frame(rows)
    if result.masked is None:
        rows["Current recipe"] = _unavailable_row()
        return _frame(rows)
    rows["Current recipe"] = _masked_row(original, result.masked)
    return _frame(rows)


def _masked_row(original: FitResult, masked: FitResult) -> dict[str, str]:
    bias = (masked.estimate - original.estimate) / original.estimate if original.estimate else None
    mse = masked.se**2 + (masked.estimate - original.estimate) ** 2
    return {
        "Estimate b": f"{masked.estimate:.4f}",
        "SE": f"{masked.se:.4f}",
        "Deviance": f"{masked.deviance:.2f}",
        "LR statistic (p)": _lr(masked),
        "Relative bias %": _pct(bias),
        "MSE": f"{mse:.5f}",
        "Analysis potential": f"{original.se**2 / mse:.3f}",
    }


def _frame(rows: dict[str, dict[str, str]]) -> pd.DataFrame:
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(UTILITY_COLUMNS))
    table.index.name = "Data"
    return table


def sweep_points_table(points: pd.DataFrame, parameter: str, current: Any = None) -> pd.DataFrame:
    """The sweep's points as text, one row per parameter value."""
    rows = []
    for _, p in points.iterrows():
        ap = p["analysis_potential"]
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

    rows = []
    for _, r in table.iterrows():
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
                else num(r["mse"], 5)
                + (f" ({r['mse_min']:.5f}, {r['mse_max']:.5f})" if ranged else ""),
                "Analysis potential": UNAVAILABLE
                if unavailable
                else num(r["analysis_potential"], 3),
                "Note": "" if pd.isna(r["note"]) else str(r["note"]),
            }
        )
    return pd.DataFrame(rows)
