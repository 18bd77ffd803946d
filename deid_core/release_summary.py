"""A release described for its recipients: what the release link (``?release=...``) carries, and
the checks a recipient runs on the file they received.

The configuration link (:mod:`deid_core.share`) is for colleagues who hold the same source file:
it names the source's columns and every masking parameter. A recipient holds only the release
(the masked file and its report), so :class:`ReleaseSummary` carries only what the release
itself shows:

* the released file's columns by the names they are written under (pseudonyms under their
  released name, after Stata's renames or a formula's leading ``'``), and the *count* of source
  columns removed (direct identifiers, the record id, identifiers replaced by pseudonyms), never
  their names;
* the released file's rows, size and SHA-256 (FIPS 180-4: ``hashlib.sha256(data)``), its
  format, the report's date and the software versions (:func:`software_versions`);
* each masking step in plain words on released columns only: by its method's name, and with its
  parameters only when the custodian chose to include the mechanism in the report (the report's
  ``include_parameters``); never a seed;
* the verdict: the judged measure, its value and threshold, what it counts (people or records),
  the missing-value rule, the release context and the basis of judgement
  (:data:`deid_core.risk.release.JUDGED_BASES`), and the number of HIPAA Safe Harbor items not
  met (not their text, which may name a removed column);
* the release's own class figures (k, maximum and average risk ``1/f`` of the compatible
  classes, counted in people through the released person column, or in records), and how a
  recipient counts them again: the quasi-identifiers (released names), the person column and
  the missing-value rule (a suppressed, blank, value matches any value under ``"wildcard"``);
* the custodian's model estimate with its 95% Wald interval (:mod:`deid_core.utility.effects`)
  on the original and on the masked data, the aggregates the report gives, when every column of
  the model is released.

Encoded like the configuration link (compact JSON, zlib, URL-safe base64, the same
:data:`deid_core.share.MAX_PARAM_CHARS` and unpacked-size bounds); :func:`decode_release` refuses
anything malformed with a plain :class:`deid_core.share.ShareError`.

A recipient checks the file they received with :func:`check_received` (SHA-256 of the bytes,
rows, columns) and :func:`assess_received` (the release's class risk counted on the file as the
link says: :meth:`deid_core.risk.release.ReleasedKeys.from_frame` and
:func:`deid_core.risk.release.class_risk`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import pandas as pd

from deid_core.errors import DataError
from deid_core.masking import DataStep
from deid_core.masking.pseudonyms import PseudonymStep
from deid_core.recipe import Recipe
from deid_core.report.builder import Report
from deid_core.report.provenance import software_versions
from deid_core.risk import MISSING_MODES
from deid_core.risk.classes import RiskSummary
from deid_core.risk.context import CONTEXT_TEXT, MISSING_TEXT, UNIT_TEXT
from deid_core.risk.release import JUDGED_BASES, ReleasedKeys, class_risk
from deid_core.share import ShareError, decode_payload, encode_payload
from deid_core.utility.effects import EFFECT_NAMES, EffectMeasure

#: The query parameter that carries a release link.
RELEASE_PARAM = "release"
#: The version of the release link's format (its ``"v"`` field).
RELEASE_LINK_VERSION = 1
#: What the link's messages call its content.
WHAT = "release description"

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_UNITS = ("people", "records")


# ---------------------------------------------------------------------------- validation
def _text(value: Any, name: str, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise ShareError(f"Release: '{name}' must be {'text' if empty else 'non-empty text'}.")
    return value


def _count(value: Any, name: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ShareError(f"Release: '{name}' must be a whole number of at least 0.")
    return value


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ShareError(f"Release: '{name}' must be a finite number.")
    return float(value)


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ShareError(f"Release: '{name}' must be true or false.")
    return value


def _names(value: Any, name: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ShareError(f"Release: '{name}' must be a list of names.")
    names = tuple(value)
    if not all(isinstance(n, str) and n for n in names):
        raise ShareError(f"Release: '{name}' must be a list of names.")
    if len(set(names)) != len(names):
        raise ShareError(f"Release: '{name}' names a column twice.")
    return names


def _choice(value: Any, name: str, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise ShareError(f"Release: '{name}' must be one of {', '.join(choices)}.")
    return value


def _fields_of(cls: type, data: Any, what: str) -> dict[str, Any]:
    """``data`` as keyword arguments of ``cls``: a mapping with no unknown field."""
    if not isinstance(data, Mapping):
        raise ShareError(f"Release: '{what}' must be an object.")
    unknown = set(data) - {f.name for f in fields(cls)}
    if unknown:
        raise ShareError(f"Release: unknown field(s) in '{what}': {', '.join(sorted(unknown))}.")
    return dict(data)


# ---------------------------------------------------------------------------- parts
@dataclass(frozen=True)
class Estimate:
    """An effect measure and its Wald interval on one data set (``records`` used by the fit)."""

    value: float
    low: float
    high: float
    records: int

    def __post_init__(self) -> None:
        for name in ("value", "low", "high"):
            object.__setattr__(self, name, _number(getattr(self, name), name))
        object.__setattr__(self, "records", _count(self.records, "records"))

    @classmethod
    def of(cls, effect: EffectMeasure, records: int) -> Estimate:
        return cls(effect.value, effect.low, effect.high, records)

    def text(self, digits: int = 4) -> str:
        """E.g. "2.870 (1.363 to 6.045)", as :meth:`EffectMeasure.text` writes it."""
        return f"{self.value:#.{digits}g} ({self.low:#.{digits}g} to {self.high:#.{digits}g})"

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Any) -> Estimate:
        return cls(**_fields_of(cls, data, "estimate"))


@dataclass(frozen=True)
class ModelSummary:
    """The custodian's model by its family and released column names, and its effect measure
    (:data:`EFFECT_NAMES`) with the ``level`` Wald interval on the original and the masked data
    (for random masking, from the mean estimate and mean standard error over ``replicates``)."""

    family: str
    outcome: str
    exposure: str
    covariates: tuple[str, ...]
    measure: str
    level: float
    original: Estimate | None
    masked: Estimate | None
    replicates: int | None = None

    def __post_init__(self) -> None:
        _choice(self.family, "family", EFFECT_NAMES)
        for name in ("outcome", "exposure"):
            _text(getattr(self, name), name)
        object.__setattr__(self, "covariates", _names(self.covariates, "covariates"))
        _choice(self.measure, "measure", EFFECT_NAMES.values())
        level = _number(self.level, "level")
        if not 0 < level < 1:
            raise ShareError("Release: the model's confidence level must lie between 0 and 1.")
        object.__setattr__(self, "level", level)
        for name in ("original", "masked"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Estimate):
                raise ShareError(f"Release: the model's '{name}' must be an estimate.")
        if self.replicates is not None:
            object.__setattr__(self, "replicates", _count(self.replicates, "replicates"))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.outcome, self.exposure, *self.covariates)

    @property
    def label(self) -> str:
        """E.g. "Odds ratio per unit of dose (95% CI)"."""
        return f"{self.measure} per unit of {self.exposure} ({100 * self.level:g}% CI)"

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["covariates"] = list(self.covariates)
        for name in ("original", "masked"):
            value = getattr(self, name)
            out[name] = None if value is None else value.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Any) -> ModelSummary:
        values = _fields_of(cls, data, "model")
        for name in ("original", "masked"):
            if values.get(name) is not None:
                values[name] = Estimate.from_dict(values[name])
        return cls(**values)


@dataclass(frozen=True)
class VerdictSummary:
    """The verdict as the report gives it: ``meets`` (risk within the threshold and Safe Harbor
    met when asked for), the judged ``measure`` with its ``value`` and ``threshold``, what it
    counts (``unit``), the missing-value rule, the release ``context``, the ``basis`` of
    judgement and the number of Safe Harbor items not met."""

    meets: bool
    measure: str
    value: float
    threshold: float
    unit: str
    missing: str
    context: str
    basis: str
    safe_harbor_unmet: int = 0
    not_judged: str = ""

    def __post_init__(self) -> None:
        _flag(self.meets, "meets")
        if not isinstance(self.not_judged, str):
            raise ShareError("Release: 'not_judged' must be text.")
        if self.not_judged and self.meets:
            raise ShareError("Release: a verdict that was not judged cannot meet the threshold.")
        _text(self.measure, "measure")
        for name in ("value", "threshold"):
            object.__setattr__(self, name, _number(getattr(self, name), name))
        _choice(self.unit, "unit", _UNITS)
        _choice(self.missing, "missing", MISSING_MODES)
        _choice(self.context, "context", CONTEXT_TEXT)
        _choice(self.basis, "basis", JUDGED_BASES)
        object.__setattr__(
            self, "safe_harbor_unmet", _count(self.safe_harbor_unmet, "safe_harbor_unmet")
        )

    def text(self) -> str:
        """The verdict in words, e.g. "Meets the threshold: maximum risk 0.100 <= 0.2 (per
        person; a missing value is a category of its own; public release)."."""
        head = f"{self.measure} {self.value:.3f}"
        if self.not_judged:
            text = f"Not judged: {self.not_judged}"
        elif self.value <= self.threshold + 1e-12:
            lead = "Meets the threshold" if self.meets else "Risk within"
            text = f"{lead}: {head} <= {self.threshold:.3g}"
        else:
            excess = self.value - self.threshold
            text = f"Above the threshold by {excess:.3f}: {head} > {self.threshold:.3g}"
        read = (UNIT_TEXT[self.unit], MISSING_TEXT[self.missing], CONTEXT_TEXT[self.context])
        text += f" ({'; '.join(read)})."
        if self.safe_harbor_unmet:
            text += (
                f" HIPAA Safe Harbor: {self.safe_harbor_unmet} item(s) not met (listed in the "
                "report)."
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Any) -> VerdictSummary:
        return cls(**_fields_of(cls, data, "verdict"))


