"""Record uniqueness page: the NAACCR RU program's counts, weights, guidance and history."""

import numpy as np
import pandas as pd
from app_helpers import assert_clean, goto, metric_value, shown, texts

from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace

COHORT_KEYS = ["city", "sex", "age_at_exposure", "age_at_end", "stomach_dose_gy"]


def keys_widget(app):
    (widget,) = [
        m for m in app.multiselect if m.key.startswith("uniqueness.") and m.key.endswith(".keys")
    ]
    return widget


def combinations_table(app) -> pd.DataFrame:
    return next(d.value for d in app.dataframe if "n_variables" in d.value.columns)


def history_table(app) -> pd.DataFrame:
    return next(d.value for d in app.dataframe if "Variable list / variable" in d.value.columns)


def click(app, label):
    next(b for b in app.button if b.label == label).click().run()
    assert_clean(app)


def test_default_cohort_counts_every_combination_with_the_full_set_first(app):
    goto(app, "uniqueness")
    assert keys_widget(app).value == COHORT_KEYS
    table = combinations_table(app)
    assert len(table) == 2**5 - 1
    assert table.iloc[0]["variables"] == ", ".join(COHORT_KEYS)
    assert table.iloc[0]["n_variables"] == 5
    assert table["n_variables"].is_monotonic_decreasing
    full = table.iloc[0]
    uniques = metric_value(app.main, "Unique records (all keys)")
    assert uniques == f"{full['uniques_pct']:.2f}%"
    small = metric_value(app.main, "Records in small sets (≤ 5)")
    assert small == f"{full['small_pct']:.2f}%"
    # Doses at 2 significant digits make most records unique: both guidelines fail. They are
    # guidelines beside the one verdict of the release, not a second pass/fail signal.
    lines = " ".join(shown(m) for m in texts(app.markdown))
    assert "Research file guideline:" in lines and "Public file guideline:" in lines
    assert lines.count("above the guideline.") == 2
    assert not any("guideline" in e for e in texts(app.error) + texts(app.success))
    verdicts = texts(app.main.warning) + texts(app.main.success)
    assert any(v.startswith(("Above the threshold", "Meets the threshold")) for v in verdicts)
    assert metric_value(app.main, "Collapse first") == "stomach_dose_gy"
    assert any("Collapse first: stomach_dose_gy" in m for m in texts(app.markdown))
    assert any(
        "combinations entered the fit" in c and "2^5 - 1 = 31" in c for c in texts(app.caption)
    )
    # Omit-one table (Table 3): the full set, then each variable left out.
    omit = next(d.value for d in app.dataframe if "omitted" in d.value.columns)
    assert list(omit["omitted"]) == ["None", *COHORT_KEYS]
    assert omit["uniques_pct"].idxmin() == COHORT_KEYS.index("stomach_dose_gy") + 1
    assert app.get("download_button")
    assert app.get("arrow_vega_lite_chart") + app.get("vega_lite_chart")
    precisions = next(d.value for d in app.dataframe if "Precision" in d.value.columns)
    assert precisions.set_index("Variable").loc["city", "Precision"] == "as recorded"


def test_filters_and_small_set_size(app):
    goto(app, "uniqueness")
    app.multiselect(key="uniqueness.filter.contains").set_value(["sex"]).run()
    assert_clean(app)
    table = combinations_table(app)
    assert len(table) == 2**4
    assert table["variables"].str.contains("sex").all()
    app.slider(key="uniqueness.filter.size").set_value((1, 1)).run()
    assert list(combinations_table(app)["variables"]) == ["sex"]
    t = next(n for n in app.number_input if n.key.endswith(".small_class"))
    t.set_value(1).run()
    assert_clean(app)
    full = combinations_table(app)
    assert (full["small"] == full["uniques"]).all()
    assert metric_value(app.main, "Records in small sets (≤ 1)") == metric_value(
        app.main, "Unique records (all keys)"
    )


def test_collapse_the_worst_variable_rerun_and_compare(app):
    """The seed's workflow: keep a run, collapse the heaviest variable, re-run, compare."""
    goto(app, "uniqueness")
    assert metric_value(app.main, "Collapse first") == "stomach_dose_gy"
    click(app, "Keep this run")
    assert (history_table(app)["RU weight"] == "").sum() == 1
    click(app, "Keep this run")
    assert any("already in the history" in i for i in texts(app.info))

    goto(app, "mask")  # collapse the dose to 1 significant digit
    (slider,) = [s for s in app.slider if s.key.endswith("stomach_dose_gy:relative_round:digits")]
    slider.set_value(1).run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].steps_for("stomach_dose_gy")
    assert step.digits == 1

    goto(app, "uniqueness")
    assert keys_widget(app).value == COHORT_KEYS  # the choice survives the Mask page
    click(app, "Keep this run")
    history = history_table(app)
    runs = history[history["RU weight"] == ""]
    assert list(runs["Run"]) == [1, 2]
    first, second = runs["Unique %"].astype(float)
    assert second < first
    first, second = runs["Small sets %"].astype(float)
    assert second < first
    labels = runs["Variable list / variable"].tolist()
    assert "2 significant" in labels[0] and "1 significant" in labels[1]
    weights = history[history["RU weight"] != ""]
    assert weights["Variable list / variable"].iloc[0].endswith("stomach_dose_gy")
    # Each run lists its variables' weights below it, and its recipe can be viewed.
    assert len(history) == 2 * (1 + len(COHORT_KEYS))
    recipes = [e for e in app.expander if e.label.startswith("Run ")]
    assert len(recipes) == 2
    assert '"digits": 1' in recipes[1].code[0].value
    assert '"digits": 2' in recipes[0].code[0].value
    click(app, "Clear history")
    assert "No run kept yet." in texts(app.caption)


def test_no_keys_gives_a_message(app):
    goto(app, "uniqueness")
    keys_widget(app).set_value([]).run()
    assert_clean(app)
    assert any("Choose at least one key variable" in i for i in texts(app.info))
    assert not [d for d in app.dataframe if "n_variables" in d.value.columns]


def test_more_than_twelve_keys_gives_a_message(app):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({f"v{i}": rng.integers(0, 3, 200) for i in range(14)})
    columns = tuple(frame.columns)
    app.session_state["deid.workspace"] = Workspace(frame, name="wide")
    app.session_state["deid.recipe"] = Recipe(Roles(quasi_identifiers=columns))
    goto(app, "uniqueness")
    assert keys_widget(app).value == list(columns[:12])
    assert any("the first 12 are chosen" in c for c in texts(app.caption))
    keys_widget(app).set_value(list(columns[:13])).run()
    assert_clean(app)
    assert any("at most 12 key variables (13 are chosen)" in e for e in texts(app.error))
    assert not [d for d in app.dataframe if "n_variables" in d.value.columns]
