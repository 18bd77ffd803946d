"""The report's charts as PNG bytes: class sizes before and after masking, the exposure's
distribution, and the R-U map of one sweep with the chosen point.

Drawn with matplotlib's Agg renderer through its object-oriented API (no display, no global
pyplot state), so the same bytes go into the HTML and the PDF.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from deid_core.risk import RiskSummary
from deid_core.tradeoff.rumap import RUPoint

#: Class-size buckets of the class-size chart: (label, lowest size, highest size).
CLASS_BUCKETS = (
    ("1", 1, 1),
    ("2", 2, 2),
    ("3-4", 3, 4),
    ("5-10", 5, 10),
    ("11-20", 11, 20),
    ("21-50", 21, 50),
    ("51+", 51, None),
)


def _new_figure(width: float = 7.0, height: float = 3.6):
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width, height), dpi=110)
    return fig, fig.add_subplot(1, 1, 1)


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def class_size_buckets(class_size: np.ndarray) -> list[int]:
    """Records per class-size bucket (:data:`CLASS_BUCKETS`)."""
    sizes = np.asarray(class_size, dtype=float)
    counts = []
    for _, low, high in CLASS_BUCKETS:
        upper = np.inf if high is None else high
        counts.append(int(((sizes >= low) & (sizes <= upper)).sum()))
    return counts


def class_size_chart(before: RiskSummary, after: RiskSummary, min_cell_size: int) -> bytes:
    fig, ax = _new_figure()
    labels = [label for label, _, _ in CLASS_BUCKETS]
    x = np.arange(len(labels))
    ax.bar(x - 0.2, class_size_buckets(before.class_size), 0.4, label="Before masking")
    ax.bar(x + 0.2, class_size_buckets(after.class_size), 0.4, label="After masking")
    ax.set_xticks(x, labels)
    ax.set_xlabel("Size of the equivalence class")
    ax.set_ylabel(after.unit.capitalize())
    small = [i for i, (_, low, _) in enumerate(CLASS_BUCKETS) if low < min_cell_size]
    if small:
        ax.axvspan(-0.5, max(small) + 0.5, color="#d62728", alpha=0.08, lw=0)
    ax.legend()
    return _png(fig)


def distribution_chart(before: pd.Series, after: pd.Series, column: str) -> bytes | None:
    """Overlaid histograms of a numeric column before and after masking (None if the masked
    column is not numeric)."""
    original = pd.to_numeric(before, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if not pd.api.types.is_numeric_dtype(after.dtype) or pd.api.types.is_bool_dtype(after.dtype):
        return None
    masked = after.to_numpy(dtype=float, na_value=np.nan)
    original, masked = original[np.isfinite(original)], masked[np.isfinite(masked)]
    if original.size == 0 or masked.size == 0:
        return None
    low = min(original.min(), masked.min())
    high = max(original.max(), masked.max())
    bins = np.linspace(low, high if high > low else low + 1.0, 41)
    fig, ax = _new_figure()
    ax.hist(original, bins=bins, alpha=0.55, label="Before masking")
    ax.hist(masked, bins=bins, alpha=0.55, label="After masking", histtype="stepfilled")
    ax.set_xlabel(column)
    ax.set_ylabel("Records")
    counts = np.histogram(original, bins=bins)[0]
    if counts.max() > 20 * np.median(counts[counts > 0]):  # a skewed exposure: log counts
        ax.set_yscale("log")
        ax.set_ylabel("Records (log scale)")
    ax.legend()
    return _png(fig)


def rumap_chart(
    points: Sequence[RUPoint],
    chosen: tuple[float, float | None],
    parameter: str,
    show_values: bool,
) -> bytes:
    fig, ax = _new_figure(6.4, 4.4)
    usable = [p for p in points if p.analysis_potential is not None]
    xs = [p.analysis_potential for p in usable]
    ys = [p.security for p in usable]
    ax.plot(xs, ys, "-o", color="#1f77b4", label=f"Sweep of {parameter}")
    if show_values:
        for p in usable:
            ax.annotate(
                p.label.split(" = ")[-1],
                (p.analysis_potential, p.security),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
            )
    has_point = chosen[1] is not None and math.isfinite(chosen[0])
    if has_point:
        ax.plot(
            [chosen[1]], [chosen[0]], marker="*", ms=16, color="#d62728", ls="", label="This recipe"
        )
    ax.set_xlabel("Analysis potential (utility)")
    ax.set_ylabel("Security (1 - risk)")
    ax.set_xlim(min([0.0, *xs]) - 0.02, max([1.0, *xs]) + 0.02)
    ax.set_ylim(min([0.0, *ys, *([chosen[0]] if has_point else [])]) - 0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")
    return _png(fig)
