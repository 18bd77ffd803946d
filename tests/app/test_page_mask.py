"""Mask page: sliders drive the recipe; the live panel and the sidebar follow."""

import pandas as pd
import pytest
from app_helpers import assert_clean, goto, metric_value, texts

from deid_core.recipe import Recipe, Roles


def by_key(widgets, suffix):
    found = [w for w in widgets if w.key and w.key.endswith(suffix)]
    assert len(found) == 1, [w.key for w in widgets]
    return found[0]


def test_moving_the_dose_rounding_slider_changes_the_average_risk(app):
    before_main = metric_value(app.main, "Average risk")
    before_side = metric_value(app.sidebar, "Average risk")
    assert before_main == before_side
    by_key(app.slider, "stomach_dose_gy:relative_round:digits").set_value(1).run()
    assert_clean(app)
    after_main = metric_value(app.main, "Average risk")
    assert after_main != before_main
    assert float(after_main) < float(before_main)  # coarser dose: larger classes
    assert metric_value(app.sidebar, "Average risk") == after_main
    step = [s for s in app.session_state["deid.recipe"].steps if s.column == "stomach_dose_gy"]
    assert step[0].digits == 1


def test_live_panel_shows_the_small_map_and_the_preview(app):
    assert app.get("arrow_vega_lite_chart") or app.get("vega_lite_chart")
    assert any("theta" in c.value for c in app.main.caption)
    preview = app.dataframe[-1].value
    assert "stomach_dose_gy (masked)" in preview.columns
    assert len(preview) == 5
    by_key(app.slider, "preview_rows").set_value(8).run()  # a control of the fragment
    assert_clean(app)
    assert len(app.dataframe[-1].value) == 8


def test_switching_to_noise_fits_replicates_and_keeps_the_seed(app):
    by_key(app.selectbox, "stomach_dose_gy:method").set_value("uniform_noise").run()
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    (step,) = recipe.steps_for("stomach_dose_gy")
    assert step.method == "uniform_noise" and step.seed is not None
    ap = metric_value(app.main, "Analysis potential")
    assert ap != "unavailable" and 0 < float(ap) < 1.5
    assert "Draw the map" in [b.label for b in app.button]
    app.run()  # a rerun draws the same noise: no flicker
    assert metric_value(app.main, "Analysis potential") == ap
    assert app.session_state["deid.recipe"].steps_for("stomach_dose_gy")[0].seed == step.seed


def test_noisy_values_are_released_at_the_noise_scale_unless_unticked(app):
    by_key(app.selectbox, "stomach_dose_gy:method").set_value("uniform_noise").run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].steps_for("stomach_dose_gy")
    assert step.round_to_noise_scale
    box = by_key(app.checkbox, "stomach_dose_gy:uniform_noise:round_to_noise_scale")
    assert (
        box.value and box.label == "Round the noisy values to the noise's scale for stomach_dose_gy"
    )
    workspace = app.session_state["deid.workspace"]
    masked = workspace.masked_column(app.session_state["deid.recipe"], "stomach_dose_gy").dropna()
    base = step.release_base
    assert base is not None and base <= step.half_width / 5
    assert ((masked / base).round() * base - masked).abs().max() < base * 1e-9
    box.uncheck().run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].steps_for("stomach_dose_gy")
    assert not step.round_to_noise_scale


def test_invalid_settings_show_the_recipe_error(app):
    by_key(app.selectbox, "age_at_end:method").set_value("top_bottom_code").run()
    assert_clean(app)
    by_key(app.checkbox, "age_at_end:top_bottom_code:use_bottom").check().run()
    by_key(app.number_input, "age_at_end:top_bottom_code:bottom").set_value(200.0).run()
    assert_clean(app)
    assert any("bottom cut must be below the top cut" in e for e in texts(app.error))
    # the recipe keeps the last valid step for the column (the 1st-percentile bottom cut)
    (step,) = app.session_state["deid.recipe"].steps_for("age_at_end")
    assert step.method == "top_bottom_code" and step.bottom is not None and step.bottom < 200


def test_no_masking_removes_the_step(app):
    by_key(app.selectbox, "age_at_exposure:method").set_value("none").run()
    assert_clean(app)
    assert app.session_state["deid.recipe"].steps_for("age_at_exposure") == ()


def test_el_emam_year_of_birth_to_decades_gives_nine_classes(app):
    """El Emam & Malin: sex and decade of birth give 9 classes, average risk 9/27."""
    app.switch_page("app_pages/data.py").run()
    app.selectbox(key="data.demo_choice").set_value("el_emam").run()
    next(b for b in app.button if b.label == "Use this demo").click().run()
    app.switch_page("app_pages/mask.py").run()
    assert_clean(app)
    assert metric_value(app.main, "Average risk") == f"{16 / 27:.3f}"
    by_key(app.selectbox, "year_of_birth:method").set_value("interval_group").run()
    by_key(app.select_slider, "year_of_birth:interval_group:width").set_value(10.0)
    by_key(app.radio, "year_of_birth:interval_group:release").set_value("label").run()
    assert_clean(app)
    assert metric_value(app.main, "Average risk") == f"{9 / 27:.3f}"
    assert metric_value(app.sidebar, "Average risk") == f"{9 / 27:.3f}"


