"""The masking-step protocol shared by every method family.

A step is a small frozen dataclass that names the column it masks and its parameters. It
validates the parameters when it is built, serialises to a plain dict (so a recipe is JSON),
and applies itself to a pandas Series, always returning a new Series: the input is never
modified.

A step may also read other columns of the data, its :attr:`MaskingStep.context_columns` (kernel
smoothing reads the coordinates). Such a step is applied with ``frame=``, the full original
data, and may keep expensive intermediate results in ``cache=``, a dict owned by the caller
(see :meth:`MaskingStep.apply`). Steps without context columns ignore both.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError

#: Largest whole number every JSON reader keeps exactly (JavaScript's Number.MAX_SAFE_INTEGER):
#: larger seeds are written as text of digits, so a recipe stays readable everywhere.
JSON_SAFE_INTEGER = 2**53 - 1
#: Largest seed a step accepts (the dashboard draws 128-bit seeds; numpy's SeedSequence takes
#: integers of any size).
MAX_SEED = 2**256 - 1

#: The kinds of column a step takes (:attr:`Step.takes`): any values (categories, text,
#: numbers alike), numbers, dates, or codes (text such as ICD-10 or ZIP codes).
ANY = "any"
NUMBERS = "numbers"
DATES = "dates"
CODES = "codes"
COLUMN_KINDS = (ANY, NUMBERS, DATES, CODES)


def number_text(value: float) -> str:
    """A number as the shortest decimal that reads back as the same float, without a trailing
    ".0" and never "-0" (0.1 -> "0.1", 1234560.0 -> "1234560", 1e-300 -> "1e-300")."""
    text = repr(float(value) + 0.0)
    return text[:-2] if text.endswith(".0") else text


def without_negative_zero(series: pd.Series) -> pd.Series:
    """``series`` with every -0.0 made 0.0 (a masked value must not carry a sign that its
    magnitude does not: -0.0 beside 0.0 would split a class in the released file and tell
    which originals were negative)."""
    if pd.api.types.is_float_dtype(series.dtype):
        return series + 0.0
    return series


def numeric_values(series: pd.Series, column: str, method: str) -> np.ndarray:
    """The series as float64, or a RecipeError saying how many entries are not numbers."""
    if pd.api.types.is_bool_dtype(series.dtype):
        raise RecipeError(f"{method} needs a numeric column, but '{column}' is true/false.")
    if pd.api.types.is_numeric_dtype(series.dtype):
        return series.to_numpy(dtype="float64", na_value=np.nan)
    converted = pd.to_numeric(series, errors="coerce")
    bad = int((converted.isna() & series.notna()).sum())
    if bad:
        entries = (
            "1 entry that is not a number" if bad == 1 else f"{bad:,} entries that are not numbers"
        )
        raise RecipeError(
            f"{method} needs a numeric column, but '{column}' has {entries}. Clean "
            f"{'it' if bad == 1 else 'them'} or choose another method."
        )
    return converted.to_numpy(dtype="float64", na_value=np.nan)


def restore_integer_dtype(original: pd.Series, values: np.ndarray) -> pd.Series:
    """Wrap ``values`` as a Series like ``original``; integer input stays integer if it can."""
    result = pd.Series(values, index=original.index, name=original.name)
    if pd.api.types.is_integer_dtype(original.dtype):
        finite = values[~np.isnan(values)]
        if finite.size == values.size and np.all(finite == np.round(finite)):
            return result.astype(original.dtype)
    return result


def require_finite(value: Any, name: str, method: str, positive: bool = False) -> float:
    """Validate a numeric parameter; return it as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise RecipeError(f"{method}: '{name}' must be a number.")
    try:
        value = float(value)
    except OverflowError:  # a whole number beyond the range of floating point (10**400)
        value = math.inf
    if not math.isfinite(value):
        raise RecipeError(f"{method}: '{name}' must be a finite number.")
    if positive and value <= 0:
        raise RecipeError(f"{method}: '{name}' must be greater than zero.")
    return value


