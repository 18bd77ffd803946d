"""Altair charts of the pages only: profiles, population uniques, match probabilities,
replicates, intervals, smoothing profiles, uniqueness weights and the ROC attack.

The charts the report shares with the pages (the R-U map, class sizes, the before/after
distribution) are defined once in :mod:`deid_core.charts` and importable from here too.
:func:`show_chart` draws any of them with a title and its data as a table under a toggle."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard.text import literal

# The shared definitions, re-exported for the pages and the tours.
from deid_core.charts import class_size_chart as class_size_chart
from deid_core.charts import distribution_chart as distribution_chart
from deid_core.charts import ru_map as ru_map
from deid_core.charts import spec_of


def profile_chart(points: pd.DataFrame, parameter: str) -> alt.Chart:
    """Security and analysis potential against the swept parameter (Zhou et al.'s view)."""
    long = points.melt(
        id_vars=["label"],
        value_vars=["security", "analysis_potential"],
        var_name="measure",
        value_name="score",
    ).dropna(subset=["score"])
    long["measure"] = long["measure"].map(
        {"security": "security (1 − risk)", "analysis_potential": "analysis potential"}
    )
    order = points["label"].tolist()
    return (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x=alt.X("label:N", sort=order, title=parameter, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("score:Q", title="Score (0..1)", scale=alt.Scale(domain=[0, 1], clamp=True)),
            color=alt.Color("measure:N", legend=alt.Legend(title=None, orient="bottom")),
            tooltip=[
                alt.Tooltip("label:N", title=parameter),
                "measure:N",
                alt.Tooltip("score:Q", format=".4f"),
            ],
        )
        .properties(height=260)
    )


def population_uniqueness_chart(
    curve: list[tuple[float, dict[str, float]]], current: float | None = None
) -> alt.Chart:
    """Estimated share of population uniques against the sampling fraction, one line per
    estimator (and the one Dankar et al.'s rule selects), the current fraction marked."""
    names = {"zayatz": "Zayatz", "pitman": "Pitman", "snb": "SNB", "dankar": "Selected (Dankar)"}
    rows = [
        {"fraction": pi, "estimator": names[name], "share": share}
        for pi, shares in curve
        for name, share in shares.items()
        if share == share
    ]
    lines = (
        alt.Chart(pd.DataFrame(rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("fraction:Q", title="Sampling fraction", scale=alt.Scale(type="log")),
            y=alt.Y("share:Q", title="Population uniques (share)"),
            color=alt.Color("estimator:N", title=None, legend=alt.Legend(orient="bottom")),
            strokeDash=alt.condition(
                alt.datum.estimator == "Selected (Dankar)", alt.value([6, 3]), alt.value([1, 0])
            ),
            tooltip=["estimator", alt.Tooltip("fraction:Q"), alt.Tooltip("share:Q", format=".4f")],
        )
    )
    if current is None:
        return lines
    rule = (
        alt.Chart(pd.DataFrame({"fraction": [current]}))
        .mark_rule(color="#f58518")
        .encode(x="fraction:Q")
    )
    return lines + rule


def match_probability_chart(probability: np.ndarray) -> alt.Chart:
    """Cologne's Figure 2: released records by the probability of a correct identification
    (1/i when the record's own source record is among its i matches, else 0)."""
    bins = [
        ("1", probability == 1),
        ("1/2", np.isclose(probability, 1 / 2)),
        ("1/3", np.isclose(probability, 1 / 3)),
        ("1/4", np.isclose(probability, 1 / 4)),
        ("1/5 to 1/10", (probability < 0.2 + 1e-9) & (probability >= 0.1 - 1e-9)),
        ("below 1/10", (probability > 0) & (probability < 0.1 - 1e-9)),
        ("0", probability == 0),
    ]
    frame = pd.DataFrame(
        {"probability": [b for b, _ in bins], "records": [int(m.sum()) for _, m in bins]}
    )
    return (
        alt.Chart(frame)
        .mark_bar(color="#4c78a8")
        .encode(
            x=alt.X(
                "probability:N",
                sort=[b for b, _ in bins],
                title="Probability of correctly identifying the record (1 / number of matches)",
                axis=alt.Axis(labelAngle=0),
            ),
            y=alt.Y("records:Q", title="Released records"),
            tooltip=["probability", "records"],
        )
    )


def replicate_estimates_chart(estimates: tuple[float, ...], original: float) -> alt.Chart:
    """Histogram of the replicate estimates with the unmasked estimate as a red line."""
    bars = (
        alt.Chart(pd.DataFrame({"estimate": list(estimates)}))
        .mark_bar(color="#4c78a8")
        .encode(
            x=alt.X("estimate:Q", bin=alt.Bin(maxbins=30), title="Estimate b in each replicate"),
            y=alt.Y("count():Q", title="Replicates"),
        )
    )
    line = (
        alt.Chart(pd.DataFrame({"estimate": [original]}))
        .mark_rule(color="#e45756", strokeWidth=2)
        .encode(x="estimate:Q", tooltip=[alt.Tooltip("estimate:Q", title="unmasked", format=".4f")])
    )
    return bars + line


def interval_chart(rows: Sequence[tuple[str, float, float, float]], reference: float) -> alt.Chart:
    """Point estimates with their intervals, one row per (label, estimate, low, high), and a
    red line at the unmasked estimate ``reference``."""
    data = pd.DataFrame(rows, columns=["interval", "estimate", "low", "high"])
    y = alt.Y("interval:N", title=None, sort=None)
    tooltip = [
        "interval:N",
        alt.Tooltip("estimate:Q", format=".4f"),
        alt.Tooltip("low:Q", format=".4f"),
        alt.Tooltip("high:Q", format=".4f"),
    ]
    bars = (
        alt.Chart(data)
        .mark_rule(strokeWidth=3, color="#4c78a8")
        .encode(x=alt.X("low:Q", title="Exposure coefficient b"), x2="high:Q", y=y, tooltip=tooltip)
    )
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=80, color="#4c78a8")
        .encode(x="estimate:Q", y=y, tooltip=tooltip)
    )
    line = (
        alt.Chart(pd.DataFrame({"estimate": [reference]}))
        .mark_rule(color="#e45756", strokeDash=[4, 3])
        .encode(x="estimate:Q")
    )
    return (bars + points + line).properties(height=40 * len(rows) + 40)


