"""The entry point: first visit, default page, sidebar strip."""

from app_helpers import APP, TIMEOUT, assert_clean, goto, metric_value
from streamlit.testing.v1 import AppTest

SIDEBAR_METRICS = (
    "Records",
    "k",
    "Uniques",
    "Max risk",
    "Average risk",
    "Anonymity",
    "Analysis potential",
)


def test_first_visit_loads_the_synthetic_cohort_on_the_mask_page(app):
    assert [t.value for t in app.title] == ["Mask"]
    assert any("Synthetic radiation cohort" in m.value for m in app.sidebar.markdown)
    assert metric_value(app.sidebar, "Records") == "16,000"
    # the default recipe: dose to 2 significant digits, ages in 5-year intervals (midpoints)
    digits = [s for s in app.slider if s.label.startswith("Significant digits for ")]
    assert len(digits) == 1 and digits[0].value == 2
    widths = [s for s in app.select_slider if s.label.startswith("Interval width for ")]
    assert [s.value for s in widths] == [5.0, 5.0]
    # each control's label, hence its accessible name, names its column
    assert len({s.label for s in widths}) == 2


def test_sidebar_strip_shows_every_metric_with_help(app):
    for label in SIDEBAR_METRICS:
        metric_value(app.sidebar, label)
    for m in app.sidebar.metric:
        assert m.help and len(m.help) > 30, m.label
    assert metric_value(app.sidebar, "k") == "1"
    assert float(metric_value(app.sidebar, "Max risk")) == 1.0
    assert 0 < float(metric_value(app.sidebar, "Average risk")) < 1
    assert 0 < float(metric_value(app.sidebar, "Analysis potential")) < 2
    verdicts = [e.value for e in app.sidebar.warning] + [s.value for s in app.sidebar.success]
    assert any("above the threshold by" in v.lower() for v in verdicts), verdicts


def test_threshold_setting_changes_the_verdict(app):
    select = app.sidebar.selectbox(key="deid.w.cell_size_choice")
    assert select.value == 5
    select.set_value(3).run()
    assert_clean(app)
    assert any("0.33" in c.value for c in app.sidebar.caption)
    assert any("Above the threshold by 0.667" in e.value for e in app.sidebar.warning)
    # A custom minimum cell size: 25 gives the threshold 1/25 = 0.04.
    app.sidebar.selectbox(key="deid.w.cell_size_choice").set_value(0).run()
    app.sidebar.number_input(key="deid.w.custom_cell_size").set_value(25).run()
    assert_clean(app)
    assert any("0.04 (minimum cell size 25)" in c.value for c in app.sidebar.caption)
    assert any("Above the threshold by 0.960" in e.value for e in app.sidebar.warning)


def test_every_page_runs_and_keeps_the_sidebar(app):
    for page in ("data", "mask", "risk", "utility", "rumap", "export"):
        goto(app, page)
        metric_value(app.sidebar, "Average risk")


def test_session_seed_is_drawn_once():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    seed = at.session_state["deid.seed"]
    at.run()
    assert at.session_state["deid.seed"] == seed


def test_every_demo_runs_on_every_page(app):
    for demo in ("flchain", "el_emam", "cohort"):
        goto(app, "data")
        app.selectbox(key="data.demo_choice").set_value(demo).run()
        next(b for b in app.button if b.label in ("Use this demo", "Reload this demo")).click()
        app.run()
        assert_clean(app)
        for page in ("mask", "risk", "utility", "rumap", "export"):
            goto(app, page)
            metric_value(app.sidebar, "k")


def test_config_keeps_the_data_private():
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(APP).parent / ".streamlit" / "config.toml").read_text())
    assert config["browser"]["gatherUsageStats"] is False
    assert config["server"]["enableXsrfProtection"] is True
    assert 0 < config["server"]["maxUploadSize"] <= 200
    assert config["client"]["showErrorDetails"] == "none"


def test_non_public_context_judges_the_worst_scenario(app):
    from dashboard import state

    app.radio(key=state.setting_widget_key("release_context")).set_value("non_public").run()
    assert_clean(app)
    for name in state.SCENARIOS:
        assert app.number_input(key=state.setting_widget_key(name)).value is not None
    verdicts = [e.value for e in app.sidebar.warning] + [s.value for s in app.sidebar.success]
    # The demo has uniques, so the strict average is the maximum (1); the largest default
    # probability is the deliberate attempt's 0.3 (breach 0.27, acquaintance 0.1).
    assert any("overall risk (deliberate scenario) 0.300" in v for v in verdicts), verdicts
    app.number_input(key=state.setting_widget_key("pr_breach")).set_value(0.1).run()
    app.number_input(key=state.setting_widget_key("pr_attempt")).set_value(0.15).run()
    verdicts = [e.value for e in app.sidebar.warning] + [s.value for s in app.sidebar.success]
    assert any("overall risk (deliberate scenario) 0.150" in v for v in verdicts), verdicts
    assert any("Meets the threshold" in v for v in verdicts), verdicts
