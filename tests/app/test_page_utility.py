"""Utility page: Cologne's Table 2 layout, replicates, and 'unavailable' rather than 0."""

import numpy as np
from app_helpers import assert_clean, goto, metric_value, no_events_frame, texts

from dashboard.tables import UTILITY_COLUMNS


def test_table_2_layout_for_the_default_recipe(app):
    goto(app, "utility")
    assert any("logit P(stomach_cancer = 1)" in c for c in texts(app.code))
    table = app.table[0].value
    columns = list(UTILITY_COLUMNS)
    assert list(table.columns) == [*columns[:3], "Odds ratio (95% CI)", *columns[3:]]
    assert list(table.index) == ["No masking", "Current recipe"]
    # The odds ratio with its CI, as exp of b -/+ 1.96 SE, original and masked.
    b = float(table.loc["No masking", "Estimate b"])
    assert table.loc["No masking", "Odds ratio (95% CI)"].startswith(f"{np.exp(b):#.3g}"[:4])
    assert metric_value(app.main, "Odds ratio, original").startswith(f"{np.exp(b):#.3g}"[:4])
    # The estimate is the metric's value (never cut off); its CI is on the line below.
    masked = float(metric_value(app.main, "Odds ratio, masked"))
    cis = [c.removeprefix("95% CI ") for c in texts(app.main.caption) if c.startswith("95% CI ")]
    cis = [tuple(float(x) for x in c.split(" to ")) for c in cis]
    assert len(cis) == 2 and cis[1][0] <= masked <= cis[1][1]
    assert table.loc["No masking", "Analysis potential"].startswith("1.000")
    ap = float(table.loc["Current recipe", "Analysis potential"])
    assert f"{ap:.3f}" == metric_value(app.main, "Analysis potential")
    assert f"{ap:.3f}" == metric_value(app.sidebar, "Analysis potential")
    assert app.slider(key="deid.w.replicates").disabled  # no random step yet


def test_random_recipe_shows_mean_and_range_over_replicates(app):
    next(s for s in app.selectbox if s.key.endswith("stomach_dose_gy:method")).set_value(
        "gaussian_noise"
    ).run()
    assert_clean(app)
    goto(app, "utility")
    app.slider(key="deid.w.replicates").set_value(20).run()
    assert_clean(app)
    table = app.table[0].value
    rows = list(table.index)
    assert rows[0] == "No masking"
    assert rows[1] == "Current recipe: mean of 20 replicates"
    assert rows[2] == "(min, max) over replicates"
    assert table.loc[rows[2], "Estimate b"].startswith("(")
    assert app.session_state["deid.settings"]["replicates"] == 20


def test_no_events_outcome_is_unavailable_not_zero(app):
    frame = no_events_frame(120, seed=11)
    goto(app, "data")
    app.file_uploader[0].upload("no_events.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    goto(app, "utility")
    assert metric_value(app.main, "Analysis potential") == "unavailable"
    assert any("no events" in w for w in texts(app.warning))
    table = app.table[0].value
    assert (table == "unavailable").all().all()
    shown = [m.value for m in app.metric if m.label == "Analysis potential"]
    assert "0" not in shown and "0.000" not in shown


def test_cologne_schemes_compared_in_table_2_layout(app):
    goto(app, "utility")
    next(b for b in app.button if b.label == "Add Cologne's six schemes").click().run()
    assert_clean(app)
    table = next(d.value for d in app.dataframe if "Scheme" in d.value.columns)
    schemes = table["Scheme"].tolist()
    assert schemes[:2] == ["No masking", "Current recipe"]
    assert len(schemes) == 8 and "noise +/-0.1" in schemes
    noise = table[table["Scheme"] == "noise +/-0.1"].iloc[0]
    assert "(" in noise["Estimate b"] and "replicates" in noise["Note"]
    # Analysis potential of every scheme is a number near 1 (masking the dose costs little).
    for value in table["Analysis potential"]:
        assert 0.9 < float(value) < 1.1
    assert app.get("download_button")


def test_more_views_overlap_changes_and_distributions(app):
    goto(app, "utility")
    assert_clean(app)
    overlap = float(metric_value(app.main, "CI overlap"))
    assert 0.9 < overlap <= 1.0  # two significant digits barely move the interval
    changes = app.dataframe[0].value
    assert "stomach_dose_gy" in changes["column"].tolist()
    assert len(app.get("arrow_vega_lite_chart") + app.get("vega_lite_chart")) >= 1


def test_model_chooser_switches_to_the_err_model(app):
    goto(app, "utility")
    next(s for s in app.selectbox if s.key.endswith(".family")).set_value("err").run()
    assert_clean(app)
    assert any("(1 + b * stomach_dose_gy)" in c.value for c in app.code)
    assert float(metric_value(app.sidebar, "Analysis potential")) > 0


def test_bootstrap_interval_on_request(app):
    goto(app, "utility")
    assert not [m for m in app.metric if m.label.startswith("Bootstrap")]  # off by default
    app.select_slider(key="utility.bootstrap_n").set_value(50)
    app.toggle(key="utility.bootstrap_on").set_value(True).run()
    assert_clean(app)
    naive = metric_value(app.main, "Naive 95% CI")
    boot = metric_value(app.main, "Bootstrap 95% CI")
    low, high = (float(v) for v in boot.strip("()").split(","))
    n_low, n_high = (float(v) for v in naive.strip("()").split(","))
    assert low < high and n_low < n_high
    # The masked estimate lies inside both intervals.
    masked = float(app.table[0].value.loc["Current recipe", "Estimate b"].split()[0])
    assert low < masked < high and n_low < masked < n_high
    assert float(metric_value(app.main, "Width ratio (naive / bootstrap)")) > 0


def test_custom_candidate_scheme_is_added_to_the_comparison(app):
    goto(app, "utility")
    app.selectbox(key="utility.candidate:method").set_value("absolute_round").run()
    app.slider(key="utility.candidate:absolute_round:decimals").set_value(1)
    app.text_input(key="utility.candidate.name").input("dose to 0.1 Gy").run()
    next(b for b in app.button if b.label == "Add this scheme").click().run()
    assert_clean(app)
    table = next(d.value for d in app.dataframe if "Scheme" in d.value.columns)
    assert table["Scheme"].tolist() == ["No masking", "Current recipe", "dose to 0.1 Gy"]
    row = table[table["Scheme"] == "dose to 0.1 Gy"].iloc[0]
    assert 0.5 < float(row["Analysis potential"]) < 1.5
