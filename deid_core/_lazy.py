"""Lazy package exports (PEP 562): a package's names are imported from their modules on first
use, not when the package is imported.

The command line refuses bad input before any model is fitted or any risk computed, and the
libraries behind those (statsmodels, scipy, scikit-learn: several seconds to import) would
otherwise load with the package that merely names them. ``from deid_core.utility import
fit_model`` works as before; only ``import deid_core.utility`` no longer loads statsmodels.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_exports(
    namespace: MutableMapping[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package whose ``globals()`` is ``namespace``,
    whose name ``N`` lives in its module ``exports[N]`` (relative to the package, e.g.
    ``"models"``). Each name is imported on first access and cached in the package's
    namespace, so later accesses cost nothing."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
