"""Export page: both downloads, identifiers withheld, seeds left out by default."""

import json

from app_helpers import assert_clean, goto, texts


def test_both_downloads_and_the_description(app):
    goto(app, "export")
    assert "Download the recipe (JSON)" in [b.label for b in app.get("download_button")]
    app.button(key="export.prepare").click().run()
    assert_clean(app)
    labels = [b.label for b in app.get("download_button")]
    assert "Download the masked data (CSV)" in labels
    assert "Download the recipe (JSON)" in labels
    body = " ".join(texts(app.markdown))
    assert "rounded to 2 significant digit(s)" in body
    assert "person_id" not in body.split("columns:")[-1].split(".")[0]
    assert any("Left out (never released): person_id" in c for c in texts(app.caption))


def test_recipe_json_has_no_seed_by_default(app):
    next(s for s in app.selectbox if s.key.endswith("stomach_dose_gy:method")).set_value(
        "uniform_noise"
    ).run()
    goto(app, "export")
    shown = app.code[0].value
    recipe = json.loads(shown)
    assert "seed" not in shown
    assert recipe["steps"][-1]["method"] == "uniform_noise" or any(
        s["method"] == "uniform_noise" for s in recipe["steps"]
    )
    app.checkbox(key="export.seeds").check().run()
    assert_clean(app)
    with_seeds = json.loads(app.code[0].value)
    noisy = [s for s in with_seeds["steps"] if s["method"] == "uniform_noise"]
    assert isinstance(noisy[0]["seed"], int)


def test_keeping_the_record_id_is_opt_in(app):
    goto(app, "export")
    keep = app.checkbox(key="export.keep_id")
    assert keep.value is False
    keep.check().run()
    assert_clean(app)
    assert not any("Left out (never released): person_id" in c for c in texts(app.caption))
