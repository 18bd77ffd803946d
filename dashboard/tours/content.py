"""The tour files: one TOML file per tour beside this module, read and checked here.

A file's name is its tour's key (``el_emam.toml`` -> ``"el_emam"``). The format is described in
``README.md`` beside this module. Every file is checked when it is loaded: a missing, mistyped
or unknown field, a demo or page that does not exist, a masking step the recipe format rejects,
a figure function that is not registered (or a parameter it does not take) and a figure that
names a value no computation of its step returns are all a :class:`TourFileError` naming the
file, the step, the figure and the field.
"""

from __future__ import annotations

import re
import string
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from dashboard import state
from dashboard.tours.figure_functions import FIGURE_FUNCTIONS, FigureFunction
from deid_core.datasets import DEMO_DATASETS
from deid_core.errors import RecipeError
from deid_core.masking import MaskingStep, step_from_dict
from deid_core.recipe import Recipe

#: Where the tour files are.
TOUR_FOLDER = Path(__file__).resolve().parent
#: The repository root (a step's ``page`` is a path from it).
ROOT = TOUR_FOLDER.parents[1]

FIGURE_KINDS = ("metric", "check", "table", "chart", "text")
#: How a step's recipe starts: the demo's default masking, or none.
RECIPE_BASES = ("demo", "unmasked")
#: The label of the text that stands in for a computation with nothing to show, by default.
UNAVAILABLE_LABEL = "Not available for this recipe"

_KEY = re.compile(r"[a-z][a-z0-9_]*")
_REFERENCE = re.compile(r"([A-Za-z_]\w*)\.([A-Za-z_]\w*)")
_MISSING = object()
_NUMBER = 'a number or a fraction such as "16/27"'


class TourFileError(ValueError):
    """A tour file that cannot be used; the message names the file and the field."""


# ---------------------------------------------------------------------------- the data model
@dataclass(frozen=True)
class RecipeSpec:
    """A step's recipe: the demo's roles and its default masking (``base = "demo"``) or none
    (``"unmasked"``), then ``steps`` (the recipe format's steps) replacing the steps of the
    columns they mask."""

    base: str
    steps: tuple[MaskingStep, ...] = ()

    def build(self, demo: str) -> Recipe:
        recipe = state.demo_recipe(demo, None if self.base == "demo" else ())
        for column in dict.fromkeys(step.column for step in self.steps):
            recipe = recipe.with_steps_for(column, [s for s in self.steps if s.column == column])
        return recipe


@dataclass(frozen=True)
class Computation:
    """A figure function called with the step's parameters; its outputs are named
    ``"<name>.<output>"`` in the step's figures. When the function has nothing to show, one
    text figure (``unavailable_label``; ``unavailable_text`` or else the function's reason)
    stands in for the figures that use it."""

    name: str
    function: FigureFunction
    parameters: Mapping[str, Any]
    unavailable_label: str
    unavailable_text: str | None


@dataclass(frozen=True)
class Expected:
    """The paper's figure: a text shown as is, or a number compared at ``decimals`` (the
    paper's precision: the computed figure agrees when both round to the same text)."""

    value: str | float
    decimals: int | None
    citation: str
    """Where the paper gives it (table, figure or section)."""


@dataclass(frozen=True)
class FigureSpec:
    """One figure of a step. ``label``, ``note`` and a metric's or a text's ``content`` are
    templates (``{risk.average_risk:.3f}``); a check's, table's or chart's ``content`` and
    ``when`` are references (``risk.average_risk``). A figure whose ``when`` is false is left
    out, or (a text) shows ``otherwise``."""

    kind: str
    label: str
    content: str
    sources: tuple[str, ...]
    """The computations the figure reads, in order."""
    note: str | None = None
    when: str | None = None
    otherwise: str | None = None
    expected: Expected | None = None


@dataclass(frozen=True)
class TourStep:
    title: str
    text: str
    demo: str
    question: str
    page: str
    """The page script (``app_pages/...``) where the user explores further."""
    page_label: str
    recipe_spec: RecipeSpec
    computations: Mapping[str, Computation]
    figures: tuple[FigureSpec, ...]

    def recipe(self) -> Recipe:
        """The step's pre-set recipe."""
        return self.recipe_spec.build(self.demo)

    @property
    def demo_title(self) -> str:
        return DEMO_DATASETS[self.demo].title


