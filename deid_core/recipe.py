"""A recipe: the variable roles plus an ordered list of masking steps, serialisable to JSON.

The same recipe drives the dashboard, the command line and (later) the report, so a
configuration found by hand can be replayed on next year's data. JSON form::

    {
      "schema_version": 2,
      "roles": {"quasi_identifiers": ["city", "sex", "age_at_exposure"],
                "direct_identifiers": [], "exposure": "dose", "outcome": "cancer",
                "covariates": ["sex"], "record_id": "person_id"},
      "steps": [{"method": "relative_round", "column": "dose", "digits": 2},
                {"method": "truncate", "column": "age_at_exposure", "decimals": 0}]
    }

An optional ``"weight"`` role names a sampling-weight column (see :class:`Roles`). It is written
only when set and read as absent (None) when missing, so recipes without a weight are exactly
as before: an optional field with a default that keeps the old meaning does not need a new
version (a reader that predates it rejects only recipes that use it, with "unknown role(s)
weight"). The optional ``"sensitive"`` role (a list of columns whose values an intruder must
not learn, see :class:`Roles`) is handled the same way: written only when it lists a column,
read as empty when absent.

Schema versions:

* **1**: ``roles`` and ``steps`` only (any other top-level field is an error). Still read,
  exactly as before; a file without ``schema_version`` is read as version 1.
* **2** (written now): the same ``roles`` and ``steps``, plus two optional sections that make
  it a *configuration file*: ``"model"`` (``{"family", "offset", "trials", "factors",
  "references", "time", "ties"}``, the collaborator's model; the last four are optional)
  and ``"context"`` (the release settings: ``release_context``,
  ``min_cell_size``, scenario probabilities, ``matching_rule``, ...). :class:`Recipe` reads
  the roles and steps and checks only that the sections are objects; they are validated and
  used by :mod:`deid_core.share` (:func:`deid_core.share.load_configuration`), so the command
  line's ``apply`` replays a configuration file as it replays a recipe. A new version number
  was needed because a version-1 reader rejects the new fields.

* **3**: version 2 plus ``"data_steps"``, the whole-data steps (local and record suppression,
  multivariate microaggregation, subsampling: :class:`deid_core.masking.DataStep`), which work
  on several columns at once or on whole records and so belong to no single column. They are
  applied after every column step, in the order listed, each on the records the ones before it
  kept::

      "data_steps": [{"method": "local_suppression", "k": 5, "importance": []}]

  A recipe is written as version 3 only when it has whole-data steps, so every other recipe
  stays a version-2 file that older releases read; a version-2 reader would reject the new
  section anyway.

A version this tool does not know (e.g. a file written by a newer release) is a RecipeError
that says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from deid_core import bounds
from deid_core.cancellation import check_cancelled
from deid_core.errors import DataError, DeidError, RecipeError
from deid_core.identifiers.pseudonyms import crosswalk_frame
from deid_core.masking import (
    DataStep,
    MaskingStep,
    PseudonymStep,
    Step,
    data_step_from_dict,
    step_from_dict,
)
from deid_core.masking.base import person_codes

SCHEMA_VERSION = 3
#: The version written for a recipe without whole-data steps (readable by older releases).
PLAIN_SCHEMA_VERSION = 2
#: Every schema version this module reads (older ones are read as they always were).
READABLE_VERSIONS = (1, 2, 3)
#: The optional top-level sections of a version-2 file (see :mod:`deid_core.share`).
CONFIGURATION_SECTIONS = ("model", "context")

ROLE_NAMES = {
    "direct_identifier": "Direct identifier (never released)",
    "quasi_identifier": "Quasi-identifier (known to an intruder)",
    "exposure": "Exposure",
    "outcome": "Outcome",
    "covariate": "Covariate",
    "record_id": "Record id (links to the source)",
    "weight": "Sampling weight (numeric, positive)",
    "sensitive": "Sensitive (an intruder must not learn it)",
}


def _names(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise RecipeError(f"Roles: '{what}' must be a list of column names.")
    names = tuple(value)
    if not all(isinstance(n, str) and n for n in names):
        raise RecipeError(f"Roles: '{what}' must be a list of column names.")
    if len(set(names)) != len(names):
        raise RecipeError(f"Roles: '{what}' lists a column twice.")
    return names


def _name(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise RecipeError(f"Roles: '{what}' must be a column name.")
    return value


@dataclass(frozen=True)
class Roles:
    """What each column is for. A column may be both a quasi-identifier and the exposure or a
    covariate (Cologne's dose is both); direct identifiers and the record id are never released.

    ``weight`` is an optional sampling-weight column (numeric, positive: each record stands for
    that many people of the population; see :meth:`Recipe.weights`), used to estimate population
    class sizes. It cannot also be a quasi-identifier, the exposure, the outcome, a covariate or
    the record id. It is released like any other column (masking steps may coarsen it: weights
    can reveal strata or small areas) unless it is also listed as a direct identifier, which
    withholds it from the release while still using it for the risk estimate.

    ``sensitive`` lists released columns whose values an intruder must not learn (a diagnosis,
    an income): their attribute disclosure (l-diversity, t-closeness) is measured within each
    class, as the outcome's always is. A sensitive column cannot be a quasi-identifier (its
    value would define the class), a direct identifier or the record id (never released).
    """

    quasi_identifiers: tuple[str, ...] = ()
    direct_identifiers: tuple[str, ...] = ()
    exposure: str | None = None
    outcome: str | None = None
    covariates: tuple[str, ...] = ()
    record_id: str | None = None
    weight: str | None = None
    sensitive: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("quasi_identifiers", "direct_identifiers", "covariates", "sensitive"):
            object.__setattr__(self, name, _names(getattr(self, name), name))
        for name in ("exposure", "outcome", "record_id", "weight"):
            object.__setattr__(self, name, _name(getattr(self, name), name))
        released = set(self.quasi_identifiers) | set(self.covariates)
        released |= {c for c in (self.exposure, self.outcome) if c}
        withheld = set(self.direct_identifiers) | ({self.record_id} if self.record_id else set())
        if released & withheld:
            raise RecipeError(
                "Roles: a direct identifier or the record id cannot also be released as a "
                "quasi-identifier, exposure, outcome or covariate."
            )
        if self.outcome is not None and self.outcome in (self.exposure, *self.covariates):
            raise RecipeError("Roles: the outcome cannot also be the exposure or a covariate.")
        if self.exposure is not None and self.exposure in self.covariates:
            raise RecipeError("Roles: the exposure cannot also be a covariate.")
        if set(self.sensitive) & set(self.quasi_identifiers):
            raise RecipeError(
                "Roles: a sensitive column cannot also be a quasi-identifier (its value would "
                "define the class whose diversity it measures)."
            )
        if set(self.sensitive) & withheld:
            raise RecipeError(
                "Roles: a direct identifier or the record id is never released, so it cannot be "
                "a sensitive column."
            )
        if self.weight is not None:
            clash = [
                label
                for label, hit in (
                    ("a quasi-identifier", self.weight in self.quasi_identifiers),
                    ("the exposure", self.weight == self.exposure),
                    ("the outcome", self.weight == self.outcome),
                    ("a covariate", self.weight in self.covariates),
                    ("the record id", self.weight == self.record_id),
                )
                if hit
            ]
            if clash:
                raise RecipeError(
                    f"Roles: the sampling weight '{self.weight}' cannot also be "
                    f"{' or '.join(clash)}; choose another column for one of the roles."
                )

    def columns(self) -> list[str]:
        """Every column named by a role, in a stable order."""
        ordered = [
            *self.quasi_identifiers,
            *self.direct_identifiers,
            *(c for c in (self.exposure, self.outcome, self.record_id) if c),
            *self.covariates,
            *((self.weight,) if self.weight else ()),
            *self.sensitive,
        ]
        return list(dict.fromkeys(ordered))

    def roles_of(self, column: str) -> list[str]:
        """The role keys of ``column`` (see ``ROLE_NAMES``)."""
        found = []
        if column in self.direct_identifiers:
            found.append("direct_identifier")
        if column in self.quasi_identifiers:
            found.append("quasi_identifier")
        if column == self.exposure:
            found.append("exposure")
        if column == self.outcome:
            found.append("outcome")
        if column in self.covariates:
            found.append("covariate")
        if column == self.record_id:
            found.append("record_id")
        if column == self.weight:
            found.append("weight")
        if column in self.sensitive:
            found.append("sensitive")
        return found

    @property
    def has_model(self) -> bool:
        return self.exposure is not None and self.outcome is not None

    @property
    def attribute_targets(self) -> tuple[str, ...]:
        """The columns whose attribute disclosure is measured: the outcome (unless it is a
        quasi-identifier, whose value defines the class) and every sensitive column."""
        outcome = () if self.outcome in (None, *self.quasi_identifiers) else (self.outcome,)
        return tuple(dict.fromkeys((*outcome, *self.sensitive)))

    def to_dict(self) -> dict[str, Any]:
        """The roles as JSON-ready values; ``"weight"`` only when set and ``"sensitive"`` only
        when it lists a column (see the module notes)."""
        data: dict[str, Any] = {
            "quasi_identifiers": list(self.quasi_identifiers),
            "direct_identifiers": list(self.direct_identifiers),
            "exposure": self.exposure,
            "outcome": self.outcome,
            "covariates": list(self.covariates),
            "record_id": self.record_id,
        }
        if self.weight is not None:
            data["weight"] = self.weight
        if self.sensitive:
            data["sensitive"] = list(self.sensitive)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Roles:
        if not isinstance(data, Mapping):
            raise RecipeError("Roles must be an object mapping role names to columns.")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise RecipeError(f"Roles: unknown role(s) {', '.join(sorted(unknown))}.")
        return cls(**dict(data))


@dataclass(frozen=True)
class Release:
    """The file to send and the crosswalk of its pseudonyms (columns ``column``,
    ``released_as``, ``original``, ``pseudonym``; empty without pseudonyms). The crosswalk
    links every pseudonym to its person: it stays with the custodian, never with the data."""

    frame: pd.DataFrame
    crosswalk: pd.DataFrame


@dataclass(frozen=True)
class ReleaseStage:
    """What a recipe's whole-data steps did to the data masked by its column steps.

    ``values``: the new values of the columns they changed, one per original record (a
    record that was later removed keeps the value it had when it left); ``kept``: which
    original records are released (None: all); ``wildcards``: per column, the cells suppressed
    (released as missing; they match any value when the risk is counted); ``outcomes``: each
    step with its facts (see :class:`deid_core.masking.DataOutcome`)."""

    values: Mapping[str, pd.Series]
    kept: np.ndarray | None
    wildcards: Mapping[str, np.ndarray]
    outcomes: tuple[tuple[DataStep, Mapping[str, Any]], ...]

    @property
    def released_rows(self) -> np.ndarray | None:
        """Positions of the released records among the original ones (None: all)."""
        return None if self.kept is None else np.flatnonzero(self.kept)

    @property
    def sampling_fraction(self) -> float | None:
        """The share of the records that subsampling kept (None without subsampling)."""
        fractions = [f["sampling_fraction"] for _, f in self.outcomes if "sampling_fraction" in f]
        return float(np.prod(fractions)) if fractions else None

    def summaries(self) -> list[str]:
        """One plain-language line per whole-data step: what it did."""
        return [step.summary(facts) for step, facts in self.outcomes]

    def to_dict(self) -> list[dict[str, Any]]:
        """Each step's method and facts, JSON-ready (for the command line)."""
        return [{"method": step.method, **facts} for step, facts in self.outcomes]


