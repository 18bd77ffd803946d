"""Pseudonyms for direct identifiers and the record id, and the keys of derived ones.

El Emam & Malin ("Concepts and methods for de-identifying clinical trial data") name three
treatments of a direct identifier: removal, replacement by random values, and replacement by
a pseudonym, which keeps a participant's records together (visits, baseline and follow-up) and
lets the custodian return results or send more data. A pseudonym is either

- **random**: each distinct value gets a fresh code drawn from the operating system's entropy
  (:func:`secrets.token_bytes`). The code says nothing about the value nor about the order of
  the rows. Only a *crosswalk* (original value -> pseudonym) links it back, so the custodian
  keeps the crosswalk, which is as identifying as the identifiers themselves, and next year's
  file gets new codes unless the custodian maps it through the same crosswalk. Under HIPAA
  (45 CFR 164.514(c)) such a re-identification code, not derived from information about the
  person, may stay in a de-identified file.
- **derived** (keyed hash): ``hex(HMAC-SHA-256(key, text(value)))`` cut to its first
  ``length`` hexadecimal digits (HMAC: RFC 2104, FIPS 198-1). The same key gives the same
  pseudonym for the same value, so releases stay linkable from year to year without a
  crosswalk; anyone holding the key can recompute the pseudonym of every identifier they know,
  so the custodian protects the key like the identifiers. The seed cites the OCR guidance of
  2012: a derived code is acceptable when "the means to reverse that pseudonym are tightly
  controlled" (an expert determination; the Safe Harbor method itself does not allow codes
  derived from identifiers).

The text of a value (what is hashed, and what the crosswalk lists): whole numbers as their
digits (``123`` and ``123.0`` both give ``"123"``, so a column read as floats next year keeps
its pseudonyms), other numbers as Python writes them, text as it is, without surrounding
spaces. Text keeps leading zeros (``"00123"`` is not ``"123"``): read identifiers as text.
Missing values stay missing (no pseudonym).

A key is at least 16 bytes (128 bits), written as hexadecimal text; :func:`generate_key` draws
32 bytes from the operating system. The key is never stored in a recipe, link, report or
export; a recipe may hold its :func:`key_fingerprint`, which lets next year's run check that it
was given the same key. The fingerprint is an HMAC of a fixed label under the key: it reveals
nothing about the pseudonyms, and it lets someone test a guessed key, which one known
(identifier, pseudonym) pair in the release allows already; with 128 bits or more, guessing is
hopeless.
"""

from __future__ import annotations

import hmac
import itertools
import math
import re
import secrets
from dataclasses import dataclass

import numpy as np
import pandas as pd

from deid_core.errors import DataError, RecipeError

#: Shortest key accepted (bytes) and the size of a generated one.
MIN_KEY_BYTES = 16
GENERATED_KEY_BYTES = 32
#: Pseudonym lengths in hexadecimal digits (4 bits each).
MIN_LENGTH = 8
MAX_HMAC_LENGTH = 64
MAX_RANDOM_LENGTH = 32
DEFAULT_LENGTH = 16
#: Random codes must be this many times scarcer than the space they are drawn from.
_SPACE_FACTOR = 1000
_FINGERPRINT_LABEL = b"deid_core key fingerprint v1"
_FINGERPRINT_DIGITS = 16
_HEX = re.compile(r"[0-9a-fA-F]+")

#: Column names of a crosswalk (one row per distinct value of each pseudonymised column).
CROSSWALK_COLUMNS = ("column", "released_as", "original", "pseudonym")


# ---------------------------------------------------------------------------- keys
def generate_key() -> bytes:
    """A new secret key: 32 bytes from the operating system's entropy."""
    return secrets.token_bytes(GENERATED_KEY_BYTES)


def key_to_text(key: bytes) -> str:
    """The key as the hexadecimal text a key file holds."""
    return check_key(key).hex()


def key_from_text(text: str | bytes) -> bytes:
    """The key written as hexadecimal text (spaces and line breaks ignored), at least 32 digits
    (16 bytes); a DataError that quotes nothing of the text otherwise."""
    if isinstance(text, bytes):
        try:
            text = text.decode("ascii")
        except UnicodeDecodeError:
            raise DataError(
                "The key must be hexadecimal text (0-9, a-f), such as a key this tool generated."
            ) from None
    compact = "".join(str(text).split())
    if not compact or not _HEX.fullmatch(compact) or len(compact) % 2:
        raise DataError(
            "The key must be hexadecimal text (0-9, a-f, an even number of digits), such as a "
            "key this tool generated."
        )
    return check_key_entropy(check_key(bytes.fromhex(compact)))


