"""Shared configurations: the link parameter, the version-2 configuration file, version-1
recipes still loading, and the command line replaying both versions."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core.errors import RecipeError
from deid_core.masking import (
    AbsoluteRound,
    DateReduce,
    GaussianNoise,
    IntervalGroup,
    KernelSmooth,
    MergeLevels,
    RelativeRound,
    TopBottomCode,
    Truncate,
    UniformNoise,
)
from deid_core.recipe import PLAIN_SCHEMA_VERSION, SCHEMA_VERSION, Recipe, Roles
from deid_core.share import (
    LINK_VERSION,
    MAX_PARAM_CHARS,
    Configuration,
    ModelSettings,
    ReleaseSettings,
    SharedConfig,
    ShareError,
    configuration_json,
    decode_config,
    decode_payload,
    encode_config,
    load_configuration,
)

ROOT = Path(__file__).resolve().parents[2]

ROLES = Roles(
    quasi_identifiers=("sex", "age", "dose", "city"),
    exposure="dose",
    outcome="death",
    covariates=("sex",),
    record_id="person_id",
)
COLUMNS = ("person_id", "sex", "age", "dose", "city", "death", "visit", "x", "y", "pt")


def pack(payload) -> str:
    """Encode any JSON value as a link parameter (to build wrong or hand-made payloads)."""
    raw = json.dumps(payload).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw)).decode("ascii").rstrip("=")


# ---------------------------------------------------------------------------- strategies
finite = st.floats(min_value=0.01, max_value=1000, allow_nan=False, allow_infinity=False)
seeds = st.one_of(st.none(), st.integers(min_value=0, max_value=2**31 - 1))
numeric_steps = st.one_of(
    st.builds(RelativeRound, st.sampled_from(["age", "dose"]), st.integers(1, 6)),
    st.builds(AbsoluteRound, st.sampled_from(["age", "dose"]), decimals=st.integers(-2, 4)),
    st.builds(Truncate, st.sampled_from(["age", "dose"]), base=finite),
    st.builds(IntervalGroup, st.sampled_from(["age", "dose"]), width=finite),
    st.builds(TopBottomCode, st.sampled_from(["age", "dose"]), top=finite),
    st.builds(UniformNoise, st.sampled_from(["age", "dose"]), half_width=finite, seed=seeds),
    st.builds(
        GaussianNoise,
        st.sampled_from(["age", "dose"]),
        sd_fraction=st.floats(0.01, 2.0),
        floor=st.one_of(st.none(), st.just(0.0)),
        seed=seeds,
    ),
)
other_steps = st.one_of(
    st.builds(
        MergeLevels,
        st.just("city"),
        st.just({"north": ["A", "B"], "south": ["C"]}),
    ),
    st.builds(DateReduce, st.just("visit"), st.sampled_from(["year", "year-month"])),
    st.builds(
        KernelSmooth,
        st.just("death"),
        locations=st.just(("x", "y")),
        bandwidth=st.floats(0.05, 5.0),
    ),
)
recipes = st.builds(
    lambda steps: Recipe(ROLES, tuple(steps)),
    st.lists(st.one_of(numeric_steps, other_steps), max_size=6),
)
models = st.one_of(
    st.just(ModelSettings()),
    st.just(ModelSettings("poisson", offset="pt")),
    st.just(ModelSettings("linear")),
    st.just(ModelSettings(factors=("age",), references={"age": "40", "city": "Osaka"})),
    st.just(ModelSettings("cox", time="visit", ties="efron", factors=("age",))),
)
contexts = st.builds(
    ReleaseSettings,
    matching_rule=st.sampled_from(["exact", "same_masking", "nearest"]),
    min_cell_size=st.integers(2, 1000),
    release_context=st.sampled_from(["public", "non_public"]),
    pr_attempt=st.floats(0, 1),
    pr_breach=st.floats(0, 1),
    replicates=st.integers(1, 500),
    missing=st.sampled_from(["category", "wildcard"]),
    bf_method=st.sampled_from(["exact", "sdcmicro"]),
)
data_sets = st.one_of(
    st.builds(dict, demo=st.sampled_from(["cohort", "flchain"])),
    st.builds(dict, columns=st.just(COLUMNS)),
)


def _recipe_dicts_equal_without_seeds(a: Recipe, b: Recipe) -> bool:
    return a.to_dict(include_seeds=False) == b.to_dict(include_seeds=False)


# ---------------------------------------------------------------------------- the link
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipe=recipes, model=models, context=contexts, data=data_sets)
def test_link_round_trip(recipe, model, context, data):
    config = SharedConfig(recipe, model, context, **data)
    encoded = encode_config(config)
    assert len(encoded) <= MAX_PARAM_CHARS
    assert all(c.isalnum() or c in "-_" for c in encoded)  # safe in a URL as it is
    back = decode_config(encoded)
    assert back == config
    assert back.recipe == recipe.without_seeds()
    assert (back.model, back.context) == (model, context)


@settings(max_examples=40, deadline=None)
@given(recipe=recipes, seed=st.integers(0, 2**31 - 1))
def test_the_link_never_carries_seeds(recipe, seed):
    seeded = recipe.with_seed(seed)
    payload = decode_payload(encode_config(SharedConfig(seeded, columns=COLUMNS)))
    for step in payload["config"]["steps"]:
        assert "seed" not in step
    assert payload["v"] == LINK_VERSION
    assert payload["config"]["schema_version"] == PLAIN_SCHEMA_VERSION


def test_the_link_carries_no_data_values():
    """Only the recipe and column names: none of the data's values appear once decoded."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "person_id": [f"PID-{i:05d}" for i in range(50)],
            "sex": rng.choice(["female-x", "male-y"], 50),
            "age": rng.integers(20, 80, 50) + 0.123456,
            "dose": rng.gamma(1.0, 0.5, 50).round(6) + 1e-7,
            "city": rng.choice(["A", "B", "C"], 50),
            "death": rng.integers(0, 2, 50),
        }
    )
    recipe = Recipe(ROLES, (RelativeRound("dose", 2), UniformNoise("age", 1.0, seed=12345)))
    config = SharedConfig(recipe, columns=tuple(frame.columns))
    encoded = encode_config(config)
    payload = decode_payload(encoded)
    text = json.dumps(payload)
    assert set(payload) == {"v", "data", "config"}
    assert set(payload["data"]) == {"columns"}
    assert set(payload["config"]) == {"schema_version", "roles", "steps", "model", "context"}
    assert "12345" not in text
    for column in ("person_id", "sex", "age", "dose"):
        for value in frame[column].astype(str).unique():
            assert value not in text, (column, value)


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("", "empty"),
        ("not base64 !", "damaged"),
        ("eJzLSM3JyQcABiwCFQ", "damaged"),  # valid zlib of 'hello': not JSON
        ("A" * (MAX_PARAM_CHARS + 1), "too long"),
        (pack({"v": 2, "data": {"demo": "cohort"}, "config": {}}), "newer version"),
        (pack({"v": "x", "data": {}, "config": {}}), "format version"),
        (pack([1, 2]), "not an object"),
        (pack({"v": 1, "data": {"demo": "nope"}, "config": {}}), "demo data set 'nope'"),
        (pack({"v": 1, "data": {}, "config": {}}), "no data set"),
        (
            pack({"v": 1, "data": {"demo": "cohort"}, "config": {"schema_version": 7}}),
            "schema version 7",
        ),
        (
            pack(
                {
                    "v": 1,
                    "data": {"demo": "cohort"},
                    "config": {"schema_version": 2, "context": {"min_cell_size": 1}},
                }
            ),
            "min_cell_size",
        ),
        (
            pack(
                {
                    "v": 1,
                    "data": {"demo": "cohort"},
                    "config": {"schema_version": 2, "model": {"family": "cubist"}},
                }
            ),
            "unknown family",
        ),
        (
            pack(
                {
                    "v": 1,
                    "data": {"columns": ["a"]},
                    "config": {"schema_version": 2, "roles": {"quasi_identifiers": ["b"]}},
                }
            ),
            "does not list: 'b'",
        ),
    ],
)
def test_bad_parameters_get_clear_messages(param, message):
    with pytest.raises(ShareError, match=message):
        decode_config(param)


