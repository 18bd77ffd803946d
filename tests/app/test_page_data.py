"""Data page: demos with their provenance, uploads, the column profile and the roles editor."""

from app_helpers import assert_clean, goto, metric_value, no_events_frame, texts


def load_demo(at, key):
    at.selectbox(key="data.demo_choice").set_value(key).run()
    assert_clean(at)
    next(b for b in at.button if b.label in ("Use this demo", "Reload this demo")).click().run()
    assert_clean(at)
    return at


def submit(at):
    """Press 'Apply roles' (form values are sent with the submit, as in a browser)."""
    next(b for b in at.button if b.label == "Apply roles").click().run()


def test_demo_shows_description_attribution_licence_and_synthetic_label(app):
    goto(app, "data")
    body = " ".join(texts(app.main.markdown))
    assert "Source and attribution:" in body and "Licence:" in body
    assert "Synthetic data" in body
    assert any("Synthetic data" in i for i in texts(app.info))
    assert len(app.dataframe) >= 2  # preview and column profile


def test_switching_demos_replaces_the_data_and_keeps_the_label_honest(app):
    goto(app, "data")
    load_demo(app, "el_emam")
    assert any("El Emam" in m for m in texts(app.sidebar.markdown))
    assert any("Synthetic data" in m for m in texts(app.sidebar.markdown))
    assert metric_value(app.sidebar, "Records") == "27"
    # El Emam & Malin: sex and year of birth give average risk 16/27
    assert metric_value(app.sidebar, "Average risk") == f"{16 / 27:.3f}"
    assert any("Loaded the demo" in s for s in texts(app.success))

    load_demo(app, "flchain")
    assert metric_value(app.sidebar, "Records") == "7,874"
    assert not any("Synthetic data" in m for m in texts(app.sidebar.markdown))
    assert not any("Synthetic data" in i for i in texts(app.info))
    assert any("Real data" in m for m in texts(app.main.markdown))


def test_no_model_demo_says_utility_is_unavailable(app):
    goto(app, "data")
    load_demo(app, "el_emam")
    assert metric_value(app.sidebar, "Analysis potential") == "unavailable"
    assert any("No model" in c for c in texts(app.sidebar.caption))


def test_upload_with_no_events_loads_and_explains(app):
    frame = no_events_frame(200, seed=3)
    goto(app, "data")
    app.file_uploader[0].upload("no_events.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    assert_clean(app)
    assert any("no events" in e for e in texts(app.error))
    assert metric_value(app.sidebar, "Records") == "200"
    assert metric_value(app.sidebar, "Analysis potential") == "unavailable"
    assert not any("Synthetic data" in m for m in texts(app.sidebar.markdown))


def test_malformed_upload_keeps_the_current_data_and_says_why(app):
    goto(app, "data")
    app.file_uploader[0].upload("bad.csv", b"a,b\n1,2\n3,4,5,6\n", "text/csv")
    app.run()
    assert_clean(app)
    assert any("was not loaded" in e and "line 3" in e for e in texts(app.error))
    assert metric_value(app.sidebar, "Records") == "16,000"


def test_applying_roles_updates_the_recipe_and_keeps_steps(app):
    goto(app, "data")
    app.multiselect(key="roles.1.qi").unselect("city")
    submit(app)
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    assert "city" not in recipe.roles.quasi_identifiers
    assert recipe.steps_for("stomach_dose_gy")  # the masking survives
    assert any("Roles applied" in s for s in texts(app.success))


def test_conflicting_roles_are_an_error_not_a_traceback(app):
    goto(app, "data")
    app.selectbox(key="roles.1.record_id").set_value("city")
    submit(app)
    assert_clean(app)
    assert any("cannot also be released" in e for e in texts(app.error))
    assert app.session_state["deid.recipe"].roles.record_id == "person_id"