def checked_seed(seed: Any, method: str) -> int | None:
    """A random step's seed as an int (None: no seed). Whole numbers from 0 to ``MAX_SEED``,
    given as a number or as text of digits (how recipes write seeds beyond
    ``JSON_SAFE_INTEGER``); old small seeds read as they always did."""
    if seed is None:
        return None
    if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 78:
        seed = int(seed)
    if (
        isinstance(seed, bool)
        or not isinstance(seed, (int, np.integer))
        or not 0 <= seed <= MAX_SEED
    ):
        raise RecipeError(
            f"{method}: the seed must be a whole number from 0 to 2^256 - 1 (in a recipe "
            "file, a number or text of digits)."
        )
    return int(seed)


def require_int(value: Any, name: str, method: str, low: int, high: int) -> int:
    """Validate an integer parameter within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise RecipeError(f"{method}: '{name}' must be a whole number.")
    if not low <= int(value) <= high:
        raise RecipeError(f"{method}: '{name}' must be between {low} and {high}.")
    return int(value)


class Step:
    """What every step of a recipe shares, whether it masks one column (:class:`MaskingStep`)
    or the data as a whole (:class:`DataStep`): its JSON tag and plain-language name, whether
    it is random, perturbative, and which parameter the risk-utility map sweeps; parameters
    validated when it is built; a dict form; copies with new parameters.

    A step that perturbs values (``perturbative``: noise, smoothing, microaggregation, PRAM)
    releases values an intruder cannot match exactly, so the class-based risk does not describe
    its column; see :attr:`perturbative`.
    """

    method: ClassVar[str] = ""
    label: ClassVar[str] = ""
    random: ClassVar[bool] = False
    sweep_parameter: ClassVar[str | None] = None
    _PERTURBATIVE: ClassVar[bool] = False
    #: The kind of column the step takes (one of :data:`COLUMN_KINDS`): the columns of
    #: :meth:`kind_columns` must be of it, as :meth:`check_kind` checks. A recipe checks them
    #: on the data before anything is applied (:meth:`deid_core.recipe.Recipe.check_columns`),
    #: so that a step on a column of the wrong kind is refused before any work.
    takes: ClassVar[str] = ANY

    @property
    def perturbative(self) -> bool:
        """Whether the released values are perturbed rather than generalised: the intruder's
        exact match on them says nothing (noise, smoothing), so the risk of the column is
        judged by matching within the perturbation's reach, not by equivalence classes."""
        return self._PERTURBATIVE

    def _validate(self) -> None:  # an optional hook: most steps override it
        """Check the parameters; raise RecipeError with a clear message."""

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        """The columns the step reads that must be of the kind it :attr:`takes` (none for a
        step that takes any values; given the recipe's quasi-identifiers)."""
        return ()

    def check_kind(self, series: pd.Series, column: str) -> None:
        """Raise the RecipeError the step itself raises when ``series`` (its column
        ``column``) is not of the kind it :attr:`takes`; the message names the step and the
        column and counts the entries at fault, never quoting one. Numbers are checked here
        (:func:`numeric_values`); steps that take dates or codes override it with their own
        check, the one they apply."""
        if self.takes == NUMBERS:
            numeric_values(series, column, self.label)

    def describe(self) -> str:
        """A one-line plain-language description."""
        return self.label.lower()

    def to_dict(self, include_seed: bool = True) -> dict[str, Any]:
        """The step as a JSON-ready dict tagged by ``method``."""
        out: dict[str, Any] = {"method": self.method}
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if field.name == "seed" and not include_seed:
                continue
            if field.name == "seed" and value is not None and value > JSON_SAFE_INTEGER:
                value = str(value)  # text of digits: JSON readers keep it exactly
            out[field.name] = _jsonable(value)
        return out

    def with_params(self, **params: Any) -> Step:
        """A copy with some parameters changed (validated again)."""
        return dataclasses.replace(self, **params)  # type: ignore[type-var]

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        """Values of :attr:`sweep_parameter` worth trying on the risk-utility map (``series``:
        the column a column step masks; whole-data steps do not need it)."""
        return []


