"""How the report writes figures and masking steps: numbers with their precision, "unavailable"
for a figure that could not be computed (never 0), and each step in plain language with the
parameters of random noise and smoothing withheld unless asked."""

from __future__ import annotations

import math
from collections.abc import Sequence

from deid_core.masking import DataStep, MaskingStep, Step
from deid_core.recipe import ROLE_NAMES, Recipe

UNAVAILABLE = "unavailable"

#: Steps whose exact parameters are withheld unless asked (random noise and smoothing).
SECRET_METHODS = frozenset({"uniform_noise", "gaussian_noise", "kernel_smooth", "date_shift"})


def fmt_risk(value: float | None) -> str:
    """A probability or score, 4 decimals ("unavailable" when missing, never 0)."""
    if value is None or not math.isfinite(value):
        return UNAVAILABLE
    return f"{value:.4f}"


def fmt_number(value: float | None) -> str:
    """An estimate, SE or MSE, 4 significant digits ("unavailable" when missing)."""
    if value is None or not math.isfinite(value):
        return UNAVAILABLE
    return f"{value:.4g}"


def fmt_distinct(
    values: Sequence[float | None], digits: int = 4, max_digits: int = 15
) -> list[str]:
    """Numbers shown side by side (e.g. the MSE before and after masking): ``digits``
    significant digits, or more, up to ``max_digits``, until values that differ print
    differently (4.1e-05 and 4.13e-05, not 0.00004 twice); "unavailable" for a missing one."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    for d in range(digits, max_digits + 1):
        texts = {v: f"{v:.{d}g}" for v in finite}
        if len(set(texts.values())) == len(set(finite)):
            break
    return [UNAVAILABLE if v is None or not math.isfinite(v) else f"{v:.{d}g}" for v in values]


def fmt_count(value: int | None) -> str:
    return UNAVAILABLE if value is None else f"{int(value):,}"


def role_text(recipe: Recipe, column: str) -> str:
    """The roles ``column`` plays, in words ("other (released as is)" for none)."""
    roles = recipe.roles.roles_of(column)
    if not roles:
        return "other (released as is)"
    return "; ".join(ROLE_NAMES[r].split(" (")[0] for r in roles)


def step_text(step: Step, include_parameters: bool = False) -> str:
    """One step in plain language; random noise, smoothing, PRAM and date shifts without their
    numbers (and never a seed) unless ``include_parameters``. A whole-data step says what it does (a
    subsample's fraction is shown: the open-data risk is stated at it; its seed is not)."""
    if include_parameters:
        text = step.describe()
        if step.random:
            seed = getattr(step, "seed", None)
            text += (
                f" (seed {seed})"
                if seed is not None
                else " (no seed: this draw cannot be reproduced)"
            )
        return text
    if isinstance(step, DataStep):
        if step.method == "date_shift":  # its range is the intruder's reach: withheld as noise's
            columns = ", ".join(getattr(step, "columns", ()))
            return (
                f"{columns}: each person's dates shifted by one random number of days, the "
                "same for all of their dates (range withheld; intervals kept)"
            )
        return step.describe()
    if not isinstance(step, MaskingStep):
        raise TypeError("step_text needs a masking step")
    if step.method == "uniform_noise":
        return f"{step.column}: uniform noise added (parameters withheld)"
    if step.method == "gaussian_noise":
        return f"{step.column}: Gaussian noise added (parameters withheld)"
    if step.method == "kernel_smooth":
        where = ", ".join(getattr(step, "locations", ()))
        kernel = getattr(step, "kernel", "")
        if kernel == "prior":
            how = f"ring kernel on the difference in '{getattr(step, 'pattern', '')}'"
        else:
            how = f"{kernel} kernel" + (f" over {where}" if where else "")
        within = getattr(step, "within", None)
        within_text = f", within groups of '{within}'" if within else ""
        return f"{step.column}: kernel smoothing ({how}{within_text}; parameters withheld)"
    if step.method == "pram":
        return f"{step.column}: PRAM, values randomly moved between levels (parameters withheld)"
    if step.random:  # a future random method: never print its numbers
        return f"{step.column}: {step.label.lower()} (parameters withheld)"
    return step.describe()


def parameters_withheld(step: Step) -> bool:
    """True for a step whose exact parameters the report withholds unless asked (a whole-data
    step's seed only: see :func:`step_text`)."""
    return step.random or step.method in SECRET_METHODS
