"""Export page: the project details for an ethics board, and the SHA-256 of the source file
and of the released file exactly as the download buttons offer them."""

import hashlib
import html

from app_helpers import assert_clean, goto, page_cache

from dashboard import state

FIELDS = {
    "title": "Project title",
    "custodian": "Data custodian",
    "recipient": "Recipient",
    "purpose": "Purpose of the release",
}


def field(app, name: str):
    widgets = app.text_area if name == "purpose" else app.text_input
    return widgets(key=f"{state.PREFIX}w.project.{name}")


def build_report(app):
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    reports = page_cache(app, "report")
    assert reports, "no report was built"
    return reports[-1]


def test_the_project_fields_are_empty_labelled_and_persist_across_pages(app):
    goto(app, "export")
    for name, label in FIELDS.items():
        widget = field(app, name)
        assert widget.label == label
        assert widget.value == ""
        assert widget.help
    field(app, "title").input("Smoking and birth weight").run()
    field(app, "purpose").input("Replicate the model").run()
    assert_clean(app)
    goto(app, "risk")
    goto(app, "export")
    assert field(app, "title").value == "Smoking and birth weight"
    assert field(app, "purpose").value == "Replicate the model"


def test_the_report_carries_the_fields_as_literal_text(app):
    goto(app, "export")
    values = {
        "title": "<script>alert(1)</script> cohort",
        "custodian": "Registry & Co",
        "recipient": "Dr B",
        "purpose": "Replicate **the** model",
    }
    for name, value in values.items():
        field(app, name).input(value).run()
    built = build_report(app)
    for value in values.values():
        assert html.escape(value) in built.html
    assert "<script>alert(1)</script>" not in built.html
    assert "Sign-off" in built.html
    assert "Residual risk of the columns released unmasked" in built.html
    # A changed field asks for a new report.
    field(app, "recipient").input("Dr C").run()
    assert "Download the report (HTML)" not in [b.label for b in app.get("download_button")]


def test_the_released_file_hash_is_that_of_the_bytes_offered_for_download(app):
    goto(app, "export")
    app.selectbox(key="export.format").set_value("xlsx").run()  # time-stamped bytes
    built = build_report(app)
    (offered,) = page_cache(app, "export_file")
    assert offered is built.export  # the download serves the bytes the report hashed
    labels = [b.label for b in app.get("download_button")]
    assert "Download the masked data (Excel)" in labels
    digest = hashlib.sha256(offered.data).hexdigest()
    assert digest in built.html
    assert f"{len(offered.data):,} bytes" in built.html
    # Preparing the file again offers the same bytes, not a new time stamp.
    app.button(key="export.prepare").click().run()
    (again,) = page_cache(app, "export_file")
    assert again is offered
    assert "the data were not read from a file" in built.html  # the built-in demo


def test_an_uploaded_file_is_hashed_as_uploaded(app):
    goto(app, "data")
    content = (
        "id,sex,age,bwt,low\n"
        + "".join(
            f"{i},{'FM'[i % 2]},{20 + i % 25},{2000 + 13 * i},{int(2000 + 13 * i < 2500)}\n"
            for i in range(120)
        )
    ).encode()
    app.file_uploader[0].upload("births.csv", content, "text/csv")
    app.run()
    assert_clean(app)
    goto(app, "export")
    built = build_report(app)
    assert hashlib.sha256(content).hexdigest() in built.html
    assert f"{len(content):,} bytes" in built.html
    assert "births.csv (as uploaded)" in built.html
