"""Risk-utility profiles: risk and utility as one masking parameter moves.

Zhou, Dominici & Louis (2010) judge a smoothing mask by plotting, against the bandwidth
``lambda`` and for each kernel (the *form* of masking), the masked estimate with its
confidence interval, its mean squared error, and the identification risk measured as the
expected share of correct matches for an intruder who knows the true regressors; then
risk against MSE. :func:`risk_utility_profile` computes those figures for any list of
recipes, and :func:`sweep_recipes` builds the list by setting one parameter of the
recipe's steps to a range of values, for one or several forms.

For each recipe the profile gives, with ``b`` the original estimate and ``b_m`` the
masked one: ``b_m``, its model-based SE and naive interval, optionally a percentile
bootstrap interval (:mod:`deid_core.utility.bootstrap`), the relative bias
``(b_m - b) / b``, ``MSE = se_m^2 + (b_m - b)^2``, the analysis potential
``se^2 / MSE``, and the expected share of correct matches
(:func:`deid_core.risk.matching.expected_correct_match_share`), so that every point of a
profile carries its risk and its utility.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from deid_core import bounds
from deid_core.errors import DeidError, RecipeError
from deid_core.masking import KernelSmooth
from deid_core.recipe import Recipe
from deid_core.risk.matching import expected_correct_match_share

# scipy is imported where it is used: the command line imports this module to refuse bad
# input and must not spend seconds loading scipy first (see deid_core._lazy).

#: Most values one sweep may have.
MAX_SWEEP_VALUES = bounds.SWEEP_POINTS.limit

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SweepSpec:
    """Which parameter to sweep: ``selector`` is a step's method tag (every step with that
    method, e.g. "kernel_smooth" so that all smoothed variables share their weights) or a
    step's position in the recipe (from 0); ``values`` the parameter's values in order."""

    selector: str | int
    parameter: str
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(float(v) for v in self.values))
        if not self.values:
            raise RecipeError("A sweep needs at least one value.")
        bounds.SWEEP_POINTS.check(len(self.values), "The sweep asks for")
        if not all(math.isfinite(v) for v in self.values):
            raise RecipeError("Every sweep value must be a finite number.")

    @classmethod
    def parse(cls, text: str) -> SweepSpec:
        """Read ``STEP.PARAM=START:STOP:N`` (N evenly spaced values from START to STOP),
        or ``STEP.PARAM=V1,V2,...``; STEP is a method tag or a step index."""
        if not isinstance(text, str) or "=" not in text or "." not in text.split("=", 1)[0]:
            raise RecipeError(
                "A sweep is written STEP.PARAM=START:STOP:N, e.g. kernel_smooth.bandwidth=0:0.5:11."
            )
        target, spec = text.split("=", 1)
        selector_text, parameter = target.rsplit(".", 1)
        selector: str | int = int(selector_text) if selector_text.isdigit() else selector_text
        try:
            if ":" in spec:
                start, stop, count = spec.split(":")
                low, high, n = float(start), float(stop), int(count)
            else:
                values = tuple(float(v) for v in spec.split(","))
        except ValueError as error:
            raise RecipeError(
                "The sweep values must be numbers: START:STOP:N or V1,V2,..."
            ) from error
        if ":" in spec:
            if n < 1:
                raise RecipeError(f"A sweep may have 1 to {MAX_SWEEP_VALUES} values.")
            bounds.SWEEP_POINTS.check(n, "The sweep asks for")
            values = tuple(np.linspace(low, high, n))
        return cls(selector, parameter.strip(), values)

    def indices(self, recipe: Recipe) -> list[int]:
        """Positions of the recipe's steps this sweep changes (a RecipeError if none)."""
        if isinstance(self.selector, int):
            if not 0 <= self.selector < len(recipe.steps):
                raise RecipeError(
                    f"The recipe has {len(recipe.steps)} step(s); there is no step {self.selector}."
                )
            found = [self.selector]
        else:
            found = [i for i, s in enumerate(recipe.steps) if s.method == self.selector]
            if not found:
                raise RecipeError(f"The recipe has no '{self.selector}' step to sweep.")
        for i in found:
            step = recipe.steps[i]
            if self.parameter not in {f for f in step.to_dict() if f not in ("method", "column")}:
                raise RecipeError(f"A '{step.method}' step has no parameter '{self.parameter}'.")
        return found


def _with_parameter(recipe: Recipe, indices: Sequence[int], **params: Any) -> Recipe:
    """The recipe with ``params`` set on the steps at ``indices`` (validated by each step)."""
    steps = list(recipe.steps)
    for i in indices:
        steps[i] = steps[i].with_params(**params)
    return replace(recipe, steps=tuple(steps))


def sweep_recipes(
    recipe: Recipe,
    sweep: SweepSpec,
    forms: Sequence[tuple[str, dict[str, Any]]] = (),
) -> list[tuple[str, float, Recipe]]:
    """``(form, value, recipe)`` for every form and sweep value. A form is a name and the
    parameters it sets on the swept steps (e.g. ``("exponential", {"kernel":
    "exponential"})``); without forms the recipe's own form is used, named "current"."""
    indices = sweep.indices(recipe)
    out: list[tuple[str, float, Recipe]] = []
    for name, params in forms or (("current", {}),):
        base = _with_parameter(recipe, indices, **params) if params else recipe
        for value in sweep.values:
            out.append((name, value, _with_parameter(base, indices, **{sweep.parameter: value})))
    return out


