"""A screen of a file's columns against HIPAA Safe Harbor's 18 identifiers.

Safe Harbor (45 CFR 164.514(b)(2); El Emam & Malin, Box 2) removes 18 kinds of identifier:
names; geographic units smaller than a state (ZIP codes but for their first three digits
where the area holds more than 20,000 people, the others as 000); every element of a date
but the year, and ages over 89 (one category "90 or older"); telephone and fax numbers;
e-mail addresses; social security, medical record, health plan beneficiary, account and
certificate or licence numbers; vehicle and device identifiers and serial numbers; URLs; IP
addresses; biometric identifiers; full-face photographs; any other unique identifying number,
characteristic or code.

:func:`screen_safe_harbor` says, for each item, which columns look like it:

- **by name**: the words of the column name (``date_of_birth`` -> date, of, birth);
- **by content**: a sample of at most :data:`SAMPLE_SIZE` values (drawn with a fixed seed, so
  the screen is the same every time) matched by vectorised regular expressions; a column
  "looks like" a pattern when at least half of its sampled values match. Patterns: e-mail
  addresses, URLs, IPv4 and IPv6 addresses, US social security numbers (123-45-6789),
  telephone numbers with separators, personal names (two to four capitalised words, mostly
  different), street addresses, 5-digit ZIP codes (text), dates finer than a year (a date
  column, ISO or day/month/year text, month names), MAC addresses (devices), vehicle
  identification numbers, image file names, and record-number codes (letters and digits,
  mostly different);
- ages over 89: a numeric column named like an age with a value above 89 (the whole column);
- item 18: the record id, or a column named like an id whose values are almost all different.

Each finding carries a suggested action (:data:`ACTIONS`). Messages give shares and counts,
never a value. Fast on large files: the sample bounds the regular expressions; only the
maximum of an age column and the number of distinct values of an id-like column read it all.

Passing the screen is not a low risk (El Emam & Malin, "The HIPAA Privacy Rule's Safe Harbor
Standard"): see :data:`WHY_NOT_ENOUGH`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deid_core.io.columns import name_words
from deid_core.masking import DateReduce, MaskingStep, TopBottomCode, ZipToThreeDigits
from deid_core.recipe import Recipe

#: Values sampled per column for the content checks.
SAMPLE_SIZE = 2000
#: Share of sampled values that must match a pattern for a column to look like it.
MATCH_SHARE = 0.5
#: Share of different values (among present ones) that makes a column an identifying code.
UNIQUE_SHARE = 0.95
#: Top code of ages (Safe Harbor: ages over 89 become "90 or older").
AGE_TOP_CODE = 90

#: The 18 items of Safe Harbor (El Emam & Malin, Box 2), short titles.
ITEMS: dict[int, str] = {
    1: "Names",
    2: "Geographic subdivisions smaller than a state (addresses, cities, ZIP codes)",
    3: "Dates (except year) and ages over 89",
    4: "Telephone numbers",
    5: "Fax numbers",
    6: "E-mail addresses",
    7: "Social security numbers",
    8: "Medical record numbers",
    9: "Health plan beneficiary numbers",
    10: "Account numbers",
    11: "Certificate or licence numbers",
    12: "Vehicle identifiers and serial numbers (licence plates)",
    13: "Device identifiers and serial numbers",
    14: "Web URLs",
    15: "IP addresses",
    16: "Biometric identifiers (finger and voice prints)",
    17: "Full-face photographs and comparable images",
    18: "Any other unique identifying number, characteristic or code",
}

#: Suggested actions: key -> what to do, in plain language.
ACTIONS: dict[str, str] = {
    "drop": "drop the column (a direct identifier)",
    "pseudonymise": "drop it, or release a pseudonym instead if a study ID is needed (Export page)",
    "zip3": "cut to the first 3 digits, the 17 restricted prefixes as 000 (masking step)",
    "generalise_place": "drop it, or generalise it to the state",
    "date_to_year": "reduce the dates to the year (masking step)",
    "top_code_90": f"top-code at {AGE_TOP_CODE}: ages of 90 or more as one category",
}

#: Why a file that passes the screen is not thereby of low risk (El Emam & Malin).
WHY_NOT_ENOUGH = (
    "Passing this screen is not the same as a low risk (El Emam & Malin). Safe Harbor is a "
    "fixed list: other quasi-identifiers in the file, such as race, ethnicity, occupation or "
    "the dose, are ignored, and its low risk may not carry over when there are more "
    "quasi-identifiers than its two (dates and ZIP codes). Its justification assumed the file "
    "is a random sample of the US population, so that an intruder cannot know who is in it; "
    "when they can (the trial's site is known, taking part is visible), a person unique on "
    "year of birth and town is re-identified although the file meets Safe Harbor. The ZIP "
    "rule is calibrated on US areas (it does not carry over to other countries' postal codes), "
    "and a 000 prefix can be undone in a state with a single small area (New Hampshire's "
    "036). Measure the risk of the quasi-identifiers on the Risk page."
)

_NAME_ITEMS: tuple[tuple[int, frozenset[str]], ...] = (
    (5, frozenset({"fax", "facsimile"})),
    (4, frozenset({"phone", "telephone", "tel", "mobile", "cellphone", "phonenumber"})),
    (6, frozenset({"email", "mail", "emailaddress"})),
    (7, frozenset({"ssn", "socialsecurity"})),
    (8, frozenset({"mrn", "medicalrecord", "hospitalnumber", "chartnumber"})),
    (12, frozenset({"vehicle", "vin", "licenseplate", "numberplate", "plate"})),
    (11, frozenset({"license", "licence", "certificate", "passport", "licenseno"})),
    (13, frozenset({"device", "serial", "serialnumber", "imei", "udi", "macaddress"})),
    (14, frozenset({"url", "uri", "website", "homepage", "webpage"})),
    (15, frozenset({"ip", "ipaddress", "ipv4", "ipv6"})),
    (16, frozenset({"fingerprint", "voiceprint", "biometric", "biometrics", "retina", "iris"})),
    (17, frozenset({"photo", "photograph", "picture", "image", "img", "headshot", "portrait"})),
)
_ID_WORDS = frozenset({"id", "no", "num", "number", "nr", "code"})
_PERSON_NAME_WORDS = frozenset(
    {"firstname", "lastname", "surname", "fullname", "forename", "givenname", "familyname"}
    | {"maidenname", "middlename"}
)
_NAME_QUALIFIERS = frozenset(
    {"first", "last", "given", "family", "full", "middle", "maiden", "patient", "person"}
    | {"subject", "participant", "pt", "mother", "father", "parent", "contact", "next", "of"}
    | {"kin", "name", "names"}
)
_ZIP_WORDS = frozenset({"zip", "zipcode", "postcode", "postal", "zcta"})
_ADDRESS_WORDS = frozenset({"address", "street", "addr", "latitude", "longitude", "lat", "lon"})
_ADDRESS_WORDS = _ADDRESS_WORDS | frozenset({"lng", "geocode"})
_PLACE_WORDS = frozenset(
    {"city", "town", "county", "precinct", "municipality", "village", "neighborhood"}
    | {"neighbourhood", "tract", "borough", "suburb"}
)
_DATE_WORDS = frozenset(
    {"date", "dates", "dob", "dod", "birthdate", "birthday", "datetime", "timestamp", "dt"}
    | {"admission", "admitted", "discharge", "discharged"}
)
_AGE_WORD = re.compile(r"age(?:yrs|years|\d+)?")
_RECORD_ID_WORDS = re.compile(
    r"(?:patient|person|subject|record|participant|case|study|member)(?:id|no|num|number)|"
    r"subjid|patid|pid|recno|seqn"
)

# Content patterns (full matches on text).
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_PATTERNS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
    "url": re.compile(r"(?:https?|ftp)://\S+|www\.\S+\.[A-Za-z]{2,}\S*", re.IGNORECASE),
    "ipv4": re.compile(
        r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}"
    ),
    "ipv6": re.compile(
        r"(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|"
        r"(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?",
        re.IGNORECASE,
    ),
    "ssn": re.compile(r"\d{3}-\d{2}-\d{4}"),
    "phone": re.compile(
        r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?|\d{2,4}[\s.-])\d{3,4}[\s.-]?\d{3,4}"
    ),
    "mac": re.compile(r"[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}", re.IGNORECASE),
    "vin": re.compile(r"(?=[A-HJ-NPR-Z0-9]*\d)(?=[A-HJ-NPR-Z0-9]*[A-HJ-NPR-Z])[A-HJ-NPR-Z0-9]{17}"),
    "image": re.compile(r".+\.(?:jpe?g|png|gif|bmp|tiff?|heic|webp)|data:image/.+", re.IGNORECASE),
    "zip": re.compile(r"\d{5}(?:-\d{4})?"),
    "address": re.compile(
        r"\d+[A-Za-z]?\s+(?:[A-Za-z0-9.'-]+\s+){1,4}(?:street|st|avenue|ave|road|rd|boulevard|"
        r"blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|close|crescent|highway|hwy|"
        r"square|sq)\.?(?:[\s,].*)?",
        re.IGNORECASE,
    ),
    "date": re.compile(
        r"\d{4}-\d{1,2}(?:-\d{1,2})?"
        r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|"
        r"\d{4}/\d{1,2}(?:/\d{1,2})?|\d{1,2}[/.-]\d{1,2}[/.-]\d{2}(?:\d{2})?|"
        rf"\d{{1,2}}\s+{_MONTH},?\s+\d{{2,4}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|{_MONTH}\s+\d{{4}}",
        re.IGNORECASE,
    ),
    "person_name": re.compile(r"[A-Z][a-z'-]+(?:,? (?:[A-Z]\.|[A-Z][a-z'-]+)){1,3}"),
    "code": re.compile(r"[A-Za-z]{1,6}[-_/ ]?\d{3,12}|\d{6,12}"),
}
#: What each content pattern means: (item, plain-language phrase, action, ambiguous). An
#: ambiguous pattern (phone or fax, a code of some kind) is folded into an item the column's
#: name points to.
_PATTERN_ITEMS: dict[str, tuple[int, str, str, bool]] = {
    "email": (6, "e-mail addresses", "drop", False),
    "url": (14, "web addresses (URLs)", "drop", False),
    "ipv4": (15, "IP addresses", "drop", False),
    "ipv6": (15, "IP addresses", "drop", False),
    "ssn": (7, "social security numbers", "drop", False),
    "phone": (4, "telephone (or fax) numbers", "drop", True),
    "mac": (13, "device (MAC) addresses", "drop", False),
    "vin": (12, "vehicle identification numbers", "drop", False),
    "image": (17, "image files", "drop", False),
    "zip": (2, "5-digit ZIP codes", "zip3", False),
    "address": (2, "street addresses", "drop", False),
    "date": (3, "dates finer than a year", "date_to_year", False),
    "person_name": (1, "personal names", "drop", False),
    "code": (18, "record numbers or codes (letters and digits)", "pseudonymise", True),
}
#: Patterns that need the column's values to be mostly different (names, codes).
_NEEDS_VARIETY = frozenset({"person_name", "code"})
_VARIETY_SHARE = 0.3


@dataclass(frozen=True)
class Finding:
    """One column that looks like one Safe Harbor item: how it was found ("name",
    "content", "name and content" or "role"), the evidence (counts and shares, never a
    value) and the suggested action (a key of :data:`ACTIONS`)."""

    item: int
    column: str
    how: str
    evidence: str
    action: str

    @property
    def action_text(self) -> str:
        return ACTIONS[self.action]


@dataclass(frozen=True)
class SafeHarborScreen:
    """The findings of :func:`screen_safe_harbor`, and the tables that show them."""

    findings: tuple[Finding, ...]
    n_rows: int
    sample_size: int
    columns: tuple[str, ...] = field(default=())

    def for_item(self, item: int) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.item == item)

    def for_column(self, column: str) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.column == column)

    @property
    def items_found(self) -> list[int]:
        return sorted({f.item for f in self.findings})

    @property
    def flagged_columns(self) -> list[str]:
        return list(dict.fromkeys(f.column for f in self.findings))

    def table(self) -> pd.DataFrame:
        """One row per item: its status, the columns that look like it, how they were found
        and the suggested action."""
        rows = []
        for item, title in ITEMS.items():
            found = self.for_item(item)
            rows.append(
                {
                    "Item": item,
                    "Identifier": title,
                    "Status": "found" if found else "not found",
                    "Columns": ", ".join(f.column for f in found),
                    "How found": "; ".join(f"{f.column}: {f.evidence}" for f in found),
                    "Suggested action": "; ".join(
                        dict.fromkeys(f"{f.column}: {f.action_text}" for f in found)
                    ),
                }
            )
        return pd.DataFrame(rows)

    def suggested_roles(self) -> dict[str, str]:
        """A role for each flagged column: direct identifier for items to drop or replace by
        a pseudonym, quasi-identifier for dates, ages and places to coarsen. Identifying
        codes (item 18) are left out: one of them is the record id, which
        :func:`deid_core.io.roles.infer_roles` chooses."""
        roles: dict[str, str] = {}
        for finding in self.findings:
            if finding.item == 18:
                continue
            if finding.action in ("drop", "pseudonymise"):
                roles[finding.column] = "direct_identifier"
            else:
                roles.setdefault(finding.column, "quasi_identifier")
        return roles

    def suggested_steps(self) -> list[MaskingStep]:
        """The masking steps of the suggested actions that have one: dates to the year, ages
        top-coded at 90, ZIP codes to 3 digits (at most one step per column)."""
        steps: dict[str, MaskingStep] = {}
        for finding in self.findings:
            if self.suggested_roles().get(finding.column) != "quasi_identifier":
                continue
            if finding.action == "date_to_year":
                steps.setdefault(finding.column, DateReduce(finding.column, to="year"))
            elif finding.action == "top_code_90":
                steps.setdefault(finding.column, TopBottomCode(finding.column, top=AGE_TOP_CODE))
            elif finding.action == "zip3":
                steps.setdefault(finding.column, ZipToThreeDigits(finding.column))
        return list(steps.values())

    def to_dict(self) -> dict[str, object]:
        return {
            "n_rows": self.n_rows,
            "sample_size": self.sample_size,
            "items": {
                str(item): [
                    {"column": f.column, "how": f.how, "evidence": f.evidence, "action": f.action}
                    for f in self.for_item(item)
                ]
                for item in ITEMS
            },
        }

    def __str__(self) -> str:
        lines = [f"HIPAA Safe Harbor screen ({self.n_rows:,} rows, {self.sample_size:,} sampled)"]
        for item, title in ITEMS.items():
            found = self.for_item(item)
            status = ", ".join(f.column for f in found) if found else "not found"
            lines.append(f"  {item:>2}. {title}: {status}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------- the screen
def screen_safe_harbor(
    frame: pd.DataFrame, record_id: str | None = None, sample_size: int = SAMPLE_SIZE
) -> SafeHarborScreen:
    """Which columns of ``frame`` look like each of Safe Harbor's 18 items (see the module
    notes); ``record_id`` is the record-id column, an identifying code by its role."""
    findings: list[Finding] = []
    n = len(frame)
    positions = _sample_positions(n, sample_size)
    for column in frame.columns:
        name = str(column)
        series = frame[column]
        findings.extend(_screen_column(name, series, positions, name == record_id))
    return SafeHarborScreen(
        tuple(findings), n, int(min(n, sample_size)), tuple(map(str, frame.columns))
    )


def _sample_positions(n: int, size: int) -> np.ndarray:
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, size=size, replace=False))


def _screen_column(
    name: str, series: pd.Series, positions: np.ndarray, is_record_id: bool
) -> list[Finding]:
    words = name_words(name)
    joined = re.sub(r"[^a-z0-9]", "", name.lower())
    by_name = _name_findings(name, words, series)
    by_content = _content_findings(name, series, positions)
    findings: list[Finding] = []
    named_items = {f.item for f in by_name}
    for finding in by_name:
        same = [c for c in by_content if c.item == finding.item]
        folded = [c for c in by_content if c.item != finding.item and c.action == "ambiguous"]
        if same or folded:
            evidence = "; ".join([finding.evidence, *(c.evidence for c in same + folded)])
            finding = Finding(finding.item, name, "name and content", evidence, finding.action)
        findings.append(finding)
    for finding in by_content:
        if finding.item in named_items:
            continue
        if finding.action == "ambiguous":
            if named_items:
                continue  # folded into the item the name points to
            item, _, action, _ = _PATTERN_ITEMS[finding.how]
            finding = Finding(item, name, "content", finding.evidence, action)
        else:
            finding = Finding(finding.item, name, "content", finding.evidence, finding.action)
        findings.append(finding)
    if not findings and (_RECORD_ID_WORDS.fullmatch(joined) or "id" in words):
        unique = _unique_share(series)
        if unique >= UNIQUE_SHARE:
            findings.append(
                Finding(
                    18,
                    name,
                    "name and content",
                    f"named like an id, {100 * unique:.0f}% of its values different",
                    "pseudonymise",
                )
            )
    if is_record_id and not any(f.item == 18 for f in findings):
        findings.append(
            Finding(18, name, "role", "the record id (one code per person)", "pseudonymise")
        )
    return findings


def _name_findings(name: str, words: set[str], series: pd.Series) -> list[Finding]:
    """Items the column's name points to."""
    found: list[Finding] = []
    compact = re.sub(r"[^a-z0-9]", "", name.lower())

    def add(item: int, action: str, evidence: str = "", how: str = "name") -> None:
        evidence = evidence or f"its name suggests {ITEMS[item].lower()}"
        found.append(Finding(item, name, how, evidence, action))

    if words & _PERSON_NAME_WORDS or (words & {"name", "names"} and words <= _NAME_QUALIFIERS):
        add(1, "drop")
    if words & _ZIP_WORDS or compact.startswith("zip"):
        add(2, "zip3", "named like a ZIP or postal code")
    elif words & _ADDRESS_WORDS:
        add(2, "drop", "named like an address or coordinates")
    elif words & _PLACE_WORDS:
        add(2, "generalise_place", "named like a place smaller than a state")
    date_name = words & _DATE_WORDS or ("birth" in words and not words & {"year", "yr", "weight"})
    if date_name and not _is_year_only(series):
        add(3, "date_to_year", "named like a date")
    numeric = pd.api.types.is_numeric_dtype(series.dtype)
    numeric = numeric and not pd.api.types.is_bool_dtype(series.dtype)
    over = 0
    if numeric and any(_AGE_WORD.fullmatch(w) for w in words):
        over = int((pd.to_numeric(series, errors="coerce") > 89).sum())
    if over:
        evidence = f"named like an age, {over:,} value(s) over 89"
        add(3, "top_code_90", evidence, "name and content")
    specific = {
        "socialsecurity": {"social", "security"} <= words,
        "medicalrecord": {"medical", "record"} <= words or {"record", "number"} <= words,
        "hospitalnumber": {"hospital", "number"} <= words,
        "chartnumber": "chart" in words and bool(words & _ID_WORDS),
        "licenseplate": ("license" in words or "licence" in words) and "plate" in words,
        "emailaddress": {"e", "mail"} <= words,
        "ipaddress": {"ip", "address"} <= words,
        "macaddress": {"mac", "address"} <= words,
    }
    tokens = words | {token for token, hit in specific.items() if hit}
    for item, names in _NAME_ITEMS:
        if item == 11 and "licenseplate" in tokens:
            continue
        if item == 13 and "device" in tokens and not (tokens & (_ID_WORDS | {"serial"})):
            continue  # "device" alone is usually a category (pump, pacemaker)
        if item == 17 and pd.api.types.is_numeric_dtype(series.dtype):
            continue  # a numeric "image" column is a measurement, not a photograph
        if tokens & names:
            add(item, "pseudonymise" if item in (8, 9, 10, 11) else "drop")
    health_plan = words & {"beneficiary", "medicaid", "medicare", "insurance", "member"}
    if health_plan and (words & _ID_WORDS or "beneficiary" in words):
        add(9, "pseudonymise")
    if words & {"account", "acct", "iban"} and (words & _ID_WORDS or words & {"iban", "acct"}):
        add(10, "pseudonymise")
    return _unique_items(found)


