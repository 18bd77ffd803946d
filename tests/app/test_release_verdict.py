"""One verdict on every page (issue 27): a hospital-visits file with several visits per patient,
local suppression, the release context asked on first use, and Safe Harbor's unmet items in the
verdict. The figures are the per-person figures of the exported file."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from app_helpers import assert_clean, goto, metric_value, texts

from deid_core.masking import DateReduce, IntervalGroup, LocalSuppression
from deid_core.recipe import Recipe, Roles
from deid_core.risk.release import ReleasedKeys, class_risk
from deid_core.share import configuration_json
from deid_core.workspace import Workspace

VERDICT_START = ("Meets the threshold", "Above the threshold", "Risk within")


def visits(seed: int = 7) -> pd.DataFrame:
    """About 420 visits of 200 patients (MRN, date of birth, admission date, ZIP, sex, age)."""
    rng = np.random.default_rng(seed)
    n_people = 200
    per_person = rng.choice([1, 2, 3, 4], n_people)
    rows = []
    for i in range(n_people):
        sex, zip5 = rng.choice(["F", "M"]), f"{rng.integers(10010, 10060)}"
        born = 1930 + int(rng.integers(0, 70))
        for v in range(per_person[i]):
            year = 2018 + int(rng.integers(0, 5))
            rows.append(
                {
                    "mrn": f"M{1000 + i}",
                    "admission_date": f"{year}-{1 + v % 12:02d}-15",
                    "zip": zip5,
                    "sex": sex,
                    "age": year - born,
                    "outcome": int(rng.random() < 0.2),
                }
            )
    return pd.DataFrame(rows)


def verdicts(app) -> list[str]:
    found = texts(app.warning) + texts(app.success)
    return [t for t in found if t.startswith(VERDICT_START)]


@pytest.fixture
def loaded(app):
    frame = visits()
    goto(app, "data")
    app.file_uploader[0].upload("visits.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    assert_clean(app)
    roles = Roles(
        quasi_identifiers=("admission_date", "zip", "sex", "age"),
        record_id="mrn",
        exposure="sex",
        outcome="outcome",
    )
    recipe = Recipe(
        roles,
        (DateReduce("admission_date", "year"), IntervalGroup("age", width=10)),
        data_steps=(LocalSuppression(k=3),),
    )
    text = configuration_json(recipe)  # no context: the user has not chosen one
    app.file_uploader(key="data.recipe_upload").upload("r.json", text.encode(), "application/json")
    app.run()
    assert_clean(app)
    return app, frame


def test_the_context_is_asked_and_every_page_shows_the_same_verdict(loaded):
    app, _ = loaded
    # First use: the question is asked, and until it is answered the verdict says it judged
    # the release as public (the strictest).
    assert app.radio(key="deid.w.first_context")
    assert all("not chosen yet" in v for v in verdicts(app))
    app.radio(key="deid.w.first_context").set_value("non_public")
    next(b for b in app.button if b.label == "Use this release context").click().run()
    assert_clean(app)
    assert app.session_state["deid.settings"]["release_context"] == "non_public"
    assert not any("not chosen yet" in v for v in verdicts(app))
    seen = {}
    for page in ("mask", "risk", "rumap", "uniqueness", "export"):
        goto(app, page)
        found = set(verdicts(app))
        assert found, page
        seen[page] = found
    one = set.union(*seen.values())
    assert len(one) == 1, seen  # the strip and every page: one verdict, word for word
    (text,) = one
    assert "per person" in text and "shared under a data-use agreement" in text


def test_the_strip_counts_people_as_the_exported_file_does(loaded):
    app, frame = loaded
    goto(app, "mask")
    classes_k = int(metric_value(app.sidebar, "k"))
    people = int(metric_value(app.sidebar, "People").replace(",", ""))
    assert people == frame["mrn"].nunique()
    # The exported file (record id kept), read back: the same people and the same k.
    recipe = app.session_state["deid.recipe"]
    exported = Workspace(frame).release(recipe, keep_record_id=True).frame
    reread = pd.read_csv(io.StringIO(exported.to_csv(index=False)))
    keys = ReleasedKeys.from_frame(reread, recipe.roles.quasi_identifiers, "mrn", "wildcard")
    summary = class_risk(keys)
    assert summary.unit == "people" and summary.n_records == people
    assert summary.k == classes_k


def test_safe_harbor_items_fail_the_verdict_when_asked(loaded):
    app, _ = loaded
    app.toggle(key="deid.w.intruder_holds_source").set_value(False).run()
    app.toggle(key="deid.w.safe_harbor").set_value(True).run()
    assert_clean(app)
    (text,) = set(verdicts(app))
    assert "Safe Harbor not met" in text and "zip" in text  # 5-digit ZIP codes released


def test_no_quasi_identifier_is_not_judged_on_any_page(app):
    """With the exposure and the outcome set but no quasi-identifier, every record is in one
    class and the maximum risk is 1 / n: each page says "Not judged", never "Meets", and the
    Mask page offers no search (there is nothing to search on)."""
    frame = visits()
    goto(app, "data")
    app.file_uploader[0].upload("visits.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    roles = Roles(record_id="mrn", exposure="sex", outcome="outcome")
    text = configuration_json(Recipe(roles))
    app.file_uploader(key="data.recipe_upload").upload("r.json", text.encode(), "application/json")
    app.run()
    assert_clean(app)
    for page in ("mask", "risk", "export"):
        goto(app, page)
        assert_clean(app)
        found = [t for t in texts(app.warning) if t.startswith("Not judged")]
        assert found and all("no quasi-identifier is marked" in t for t in found), page
        assert not verdicts(app), page  # no "Meets", "Risk within" or "Above"
        assert not [t for t in texts(app.success) if "Meets" in t], page
        if page == "mask":
            assert not [b for b in app.button if b.label == "Search from this recipe"]
