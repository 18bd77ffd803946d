"""Risk page: every closed-data figure with its definition, Cologne linkage, distribution."""

import numpy as np
from app_helpers import assert_clean, goto, metric_value, no_events_frame, texts


def test_summary_table_has_every_figure_with_a_definition(app):
    goto(app, "risk")
    summary = app.table[0].value
    labels = list(summary.index)
    for needle in (
        "Records",
        "Equivalence classes",
        "k (smallest class)",
        "Unique records",
        "Records in classes of size ≤ 5",
        "Maximum risk",
        "Average risk (over records)",
        "Strict average risk",
        "(k = 2 violations)",
        "(k = 3 violations)",
        "(k = 5 violations)",
    ):
        assert any(needle in label for label in labels), needle
    assert summary["Definition and direction"].str.len().min() > 30
    assert any("not over classes" in d for d in summary["Definition and direction"])
    # the page and the sidebar agree
    average = float(summary.loc["Average risk (over records)", "Value"])
    assert f"{average:.3f}" == metric_value(app.sidebar, "Average risk")


def test_linkage_scores_and_cologne_table_1(app):
    goto(app, "risk")
    identifiability = float(metric_value(app.main, "Identifiability risk score"))
    anonymity = float(metric_value(app.main, "Anonymity score"))
    assert abs(identifiability + anonymity - 1) < 1e-3
    match = app.table[1].value
    assert list(match.index) == ["1", "2", "3", "4+", "0"]
    assert int(match["Released records (any match)"].astype(int).sum()) == 16_000
    # same masking against the original data: Cologne's score equals the average risk
    assert f"{identifiability:.3f}" == metric_value(app.sidebar, "Average risk")


def test_matching_rule_can_be_changed_and_is_remembered(app):
    goto(app, "risk")
    app.radio(key="deid.w.matching_rule").set_value("exact").run()
    assert_clean(app)
    assert app.session_state["deid.settings"]["matching_rule"] == "exact"
    goto(app, "mask")
    goto(app, "risk")
    assert app.radio(key="deid.w.matching_rule").value == "exact"


def test_class_size_chart_and_riskiest_records(app):
    goto(app, "risk")
    assert app.get("arrow_vega_lite_chart") or app.get("vega_lite_chart")
    risky = app.dataframe[-1].value
    assert {"class size", "risk 1/f"} <= set(risky.columns)
    assert len(risky) == 50 and risky["class size"].iloc[0] == 1
    assert texts(app.warning) and not app.exception  # the verdict


def test_open_data_section_estimates_population_risk(app):
    goto(app, "risk")
    assert not [m for m in app.main.metric if m.label.startswith("Journalist")]
    app.toggle(key="risk.is_sample").set_value(True).run()
    app.number_input(key="risk.sampling_fraction").set_value(0.2).run()
    assert_clean(app)
    prosecutor = metric_value(app.main, "Prosecutor risk (max / average)")
    journalist = metric_value(app.main, "Journalist risk (max / average)")
    p_max, p_avg = (float(v) for v in prosecutor.split(" / "))
    j_max, j_avg = (float(v) for v in journalist.split(" / "))
    # Population classes are at least as large as sample classes: journalist <= prosecutor.
    assert j_max <= p_max and j_avg <= p_avg
    assert j_max == 0.2  # a sample unique stands for 1 / 0.2 = 5 people
    assert float(metric_value(app.main, "Marketer risk")) == j_avg
    assert any("Chosen:" in c for c in texts(app.caption))
    charts = app.get("arrow_vega_lite_chart") + app.get("vega_lite_chart")
    assert len(charts) >= 2  # the uniqueness curve beside the class-size chart


def test_tolerance_rule_offers_a_tolerance(app):
    goto(app, "risk")
    from dashboard import state

    app.radio(key=state.setting_widget_key("matching_rule")).set_value("tolerance").run()
    assert_clean(app)
    assert any("Masking's own reach" in c for c in texts(app.caption))
    # No noise and no tolerance yet: the score is unavailable, with the reason, not a number.
    assert any("needs a tolerance" in e for e in texts(app.error))
    assert metric_value(app.sidebar, "Anonymity") == "unavailable"
    # The demo recipe rounds and groups (no noise): give a tolerance for the numeric QIs.
    app.number_input(key="risk.tolerance").set_value(0.5).run()
    assert_clean(app)
    identifiability = float(metric_value(app.main, "Identifiability risk score"))
    assert 0 <= identifiability <= 1
    assert metric_value(app.sidebar, "Anonymity") == f"{1 - identifiability:.3f}"


