"""Direct identifiers in the dashboard: the Safe Harbor screen on the Data page, k counted in
people, and a keyed-hash study ID with its key and crosswalk on the Export page."""

import hashlib
import hmac
import io

import numpy as np
import pandas as pd
import pytest
from app_helpers import assert_clean, goto, metric_value, page_cache, texts

from deid_core.io.export import read_back
from deid_core.io.safe_harbor import WHY_NOT_ENOUGH

N_PEOPLE = 150


def visits_csv() -> bytes:
    """Two visits per person: a medical record number, e-mail, date of birth, ZIP code."""
    rng = np.random.default_rng(3)
    people = pd.DataFrame(
        {
            "mrn": [f"MRN{100000 + i}" for i in range(N_PEOPLE)],
            "email": [f"person{i}@clinic.example" for i in range(N_PEOPLE)],
            "dob": [
                str(pd.Timestamp("1940-01-01") + pd.Timedelta(days=int(d)))[:10]
                for d in rng.integers(0, 25_000, N_PEOPLE)
            ],
            "zip": rng.choice(["02134", "03601", "90210", "10001"], N_PEOPLE),
            "sex": rng.choice(["F", "M"], N_PEOPLE),
        }
    )
    rows = pd.concat([people.assign(visit=1), people.assign(visit=2)]).sort_values("mrn")
    rows["sbp"] = rng.normal(130, 15, len(rows)).round()
    return rows.to_csv(index=False).encode()


@pytest.fixture
def visits_app(app):
    goto(app, "data")
    app.file_uploader(key="data.upload").upload("visits.csv", visits_csv(), "text/csv")
    app.run()
    assert_clean(app)
    assert app.session_state["deid.dataset"].name == "visits.csv"
    return app


def screen_table(app) -> pd.DataFrame:
    tables = [d.value for d in app.dataframe if "Suggested action" in d.value.columns]
    assert tables, "no Safe Harbor table"
    return tables[0]


def test_the_data_page_screens_the_18_items(visits_app):
    table = screen_table(visits_app)
    assert table["Item"].tolist() == list(range(1, 19))
    found = dict(zip(table["Item"], table["Columns"], strict=True))
    assert found[2] == "zip" and found[3] == "dob" and found[6] == "email"
    assert "mrn" in found[8] and "mrn" in found[18]
    statuses = dict(zip(table["Item"], table["Status"], strict=True))
    assert statuses[1] == "not found" and statuses[7] == "not found"
    assert any(WHY_NOT_ENOUGH[:60] in t for t in texts(visits_app.info))
    assert any("300 rows of 150 people" in t for t in texts(visits_app.info))
    roles = visits_app.session_state["deid.recipe"].roles
    assert roles.record_id == "mrn" and "email" in roles.direct_identifiers
    assert {"dob", "zip", "sex"} <= set(roles.quasi_identifiers)


def test_the_sidebar_counts_people(visits_app):
    assert metric_value(visits_app.sidebar, "People") == f"{N_PEOPLE:,}"
    summary_k = visits_app.sidebar
    assert metric_value(summary_k, "k") == "1"


def test_applying_the_screens_suggestions_adds_the_masking(visits_app):
    visits_app.button(key="data.safe_harbor.apply").click().run()
    assert_clean(visits_app)
    recipe = visits_app.session_state["deid.recipe"]
    methods = {s.column: s.method for s in recipe.steps}
    assert methods == {"dob": "date_reduce", "zip": "zip3"}


def test_a_keyed_hash_study_id_with_its_key_and_crosswalk(visits_app):
    app = goto(visits_app, "export")
    treatment = next(s for s in app.selectbox if s.key.endswith("pseudonym.mrn.treatment"))
    treatment.set_value("hmac").run()
    assert_clean(app)
    assert any("A key is needed" in w for w in texts(app.warning))
    app.button(key="export.key.generate").click().run()
    assert_clean(app)
    key = app.session_state["deid.pseudonym_key"]
    secret = key.hex()
    assert any(c.value == secret for c in app.code)  # shown until the user stores it
    buttons = app.get("download_button")
    labels = [b.label for b in buttons]
    assert "Download the key" in labels
    assert any(label.startswith("Download the crosswalk") for label in labels)
    # the key and the crosswalk are made at the click, never served from a lasting URL
    assert all(b.proto.deferred_file_id and not b.proto.url for b in buttons)
    held = app.session_state["deid.downloads"]
    assert held["export.key"].key == key
    app.button(key="export.prepare").click().run()
    assert "Download the masked data (CSV)" in [b.label for b in app.get("download_button")]
    exports = page_cache(app, "export_file")
    released = read_back(exports[-1].data, "csv")
    assert "mrn" not in released.columns and "email" not in released.columns
    per_person = released.groupby("study_id")["visit"].count()
    assert len(per_person) == N_PEOPLE and (per_person == 2).all()
    expected = {
        hmac.new(key, f"MRN{100000 + i}".encode(), hashlib.sha256).hexdigest()[:16]
        for i in range(N_PEOPLE)
    }
    assert set(released["study_id"]) == expected
    _, release = page_cache(app, "release")[-1]
    assert len(release.crosswalk) == N_PEOPLE
    recipe_json = next(c.value for c in app.code if '"schema_version"' in c.value)
    assert '"hmac_pseudonym"' in recipe_json and secret not in recipe_json
    for blob in (exports[-1].data, release.crosswalk.to_csv().encode()):
        assert secret.encode() not in blob and key not in blob
    app.button(key="export.key.stored").click().run()
    assert_clean(app)
    assert not any(c.value == secret for c in app.code)  # never shown again
    assert "Download the key" not in [b.label for b in app.get("download_button")]
    assert "export.key" not in app.session_state["deid.downloads"]  # the key is let go


def test_a_random_study_id_keeps_people_together(visits_app):
    app = goto(visits_app, "export")
    treatment = next(s for s in app.selectbox if s.key.endswith("pseudonym.mrn.treatment"))
    treatment.set_value("random").run()
    assert_clean(app)
    _, release = page_cache(app, "release")[-1]
    frame = release.frame
    assert frame.groupby("study_id").size().eq(2).all()
    lookup = dict(zip(release.crosswalk["pseudonym"], release.crosswalk["original"], strict=True))
    source = pd.read_csv(io.BytesIO(visits_csv()))
    assert sorted(frame["study_id"].map(lookup)) == sorted(source["mrn"])


def test_zip_codes_can_be_cut_to_three_digits_on_the_mask_page(visits_app):
    app = goto(visits_app, "mask")
    chooser = next(s for s in app.selectbox if s.key.endswith("zip:method"))
    assert "zip3" in chooser.options or "ZIP code to 3 digits (Safe Harbor)" in chooser.options
    chooser.set_value("zip3").run()
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    assert [s.method for s in recipe.steps_for("zip")] == ["zip3"]
