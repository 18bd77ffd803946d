"""The charts the pages, the Learn tours and the release report share, each defined once as an
Altair chart (a Vega-Lite specification).

The dashboard draws these charts with ``st.altair_chart``; the report renders the same
specifications to PNG (PDF) and SVG (HTML) with vl-convert (:mod:`deid_core.report.charts`), so
what the user saw is what the ethics board reads.

Only aggregates go into a specification: records per class-size bin, histogram counts per bin
(binned here with numpy, never by Vega-Lite from the records), one point per swept value.

- :func:`class_size_chart`: records by the size of their equivalence class, before and after
  masking, coloured by whether the class meets the minimum cell size (the bins split exactly at
  the minimum cell size, so a bar is never half below it).
- :func:`distribution_chart`: a numeric column's histogram before and after masking on shared
  bins.
- :func:`ru_map`: Cologne et al.'s risk-utility map: security (1 - risk) against analysis
  potential, the Pareto frontier, Cologne's fitted curve ``(1 - AP^theta)^(1/theta)``, the
  threshold line and the current recipe.
"""

from __future__ import annotations

import json
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from deid_core.tradeoff.rumap import cologne_curve

#: Series of the R-U map and their colours (one legend for every layer).
_SERIES = {
    "Sweep points": "#4c78a8",
    "Pareto frontier": "#54a24b",
    "Cologne curve": "#9d9d9d",
    "Threshold": "#e45756",
    "Current": "#f58518",
}
#: How each series is told apart without its colour: the legend's symbol (a line symbol,
#: "stroke", for the lines) and the line's dashes (none for points and the frontier).
_SERIES_SYMBOL = {
    "Sweep points": "circle",
    "Pareto frontier": "stroke",
    "Cologne curve": "stroke",
    "Threshold": "stroke",
    "Current": "diamond",
}
_SERIES_DASH = {
    "Sweep points": [1, 0],
    "Pareto frontier": [1, 0],
    "Cologne curve": [2, 2],
    "Threshold": [8, 4],
    "Current": [1, 0],
}

#: Lower edges of the class-size bins; the minimum cell size is always added as an edge.
CLASS_SIZE_EDGES = (1, 2, 3, 4, 5, 6, 11, 20, 50, 100)

#: Bins of the before/after histogram (about; see :func:`nice_bin_edges`).
HISTOGRAM_BINS = 40

#: The data series of the before/after charts.
BEFORE, AFTER = "before masking", "after masking"


