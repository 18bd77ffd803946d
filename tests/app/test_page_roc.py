"""ROC release page: the Matthews & Harel attack on a published curve, and its mitigations."""

from app_helpers import assert_clean, goto, metric_value, texts

from dashboard.state import KEY_SEED


def load_demo(app, key):
    goto(app, "data")
    app.selectbox(key="data.demo_choice").set_value(key).run()
    next(b for b in app.button if b.label in ("Use this demo", "Reload this demo")).click().run()
    assert_clean(app)
    goto(app, "roc")


def test_seed_example_recovers_the_missing_record(app):
    load_demo(app, "roc_example")
    # The demo's flag column says which nine records the intruder knows.
    assert next(r for r in app.radio if r.key.endswith(".known_mode")).value == "A flag column"
    assert metric_value(app.main, "Statuses recovered") == "100%"
    assert metric_value(app.main, "Pinned to a rank") == "100%"
    assert metric_value(app.main, "AUC published") == "0.8000"
    (row,) = app.dataframe[0].value.to_dict("records")
    assert (row["true_score"], row["true_status"], row["recovered_status"]) == (0.61, 1, 1)
    assert (row["interval_low"], row["interval_high"]) == (0.53, 1.05)
    assert len(app.get("arrow_vega_lite_chart") + app.get("vega_lite_chart")) >= 1


def test_mitigations_lower_the_risk_at_a_small_auc_cost(app):
    app.session_state[KEY_SEED] = 20240611  # which 10 records are unknown (the session's seed)
    load_demo(app, "diagnostic_test")
    full_share = int(metric_value(app.main, "Statuses recovered").rstrip("%"))
    assert full_share >= 50  # most statuses are given away by the full curve
    app.selectbox(key="roc.publish").set_value("binormal").run()
    assert_clean(app)
    assert metric_value(app.main, "Pinned to a rank") == "0%"
    app.toggle(key="roc.compare").set_value(True).run()
    assert_clean(app)
    table = app.dataframe[-1].value
    full = table.iloc[0]
    assert full["published"].startswith("all ")
    assert full["share_status_recovered"] == full_share / 100
    assert (table["share_status_recovered"] <= full["share_status_recovered"]).all()
    assert (table["auc_change"].abs() < 0.05).all()
    smoothed = table[table["binormal"]].iloc[0]
    assert smoothed["share_pinned"] == 0.0


def test_too_large_a_data_set_gets_a_message_not_a_traceback(app):
    goto(app, "roc")  # the 16,000-person cohort: a 1,000-record subsample by default
    assert not texts(app.error)
    audited = next(n for n in app.number_input if n.label.startswith("Records audited"))
    audited.set_value(16_000)  # every record, and a score with a threshold per record:
    next(s for s in app.selectbox if s.label == "Test score").set_value("stomach_dose_gy").run()
    assert_clean(app)
    assert any("too many possibilities" in e for e in texts(app.error))
