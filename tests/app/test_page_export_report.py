"""Export page: the format chooser, row shuffling and the release report."""

from app_helpers import assert_clean, goto, texts

from deid_core.io.export import read_back
from deid_core.workspace import CacheNamespace


def cached(app, name: str) -> list:
    """The page's per-session results ``name`` (what the download buttons were given)."""
    return CacheNamespace(app.session_state["deid.workspace"].cache, f"page.{name}").values()


def latest_export(app):
    files = cached(app, "export_file")
    assert files, "no export was built"
    return files[-1]


def test_format_chooser_gives_the_matching_download(app):
    goto(app, "export")
    chooser = app.selectbox(key="export.format")
    assert chooser.value == "csv"
    assert app.checkbox(key="export.shuffle").value is True
    for fmt, label in (("xlsx", "Excel"), ("parquet", "Parquet"), ("dta", "Stata")):
        app.selectbox(key="export.format").set_value(fmt).run()
        assert_clean(app)
        labels = [b.label for b in app.get("download_button")]
        assert f"Download the masked data ({label})" in labels
        exported = latest_export(app)
        assert exported.format.key == fmt
        back = read_back(exported.data, fmt)
        assert "person_id" not in back.columns
        assert len(back) == 16_000


def test_shuffling_is_on_by_default_and_can_be_turned_off(app):
    goto(app, "export")
    shuffled = read_back(latest_export(app).data, "csv")
    app.checkbox(key="export.shuffle").uncheck().run()
    assert_clean(app)
    ordered = read_back(latest_export(app).data, "csv")
    assert not shuffled.equals(ordered)
    assert len(shuffled) == len(ordered)
    assert sorted(shuffled["stomach_dose_gy"]) == sorted(ordered["stomach_dose_gy"])


def test_report_parameters_box_is_off_and_warns_when_ticked(app):
    goto(app, "export")
    box = app.checkbox(key="export.report_params")
    assert box.value is False
    assert not any("masking parameters and the random seeds" in w for w in texts(app.warning))
    box.check().run()
    assert_clean(app)
    assert any("masking parameters and the random seeds" in w for w in texts(app.warning))


def test_building_the_report_gives_both_downloads(app):
    goto(app, "export")
    labels = [b.label for b in app.get("download_button")]
    assert "Download the report (PDF)" not in labels
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    labels = [b.label for b in app.get("download_button")]
    assert "Download the report (HTML)" in labels
    assert "Download the report (PDF)" in labels
    (built,) = cached(app, "report")
    assert built["pdf"].startswith(b"%PDF")
    assert '<img src="data:image/png;base64,' in built["html"]
    assert "rounded to 2 significant digit(s)" in built["html"]
    # A rerun (e.g. another widget) keeps the report without rebuilding it.
    app.checkbox(key="export.shuffle").uncheck().run()
    assert "Download the report (PDF)" in [b.label for b in app.get("download_button")]


def test_report_carries_the_open_data_risk_set_on_the_risk_page(app):
    from dashboard import state

    goto(app, "export")
    app.button(key="export.build_report").click().run()
    (closed,) = cached(app, "report")
    assert "Not assessed" in closed["html"]
    goto(app, "risk")
    app.toggle(key="risk.is_sample").set_value(True).run()
    app.number_input(key="risk.sampling_fraction").set_value(0.05).run()
    app.selectbox(key=state.setting_widget_key("bf_method")).set_value("sdcmicro").run()
    goto(app, "export")
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    html = cached(app, "report")[-1]["html"]
    assert "Expected re-identifications" in html
    assert "sampling fraction 0.05" in html
    assert "sdcMicro&#x27;s default approximation" in html
