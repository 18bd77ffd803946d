"""Which role each column plays: suggested from names and contents, and checked.

- :func:`infer_roles` suggests one role per column (see ``ROLES``) from names and contents.
- :func:`validate_column_for_role` lists what stops a column from playing a role.

Every message here names columns and counts, never a data value.
"""

import re
from collections.abc import Callable, Collection

import pandas as pd

from deid_core.errors import DataError, RecipeError
from deid_core.io.columns import ColumnProfile, name_words, profile_column
from deid_core.io.safe_harbor import screen_safe_harbor

ROLES = (
    "direct_identifier",
    "quasi_identifier",
    "exposure",
    "outcome",
    "covariate",
    "record_id",
    "weight",
    "sensitive",
    "other",
)
"""The roles a column can have (methods brief, section 1)."""

# --- roles ---------------------------------------------------------------------------------

_RECORD_ID_NAMES = re.compile(
    r"(?:patient|person|subject|record|participant|case|study)(?:id|no|num|number)|"
    r"record|subject|subjid|patid|pid|recno|seqn"
)
_DIRECT_IDENTIFIER_TOKENS = frozenset(
    {
        "name",
        "names",
        "firstname",
        "lastname",
        "surname",
        "fullname",
        "forename",
        "givenname",
        "familyname",
        "email",
        "mail",
        "phone",
        "telephone",
        "tel",
        "mobile",
        "fax",
        "address",
        "street",
        "ssn",
        "mrn",
        "nhs",
        "passport",
    }
)
_QUASI_IDENTIFIER_TOKENS = frozenset(
    {
        "sex",
        "gender",
        "dob",
        "yob",
        "yr",
        "city",
        "town",
        "zip",
        "zipcode",
        "postcode",
        "postal",
        "region",
        "county",
        "district",
        "province",
        "race",
        "marital",
        "nationality",
    }
)
#: Names R, pandas and spreadsheets give a column of row numbers (``write.csv``'s unnamed first
#: column reads as "" or "Unnamed: 0"; R's ``rownames``; ``X`` after ``read.csv``).
_ROW_NUMBER_NAMES = re.compile(r"|unnamed\s*:?\s*\d*|rownames?|row|rownum|rowid|index|x|\.\.\.1")
#: Records needed before consecutive whole numbers alone mark a column of row numbers.
_MIN_ROW_NUMBERS = 20
_AGE_TOKEN = re.compile(r"age(?:grp|group|cat|band|yrs|years|\d+)?")
_QUASI_IDENTIFIER_PREFIXES = ("birth", "ethnic", "year")
_OUTCOME_TOKENS = frozenset(
    {
        "outcome",
        "case",
        "death",
        "died",
        "dead",
        "mortality",
        "status",
        "event",
        "disease",
        "cancer",
    }
)
_EXPOSURE_TOKENS = frozenset({"exp", "exposure", "exposed"})
_PERSON_WORDS = frozenset({"patient", "person", "subject", "participant", "member", "pid", "patid"})
_PERSON_WORDS = _PERSON_WORDS | frozenset({"subjid", "individual", "case", "study"})
#: A record id repeats at most this many times per value on average (visits, events).
MAX_ROWS_PER_PERSON = 20
_EXPOSURE_PREFIXES = ("dose", "expos")


