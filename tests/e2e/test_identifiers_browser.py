"""End to end: a file with a medical record number, e-mail addresses, dates of birth, 5-digit
ZIP codes and two visits per person. The Safe Harbor screen flags each item; the record id is
released as a keyed-hash study ID; the key and the crosswalk download apart from the release;
k is counted in people; the report states each of the 18 items."""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from e2e_helpers import ANY_METRIC_VALUE_JS, ARTIFACTS, choose_option, give_file, open_page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

pytestmark = pytest.mark.e2e

N_PEOPLE = 120


def visits_csv() -> bytes:
    rng = np.random.default_rng(11)
    people = pd.DataFrame(
        {
            "mrn": [f"MRN{200000 + i}" for i in range(N_PEOPLE)],
            "email": [f"patient{i}@hospital.example" for i in range(N_PEOPLE)],
            "dob": [
                str(pd.Timestamp("1935-01-01") + pd.Timedelta(days=int(d)))[:10]
                for d in rng.integers(0, 25_000, N_PEOPLE)
            ],
            "zip": rng.choice(["02134", "03601", "90210", "10001", "60614"], N_PEOPLE),
            "sex": rng.choice(["F", "M"], N_PEOPLE),
        }
    )
    rows = pd.concat([people.assign(visit=1), people.assign(visit=2)]).sort_values("mrn")
    rows["sbp"] = rng.normal(130, 15, len(rows)).round()
    return rows.to_csv(index=False).encode()


def metric(page, label: str) -> str | None:
    return page.evaluate(ANY_METRIC_VALUE_JS, [label])


def download(page, button) -> tuple[str, bytes]:
    with page.expect_download() as info:
        button.click()
    value = info.value
    return value.suggested_filename, Path(value.path()).read_bytes()


def prepare_release(page, main):
    """Press "Prepare the masked data" until its download shows (a press that lands while the
    page is still rerunning can be lost)."""
    prepare = main.get_by_role("button", name=re.compile(r"Prepare the masked data \(CSV\)"))
    data_button = main.get_by_role("button", name=re.compile(r"Download the masked data \(CSV\)"))
    for _ in range(3):
        prepare.click()
        try:
            data_button.wait_for(timeout=40_000)
            return data_button
        except PlaywrightTimeoutError:
            continue
    page.screenshot(path=str(ARTIFACTS / "identifiers-prepare.png"), full_page=True)
    raise AssertionError("the masked data were not prepared")