def test_truncated_parameters_are_damaged_not_a_traceback():
    recipe = Recipe(ROLES, (RelativeRound("dose", 2), Truncate("age", decimals=0)))
    encoded = encode_config(SharedConfig(recipe, demo="cohort"))
    for cut in range(1, len(encoded) - 1, 7):
        with pytest.raises(ShareError, match="damaged"):
            decode_config(encoded[:cut])


def test_a_zip_bomb_is_refused():
    raw = json.dumps({"v": 1, "pad": " " * 2_000_000}).encode()
    bomb = base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")
    assert len(bomb) < MAX_PARAM_CHARS
    with pytest.raises(ShareError, match="too large"):
        decode_config(bomb)


def test_an_oversized_configuration_cannot_be_encoded():
    columns = tuple(f"column_with_a_long_name_{i:05d}_{'x' * (i % 37)}" for i in range(3000))
    config = SharedConfig(Recipe(Roles(quasi_identifiers=columns[:5])), columns=columns)
    with pytest.raises(ShareError, match="too long for a link"):
        encode_config(config)


# ---------------------------------------------------------------------------- recipe versions
VERSION_1 = """{
  "schema_version": 1,
  "roles": {"quasi_identifiers": ["sex", "age", "dose"], "direct_identifiers": [],
            "exposure": "dose", "outcome": "death", "covariates": ["sex"],
            "record_id": "person_id"},
  "steps": [{"method": "relative_round", "column": "dose", "digits": 2},
            {"method": "truncate", "column": "age", "base": null, "decimals": 0},
            {"method": "uniform_noise", "column": "age", "half_width": 0.5, "floor": null,
             "seed": 7}]
}"""