def _unique_items(findings: list[Finding]) -> list[Finding]:
    seen: set[int] = set()
    out = []
    for finding in findings:
        if finding.item not in seen:
            seen.add(finding.item)
            out.append(finding)
    return out


def _content_findings(name: str, series: pd.Series, positions: np.ndarray) -> list[Finding]:
    """Items the column's sampled values look like (an ambiguous pattern's finding has the
    action "ambiguous" and its pattern in ``how``, resolved by the caller)."""
    dtype = series.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype):
        sample = series.iloc[positions].dropna()
        if len(sample) and not _all_january_first(sample):
            return [Finding(3, name, "content", "a date column", "date_to_year")]
        return []
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return []
    sample = series.iloc[positions].dropna()
    if isinstance(dtype, pd.CategoricalDtype):
        sample = sample.astype(object)
    if sample.empty:
        return []
    if sample.map(lambda v: isinstance(v, bytes | bytearray | memoryview)).mean() >= MATCH_SHARE:
        return [Finding(17, name, "content", "binary content (images or biometric data?)", "drop")]
    text = sample.astype(str).str.strip()
    text = text[text != ""]
    if text.empty:
        return []
    variety = text.nunique() / len(text)
    findings: list[Finding] = []
    for key, pattern in _PATTERNS.items():
        if key in _NEEDS_VARIETY and variety < _VARIETY_SHARE:
            continue
        share = float(text.str.fullmatch(pattern).mean())
        if share < MATCH_SHARE:
            continue
        item, phrase, action, ambiguous = _PATTERN_ITEMS[key]
        if any(f.item == item for f in findings):
            continue
        evidence = f"{100 * share:.0f}% of {len(text):,} sampled values look like {phrase}"
        if ambiguous:
            findings.append(Finding(item, name, key, evidence, "ambiguous"))
        else:
            findings.append(Finding(item, name, "content", evidence, action))
    if any(f.item != 18 for f in findings):
        findings = [f for f in findings if f.item != 18]  # a name or e-mail is no mere code
    return findings