def test_identifiers_from_screen_to_report(page, app_url):
    ARTIFACTS.mkdir(exist_ok=True)
    content = visits_csv()
    page.goto(f"{app_url}/data")
    page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
    main = page.get_by_test_id("stMain")
    give_file(page, "visits.csv", content, 2 * N_PEOPLE, timeout=90_000)
    # k counted in people: the sidebar counts 120 people (240 rows).
    page.wait_for_function(
        f"() => ({ANY_METRIC_VALUE_JS})(['People']) === '{N_PEOPLE:,}'", timeout=90_000
    )
    assert metric(page, "Records") == f"{2 * N_PEOPLE:,}"  # rows, beside the people

    # The Safe Harbor screen flags each item the file holds.
    main.get_by_text("HIPAA Safe Harbor screen").first.wait_for()
    table = main.get_by_test_id("stDataFrame").filter(has_text="Suggested action")
    table.wait_for()
    cells = table.evaluate(
        "e => [...e.querySelectorAll('tr[role=row]')].slice(1)"
        ".map(r => [...r.querySelectorAll('td')].map(c => c.textContent))"
    )
    rows = {row[0]: " | ".join(row) for row in cells}
    assert len(rows) == 18
    for item, column in (("2", "zip"), ("3", "dob"), ("6", "email"), ("8", "mrn"), ("18", "mrn")):
        assert "found" in rows[item] and column in rows[item], item
    for item in ("1", "4", "7", "14", "15"):
        assert "not found" in rows[item], item
    assert main.get_by_text(re.compile("Passing this screen is not the same as a low risk")).count()
    table.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "identifiers-screen.png"), full_page=True)

    # Apply the screen's suggestions: dates to the year, ZIP codes to 3 digits.
    main.get_by_role("button", name="Apply the suggested roles and masking").click()
    main.get_by_text(re.compile("Applied the Safe Harbor")).first.wait_for()

    # k in people on the Risk page too.
    open_page(page, "Risk", "risk")
    main.get_by_text("Unique people").first.wait_for()  # the summary table counts people
    main.get_by_text(re.compile(f"240 rows of {N_PEOPLE} people")).first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "identifiers-risk.png"), full_page=True)

    # Export (in the same session): the record id released as a keyed-hash study ID.
    open_page(page, "Export", "export")
    main.get_by_text("Direct identifiers and the record id").first.wait_for()
    choose_option(
        page,
        main.get_by_test_id("stSelectbox").filter(has_text="mrn (record id)"),
        "Keyed-hash pseudonym (HMAC-SHA-256)",
    )
    main.get_by_role("button", name="Generate a new key").click()
    key_button = main.get_by_role("button", name="Download the key")
    key_button.wait_for()
    key_name, key_bytes = download(page, key_button)
    key = bytes.fromhex(key_bytes.decode().strip())
    assert key_name.endswith(".key") and len(key) == 32
    page.screenshot(path=str(ARTIFACTS / "identifiers-export.png"), full_page=True)

    # The release is written when asked for; its download is apart from the key's.
    data_button = prepare_release(page, main)
    data_name, data = download(page, data_button)
    released = pd.read_csv(io.BytesIO(data), dtype={"study_id": str, "zip": str})
    assert "mrn" not in released.columns and "email" not in released.columns
    assert released["study_id"].nunique() == N_PEOPLE
    assert (released.groupby("study_id").size() == 2).all()
    expected = {
        hmac.new(key, f"MRN{200000 + i}".encode(), hashlib.sha256).hexdigest()[:16]
        for i in range(N_PEOPLE)
    }
    assert set(released["study_id"]) == expected
    assert set(released["dob"].astype(str).str.len()) == {4}  # years only
    assert set(released["zip"]) <= {"021", "000", "902", "100", "606"}

    cw_name, crosswalk = download(
        page, main.get_by_role("button", name=re.compile("Download the crosswalk"))
    )
    assert cw_name != data_name and cw_name.endswith("_crosswalk.csv")
    table = list(csv.DictReader(io.StringIO(crosswalk.decode())))
    assert len(table) == N_PEOPLE
    lookup = {row["pseudonym"]: row["original"] for row in table}
    assert sorted(released["study_id"].map(lookup)) == sorted(
        pd.read_csv(io.BytesIO(content))["mrn"]
    )
    for blob in (data, crosswalk):
        assert key.hex().encode() not in blob and key not in blob

    # The key is hidden once stored, and never shown again.
    main.get_by_role("button", name=re.compile("I have stored the key")).click()
    page.wait_for_function(
        "([secret]) => !document.body.innerText.includes(secret)", arg=[key.hex()]
    )
    assert main.get_by_role("button", name="Download the key").count() == 0
    main.get_by_text(re.compile("Key in use")).first.wait_for()

    # The report states each of the 18 items.
    main.get_by_role("button", name=re.compile("Build the report")).click()
    html_button = main.get_by_role("button", name=re.compile(r"Download the report \(HTML\)"))
    html_button.wait_for(timeout=180_000)
    _, html = download(page, html_button)
    text = html.decode()
    assert "Direct identifiers and HIPAA Safe Harbor" in text
    section = text.split("Direct identifiers and HIPAA Safe Harbor", 1)[1]
    for number in range(1, 19):
        assert re.search(rf"<t[dh][^>]*>{number}</t[dh]>", section), number  # cell or row head
    assert "met only by expert determination" in section  # the keyed hash of the MRN
    assert "not found" in section and "People" in text
    assert key.hex() not in text
    assert main.get_by_test_id("stException").count() == 0
