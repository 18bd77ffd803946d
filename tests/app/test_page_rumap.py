"""R-U map page: a sweep with a progress bar, Cologne's theta, frontier, points table."""

import re
import time

from app_helpers import assert_clean, goto, metric_value, texts

from dashboard import compute, jobs


def test_default_sweep_of_the_exposure_shows_theta_and_points(app):
    goto(app, "rumap")
    step = app.selectbox(key="rumap.1.step")
    assert "stomach_dose_gy" in step.format_func(step.value)
    assert metric_value(app.main, "Cologne theta") != ""
    assert any("Cologne's curve" in c or "Theta is unavailable" in c for c in texts(app.caption))
    points = app.dataframe[0].value
    assert list(points["digits"].str.slice(0, 1)) == ["1", "2", "3", "4", "5"]
    assert any("(current)" in v for v in points["digits"])
    assert float(metric_value(app.main, "Threshold line (security)")) == 0.8


def test_values_can_be_typed_and_bad_values_are_an_error(app):
    goto(app, "rumap")
    key = "rumap.1.0.digits.values"
    app.text_input(key=key).set_value("1, 2, three").run()
    assert_clean(app)
    assert any("numbers separated by commas" in e for e in texts(app.error))
    app.text_input(key=key).set_value("1.5, 2").run()
    assert any("whole numbers" in e for e in texts(app.error))
    app.text_input(key=key).set_value("1, 3").run()
    assert_clean(app)
    assert len(app.dataframe[0].value) == 2


def test_random_step_sweep_runs_on_request_and_shows_theta(app):
    next(s for s in app.selectbox if s.key.endswith("stomach_dose_gy:method")).set_value(
        "uniform_noise"
    ).run()
    goto(app, "rumap")
    app.slider(key="deid.w.replicates").set_value(5).run()
    app.text_input(key=app.text_input[0].key).set_value("0.01, 0.1, 0.5").run()
    assert "Run the sweep" in [b.label for b in app.button]
    next(b for b in app.button if b.label == "Run the sweep").click().run()
    assert_clean(app)
    theta = metric_value(app.main, "Cologne theta")
    assert theta
    assert any("averages 5 replicates" in c for c in texts(app.caption))
    assert len(app.dataframe[0].value) == 3


def test_applying_a_swept_value_changes_the_recipe(app):
    goto(app, "rumap")
    form_select = next(s for s in app.selectbox if s.label.startswith("Use a value of digits"))
    form_select.set_value(3)
    next(b for b in app.button if b.label == "Apply to the recipe").click().run()
    assert_clean(app)
    assert app.session_state["deid.recipe"].steps_for("stomach_dose_gy")[0].digits == 3


def _search(app):
    """Click Search; the search runs in the background (the page says so), then is drawn."""
    goto(app, "rumap")
    next(b for b in app.button if b.label == "Search").click().run(timeout=300)
    assert_clean(app)
    assert app.session_state[jobs.KEY_JOBS].wait_all(300)
    app.run(timeout=300)
    assert_clean(app)


def test_search_shows_the_frontier_top_recipes_and_applies_a_point_in_one_click(app):
    goto(app, "rumap")
    app.number_input(key="rumap.1.search.limit").set_value(5.0).run()
    _search(app)
    summary = "\n".join(t.value for t in app.text)
    assert "recipes over city, sex, age_at_exposure, age_at_end, stomach_dose_gy" in summary
    assert "Best:" in summary
    top = app.dataframe[-1].value
    assert {"risk", "analysis potential", "masked effect", "95% CI low"} <= set(top.columns)
    assert (top["risk"] <= 0.2 + 1e-12).all()
    assert top["analysis potential"].dropna().is_monotonic_decreasing
    applies = [b for b in app.button if b.label == "Apply"]
    assert applies
    before = app.session_state["deid.recipe"]
    applies[0].click().run(timeout=300)
    assert_clean(app)
    after = app.session_state["deid.recipe"]
    assert (after != before and after.data_steps) or after.steps != before.steps
    # The map of the applied recipe is drawn: a swept value with which its record suppression
    # cannot reach k within the limit is a row saying so, not an error ending the sweep.
    assert app.session_state[jobs.KEY_JOBS].wait_all(300)
    app.run(timeout=300)
    assert_clean(app)
    assert not texts(app.error), texts(app.error)
    table = app.dataframe[0].value
    assert "Security" in table.columns and len(table) >= 2
    unreachable = table[table["Risk measure"] == compute.UNREACHABLE]
    assert (unreachable["Security"] == "—").all()
    assert unreachable["Note"].str.contains("cannot").all()