@dataclass(frozen=True)
class MaskingStep(Step, ABC):
    """One masking operation on one column.

    Subclasses set ``method`` (the JSON tag), ``label`` (plain-language name), ``random``
    (whether the result depends on a seed) and ``sweep_parameter`` (the parameter that the
    risk-utility map sweeps), and implement :meth:`_transform` and :meth:`describe`.
    A ``pseudonym`` step replaces a withheld column (a direct identifier or the record id) by
    pseudonyms (:mod:`deid_core.masking.pseudonyms`); it is the only kind of step such a
    column may have, and it is applied when the release is written.
    """

    column: str

    _ELEMENTWISE: ClassVar[bool] = False
    pseudonym: ClassVar[bool] = False

    @property
    def elementwise(self) -> bool:
        """Whether each value is masked on its own, so that masking the distinct values and
        mapping them back gives the same column (rounding, coding, recoding do; noise and
        interval means do not)."""
        return self._ELEMENTWISE

    def __post_init__(self) -> None:
        if not isinstance(self.column, str) or not self.column.strip():
            raise RecipeError(f"{self.label or 'A masking step'} needs a column name.")
        self._validate()

    @property
    def context_columns(self) -> tuple[str, ...]:
        """Other columns of the data that the step reads (none unless a step says so)."""
        return ()

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        """Its own column, unless the step takes any values (a step that also reads context
        columns of its kind adds them)."""
        return () if self.takes == ANY else (self.column,)

    @abstractmethod
    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        """The masked values of ``series`` (a private copy the step may modify).

        A step with :attr:`context_columns` is called with two more keywords, ``frame`` (the
        full original data, checked to hold those columns and the rows of ``series``) and
        ``cache`` (a dict, see :meth:`apply`); other steps are called without them.
        """

    def apply(
        self,
        series: pd.Series,
        replicate: int = 0,
        frame: pd.DataFrame | None = None,
        cache: dict[Any, Any] | None = None,
    ) -> pd.Series:
        """Return the masked copy of ``series`` (``replicate`` selects the random draw).

        ``frame`` is the full original data, needed only by steps with :attr:`context_columns`;
        ``cache`` is a dict the caller owns in which such a step may keep intermediate results
        (e.g. smoothing weights) for other steps applied to the same ``frame``. Neither is
        modified by steps without context columns, nor is ``frame`` ever modified. No masked
        number is -0.0.
        """
        context: dict[str, Any] = {}
        if self.context_columns:
            self._check_frame(series, frame)
            context = {"frame": frame, "cache": {} if cache is None else cache}
        result = without_negative_zero(self._transform(series.copy(), replicate, **context))
        result.name = series.name
        return result

    def _check_frame(self, series: pd.Series, frame: pd.DataFrame | None) -> None:
        needed = ", ".join(f"'{c}'" for c in self.context_columns)
        if frame is None:
            raise RecipeError(
                f"{self.label} of '{self.column}' also reads column(s) {needed}: apply it "
                "through the recipe, which passes the whole data set."
            )
        missing = [c for c in self.context_columns if c not in frame.columns]
        if missing:
            listed = ", ".join(f"'{c}'" for c in missing)
            raise RecipeError(
                f"{self.label} of '{self.column}' needs column(s) {listed}, which the data do "
                "not have."
            )
        if not frame.index.equals(series.index):
            raise RecipeError(
                f"{self.label} of '{self.column}': the column and the data set passed with it "
                "have different rows."
            )

    def describe(self) -> str:
        """A one-line plain-language description, e.g. "dose: rounded to 2 significant digits"."""
        return f"{self.column}: {self.label.lower()}"

    def with_params(self, **params: Any) -> MaskingStep:
        """A copy with some parameters changed (validated again)."""
        return dataclasses.replace(self, **params)