def test_a_version_1_recipe_written_by_hand_still_loads():
    recipe = Recipe.from_json(VERSION_1)
    assert recipe.roles.quasi_identifiers == ("sex", "age", "dose")
    assert recipe.roles.record_id == "person_id"
    assert recipe.steps == (
        RelativeRound("dose", 2),
        Truncate("age", decimals=0),
        UniformNoise("age", 0.5, seed=7),
    )
    config = load_configuration(VERSION_1)
    assert config.recipe == recipe and config.model is None and config.context is None
    # A file without a version is a version-1 file; version 1 has no model / context.
    legacy = json.loads(VERSION_1)
    del legacy["schema_version"]
    assert Recipe.from_dict(legacy) == recipe
    with pytest.raises(RecipeError, match="unknown field"):
        Recipe.from_dict({**json.loads(VERSION_1), "model": {"family": "logistic"}})


def test_recipes_are_written_as_version_2():
    recipe = Recipe.from_json(VERSION_1)
    data = json.loads(recipe.to_json())
    assert SCHEMA_VERSION == 3 and data["schema_version"] == PLAIN_SCHEMA_VERSION == 2
    assert set(data) == {"schema_version", "roles", "steps"}
    assert Recipe.from_json(recipe.to_json()) == recipe


@settings(max_examples=40, deadline=None)
@given(recipe=recipes, model=models, context=contexts)
def test_version_2_configuration_round_trip(recipe, model, context):
    text = configuration_json(recipe, model, context, include_seeds=True)
    data = json.loads(text)
    assert data["schema_version"] == 2
    assert data["model"] == model.to_dict()
    assert data["context"] == context.to_dict()
    config = load_configuration(text)
    assert config == Configuration(recipe, model, context)
    assert Recipe.from_json(text) == recipe  # a plain recipe reader skips the sections