def test_search_with_no_column_asks_for_one(app):
    goto(app, "rumap")
    app.multiselect(key="rumap.1.search.columns").set_value([]).run()
    assert any("at least one column" in i for i in texts(app.info))


def test_a_search_runs_in_the_background_and_stopping_it_keeps_the_best_recipes_so_far(
    app, monkeypatch
):
    real = compute.search_space

    def slow_search(*args, progress, **kwargs):
        def slow(done, total):
            time.sleep(0.2)  # a search slow enough to be stopped halfway
            progress(done, total)

        return real(*args, progress=slow, **kwargs)

    monkeypatch.setattr(compute, "search_space", slow_search)
    goto(app, "rumap")
    app.number_input(key="rumap.1.search.limit").set_value(5.0).run()
    next(b for b in app.button if b.label == "Search").click().run(timeout=300)
    assert_clean(app)
    job = app.session_state[jobs.KEY_JOBS].current("rumap.search")
    assert job is not None and job.active
    # The page is drawn at once: the search says where it is, with its Stop button.
    assert any("Searching" in c for c in texts(app.caption)) or app.get("progress")
    deadline = time.monotonic() + 120
    while job.partial is None and job.active and time.monotonic() < deadline:
        time.sleep(0.1)
    assert job.partial is not None, job.result.summary()  # (the whole search was done)
    app.run(timeout=300)
    assert_clean(app)
    next(b for b in app.button if b.label == "Stop the search").click().run(timeout=300)
    assert job.wait(60)
    assert job.state == jobs.STOPPED
    app.run(timeout=300)
    assert_clean(app)
    assert any("Stopped: the best recipes found before the stop" in c for c in texts(app.caption))
    summary = "\n".join(t.value for t in app.text)
    assert re.search(r"partial result: [\d,]+ of 864 recipes settled", summary)
    assert app.dataframe[-1].value["risk"].le(0.2 + 1e-12).all()
    # Search again starts afresh.
    next(b for b in app.button if b.label == "Search again").click().run(timeout=300)
    assert_clean(app)
    assert "Search" in [b.label for b in app.button]


def test_a_failing_verdict_offers_the_search_from_the_recipe_and_numbers_the_frontier(app):
    # The cohort unmasked fails the threshold: the Mask page offers the search from here.
    from deid_core.recipe import Recipe

    recipe = app.session_state["deid.recipe"]
    app.session_state["deid.recipe"] = Recipe(recipe.roles)
    app.session_state["rumap.1.search.limit"] = 5.0  # a space where some recipes pass
    app.run()
    assert_clean(app)
    button = next(b for b in app.button if b.label == "Search from this recipe")
    button.click().run(timeout=300)
    assert_clean(app)
    # on the R-U map page, the search started without another click
    assert app.session_state[jobs.KEY_JOBS].wait_all(300)
    app.run(timeout=300)
    assert_clean(app)
    summary = "\n".join(t.value for t in app.text)
    assert "recipes over" in summary and "Best:" in summary, summary
    frontier = next(d.value for d in app.dataframe if "#" in d.value.columns)
    applies = [b for b in app.button if b.label == "Apply"]
    assert frontier["#"].tolist() == list(range(1, len(frontier) + 1))
    assert len(applies) == min(len(frontier), 10) and len(frontier) >= 1
    # each numbered row is the Apply row of the same number
    listed = [t.value for t in app.text if re.match(r"\d+\. ", t.value)]
    assert [int(t.split(".")[0]) for t in listed] == frontier["#"].tolist()[: len(listed)]
