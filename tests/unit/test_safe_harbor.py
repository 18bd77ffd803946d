"""The HIPAA Safe Harbor screen: each of the 18 items found on a crafted file, by name and by
content; nothing flagged on the demos' ordinary columns; no value in any message; the status
of each item in a release; the ZIP-to-3-digits step."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from deid_core.datasets import DEMO_DATASETS, load_demo
from deid_core.errors import RecipeError
from deid_core.io.roles import infer_roles
from deid_core.io.safe_harbor import (
    ITEMS,
    STATUS_DERIVED,
    STATUS_MET,
    STATUS_NOT_FOUND,
    STATUS_NOT_MET,
    WHY_NOT_ENOUGH,
    release_status,
    screen_safe_harbor,
)
from deid_core.masking import (
    RESTRICTED_ZIP3,
    DateReduce,
    HmacPseudonym,
    RandomPseudonym,
    TopBottomCode,
    ZipToThreeDigits,
)
from deid_core.recipe import Recipe, Roles

FIRST = ["Alice", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas"]
LAST = ["Smith", "Okafor", "Nguyen", "Garcia", "Kowalski", "Haddad", "Moreau", "Tanaka"]


def crafted(n: int = 240) -> pd.DataFrame:
    """One column per Safe Harbor item, named plainly, values made up."""
    rng = np.random.default_rng(1)
    i = np.arange(n)
    return pd.DataFrame(
        {
            "patient_name": [f"{FIRST[k % 10]} {LAST[(k // 10) % 8]}" for k in i],
            "zip": [f"{(k * 7919) % 100000:05d}" for k in i],
            "birth_date": pd.Timestamp("1950-01-01")
            + pd.to_timedelta(rng.integers(0, 20000, n), unit="D"),
            "age": rng.integers(20, 100, n),
            "phone": [f"({200 + k % 700}) {100 + k % 900}-{1000 + k:04d}" for k in i],
            "fax": [f"+1 {300 + k % 600} {200 + k % 700} {2000 + k:04d}" for k in i],
            "email": [f"user{k}@example.org" for k in i],
            "ssn": [f"{100 + k % 800:03d}-{10 + k % 80:02d}-{1000 + k:04d}" for k in i],
            "mrn": [f"MRN{100000 + k}" for k in i],
            "medicaid_id": [f"MC{500000 + k}" for k in i],
            "account_number": [f"AC-{700000 + k}" for k in i],
            "license_no": [f"DL{900000 + k}" for k in i],
            "vin": [f"1HGCM82633A{100000 + k:06d}" for k in i],
            "device_serial": [f"SN-{k:08d}" for k in i],
            "homepage": [f"https://example.org/u/{k}" for k in i],
            "ip_address": [f"10.{k // 250}.{k % 250}.7" for k in i],
            "fingerprint": [f"template-{k}" for k in i],
            "photo": [f"img_{k}.jpg" for k in i],
            "subject_code": [f"S{k:06d}" for k in i],
            "dose": rng.gamma(1.0, 1.0, n),
            "sex": rng.choice(["F", "M"], n),
        }
    )


EXPECTED = {
    1: "patient_name",
    2: "zip",
    3: "birth_date",
    4: "phone",
    5: "fax",
    6: "email",
    7: "ssn",
    8: "mrn",
    9: "medicaid_id",
    10: "account_number",
    11: "license_no",
    12: "vin",
    13: "device_serial",
    14: "homepage",
    15: "ip_address",
    16: "fingerprint",
    17: "photo",
    18: "subject_code",
}


def test_the_screen_finds_each_of_the_18_items_on_a_crafted_file():
    screen = screen_safe_harbor(crafted())
    assert screen.items_found == list(range(1, 19))
    for item, column in EXPECTED.items():
        assert column in [f.column for f in screen.for_item(item)], item
    assert [f.column for f in screen.for_item(3)] == ["birth_date", "age"]
    assert not screen.for_column("dose") and not screen.for_column("sex")
    table = screen.table()
    assert len(table) == 18 and set(table["Status"]) == {"found"}


# Columns with neutral names: only their contents can give them away.
CONTENT_ONLY = {
    "email": 6,
    "homepage": 14,
    "ip_address": 15,
    "ssn": 7,
    "phone": 4,
    "zip": 2,
    "patient_name": 1,
    "photo": 17,
    "vin": 12,
    "subject_code": 18,
    "birth_date": 3,
}


@pytest.mark.parametrize(("column", "item"), list(CONTENT_ONLY.items()))
def test_contents_alone_give_an_item_away(column, item):
    frame = crafted()[[column]].rename(columns={column: "c1"})
    screen = screen_safe_harbor(frame)
    assert [(f.item, f.how) for f in screen.findings] == [(item, "content")]


def test_text_dates_and_device_addresses_by_content():
    n = 50
    frame = pd.DataFrame(
        {
            "c1": [f"{1 + k % 28:02d}/{1 + k % 12:02d}/19{50 + k % 40}" for k in range(n)],
            "c2": [f"14 Jul {1950 + k}" for k in range(n)],
            "c3": [f"00:1a:2b:3c:{k % 256:02x}:5e" for k in range(n)],
            "c4": [f"2001:db8::{k:x}" for k in range(n)],
            "c5": [f"{10 + k} Main Street" for k in range(n)],
            "c6": [str(1950 + k % 40) for k in range(n)],  # years only: not finer than a year
        }
    )
    found = {f.column: f.item for f in screen_safe_harbor(frame).findings}
    assert found == {"c1": 3, "c2": 3, "c3": 13, "c4": 15, "c5": 2}


def test_no_value_appears_in_any_message():
    frame = crafted()
    screen = screen_safe_harbor(frame)
    text = str(screen) + screen.table().to_string()
    for column in frame.columns:
        for value in frame[column].astype(str).head(50):
            if len(value) >= 4 and not value.isdigit():
                assert value not in text, (column, value)


DEMO_FLAGS = {
    # The record id is an identifying code (item 18); cohort's city is a place smaller than
    # a state (item 2); ages over 89 exist in cohort's age at the end of follow-up and in
    # flchain's age (item 3). Every other column is ordinary.
    "cohort": {("person_id", 18), ("city", 2), ("age_at_end", 3)},
    "flchain": {("record_id", 18), ("age", 3)},
    "el_emam": {("id", 18)},
    "point_source": {("id", 18)},
    "areas": {("row_id", 18)},
    "roc_example": set(),
    "diagnostic_test": set(),
    # The visits demo is a clinical file with its identifiers: a name (item 1), ZIP codes
    # (item 2), dates (item 3) and the medical record number (items 8 and 18).
    "visits": {
        ("name", 1),
        ("zip", 2),
        ("birth_date", 3),
        ("admission_date", 3),
        ("discharge_date", 3),
        ("mrn", 8),
        ("mrn", 18),
    },
}


@pytest.mark.parametrize("key", list(DEMO_DATASETS))
def test_the_demos_ordinary_columns_are_not_flagged(key):
    demo = DEMO_DATASETS[key]
    screen = screen_safe_harbor(load_demo(key), record_id=demo.record_id)
    assert {(f.column, f.item) for f in screen.findings} == DEMO_FLAGS[key]


def test_the_screen_suggests_roles_and_masking_steps():
    screen = screen_safe_harbor(crafted())
    roles = screen.suggested_roles()
    assert roles["email"] == roles["mrn"] == roles["photo"] == "direct_identifier"
    assert roles["zip"] == roles["birth_date"] == roles["age"] == "quasi_identifier"
    assert "subject_code" not in roles  # an identifying code: the record id, or not
    steps = {s.column: s for s in screen.suggested_steps()}
    assert steps == {
        "zip": ZipToThreeDigits("zip"),
        "birth_date": DateReduce("birth_date", to="year"),
        "age": TopBottomCode("age", top=90),
    }
    assert infer_roles(crafted())["subject_code"] == "record_id"


def test_each_item_in_the_release():
    frame = crafted()
    screen = screen_safe_harbor(frame, record_id="subject_code")
    direct = tuple(c for i, c in EXPECTED.items() if i not in (2, 3, 18) and c != "mrn")
    roles = Roles(
        quasi_identifiers=("zip", "birth_date", "age", "sex"),
        direct_identifiers=(*direct, "mrn"),
        record_id="subject_code",
    )
    recipe = Recipe(
        roles,
        (
            ZipToThreeDigits("zip"),
            DateReduce("birth_date", to="year-month"),
            HmacPseudonym("mrn"),
            RandomPseudonym("subject_code", released_as="study_id"),
        ),
    )
    status = {entry.item: entry for entry in release_status(screen, recipe)}
    assert len(status) == 18
    assert status[2].status == STATUS_MET
    assert status[3].status == STATUS_NOT_MET  # year-month is finer than a year; age unmasked
    assert any("released unchanged" in t for t in status[3].treatments)
    assert status[8].status == STATUS_DERIVED  # a keyed hash is a derived code
    assert status[18].status == STATUS_MET  # a random code, not derived from the identifier
    assert status[6].status == STATUS_MET and status[6].treatments == ("email: dropped",)
    empty = screen_safe_harbor(frame[["dose", "sex"]])
    assert {e.status for e in release_status(empty, Recipe())} == {STATUS_NOT_FOUND}
    assert len(ITEMS) == 18 and "random sample" in WHY_NOT_ENOUGH


def test_the_screen_reads_a_sample_of_a_large_file():
    n = 1_000_000
    frame = pd.DataFrame(
        {"c1": np.where(np.arange(n) % 2 == 0, "a@b.org", "x"), "v": np.arange(n) % 7}
    )
    screen = screen_safe_harbor(frame)
    assert screen.sample_size == 2000
    (finding,) = screen.findings
    assert finding.item == 6 and "2,000 sampled" in finding.evidence


# ---------------------------------------------------------------------------- ZIP codes
def test_zip_codes_to_three_digits_with_the_restricted_prefixes_as_000():
    assert len(RESTRICTED_ZIP3) == 17
    zips = pd.Series(["02134", "90210-1234", " 10001 ", None, *(p + "01" for p in RESTRICTED_ZIP3)])
    out = ZipToThreeDigits("zip").apply(zips)
    assert out.tolist()[:4] == ["021", "902", "100", None]
    assert set(out.tolist()[4:]) == {"000"}
    numbers = pd.Series([2134, 90210, 5901, np.nan])  # leading zeros lost when read as numbers
    assert ZipToThreeDigits("zip").apply(numbers).tolist() == ["021", "902", "000", None]


def test_zip_codes_that_are_not_zip_codes_are_counted_not_quoted():
    with pytest.raises(RecipeError, match="2 entries that are not 5-digit ZIP codes") as error:
        ZipToThreeDigits("zip").apply(pd.Series(["02134", "SW1A 1AA", "1234"]))
    assert "SW1A" not in str(error.value)