@dataclass(frozen=True)
class ClassFigures:
    """The compatible classes of a released file on its quasi-identifiers
    (:func:`deid_core.risk.release.class_risk`): ``k`` the smallest class, the maximum and
    average risk ``1/f`` over the ``n`` people or records counted (``unit``)."""

    unit: str
    n: int
    k: int
    max_risk: float
    average_risk: float

    def __post_init__(self) -> None:
        _choice(self.unit, "unit", _UNITS)
        for name in ("n", "k"):
            object.__setattr__(self, name, _count(getattr(self, name), name))
        for name in ("max_risk", "average_risk"):
            value = _number(getattr(self, name), name)
            if not 0 <= value <= 1:
                raise ShareError(f"Release: '{name}' must lie between 0 and 1.")
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, summary: RiskSummary) -> ClassFigures:
        return cls(
            summary.unit,
            int(summary.n_records),
            int(summary.k),
            float(summary.max_risk),
            float(summary.average_risk),
        )

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Any) -> ClassFigures:
        return cls(**_fields_of(cls, data, "classes"))


# ---------------------------------------------------------------------------- the summary
@dataclass(frozen=True)
class ReleaseSummary:
    """What a release link carries (see the module docstring); validated when built, so a
    decoded link is as trustworthy in form as one made here."""

    columns: tuple[str, ...]
    removed: int
    rows: int
    sha256: str
    size: int
    file_format: str
    created: str
    software: tuple[tuple[str, str], ...]
    steps: tuple[str, ...]
    mechanism: bool
    quasi_identifiers: tuple[str, ...]
    person_column: str | None
    missing: str
    verdict: VerdictSummary
    classes: ClassFigures
    model: ModelSummary | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", _names(self.columns, "columns"))
        if not self.columns:
            raise ShareError("Release: the released file must have at least one column.")
        for name in ("removed", "rows", "size"):
            object.__setattr__(self, name, _count(getattr(self, name), name))
        if not isinstance(self.sha256, str) or not _SHA256.match(self.sha256):
            raise ShareError("Release: 'sha256' must be 64 lower-case hexadecimal digits.")
        for name in ("file_format", "created"):
            _text(getattr(self, name), name)
        software = self.software
        if isinstance(software, Mapping):
            software = tuple(software.items())
        if isinstance(software, str) or not isinstance(software, Iterable):
            raise ShareError("Release: 'software' must list names with their versions.")
        pairs = tuple(tuple(item) if isinstance(item, list | tuple) else item for item in software)
        if not all(
            isinstance(p, tuple) and len(p) == 2 and all(isinstance(t, str) for t in p)
            for p in pairs
        ):
            raise ShareError("Release: 'software' must list names with their versions.")
        object.__setattr__(self, "software", pairs)
        if isinstance(self.steps, str) or not isinstance(self.steps, Iterable):
            raise ShareError("Release: 'steps' must be a list of sentences.")
        object.__setattr__(self, "steps", tuple(self.steps))
        if not all(isinstance(s, str) and s for s in self.steps):
            raise ShareError("Release: 'steps' must be a list of sentences.")
        _flag(self.mechanism, "mechanism")
        qis = _names(self.quasi_identifiers, "quasi_identifiers")
        object.__setattr__(self, "quasi_identifiers", qis)
        named = [*qis, *([self.person_column] if self.person_column is not None else [])]
        if self.person_column is not None:
            _text(self.person_column, "person_column")
        _choice(self.missing, "missing", MISSING_MODES)
        if not isinstance(self.verdict, VerdictSummary):
            raise ShareError("Release: 'verdict' is missing.")
        if not isinstance(self.classes, ClassFigures):
            raise ShareError("Release: 'classes' is missing.")
        if self.model is not None:
            if not isinstance(self.model, ModelSummary):
                raise ShareError("Release: 'model' must describe a model.")
            named += self.model.columns
        stray = [c for c in dict.fromkeys(named) if c not in self.columns]
        if stray:
            raise ShareError(
                "Release: the link names column(s) the released file does not have: "
                + ", ".join(f"'{c}'" for c in stray)
                + "."
            )

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": RELEASE_LINK_VERSION,
            "columns": list(self.columns),
            "removed": self.removed,
            "rows": self.rows,
            "sha256": self.sha256,
            "size": self.size,
            "file_format": self.file_format,
            "created": self.created,
            "software": [list(p) for p in self.software],
            "steps": list(self.steps),
            "mechanism": self.mechanism,
            "quasi_identifiers": list(self.quasi_identifiers),
            "person_column": self.person_column,
            "missing": self.missing,
            "verdict": self.verdict.to_dict(),
            "classes": self.classes.to_dict(),
            "model": None if self.model is None else self.model.to_dict(),
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The link's content as JSON (exactly what :func:`encode_release` packs)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Any) -> ReleaseSummary:
        if not isinstance(data, Mapping):
            raise ShareError("The link's release description is not an object.")
        version = data.get("v")
        if version != RELEASE_LINK_VERSION:
            if isinstance(version, int) and not isinstance(version, bool) and version > 1:
                raise ShareError(
                    f"The release link was made by a newer version of the dashboard (format "
                    f"{version}; this one reads format {RELEASE_LINK_VERSION}). Update the "
                    "dashboard."
                )
            raise ShareError("The link's release description has no valid format version.")
        values = {k: v for k, v in data.items() if k != "v"}
        values = _fields_of(cls, values, "release")
        missing = [f.name for f in fields(cls) if f.name not in values and f.name != "model"]
        if missing:
            raise ShareError(f"Release: missing field(s) {', '.join(missing)}.")
        values["verdict"] = VerdictSummary.from_dict(values["verdict"])
        values["classes"] = ClassFigures.from_dict(values["classes"])
        if values.get("model") is not None:
            values["model"] = ModelSummary.from_dict(values["model"])
        return cls(**values)


