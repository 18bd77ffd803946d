"""Equivalence classes on the quasi-identifiers and the closed-data risk measures.

Definitions (El Emam & Malin, "Concepts and methods for de-identifying clinical trial data"):
records that share every masked quasi-identifier value form an equivalence class of size f;

- per-record re-identification risk ``1/f``;
- maximum risk ``max 1/f`` (= 1/k), judged for public releases;
- average risk ``mean over records of 1/f`` (= number of classes / N), i.e. over records, not
  over classes;
- strict average risk: the average risk if the maximum risk is at most 1/3 (no class of size 1
  or 2), otherwise the maximum risk;
- k (k-anonymity) ``min f``; uniques (f = 1); records in classes of size <= 5 (the NAACCR RU
  program's "small record sets"); k-violations: records in classes smaller than k.

Missing values in the quasi-identifiers (the ``missing`` argument of :func:`risk_summary`):

- ``"category"`` (the default): a missing value is a category of its own, so records form a
  partition into classes as above;
- ``"wildcard"``: a missing value matches any value of that quasi-identifier (an intruder cannot
  rule the record out on it; sdcMicro's ``freqCalc``/``measure_risk`` with ``alpha = 1``). A
  record's class size ``f`` is the number of records *compatible* with it: agreeing with it on
  every quasi-identifier where both are observed (see :func:`compatible_class_sizes`).
  Compatibility is not transitive, so these ``f`` are not the sizes of a partition: the average
  risk is then the mean over records of ``1/f`` (no longer number of classes / N) and the number
  of classes reported is the number of distinct quasi-identifier value patterns (a missing value
  counted as a value). Wildcard ``f`` is never smaller than the category ``f``.

Speed: each quasi-identifier is encoded once as integer codes (large files: two columns at a
time, in threads, since pandas and pyarrow release the GIL while factorizing). Text held by
pyarrow (pandas' default string type) is dictionary-encoded by pyarrow, and the codes are kept
for as long as that immutable text array lives (:func:`encode_column`), so assessing the same
data again does not hash its text again. Class sizes come from combining the codes into one
integer key of known width and counting it: ``numpy.bincount`` when the key's range is small,
otherwise one sort of (key, record position) packed into one integer (numpy's sort of plain
integers is a SIMD sort), not from ``groupby`` or a hash table.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa

from deid_core.errors import DataError

SMALL_CLASS_SIZE = 5
K_LEVELS = (2, 3, 5)
_MAX_KEY = 2**62
_PARALLEL_ENCODING_ROWS = 200_000
_DIRECT_BINCOUNT_SLACK = 65_536  # bincount while the key has at most 4 n + this many values
MISSING_MODES = {
    "category": "a missing value is a category of its own",
    "wildcard": "a missing value matches any value",
}


@dataclass(frozen=True)
class EncodedColumn:
    """Integer codes 0..n_levels-1 of one column (missing values get a code of their own)."""

    codes: np.ndarray
    n_levels: int


#: Codes of text columns held by pyarrow, by the identity of the (immutable) pyarrow array
#: itself, with a weak reference to it: an entry is dropped when that array is, so it lives
#: exactly as long as the data and can be found only by whoever holds them.
_TEXT_CODES: dict[int, tuple[weakref.ref[pa.ChunkedArray], EncodedColumn]] = {}
_TEXT_CODES_LOCK = threading.Lock()
#: Entries whose array has died, removed at the next use of the cache: a weak reference's
#: callback may run at any point (even while the lock is held), so it only notes the entry.
_DEAD_TEXT_CODES: list[tuple[int, weakref.ref[pa.ChunkedArray]]] = []


def _text_codes_entry(identity: int) -> tuple[weakref.ref[pa.ChunkedArray], EncodedColumn] | None:
    """The cache's entry for an array's identity, after removing the entries of dead arrays."""
    with _TEXT_CODES_LOCK:
        while _DEAD_TEXT_CODES:
            dead, reference = _DEAD_TEXT_CODES.pop()
            entry = _TEXT_CODES.get(dead)
            if entry is not None and entry[0] is reference:
                del _TEXT_CODES[dead]
        return _TEXT_CODES.get(identity)


def _encode_arrow_text(series: pd.Series) -> EncodedColumn | None:
    """Dictionary codes of text stored by pyarrow (missing values last), made once per array
    and then kept (read-only) while the array lives; None for other columns."""
    if not isinstance(series.array, pd.arrays.ArrowStringArray):
        return None
    chunks = series.array.__arrow_array__()
    identity = id(chunks)
    entry = _text_codes_entry(identity)
    if entry is not None and entry[0]() is chunks:
        return entry[1]
    encoded = chunks.combine_chunks().dictionary_encode()
    n_levels = len(encoded.dictionary)
    indices = encoded.indices
    if indices.null_count:
        indices = indices.fill_null(n_levels)
        n_levels += 1
    codes = indices.to_numpy(zero_copy_only=False).astype(np.int64)
    codes.flags.writeable = False
    column = EncodedColumn(codes, max(n_levels, 1))
    reference = weakref.ref(chunks, lambda ref: _DEAD_TEXT_CODES.append((identity, ref)))
    with _TEXT_CODES_LOCK:
        _TEXT_CODES[identity] = (reference, column)
    return column


def encode_column(series: pd.Series) -> EncodedColumn:
    """Encode one column as integer codes, without changing it.

    The codes may leave some levels unused (integers are coded by their range, a categorical
    reserves a code for missing values); :func:`densify` removes the gaps. Codes of text held
    by pyarrow are shared and read-only.
    """
    dtype = series.dtype
    text = _encode_arrow_text(series)
    if text is not None:
        return text
    if isinstance(dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy().astype(np.int64)
        n_categories = len(dtype.categories)
        codes[codes < 0] = n_categories
        return EncodedColumn(codes, n_categories + 1)
    if (pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)) and not (
        series.hasnans
    ):
        values = series.to_numpy().astype(np.int64)  # a copy: safe to shift in place
        if values.size:
            low, high = int(values.min()), int(values.max())
            if high - low < 4 * values.size + 1024:
                values -= low
                return EncodedColumn(values, high - low + 1)
    codes, uniques = pd.factorize(series, use_na_sentinel=False)
    return EncodedColumn(codes.astype(np.int64, copy=False), max(len(uniques), 1))


def densify(column: EncodedColumn) -> EncodedColumn:
    """The same partition with codes 0..m-1, m the number of codes in use (range-coded
    integers such as ages 0, 5, ..., 85 and a categorical's unused levels leave gaps)."""
    used = np.bincount(column.codes, minlength=column.n_levels) > 0
    n_used = int(np.count_nonzero(used))
    if n_used == column.n_levels:
        return column
    new_code = np.cumsum(used) - 1
    return EncodedColumn(new_code[column.codes], max(n_used, 1))


def _needs_hashing(series: pd.Series) -> bool:
    """Whether encoding the column hashes its values (text not yet encoded, numbers with
    decimals, objects), as opposed to reading codes off it (categoricals, integers, text whose
    codes are kept)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return False
    if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return False
    if isinstance(series.array, pd.arrays.ArrowStringArray):
        chunks = series.array.__arrow_array__()
        entry = _text_codes_entry(id(chunks))
        return entry is None or entry[0]() is not chunks
    return True


def encode_columns(df: pd.DataFrame, columns: Sequence[str]) -> list[EncodedColumn]:
    """Encode several columns; on large frames the columns that need hashing are encoded in
    parallel threads when there are two or more of them (the others cost less than a thread)."""
    slow = [c for c in columns if _needs_hashing(df[c])]
    workers = min(len(slow), os.cpu_count() or 1)
    encoded: dict[str, EncodedColumn] = {}
    if workers > 1 and len(df) >= _PARALLEL_ENCODING_ROWS:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            encoded = dict(zip(slow, pool.map(lambda c: encode_column(df[c]), slow), strict=True))
    return [encoded[c] if c in encoded else encode_column(df[c]) for c in columns]


def combine_codes(columns: Sequence[EncodedColumn], n_records: int) -> tuple[np.ndarray, int]:
    """One integer key per record such that equal keys <=> equal values on every column.

    Returns (key, key_cardinality) with keys in 0..key_cardinality-1 (not all used).
    """
    key = np.zeros(n_records, dtype=np.int64)
    cardinality = 1
    for column in columns:
        if cardinality * column.n_levels >= _MAX_KEY:
            codes, uniques = pd.factorize(key)
            key, cardinality = codes.astype(np.int64), len(uniques)
        if cardinality == 1:
            key = column.codes.astype(np.int64, copy=True)
        else:  # in place: no temporary arrays
            key *= column.n_levels
            key += column.codes
        cardinality *= column.n_levels
    return key, cardinality


def _class_sizes_by_sort(key: np.ndarray, shift: int) -> tuple[np.ndarray, int]:
    """Class sizes by sorting (key << shift | record position): one plain (SIMD) sort of int64
    gives both the sorted keys and the permutation, without a hash table or an argsort."""
    n = key.size
    packed = key << shift
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    order = packed & ((1 << shift) - 1)
    packed >>= shift
    new_class = np.empty(n, dtype=bool)
    new_class[0] = True
    np.not_equal(packed[1:], packed[:-1], out=new_class[1:])
    starts = np.flatnonzero(new_class)
    counts = np.diff(starts, append=n)
    sizes = np.empty(n, dtype=np.int64)
    sizes[order] = np.repeat(counts, counts)
    return sizes, int(starts.size)


def class_ids_from_key(key: np.ndarray, cardinality: int) -> tuple[np.ndarray, int]:
    """(per record, its class ``0..C-1``; C) for a combined key (``0 <= key < cardinality``):
    records share a class exactly when their keys are equal. Classes are numbered in the
    order of their keys. Like :func:`class_sizes_from_key`: a bincount over the key's range
    when it is small, else one sort of (key << shift | record position), else a hash table."""
    n = key.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    if cardinality <= 4 * n + _DIRECT_BINCOUNT_SLACK:
        used = np.bincount(key, minlength=cardinality) > 0
        number = np.cumsum(used) - 1
        return number[key], int(number[-1]) + 1
    shift = max((n - 1).bit_length(), 1)
    if cardinality < 2 ** (63 - shift):
        packed = key << shift
        packed |= np.arange(n, dtype=np.int64)
        packed.sort()
        order = packed & ((1 << shift) - 1)
        packed >>= shift
        new_class = np.empty(n, dtype=np.int64)
        new_class[0] = 0
        np.not_equal(packed[1:], packed[:-1], out=new_class[1:], casting="unsafe")
        number = np.cumsum(new_class)
        class_of = np.empty(n, dtype=np.int64)
        class_of[order] = number
        return class_of, int(number[-1]) + 1
    codes, uniques = pd.factorize(key, sort=True)
    return codes.astype(np.int64), len(uniques)


def class_sizes_from_key(key: np.ndarray, cardinality: int) -> tuple[np.ndarray, int]:
    """(per-record class size, number of classes) for a combined key."""
    n = key.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    if cardinality <= 4 * n + _DIRECT_BINCOUNT_SLACK:
        counts = np.bincount(key, minlength=cardinality)
        return counts[key], int(np.count_nonzero(counts))
    shift = max((n - 1).bit_length(), 1)
    if cardinality < 2 ** (63 - shift):
        return _class_sizes_by_sort(key, shift)
    codes, uniques = pd.factorize(key)
    counts = np.bincount(codes)
    return counts[codes], len(uniques)


def equivalence_class_sizes(df: pd.DataFrame, quasi_identifiers: Sequence[str]) -> np.ndarray:
    """Per-record size f of the equivalence class on ``quasi_identifiers``."""
    key, cardinality = combine_codes(encode_columns(df, quasi_identifiers), len(df))
    return class_sizes_from_key(key, cardinality)[0]


@dataclass(frozen=True)
class RiskSummary:
    """Closed-data risk of one (masked) data set on its quasi-identifiers."""

    n_records: int
    quasi_identifiers: tuple[str, ...]
    n_classes: int
    k: int
    uniques: int
    records_in_small_classes: int
    max_risk: float
    average_risk: float
    strict_average_risk: float
    k_violations: Mapping[int, int]
    small_class_size: int = SMALL_CLASS_SIZE
    missing: str = "category"
    class_size: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    unit: str = "records"
    """What the figures count: "records", or "people" when a person has several rows (then
    ``n_records``, ``class_size``, uniques and the small classes are people; see
    :mod:`deid_core.risk.people`)."""
    n_rows: int | None = None
    """Rows of the file (None: one per record)."""
    row_class_size: np.ndarray | None = field(default=None, repr=False, compare=False)
    """Per row, the size of its class in the unit counted (None: ``class_size``)."""

    #: How the verdict names the judged figures ("maximum risk").
    risk_label: ClassVar[str] = "risk"

    @property
    def record_risk(self) -> np.ndarray:
        """Per-record (per-person) re-identification risk 1/f."""
        return 1.0 / self.class_size

    @property
    def sizes_by_row(self) -> np.ndarray:
        """Per row of the file, the size of its class (in people when counting people)."""
        return self.class_size if self.row_class_size is None else self.row_class_size

    def to_dict(self) -> dict[str, object]:
        return {
            "unit": self.unit,
            "n_people": self.n_records,
            "n_rows": self.n_records if self.n_rows is None else self.n_rows,
            "k": self.k,
            "uniques": self.uniques,
            "records_in_small_classes": self.records_in_small_classes,
            "max_risk": self.max_risk,
            "average_risk": self.average_risk,
            "strict_average_risk": self.strict_average_risk,
            "k_violations": {str(k): v for k, v in self.k_violations.items()},
            "missing": self.missing,
        }

    def __str__(self) -> str:
        qis = ", ".join(self.quasi_identifiers) or "(none)"
        lines = [
            "Re-identification risk (closed data: the intruder knows who is in the file)",
            f"  quasi-identifiers           {qis}",
            f"  {self.unit + ' / classes':<28}{self.n_records} / {self.n_classes}",
            f"  k (smallest class)          {self.k}",
            f"  {'unique ' + self.unit:<28}{self.uniques}",
            f"  {self.unit} in classes <= {self.small_class_size:<4d}  "
            f"{self.records_in_small_classes}",
            f"  maximum risk                {self.max_risk:.4f}",
            f"  {'average risk (over ' + self.unit + ')':<28}{self.average_risk:.4f}",
            f"  strict average risk         {self.strict_average_risk:.4f}",
        ]
        if self.n_rows is not None and self.unit == "people":
            lines.insert(3, f"  rows (several per person)   {self.n_rows}")
        for k, n in self.k_violations.items():
            lines.append(f"  {self.unit} in classes < {k:<5d}  {n}")
        lines.append(
            f"  missing QI values           {MISSING_MODES.get(self.missing, self.missing)}"
        )
        return "\n".join(lines)


def class_size_histogram(class_size: np.ndarray, records: np.ndarray | None = None) -> np.ndarray:
    """Records per class size: ``h[j]`` = the number of records whose class has size j.

    ``class_size`` holds one size per record, or with ``records`` one size per cell of a
    cross-tabulation that holds that many records (an engine's aggregates)."""
    sizes = np.asarray(class_size, dtype=np.int64)
    if records is None:
        return np.bincount(sizes)
    return np.bincount(sizes, weights=np.asarray(records, dtype=np.float64)).astype(np.int64)


def class_size_distribution(
    class_size: np.ndarray, records: np.ndarray | None = None, missing: str = "category"
) -> pd.DataFrame:
    """One row per class size present: ``class_size``, ``records`` (records whose class has
    that size) and ``classes`` (records / size: the number of classes of that size when the
    classes partition the records; with ``missing="wildcard"`` compatible sets overlap and it
    need not be whole). ``records`` as for :func:`class_size_histogram`."""
    check_missing_mode(missing)
    histogram = class_size_histogram(class_size, records)
    sizes = np.flatnonzero(histogram)
    counts = histogram[sizes]
    classes = counts / sizes if missing == "wildcard" else counts // sizes
    return pd.DataFrame({"class_size": sizes, "records": counts, "classes": classes})


def summarise_class_sizes(
    class_size: np.ndarray,
    n_classes: int,
    quasi_identifiers: Sequence[str] = (),
    small_class_size: int = SMALL_CLASS_SIZE,
    *,
    missing: str = "category",
    records: np.ndarray | None = None,
    partition: bool | None = None,
    unit: str = "records",
    n_rows: int | None = None,
    row_class_size: np.ndarray | None = None,
) -> RiskSummary:
    """Risk measures from class sizes (see the module docstring for definitions).

    ``class_size`` holds one size per record, or with ``records`` one size per cell of a
    cross-tabulation and the records in each (the summary then keeps no per-record sizes).
    Every figure comes from the histogram of records per class size, so both give the same
    numbers to the last bit. With ``missing="category"`` the sizes form a partition and the
    average risk is ``n_classes / N``; with ``missing="wildcard"`` (sizes from
    :func:`compatible_class_sizes`) it is the mean over records of ``1/f`` and ``n_classes``
    is only reported. ``partition`` overrides what ``missing`` implies (False:
    compatible-record counts under the category rule, as after local suppression, whose
    suppressed values match any value). With ``unit="people"`` the sizes are per person
    (:mod:`deid_core.risk.people`), no partition (the average is the mean over people of
    ``1/f``), and ``n_rows`` and ``row_class_size`` describe the rows.
    """
    missing = check_missing_mode(missing)
    check_choice("unit", unit, {"records": "one row per person", "people": "several rows"})
    if partition is None:
        partition = missing == "category" and unit == "records"
    histogram = class_size_histogram(class_size, records)
    n = int(histogram.sum())
    if n == 0:
        raise DataError("There are no records to assess.")
    sizes = np.flatnonzero(histogram)
    k = int(sizes[0])
    max_risk = 1.0 / k
    # A partition: mean of 1/f over records = classes / N exactly; wildcard sizes are not one,
    # nor are sizes counted in people.
    average_risk = n_classes / n if partition else float(np.sum(histogram[sizes] / sizes)) / n
    below = np.cumsum(histogram)  # below[j]: records in classes of size <= j

    def at_most(size: int) -> int:
        return int(below[min(size, below.size - 1)]) if size >= 0 else 0

    return RiskSummary(
        n_records=n,
        quasi_identifiers=tuple(quasi_identifiers),
        n_classes=n_classes,
        k=k,
        uniques=at_most(1),
        records_in_small_classes=at_most(small_class_size),
        max_risk=max_risk,
        average_risk=average_risk,
        strict_average_risk=average_risk if k >= 3 else max_risk,
        k_violations={level: at_most(level - 1) for level in K_LEVELS},
        small_class_size=small_class_size,
        missing=missing,
        class_size=class_size if records is None else np.zeros(0, dtype=np.int64),
        unit=unit,
        n_rows=n_rows,
        row_class_size=row_class_size,
    )


def risk_summary(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    small_class_size: int = SMALL_CLASS_SIZE,
    missing: str = "category",
) -> RiskSummary:
    """Closed-data risk of ``df`` on ``quasi_identifiers`` (no QIs: one class of everyone).

    ``missing`` says how a missing quasi-identifier value is matched: ``"category"`` (a value
    of its own, the default) or ``"wildcard"`` (it matches any value: a record's class size is
    the number of records compatible with it, see :func:`compatible_class_sizes`; the average
    risk is then the mean of ``1/f`` over records and the number of classes is the number of
    distinct value patterns, missing counted as a value).
    """
    missing = check_missing_mode(missing)
    _check_columns(df, quasi_identifiers)
    columns = encode_columns(df, quasi_identifiers)
    key, cardinality = combine_codes(columns, len(df))
    sizes, n_classes = class_sizes_from_key(key, cardinality)
    if missing == "wildcard":
        observed = _observed(df, quasi_identifiers)
        sizes = compatible_class_sizes_from_codes(columns, observed)
    return summarise_class_sizes(
        sizes, n_classes, quasi_identifiers, small_class_size, missing=missing
    )


def check_choice(name: str, value: str, choices: Mapping[str, str]) -> str:
    """``value`` if it is one of ``choices`` (value -> meaning), else a DataError naming them."""
    if value not in choices:
        listed = " or ".join(f"'{key}' ({meaning})" for key, meaning in choices.items())
        raise DataError(f"{name} must be {listed}, not {value!r}.")
    return value


def check_missing_mode(missing: str) -> str:
    """``missing`` if it is a known mode, else a DataError naming the choices."""
    return check_choice("missing", missing, MISSING_MODES)


def _check_columns(df: pd.DataFrame, quasi_identifiers: Sequence[str]) -> None:
    absent = [c for c in quasi_identifiers if c not in df.columns]
    if absent:
        raise DataError(f"Quasi-identifier column(s) not in the data: {', '.join(absent)}.")


def _observed(df: pd.DataFrame, quasi_identifiers: Sequence[str]) -> np.ndarray:
    """(n, k) boolean array: True where the quasi-identifier value is not missing."""
    observed = np.empty((len(df), len(quasi_identifiers)), dtype=bool)
    for j, column in enumerate(quasi_identifiers):
        observed[:, j] = df[column].notna().to_numpy()
    return observed


def compatible_class_sizes(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Per-record number of records compatible with each record, a missing value matching any
    value (sdcMicro's ``fk`` with ``alpha = 1``).

    Records ``i`` and ``j`` are compatible when they agree on every quasi-identifier observed
    in both; every record is compatible with itself, so ``f >= 1``. Compatibility is not
    transitive (``(1, NA)`` matches ``(1, 2)`` and ``(1, 3)``, which do not match each other),
    so the sizes do not partition the records. With ``weights`` the result is instead the sum of
    the weights of the compatible records (sdcMicro's ``Fk``), as floats.
    """
    _check_columns(df, quasi_identifiers)
    return compatible_class_sizes_from_codes(
        encode_columns(df, quasi_identifiers), _observed(df, quasi_identifiers), weights
    )


def compatible_class_sizes_from_codes(
    columns: Sequence[EncodedColumn],
    observed: np.ndarray,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`compatible_class_sizes` from encoded quasi-identifiers and an (n, k) boolean array
    of which values are observed (the codes of missing values are never looked at).

    Records are grouped by missingness pattern ``P`` (the set of observed quasi-identifiers;
    few in practice). For a record with pattern ``P``, ``f`` sums, over each shared set
    ``S = P & Q`` of the patterns ``Q`` present, the records with such a ``Q`` that share its
    values on ``S``: one integer key on ``S`` (:func:`combine_codes`) and one ``bincount``.
    Cost: O(n) per (pattern, distinct shared set) pair, at most ``patterns**2`` of them.
    """
    n = int(observed.shape[0])
    k = len(columns)
    if observed.shape != (n, k):
        raise DataError("observed must have one row per record and one column per QI.")
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        if w.shape != (n,):
            raise DataError("weights must have one value per record.")
    else:
        w = None
    if n == 0:
        return np.zeros(0, dtype=float if w is not None else np.int64)
    if observed.all():  # no missing values: plain equivalence classes
        key, cardinality = combine_codes(columns, n)
        if w is None:
            return class_sizes_from_key(key, cardinality)[0]
        codes = pd.factorize(key)[0]
        return np.bincount(codes, weights=w)[codes]

    bits = np.zeros(n, dtype=np.int64)  # pattern as a bit mask of observed QIs
    for j in range(k):
        bits |= observed[:, j].astype(np.int64) << j
    patterns, pattern_of = np.unique(bits, return_inverse=True)
    pattern_of = pattern_of.reshape(-1)
    members = [np.flatnonzero(pattern_of == p) for p in range(patterns.size)]
    dense_keys: dict[int, tuple[np.ndarray, int]] = {}

    def dense_key(shared: int) -> tuple[np.ndarray, int]:
        """Codes 0..m-1 of the records' values on the QIs in ``shared`` (all records)."""
        if shared not in dense_keys:
            key, cardinality = combine_codes([columns[j] for j in range(k) if shared >> j & 1], n)
            if cardinality > 4 * n + _DIRECT_BINCOUNT_SLACK:
                codes, uniques = pd.factorize(key)
                key, cardinality = codes.astype(np.int64), len(uniques)
            dense_keys[shared] = (key, cardinality)
        return dense_keys[shared]

    sizes = np.zeros(n, dtype=float if w is not None else np.int64)
    for p, pattern in enumerate(patterns):
        rows = members[p]
        shared_of_pattern = patterns & pattern  # S for every pattern Q
        for shared in np.unique(shared_of_pattern):
            shared = int(shared)
            key, cardinality = dense_key(shared)
            in_group = (shared_of_pattern == shared)[pattern_of]  # records whose Q & P == S
            counts = np.bincount(
                key[in_group],
                weights=None if w is None else w[in_group],
                minlength=cardinality,
            )
            sizes[rows] += counts[key[rows]].astype(sizes.dtype, copy=False)
    return sizes