def infer_roles(frame: pd.DataFrame) -> dict[str, str]:
    """Suggest one role (from ``ROLES``) for each column, from its name and contents.

    Names are split into lower-case words (``PatientID`` and ``patient_id`` both give
    ``patient``, ``id``). The HIPAA Safe Harbor screen (:func:`screen_safe_harbor`) reads the
    names and a sample of the contents first. The first rule that matches decides, in order:

    1. a word of a direct identifier (name, surname, email, phone, address, ssn, mrn, ...), or
       a Safe Harbor finding to drop or replace by a pseudonym (e-mail addresses, telephone
       numbers, URLs... found in the contents, whatever the name): ``direct_identifier``;
    2. an id-like name (``id``, ``*_id``, ``record``, ``subject``, ``patientid``, ...) or a
       column of identifying codes (Safe Harbor item 18): one such column whose values are all
       present, and all different or repeated a few times (several rows per person: visits,
       events; at most 20 rows per value on average), is the ``record_id``, preferring a name
       that speaks of a person (patient, person, subject, participant...), then unique values,
       then the first; the other complete, unique ones are ``direct_identifier``; other
       id-like columns with repeated values are ``other`` (a family or site id). Without
       such a column, a medical record number (Safe Harbor item 8) that fits is the record
       id (it is withheld like a direct identifier, and it tells the people apart);
    3. a Safe Harbor finding to coarsen (a date, a ZIP code, a place, an age over 89), or a
       word of a quasi-identifier (sex, gender, age*, birth*, yob, dob, city, zip, postcode,
       region, race, ethnic*, year* except "years", yr, ...): ``quasi_identifier``;
    4. a 0/1 column named like outcome, case, death, status, event, disease or cancer: the
       first one is the ``outcome``;
    5. a name like dose*, exposure, exposed or exp: the first one is the ``exposure``;
    6. any other numeric column: ``covariate``; anything else: ``other``.

    Two rules look at contents alone. A column of row numbers (whole numbers, all present and
    all different, either consecutive from 0 or 1 in 20 records or more, or named like R's
    and pandas' row names: "", "Unnamed: 0", "rownames", "X") is an id-like column as in
    rule 2. When no column is
    named like an outcome, the first 0/1 covariate is the ``outcome`` (a binary column is
    what a logistic model, the default, needs; MASS ``birthwt``'s ``low`` comes first).

    A column can matter in two ways (a dose is both exposure and quasi-identifier); only the
    primary role is returned here.
    """
    findings = screen_safe_harbor(frame)
    screen = findings.suggested_roles()
    codes = {f.column for f in findings.findings if f.item == 18}
    names = [str(c) for c in frame.columns]
    id_like = [
        n
        for n in names
        if screen.get(n) != "direct_identifier"
        and not name_words(n) & _DIRECT_IDENTIFIER_TOKENS
        and (n in codes or _is_id_name(n) or _is_row_number(n, frame[n]))
    ]
    record_id = _choose_record_id(frame, id_like)
    if record_id is None:  # a medical record number can tell the people apart
        numbers = [f.column for f in findings.findings if f.item == 8]
        record_id = _choose_record_id(frame, [n for n in names if n in numbers])
    roles: dict[str, str] = {}
    for name in names:
        if name == record_id:
            roles[name] = "record_id"
        elif name in id_like:
            column = frame[name]
            unique = bool(column.notna().all() and column.is_unique)
            roles[name] = "direct_identifier" if unique else "other"
        else:
            roles[name] = _infer_role(name, frame[name], set(roles.values()), screen.get(name))
    if "outcome" not in roles.values():
        binary = next(
            (c for c, r in roles.items() if r == "covariate" and _is_zero_one(frame[c])), None
        )
        if binary is not None:
            roles[binary] = "outcome"
    return roles


def _is_id_name(name: str) -> bool:
    """A name like ``id``, ``*_id``, ``record``, ``subject``, ``patientid``..."""
    return "id" in name_words(name) or bool(_RECORD_ID_NAMES.fullmatch(_compact(name)))


