"""The report draws the pages' charts: the class-size chart (Risk page), the exposure's
distribution (Utility page) and the R-U map (R-U map page) of the report have the very
Vega-Lite specifications the pages hand to Streamlit, for the same data and settings."""

import json

import app_helpers  # noqa: F401  (puts the repository on sys.path)
import pytest
import streamlit
from app_helpers import assert_clean, fresh_app, goto
from streamlit.delta_generator import DeltaGenerator

import deid_core.report
from deid_core.charts import spec_of


def canonical(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True)


@pytest.fixture
def drawn(monkeypatch):
    """Every chart a page draws, as its Vega-Lite specification."""
    specs: list[dict] = []
    real_method, real_function = DeltaGenerator.altair_chart, streamlit.altair_chart

    def method(self, chart, *args, **kwargs):  # st.columns(...)[i].altair_chart
        specs.append(spec_of(chart))
        return real_method(self, chart, *args, **kwargs)

    def function(chart, *args, **kwargs):  # st.altair_chart (bound when streamlit loads)
        specs.append(spec_of(chart))
        return real_function(chart, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "altair_chart", method)
    monkeypatch.setattr(streamlit, "altair_chart", function)
    real_spec_method = DeltaGenerator.vega_lite_chart

    def spec_method(self, *args, **kwargs):  # dashboard.charts.draw hands over the spec
        specs.append(json.loads(json.dumps(kwargs["spec"])))  # Streamlit edits it
        return real_spec_method(self, *args, **kwargs)

    real_spec_function = streamlit.vega_lite_chart

    def spec_function(*args, **kwargs):
        specs.append(json.loads(json.dumps(kwargs["spec"])))  # Streamlit edits it
        return real_spec_function(*args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "vega_lite_chart", spec_method)
    monkeypatch.setattr(streamlit, "vega_lite_chart", spec_function)
    return specs


@pytest.fixture
def reports(monkeypatch):
    """Every report the Export page builds."""
    built = []
    real = deid_core.report.build_report

    def spy(*args, **kwargs):
        built.append(real(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(deid_core.report, "build_report", spy)
    return built


def test_the_report_and_the_pages_draw_the_same_specifications(drawn, reports):
    app = fresh_app()
    for page in ("risk", "utility", "rumap"):
        goto(app, page)
    run = [b for b in app.button if b.key and b.key.startswith("rumap.") and b.key.endswith(".run")]
    for button in run:  # a random recipe's sweep waits for the button
        button.click().run()
        assert_clean(app)
    goto(app, "export")
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    (report,) = reports
    figures = report.figures()
    assert len(figures) == 3
    on_pages = {canonical(spec) for spec in drawn}
    for figure in figures:
        assert canonical(figure.spec) in on_pages, figure.title
