"""Shareable links in the running app: ?cfg=... restores a demo configuration, the sidebar's
"Copy link" shows the current one, and a link made on an uploaded file waits for the upload."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import app_helpers  # noqa: F401  (puts the repository on sys.path)
import numpy as np
import pandas as pd
from app_helpers import APP, TIMEOUT, assert_clean, goto, texts
from streamlit.testing.v1 import AppTest

from deid_core.datasets import DEMO_DATASETS
from deid_core.masking import RelativeRound, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.share import (
    PARAM,
    ModelSettings,
    ReleaseSettings,
    SharedConfig,
    configuration_json,
    decode_config,
    encode_config,
)


def _open(param: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[PARAM] = param
    at.run()
    assert_clean(at)
    return at


def _link(at: AppTest) -> str:
    links = [c.value for c in at.sidebar.code if f"{PARAM}=" in c.value]
    assert links, "no link in the sidebar"
    return links[0]


def _decoded(link: str) -> SharedConfig:
    (value,) = parse_qs(urlsplit(link).query)[PARAM]
    return decode_config(value)


def flchain_config() -> SharedConfig:
    demo = DEMO_DATASETS["flchain"]
    roles = demo.roles
    roles = Roles(**{**roles.to_dict(), "quasi_identifiers": ("age", "sex")})
    recipe = Recipe(roles, (RelativeRound("age", 1), UniformNoise("kappa", 0.2, seed=5)))
    context = ReleaseSettings(release_context="non_public", min_cell_size=11, pr_breach=0.4)
    return SharedConfig(recipe, ModelSettings("linear"), context, demo="flchain")


def test_a_link_restores_demo_roles_steps_model_and_context():
    config = flchain_config()
    at = _open(encode_config(config))
    ss = at.session_state
    assert ss["deid.dataset"].demo_key == "flchain"
    recipe = ss["deid.recipe"]
    assert recipe.roles == config.recipe.roles
    assert recipe.without_seeds() == config.recipe  # seeds: this session's own
    noise = recipe.steps[1]
    assert noise.seed is not None
    assert ss["deid.workspace"].model_family == "linear"
    settings = ss["deid.settings"]
    assert settings["release_context"] == "non_public"
    assert settings["min_cell_size"] == 11 and settings["pr_breach"] == 0.4
    # The sidebar shows the restored context, and the page says what happened.
    assert at.radio(key="deid.w.release_context").value == "non_public"
    assert any("Opened the shared configuration" in t for t in texts(at.success))
    assert PARAM not in at.query_params  # consumed: no stale link in the address bar
    # The link of the restored session describes the same configuration.
    assert _decoded(_link(at)) == config


def test_copy_link_follows_the_current_configuration(app):
    first = _decoded(_link(app))
    assert first.demo == "cohort"
    assert first.context.release_context == "public"
    app.radio(key="deid.w.release_context").set_value("non_public").run()
    assert_clean(app)
    link = _link(app)
    assert link.startswith("?")  # AppTest has no page address: the query string alone
    changed = _decoded(link)
    assert changed.context.release_context == "non_public"
    assert changed.recipe == app.session_state["deid.recipe"].without_seeds()
    assert "seed" not in str(changed.to_dict())


def test_a_bad_link_is_a_plain_message_and_the_demo_opens():
    at = _open("this-is-not-a-configuration")
    errors = texts(at.error)
    assert any("shared link could not be used" in e and "damaged" in e for e in errors), errors
    assert at.session_state["deid.dataset"].demo_key == "cohort"
    too_long = _open("A" * 9000)
    assert any("bound 'link_chars'" in e for e in texts(too_long.error))


def _upload_frame(n: int = 60, drop: str | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 80, n),
            "dose": rng.gamma(1.0, 0.5, n).round(3),
            "death": rng.integers(0, 2, n),
        }
    )
    return frame.drop(columns=[drop]) if drop else frame


def upload_config() -> SharedConfig:
    roles = Roles(
        quasi_identifiers=("sex", "age"),
        exposure="dose",
        outcome="death",
        covariates=("sex",),
        record_id="person_id",
    )
    recipe = Recipe(roles, (RelativeRound("dose", 1),))
    context = ReleaseSettings(min_cell_size=20)
    columns = tuple(_upload_frame().columns)
    return SharedConfig(recipe, ModelSettings(), context, columns=columns)


def test_an_upload_link_waits_for_a_file_with_the_same_columns():
    config = upload_config()
    at = _open(encode_config(config))
    info = " ".join(texts(at.info))
    assert "waiting for its data" in info and "'dose'" in info
    assert at.session_state["deid.dataset"].demo_key == "cohort"  # nothing applied yet
    goto(at, "data")
    # A file without 'dose': not applied, and the page says which column is missing.
    at.file_uploader(key="data.upload").upload(
        "wrong.csv", _upload_frame(drop="dose").to_csv(index=False).encode(), "text/csv"
    )
    at.run()
    assert_clean(at)
    warnings = texts(at.warning)
    assert any("does not have the column(s) 'dose'" in w for w in warnings), warnings
    assert at.session_state["deid.recipe"].steps == ()
    # The right file: the configuration is applied.
    at.file_uploader(key="data.upload").upload(
        "next_year.csv", _upload_frame().to_csv(index=False).encode(), "text/csv"
    )
    at.run()
    assert_clean(at)
    recipe = at.session_state["deid.recipe"]
    assert recipe == config.recipe
    assert at.session_state["deid.settings"]["min_cell_size"] == 20
    assert any("Applied the shared configuration" in t for t in texts(at.success))
    assert not any("waiting for its data" in t for t in texts(at.info))


def test_recipe_import_on_the_data_page(app, tmp_path):
    goto(app, "data")
    demo = DEMO_DATASETS["cohort"]
    roles = demo.roles
    recipe = Recipe(roles, (RelativeRound("stomach_dose_gy", 1),))
    text = configuration_json(recipe, context={"release_context": "non_public"})
    app.file_uploader(key="data.recipe_upload").upload(
        "recipe.json", text.encode(), "application/json"
    )
    app.run()
    assert_clean(app)
    assert app.session_state["deid.recipe"] == recipe
    assert app.session_state["deid.settings"]["release_context"] == "non_public"
    assert app.radio(key="deid.w.release_context").value == "non_public"
    assert any("Applied the recipe 'recipe.json'" in t for t in texts(app.success))
    # A recipe naming columns the data lack: a plain error, nothing changes.
    bad = Recipe(Roles(quasi_identifiers=("shoe_size",)))
    app.file_uploader(key="data.recipe_upload").upload(
        "other.json", bad.to_json().encode(), "application/json"
    )
    app.run()
    assert_clean(app)
    assert any("'shoe_size'" in e and "not applied" in e for e in texts(app.error))
    assert app.session_state["deid.recipe"] == recipe
