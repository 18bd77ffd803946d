"""Share a configuration: the recipe plus the model and the release context, never the data.

Two forms, both written and read here (pure functions, no Streamlit):

* a **configuration file**: a version-2 recipe (see :mod:`deid_core.recipe`) with two optional
  sections, ``"model"`` (the collaborator's model family, offset and trials columns, factors
  with their reference levels, the Cox model's time column and ties) and
  ``"context"`` (the release settings: public or not, minimum cell size, scenario
  probabilities, matching rule, security measure, replicates, treatment of missing values,
  Benedetti-Franconi method)::

      {"schema_version": 2, "roles": {...}, "steps": [...],
       "model": {"family": "logistic", "offset": null, "trials": null, "factors": ["race"],
                 "references": {"race": "1"}, "time": null, "ties": "breslow"},
       "context": {"release_context": "public", "min_cell_size": 5, ...}}

  :func:`configuration_json` writes it, :func:`load_configuration` reads it (and version-1
  recipes, which have neither section);

* a **link parameter** (``?cfg=...``): :class:`SharedConfig` (the configuration plus which data
  set it belongs to: a built-in demo by its key, or an uploaded file by its column names)
  as compact JSON, compressed with zlib and encoded as URL-safe base64 without padding.
  The JSON carries a link-format version ``"v"`` (:data:`LINK_VERSION`); the parameter is at
  most :data:`MAX_PARAM_CHARS` characters. Seeds are never included: with the seed anyone can
  regenerate the noise and subtract it. :func:`encode_config` / :func:`decode_config` raise
  :class:`ShareError` with a plain message for anything they cannot accept.

What a link holds: the column names, the roles, the model and release settings, and every
masking parameter, as set. Some parameters are values of the data: the category names a "merge
levels" step lists, the numbers set on a column's own scale (cut-offs, origins, breaks, floors,
rounding bases, bandwidths), whose defaults the dashboard takes from the data (a percentile as
a top code, the minimum as an interval origin), and the reference level a model setting names
for a categorical covariate. They stay in the link, as set, because they are the masking and
the model: recomputing them on the recipient's data would silently change what the sender
tuned (and a link cannot tell a typed value from a default). Instead the dashboard shows
exactly what a link holds before it is copied: :meth:`SharedConfig.data_values` lists those
values and :meth:`SharedConfig.payload_json` is the link's content. Records and seeds never go
in.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from deid_core import bounds
from deid_core.datasets import DEMO_DATASETS
from deid_core.errors import DeidError, LimitError, RecipeError
from deid_core.recipe import SCHEMA_VERSION, Recipe, parse_json
from deid_core.risk import BF_METHODS, MATCH_RULES, MISSING_MODES
from deid_core.risk.context import (
    DEFAULT_PR_ACQUAINTANCE,
    DEFAULT_PR_ATTEMPT,
    DEFAULT_PR_BREACH,
    ReleaseContext,
)
from deid_core.tradeoff.rumap import SECURITY_MEASURES
from deid_core.utility import DEFAULT_REPLICATES, SUPPORTED_FAMILIES, ModelSpec

#: The query parameter that carries a shared configuration.
PARAM = "cfg"
#: The version of the link format (the ``"v"`` field of the encoded JSON).
LINK_VERSION = 1
#: The longest parameter accepted (and written): browsers and servers cut longer URLs.
MAX_PARAM_CHARS = bounds.LINK_CHARS.limit
#: The largest decompressed JSON accepted (a guard against a "zip bomb" parameter).
MAX_JSON_BYTES = bounds.LINK_JSON_BYTES.limit

_BASE64URL = re.compile(r"^[A-Za-z0-9_-]+$")


class ShareError(RecipeError):
    """A shared configuration (link parameter or file) that cannot be used; the message says
    why in plain words and never quotes data."""


# ---------------------------------------------------------------------------- model
@dataclass(frozen=True)
class ModelSettings:
    """The collaborator's model: family (see ``SUPPORTED_FAMILIES``), the Poisson offset
    column (person-time), the binomial trials column, the Cox follow-up time column and
    handling of ties, the numeric covariates fitted as factors, the reference level of
    categorical covariates (by label) and the outcome's value that is the event (by label;
    None: a 0/1 outcome). Files written before factors, references, time, ties and event
    existed lack those fields and read with their defaults; ``event`` is written only when
    set, so files without it stay as before."""

    family: str = "logistic"
    offset: str | None = None
    trials: str | None = None
    factors: tuple[str, ...] = ()
    references: tuple[tuple[str, str], ...] = ()
    time: str | None = None
    ties: str = "breslow"
    event: str | None = None

    def __post_init__(self) -> None:
        if self.family not in SUPPORTED_FAMILIES:
            known = ", ".join(SUPPORTED_FAMILIES)
            raise ShareError(f"Model: unknown family '{self.family}'. Known families: {known}.")
        for name in ("offset", "trials", "time"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ShareError(f"Model: '{name}' must be a column name or null.")
        if isinstance(self.factors, str) or not isinstance(self.factors, Iterable):
            raise ShareError("Model: 'factors' must be a list of column names.")
        object.__setattr__(self, "factors", tuple(self.factors))
        if not all(isinstance(c, str) and c for c in self.factors):
            raise ShareError("Model: 'factors' must be a list of column names.")
        try:
            spec = ModelSpec(
                "outcome",
                "exposure",
                covariates=tuple(dict.fromkeys([*self.factors, *_reference_columns(self)])),
                family=self.family,
                offset=self.offset,
                trials=self.trials,
                factors=self.factors,
                references=self.references,
                time=self.time,
                ties=self.ties,
                event=self.event,
            )
        except DeidError as error:  # the core's own plain message
            raise ShareError(f"Model: {error}") from error
        object.__setattr__(self, "references", spec.references)

    @classmethod
    def of(cls, workspace: Any) -> ModelSettings:
        """The model settings of a :class:`~deid_core.workspace.Workspace`."""
        return cls(*workspace.model_key)

    def apply_to(self, workspace: Any) -> None:
        """Make these the model settings of a :class:`~deid_core.workspace.Workspace`."""
        workspace.set_model(
            self.family,
            self.offset,
            self.trials,
            factors=self.factors,
            references=self.references,
            time=self.time,
            ties=self.ties,
            event=self.event,
        )

    def columns(self) -> list[str]:
        named = [c for c in (self.offset, self.trials, self.time) if c]
        return named + list(self.factors) + [c for c, _ in self.references]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "family": self.family,
            "offset": self.offset,
            "trials": self.trials,
            "factors": list(self.factors),
            "references": dict(self.references),
            "time": self.time,
            "ties": self.ties,
        }
        if self.event is not None:
            data["event"] = self.event
        return data

    @classmethod
    def from_dict(cls, data: Any) -> ModelSettings:
        if not isinstance(data, Mapping):
            raise ShareError("Model: must be an object with 'family', 'offset' and 'trials'.")
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ShareError(f"Model: unknown field(s) {', '.join(sorted(unknown))}.")
        return cls(**dict(data))


def _reference_columns(settings: ModelSettings) -> list[str]:
    """The covariates named by the reference levels (checked by :class:`ModelSpec`)."""
    references = settings.references
    if isinstance(references, Mapping):
        return [c for c in references if isinstance(c, str)]
    try:
        return [item[0] for item in references if isinstance(item, tuple | list) and item]
    except TypeError:
        return []


# ---------------------------------------------------------------------------- context
class Probability:
    """Accepts any number in [0, 1] (the allowed values of a probability setting)."""

    def __contains__(self, value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


#: The release settings and their defaults (the dashboard's sidebar and page settings).
SETTING_DEFAULTS: dict[str, Any] = {
    "matching_rule": "same_masking",
    "security_measure": "identifiability",
    "replicates": DEFAULT_REPLICATES,
    "min_cell_size": 5,
    "release_context": "public",
    "pr_attempt": DEFAULT_PR_ATTEMPT,
    "pr_acquaintance": DEFAULT_PR_ACQUAINTANCE,
    "pr_breach": DEFAULT_PR_BREACH,
    "missing": "category",
    "bf_method": "exact",
    "intruder_holds_source": True,
    "safe_harbor": False,
}

#: The allowed values of each setting.
SETTING_CHOICES: dict[str, Any] = {
    "matching_rule": tuple(MATCH_RULES),
    "security_measure": tuple(SECURITY_MEASURES),
    "replicates": range(1, bounds.REPLICATES.limit + 1),
    "min_cell_size": range(2, bounds.MIN_CELL_SIZE.limit + 1),
    "release_context": ("public", "non_public", "internal"),
    "pr_attempt": Probability(),
    "pr_acquaintance": Probability(),
    "pr_breach": Probability(),
    "missing": tuple(MISSING_MODES),
    "bf_method": tuple(BF_METHODS),
    "intruder_holds_source": (True, False),
    "safe_harbor": (True, False),
}

_WHOLE = ("replicates", "min_cell_size")
_FLAGS = ("intruder_holds_source", "safe_harbor")
#: Settings that set an amount of work, with their bounds.
_BOUNDED = {"replicates": bounds.REPLICATES, "min_cell_size": bounds.MIN_CELL_SIZE}
_PROBABILITIES = ("pr_attempt", "pr_acquaintance", "pr_breach")


def _allowed(name: str) -> str:
    choices = SETTING_CHOICES[name]
    if isinstance(choices, range):
        return f"a whole number from {choices.start} to {choices.stop - 1}"
    if isinstance(choices, Probability):
        return "a number from 0 to 1"
    return "one of " + ", ".join(f"'{c}'" for c in choices)


@dataclass(frozen=True)
class ReleaseSettings:
    """The release context: every setting of :data:`SETTING_DEFAULTS`, validated."""

    matching_rule: str = SETTING_DEFAULTS["matching_rule"]
    security_measure: str = SETTING_DEFAULTS["security_measure"]
    replicates: int = SETTING_DEFAULTS["replicates"]
    min_cell_size: int = SETTING_DEFAULTS["min_cell_size"]
    release_context: str = SETTING_DEFAULTS["release_context"]
    pr_attempt: float = SETTING_DEFAULTS["pr_attempt"]
    pr_acquaintance: float = SETTING_DEFAULTS["pr_acquaintance"]
    pr_breach: float = SETTING_DEFAULTS["pr_breach"]
    missing: str = SETTING_DEFAULTS["missing"]
    bf_method: str = SETTING_DEFAULTS["bf_method"]
    intruder_holds_source: bool = SETTING_DEFAULTS["intruder_holds_source"]
    """Whether an intruder may hold the source file (see
    :attr:`deid_core.risk.context.ReleaseContext.intruder_holds_source`)."""
    safe_harbor: bool = SETTING_DEFAULTS["safe_harbor"]
    """Whether the release must also meet HIPAA Safe Harbor (its unmet items fail the verdict)."""

    def __post_init__(self) -> None:
        for name in SETTING_DEFAULTS:
            value = getattr(self, name)
            if name in _FLAGS and not isinstance(value, bool):
                raise ShareError(f"Context: '{name}' must be true or false.")
            if name in _WHOLE and isinstance(value, float) and value.is_integer():
                value = int(value)
            if name in _WHOLE and (isinstance(value, bool) or not isinstance(value, int)):
                raise ShareError(f"Context: '{name}' must be {_allowed(name)}.")
            if name in _BOUNDED:
                _BOUNDED[name].check(value, f"Context: '{name}' asks for")
            if isinstance(value, (list, dict)) or value not in SETTING_CHOICES[name]:
                raise ShareError(f"Context: '{name}' must be {_allowed(name)}.")
            if name in _PROBABILITIES:
                value = float(value)  # after the range check: a huge integer never gets here
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SETTING_DEFAULTS}

    def context(self) -> ReleaseContext:
        """The release context these settings describe (what a verdict is judged in)."""
        return ReleaseContext(
            public=self.release_context == "public",
            min_cell_size=self.min_cell_size,
            pr_attempt=self.pr_attempt,
            pr_acquaintance=self.pr_acquaintance,
            pr_breach=self.pr_breach,
            kind=self.release_context,
            intruder_holds_source=self.intruder_holds_source,
        )

    @classmethod
    def from_dict(cls, data: Any) -> ReleaseSettings:
        """Settings from a (possibly partial) mapping; missing ones take their defaults."""
        if not isinstance(data, Mapping):
            raise ShareError("Context: must be an object mapping setting names to values.")
        unknown = set(data) - set(SETTING_DEFAULTS)
        if unknown:
            raise ShareError(f"Context: unknown setting(s) {', '.join(sorted(unknown))}.")
        return cls(**dict(data))

    @classmethod
    def lenient(cls, data: Mapping[str, Any]) -> ReleaseSettings:
        """Settings from a mapping, ignoring unknown names and replacing invalid values by
        their defaults (for the dashboard's own session settings)."""
        values = {}
        for name, default in SETTING_DEFAULTS.items():
            value = data.get(name, default)
            try:
                cls(**{name: value})
            except (ShareError, LimitError):
                value = default
            values[name] = value
        return cls(**values)


# ---------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class Configuration:
    """A recipe with, optionally, the model and the release context (a configuration file)."""

    recipe: Recipe = field(default_factory=Recipe)
    model: ModelSettings | None = None
    context: ReleaseSettings | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.recipe, Recipe):
            raise ShareError("A configuration needs a recipe.")
        if self.model is not None and not isinstance(self.model, ModelSettings):
            raise ShareError("Configuration: 'model' must be ModelSettings.")
        if self.context is not None and not isinstance(self.context, ReleaseSettings):
            raise ShareError("Configuration: 'context' must be ReleaseSettings.")

    def columns(self) -> list[str]:
        """Every column the configuration names (roles, steps, model columns)."""
        named = self.recipe.missing_columns(())
        named += self.model.columns() if self.model else []
        return list(dict.fromkeys(named))

    def missing_columns(self, columns: Iterable[str]) -> list[str]:
        present = set(columns)
        return [c for c in self.columns() if c not in present]

    def check_columns(self, columns: Iterable[str]) -> None:
        missing = self.missing_columns(columns)
        if missing:
            listed = ", ".join(f"'{c}'" for c in missing)
            raise ShareError(f"The configuration names column(s) the data do not have: {listed}.")

    def to_dict(self, include_seeds: bool = False) -> dict[str, Any]:
        data = self.recipe.to_dict(include_seeds=include_seeds)
        if self.model is not None:
            data["model"] = self.model.to_dict()
        if self.context is not None:
            data["context"] = self.context.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Configuration:
        """A configuration from a version-2 dict, or a version-1 recipe (no model, no
        context). Unknown versions and malformed sections are RecipeErrors."""
        recipe = Recipe.from_dict(data)  # checks the version and the top-level fields
        model = data.get("model")
        context = data.get("context")
        return cls(
            recipe=recipe,
            model=None if model is None else ModelSettings.from_dict(model),
            context=None if context is None else ReleaseSettings.from_dict(context),
        )