@dataclass(frozen=True)
class DataOutcome:
    """What a whole-data step did to the records it was given (``n`` of them, in order).

    ``values``: the new values of the columns it changed, each a Series on the records' index;
    ``keep``: which records stay in the release (None: all of them); ``wildcards``: per column,
    the cells it suppressed (released as missing, and matching any value when the risk is
    counted); ``facts``: what it did, as plain JSON-ready numbers (values suppressed per column,
    records removed, ...), shown on the Mask page, in the report and in the command line's
    JSON."""

    values: Mapping[str, pd.Series] = dataclasses.field(default_factory=dict)
    keep: np.ndarray | None = None
    wildcards: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    facts: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class DataStep(Step, ABC):
    """One masking operation on the data as a whole: several columns at once (local
    suppression of the quasi-identifiers, multivariate microaggregation) or whole records
    (record suppression, subsampling).

    A recipe applies its column steps first, then its whole-data steps in order, each on the
    records the steps before it kept. Subclasses implement :meth:`reads` (what the step
    reads), :meth:`writes` (what it changes), :meth:`_apply` and :meth:`describe`;
    ``removes_records`` says whether it can drop records from the release.
    """

    removes_records: ClassVar[bool] = False
    #: Whether the step works person by person (date shifts, dates relative to a person's
    #: first event): it then reads ``persons=``, one integer per record, equal for the
    #: records of one person (the recipe's record id; without one, each record is a person).
    needs_person: ClassVar[bool] = False
    #: Whether the step's output for a person is a function of that person's own values
    #: alone (a date of birth to an age, dates to days since the person's first): an intruder
    #: who holds the source computes the same released values, so the risk measures apply it
    #: to the source as they apply deterministic column steps. Suppression (whose choices
    #: depend on the other records), random and perturbative steps are not.
    recomputable: ClassVar[bool] = False
    #: Whether the step reads the data as they came, before any other step (a length of stay
    #: or a visit number derived from the dates, which column steps may then coarsen): the
    #: recipe passes it the source's values of the columns it reads.
    reads_source: ClassVar[bool] = False

    def __post_init__(self) -> None:
        self._validate()

    @abstractmethod
    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        """The columns the step reads, given the recipe's quasi-identifiers."""

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        """The columns whose values the step changes (none unless a step says so)."""
        return ()

    @abstractmethod
    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        """What the step does to ``frame`` (the records still released, with :meth:`reads`);
        ``persons`` as :func:`person_codes` makes them (None: one person per record)."""

    def apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: Sequence[str] = (),
        replicate: int = 0,
        wildcards: Mapping[str, np.ndarray] | None = None,
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        """The step on ``frame`` (never modified): ``wildcards`` are the cells earlier steps
        suppressed (per column, one flag per record), which match any value. ``persons``: one
        integer per record, the person it belongs to (e.g. ``pd.factorize(record_id)[0]``; a
        negative code, as factorize gives a missing id, is a person of its own); None, or
        every record a different person, is one person per record. Steps that count class
        sizes (suppression) then count distinct people."""
        qis = tuple(quasi_identifiers)
        needed = self.reads(qis)
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            listed = ", ".join(f"'{c}'" for c in missing)
            raise RecipeError(f"{self.label} needs column(s) {listed}, which the data do not have.")
        if len(frame) == 0:
            raise RecipeError(f"{self.label}: no records are left to work on.")
        return self._apply(
            frame[list(needed)].copy(),
            qis,
            replicate,
            dict(wildcards or {}),
            persons=person_codes(persons, len(frame), self.label),
        )

    def summary(self, facts: Mapping[str, Any]) -> str:
        """One plain-language line of what the step did (from its :class:`DataOutcome` facts)."""
        return self.describe()

    def with_params(self, **params: Any) -> DataStep:
        """A copy with some parameters changed (validated again)."""
        return dataclasses.replace(self, **params)