#: Fewest distinct byte values a key given by hand may hold: 16 random bytes hold about 15.5
#: of them; fewer than 10 come up with probability 1.0e-8 (32 random bytes: 2.7e-31).
MIN_DISTINCT_KEY_BYTES = 10


def check_key_entropy(key: bytes) -> bytes:
    """``key`` unless it looks chosen rather than drawn at random, else a DataError (the key
    is never quoted): too few distinct byte values (an all-zero key, a repeated block), every
    byte printable text (a typed passphrase written as hexadecimal), or an arithmetic sequence
    (00 01 02...). Such a key can be guessed, and the fingerprint a recipe or link holds
    (:func:`key_fingerprint`) lets a guess be checked offline. Applied to keys that are given
    (:func:`key_from_text`: a key file, an uploaded key). A random key is refused with
    probability about 1.4e-7 at 16 bytes (all printable: (95/256)^16 = 1.3e-7; fewer than 10
    distinct values: 1.0e-8) and 1.7e-14 at the 32 bytes this tool generates."""
    steps = {(b - a) % 256 for a, b in itertools.pairwise(key)}
    if len(set(key)) < min(MIN_DISTINCT_KEY_BYTES, len(key)):
        why = f"it has only {len(set(key))} distinct byte values"
    elif all(0x20 <= byte < 0x7F for byte in key):
        why = "every byte is a printable character, as in typed text"
    elif len(steps) == 1:
        why = "its bytes form a regular sequence"
    else:
        return key
    raise DataError(
        f"The key looks chosen rather than random ({why}): such a key can be guessed, and the "
        "key's fingerprint in a recipe or link lets a guess be checked offline. Generate a key "
        "(the Export page's button, or --new-key) and keep it with the custodian."
    )


def check_key(key: bytes) -> bytes:
    """``key`` if it is bytes of at least :data:`MIN_KEY_BYTES`, else a DataError."""
    if not isinstance(key, bytes | bytearray):
        raise DataError("The key must be bytes.")
    if len(key) < MIN_KEY_BYTES:
        raise DataError(
            f"The key is too short: use at least {MIN_KEY_BYTES} bytes "
            f"({2 * MIN_KEY_BYTES} hexadecimal digits); a generated key has {GENERATED_KEY_BYTES}."
        )
    return bytes(key)


def key_fingerprint(key: bytes) -> str:
    """16 hexadecimal digits that identify ``key`` without revealing it: the start of
    HMAC-SHA-256(key, a fixed label). See the module notes for why it is safe to store."""
    digest = hmac.digest(check_key(key), _FINGERPRINT_LABEL, "sha256")
    return digest.hex()[:_FINGERPRINT_DIGITS]


# ---------------------------------------------------------------------------- values
def identifier_text(series: pd.Series) -> pd.Series:
    """The text of each value (see the module notes); missing values stay missing."""
    if pd.api.types.is_bool_dtype(series.dtype):
        raise DataError(f"'{series.name}' is true/false: it is not an identifier to pseudonymise.")
    present = series.notna().to_numpy()
    texts = np.full(len(series), None, dtype=object)
    kept = series[present]
    if pd.api.types.is_integer_dtype(series.dtype):
        texts[present] = kept.astype("int64").astype(str).to_numpy(dtype=object)
    elif pd.api.types.is_float_dtype(series.dtype):
        values = kept.to_numpy(dtype=float)
        if not np.isfinite(values).all():
            raise DataError(f"'{series.name}' has infinite values: it cannot be pseudonymised.")
        whole = (values == np.round(values)) & (np.abs(values) < 2**63)
        out = np.empty(values.size, dtype=object)
        out[whole] = values[whole].astype(np.int64).astype(str)
        out[~whole] = [repr(float(v)) for v in values[~whole]]
        texts[present] = out
    else:
        texts[present] = kept.map(_text_of).to_numpy(dtype=object)
    return pd.Series(texts, index=series.index, name=series.name, dtype=object)


def _text_of(value: object) -> str:
    if isinstance(value, bool | np.bool_):
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        number = float(value)
        return str(int(number)) if math.isfinite(number) and number.is_integer() else repr(number)
    return str(value).strip()


# ---------------------------------------------------------------------------- pseudonyms
@dataclass(frozen=True)
class Pseudonymised:
    """The pseudonyms of one column, row by row, and its crosswalk (one row per distinct
    original value: ``original`` text and ``pseudonym``)."""

    values: pd.Series
    crosswalk: pd.DataFrame

    @property
    def n_distinct(self) -> int:
        return len(self.crosswalk)