def encode_release(summary: ReleaseSummary) -> str:
    """The link parameter of ``summary`` (the configuration link's encoding and bounds)."""
    return encode_payload(summary.to_dict(), WHAT)


def decode_release(param: Any) -> ReleaseSummary:
    """The ReleaseSummary of a link parameter; a ShareError with a plain message otherwise."""
    payload = decode_payload(param, WHAT)
    try:
        return ReleaseSummary.from_dict(payload)
    except ShareError:
        raise
    except (TypeError, ValueError) as error:  # a malformed field no check above names
        raise ShareError("The release description in the link is not valid.") from error


# ---------------------------------------------------------------------------- building
def _step_lines(recipe: Recipe, names: Mapping[str, str], mechanism: bool) -> tuple[list[str], int]:
    """Each step in plain words on released columns (``names``: source -> written name), and
    how many steps were left undescribed because they touch a removed column."""
    lines: list[str] = []
    hidden = 0
    qis = recipe.roles.quasi_identifiers
    for step in recipe.all_steps:
        if isinstance(step, PseudonymStep):
            written = names.get(step.released_name)
            if written is None:
                hidden += 1
            else:
                lines.append(f"{written}: pseudonyms in place of a removed identifier")
            continue
        if isinstance(step, DataStep):
            touched = tuple(dict.fromkeys([*step.reads(qis), *step.writes(qis)]))
            if any(c not in names for c in touched):
                hidden += 1
                continue
            if mechanism:
                lines.append(step.describe())
            else:
                on = f" ({', '.join(names[c] for c in touched)})" if touched else ""
                lines.append(f"{step.label}{on}, parameters withheld")
            continue
        column = getattr(step, "column", None)
        if column not in names:
            hidden += 1
            continue
        if mechanism:
            lines.append(step.describe())
        else:
            lines.append(f"{names[column]}: {step.label.lower()}, parameters withheld")
    return lines, hidden