def test_merging_levels_of_a_text_column(app):
    by_key(app.selectbox, "sex:method").set_value("merge_levels").run()
    assert_clean(app)
    assert any("Choose the levels to merge" in i for i in texts(app.info))
    by_key(app.multiselect, "sex:merge_levels:levels0").set_value(["F", "M"])
    by_key(app.text_input, "sex:merge_levels:label0").set_value("any").run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].steps_for("sex")
    assert step.mapping == {"F": "any", "M": "any"}


NUMERIC_METHODS = (
    "absolute_round",
    "truncate",
    "interval_group",
    "top_bottom_code",
    "uniform_noise",
    "gaussian_noise",
    "merge_levels",
)


@pytest.mark.parametrize("method", NUMERIC_METHODS)
def test_every_numeric_method_runs_on_a_continuous_column(app, method):
    if method == "merge_levels":
        # thousands of distinct doses: merging levels by hand is not offered for this column
        assert "Merge levels (categorical)" not in by_key(app.selectbox, "dose_gy:method").options
        return
    by_key(app.selectbox, "age_at_exposure:method").set_value(method).run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].steps_for("age_at_exposure")
    assert step.method == method
    metric_value(app.main, "Average risk")
    metric_value(app.sidebar, "Analysis potential")


def test_dates_can_be_reduced_to_the_year(app):
    frame = pd.DataFrame(
        {
            "id": range(1, 41),
            "sex": ["F", "M"] * 20,
            "birth_date": pd.date_range("1950-01-01", periods=40, freq="37D").strftime("%Y-%m-%d"),
        }
    )
    app.switch_page("app_pages/data.py").run()
    app.file_uploader[0].upload("dates.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    assert_clean(app)
    app.switch_page("app_pages/mask.py").run()
    assert_clean(app)
    method = by_key(app.selectbox, "birth_date:method")
    assert method.options == ["No masking", "Date to year / quarter / month / week"]
    before = float(metric_value(app.main, "Average risk"))
    method.set_value("date_reduce").run()
    assert_clean(app)
    assert float(metric_value(app.main, "Average risk")) < before


def test_visits_demo_dates_ages_and_codes_from_the_mask_page(app):
    goto(app, "data")
    app.selectbox(key="data.demo_choice").set_value("visits").run()
    assert_clean(app)
    next(b for b in app.button if b.label in ("Use this demo", "Reload this demo")).click().run()
    assert_clean(app)
    goto(app, "mask")
    method = by_key(app.selectbox, "icd10:method")
    assert "Code to its first characters (hierarchy)" in method.options
    assert "ICD-10 code to its chapter" in method.options
    method.set_value("code_prefix").run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].steps_for("icd10")
    assert step.method == "code_prefix" and step.length == 3
    by_key(app.toggle, "data:age_at:on").set_value(True).run()
    assert_clean(app)
    by_key(app.toggle, "data:relative_dates:on").set_value(True).run()
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    assert [s.method for s in recipe.data_steps] == ["age_at", "relative_dates"]
    age, relative = recipe.data_steps
    assert (age.column, age.reference, age.first, age.top_code) == (
        "birth_date",
        "admission_date",
        True,
        90,
    )
    assert relative.columns == ("admission_date", "discharge_date")
    assert relative.anchor == "first"
    assert any("Relative dates" in c for c in texts(app.main.caption))