def _check_length(length: object, high: int, what: str) -> int:
    if isinstance(length, bool) or not isinstance(length, int | np.integer):
        raise RecipeError(f"{what}: 'length' must be a whole number of hexadecimal digits.")
    if not MIN_LENGTH <= int(length) <= high:
        raise RecipeError(
            f"{what}: 'length' must be between {MIN_LENGTH} and {high} hexadecimal digits."
        )
    return int(length)


def _assemble(series: pd.Series, codes: np.ndarray, texts: pd.Index, pseudonyms: np.ndarray):
    values = np.full(len(series), None, dtype=object)
    present = codes >= 0
    values[present] = pseudonyms[codes[present]]
    released = pd.Series(values, index=series.index, name=series.name, dtype=object)
    crosswalk = pd.DataFrame(
        {"original": np.asarray(texts, dtype=object), "pseudonym": pseudonyms.astype(object)}
    )
    return Pseudonymised(released, crosswalk)


def hmac_pseudonyms(series: pd.Series, key: bytes, length: int = DEFAULT_LENGTH) -> Pseudonymised:
    """Derived pseudonyms: the first ``length`` hexadecimal digits of
    HMAC-SHA-256(key, UTF-8 text of the value), one per distinct value. Two values whose
    pseudonyms collide at this length are a RecipeError (choose more digits)."""
    length = _check_length(length, MAX_HMAC_LENGTH, "Keyed-hash pseudonym")
    key = check_key(key)
    codes, texts = pd.factorize(identifier_text(series))
    pseudonyms = np.array(
        [hmac.digest(key, t.encode("utf-8"), "sha256").hex()[:length] for t in texts],
        dtype=object,
    )
    if len(set(pseudonyms)) < len(pseudonyms):
        raise RecipeError(
            f"Keyed-hash pseudonym of '{series.name}': two identifiers got the same pseudonym "
            f"at {length} hexadecimal digits; use more digits."
        )
    return _assemble(series, codes, texts, pseudonyms)


def random_pseudonyms(series: pd.Series, length: int = DEFAULT_LENGTH) -> Pseudonymised:
    """Random pseudonyms: ``length`` hexadecimal digits per distinct value, drawn from the
    operating system's entropy, all different (a repeated draw is drawn again)."""
    length = _check_length(length, MAX_RANDOM_LENGTH, "Random pseudonym")
    codes, texts = pd.factorize(identifier_text(series))
    n = len(texts)
    if 16**length < _SPACE_FACTOR * max(n, 1):
        raise RecipeError(
            f"Random pseudonym of '{series.name}': {length} hexadecimal digits are too few for "
            f"{n:,} people; use more digits."
        )
    pseudonyms = _random_codes(n, length)
    while True:
        repeated = pd.Series(pseudonyms).duplicated().to_numpy()
        if not repeated.any():
            break
        pseudonyms[repeated] = _random_codes(int(repeated.sum()), length)
    return _assemble(series, codes, texts, pseudonyms.astype(object))


def _random_codes(n: int, length: int) -> np.ndarray:
    """``n`` random codes of ``length`` hexadecimal digits (secrets: the OS's entropy)."""
    n_bytes = (length + 1) // 2
    text = secrets.token_bytes(n_bytes * n).hex().encode("ascii")
    return np.frombuffer(text, dtype=f"S{2 * n_bytes}").astype(f"U{length}")


def crosswalk_frame(parts: list[tuple[str, str, pd.DataFrame]]) -> pd.DataFrame:
    """One crosswalk table from (column, released name, crosswalk) parts, in
    :data:`CROSSWALK_COLUMNS` order, every value as text."""
    frames = [
        pd.DataFrame(
            {
                "column": column,
                "released_as": released_as,
                "original": part["original"].astype(object),
                "pseudonym": part["pseudonym"].astype(object),
            }
        )
        for column, released_as, part in parts
    ]
    if not frames:
        return pd.DataFrame(columns=list(CROSSWALK_COLUMNS), dtype=object)
    return pd.concat(frames, ignore_index=True)[list(CROSSWALK_COLUMNS)]


def read_crosswalk(frame: pd.DataFrame) -> pd.DataFrame:
    """A crosswalk read back from a file (every cell as text), checked to have the columns
    of :data:`CROSSWALK_COLUMNS` and one pseudonym per original value of each column."""
    missing = [c for c in CROSSWALK_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"The crosswalk lacks column(s): {', '.join(missing)}.")
    table = frame[list(CROSSWALK_COLUMNS)].astype(str)
    if table.duplicated(["column", "original"]).any():
        raise DataError("The crosswalk lists an original value twice for one column.")
    if table.duplicated(["column", "pseudonym"]).any():
        raise DataError("The crosswalk gives one pseudonym to two original values of a column.")
    return table