def _model_summary(report: Report, names: Mapping[str, str]) -> ModelSummary | None:
    """The report's model figures when every model column is released (else None: the model
    would name a removed column)."""
    utility = report.utility
    if utility is None or not utility.available or utility.spec is None:
        return None
    spec = utility.spec
    if any(c not in names for c in spec.columns):
        return None
    effect = utility.effect()
    masked = utility.masked_effect()
    if effect is None or utility.original is None:
        return None
    masked_records = utility.masked.n if utility.masked is not None else utility.original.n
    replicates = utility.replicates.n_replicates if utility.replicates is not None else None
    return ModelSummary(
        family=spec.family,
        outcome=names[spec.outcome],
        exposure=names[spec.exposure],
        covariates=tuple(names[c] for c in spec.covariates),
        measure=effect.name,
        level=effect.level,
        original=Estimate.of(effect, utility.original.n),
        masked=None if masked is None else Estimate.of(masked, masked_records),
        replicates=replicates,
    )


def summarise_release(
    report: Report,
    recipe: Recipe,
    source_columns: Sequence[str],
    released_columns: Sequence[str],
    written_columns: Sequence[str],
    rows: int,
    file_format: str,
    keep_record_id: bool = False,
) -> ReleaseSummary:
    """The release link's content for ``report`` (built with the released file's fingerprint,
    ``report.released_file``): ``source_columns`` the columns of the file read,
    ``released_columns`` those of the released frame (:meth:`Recipe.released`: pseudonyms under
    their released name), ``written_columns`` the same as written to the file (in the same
    order: Stata's renames, a neutralised formula), ``rows`` the file's rows and
    ``file_format`` its format's name. A DataError when the report has no released file."""
    if report.released_file is None:
        raise DataError("The report does not record the released file: build it again.")
    if len(released_columns) != len(written_columns):
        raise DataError("The written file's columns do not match the released ones.")
    written = dict(zip(map(str, released_columns), map(str, written_columns), strict=True))
    pseudonyms = {step.column: step.released_name for step in recipe.pseudonym_steps}
    names = {
        c: written[c] for c in map(str, source_columns) if c in written and c not in pseudonyms
    }
    kept = len(names)
    for released_as in pseudonyms.values():
        if released_as in written:
            names[released_as] = written[released_as]
    steps, hidden = _step_lines(recipe, names, report.include_parameters)
    if hidden:
        steps.append(f"{hidden} step(s) on removed columns (not described here)")
    roles = recipe.roles
    person = None
    if roles.record_id is not None:
        if roles.record_id in pseudonyms:
            person = names.get(pseudonyms[roles.record_id])
        elif keep_record_id:
            person = names.get(roles.record_id)
    judged = report.judged
    if judged is None:
        raise DataError("The report has no judged risk: build it again.")
    verdict = report.verdict
    return ReleaseSummary(
        columns=tuple(map(str, written_columns)),
        removed=len(source_columns) - kept,
        rows=int(rows),
        sha256=report.released_file.sha256,
        size=report.released_file.size,
        file_format=file_format,
        created=report.created,
        software=software_versions(),
        steps=tuple(steps),
        mechanism=report.include_parameters,
        quasi_identifiers=tuple(names[c] for c in roles.quasi_identifiers if c in names),
        person_column=person,
        missing=judged.classes.missing,
        verdict=VerdictSummary(
            meets=verdict.meets,
            measure=verdict.measure,
            value=verdict.value,
            threshold=verdict.threshold,
            unit=verdict.unit or judged.unit,
            missing=verdict.missing or judged.missing,
            context=verdict.context,
            basis=judged.basis,
            safe_harbor_unmet=len(verdict.safe_harbor_unmet),
            not_judged=verdict.not_judged,
        ),
        classes=ClassFigures.of(judged.classes),
        model=_model_summary(report, names),
    )


