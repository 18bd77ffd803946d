"""The tour engine: a step's live figures for a recipe, checked against the paper's.

For each figure of the step (in the tour file's order) the engine calls the computations it
reads (each once), fills in its templates, and for a check compares the computed value with
the paper's expected one. A computation with nothing to show for the recipe is replaced by
one text figure saying why; a value a computation could not give shows as "unavailable".
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dashboard import state
from dashboard.tours.content import Expected, FigureSpec, TourStep
from dashboard.tours.figure_functions import FigureUnavailable
from deid_core.recipe import Recipe

#: How a value a computation could not give (None) is shown.
UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class Figure:
    """One live figure of a step.

    ``kind``: "metric" (``value`` a text), "check" (``value`` the computed text, ``expected``
    the paper's, ``ok`` whether they agree), "table" (a DataFrame), "chart" (an Altair chart)
    or "text" (markdown).
    """

    kind: str
    label: str
    value: Any = None
    note: str | None = None
    expected: str | None = None
    ok: bool | None = None


class _ValueFormatter(string.Formatter):
    """Fills ``{name.output:spec}`` from computed values, looked up by name (never by
    attribute); None is shown as :data:`UNAVAILABLE` whatever the spec."""

    def __init__(self, values: Mapping[str, Mapping[str, Any]]) -> None:
        self.values = values

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        return lookup(self.values, field_name), field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        return UNAVAILABLE if value is None else super().format_field(value, format_spec)


def lookup(values: Mapping[str, Mapping[str, Any]], reference: str) -> Any:
    """The value named ``"<computation>.<output>"``."""
    name, output = reference.split(".", 1)
    return values[name][output]


def compare(expected: Expected, computed: Any) -> tuple[str, str, bool]:
    """(computed text, expected text, whether they agree): a number at the expected figure's
    decimals, anything else as text."""
    if expected.decimals is None:
        want = str(expected.value)
        shown = UNAVAILABLE if computed is None else str(computed)
    else:
        want = f"{expected.value:.{expected.decimals}f}"
        shown = UNAVAILABLE if computed is None else f"{computed:.{expected.decimals}f}"
    return shown, want, shown == want


def _figure(spec: FigureSpec, values: Mapping[str, Mapping[str, Any]]) -> Figure | None:
    formatter = _ValueFormatter(values)
    label = formatter.format(spec.label)
    note = formatter.format(spec.note) if spec.note else None
    if spec.when is not None and not lookup(values, spec.when):
        if spec.otherwise is None:
            return None
        return Figure("text", label, formatter.format(spec.otherwise))
    if spec.kind in ("metric", "text"):
        return Figure(spec.kind, label, formatter.format(spec.content), note)
    value = lookup(values, spec.content)
    if spec.kind == "check":
        shown, want, ok = compare(spec.expected, value)
        return Figure("check", label, shown, note, expected=want, ok=ok)
    return Figure(spec.kind, label, value, note)


def live_figures(step: TourStep, recipe: Recipe) -> list[Figure]:
    """The step's figures for ``recipe`` (see the module notes)."""
    values: dict[str, dict[str, Any]] = {}
    unavailable: dict[str, str] = {}
    figures: list[Figure] = []
    for spec in step.figures:
        for name in spec.sources:
            if name in values or name in unavailable:
                continue
            computation = step.computations[name]
            try:
                values[name] = computation.function(recipe, dict(computation.parameters))
            except FigureUnavailable as reason:
                unavailable[name] = computation.unavailable_text or str(reason)
                computation_label = computation.unavailable_label
                figures.append(Figure("text", computation_label, unavailable[name]))
        if any(name in unavailable for name in spec.sources):
            continue
        figure = _figure(spec, values)
        if figure is not None:
            figures.append(figure)
    return figures


def step_figures(step: TourStep) -> list[Figure] | None:
    """The step's live figures for the current recipe; None when the data set in use is not
    the step's demo (the figures would not mean anything)."""
    if state.current_dataset().demo_key != step.demo:
        return None
    return live_figures(step, state.current_recipe())
