"""What an ethics board or data-access committee needs to tie a report to a release: the
project (title, data custodian, recipient, purpose), the files (name, size and SHA-256 of the
source file and of the released file exactly as downloaded), the software and the recipe.

A SHA-256 digest (FIPS 180-4) identifies a file: anyone holding the file can recompute it
(``sha256sum FILE``, or ``hashlib.sha256(data).hexdigest()``) and compare. The recipe's digest
is that of its canonical JSON (:func:`canonical_recipe_json`): the recipe as the Export page
downloads it without seeds (:meth:`Recipe.to_dict` with ``include_seeds=False``), written with
sorted keys, no whitespace and UTF-8, so the same recipe always has the same digest whatever
the indentation of the file at hand.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
from dataclasses import dataclass, fields

from deid_core.errors import RecipeError
from deid_core.recipe import Recipe

#: The longest text each project field takes (the purpose is a paragraph).
FIELD_LIMITS = {"title": 200, "custodian": 200, "recipient": 200, "purpose": 2000}

FIELD_LABELS = {
    "title": "Project title",
    "custodian": "Data custodian",
    "recipient": "Recipient",
    "purpose": "Purpose of the release",
}

NOT_GIVEN = "(not given)"

#: The libraries whose versions the report names (those that compute its figures).
LIBRARIES = ("pandas", "numpy", "scipy", "statsmodels", "scikit-learn")


@dataclass(frozen=True)
class ProjectDetails:
    """The release's project, as the user states it (every field optional, stripped of
    surrounding spaces; at most :data:`FIELD_LIMITS` characters each)."""

    title: str = ""
    custodian: str = ""
    recipient: str = ""
    purpose: str = ""

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if not isinstance(value, str):
                raise RecipeError(f"{FIELD_LABELS[item.name]} must be text.")
            value = value.strip()
            limit = FIELD_LIMITS[item.name]
            if len(value) > limit:
                raise RecipeError(
                    f"{FIELD_LABELS[item.name]} is {len(value):,} characters long; at most "
                    f"{limit:,} are allowed."
                )
            object.__setattr__(self, item.name, value)

    def rows(self) -> tuple[tuple[str, str], ...]:
        """(label, value) of each field, "(not given)" for an empty one."""
        return tuple(
            (FIELD_LABELS[item.name], getattr(self, item.name) or NOT_GIVEN)
            for item in fields(self)
        )


@dataclass(frozen=True)
class FileFingerprint:
    """A file's name, size in bytes and SHA-256 digest (hexadecimal), and what it is."""

    name: str
    size: int
    sha256: str
    description: str = ""

    @classmethod
    def of(cls, data: bytes, name: str, description: str = "") -> FileFingerprint:
        """The fingerprint of the bytes ``data`` (exactly those bytes)."""
        return cls(name, len(data), hashlib.sha256(data).hexdigest(), description)

    def size_text(self) -> str:
        return f"{self.size:,} bytes"


def canonical_recipe_json(recipe: Recipe) -> bytes:
    """The recipe without seeds as canonical JSON: sorted keys, no whitespace, UTF-8."""
    data = recipe.to_dict(include_seeds=False)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def recipe_digest(recipe: Recipe) -> str:
    """SHA-256 (hexadecimal) of :func:`canonical_recipe_json`."""
    return hashlib.sha256(canonical_recipe_json(recipe)).hexdigest()


def software_versions() -> tuple[tuple[str, str], ...]:
    """(name, version) of this tool, Python and the libraries that compute the figures."""
    from deid_core import __version__

    versions = [("deid_core", __version__), ("Python", platform.python_version())]
    for name in LIBRARIES:
        try:
            versions.append((name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            versions.append((name, "not installed"))
    return tuple(versions)