def _current_rule(current: float | None) -> alt.Chart | None:
    if current is None:
        return None
    return (
        alt.Chart(pd.DataFrame({"value": [current]}))
        .mark_rule(color="#54a24b", strokeDash=[2, 2])
        .encode(x="value:Q", tooltip=[alt.Tooltip("value:Q", title="current bandwidth")])
    )


def _layer(*charts: alt.Chart | None) -> alt.LayerChart:
    return alt.layer(*[c for c in charts if c is not None])


def profile_estimate_chart(
    table: pd.DataFrame, original: float | None, current: float | None
) -> alt.LayerChart:
    """Masked estimate against the bandwidth per kernel, with naive intervals (bars) and
    bootstrap intervals (ticks), the unmasked estimate (red) and the current bandwidth."""
    data = table.dropna(subset=["estimate"])
    x = alt.X("value:Q", title="Bandwidth λ")
    color = alt.Color("form:N", title="Kernel")
    line = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("estimate:Q", title="Masked estimate b", scale=alt.Scale(zero=False)),
            color=color,
            tooltip=["form:N", "value:Q", alt.Tooltip("estimate:Q", format=".4f")],
        )
    )
    naive = (
        alt.Chart(data)
        .mark_errorbar(opacity=0.5)
        .encode(
            x=x, y=alt.Y("naive_low:Q", title="Masked estimate b"), y2="naive_high:Q", color=color
        )
    )
    parts: list[alt.Chart | None] = [naive, line]
    if data["bootstrap_low"].notna().any():
        parts.append(
            alt.Chart(data.dropna(subset=["bootstrap_low"]))
            .mark_errorbar(ticks=True, thickness=2)
            .encode(x=x, y="bootstrap_low:Q", y2="bootstrap_high:Q", color=color)
        )
    if original is not None:
        parts.append(
            alt.Chart(pd.DataFrame({"estimate": [original]}))
            .mark_rule(color="#e45756")
            .encode(y="estimate:Q", tooltip=[alt.Tooltip("estimate:Q", title="unmasked")])
        )
    parts.append(_current_rule(current))
    return _layer(*parts).properties(title="Estimate (95% intervals; red: unmasked)")