@dataclass(frozen=True)
class Tour:
    key: str
    title: str
    source: str
    order: int
    """Place in the list of tours."""
    exact: tuple[str, ...]
    """Figures reproduced exactly (arithmetic the paper prints)."""
    shape_only: tuple[str, ...]
    """Figures reproduced only in shape (our synthetic data stand in for the paper's)."""
    steps: tuple[TourStep, ...]

    @property
    def demo(self) -> str:
        return self.steps[0].demo


# ---------------------------------------------------------------------------- reading fields
class _Fields:
    """One TOML table being read: every error names the file, the place and the field, and a
    field nobody reads is an error too (a misspelt field is not silently ignored)."""

    def __init__(self, data: dict[str, Any], file: str, where: str = "") -> None:
        self.data, self.file, self.where = data, file, where
        self.read: set[str] = set()

    def error(self, field: str, problem: str) -> TourFileError:
        place = f", {self.where}" if self.where else ""
        return TourFileError(f"{self.file}{place}, '{field}': {problem}")

    def value(self, field: str, required: bool = True) -> Any:
        self.read.add(field)
        if field not in self.data:
            if required:
                raise self.error(field, "missing.")
            return _MISSING
        return self.data[field]

    def text(self, field: str, required: bool = True) -> str | None:
        value = self.value(field, required)
        if value is _MISSING:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.error(field, "must be a non-empty text.")
        return value

    def texts(self, field: str) -> tuple[str, ...]:
        value = self.value(field)
        texts = isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)
        if not texts or not value:
            raise self.error(field, "must be a non-empty list of texts.")
        return tuple(value)

    def integer(self, field: str, required: bool = True) -> int | None:
        value = self.value(field, required)
        if value is _MISSING:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.error(field, "must be a whole number (0 or more).")
        return value

    def table(self, field: str, required: bool = True) -> _Fields | None:
        value = self.value(field, required)
        if value is _MISSING:
            return None
        if not isinstance(value, dict):
            raise self.error(field, "must be a table.")
        return _Fields(value, self.file, self._inner(field))

    def tables(self, field: str, item: str, required: bool = True) -> list[_Fields]:
        """An array of tables, each named ``<item> <n>`` (from 1) in messages."""
        value = self.value(field, required)
        if value is _MISSING:
            return []
        if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
            raise self.error(field, f"must be one or more [[{field}]] tables.")
        return [_Fields(v, self.file, self._inner(f"{item} {n}")) for n, v in enumerate(value, 1)]

    def rest(self) -> dict[str, Any]:
        """The fields not read yet (they are read now)."""
        rest = {k: v for k, v in self.data.items() if k not in self.read}
        self.read |= set(rest)
        return rest

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.read)
        if unknown:
            raise self.error(unknown[0], "not a field here (misspelt?).")

    def _inner(self, name: str) -> str:
        return f"{self.where}, {name}" if self.where else name


# ---------------------------------------------------------------------------- templates
def _template_fields(fields: _Fields, field: str, template: str) -> list[str]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        problem = f"not a valid template ({error}; write {{{{ for a brace)."
        raise fields.error(field, problem) from error
    names = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if conversion is not None or "{" in (spec or ""):
            raise fields.error(field, f"'{{{name}}}': use {{name.output:format}} only.")
        names.append(name)
    return names


def _resolve(
    fields: _Fields, field: str, reference: str, computations: Mapping[str, Computation]
) -> str:
    """Check that ``reference`` ("name.output") names an output of a computation of the step;
    return the computation's name."""
    match = _REFERENCE.fullmatch(reference)
    if match is None:
        raise fields.error(field, f"'{reference}' must name a value as computation.output.")
    name, output = match.groups()
    if name not in computations:
        known = ", ".join(computations) or "none"
        raise fields.error(field, f"'{reference}': the step computes no '{name}' (it has {known}).")
    function = computations[name].function
    if output not in function.outputs:
        raise fields.error(
            field,
            f"'{reference}': {function.name} has no output '{output}' "
            f"(it has {', '.join(function.outputs)}).",
        )
    return name