# ---------------------------------------------------------------------------- checking
@dataclass(frozen=True)
class ReceivedCheck:
    """The file a recipient loaded against the link: its SHA-256, rows and columns, and each
    difference in words (none: this is the release described)."""

    sha256: str
    rows: int
    columns: tuple[str, ...]
    differences: tuple[str, ...]

    @property
    def matches(self) -> bool:
        return not self.differences


def check_received(summary: ReleaseSummary, data: bytes, frame: pd.DataFrame) -> ReceivedCheck:
    """Compare the bytes received (their SHA-256) and the table read from them (rows, columns)
    with the link."""
    digest = hashlib.sha256(data).hexdigest()
    columns = tuple(map(str, frame.columns))
    differences = []
    if digest != summary.sha256:
        differences.append(
            f"Its SHA-256 is {digest}, not the {summary.sha256} of the release described: the "
            "bytes differ (another file, an edited copy, or the same data saved again)."
        )
    if len(frame) != summary.rows:
        differences.append(
            f"It has {len(frame):,} rows; the release described has {summary.rows:,}."
        )
    absent = [c for c in summary.columns if c not in columns]
    extra = [c for c in columns if c not in summary.columns]
    if absent:
        differences.append(
            "It lacks the column(s) " + ", ".join(f"'{c}'" for c in absent) + " of the release."
        )
    if extra:
        differences.append(
            "It has column(s) the release does not: " + ", ".join(f"'{c}'" for c in extra) + "."
        )
    if not absent and not extra and columns != summary.columns:
        differences.append("Its columns are in another order than the release's.")
    return ReceivedCheck(digest, len(frame), columns, tuple(differences))


def assess_received(summary: ReleaseSummary, frame: pd.DataFrame) -> RiskSummary:
    """The release's class risk counted on the received file as the link says: on its
    quasi-identifiers, in people through the person column when it has one (a person with
    several rows counted once, by their riskiest row), else in records, a blank value read
    under the link's missing-value rule (``"wildcard"``: a suppressed value matches any
    value). A DataError names a quasi-identifier column the file lacks."""
    person = summary.person_column if summary.person_column in frame.columns else None
    keys = ReleasedKeys.from_frame(frame, summary.quasi_identifiers, person, summary.missing)
    return class_risk(keys)


__all__ = [
    "RELEASE_LINK_VERSION",
    "RELEASE_PARAM",
    "ClassFigures",
    "Estimate",
    "ModelSummary",
    "ReceivedCheck",
    "ReleaseSummary",
    "VerdictSummary",
    "assess_received",
    "check_received",
    "decode_release",
    "encode_release",
    "summarise_release",
]