def profile_metric_chart(
    table: pd.DataFrame, column: str, title: str, current: float | None
) -> alt.LayerChart:
    """One profile figure (MSE, risk...) against the bandwidth, one line per kernel."""
    data = table.dropna(subset=[column])
    line = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("value:Q", title="Bandwidth λ"),
            y=alt.Y(f"{column}:Q", title=title),
            color=alt.Color("form:N", title="Kernel"),
            tooltip=["form:N", "value:Q", alt.Tooltip(f"{column}:Q", format=".4g")],
        )
    )
    return _layer(line, _current_rule(current)).properties(title=f"{title} (lower is better)")


def profile_risk_mse_chart(table: pd.DataFrame) -> alt.Chart:
    """Risk against MSE, one path per kernel in order of bandwidth (bottom left is best)."""
    data = table.dropna(subset=["mse", "match_share"])
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("mse:Q", title="MSE of the estimate"),
            y=alt.Y("match_share:Q", title="Expected share of correct matches"),
            color=alt.Color("form:N", title="Kernel"),
            order="value:Q",
            tooltip=[
                "form:N",
                "value:Q",
                alt.Tooltip("mse:Q", format=".4g"),
                alt.Tooltip("match_share:Q", format=".3f"),
            ],
        )
        .properties(title="Risk against MSE (bottom left is best)")
    )


def uniqueness_weights_chart(weights: pd.DataFrame, worst: str | None = None) -> alt.Chart:
    """The RU weight of each key variable (``variable``, ``weight``), largest on top; the
    variable to collapse first in red."""
    data = weights.assign(
        role=["collapse first" if v == worst else "other variables" for v in weights["variable"]]
    )
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("variable:N", sort="-x", title=None),
            x=alt.X("weight:Q", title="RU weight (contribution to ln % unique)"),
            color=alt.Color(
                "role:N",
                scale=alt.Scale(
                    domain=["collapse first", "other variables"], range=["#e45756", "#4c78a8"]
                ),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            tooltip=["variable:N", alt.Tooltip("weight:Q", format=".4f")],
        )
        .properties(
            height=alt.Step(28),  # a fixed height squeezes the bands in Streamlit 1.67
            title="Weight of each variable (larger: more uniques; collapse it first)",
        )
    )