def test_a_hierarchy_file_generalises_a_column_by_level(app):
    frame = pd.DataFrame(
        {
            "id": range(1, 41),
            "sex": ["F", "M"] * 20,
            "dx": ["A41.9", "A41.0", "J18.9", "J44.1", "B34.9"] * 8,
        }
    )
    app.switch_page("app_pages/data.py").run()
    app.file_uploader[0].upload("dx.csv", frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    assert_clean(app)
    app.session_state["deid.recipe"] = Recipe(Roles(quasi_identifiers=("sex", "dx")))
    goto(app, "mask")
    method = by_key(app.selectbox, "dx:method")
    assert "Hierarchy file (ARX), by level" in method.options
    method.set_value("hierarchy").run()
    assert_clean(app)
    assert "Give the column's hierarchy file." in texts(app.info)
    arx = "A41.9;A41;A00-B99;*\nA41.0;A41;A00-B99;*\nJ18.9;J18;J00-J99;*\n"
    by_key(app.file_uploader, "hierarchy:file").upload("dx_hierarchy.csv", arx.encode(), "text/csv")
    app.run()
    assert_clean(app)
    # two values of dx have no row: the page says so, counted, and keeps the column unmasked
    assert any("2 distinct value(s) of 'dx'" in e for e in texts(app.error))
    arx += "J44.1;J44;J00-J99;*\nB34.9;B34;A00-B99;*\n"
    by_key(app.file_uploader, "hierarchy:file").upload("dx_hierarchy.csv", arx.encode(), "text/csv")
    app.run()
    assert_clean(app)
    by_key(app.slider, "hierarchy:level").set_value(2).run()
    assert_clean(app)
    (step,) = app.session_state["deid.recipe"].steps_for("dx")
    assert step.method == "hierarchy" and step.level == 2 and step.depth == 3
    masked = app.session_state["deid.workspace"].masked_column(
        app.session_state["deid.recipe"], "dx"
    )
    assert sorted(set(masked)) == ["A00-B99", "J00-J99"]


def test_local_suppression_never_blanks_the_columns_the_user_keeps(app):
    from deid_core.datasets.visits import visits_data
    from deid_core.masking import LocalSuppression, RelativeDates

    visits = visits_data(n_patients=60, seed=5)
    app.switch_page("app_pages/data.py").run()
    app.file_uploader[0].upload("visits.csv", visits.to_csv(index=False).encode(), "text/csv")
    app.run(timeout=300)
    assert_clean(app)
    dates = ("admission_date", "discharge_date")
    roles = Roles(quasi_identifiers=(*dates, "sex", "icd10"), record_id="mrn")
    steps = (RelativeDates(columns=dates), LocalSuppression(k=3))
    app.session_state["deid.recipe"] = Recipe(roles, data_steps=steps)
    app.switch_page("app_pages/mask.py").run(timeout=300)
    assert_clean(app)
    keep = by_key(app.multiselect, "local_suppression:keep")
    assert keep.label.startswith("Never suppress")
    keep.set_value(list(dates)).run(timeout=300)
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    (step,) = [s for s in recipe.data_steps if s.method == "local_suppression"]
    assert step.keep == dates
    masked = app.session_state["deid.workspace"].masked_frame(recipe)
    assert masked[list(dates)].notna().all().all()
    # the rows the dates alone leave below k stay below it, and the page says so
    shown = " ".join(texts(app.main.caption) + texts(app.main.markdown) + texts(app.main.text))
    assert "cannot reach k = 3" in shown
    assert not any("Meets the threshold" in s for s in texts(app.success))


def test_length_of_stay_and_visit_number_derived_from_the_dates_cut_to_the_year(app):
    from deid_core.datasets.visits import visits_data
    from deid_core.masking import DateReduce

    visits = visits_data(n_patients=60, seed=5)
    app.switch_page("app_pages/data.py").run()
    app.file_uploader[0].upload("visits.csv", visits.to_csv(index=False).encode(), "text/csv")
    app.run(timeout=300)
    assert_clean(app)
    dates = ("admission_date", "discharge_date")
    roles = Roles(quasi_identifiers=(*dates, "length_of_stay", "sex"), record_id="mrn")
    steps = tuple(DateReduce(c, to="year") for c in dates)
    app.session_state["deid.recipe"] = Recipe(roles, steps=steps)
    app.switch_page("app_pages/mask.py").run(timeout=300)
    assert_clean(app)
    by_key(app.toggle, "data:interval:on").set_value(True).run(timeout=300)
    assert_clean(app)
    by_key(app.toggle, "data:event_order:on").set_value(True).run(timeout=300)
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    interval, order = recipe.data_steps
    assert (interval.start, interval.end, interval.name) == (*dates, "length_of_stay")
    assert (order.column, order.name, order.ties) == ("admission_date", "admission_date", "first")
    masked = app.session_state["deid.workspace"].masked_frame(recipe)
    admit = pd.to_datetime(visits["admission_date"])
    stay = (pd.to_datetime(visits["discharge_date"]) - admit).dt.days
    assert masked["length_of_stay"].astype(int).tolist() == stay.tolist()
    for _, rows in masked.assign(day=admit).groupby(visits["mrn"]):
        ranks = rows.sort_values("day", kind="stable")["admission_date"].astype(int)
        assert ranks.tolist() == list(range(1, len(rows) + 1))
    assert set(masked["discharge_date"]) <= set(pd.to_datetime(visits["discharge_date"]).dt.year)
    assert any("Interval:" in c for c in texts(app.main.caption))


def test_a_length_of_stay_goes_by_default_into_its_end_date_never_into_another_column(app):
    """Without a quasi-identifier named for a stay, the interval replaces its end date (the
    discharge date released as days of stay), not the first quasi-identifier (before: the
    date of birth was overwritten by the lengths of stay)."""
    from deid_core.datasets.visits import visits_data

    visits = visits_data(n_patients=40, seed=3)
    app.switch_page("app_pages/data.py").run()
    app.file_uploader[0].upload("visits.csv", visits.to_csv(index=False).encode(), "text/csv")
    app.run(timeout=300)
    assert_clean(app)
    qis = ("birth_date", "admission_date", "discharge_date", "sex")
    app.session_state["deid.recipe"] = Recipe(Roles(quasi_identifiers=qis, record_id="mrn"))
    app.switch_page("app_pages/mask.py").run(timeout=300)
    by_key(app.toggle, "data:interval:on").set_value(True).run(timeout=300)
    assert_clean(app)
    (interval,) = app.session_state["deid.recipe"].data_steps
    assert (interval.start, interval.end, interval.name) == (
        "admission_date",
        "discharge_date",
        "discharge_date",
    )