def _all_january_first(dates: pd.Series) -> bool:
    """Whether every date is a 1 January at midnight (a year stored as a date)."""
    return bool(((dates.dt.month == 1) & (dates.dt.day == 1) & (dates.dt.hour == 0)).all())


def _is_year_only(series: pd.Series) -> bool:
    """Whether a column holds years only (whole numbers 1000..2999, or such text)."""
    values = pd.to_numeric(series.dropna(), errors="coerce")
    if values.empty or values.isna().any():
        return False
    return bool(((values == values.round()) & values.between(1000, 2999)).all())


def _unique_share(series: pd.Series) -> float:
    """Distinct values as a share of the present ones (0 with none present)."""
    present = series.dropna()
    if len(present) < 2:
        return 0.0
    return float(present.nunique() / len(present))


# ---------------------------------------------------------------------------- the release
#: Status of an item in the release.
STATUS_NOT_FOUND = "not found"
STATUS_MET = "met"
STATUS_DERIVED = "met only by expert determination"
STATUS_NOT_MET = "not met"


@dataclass(frozen=True)
class ItemInRelease:
    """One Safe Harbor item in the release a recipe makes: its status (``not found``,
    ``met``, ``met only by expert determination`` for a keyed-hash pseudonym, ``not met``)
    and what happens to each column that looks like it."""

    item: int
    title: str
    status: str
    treatments: tuple[str, ...]


