"""Export page: the format chooser, row shuffling and the release report."""

from app_helpers import assert_clean, goto, page_cache, texts

from deid_core.io.export import read_back

cached = page_cache  # the page's per-session results (what the download buttons were given)


def latest_export(app):
    files = cached(app, "export_file")
    assert files, "no export was built"
    return files[-1]


def prepare(app):
    app.button(key="export.prepare").click().run()
    assert_clean(app)
    return latest_export(app)


def download_labels(app) -> list[str]:
    return [b.label for b in app.get("download_button")]


def test_the_file_is_built_only_when_asked_for_and_downloads_are_deferred(app):
    goto(app, "export")
    assert not cached(app, "export_file")
    assert "Download the masked data (CSV)" not in download_labels(app)
    app.checkbox(key="export.shuffle").uncheck().run()  # a rerun builds nothing either
    assert not cached(app, "export_file")
    prepare(app)
    assert "Download the masked data (CSV)" in download_labels(app)
    buttons = app.get("download_button")
    assert buttons and all(b.proto.deferred_file_id and not b.proto.url for b in buttons)


def test_format_chooser_gives_the_matching_download(app):
    goto(app, "export")
    chooser = app.selectbox(key="export.format")
    assert chooser.value == "csv"
    assert app.checkbox(key="export.shuffle").value is True
    assert app.checkbox(key="export.neutralise").value is True
    for fmt, label in (("xlsx", "Excel"), ("parquet", "Parquet"), ("dta", "Stata")):
        app.selectbox(key="export.format").set_value(fmt).run()
        exported = prepare(app)
        assert f"Download the masked data ({label})" in download_labels(app)
        assert exported.format.key == fmt
        back = read_back(exported.data, fmt)
        assert "person_id" not in back.columns
        assert len(back) == 16_000
        assert app.checkbox(key="export.neutralise").disabled is (fmt not in ("csv", "xlsx"))


def test_shuffling_is_on_by_default_and_can_be_turned_off(app):
    goto(app, "export")
    shuffled = read_back(prepare(app).data, "csv")
    app.checkbox(key="export.shuffle").uncheck().run()
    assert_clean(app)
    ordered = read_back(prepare(app).data, "csv")
    assert not shuffled.equals(ordered)
    assert len(shuffled) == len(ordered)
    assert sorted(shuffled["stomach_dose_gy"]) == sorted(ordered["stomach_dose_gy"])


def test_spreadsheet_formulas_are_neutralised_unless_the_box_is_unticked(app):
    goto(app, "data")
    hostile = '=HYPERLINK("http://example.org")'
    content = (
        f"id,sex,age,{hostile}\n" + "".join(f"{i},F,{30 + i % 40},@cmd{i % 3}\n" for i in range(60))
    ).encode()
    app.file_uploader[0].upload("hostile.csv", content, "text/csv")
    app.run()
    assert_clean(app)
    goto(app, "export")
    exported = prepare(app)
    back = read_back(exported.data, "csv")
    assert "'" + hostile in back.columns and hostile not in back.columns
    assert set(back["'" + hostile]) == {"'@cmd0", "'@cmd1", "'@cmd2"}
    assert any("now start with '" in c for c in texts(app.caption))
    app.checkbox(key="export.neutralise").uncheck().run()
    raw = read_back(prepare(app).data, "csv")
    assert hostile in raw.columns and set(raw[hostile]) == {"@cmd0", "@cmd1", "@cmd2"}


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
    labels = download_labels(app)
    assert "Download the report (PDF)" not in labels
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    labels = download_labels(app)
    assert "Download the report (HTML)" in labels
    assert "Download the report (PDF)" in labels
    (built,) = cached(app, "report")
    assert built.pdf.startswith(b"%PDF")
    assert '<img src="data:image/svg+xml;base64,' in built.html
    assert "rounded to 2 significant digit(s)" in built.html
    # A rerun (e.g. another widget) keeps the report without rebuilding it.
    app.checkbox(key="export.seeds").check().run()
    assert "Download the report (PDF)" in [b.label for b in app.get("download_button")]
    # A setting of the released file asks for a new report (the old one hashed another file).
    app.checkbox(key="export.shuffle").uncheck().run()
    assert "Download the report (PDF)" not in [b.label for b in app.get("download_button")]


def test_report_carries_the_open_data_risk_set_on_the_risk_page(app):
    from dashboard import state

    goto(app, "export")
    app.button(key="export.build_report").click().run()
    (closed,) = cached(app, "report")
    assert "Not assessed" in closed.html
    goto(app, "risk")
    app.toggle(key="risk.is_sample").set_value(True).run()
    app.number_input(key="risk.sampling_fraction").set_value(0.05).run()
    app.selectbox(key=state.setting_widget_key("bf_method")).set_value("sdcmicro").run()
    goto(app, "export")
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    html = cached(app, "report")[-1].html
    assert "Expected re-identifications" in html
    assert "sampling fraction 0.05" in html
    assert "sdcMicro&#x27;s default approximation" in html


def test_the_html_report_is_offered_when_the_pdf_cannot_be_made(app, monkeypatch):
    from deid_core.report.builder import Report

    def broken(self):
        raise RuntimeError("a value 4711 from the data")

    monkeypatch.setattr(Report, "pdf", broken)
    goto(app, "export")
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    labels = download_labels(app)
    assert "Download the report (HTML)" in labels
    assert "Download the report (PDF)" not in labels
    warnings = texts(app.warning)
    assert any("The PDF could not be made (the PDF writer failed)" in w for w in warnings)
    assert not any("4711" in w for w in warnings)