def configuration_json(
    recipe: Recipe,
    model: ModelSettings | Mapping[str, Any] | None = None,
    context: ReleaseSettings | Mapping[str, Any] | None = None,
    include_seeds: bool = False,
    indent: int | None = 2,
) -> str:
    """The configuration file (version 2): the recipe plus the model and the release context.
    Seeds are left out unless ``include_seeds``."""
    if isinstance(model, Mapping):
        model = ModelSettings.from_dict(model)
    if isinstance(context, Mapping):
        context = ReleaseSettings.from_dict(context)
    config = Configuration(recipe, model, context)
    return json.dumps(config.to_dict(include_seeds=include_seeds), indent=indent)


def load_configuration(text: str | bytes) -> Configuration:
    """Read a configuration file or a recipe file of any version this tool knows."""
    return Configuration.from_dict(parse_json(text))


# ---------------------------------------------------------------------------- link
#: Masking parameters that are values of the data (category names, numbers on a column's own
#: scale), listed by :meth:`SharedConfig.data_values`.
DATA_SCALE_PARAMETERS = (
    "groups",
    "top",
    "bottom",
    "origin",
    "breaks",
    "width",
    "base",
    "floor",
    "half_width",
    "bandwidth",
)


def _shown_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return "; ".join(f"{', '.join(map(str, levels))} -> {new}" for new, levels in value.items())
    if isinstance(value, list):
        return ", ".join(_shown_value(v) for v in value)
    return str(value)