def test_a_source_database_can_be_uploaded_and_dropped(app):
    from dashboard import state
    from deid_core.datasets.cohort import synthetic_cohort

    goto(app, "risk")
    before = float(metric_value(app.main, "Identifiability risk score"))
    # A source twice as large as the released file: every released person plus 16,000 others.
    bigger = synthetic_cohort(n=32_000, seed=99)
    bigger["person_id"] = range(1, 32_001)
    bigger.iloc[:16_000] = synthetic_cohort().to_numpy()
    app.file_uploader(key="risk.source_upload").upload(
        "source.csv", bigger.to_csv(index=False).encode(), "text/csv"
    )
    app.run()
    app.button(key="risk.use_src").click().run()
    assert_clean(app)
    assert app.session_state[state.KEY_SOURCE].name == "source.csv"
    after = float(metric_value(app.main, "Identifiability risk score"))
    # More people to be confused with: matches multiply, identifiability falls.
    assert after < before
    assert any("32,000 source records" in c for c in texts(app.caption))
    app.button(key="risk.drop_src").click().run()
    assert float(metric_value(app.main, "Identifiability risk score")) == before


def test_missing_values_as_their_own_category_or_as_wildcards(app):
    from dashboard import state

    frame = no_events_frame(200, seed=5)
    frame["death"] = (np.arange(200) % 10 == 0).astype(int)
    frame.loc[::7, "sex"] = None
    goto(app, "data")
    app.file_uploader[0].upload("with_na.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    goto(app, "risk")
    assert any("category of its own" in c for c in texts(app.sidebar.caption))
    category = float(metric_value(app.sidebar, "Average risk"))
    app.radio(key=state.setting_widget_key("missing")).set_value("wildcard").run()
    assert_clean(app)
    assert any("matches any value" in c for c in texts(app.sidebar.caption))
    # A missing sex matches both sexes: classes grow, average risk cannot rise.
    assert float(metric_value(app.sidebar, "Average risk")) <= category


def test_open_data_by_population_size(app):
    goto(app, "risk")
    app.toggle(key="risk.is_sample").set_value(True).run()
    app.radio(key="risk.population_given").set_value("population size").run()
    app.number_input(key="risk.population_size").set_value(64_000).run()
    assert_clean(app)
    journalist = metric_value(app.main, "Journalist risk (max / average)")
    assert float(journalist.split(" / ")[0]) == 0.25  # 16,000 of 64,000: a unique stands for 4


def test_bf_method_is_a_setting_and_changes_the_individual_risk(app):
    from dashboard import state

    goto(app, "risk")
    app.toggle(key="risk.is_sample").set_value(True).run()
    app.number_input(key="risk.sampling_fraction").set_value(0.05).run()
    select = app.selectbox(key=state.setting_widget_key("bf_method"))
    assert select.value == "exact" and select.help
    exact = float(metric_value(app.main, "Expected re-identifications").replace(",", ""))
    select.set_value("sdcmicro").run()
    assert_clean(app)
    assert app.session_state["deid.settings"]["bf_method"] == "sdcmicro"
    approx = float(metric_value(app.main, "Expected re-identifications").replace(",", ""))
    assert exact <= approx <= 1.04 * exact  # sdcMicro's approximation: at most 4% above
    # The definitions that differ from sdcMicro and ARX are stated on the page.
    shown = " ".join(texts(app.text))
    assert "sdcMicro" in shown and "ARX" in shown and "Pitman" in shown


def test_open_data_uses_the_missing_value_rule(app):
    from dashboard import state
    from deid_core.risk import MISSING_MODES

    frame = no_events_frame(300, seed=8)
    frame["death"] = (np.arange(300) % 10 == 0).astype(int)
    frame.loc[::5, "sex"] = None
    goto(app, "data")
    app.file_uploader[0].upload("with_na.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    goto(app, "risk")
    app.toggle(key="risk.is_sample").set_value(True).run()
    uniques = {}
    for missing in ("category", "wildcard"):
        app.radio(key=state.setting_widget_key("missing")).set_value(missing).run()
        assert_clean(app)
        summary = app.table[0].value
        closed_uniques = int(summary.loc["Unique records", "Value"].replace(",", ""))
        caption = next(c for c in texts(app.caption) if c.startswith("Sample uniques:"))
        uniques[missing] = int(caption.split(":")[1].split(".")[0].replace(",", ""))
        assert uniques[missing] == closed_uniques  # one partition for both blocks
        assert any(MISSING_MODES[missing] in c for c in texts(app.caption))
    assert uniques["wildcard"] <= uniques["category"]


def test_sample_design_survives_other_pages(app):
    from dashboard import state
    from deid_core.risk import SampleDesign

    goto(app, "risk")
    app.toggle(key="risk.is_sample").set_value(True).run()
    app.number_input(key="risk.sampling_fraction").set_value(0.2).run()
    assert state.KEY_SAMPLE_DESIGN in app.session_state
    assert app.session_state[state.KEY_SAMPLE_DESIGN] == SampleDesign(0.2)
    goto(app, "mask")
    goto(app, "risk")
    assert app.toggle(key="risk.is_sample").value is True
    assert app.number_input(key="risk.sampling_fraction").value == 0.2
    app.toggle(key="risk.is_sample").set_value(False).run()
    assert app.session_state[state.KEY_SAMPLE_DESIGN] is None