def _compact(name: str) -> str:
    """The name in lower case without separators ("Patient_No" -> "patientno")."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _choose_record_id(frame: pd.DataFrame, candidates: list[str]) -> str | None:
    """The record id among id-like columns: complete, with at most
    :data:`MAX_ROWS_PER_PERSON` rows per value on average; a person-like name first, then
    unique values, then the first column."""
    fit = []
    for position, name in enumerate(candidates):
        column = frame[name]
        if len(column) == 0 or not column.notna().all():
            continue
        distinct = column.nunique()
        if distinct < 2 and len(column) > 1:
            continue
        if distinct * MAX_ROWS_PER_PERSON < len(column):
            continue
        person = bool(name_words(name) & _PERSON_WORDS) or bool(
            _RECORD_ID_NAMES.fullmatch(_compact(name))
        )
        fit.append((not person, distinct < len(column), position, name))
    return min(fit)[3] if fit else None


def _infer_role(
    name: str, column: pd.Series, roles_taken: set[str], screened: str | None = None
) -> str:
    """The role of a column that is not id-like, given the roles of earlier columns and the
    role the Safe Harbor screen suggests for it (None: no finding)."""
    words = name_words(name)
    if words & _DIRECT_IDENTIFIER_TOKENS or screened == "direct_identifier":
        return "direct_identifier"
    if screened == "quasi_identifier" or _is_quasi_identifier_name(words):
        return "quasi_identifier"
    if "outcome" not in roles_taken and words & _OUTCOME_TOKENS and _is_zero_one(column):
        return "outcome"
    if "exposure" not in roles_taken and (
        words & _EXPOSURE_TOKENS or any(word.startswith(_EXPOSURE_PREFIXES) for word in words)
    ):
        return "exposure"
    return "covariate" if pd.api.types.is_numeric_dtype(column.dtype) else "other"


def _is_quasi_identifier_name(words: set[str]) -> bool:
    """True when a word of the name marks a usual quasi-identifier."""
    return bool(words & _QUASI_IDENTIFIER_TOKENS) or any(
        _AGE_TOKEN.fullmatch(word)
        or (word.startswith(_QUASI_IDENTIFIER_PREFIXES) and word != "years")
        for word in words
    )


def _is_row_number(name: str, column: pd.Series) -> bool:
    """True for whole numbers, all present and all different, that run from 0 or 1 without a
    gap (in a file of at least ``_MIN_ROW_NUMBERS`` records: in a handful of records a count
    can do that), or that sit under a row-number name (``_ROW_NUMBER_NAMES``)."""
    if not pd.api.types.is_integer_dtype(column.dtype) or column.isna().any():
        return False
    if column.empty or not column.is_unique:
        return False
    consecutive = (
        len(column) >= _MIN_ROW_NUMBERS
        and column.min() in (0, 1)
        and column.max() - column.min() + 1 == len(column)
    )
    return bool(consecutive) or bool(_ROW_NUMBER_NAMES.fullmatch(name.strip().lower()))


#: Names of a follow-up time (compacted: lower case, no separators).
_TIME_NAMES = frozenset({"time", "futime", "days", "followup", "followuptime", "survtime", "stime"})
_TIME_WORDS = frozenset({"time", "futime", "days", "followup", "duration"})


def is_row_number(name: str, column: pd.Series) -> bool:
    """Whether a column holds row numbers (R's ``rownames``, pandas' ``Unnamed: 0``, ``X``, or
    1..n / 0..n-1 in 20 records or more): never a model's covariate or follow-up time."""
    return _is_row_number(str(name), column)


def follow_up_time_candidates(frame: pd.DataFrame, exclude: Collection[str] = ()) -> list[str]:
    """The numeric columns that can be a Cox model's follow-up time, those named like one
    first (time, futime, days, follow-up, duration, in the frame's order), row numbers left
    out, and ``exclude`` (the outcome, the exposure) too."""
    numeric = [
        str(c)
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c].dtype)
        and not pd.api.types.is_bool_dtype(frame[c].dtype)
        and c not in exclude
        and not _is_row_number(str(c), frame[c])
    ]
    named = [c for c in numeric if _compact(c) in _TIME_NAMES or name_words(c) & _TIME_WORDS]
    return named + [c for c in numeric if c not in named]


def _is_zero_one(column: pd.Series) -> bool:
    """True for a numeric column whose present values are all 0 or 1 (at least one present)."""
    if not pd.api.types.is_numeric_dtype(column.dtype):
        return False
    present = column.dropna()
    return not present.empty and bool(present.isin([0, 1]).all())


# --- validation ----------------------------------------------------------------------------


def validate_column_for_role(
    frame: pd.DataFrame, column: str, role: str, family: str = "logistic"
) -> list[str]:
    """List, in plain language, what keeps ``column`` from playing ``role`` (empty when fine).

    Checks: any role - the column has at least one value; exposure - numeric, more than one
    value; outcome - for the binary model families (``family`` "logistic" or "err") binary
    (0/1, or two distinct values) with at least one event and one non-event when coded 0/1,
    for "poisson" and "binomial" non-negative whole-number counts with some events, for
    "linear" numeric and varying; quasi-identifier - more than one value, not a different value for
    almost every record when non-numeric; covariate - more than one value; quasi-identifier
    and covariate - no stray text in a mostly numeric column; record id - present (it may
    repeat: several rows per person).

    Raises:
        RecipeError: ``role`` is not one of ``ROLES``.
        DataError: ``frame`` has no column ``column``.
    """
    if role not in ROLES:
        raise RecipeError(f"Unknown role '{role}'; choose one of: {', '.join(ROLES)}.")
    if column not in frame.columns:
        raise DataError(f"The data have no column '{column}'.")
    profile = profile_column(column, frame[column])
    if profile.all_missing:
        return [f"'{column}' has no values (all missing)."]
    checks: dict[str, Callable[[pd.Series, ColumnProfile], list[str]]] = {
        "exposure": _exposure_problems,
        "outcome": lambda v, p: _outcome_problems(v, p, family),
        "quasi_identifier": _quasi_identifier_problems,
        "covariate": _covariate_problems,
        "record_id": _record_id_problems,
        "weight": _weight_problems,
    }
    check = checks.get(role)
    return check(frame[column], profile) if check else []