def _column_names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ShareError("The link's list of columns is not a list of names.")
    names = tuple(value)
    if not all(isinstance(n, str) and n for n in names):
        raise ShareError("The link's list of columns is not a list of names.")
    return names


@dataclass(frozen=True)
class SharedConfig:
    """What a link carries: the recipe (without seeds), the model, the release context, and
    the data set it was made on: a built-in demo (``demo``, its key) or an uploaded file
    (``columns``, the file's column names, which a new upload must have). Validated here:
    an unknown demo, or a recipe naming a column the uploaded file does not list, is a
    ShareError."""

    recipe: Recipe
    model: ModelSettings = field(default_factory=ModelSettings)
    context: ReleaseSettings = field(default_factory=ReleaseSettings)
    demo: str | None = None
    columns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.recipe, Recipe):
            raise ShareError("A shared configuration needs a recipe.")
        if not isinstance(self.model, ModelSettings):
            raise ShareError("A shared configuration needs model settings.")
        if not isinstance(self.context, ReleaseSettings):
            raise ShareError("A shared configuration needs release settings.")
        object.__setattr__(self, "recipe", self.recipe.without_seeds())
        object.__setattr__(self, "columns", _column_names(self.columns))
        if self.demo is not None:
            if self.demo not in DEMO_DATASETS:
                known = ", ".join(DEMO_DATASETS)
                raise ShareError(
                    f"The link names a demo data set '{self.demo}' this dashboard does not "
                    f"have (it has: {known})."
                )
            if self.columns:
                raise ShareError("The link names both a demo and uploaded columns.")
        else:
            if not self.columns:
                raise ShareError("The link names no data set (neither a demo nor columns).")
            missing = self.configuration.missing_columns(self.columns)
            if missing:
                listed = ", ".join(f"'{c}'" for c in missing)
                raise ShareError(
                    f"The link's configuration names column(s) its data set does not list: "
                    f"{listed}."
                )

    @property
    def is_demo(self) -> bool:
        return self.demo is not None

    @property
    def configuration(self) -> Configuration:
        return Configuration(self.recipe, self.model, self.context)

    def missing_columns(self, columns: Iterable[str]) -> list[str]:
        """The columns of the shared data set (or, for a demo, that the configuration names)
        that ``columns`` lack."""
        present = set(columns)
        wanted = self.columns if self.columns else self.configuration.columns()
        return [c for c in wanted if c not in present]

    def data_values(self) -> list[str]:
        """One line per masking step that holds values of the data, and one per reference
        level of the model (see the module notes): ``"dose: top 3.2, bottom 0"``,
        ``"city: groups A, B -> North"``, ``"race: reference level 1"``."""
        lines = []
        for step in self.recipe.steps:
            params = step.to_dict(include_seed=False)
            held = [
                f"{name} {_shown_value(params[name])}"
                for name in DATA_SCALE_PARAMETERS
                if params.get(name) is not None
            ]
            if held:
                lines.append(f"{step.column}: {', '.join(held)}")
        lines += [f"{column}: reference level {level}" for column, level in self.model.references]
        return lines

    def payload_json(self) -> str:
        """Exactly what the link holds, as indented JSON (the parameter is this, compacted,
        compressed and base64-encoded)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"demo": self.demo} if self.demo else {"columns": list(self.columns)}
        return {
            "v": LINK_VERSION,
            "data": data,
            "config": self.configuration.to_dict(include_seeds=False),
        }

    @classmethod
    def from_dict(cls, payload: Any) -> SharedConfig:
        if not isinstance(payload, Mapping):
            raise ShareError("The link's configuration is not an object.")
        version = payload.get("v")
        if version != LINK_VERSION:
            if isinstance(version, int) and not isinstance(version, bool) and version > 1:
                raise ShareError(
                    f"The link was made by a newer version of the dashboard (link format "
                    f"{version}; this one reads format {LINK_VERSION}). Update the dashboard "
                    "or ask for the configuration file instead."
                )
            raise ShareError("The link's configuration has no valid format version.")
        unknown = set(payload) - {"v", "data", "config"}
        if unknown:
            raise ShareError(f"The link has unknown field(s) {', '.join(sorted(unknown))}.")
        data = payload.get("data")
        if not isinstance(data, Mapping) or set(data) - {"demo", "columns"}:
            raise ShareError("The link does not say which data set it belongs to.")
        config = Configuration.from_dict(payload.get("config"))
        return cls(
            recipe=config.recipe,
            model=config.model or ModelSettings(),
            context=config.context or ReleaseSettings(),
            demo=data.get("demo"),
            columns=_column_names(data.get("columns")),
        )


def encode_config(config: SharedConfig) -> str:
    """The link parameter of ``config``: compact JSON -> zlib -> URL-safe base64 (no padding).
    A ShareError when the result would be longer than :data:`MAX_PARAM_CHARS`."""
    return encode_payload(config.to_dict())


def decode_payload(param: Any, what: str = "configuration") -> Any:
    """The JSON value inside a link parameter (no validation of its content); ``what`` names
    the link's content in the messages ("configuration", "release description")."""
    if not isinstance(param, str) or not param.strip():
        raise ShareError(f"The link's {what} is empty.")
    param = param.strip()
    bounds.LINK_CHARS.check(len(param), f"The link's {what} has", ShareError)
    corrupt = (
        f"The {what} in the link is damaged (perhaps cut off when it was copied), so it "
        "was not read. Copy the whole link again."
    )
    if not _BASE64URL.match(param):
        raise ShareError(corrupt)
    try:
        packed = base64.urlsafe_b64decode(param + "=" * (-len(param) % 4))
    except (binascii.Error, ValueError) as error:
        raise ShareError(corrupt) from error
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(packed, MAX_JSON_BYTES)
    except zlib.error as error:
        raise ShareError(corrupt) from error
    if inflater.unconsumed_tail:
        where = f"The link's {what} has"
        raise ShareError(bounds.LINK_JSON_BYTES.message(MAX_JSON_BYTES + 1, where))
    if not inflater.eof or inflater.unused_data:
        raise ShareError(corrupt)
    try:
        return parse_json(raw, f"The link's {what}")
    except LimitError as error:
        raise ShareError(str(error)) from error
    except RecipeError as error:
        raise ShareError(corrupt) from error