def spec_of(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart's Vega-Lite specification as plain JSON data (what both renderers receive),
    its titles made safe for Vega-Lite's expressions (:func:`vega_safe`)."""
    return vega_safe(json.loads(chart.to_json()))


#: Channels whose title a legend shows (the others' an axis).
_LEGEND_CHANNELS = frozenset(
    {"color", "fill", "stroke", "shape", "size", "opacity", "strokeDash", "strokeWidth"}
)


def _expression_text(text: str) -> str:
    """``text`` as it must be written for Vega-Lite to quote it into an expression: Vega-Lite
    escapes the quotation marks of a title it writes into a JavaScript string (a tooltip, the
    ARIA description of a mark) but neither backslashes nor line breaks, so a title holding
    ``\\"`` or a newline made the whole chart fail ("Expression parse error"). Escaped here,
    the string evaluates to ``text`` as written."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def _needs_escape(text: object) -> bool:
    return isinstance(text, str) and any(c in text for c in "\\\n\r")


def vega_safe(spec: Any) -> Any:
    """``spec`` with every encoding title that Vega-Lite writes into an expression escaped
    (:func:`_expression_text`), where it must be: a tooltip's title is only ever evaluated, so
    it is escaped; a channel's title is also drawn as literal text on its axis or legend, so
    the guide gets the title as written and the channel (for the expressions) the escaped one.
    Text drawn as such (chart titles, labels from the data) is untouched."""
    if isinstance(spec, list):
        return [vega_safe(item) for item in spec]
    if not isinstance(spec, dict):
        return spec
    safe = {key: vega_safe(value) for key, value in spec.items()}
    encoding = safe.get("encoding")
    if isinstance(encoding, dict):
        safe["encoding"] = {name: _safe_channel(name, value) for name, value in encoding.items()}
    return safe


def _safe_channel(name: str, channel: Any) -> Any:
    if name == "tooltip":
        entries = channel if isinstance(channel, list) else [channel]
        escaped = [
            {**entry, "title": _expression_text(entry["title"])}
            if isinstance(entry, dict) and _needs_escape(entry.get("title"))
            else entry
            for entry in entries
        ]
        return escaped if isinstance(channel, list) else escaped[0]
    if not isinstance(channel, dict) or not _needs_escape(channel.get("title")):
        return channel
    title = channel["title"]
    guide = "legend" if name in _LEGEND_CHANNELS else "axis"
    channel = {**channel, "title": _expression_text(title)}
    if isinstance(channel.get(guide), dict):
        channel[guide] = {"title": title, **channel[guide]}
    elif channel.get(guide, {}) is not None:
        channel[guide] = {"title": title}
    return channel


# ---------------------------------------------------------------------------- class sizes
def class_size_bins(min_cell_size: int) -> list[tuple[int, int | None]]:
    """(lowest, highest) class size of each bin (highest None: open-ended); the minimum cell
    size starts a bin, so every bin lies wholly below it or wholly at or above it."""
    edges = sorted({*CLASS_SIZE_EDGES, max(int(min_cell_size), 1)})
    return [(low, edges[i + 1] - 1 if i + 1 < len(edges) else None) for i, low in enumerate(edges)]


def class_size_distribution(
    class_size: np.ndarray, min_cell_size: int, label: str = AFTER
) -> pd.DataFrame:
    """Records per class-size bin (:func:`class_size_bins`), each bin flagged below / at or
    above the minimum cell size; ``label`` names the data (before or after masking)."""
    sizes = np.asarray(class_size)
    rows = []
    for order, (low, high) in enumerate(class_size_bins(min_cell_size)):
        if high is None:
            inside = sizes >= low
            name = f"{low}+"
        else:
            inside = (sizes >= low) & (sizes <= high)
            name = str(low) if low == high else f"{low}–{high}"
        rows.append(
            {
                "class size": name,
                "records": int(inside.sum()),
                "status": _size_statuses(min_cell_size)[0 if low < min_cell_size else 1],
                "data": label,
                "order": order,
            }
        )
    return pd.DataFrame(rows)


def _size_statuses(min_cell_size: int) -> list[str]:
    return [f"below the minimum cell size {min_cell_size}", f"at or above {min_cell_size}"]


def class_size_chart(
    class_size: np.ndarray,
    min_cell_size: int,
    before: np.ndarray | None = None,
    unit: str = "records",
) -> alt.Chart:
    """Bar chart of records (or people, ``unit``, when a person has several rows and sizes
    count people) by the size of their equivalence class (risk = 1 / size): the masked data's
    class sizes ``class_size`` and, when given, the unmasked ``before`` beside them (paler
    bars). Red bars hold records in classes below the minimum cell size."""
    tables = [class_size_distribution(class_size, min_cell_size, AFTER)]
    if before is not None:
        tables.insert(0, class_size_distribution(before, min_cell_size, BEFORE))
    table = pd.concat(tables, ignore_index=True)
    order = tables[0]["class size"].tolist()
    encoding: dict[str, Any] = {}
    if before is not None:
        encoding = {
            "xOffset": alt.XOffset("data:N", sort=[BEFORE, AFTER]),
            "opacity": alt.Opacity(
                "data:N",
                scale=alt.Scale(domain=[BEFORE, AFTER], range=[0.4, 1.0]),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
        }
    return (
        alt.Chart(table)
        .mark_bar()
        .encode(
            x=alt.X(
                "class size:N",
                sort=order,
                title=f"Equivalence class size (per-{unit[:-1]} risk = 1 / size)",
                axis=alt.Axis(labelAngle=0),
            ),
            y=alt.Y("records:Q", title=unit.capitalize()),
            color=alt.Color(
                "status:N",
                scale=alt.Scale(domain=_size_statuses(min_cell_size), range=["#e45756", "#4c78a8"]),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            tooltip=["data", "class size", "records", "status"],
            **encoding,
        )
        .properties(height=300, title="Records by the size of their equivalence class")
    )


# ---------------------------------------------------------------------------- distribution
def _finite(series: pd.Series) -> np.ndarray:
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return values[np.isfinite(values)]


def nice_bin_edges(low: float, high: float, max_bins: int = HISTOGRAM_BINS) -> np.ndarray:
    """Edges of about ``max_bins`` equal bins covering [low, high] (two more at most, as the
    ends are rounded outwards), their width a round number (1, 2, 2.5 or 5 times a power of
    ten) and the ends multiples of it, as Vega-Lite's own binning chooses: the exact extremes
    of the data are not among the edges."""
    span = high - low
    if span <= 1e-9 * max(abs(low), abs(high), 1.0):  # one value (or nearly): a bin around it
        span = max(abs(low), 1.0)
    raw = span / max_bins
    power = 10.0 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw)
    start = np.floor(low / step) * step
    if start > low:  # rounding of low / step
        start -= step
    count = max(int(np.ceil((high - start) / step - 1e-9)), 1)
    if start + count * step <= high:  # the maximum must fall inside the last bin
        count += 1
    return start + step * np.arange(count + 1)


def histogram_table(original: pd.Series, masked: pd.Series) -> pd.DataFrame | None:
    """Counts of a numeric column before and after masking on shared bins
    (:func:`nice_bin_edges` over the range of both; None when either has no finite value, or
    the masked column is not numeric): columns bin_start, bin_end, records, data."""
    if not pd.api.types.is_numeric_dtype(masked.dtype) or pd.api.types.is_bool_dtype(masked.dtype):
        return None
    before, after = _finite(original), _finite(masked)
    if before.size == 0 or after.size == 0:
        return None
    edges = nice_bin_edges(
        float(min(before.min(), after.min())), float(max(before.max(), after.max()))
    )
    parts = []
    for label, values in ((BEFORE, before), (AFTER, after)):
        counts = np.histogram(values, bins=edges)[0]
        parts.append(
            pd.DataFrame(
                {"bin_start": edges[:-1], "bin_end": edges[1:], "records": counts, "data": label}
            )
        )
    return pd.concat(parts, ignore_index=True)


def distribution_chart(original: pd.Series, masked: pd.Series, column: str) -> alt.Chart | None:
    """Overlaid histograms of a numeric column before and after masking on shared bins (None
    when the masked column is not numeric or either side has no value). A skewed column (the
    tallest bar over 20 times the median bar) gets a symmetric-log count axis."""
    table = histogram_table(original, masked)
    if table is None:
        return None
    counts = table.loc[table["data"] == BEFORE, "records"].to_numpy()
    skewed = counts.max() > 20 * np.median(counts[counts > 0])
    y_title = "Records (symmetric log scale)" if skewed else "Records"
    return (
        alt.Chart(table)
        .mark_bar(opacity=0.5, binSpacing=0)
        .encode(
            x=alt.X("bin_start:Q", bin="binned", title=column),
            x2="bin_end:Q",
            y=alt.Y(
                "records:Q",
                stack=None,
                title=y_title,
                scale=alt.Scale(type="symlog") if skewed else alt.Undefined,
            ),
            color=alt.Color(
                "data:N",
                scale=alt.Scale(domain=[BEFORE, AFTER], range=["#4c78a8", "#f58518"]),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            stroke=alt.Stroke(
                "data:N",
                scale=alt.Scale(domain=[BEFORE, AFTER], range=["#1f3f66", "#8a4a0b"]),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            strokeDash=alt.StrokeDash(
                "data:N",
                scale=alt.Scale(domain=[BEFORE, AFTER], range=[[1, 0], [4, 2]]),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            tooltip=[
                "data:N",
                alt.Tooltip("bin_start:Q", format=".4g", title="from"),
                alt.Tooltip("bin_end:Q", format=".4g", title="to"),
                "records:Q",
            ],
        )
        .properties(title=f"{column}: distribution before and after masking")
    )


# ---------------------------------------------------------------------------- R-U map
def _series_channels(domain: list[str]) -> dict[str, Any]:
    """Colour, legend symbol and dashes of the R-U map's series, over the series drawn only
    (so the legend lists no series that is not on the chart); the three channels share one
    legend, whose symbols show the dashes and shapes, not only the colours."""
    legend = alt.Legend(title=None, orient="bottom", columns=2, symbolStrokeWidth=2)
    return {
        "color": alt.Color(
            "series:N",
            scale=alt.Scale(domain=domain, range=[_SERIES[s] for s in domain]),
            legend=legend,
        ),
        "shape": alt.Shape(
            "series:N",
            scale=alt.Scale(domain=domain, range=[_SERIES_SYMBOL[s] for s in domain]),
            legend=legend,
        ),
        "strokeDash": alt.StrokeDash(
            "series:N",
            scale=alt.Scale(domain=domain, range=[_SERIES_DASH[s] for s in domain]),
            legend=legend,
        ),
    }


def spread_labels(
    table: pd.DataFrame, x: str, y: str, precision: tuple[float, float]
) -> pd.DataFrame:
    """One label per position (points within ``precision`` = (on x, on y) of each other share
    a label, "0, 1, 2"), their vertical offsets alternating above and below the points in
    order of ``x`` so that neighbours' labels do not overlap: columns x, y, label, dy."""
    if table.empty:
        return pd.DataFrame({x: [], y: [], "label": [], "dy": []})
    keys = (
        (table[x] / precision[0]).round().astype(int).astype(str)
        + ":"
        + (table[y] / precision[1]).round().astype(int).astype(str)
    )
    grouped = (
        table.assign(_key=keys.to_numpy())
        .groupby("_key", sort=False)
        .agg(**{x: (x, "mean"), y: (y, "mean"), "label": ("label", ", ".join)})
        .sort_values(x)
        .reset_index(drop=True)
    )
    grouped["dy"] = [-9 if i % 2 == 0 else 13 for i in range(len(grouped))]
    return grouped


def ru_map(
    points: pd.DataFrame,
    *,
    theta: float | None,
    threshold_security: float | None,
    current: tuple[float, float | None] | None = None,
    parameter: str = "value",
    height: int = 380,
    zoom: bool = False,
    title: str = "Risk-utility map: security against analysis potential",
) -> alt.LayerChart:
    """Security (y, 0..1) against analysis potential (x, 0..1), ideal at the top right.

    ``points`` has columns label, security, analysis_potential (None where the model could not
    be fitted: those points are left out) and pareto (bool), as
    :func:`deid_core.tradeoff.rumap.points_frame` gives; other columns are ignored but an
    optional ``mark``: the text written beside each point in place of its label (empty: none;
    a short number that a table beside the chart explains, so that labels never need to
    overlap), the label staying in the tooltip.
    ``theta`` draws Cologne's fitted curve, ``threshold_security`` the threshold line and
    ``current`` = (security, AP) the current recipe.
    """
    marked = "mark" in points.columns
    usable = points.loc[
        points["analysis_potential"].notna(),
        ["label", "security", "analysis_potential", "pareto", *(["mark"] if marked else [])],
    ].copy()
    usable["analysis_potential"] = usable["analysis_potential"].astype(float)
    usable["pareto"] = usable["pareto"].astype(bool)
    usable["series"] = "Sweep points"
    x_low, x_high = _x_domain(usable["analysis_potential"].tolist(), current, zoom)
    x = alt.X(
        "analysis_potential:Q",
        title="Analysis potential (utility, 1 = no loss) →",
        scale=alt.Scale(domain=[x_low, x_high], clamp=True, nice=False),
    )
    y = alt.Y(
        "security:Q",
        title="Security (1 − risk) →",
        scale=alt.Scale(domain=[0.0, 1.0], clamp=True, nice=False),
    )
    tooltip = [
        alt.Tooltip("label:N", title=parameter),
        alt.Tooltip("security:Q", format=".3f", title="security"),
        alt.Tooltip("analysis_potential:Q", format=".4f", title="analysis potential"),
    ]
    drawn = [
        name
        for name, present in (
            ("Sweep points", not usable.empty),
            ("Pareto frontier", int(usable["pareto"].sum()) >= 2),
            ("Cologne curve", theta is not None),
            ("Threshold", threshold_security is not None),
            ("Current", current is not None and current[1] is not None),
        )
        if present
    ]
    channels = _series_channels(drawn or ["Sweep points"])
    colour, dashes = channels["color"], channels["strokeDash"]
    layers: list[alt.Chart] = []

    if theta is not None:
        grid = np.linspace(max(x_low, 1e-6), 1.0, 200)
        curve = pd.DataFrame(
            {
                "analysis_potential": grid,
                "security": cologne_curve(grid, theta),
                "series": "Cologne curve",
            }
        )
        layers.append(
            alt.Chart(curve)
            .mark_line(strokeWidth=1.5)
            .encode(x=x, y=y, color=colour, strokeDash=dashes)
        )

    if threshold_security is not None:
        rule = pd.DataFrame({"security": [threshold_security], "series": "Threshold"})
        layers.append(
            alt.Chart(rule).mark_rule(strokeWidth=1.5).encode(y=y, color=colour, strokeDash=dashes)
        )

    front = usable[usable["pareto"]].sort_values("analysis_potential")
    if len(front) >= 2:
        front = front.assign(series="Pareto frontier")
        layers.append(
            alt.Chart(front)
            .mark_line(strokeWidth=2)
            .encode(x=x, y=y, color=colour, strokeDash=dashes)
        )

    if not usable.empty:
        layers.append(
            alt.Chart(usable)
            .mark_point(size=90, opacity=0.9, filled=True)
            .encode(x=x, y=y, color=colour, shape=channels["shape"], tooltip=tooltip)
        )
        # about a label's size on each axis (the y axis spans 0..1)
        precision = ((x_high - x_low) / 40, 1 / 25)
        written = usable
        if marked:
            written = usable[usable["mark"] != ""].drop(columns="label")
            written = written.rename(columns={"mark": "label"})
        labels = spread_labels(written, "analysis_potential", "security", precision)
        layers.append(
            alt.Chart(labels)
            .mark_text(align="left", dx=7, fontSize=11)
            .encode(x=x, y=y, text="label:N", yOffset=alt.YOffset("dy:Q", scale=None))
        )

    if current is not None and current[1] is not None:
        here = pd.DataFrame(
            {
                "security": [current[0]],
                "analysis_potential": [float(current[1])],
                "label": ["current"],
                "series": "Current",
            }
        )
        layers.append(
            alt.Chart(here)
            .mark_point(size=260, filled=True, opacity=1)
            .encode(x=x, y=y, color=colour, shape=channels["shape"], tooltip=tooltip[1:])
        )

    if not layers:
        empty = pd.DataFrame({"analysis_potential": [], "security": []})
        layers.append(alt.Chart(empty).mark_point().encode(x=x, y=y))
    chart = alt.layer(*layers).properties(height=height, title=title)
    return chart.resolve_scale(color="shared")


def _x_domain(
    aps: list[float], current: tuple[float, float | None] | None, zoom: bool
) -> tuple[float, float]:
    """0..1, widened past 1 when a point's analysis potential exceeds 1 (never clipped, so
    1.05 and 1.00 stay apart); with ``zoom`` the lower end moves up to the points."""
    values = [float(a) for a in aps]
    if current is not None and current[1] is not None:
        values.append(float(current[1]))
    if not values:
        return 0.0, 1.0
    high = max(1.0, float(np.ceil(max(values) * 100) / 100))
    low = 0.0
    if zoom:
        low = max(0.0, float(np.floor((min(values) - 0.005) * 100) / 100))
        low = min(low, high - 0.01)
    return low, high