def test_configuration_json_leaves_seeds_out_by_default():
    recipe = Recipe(ROLES, (UniformNoise("age", 0.5, seed=99),))
    text = configuration_json(recipe, {"family": "logistic"}, {"release_context": "non_public"})
    data = json.loads(text)
    assert "seed" not in data["steps"][0]
    assert data["context"]["release_context"] == "non_public"
    assert data["context"]["min_cell_size"] == 5  # missing settings take their defaults


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schema_version": 4}', "schema version 4.*newer release"),
        ('{"schema_version": "two"}', "schema version two"),
        ('{"schema_version": 2, "model": [1]}', "'model' must be an object"),
        ('{"schema_version": 2, "colour": 1}', "unknown field"),
        ('{"schema_version": 2, "context": {"speed": 1}}', "unknown setting"),
        ('{"schema_version": 2, "context": {"pr_breach": 2}}', "pr_breach"),
        ('{"schema_version": 2, "context": {"bf_method": "approx"}}', "'exact', 'sdcmicro'"),
        ('{"schema_version": 2, "model": {"family": "poisson", "trials": "n"}}', "Model"),
        ('{"schema_version": 2, "model": {"family": "cox"}}', "follow-up time"),
        ('{"schema_version": 2, "model": {"factors": "race"}}', "'factors' must be a list"),
        ('{"schema_version": 2, "model": {"references": {"race": 1}}}', "non-empty label"),
        ('{"schema_version": 2, "model": {"family": "cox", "time": "t", "ties": "x"}}', "ties"),
    ],
)
def test_bad_configuration_files_get_clear_messages(text, message):
    with pytest.raises(RecipeError, match=message):
        load_configuration(text)


def test_model_settings_written_before_factors_and_cox_still_read():
    old = '{"schema_version": 2, "model": {"family": "poisson", "offset": "pt", "trials": null}}'
    model = load_configuration(old).model
    assert model == ModelSettings("poisson", offset="pt")
    assert (model.factors, model.references, model.time, model.ties) == ((), (), None, "breslow")
    new = ModelSettings("cox", time="t", factors=("stage",), references={"stage": "1"})
    assert new.to_dict()["references"] == {"stage": "1"}
    assert new.columns() == ["t", "stage", "stage"]


def test_configuration_checks_model_columns_too():
    config = Configuration(Recipe(ROLES), ModelSettings("poisson", offset="years"))
    assert config.missing_columns(COLUMNS) == ["years"]
    with pytest.raises(RecipeError, match="'years'"):
        config.check_columns(COLUMNS)


# ---------------------------------------------------------------------------- command line
def _next_year(n: int = 80) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 80, n),
            "dose": rng.gamma(1.0, 0.5, n).round(4),
            "death": rng.integers(0, 2, n),
        }
    )


@pytest.mark.parametrize("version", [1, 2])
def test_cli_apply_replays_recipes_of_both_versions(tmp_path, version):
    data_path = tmp_path / "next_year.csv"
    _next_year().to_csv(data_path, index=False)
    recipe = Recipe.from_json(VERSION_1)
    if version == 1:
        text = VERSION_1
    else:
        text = configuration_json(
            recipe,
            ModelSettings("logistic"),
            ReleaseSettings(release_context="non_public", min_cell_size=11),
            include_seeds=True,
        )
        assert json.loads(text)["schema_version"] == 2
    recipe_path = tmp_path / "recipe.json"
    recipe_path.write_text(text)
    out = tmp_path / "out.csv"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "deid_core",
            "apply",
            str(data_path),
            "--recipe",
            str(recipe_path),
            "-o",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    released = pd.read_csv(out)
    expected = recipe.release(_next_year())
    assert list(released.columns) == list(expected.columns)
    assert "person_id" not in released.columns
    np.testing.assert_allclose(released["dose"], expected["dose"])
    np.testing.assert_allclose(released["age"], expected["age"])


def test_cli_apply_says_plainly_when_the_version_is_unknown(tmp_path):
    data_path = tmp_path / "next_year.csv"
    _next_year().to_csv(data_path, index=False)
    recipe_path = tmp_path / "recipe.json"
    recipe_path.write_text('{"schema_version": 9, "roles": {}, "steps": []}')
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "deid_core",
            "apply",
            str(data_path),
            "--recipe",
            str(recipe_path),
            "-o",
            str(tmp_path / "out.csv"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "schema version 9" in result.stderr
    assert "Traceback" not in result.stderr