def encode_payload(payload: Mapping[str, Any], what: str = "configuration") -> str:
    """A JSON object as a link parameter: compact JSON -> zlib -> URL-safe base64 (no
    padding). A ShareError when the result would be longer than :data:`MAX_PARAM_CHARS`."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    packed = zlib.compress(text.encode("utf-8"), 9)
    encoded = base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")
    bounds.LINK_CHARS.check(len(encoded), f"The link of this {what} has", ShareError)
    return encoded


def decode_config(param: Any) -> SharedConfig:
    """The SharedConfig of a link parameter; a ShareError with a plain message otherwise."""
    payload = decode_payload(param)
    try:
        return SharedConfig.from_dict(payload)
    except ShareError:
        raise
    except (RecipeError, LimitError) as error:
        raise ShareError(f"The configuration in the link is not valid: {error}") from error


__all__ = [
    "DATA_SCALE_PARAMETERS",
    "LINK_VERSION",
    "MAX_PARAM_CHARS",
    "PARAM",
    "SCHEMA_VERSION",
    "SETTING_CHOICES",
    "SETTING_DEFAULTS",
    "Configuration",
    "ModelSettings",
    "Probability",
    "ReleaseSettings",
    "ShareError",
    "SharedConfig",
    "configuration_json",
    "decode_config",
    "decode_payload",
    "encode_config",
    "encode_payload",
    "load_configuration",
]