def roc_attack_chart(
    segments: pd.DataFrame, recovered: pd.Series, published_fpr, published_tpr
) -> alt.LayerChart:
    """The empirical ROC path, one unit step per record: known records grey, unknown records
    red when the intruder recovers their status and orange otherwise; the published curve in
    blue with its points."""
    data = segments.copy()
    rank = data["unknown_rank"].clip(lower=0)
    recovered_by_rank = recovered.reindex(rank).to_numpy()
    data["step"] = np.where(
        data["known"],
        "known record",
        np.where(recovered_by_rank, "unknown: status recovered", "unknown: not recovered"),
    )
    scale = alt.Scale(
        domain=["known record", "unknown: status recovered", "unknown: not recovered", "published"],
        range=["#bab0ac", "#e45756", "#f58518", "#4c78a8"],
    )
    axis_x = alt.X(
        "fpr0:Q", title="False positive rate (1 − specificity)", scale=alt.Scale(domain=[0, 1])
    )
    axis_y = alt.Y(
        "tpr0:Q", title="True positive rate (sensitivity)", scale=alt.Scale(domain=[0, 1])
    )
    steps = (
        alt.Chart(data)
        .mark_rule(strokeWidth=5)
        .encode(
            x=axis_x,
            y=axis_y,
            x2="fpr1:Q",
            y2="tpr1:Q",
            color=alt.Color("step:N", scale=scale, title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["step:N", "status:Q"],
        )
    )
    published = pd.DataFrame({"fpr0": published_fpr, "tpr0": published_tpr, "step": "published"})
    curve = (
        alt.Chart(published)
        .mark_line(point=alt.OverlayMarkDef(size=25), strokeDash=[4, 2], strokeWidth=1.5)
        .encode(
            x="fpr0:Q",
            y="tpr0:Q",
            color=alt.Color("step:N", scale=scale),
            tooltip=[
                alt.Tooltip("fpr0:Q", title="FPR", format=".3f"),
                alt.Tooltip("tpr0:Q", title="TPR", format=".3f"),
            ],
        )
    )
    return (curve + steps).properties(height=420)


def roc_mitigation_chart(table: pd.DataFrame, current: str | None) -> alt.LayerChart:
    """R-U view of the released curve: security (1 − share of unknown statuses recovered)
    against utility (1 − |AUC change|), one labelled point per way of publishing it."""
    data = table.assign(
        security=1 - table["share_status_recovered"],
        current=table["published"] == current,
    )
    base = alt.Chart(data).encode(
        x=alt.X("utility:Q", title="Utility: 1 − |AUC change|", scale=alt.Scale(zero=False)),
        y=alt.Y(
            "security:Q",
            title="Security: 1 − share of statuses recovered",
            scale=alt.Scale(domain=[0, 1]),
        ),
        tooltip=[
            "published:N",
            alt.Tooltip("share_status_recovered:Q", format=".2f", title="statuses recovered"),
            alt.Tooltip("share_pinned:Q", format=".2f", title="pinned to a rank"),
            alt.Tooltip("auc_published:Q", format=".4f", title="AUC published"),
            alt.Tooltip("max_vertical_distance:Q", format=".3f", title="max vertical distance"),
        ],
    )
    points = base.mark_circle(size=90).encode(
        color=alt.condition("datum.current", alt.value("#e45756"), alt.value("#4c78a8"))
    )
    labels = base.mark_text(align="left", dx=7, dy=-4, fontSize=11).encode(text="published:N")
    return (points + labels).properties(height=380)


# ---------------------------------------------------------------------------- drawing
#: Columns that place marks and mean nothing to a reader of the chart's data table.
_LAYOUT_COLUMNS = ("order", "dy", "series")


def chart_table(chart: alt.TopLevelMixin) -> pd.DataFrame:
    """The data a chart shows, as a table (its text alternative): the data of the first
    layer with tooltips (the marks a reader points at), else of the first layer with data;
    columns that only place marks are left out."""
    layers = list(getattr(chart, "layer", None) or [chart])
    frames = [layer.data for layer in layers if isinstance(layer.data, pd.DataFrame)]
    if isinstance(getattr(chart, "data", None), pd.DataFrame):
        frames.insert(0, chart.data)
    tipped = [
        layer.data
        for layer in layers
        if isinstance(layer.data, pd.DataFrame) and _has_tooltip(layer)
    ]
    table = (tipped or frames or [pd.DataFrame()])[0]
    return table.drop(columns=[c for c in _LAYOUT_COLUMNS if c in table.columns])


def _has_tooltip(layer: alt.TopLevelMixin) -> bool:
    encoding = getattr(layer, "encoding", alt.Undefined)
    return encoding is not alt.Undefined and getattr(encoding, "tooltip", alt.Undefined) not in (
        alt.Undefined,
        None,
    )


def show_chart(
    chart: alt.TopLevelMixin,
    title: str | None = None,
    table: pd.DataFrame | None = None,
    where: Any = None,
) -> None:
    """Draw ``chart`` with a title (its own, which the report draws too, else ``title``) and,
    under it, a toggle that shows its data as a table: the chart's text alternative, for
    screen readers and for anyone who wants the numbers (``table``; by default
    :func:`chart_table`)."""
    where = st if where is None else where
    own = getattr(chart, "title", alt.Undefined)
    if isinstance(own, str) and own:
        title = own
    elif title:
        chart = chart.properties(title=title)
    else:
        raise ValueError("A chart needs a title.")
    # As a specification: its titles made safe for Vega-Lite's expressions (a column named
    # with a backslash and a quotation mark, or a line break, would make the chart fail).
    where.vega_lite_chart(spec=spec_of(chart), width="stretch")
    if where.toggle(f"Show as a table: {literal(title)}", help="The numbers this chart draws."):
        where.dataframe(chart_table(chart) if table is None else table, hide_index=True)
