"""The release link in the running app: the custodian makes it on the Export page from an
identifiable visits file; a recipient opening it sees the release described without any upload
(and nothing of the source's names), then loads the exported file (recognised by its SHA-256,
its risk counted, their model fitted beside the custodian's) or an altered one (told what
differs)."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import app_helpers  # noqa: F401  (puts the repository on sys.path)
import pandas as pd
import pytest
from app_helpers import APP, TIMEOUT, assert_clean, goto, page_cache, shown, texts
from release_files import RECIPE, SOURCE_ONLY, visits_csv
from streamlit.testing.v1 import AppTest

from dashboard.release_view import KEY_FIT, MATCHES
from deid_core.release_summary import (
    RELEASE_PARAM,
    ClassFigures,
    Estimate,
    ReleaseSummary,
    VerdictSummary,
    decode_release,
    encode_release,
)
from deid_core.share import configuration_json
from deid_core.utility import ModelSpec
from deid_core.utility.models import fit_model


@pytest.fixture(scope="module")
def custodian() -> tuple[str, bytes]:
    """The release link and the masked file as the custodian's Export page makes them."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    goto(at, "data")
    at.file_uploader(key="data.upload").upload("visits.csv", visits_csv(), "text/csv")
    at.run()
    assert_clean(at)
    at.file_uploader(key="data.recipe_upload").upload(
        "recipe.json", configuration_json(RECIPE).encode(), "application/json"
    )
    at.run()
    assert_clean(at)
    goto(at, "export")
    before = [c.value for c in at.code if f"?{RELEASE_PARAM}=" in c.value]
    assert not before  # the link describes a built report
    assert any("Configuration link" in t and "same source file" in t for t in texts(at.markdown))
    at.button(key="export.build_report").click().run()
    assert_clean(at)
    links = [c.value for c in at.code if f"?{RELEASE_PARAM}=" in c.value]
    assert len(links) == 1
    (exported,) = page_cache(at, "export_file")
    return links[0], exported.data


def _open(link: str) -> AppTest:
    (param,) = parse_qs(urlsplit(link).query)[RELEASE_PARAM]
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[RELEASE_PARAM] = param
    at.run()
    assert_clean(at)
    return at


def _source_names_in(text: str) -> list[str]:
    """The source-only column names (as words) and source values found in ``text``."""
    found = [n for n in SOURCE_ONLY if re.search(rf"\b{n}\b", text)]
    return found + [v for v in ("Patient ", "MRN7") if v in text]


def _page_text(at: AppTest) -> str:
    parts = [
        shown(e.value)
        for kind in ("markdown", "caption", "success", "warning", "error")
        for e in getattr(at, kind)
    ]
    parts += [c.value for c in at.code]
    parts += [frame.value.to_csv() for frame in at.dataframe]
    return "\n".join(parts)


def test_the_link_describes_the_release_and_nothing_of_the_source(custodian):
    link, data = custodian
    summary = decode_release(parse_qs(urlsplit(link).query)[RELEASE_PARAM][0])
    assert summary.columns == tuple(pd.read_csv(pd.io.common.BytesIO(data)).columns)
    assert "study_id" in summary.columns and summary.removed == 3
    assert _source_names_in(json.dumps(summary.to_dict())) == []


def test_the_recipient_sees_the_release_without_any_upload(custodian):
    link = custodian[0]
    at = _open(link)
    assert "deid.dataset" not in at.session_state  # no demo loaded, nothing asked for
    text = _page_text(at)
    assert "A release shared with you" in [shown(t.value) for t in at.title]
    assert "3 column(s) of the source file were removed" in text
    assert "study_id: pseudonyms in place of a removed identifier" in text
    assert "maximum risk" in text and "public release" in text
    assert "Custodian, original data" in text and "Custodian, masked data" in text
    assert "Odds ratio per unit of length_of_stay" in text
    summary = decode_release(parse_qs(urlsplit(link).query)[RELEASE_PARAM][0])
    assert summary.sha256 in text
    assert _source_names_in(text) == []
    # The only file asked for is the masked one.
    assert [u.label for u in at.get("file_uploader")] == ["The masked file"]