def _check_kind(step: Step, frame: pd.DataFrame, column: str) -> None:
    """``step.check_kind`` on ``frame[column]``, first on its distinct values, then, if they
    are refused, on every record (the message counts records). A column whose values cannot
    be told apart by hashing, or that a check cannot read at all, is left to the step."""
    series = frame[column]
    if not isinstance(series, pd.Series):  # two columns of that name: left to the step
        return
    try:
        step.check_kind(series.drop_duplicates(), column)
    except RecipeError:
        step.check_kind(series, column)
    except (TypeError, ValueError):  # unhashable or unreadable values: met when applied
        return


def _put(full: pd.Series, rows: np.ndarray, values: pd.Series) -> pd.Series:
    """``full`` with the records at positions ``rows`` set to ``values`` (as a new Series, its
    type widened when ``values`` need it: whole numbers to floats for a missing value)."""
    if rows.size == len(full):
        return values.set_axis(full.index)
    try:
        target = full.astype(values.dtype) if full.dtype != values.dtype else full.copy()
    except (TypeError, ValueError):  # dates as text beside days as numbers: keep both
        target = full.astype(object)
    target.iloc[rows] = values.to_numpy()
    return target


@dataclass(frozen=True)
class Recipe:
    """Roles, an ordered tuple of column steps (each masks one column) and an ordered tuple of
    whole-data steps (suppression, multivariate microaggregation, subsampling), applied after
    the column steps. Applying it never modifies its input."""

    roles: Roles = field(default_factory=Roles)
    steps: tuple[MaskingStep, ...] = ()
    data_steps: tuple[DataStep, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.steps))
        object.__setattr__(self, "data_steps", tuple(self.data_steps))
        bounds.RECIPE_STEPS.check(len(self.steps) + len(self.data_steps), "The recipe has")
        smoothing = sum(getattr(step, "method", None) == "kernel_smooth" for step in self.steps)
        bounds.SMOOTHING_STEPS.check(smoothing, "The recipe has")
        withheld = set(self.roles.direct_identifiers) | (
            {self.roles.record_id} if self.roles.record_id else set()
        )
        for step in self.steps:
            if not isinstance(step, MaskingStep):
                raise RecipeError("Recipe steps must be masking steps.")
            if step.pseudonym and step.column not in withheld:
                raise RecipeError(
                    f"'{step.column}' is released as it is or masked: only a direct identifier "
                    "or the record id can be replaced by a pseudonym."
                )
            if step.column in withheld and not step.pseudonym:
                raise RecipeError(
                    f"'{step.column}' is a direct identifier or the record id: it is never "
                    "released, so it is not masked (it can be replaced by a pseudonym)."
                )
        pseudonymised = [step.column for step in self.steps if step.pseudonym]
        if len(set(pseudonymised)) < len(pseudonymised):
            raise RecipeError("A column can be replaced by one pseudonym only.")
        names = [step.released_name for step in self.pseudonym_steps]
        if len(set(names)) < len(names):
            raise RecipeError("Two pseudonymised columns are released under the same name.")
        # A step whose output an intruder recomputes from the source (an age, relative dates)
        # must work on the source's own values: after a step that changed what it reads, or
        # (person by person) after one that removed some of a person's records, it would not.
        changed_by: dict[str, DataStep] = {}
        removed_by: DataStep | None = None
        for data_step in self.data_steps:
            if not isinstance(data_step, DataStep):
                raise RecipeError("Recipe whole-data steps must be whole-data steps.")
            if data_step.recomputable:
                # a step that reads the source never sees what earlier steps changed
                reads = data_step.reads(self.roles.quasi_identifiers)
                if data_step.reads_source:
                    reads = ()
                before = next((c for c in reads if c in changed_by), None)
                earlier = changed_by[before] if before is not None else None
                if earlier is None and data_step.needs_person and removed_by is not None:
                    earlier = removed_by
                if earlier is not None:
                    raise RecipeError(
                        f"{data_step.label} comes after {earlier.label.lower()}: put it first, "
                        "so that it works on the true values of all of a person's records, as an "
                        "intruder who holds the source recomputes it (and the risk measures "
                        "judge it so)."
                    )
            if not data_step.recomputable or data_step.reads_source:
                for column in data_step.writes(self.roles.quasi_identifiers):
                    changed_by.setdefault(column, data_step)
            if data_step.removes_records and removed_by is None:
                removed_by = data_step
            written = set(data_step.writes(self.roles.quasi_identifiers)) & withheld
            if written:
                raise RecipeError(
                    f"'{sorted(written)[0]}' is a direct identifier or the record id: it is "
                    "never released, so it is not masked."
                )

    # ----------------------------------------------------------------- checks and queries
    def missing_columns(self, columns: Iterable[str]) -> list[str]:
        """Columns the recipe names that the data do not have."""
        present = set(columns)
        named = self.roles.columns()
        named += [c for step in self.steps for c in (step.column, *step.context_columns)]
        qis = self.roles.quasi_identifiers
        named += [c for step in self.data_steps for c in (*step.reads(qis), *step.writes(qis))]
        return [c for c in dict.fromkeys(named) if c not in present]

    def check_columns(
        self, columns: Iterable[str] | pd.DataFrame, *, replaced: Iterable[str] = ()
    ) -> None:
        """Raise a RecipeError naming every column the data lack. Given the data themselves
        (a DataFrame, not only their column names or an engine's schema: a text column of a
        schema may hold numbers), also refuse a step on a column of the wrong kind
        (:meth:`check_kinds`, with ``replaced``)."""
        missing = self.missing_columns(columns)
        if missing:
            listed = ", ".join(f"'{c}'" for c in missing)
            raise RecipeError(f"The recipe names column(s) the data do not have: {listed}.")
        if isinstance(columns, pd.DataFrame):
            self.check_kinds(columns, replaced=replaced)

    def check_kinds(self, frame: pd.DataFrame, *, replaced: Iterable[str] = ()) -> None:
        """Refuse a step whose column is not of the kind the step takes (numbers, dates,
        codes: :attr:`deid_core.masking.base.Step.takes`) with the RecipeError the step itself
        raises when applied (naming the step and the column, counting the entries at fault),
        before anything is applied: the command line runs it before it loads the libraries
        that compute results.

        Only what a step reads as it is in ``frame`` is checked, in the order the recipe is
        applied: a column step's own column when it is that column's first step, its context
        columns (read from the original data), and the columns of a whole-data step that no
        column step or earlier whole-data step changes, while no earlier whole-data step has
        left records out. A step that reads what an earlier one made is checked when it is
        applied. A column is checked on its distinct values first (every kind check is
        value by value, so the verdict is the same, at a fraction of the work when values
        repeat), and a refusal is then made on every record, so that it counts records.

        ``replaced``: columns whose steps the caller replaces by others (the columns a search
        tries settings for): neither their steps nor what whole-data steps read of them is
        checked (the context columns other steps read from the data still are)."""
        qis = self.roles.quasi_identifiers
        skipped = set(replaced)
        columns = dict.fromkeys(step.column for step in self.steps if not step.pseudonym)
        for column in (c for c in columns if c not in skipped):
            for position, step in enumerate(self.steps_for(column)):
                for read in step.kind_columns(qis):
                    if read != column or position == 0:
                        _check_kind(step, frame, read)
        changed = set(columns) | skipped
        for data_step in self.data_steps:
            for read in data_step.kind_columns(qis):
                if read not in changed:
                    _check_kind(data_step, frame, read)
            if data_step.removes_records:
                return
            changed.update(data_step.writes(qis))

    def weights(self, df: pd.DataFrame) -> np.ndarray | None:
        """The sampling weights of ``df`` as floats (None without a weight role), checked to be
        numeric, present and positive. The original column is used: weights describe the
        sample design, whatever masking the release applies to them."""
        column = self.roles.weight
        if column is None:
            return None
        if column not in df.columns:
            raise DataError(f"The data have no weight column '{column}'.")
        series = df[column]
        if not (
            pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series)
        ):
            raise DataError(f"The weight column '{column}' must be numeric.")
        values = series.to_numpy(dtype=float, na_value=np.nan)
        if np.isnan(values).any():
            raise DataError(f"The weight column '{column}' has missing values.")
        if not (np.isfinite(values).all() and (values > 0).all()):
            raise DataError(f"The weight column '{column}' must be positive and finite.")
        return values

    @property
    def is_random(self) -> bool:
        """Whether any step draws random numbers (utility then needs replicates)."""
        return any(step.random for step in self.all_steps)

    @property
    def all_steps(self) -> tuple[Step, ...]:
        """The column steps, then the whole-data steps: the positions the risk-utility map's
        sweeps and :meth:`with_step_params` use."""
        return (*self.steps, *self.data_steps)

    @property
    def data_columns(self) -> tuple[str, ...]:
        """The columns whose values the whole-data steps change."""
        qis = self.roles.quasi_identifiers
        return tuple(dict.fromkeys(c for step in self.data_steps for c in step.writes(qis)))

    @property
    def removes_records(self) -> bool:
        """Whether a whole-data step can leave records out of the release."""
        return any(step.removes_records for step in self.data_steps)

    def steps_for(self, column: str) -> tuple[MaskingStep, ...]:
        return tuple(step for step in self.steps if step.column == column)

    def perturbing_steps(self, column: str) -> tuple[Step, ...]:
        """The steps that perturb ``column``: its perturbative column steps (noise, smoothing)
        and the perturbative whole-data steps that write it (a date shift per person)."""
        qis = self.roles.quasi_identifiers
        own = tuple(step for step in self.steps_for(column) if step.perturbative)
        return own + tuple(
            step for step in self.data_steps if step.perturbative and column in step.writes(qis)
        )

    def linked_steps(self, index: int) -> list[int]:
        """Positions of the steps that change together with step ``index`` when one of its
        parameters is swept: every kernel-smoothing step (the smoothed variables share one
        set of weights, Zhou et al. 2010), otherwise the step alone."""
        if not 0 <= index < len(self.all_steps):
            raise RecipeError("The step is not in the recipe.")
        if self.all_steps[index].method == "kernel_smooth":
            return [i for i, s in enumerate(self.steps) if s.method == "kernel_smooth"]
        return [index]

    @property
    def masked_columns(self) -> list[str]:
        """The released columns some step changes (column steps first, then whole-data
        steps); pseudonymised identifiers are not among them (see :attr:`pseudonym_steps`)."""
        column_steps = (step.column for step in self.steps if not step.pseudonym)
        return list(dict.fromkeys([*column_steps, *self.data_columns]))

    @property
    def pseudonym_steps(self) -> tuple[PseudonymStep, ...]:
        """The steps that release a withheld column as pseudonyms (at most one per column)."""
        return tuple(step for step in self.steps if isinstance(step, PseudonymStep))

    @property
    def needs_key(self) -> bool:
        """Whether writing the release needs a secret key (a keyed-hash pseudonym)."""
        return any(step.needs_key for step in self.pseudonym_steps)

    def describe(self) -> list[str]:
        """One plain-language line per step."""
        return [step.describe() for step in self.all_steps] or ["no masking"]

    # ----------------------------------------------------------------- building
    def with_roles(self, roles: Roles) -> Recipe:
        return replace(self, roles=roles)

    def with_steps_for(self, column: str, steps: Iterable[MaskingStep]) -> Recipe:
        """Replace every step of ``column`` by ``steps`` (kept where the first one stood)."""
        new = tuple(steps)
        if any(step.column != column for step in new):
            raise RecipeError("with_steps_for: every new step must mask the named column.")
        kept: list[MaskingStep] = []
        inserted = False
        for step in self.steps:
            if step.column == column:
                if not inserted:
                    kept.extend(new)
                    inserted = True
            else:
                kept.append(step)
        if not inserted:
            kept.extend(new)
        return replace(self, steps=tuple(kept))

    def with_data_steps(self, data_steps: Iterable[DataStep]) -> Recipe:
        """The same roles and column steps with these whole-data steps."""
        return replace(self, data_steps=tuple(data_steps))

    def with_step_params(self, index: int, **params: Any) -> Recipe:
        """The recipe with step ``index`` of :attr:`all_steps` (and every step linked to it,
        see :meth:`linked_steps`) given new parameters."""
        steps, data_steps = list(self.steps), list(self.data_steps)
        for i in self.linked_steps(index):
            if i < len(steps):
                steps[i] = steps[i].with_params(**params)
            else:
                j = i - len(steps)
                data_steps[j] = data_steps[j].with_params(**params)
        return replace(self, steps=tuple(steps), data_steps=tuple(data_steps))

    def without_seeds(self) -> Recipe:
        """The same recipe with every seed removed (for sharing: the seed helps an intruder)."""
        return self.with_seed(None)

    def with_seed(self, seed: int | None) -> Recipe:
        """The same recipe with every random step seeded from ``seed`` (step i of
        :attr:`all_steps` gets seed + i, so two noisy columns do not share draws); None removes
        the seeds."""

        def seeded(step: Any, i: int) -> Any:
            if not step.random:
                return step
            return step.with_params(seed=None if seed is None else seed + i)

        steps = tuple(seeded(step, i) for i, step in enumerate(self.steps))
        offset = len(self.steps)
        data_steps = tuple(seeded(step, offset + i) for i, step in enumerate(self.data_steps))
        return replace(self, steps=steps, data_steps=data_steps)

    # ----------------------------------------------------------------- applying
    def apply_to_column(
        self,
        df: pd.DataFrame,
        column: str,
        replicate: int = 0,
        cache: dict[Any, Any] | None = None,
    ) -> pd.Series:
        """The masked version of one column (its steps in order). Steps that read other
        columns (kernel smoothing's coordinates) read them from ``df``, the original data; pass
        the same ``cache`` dict for several columns of the same ``df`` to let such steps share
        work (see :meth:`MaskingStep.apply`)."""
        series = df[column]
        for step in self.steps_for(column):
            series = step.apply(series, replicate, frame=df, cache=cache)
        return series

    def release_stage(
        self,
        masked: pd.DataFrame,
        replicate: int = 0,
        *,
        persons: np.ndarray | None = None,
        source: pd.DataFrame | None = None,
    ) -> ReleaseStage:
        """The whole-data steps applied in order to ``masked`` (the data after the column
        steps, with at least the columns the steps read and write), each on the records the
        steps before it kept; ``masked`` is not modified. ``persons``: the person of each row of
        ``masked`` (see :meth:`DataStep.apply`), passed to each step for the rows it works
        on; None: from the record id when ``masked`` has it (so that every path to a release,
        the dashboard's, ``apply``'s and ``assess``'s, counts the same people), else one
        person per row. ``source``: the data as they came, row by row as ``masked``, from which
        steps that derive columns from the source (:attr:`DataStep.reads_source`: a length of
        stay, a visit number) read; needed only when the recipe has such a step."""
        n = len(masked)
        record_id = self.roles.record_id
        if persons is None and record_id is not None and record_id in masked.columns:
            persons = pd.factorize(masked[record_id], use_na_sentinel=True)[0]
        persons = person_codes(persons, n, "The release")
        qis = self.roles.quasi_identifiers
        kept = np.ones(n, dtype=bool)
        values: dict[str, pd.Series] = {}
        wildcards: dict[str, np.ndarray] = {}
        outcomes: list[tuple[DataStep, Mapping[str, Any]]] = []
        if source is None and any(step.reads_source for step in self.data_steps):
            raise RecipeError(
                "The release: a step that derives a column from the data as they came needs "
                "those data (apply the recipe through Recipe.apply or the workspace)."
            )
        for step in self.data_steps:
            check_cancelled()
            rows = np.flatnonzero(kept)
            read_from = source if step.reads_source and source is not None else None
            frame = pd.DataFrame(
                {
                    c: values.get(c, masked[c]).iloc[rows]
                    if read_from is None
                    else read_from[c].iloc[rows].to_numpy()
                    for c in step.reads(qis)
                },
                index=masked.index[rows],
            )
            outcome = step.apply(
                frame,
                qis,
                replicate,
                {c: w[rows] for c, w in wildcards.items()},
                persons=None if persons is None else persons[rows],
            )
            for column, series in outcome.values.items():
                values[column] = _put(values.get(column, masked[column]), rows, series)
            for column, cells in outcome.wildcards.items():
                flags = wildcards.setdefault(column, np.zeros(n, dtype=bool))
                flags[rows[np.asarray(cells, dtype=bool)]] = True
            if outcome.keep is not None:
                kept[rows[~np.asarray(outcome.keep, dtype=bool)]] = False
            outcomes.append((step, dict(outcome.facts)))
        return ReleaseStage(
            values=values,
            kept=None if kept.all() else kept,
            wildcards=wildcards,
            outcomes=tuple(outcomes),
        )

    def apply(
        self,
        df: pd.DataFrame,
        replicate: int = 0,
        *,
        persons: np.ndarray | None = None,
    ) -> pd.DataFrame:
        """A masked copy of ``df``: the column steps, then the whole-data steps (which may
        leave records out); ``replicate`` selects the random draw of random steps, ``persons``
        the person of each row (see :meth:`release_stage`). Columns smoothed with the same
        weights share one weight computation. Pseudonyms are not applied here but when the
        release is written (:meth:`released`)."""
        self.check_columns(df.columns)
        masked = df.copy()
        cache: dict[Any, Any] = {}
        for column in dict.fromkeys(step.column for step in self.steps if not step.pseudonym):
            masked[column] = self.apply_to_column(df, column, replicate, cache)
        if not self.data_steps:
            return masked
        stage = self.release_stage(masked, replicate, persons=persons, source=df)
        for column, values in stage.values.items():
            masked[column] = values
        return masked if stage.kept is None else masked.iloc[stage.released_rows]

    def release(
        self,
        df: pd.DataFrame,
        keep_record_id: bool = False,
        key: bytes | None = None,
        *,
        persons: np.ndarray | None = None,
    ) -> pd.DataFrame:
        """The file to send: masked, with direct identifiers (and the record id) dropped or
        replaced by their pseudonyms (see :meth:`released`); ``persons`` as in
        :meth:`release_stage`."""
        return self.released(self.apply(df, persons=persons), keep_record_id, key).frame

    def released(
        self, masked: pd.DataFrame, keep_record_id: bool = False, key: bytes | None = None
    ) -> Release:
        """The release made from ``masked`` (the masked data, withheld columns still as they
        were): each pseudonymised column replaced by its pseudonyms, in its place and under
        its released name, the other direct identifiers dropped, and the record id dropped
        unless ``keep_record_id`` (a pseudonymised record id is released as pseudonyms
        either way). ``key`` is the secret key of keyed-hash pseudonyms; it is used here and
        kept nowhere. Returns the frame and the crosswalk (original -> pseudonym), which
        belongs to the custodian, never to the release."""
        self.check_columns(masked.columns)
        pseudonyms = {step.column: step for step in self.pseudonym_steps}
        drop = [c for c in self.roles.direct_identifiers if c not in pseudonyms]
        record_id = self.roles.record_id
        if record_id and not keep_record_id and record_id not in pseudonyms:
            drop.append(record_id)
        frame = masked.drop(columns=drop)
        kept = set(frame.columns) - set(pseudonyms)
        parts = []
        renames = {}
        for column, step in pseudonyms.items():
            name = step.released_name
            if name in kept:
                raise DataError(
                    f"The pseudonyms of '{column}' would be released as '{name}', which is "
                    "already a released column: choose another name."
                )
            result = step.pseudonymise(masked[column], key)
            frame[column] = result.values
            renames[column] = name
            parts.append((column, name, result.crosswalk))
        return Release(frame.rename(columns=renames), crosswalk_frame(parts))

    # ----------------------------------------------------------------- JSON
    def to_dict(self, include_seeds: bool = True) -> dict[str, Any]:
        """The recipe as a JSON-ready dict (roles and steps, and the whole-data steps of a
        version-3 recipe; the model and the release context are added by
        :func:`deid_core.share.configuration_json`). Version 2 without whole-data steps."""
        data: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION if self.data_steps else PLAIN_SCHEMA_VERSION,
            "roles": self.roles.to_dict(),
            "steps": [step.to_dict(include_seed=include_seeds) for step in self.steps],
        }
        if self.data_steps:
            data["data_steps"] = [
                step.to_dict(include_seed=include_seeds) for step in self.data_steps
            ]
        return data

    def to_json(self, include_seeds: bool = True, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(include_seeds=include_seeds), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recipe:
        if not isinstance(data, Mapping):
            raise RecipeError("A recipe must be a JSON object with 'roles' and 'steps'.")
        version = data.get("schema_version", 1)
        if isinstance(version, bool) or version not in READABLE_VERSIONS:
            readable = ", ".join(str(v) for v in READABLE_VERSIONS)
            newer = isinstance(version, int) and not isinstance(version, bool)
            newer = newer and version > SCHEMA_VERSION
            raise RecipeError(
                f"This recipe has schema version {version}; this tool reads version(s) "
                f"{readable}."
                + (
                    " It was probably written by a newer release: update this tool."
                    if newer
                    else ""
                )
            )
        allowed = {"schema_version", "roles", "steps"}
        if version >= 3:
            allowed.add("data_steps")
        if version >= 2:
            allowed |= set(CONFIGURATION_SECTIONS)
            for section in CONFIGURATION_SECTIONS:
                if data.get(section) is not None and not isinstance(data[section], Mapping):
                    raise RecipeError(f"Recipe: '{section}' must be an object.")
        unknown = set(data) - allowed
        if unknown:
            raise RecipeError(f"Recipe: unknown field(s) {', '.join(sorted(unknown))}.")
        steps = data.get("steps", [])
        if not isinstance(steps, list):
            raise RecipeError("Recipe: 'steps' must be a list.")
        data_steps = data.get("data_steps", [])
        if not isinstance(data_steps, list):
            raise RecipeError("Recipe: 'data_steps' must be a list.")
        bounds.RECIPE_STEPS.check(len(steps) + len(data_steps), "The recipe has")
        return cls(
            roles=Roles.from_dict(data.get("roles", {})),
            steps=tuple(step_from_dict(s) for s in steps),
            data_steps=tuple(data_step_from_dict(s) for s in data_steps),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Recipe:
        return cls.from_dict(parse_json(text))


#: A JSON string (skipped whole) or a bracket that opens or closes a level of nesting.
_JSON_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def json_depth(text: str) -> int:
    """How deeply ``text``'s objects and lists nest (brackets inside strings do not count), found
    without parsing, so that a file nested thousands of levels deep is refused before the
    parser recurses into it."""
    depth = deepest = 0
    for token in _JSON_NESTING.findall(text):
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
    return deepest


def parse_json(text: str | bytes, what: str = "The recipe") -> Any:
    """The data in a recipe or configuration file, or a RecipeError naming the line at fault.

    Bounded first (:mod:`deid_core.bounds`): at most ``text_file_bytes`` of text, nested at
    most ``json_depth`` levels; ``what`` names the text in the messages.
    """
    bounds.TEXT_FILE_BYTES.check(len(text), f"{what} has")
    try:
        if isinstance(text, bytes):
            text = text.decode(json.detect_encoding(text))
        bounds.JSON_DEPTH.check(json_depth(text), f"{what} has")
        return json.loads(text)
    except DeidError:
        raise
    except ValueError as error:  # bad JSON or text, or a number of more than 4,300 digits
        raise RecipeError(
            f"{what} is not valid JSON (line {getattr(error, 'lineno', '?')})."
        ) from error
