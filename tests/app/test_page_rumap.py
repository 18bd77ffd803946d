"""R-U map page: a sweep with a progress bar, Cologne's theta, frontier, points table."""

from app_helpers import assert_clean, goto, metric_value, texts


def test_default_sweep_of_the_exposure_shows_theta_and_points(app):
    goto(app, "rumap")
    step = app.selectbox(key="rumap.1.step")
    assert "stomach_dose_gy" in step.format_func(step.value)
    assert metric_value(app.main, "Cologne theta") != ""
    assert any("Cologne's curve" in c or "Theta is unavailable" in c for c in texts(app.caption))
    points = app.dataframe[0].value
    assert list(points["digits"].str.slice(0, 1)) == ["1", "2", "3", "4", "5"]
    assert any("(current)" in v for v in points["digits"])
    assert float(metric_value(app.main, "Threshold line (security)")) == 0.8


def test_values_can_be_typed_and_bad_values_are_an_error(app):
    goto(app, "rumap")
    key = "rumap.1.0.digits.values"
    app.text_input(key=key).set_value("1, 2, three").run()
    assert_clean(app)
    assert any("numbers separated by commas" in e for e in texts(app.error))
    app.text_input(key=key).set_value("1.5, 2").run()
    assert any("whole numbers" in e for e in texts(app.error))
    app.text_input(key=key).set_value("1, 3").run()
    assert_clean(app)
    assert len(app.dataframe[0].value) == 2


def test_random_step_sweep_runs_on_request_and_shows_theta(app):
    next(s for s in app.selectbox if s.key.endswith("stomach_dose_gy:method")).set_value(
        "uniform_noise"
    ).run()
    goto(app, "rumap")
    app.slider(key="deid.w.replicates").set_value(5).run()
    app.text_input(key=app.text_input[0].key).set_value("0.01, 0.1, 0.5").run()
    assert "Run the sweep" in [b.label for b in app.button]
    next(b for b in app.button if b.label == "Run the sweep").click().run()
    assert_clean(app)
    theta = metric_value(app.main, "Cologne theta")
    assert theta
    assert any("averages 5 replicates" in c for c in texts(app.caption))
    assert len(app.dataframe[0].value) == 3


def test_applying_a_swept_value_changes_the_recipe(app):
    goto(app, "rumap")
    form_select = next(s for s in app.selectbox if s.label.startswith("Use a value of digits"))
    form_select.set_value(3)
    next(b for b in app.button if b.label == "Apply to the recipe").click().run()
    assert_clean(app)
    assert app.session_state["deid.recipe"].steps_for("stomach_dose_gy")[0].digits == 3