# ---------------------------------------------------------------------------- parameters
_TYPE_WORDS = {str: "a text", int: "a whole number", float: "a number", bool: "true or false"}


def _fits(value: Any, hint: Any) -> bool:
    """Whether a TOML value fits a figure function's parameter type (one level of list and
    dict items checked; ``Any`` fits everything)."""
    if hint is Any:
        return True
    origin, args = typing.get_origin(hint) or hint, typing.get_args(hint)
    if isinstance(value, bool):
        return origin is bool
    if origin is float:
        return isinstance(value, int | float)
    if origin is list:
        return isinstance(value, list) and all(_fits(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(_fits(v, args[1]) for v in value.values())
    return isinstance(value, origin)


def _type_words(hint: Any) -> str:
    origin, args = typing.get_origin(hint) or hint, typing.get_args(hint)
    if origin is list:
        return f"a list, each item {_type_words(args[0])}"
    if origin is dict:
        return f"a table, each value {_type_words(args[1])}"
    return _TYPE_WORDS.get(origin, "a value")


def _check_parameters(fields: _Fields, function: FigureFunction, given: dict[str, Any]) -> None:
    accepted = function.parameters
    hints = typing.get_type_hints(function.compute)
    for name, value in given.items():
        if name not in accepted:
            takes = ", ".join(accepted) or "no parameters"
            raise fields.error(name, f"not a parameter of {function.name} (it takes {takes}).")
        if not _fits(value, hints[name]):
            raise fields.error(name, f"must be {_type_words(hints[name])}.")
    for name, parameter in accepted.items():
        if parameter.default is parameter.empty and name not in given:
            raise fields.error(name, f"missing (a parameter of {function.name}).")


# ---------------------------------------------------------------------------- reading a tour
def _recipe_spec(fields: _Fields) -> RecipeSpec:
    base = fields.text("base")
    if base not in RECIPE_BASES:
        raise fields.error("base", f"must be one of {', '.join(RECIPE_BASES)}.")
    raw = fields.value("steps", required=False)
    if raw is _MISSING:
        raw = []
    if not isinstance(raw, list):
        raise fields.error("steps", "must be a list of masking steps.")
    steps = []
    for n, step in enumerate(raw, start=1):
        try:
            steps.append(step_from_dict(step))
        except RecipeError as error:
            raise fields.error("steps", f"step {n}: {error}") from error
    fields.finish()
    return RecipeSpec(base, tuple(steps))


def _computation(name: str, fields: _Fields) -> Computation:
    function_name = fields.text("function")
    if function_name not in FIGURE_FUNCTIONS:
        known = ", ".join(sorted(FIGURE_FUNCTIONS))
        raise fields.error("function", f"'{function_name}' is not a figure function ({known}).")
    function = FIGURE_FUNCTIONS[function_name]
    label, text = UNAVAILABLE_LABEL, None
    unavailable = fields.table("if_unavailable", required=False)
    if unavailable is not None:
        label, text = unavailable.text("label"), unavailable.text("text", required=False)
        unavailable.finish()
    parameters = fields.rest()
    _check_parameters(fields, function, parameters)
    return Computation(name, function, parameters, label, text)


def _expected(fields: _Fields) -> Expected:
    raw = fields.value("expected")
    decimals = fields.integer("decimals", required=False)
    citation = fields.text("citation")
    if decimals is None:
        if not isinstance(raw, str) or not raw:
            problem = f"must be the text the figure shows, or {_NUMBER} with 'decimals'."
            raise fields.error("expected", problem)
        return Expected(raw, None, citation)
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise fields.error("expected", f"must be {_NUMBER}.")
    try:
        number = float(Fraction(raw)) if isinstance(raw, str) else float(raw)
    except (ValueError, ZeroDivisionError) as error:
        raise fields.error("expected", f"must be {_NUMBER}.") from error
    return Expected(number, decimals, citation)


def _figure(fields: _Fields, computations: Mapping[str, Computation]) -> FigureSpec:
    kind = fields.text("kind")
    if kind not in FIGURE_KINDS:
        raise fields.error("kind", f"must be one of {', '.join(FIGURE_KINDS)}.")
    sources: list[str] = []

    def template(field: str, required: bool = True) -> str | None:
        text = fields.text(field, required)
        if text is not None:
            for reference in _template_fields(fields, field, text):
                sources.append(_resolve(fields, field, reference, computations))
        return text

    def reference(field: str, required: bool = True) -> str | None:
        text = fields.text(field, required)
        if text is not None:
            sources.append(_resolve(fields, field, text, computations))
        return text

    label = template("label")
    when = reference("when", required=False)
    content_field = {"metric": "value", "check": "computed"}.get(kind, kind)
    content = (template if kind in ("metric", "text") else reference)(content_field)
    note = template("note", required=False) if kind in ("metric", "check", "table") else None
    otherwise = template("otherwise", required=False) if kind == "text" else None
    if otherwise is not None and when is None:
        raise fields.error("otherwise", "shown only when 'when' is false: give a 'when'.")
    expected = _expected(fields) if kind == "check" else None
    fields.finish()
    return FigureSpec(
        kind, label, content, tuple(dict.fromkeys(sources)), note, when, otherwise, expected
    )


def _step(fields: _Fields) -> TourStep:
    title, text = fields.text("title"), fields.text("text")
    demo = fields.text("demo")
    if demo not in DEMO_DATASETS:
        raise fields.error("demo", f"'{demo}' is not a demo data set ({', '.join(DEMO_DATASETS)}).")
    question = fields.text("question")
    page, page_label = fields.text("page"), fields.text("page_label")
    if not page.startswith("app_pages/") or not (ROOT / page).is_file():
        raise fields.error("page", f"'{page}' is not a page script (app_pages/<page>.py).")
    recipe = _recipe_spec(fields.table("recipe"))
    compute = fields.table("compute", required=False)
    names = list(compute.data) if compute is not None else []
    computations = {name: _computation(name, compute.table(name)) for name in names}
    figures = tuple(_figure(f, computations) for f in fields.tables("figures", "figure"))
    shown = {source for figure in figures for source in figure.sources}
    unused = [name for name in computations if name not in shown]
    if compute is not None and unused:
        raise compute.error(unused[0], "computed but no figure shows it.")
    fields.finish()
    return TourStep(title, text, demo, question, page, page_label, recipe, computations, figures)


def load_tour(path: Path) -> Tour:
    """Read and check one tour file (see the module notes)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise TourFileError(f"{path.name}: not valid TOML ({error}).") from error
    if not _KEY.fullmatch(path.stem):
        raise TourFileError(
            f"{path.name}: the file name is the tour's key: lower-case letters, digits and _."
        )
    fields = _Fields(data, path.name)
    tour = Tour(
        key=path.stem,
        title=fields.text("title"),
        source=fields.text("source"),
        order=fields.integer("order"),
        exact=fields.texts("exact"),
        shape_only=fields.texts("shape_only"),
        steps=tuple(_step(step) for step in fields.tables("steps", "step")),
    )
    fields.finish()
    return tour


def load_tours(folder: Path = TOUR_FOLDER) -> dict[str, Tour]:
    """Every ``*.toml`` tour file of ``folder``, by key, in their ``order``."""
    tours = [load_tour(path) for path in sorted(folder.glob("*.toml"))]
    if not tours:
        raise TourFileError(f"No tour files (*.toml) in {folder.name}.")
    by_order: dict[int, Tour] = {}
    for tour in tours:
        if tour.order in by_order:
            first = by_order[tour.order].key
            raise TourFileError(f"{first}.toml and {tour.key}.toml: both have order {tour.order}.")
        by_order[tour.order] = tour
    return {tour.key: tour for tour in sorted(tours, key=lambda t: t.order)}


#: The tours of the Learn page, by key, in their order.
TOURS: dict[str, Tour] = load_tours()
