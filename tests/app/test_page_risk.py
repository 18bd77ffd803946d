"""Risk page: every closed-data figure with its definition, Cologne linkage, distribution."""

from app_helpers import assert_clean, goto, metric_value, texts


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
    assert texts(app.error) and not app.exception
