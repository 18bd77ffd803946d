"""Masking methods, each a validated, JSON-serialisable step of a recipe.

Column steps (:class:`MaskingStep`) mask one column; whole-data steps (:class:`DataStep`) work
on several columns at once or on whole records (suppression, multivariate microaggregation,
subsampling). ``STEP_TYPES`` and ``DATA_STEP_TYPES`` map each step's ``method`` tag to its
class; :func:`step_from_dict` and :func:`data_step_from_dict` rebuild a step from the dict that
its ``to_dict`` wrote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, cast

from deid_core import bounds
from deid_core.errors import RecipeError
from deid_core.masking.base import DataOutcome, DataStep, MaskingStep, Step
from deid_core.masking.categorical import DateReduce, MergeLevels
from deid_core.masking.codes import CodePrefix, Icd10Chapter
from deid_core.masking.dates import AgeAt, DateShift, RelativeDates
from deid_core.masking.derived import EventOrder, Interval
from deid_core.masking.geography import RESTRICTED_ZIP3, ZipToThreeDigits
from deid_core.masking.grouping import IntervalGroup, TopBottomCode
from deid_core.masking.hierarchy import HierarchyLevel, hierarchy_from_csv
from deid_core.masking.microaggregation import Microaggregate, MultivariateMicroaggregate
from deid_core.masking.noise import GaussianNoise, UniformNoise
from deid_core.masking.pram import Pram
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
from deid_core.masking.subsampling import Subsample
from deid_core.masking.suppression import LocalSuppression, RecordSuppression

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
        Microaggregate,
        Pram,
        ZipToThreeDigits,
        CodePrefix,
        Icd10Chapter,
        HierarchyLevel,
        RandomPseudonym,
        HmacPseudonym,
    )
}

DATA_STEP_TYPES: dict[str, type[DataStep]] = {
    cls.method: cls
    for cls in (
        RelativeDates,
        DateShift,
        AgeAt,
        Interval,
        EventOrder,
        LocalSuppression,
        RecordSuppression,
        MultivariateMicroaggregate,
        Subsample,
    )
}

#: Parameters that are lists in JSON and tuples in a step.
_TUPLE_PARAMETERS = ("breaks", "locations", "importance", "columns", "strata")


def step_from_dict(data: Mapping[str, Any]) -> MaskingStep:
    """Rebuild a column step from its dict form; unknown methods or fields are RecipeErrors."""
    if not isinstance(data, Mapping):
        raise RecipeError("Each masking step must be an object with a 'method' and a 'column'.")
    where = "a whole-data step: list it under 'data_steps'"
    return cast(MaskingStep, _from_dict(data, STEP_TYPES, DATA_STEP_TYPES, where))


def data_step_from_dict(data: Mapping[str, Any]) -> DataStep:
    """Rebuild a whole-data step from its dict form; unknown methods or fields are
    RecipeErrors."""
    if not isinstance(data, Mapping):
        raise RecipeError("Each whole-data step must be an object with a 'method'.")
    where = "a column step: list it under 'steps'"
    return cast(DataStep, _from_dict(data, DATA_STEP_TYPES, STEP_TYPES, where))


def _from_dict(
    data: Mapping[str, Any],
    types: Mapping[str, type[Step]],
    elsewhere: Mapping[str, type[Step]],
    where: str,
) -> Step:
    method = data.get("method")
    if method in elsewhere:
        raise RecipeError(f"Masking method '{method}' is {where}.")
    if method not in types:
        known = ", ".join(sorted(types))
        raise RecipeError(f"Unknown masking method '{method}'. Known methods: {known}.")
    cls = types[method]
    allowed = {field.name for field in dataclasses.fields(cls)}  # type: ignore[arg-type]
    params = {key: value for key, value in data.items() if key != "method"}
    unknown = set(params) - allowed
    if unknown:
        raise RecipeError(
            f"Masking method '{method}' has no parameter(s) {', '.join(sorted(unknown))}."
        )
    listed = sum(_leaves(value) for value in params.values() if isinstance(value, list | Mapping))
    bounds.LIST_ITEMS.check(listed, f"Masking method '{method}' lists")
    for name in _TUPLE_PARAMETERS:
        if isinstance(params.get(name), list):
            params[name] = tuple(params[name])
    try:
        return cls(**params)
    except TypeError as error:
        raise RecipeError(f"Masking method '{method}': missing or invalid parameters.") from error


def _leaves(value: Any) -> int:
    """How many values a parameter lists (the values of a mapping of lists, e.g. merge groups,
    all count)."""
    if isinstance(value, Mapping):
        return sum(_leaves(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_leaves(v) for v in value)
    return 1


__all__ = [
    "DATA_STEP_TYPES",
    "RESTRICTED_ZIP3",
    "STEP_TYPES",
    "AbsoluteRound",
    "AgeAt",
    "CodePrefix",
    "DataOutcome",
    "DataStep",
    "DateReduce",
    "DateShift",
    "EventOrder",
    "GaussianNoise",
    "HierarchyLevel",
    "HmacPseudonym",
    "Icd10Chapter",
    "Interval",
    "IntervalGroup",
    "KernelSmooth",
    "LocalSuppression",
    "MaskingStep",
    "MergeLevels",
    "Microaggregate",
    "MultivariateMicroaggregate",
    "Pram",
    "PseudonymStep",
    "RandomPseudonym",
    "RecordSuppression",
    "RelativeDates",
    "RelativeRound",
    "Step",
    "Subsample",
    "TopBottomCode",
    "Truncate",
    "UniformNoise",
    "ZipToThreeDigits",
    "absolute_round",
    "data_step_from_dict",
    "hierarchy_from_csv",
    "relative_round",
    "smooth_values",
    "smoothing_weights",
    "step_from_dict",
    "truncate",
]