def _weight_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """A sampling weight must be numeric, complete and positive."""
    name = profile.name
    if profile.kind != "numeric":
        return [f"The weight '{name}' must be numeric."]
    if profile.n_missing:
        return [f"The weight '{name}' has {profile.n_missing} missing value(s)."]
    n_bad = int((pd.to_numeric(values) <= 0).sum())
    if n_bad:
        return [f"The weight '{name}' has {n_bad} value(s) that are not positive."]
    return []


def _exposure_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """An exposure must be numeric and vary."""
    name = profile.name
    if profile.kind != "numeric":
        n_present = len(values) - profile.n_missing
        if profile.numeric_with_text:
            bad = profile.numeric_with_text
            verb = "is not a number" if bad == 1 else "are not numbers"
            return [
                f"The exposure '{name}' must be numeric, but {bad:,} of its {n_present:,} "
                f"entries {verb}."
            ]
        return [f"The exposure '{name}' must be numeric, but its entries are not numbers."]
    if profile.one_level:
        return [f"The exposure '{name}' has a single value: its effect cannot be estimated."]
    return []


def _outcome_problems(values: pd.Series, profile: ColumnProfile, family: str) -> list[str]:
    """An outcome must suit the model family: binary with events and non-events, counts with
    some events, or varying numbers."""
    name = profile.name
    if family in ("poisson", "binomial", "linear"):
        numbers = pd.to_numeric(values, errors="coerce") if profile.kind != "numeric" else values
        observed = numbers.dropna().astype(float)
        if observed.size < values.notna().sum() or pd.api.types.is_bool_dtype(values):
            return [f"The outcome '{name}' must be numeric for the {family} model."]
        if family == "linear":
            return (
                []
                if not profile.one_level
                else [f"The outcome '{name}' has a single value: the regression cannot be fitted."]
            )
        if (observed < 0).any() or (observed != observed.round()).any():
            return [
                f"The outcome '{name}' must be a count (non-negative whole numbers) for the "
                f"{family} model."
            ]
        if (observed == 0).all():
            return [f"The outcome '{name}' has no events (all 0): the model cannot be fitted."]
        return []
    if profile.n_distinct > 2:
        return [
            f"The outcome '{name}' must be binary (0/1 or two values), but it has "
            f"{profile.n_distinct} different values."
        ]
    if _is_zero_one(values) and profile.one_level:
        if values.dropna().iloc[0] == 0:
            return [f"The outcome '{name}' has no events (all 0): the regression cannot be fitted."]
        if family == "cox":  # every record had the event: no censoring, a valid Cox model
            return []
        return [f"The outcome '{name}' has no non-events (all 1): the regression cannot be fitted."]
    if profile.one_level:
        return [f"The outcome '{name}' has a single value: the regression cannot be fitted."]
    return []


def _quasi_identifier_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """A quasi-identifier should vary, and not be distinct for nearly every record."""
    name = profile.name
    if profile.one_level:
        return [f"'{name}' has a single value: it adds no risk and can be left out."]
    problems = []
    if profile.high_cardinality:
        problems.append(
            f"'{name}' has a different value for almost every record ({profile.n_distinct} "
            f"values in {len(values)} records): as a quasi-identifier it makes nearly every "
            "record unique; generalize it or leave it out."
        )
    return problems + _stray_text_problems(profile)


def _covariate_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """A covariate should vary."""
    if profile.one_level:
        return [
            f"The covariate '{profile.name}' has a single value: its effect cannot be estimated."
        ]
    return _stray_text_problems(profile)


def _stray_text_problems(profile: ColumnProfile) -> list[str]:
    """Report a mostly numeric column kept as text because of a few other entries."""
    if not profile.numeric_with_text:
        return []
    bad = profile.numeric_with_text
    entries = (
        "1 of its entries is not a number"
        if bad == 1
        else f"{bad:,} of its entries are not numbers"
    )
    return [
        f"'{profile.name}' looks numeric, but {entries}, so it is treated as text. Fix or blank "
        f"{'it' if bad == 1 else 'those entries'} to use it as a number."
    ]


def _record_id_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """A record id must be present for every record. It may repeat: several rows of one
    person (visits, events) share it, and class sizes then count people
    (:mod:`deid_core.risk.people`)."""
    if profile.n_missing:
        return [
            f"The record id '{profile.name}' is missing for {profile.n_missing} records: each "
            "such record counts as a person of its own."
        ]
    return []