def release_status(
    screen: SafeHarborScreen, recipe: Recipe, keep_record_id: bool = False
) -> list[ItemInRelease]:
    """Each of the 18 items in the release ``recipe`` makes from the screened data: dropped,
    replaced by a pseudonym, coarsened as Safe Harbor asks, or still released."""
    out = []
    for item, title in ITEMS.items():
        found = screen.for_item(item)
        if not found:
            out.append(ItemInRelease(item, title, STATUS_NOT_FOUND, ()))
            continue
        outcomes = [_treatment(f, recipe, keep_record_id) for f in found]
        statuses = {status for status, _ in outcomes}
        status = next(s for s in (STATUS_NOT_MET, STATUS_DERIVED, STATUS_MET) if s in statuses)
        out.append(ItemInRelease(item, title, status, tuple(t for _, t in outcomes)))
    return out


def _treatment(finding: Finding, recipe: Recipe, keep_record_id: bool) -> tuple[str, str]:
    """(status, plain-language treatment) of one flagged column in the release."""
    column = finding.column
    roles = recipe.roles
    pseudonym = next((s for s in recipe.pseudonym_steps if s.column == column), None)
    if pseudonym is not None:
        name = f" as '{pseudonym.released_name}'"
        if pseudonym.needs_key:
            return STATUS_DERIVED, (
                f"{column}: replaced by a keyed-hash pseudonym{name} (a code derived from the "
                "identifier: Safe Harbor does not allow it; an expert determination can, when "
                "the key is tightly controlled)"
            )
        return STATUS_MET, (
            f"{column}: replaced by a random pseudonym{name} (a code not derived from the "
            "identifier; the custodian keeps the crosswalk)"
        )
    withheld = column in roles.direct_identifiers or (
        column == roles.record_id and not keep_record_id
    )
    if withheld:
        return STATUS_MET, f"{column}: dropped"
    steps = recipe.steps_for(column)
    if not steps:
        return STATUS_NOT_MET, f"{column}: released unchanged"
    described = "; ".join(step.describe().removeprefix(f"{column}: ") for step in steps)
    met = {
        "date_to_year": any(isinstance(s, DateReduce) and s.to == "year" for s in steps),
        "top_code_90": any(
            isinstance(s, TopBottomCode) and s.top is not None and s.top <= AGE_TOP_CODE
            for s in steps
        ),
        "zip3": any(isinstance(s, ZipToThreeDigits) for s in steps),
    }.get(finding.action, False)
    if met:
        return STATUS_MET, f"{column}: {described}"
    return STATUS_NOT_MET, f"{column}: masked ({described}), not as Safe Harbor asks"


def unmet_items(
    screen: SafeHarborScreen, recipe: Recipe, keep_record_id: bool = False
) -> tuple[str, ...]:
    """The Safe Harbor items the release does not meet, one line each ("item 3 (dates and ages
    over 89): age: released unchanged"): items still released, and keyed-hash pseudonyms, which
    only an expert determination can allow."""
    return tuple(
        f"item {status.item} ({status.title}): " + "; ".join(status.treatments)
        for status in release_status(screen, recipe, keep_record_id)
        if status.status in (STATUS_NOT_MET, STATUS_DERIVED)
    )
