"""Masking methods, each a validated, JSON-serialisable step of a recipe.

``STEP_TYPES`` maps each step's ``method`` tag to its class; :func:`step_from_dict` rebuilds a
step from the dict that :meth:`MaskingStep.to_dict` wrote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from deid_core.errors import RecipeError
from deid_core.masking.base import MaskingStep
from deid_core.masking.categorical import DateReduce, MergeLevels
from deid_core.masking.geography import RESTRICTED_ZIP3, ZipToThreeDigits
from deid_core.masking.grouping import IntervalGroup, TopBottomCode
from deid_core.masking.noise import GaussianNoise, UniformNoise
from deid_core.masking.pseudonyms import HmacPseudonym, PseudonymStep, RandomPseudonym
from deid_core.masking.rounding import (
    AbsoluteRound,
    RelativeRound,
    Truncate,
    absolute_round,
    relative_round,
    truncate,
)
from deid_core.masking.smoothing import KernelSmooth, smooth_values, smoothing_weights

STEP_TYPES: dict[str, type[MaskingStep]] = {
    cls.method: cls
    for cls in (
        AbsoluteRound,
        RelativeRound,
        Truncate,
        IntervalGroup,
        TopBottomCode,
        UniformNoise,
        GaussianNoise,
        MergeLevels,
        DateReduce,
        KernelSmooth,
        ZipToThreeDigits,
        RandomPseudonym,
        HmacPseudonym,
    )
}


def step_from_dict(data: Mapping[str, Any]) -> MaskingStep:
    """Rebuild a masking step from its dict form; unknown methods or fields are RecipeErrors."""
    if not isinstance(data, Mapping):
        raise RecipeError("Each masking step must be an object with a 'method' and a 'column'.")
    method = data.get("method")
    if method not in STEP_TYPES:
        known = ", ".join(sorted(STEP_TYPES))
        raise RecipeError(f"Unknown masking method '{method}'. Known methods: {known}.")
    cls = STEP_TYPES[method]
    allowed = {field.name for field in dataclasses.fields(cls)}
    params = {key: value for key, value in data.items() if key != "method"}
    unknown = set(params) - allowed
    if unknown:
        raise RecipeError(
            f"Masking method '{method}' has no parameter(s) {', '.join(sorted(unknown))}."
        )
    for name in ("breaks", "locations"):
        if isinstance(params.get(name), list):
            params[name] = tuple(params[name])
    try:
        return cls(**params)
    except TypeError as error:
        raise RecipeError(f"Masking method '{method}': missing or invalid parameters.") from error


__all__ = [
    "RESTRICTED_ZIP3",
    "STEP_TYPES",
    "AbsoluteRound",
    "DateReduce",
    "GaussianNoise",
    "HmacPseudonym",
    "IntervalGroup",
    "KernelSmooth",
    "MaskingStep",
    "MergeLevels",
    "PseudonymStep",
    "RandomPseudonym",
    "RelativeRound",
    "TopBottomCode",
    "Truncate",
    "UniformNoise",
    "ZipToThreeDigits",
    "absolute_round",
    "relative_round",
    "smooth_values",
    "smoothing_weights",
    "step_from_dict",
    "truncate",
]
