"""Smoothing page: kernel smoothing controls, live risk and utility, and the profile."""

from app_helpers import assert_clean, goto, metric_value, texts

from deid_core.masking import KernelSmooth


def load_point_source(app):
    goto(app, "data")
    app.selectbox(key="data.demo_choice").set_value("point_source").run()
    next(b for b in app.button if b.label in ("Use this demo", "Reload this demo")).click().run()
    assert_clean(app)
    goto(app, "smoothing")


def smoothing_steps(app):
    recipe = app.session_state["deid.recipe"]
    return [s for s in recipe.steps if isinstance(s, KernelSmooth)]


def test_point_source_demo_starts_smoothed_with_live_figures(app):
    load_point_source(app)
    steps = smoothing_steps(app)
    assert {s.column for s in steps} == {"exposure", "cases"}
    assert {(s.kernel, s.bandwidth) for s in steps} == {("exponential", 0.05)}
    share = metric_value(app.main, "Expected correct matches")
    assert share.endswith("%") and 0 < float(share[:-1]) < 20
    ap = float(metric_value(app.main, "Analysis potential"))
    assert 0 < ap < 1
    # The coordinates and the pattern are withheld by the demo, so no warning about them.
    assert not any("released unchanged" in w for w in texts(app.warning))


def test_bandwidth_zero_releases_the_original_values(app):
    load_point_source(app)
    slider = next(s for s in app.slider if ".bandwidth." in s.key)
    slider.set_value(0.0).run()
    assert_clean(app)
    assert {s.bandwidth for s in smoothing_steps(app)} == {0.0}
    assert metric_value(app.main, "Analysis potential") == "1.000"
    assert metric_value(app.main, "Expected correct matches") == "99.8%"


def test_changing_kernel_and_variables_rewrites_the_recipe(app):
    load_point_source(app)
    next(s for s in app.selectbox if s.key.endswith(".kernel")).set_value("prior").run()
    assert_clean(app)
    steps = smoothing_steps(app)
    assert {(s.kernel, s.pattern, s.spatial_weight) for s in steps} == {
        ("prior", "dist_to_source", 1.0)
    }
    next(m for m in app.multiselect if m.key.endswith(".variables")).set_value([]).run()
    assert_clean(app)
    assert smoothing_steps(app) == []


def test_profile_shows_the_prior_kernel_with_lower_mse_and_higher_risk(app):
    load_point_source(app)
    app.slider(key="smooth.profile.points").set_value(4)
    next(b for b in app.button if b.label == "Draw the profile").click().run()
    assert_clean(app)
    table = app.dataframe[-1].value
    assert set(table["form"]) == {"exponential", "prior"}
    positive = table[table["value"] > 0]
    euclid = positive[positive["form"] == "exponential"].set_index("value")
    prior = positive[positive["form"] == "prior"].set_index("value")
    assert (prior["mse"] < euclid["mse"]).all()
    assert (prior["match_share"] > euclid["match_share"]).all()
    assert len(app.get("arrow_vega_lite_chart") + app.get("vega_lite_chart")) >= 4
    assert app.get("download_button")


def test_mask_page_shows_smoothed_columns_without_editing_them(app):
    load_point_source(app)
    goto(app, "mask")
    assert any("Set on the Smoothing page" in i for i in texts(app.info))
    assert {s.column for s in smoothing_steps(app)} == {"exposure", "cases"}


def test_two_step_mode_aggregates_to_grid_cells_then_smooths_the_areas(app):
    load_point_source(app)
    app.slider(key="smooth.area.cells").set_value(8)
    next(b for b in app.button if b.label == "Aggregate and use the area table").click().run()
    assert_clean(app)
    assert any("64 areas" in s for s in texts(app.success))
    workspace = app.session_state["deid.workspace"]
    assert workspace.n_records == 64
    assert (workspace.model_family, workspace.model_offset) == ("poisson", "n")
    recipe = app.session_state["deid.recipe"]
    assert (recipe.roles.exposure, recipe.roles.outcome) == ("exposure_mean", "cases")
    # Step 2: smooth the areas over their centroids (the locations the table carries).
    locations = next(m for m in app.multiselect if m.key.endswith(".locations"))
    assert locations.value == ["x", "y"]
    assert {s.column for s in smoothing_steps(app)} == {"exposure_mean", "cases"}
    assert 0 < float(metric_value(app.main, "Analysis potential")) <= 1.5


def test_areas_demo_smooths_counts_within_groups(app):
    goto(app, "data")
    app.selectbox(key="data.demo_choice").set_value("areas").run()
    next(b for b in app.button if b.label in ("Use this demo", "Reload this demo")).click().run()
    goto(app, "smoothing")
    steps = smoothing_steps(app)
    assert {(s.column, s.within) for s in steps} == {("deaths", "group"), ("population", "group")}
    assert next(s for s in app.selectbox if s.key.endswith(".within")).value == "group"
    known = next(m for m in app.multiselect if m.key == "smooth.known")
    assert known.value == ["group", "population"]
    # The group indicator stays exact, so the log odds ratio barely moves at 1 km.
    assert float(metric_value(app.main, "Analysis potential")) > 0.9
    share = float(metric_value(app.main, "Expected correct matches").rstrip("%"))
    assert share < 5
