"""Bounds on every amount of work or memory an input can ask for.

Whatever sets how much the tool computes or holds (a file's rows, cells and unpacked bytes, the
steps of a recipe, replicates, resamples, sweep points, quantiles, key combinations, smoothing
points, a link's length...) can come from someone else: a shared link, a recipe file, an
uploaded file or a command-line argument. Each such amount has one :class:`Bound` here, checked
by the core before the work starts, so the dashboard, the command line, recipe files and links
share the same limits and the same one-line message, which names the bound, e.g.::

    The recipe has 80 kernel-smoothing steps; at most 10 are allowed (bound
    'smoothing_steps'). Smooth each variable once, with the same kernel.

The values are chosen so that a session of the hosted dashboard stays within its memory budget
(:data:`SESSION_MEMORY_BUDGET_BYTES`, stated in the README) and a request within about a
minute of one core at the worst; real analyses stay far below them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from deid_core.errors import DeidError, LimitError

MiB = 1024 * 1024


@dataclass(frozen=True)
class Bound:
    """The largest value an input may give one amount of work or memory.

    ``key`` names the bound in messages and in the README's table; ``what`` is the amount in
    plain words (singular: "kernel-smoothing step"); ``limit`` the largest value allowed;
    ``advice`` what to do instead, in one sentence; ``unit`` "bytes" for sizes (shown in MB).
    """

    key: str
    what: str
    limit: int
    advice: str = ""
    unit: str = ""

    def check(
        self, value: float, where: str = "The input has", error: type[DeidError] = LimitError
    ) -> None:
        """Raise ``error`` (a :class:`~deid_core.errors.LimitError` unless the caller's own
        kind of error reads better, e.g. a link's) when ``value`` exceeds the bound.

        ``where`` is the subject and verb of the message ("The file has", "--quantiles asks
        for"): "The file has 100,000 columns; at most 1,000 are allowed (bound 'columns').".
        NaN counts as exceeding the bound (it cannot be compared, so it cannot be allowed).
        """
        if (isinstance(value, float) and math.isnan(value)) or value > self.limit:
            raise error(self.message(value, where))

    def message(self, value: float, where: str = "The input has") -> str:
        """The one-line message for ``value`` (see :meth:`check`)."""
        if self.unit == "bytes":
            text = f"{where} more than {_megabytes(self.limit)} of {self.what}"
        else:
            verb = "is" if self.limit == 1 else "are"
            text = (
                f"{where} {_count(value)} {_plural(self.what, value)}; at most "
                f"{self.limit:,} {verb} allowed"
            )
        return f"{text} (bound '{self.key}').{' ' + self.advice if self.advice else ''}"

    def __str__(self) -> str:
        limit = _megabytes(self.limit) if self.unit == "bytes" else f"{self.limit:,}"
        return f"{self.key}: {limit} ({self.what})"


def _megabytes(size: int) -> str:
    return f"{size / MiB:,.0f} MB" if size >= MiB else f"{size / 1024:,.0f} KB"


def _count(value: float) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "an unbounded number of"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.6g}"
    try:
        return f"{int(value):,}"
    except (OverflowError, ValueError):
        return "an unbounded number of"


def _plural(noun: str, value: float) -> str:
    return noun if value == 1 else noun + "s"


# ---------------------------------------------------------------------------- files
FILE_BYTES = Bound(
    "file_bytes",
    "data",
    50 * MiB,
    "Keep only the columns and rows the analysis needs, or save the table as Parquet.",
    unit="bytes",
)
DECODED_BYTES = Bound(
    "decoded_bytes",
    "data once unpacked",
    512 * MiB,
    "The file unpacks (decompresses) to more than this session can hold; split it or keep "
    "only the columns the analysis needs.",
    unit="bytes",
)
COLUMNS = Bound(
    "columns",
    "column",
    1000,
    "Keep only the columns the analysis needs and load the file again.",
)
ROWS = Bound(
    "rows",
    "row",
    10_000_000,
    "Assess a sample, or run the command line on a Parquet file with an out-of-core engine.",
)
CELLS = Bound(
    "cells",
    "cell",
    30_000_000,
    "Keep only the columns the analysis needs (rows x columns must stay within the bound).",
)
EXCEL_CELLS = Bound(
    "excel_cells",
    "Excel cell",
    1_000_000,
    "Workbooks are slow to read (tens of thousands of cells a second); save the sheet as CSV "
    "or Parquet.",
)
CELL_BYTES = Bound(
    "cell_bytes",
    "text",
    1 * MiB,
    "A cell of a table holds a value, not a document; check that this is the right file, or "
    "drop the column that holds long text.",
    unit="bytes",
)
TEXT_FILE_BYTES = Bound(
    "text_file_bytes",
    "recipe or configuration text",
    1 * MiB,
    "A recipe lists columns and parameters, never data; check that this is the right file.",
    unit="bytes",
)
JSON_DEPTH = Bound(
    "json_depth",
    "nesting level",
    32,
    "A recipe nests objects and lists a few levels deep; check that this is the right file.",
)

# ---------------------------------------------------------------------------- links
LINK_CHARS = Bound(
    "link_chars",
    "character",
    8192,
    "Browsers and servers cut longer addresses; share the configuration file (Export page) "
    "instead.",
)
LINK_JSON_BYTES = Bound(
    "link_json_bytes",
    "configuration once unpacked",
    256 * 1024,
    "Share the configuration file instead.",
    unit="bytes",
)

# ---------------------------------------------------------------------------- recipes
RECIPE_STEPS = Bound(
    "recipe_steps",
    "masking step",
    100,
    "Mask each column with one or two steps.",
)
SMOOTHING_STEPS = Bound(
    "smoothing_steps",
    "kernel-smoothing step",
    10,
    "Smooth each variable once; the smoothed variables share one set of weights.",
)
LIST_ITEMS = Bound(
    "list_items",
    "listed value",
    10_000,
    "A step lists at most this many levels or breaks; merge fewer levels or use wider intervals.",
)
MIN_CELL_SIZE = Bound("min_cell_size", "record", 1000)

# ---------------------------------------------------------------------------- computations
REPLICATES = Bound(
    "replicates",
    "replicate",
    500,
    "A few dozen replicates give the mean analysis potential to about 1%.",
)
BOOTSTRAP_RESAMPLES = Bound(
    "bootstrap_resamples",
    "bootstrap resample",
    2000,
    "2,000 resamples give percentile intervals to about 0.5% of their coverage.",
)
SWEEP_POINTS = Bound(
    "sweep_points",
    "sweep value",
    200,
    "Sweep fewer values, then refine around the interesting ones.",
)
UNIQUENESS_KEYS = Bound(
    "uniqueness_keys",
    "key variable",
    12,
    "12 keys are 4,095 combinations; drop the keys no intruder would know.",
)
SMOOTHING_POINTS = Bound(
    "smoothing_points",
    "point",
    20_000,
    "The Gaussian, exponential and prior kernels weigh every pair of points; use the compact "
    "'epanechnikov' kernel, which only weighs neighbours within the bandwidth.",
)
NEIGHBOUR_PAIRS = Bound(
    "neighbour_pairs",
    "neighbour pair",
    20_000_000,
    "The compact kernel's bandwidth reaches too many neighbours; use a smaller bandwidth.",
)
ROC_QUANTILES = Bound(
    "roc_quantiles",
    "quantile group",
    10_000,
    "More groups than this publish about every threshold; use 'every' or fewer groups.",
)
ROC_GRID = Bound(
    "roc_grid",
    "binormal grid point",
    10_001,
    "A curve drawn on a few hundred points looks smooth.",
)
ROC_STATES = Bound(
    "roc_states",
    "reconstruction state",
    50_000_000,
    "With every threshold the states grow as the square of the number of records (about "
    "7,000 records at most); audit a random subsample of the records, or a coarser curve.",
)
#: Local suppression's search grows with the records it must protect and with k (each record
#: below k needs more of its values suppressed, and each suppression is checked against more
#: compatible records): measured on two cores, 16,000 records all below k took 7 s of CPU at
#: k = 3, 33 s at k = 100 (1.6 million), 125 s at k = 10,000; a million records with 10,000
#: below k = 3 take 3 s. The work is counted as records below k x k.
SUPPRESSION_WORK = Bound(
    "suppression_work",
    "search unit",
    2_000_000,
    "Generalise the quasi-identifiers first (rounding, intervals, merged levels) or use fewer "
    "of them, so that fewer records are in small classes.",
)
DESIGN_COLUMNS = Bound(
    "design_columns",
    "design-matrix column",
    100,
    "Use fewer covariates, or merge the categories of a text covariate.",
)

#: Every bound, by key (the README lists them).
BOUNDS: dict[str, Bound] = {
    bound.key: bound
    for bound in (
        FILE_BYTES,
        DECODED_BYTES,
        COLUMNS,
        ROWS,
        CELLS,
        EXCEL_CELLS,
        CELL_BYTES,
        TEXT_FILE_BYTES,
        JSON_DEPTH,
        LINK_CHARS,
        LINK_JSON_BYTES,
        RECIPE_STEPS,
        SMOOTHING_STEPS,
        LIST_ITEMS,
        MIN_CELL_SIZE,
        REPLICATES,
        BOOTSTRAP_RESAMPLES,
        SWEEP_POINTS,
        UNIQUENESS_KEYS,
        SMOOTHING_POINTS,
        NEIGHBOUR_PAIRS,
        ROC_QUANTILES,
        ROC_GRID,
        ROC_STATES,
        SUPPRESSION_WORK,
        DESIGN_COLUMNS,
    )
}

#: The memory one dashboard session may use at the bounds above (a data set at the cell and
#: unpacked-size bounds, its masked copies and caches); a hosted instance needs this per
#: concurrent user on top of about 0.4 GB for the server itself.
SESSION_MEMORY_BUDGET_BYTES = 3 * 1024 * MiB