def equal_key_pairs(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(i, j)`` with ``left[i] == right[j]`` (the inner join of two integer key
    arrays), as two index arrays ordered by ``i``: the right keys sorted once, each left key's
    run of equal right keys found by binary search and expanded. O((n + pairs) log n), and
    without a data frame's fixed cost, which dominated joins of a few rows."""
    left, right = np.asarray(left), np.asarray(right)
    order = np.argsort(right, kind="stable")
    ordered = right[order]
    start = np.searchsorted(ordered, left, side="left")
    matched = np.searchsorted(ordered, left, side="right") - start
    left_index = np.repeat(np.arange(left.size, dtype=np.int64), matched)
    offset = np.arange(left_index.size, dtype=np.int64) - np.repeat(
        np.cumsum(matched) - matched, matched
    )
    return left_index, order[start[left_index] + offset]


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True, return_counts=True)`` for a 2-D array of
    numbers without NaN, in the same (lexicographic) order: each column is coded by the rank of
    its value among the column's distinct values (hashing, then sorting the distinct values
    alone) and each row read as one mixed-radix integer of those codes (first column most
    significant), when their ranges allow it; many times faster than NumPy's row-wise sort."""
    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.shape[0] == 0 or rows.shape[1] == 0:
        distinct, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        return distinct, inverse.reshape(-1), counts
    columns = [pd.factorize(rows[:, j], sort=True) for j in range(rows.shape[1])]
    spans = [max(len(levels), 1) for _, levels in columns]
    if float(np.prod(np.asarray(spans, dtype=float))) >= 2.0**62:
        distinct, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        return distinct, inverse.reshape(-1), counts
    key = np.zeros(rows.shape[0], dtype=np.int64)
    for (codes, _), span in zip(columns, spans, strict=True):
        key *= span
        key += codes
    codes, uniques = pd.factorize(key, sort=True)
    inverse = codes.astype(np.int64)
    first = np.zeros(uniques.size, dtype=np.int64)
    first[inverse[::-1]] = np.arange(rows.shape[0] - 1, -1, -1, dtype=np.int64)
    counts = np.bincount(inverse, minlength=uniques.size).astype(np.int64)
    return rows[first], inverse, counts


def person_codes(persons: np.ndarray | None, n: int, label: str) -> np.ndarray | None:
    """The person of each of ``n`` records as codes 0..P-1 (a negative code: a person of its
    own), or None when every record is a different person (then counting people is counting
    records); a RecipeError if ``persons`` is not one whole number per record."""
    if persons is None:
        return None
    codes = np.asarray(persons)
    if codes.shape != (n,) or not np.issubdtype(codes.dtype, np.integer):
        raise RecipeError(
            f"{label}: the people of the records must be one whole number per record "
            f"({n:,} of them)."
        )
    codes = codes.astype(np.int64)
    alone = codes < 0
    codes[alone] = codes.max(initial=0) + 1 + np.arange(int(alone.sum()))
    codes = pd.factorize(codes)[0].astype(np.int64)
    return None if int(codes.max()) + 1 == n else codes


def combination_codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """One integer per record, 0..m-1, equal for records with the same values in ``columns``
    (a missing value is a value; all 0 without columns)."""
    if not columns:
        return np.zeros(len(frame), dtype=np.int64)
    codes = np.column_stack([pd.factorize(frame[c], use_na_sentinel=False)[0] for c in columns])
    return unique_rows(codes)[1].astype(np.int64)


def column_names(value: Any, name: str, method: str, minimum: int = 0) -> tuple[str, ...]:
    """A tuple of distinct column names (a list or tuple of non-empty strings), at least
    ``minimum`` of them; a RecipeError naming the parameter otherwise."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise RecipeError(f"{method}: '{name}' must be a list of column names.")
    names = tuple(value)
    if not all(isinstance(n, str) and n.strip() for n in names):
        raise RecipeError(f"{method}: '{name}' must be a list of column names.")
    if len(set(names)) != len(names):
        raise RecipeError(f"{method}: '{name}' lists a column twice.")
    if len(names) < minimum:
        raise RecipeError(f"{method}: '{name}' needs at least {minimum} column(s).")
    return names


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def rng_for(seed: int | None, replicate: int) -> np.random.Generator:
    """Random generator for one replicate: seeded steps are reproducible draw by draw."""
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng([int(seed), int(replicate)])