def test_the_exported_file_is_recognised_and_assessed(custodian):
    link, data = custodian
    at = _open(link)
    at.file_uploader(key="release.upload").upload("visits_masked.csv", data, "text/csv")
    at.run()
    assert_clean(at)
    assert any(MATCHES in t for t in texts(at.success)), texts(at.error)
    summary = decode_release(parse_qs(urlsplit(link).query)[RELEASE_PARAM][0])
    risk, model = at.dataframe[-2].value, at.dataframe[-1].value
    mine = dict(zip(risk["Figure"], risk["Your count"], strict=True))
    theirs = dict(zip(risk["Figure"], risk["Custodian's count"], strict=True))
    assert mine == theirs  # the same file, counted the same way
    assert mine["Smallest class k"] == f"{summary.classes.k:,}"
    # The recipient's model (the custodian's by default) beside the custodian's figures.
    assert list(model["Fit"]) == [
        "Custodian, original data",
        "Custodian, masked data",
        "You, the file you loaded",
    ]
    assert model["Estimate (95% CI)"].iloc[2] == summary.model.masked.text()
    # Their own choice: no covariate.
    at.multiselect(key="release.covariates").set_value([]).run()
    assert_clean(at)
    fitted = at.dataframe[-1].value["Estimate (95% CI)"].iloc[2]
    assert fitted != summary.model.masked.text()
    assert _source_names_in(_page_text(at)) == []


def test_an_altered_file_is_not_the_release(custodian):
    link, data = custodian
    at = _open(link)
    frame = pd.read_csv(pd.io.common.BytesIO(data))
    altered = frame.iloc[:-2].to_csv(index=False).encode()
    at.file_uploader(key="release.upload").upload("visits_masked.csv", altered, "text/csv")
    at.run()
    assert_clean(at)
    errors = " ".join(texts(at.error))
    assert "This is not the release described" in errors
    assert "SHA-256" in errors and f"{len(frame) - 2:,} rows" in errors
    assert not any(MATCHES in t for t in texts(at.success))


def test_a_damaged_release_link_is_a_plain_message():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[RELEASE_PARAM] = "not-a-release"
    at.run()
    assert_clean(at)
    assert any("release link could not be read" in e for e in texts(at.error))
    at.button(key="release.leave").click().run()
    assert_clean(at)
    assert at.session_state["deid.dataset"].demo_key == "cohort"  # the whole dashboard


def test_text_from_the_link_is_shown_literally():
    hostile = "[click](https://evil.example)"
    summary = ReleaseSummary(
        columns=(hostile, "**bold**", "y"),
        removed=1,
        rows=10,
        sha256="0" * 64,
        size=100,
        file_format="CSV",
        created=":red[today]",
        software=(("deid_core", "<b>1</b>"),),
        steps=(f"{hostile}: ![img](https://evil.example/p.png)",),
        mechanism=False,
        quasi_identifiers=(hostile,),
        person_column=None,
        missing="category",
        verdict=VerdictSummary(
            True, "maximum risk", 0.1, 0.2, "records", "category", "public", "classes"
        ),
        classes=ClassFigures("records", 10, 10, 0.1, 0.1),
        model=None,
    )
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[RELEASE_PARAM] = encode_release(summary)
    at.run()
    assert_clean(at)
    bodies = [e.proto.body for kind in ("markdown", "caption") for e in getattr(at, kind)]
    joined = "\n".join(bodies)
    assert "](https://evil" not in joined and "![img]" not in joined
    assert "**bold**" not in joined and ":red[" not in joined and "<b>" not in joined
    shown_text = "\n".join(shown(b) for b in bodies)
    assert hostile in shown_text and "**bold**" in shown_text  # shown as written


def test_the_recipients_model_takes_an_event_value_and_reference_levels(custodian):
    """Their own model choices: an outcome coded with several values is turned into events
    by the value chosen (the estimate equals a fit on a hand-made 0/1 column of the same
    file), and a factor's reference level is theirs to choose (it reaches the fit, and the
    exposure's estimate does not move with it, as the model says)."""
    link, data = custodian
    at = _open(link)
    at.file_uploader(key="release.upload").upload("visits_masked.csv", data, "text/csv")
    at.run()
    frame = pd.read_csv(pd.io.common.BytesIO(data))
    year = str(int(frame["admission_date"].max()))
    at.selectbox(key="release.family").set_value("logistic").run()
    at.selectbox(key="release.outcome").set_value("admission_date").run()
    at.multiselect(key="release.covariates").set_value(["sex"]).run()
    assert_clean(at)
    at.selectbox(key="release.event").set_value(year).run()
    assert_clean(at)
    made = frame.assign(event=(frame["admission_date"] == int(year)).astype(int))
    by_hand = fit_model(made, ModelSpec("event", "length_of_stay", covariates=("sex",)))
    fitted = at.dataframe[-1].value["Estimate (95% CI)"].iloc[-1]
    assert fitted == Estimate.of(by_hand.effect(), by_hand.n).text()
    at.selectbox(key="release.reference.sex").set_value("M").run()
    assert_clean(at)
    spec = at.session_state[KEY_FIT][0]
    assert spec.references == (("sex", "M"),) and spec.event == year
    assert at.dataframe[-1].value["Estimate (95% CI)"].iloc[-1] == fitted