@dataclass(frozen=True)
class ProfilePoint:
    """Risk and utility of one recipe of a profile (None where unavailable, never 0)."""

    form: str
    value: float
    estimate: float | None = None
    se: float | None = None
    naive_low: float | None = None
    naive_high: float | None = None
    bootstrap_low: float | None = None
    bootstrap_high: float | None = None
    relative_bias: float | None = None
    mse: float | None = None
    analysis_potential: float | None = None
    match_share: float | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class Profile:
    """A risk-utility profile: the original estimate and one point per (form, value)."""

    parameter: str
    known_columns: tuple[str, ...]
    original_estimate: float | None
    original_se: float | None
    points: tuple[ProfilePoint, ...]
    level: float = 0.95

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([p.to_dict() for p in self.points])

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameter": self.parameter,
            "known_columns": list(self.known_columns),
            "original_estimate": self.original_estimate,
            "original_se": self.original_se,
            "level": self.level,
            "points": [p.to_dict() for p in self.points],
        }

    def __str__(self) -> str:
        lines = [
            f"Risk-utility profile over '{self.parameter}' ({len(self.points)} points); risk = "
            f"expected share of correct matches for an intruder who knows "
            f"{', '.join(self.known_columns) or 'nothing'}",
            f"  original estimate {_fmt(self.original_estimate)} (SE {_fmt(self.original_se)})",
            f"  {'form':<14}{'value':>10}{'estimate':>12}{'MSE':>12}{'risk':>8}",
        ]
        for p in self.points:
            lines.append(
                f"  {p.form:<14}{p.value:>10.4g}{_fmt(p.estimate):>12}{_fmt(p.mse):>12}"
                f"{_fmt(p.match_share):>8}" + (f"  ({p.error})" if p.error else "")
            )
        return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def risk_utility_profile(
    workspace: Any,
    recipes: Sequence[tuple[str, float, Recipe]],
    parameter: str,
    known_columns: Sequence[str],
    n_bootstrap: int = 0,
    level: float = 0.95,
    seed: int | None = None,
    progress: Progress | None = None,
) -> Profile:
    """Risk and utility for each ``(form, value, recipe)`` (module docstring).

    ``workspace`` is a :class:`~deid_core.workspace.Workspace` (its caches are reused);
    ``known_columns`` the numeric variables whose true values the intruder holds (Zhou:
    the regressors); ``n_bootstrap`` resamples per point for a bootstrap interval (0: none).
    A point whose model cannot be fitted keeps its risk and gives the reason in ``error``.
    ``progress(done, total)`` is called after each point, and with the same count between
    chunks of a point's replicates and bootstrap resamples; it may raise (e.g.
    :class:`~deid_core.errors.Cancelled`) to stop.
    """
    from scipy import stats

    known = tuple(known_columns)
    if not known:
        raise DeidError("Name at least one variable the intruder knows (e.g. the exposure).")
    z = float(stats.norm.ppf((1 + level) / 2))
    original = workspace.original
    points: list[ProfilePoint] = []
    original_estimate = original_se = None
    for done, (form, value, recipe) in enumerate(recipes, start=1):
        within = None
        if progress is not None:

            def within(_done: int, _total: int, before: int = done - 1) -> None:
                progress(before, len(recipes))

        fields: dict[str, Any] = {"form": form, "value": float(value)}
        errors: list[str] = []
        try:
            masked = workspace.masked_frame(recipe)
            fields["match_share"] = expected_correct_match_share(original, masked, known).share
        except DeidError as error:
            errors.append(f"risk: {error}")
        try:
            result = workspace.utility(recipe, progress=within)
        except DeidError as error:
            result = None
            errors.append(f"utility: {error}")
        if result is not None and result.original is not None:
            original_estimate, original_se = result.estimate, result.se
        if result is not None and result.available and result.masked_estimate is not None:
            b, se = result.masked_estimate, result.masked_se
            fields.update(
                estimate=b,
                se=se,
                naive_low=b - z * se,
                naive_high=b + z * se,
                relative_bias=result.relative_bias,
                mse=result.masked_mse,
                analysis_potential=result.analysis_potential,
            )
            if n_bootstrap:
                try:
                    interval = workspace.bootstrap(
                        recipe, n_bootstrap, level=level, seed=seed, progress=within
                    )
                except DeidError as error:
                    errors.append(f"bootstrap: {error}")
                else:
                    fields.update(
                        bootstrap_low=interval.bootstrap_low,
                        bootstrap_high=interval.bootstrap_high,
                    )
        elif result is not None:
            errors.append(f"utility: {result.error or 'the model could not be fitted'}")
        if errors:
            fields["error"] = "; ".join(errors)
        points.append(ProfilePoint(**fields))
        if progress is not None:
            progress(done, len(recipes))
    return Profile(parameter, known, original_estimate, original_se, tuple(points), level)


def smoothed_columns(recipe: Recipe) -> list[str]:
    """Columns the recipe smooths (its kernel-smoothing steps), in recipe order."""
    return list(dict.fromkeys(s.column for s in recipe.steps if s.method == "kernel_smooth"))


def smoothing_recipe(recipe: Recipe, columns: Sequence[str], **params: Any) -> Recipe:
    """The recipe with ``columns`` smoothed by one kernel (the same weights for every
    variable, as Zhou et al. require) and no other column smoothed. Each listed column's
    own steps are replaced by ``KernelSmooth(column, **params)``; a column no longer listed
    loses its smoothing step. ``params`` are :class:`~deid_core.masking.KernelSmooth`'s."""
    steps = [s for s in recipe.steps if s.method != "kernel_smooth" and s.column not in columns]
    steps += [KernelSmooth(column, **params) for column in columns]
    return replace(recipe, steps=tuple(steps))
