"""Recipes: roles validation, JSON round trip, applying to a copy."""

import pandas as pd
import pytest

from deid_core.errors import RecipeError
from deid_core.masking import RelativeRound, Truncate, UniformNoise
from deid_core.recipe import Recipe, Roles

ROLES = Roles(
    quasi_identifiers=("sex", "age", "dose"),
    direct_identifiers=("name",),
    exposure="dose",
    outcome="case",
    covariates=("age",),
    record_id="id",
)


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [1, 2, 3],
            "name": ["A", "B", "C"],
            "sex": ["M", "F", "M"],
            "age": [40.7, 51.2, 39.9],
            "dose": [0.3125, 1.2345, 0.0],
            "case": [0, 1, 0],
        }
    )


def test_json_round_trip_keeps_roles_and_steps():
    recipe = Recipe(ROLES, (RelativeRound("dose", 2), UniformNoise("age", 0.5, seed=9)))
    again = Recipe.from_json(recipe.to_json())
    assert again == recipe
    assert '"seed"' not in recipe.to_json(include_seeds=False)
    assert Recipe.from_json(recipe.to_json(include_seeds=False)).steps[1].seed is None


def test_apply_masks_a_copy_and_release_drops_identifiers(frame):
    before = frame.copy(deep=True)
    recipe = Recipe(ROLES, (RelativeRound("dose", 1), Truncate("age", decimals=0)))
    masked = recipe.apply(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert masked["dose"].tolist() == [0.3, 1.0, 0.0]
    assert masked["age"].tolist() == [40.0, 51.0, 39.0]
    released = recipe.release(frame)
    assert "name" not in released and "id" not in released
    assert "id" in recipe.release(frame, keep_record_id=True)


def test_recipe_naming_a_missing_column_is_a_clear_error(frame):
    recipe = Recipe(Roles(quasi_identifiers=("zip",)), (RelativeRound("weight", 2),))
    with pytest.raises(RecipeError, match="'zip', 'weight'"):
        recipe.apply(frame)


def test_with_steps_for_replaces_in_place():
    recipe = Recipe(ROLES, (RelativeRound("dose", 2), Truncate("age", decimals=0)))
    changed = recipe.with_steps_for("dose", [RelativeRound("dose", 3)])
    assert changed.steps == (RelativeRound("dose", 3), Truncate("age", decimals=0))
    assert recipe.with_steps_for("dose", []).steps == (Truncate("age", decimals=0),)
    assert changed.with_steps_for("sex", []).steps == changed.steps


@pytest.mark.parametrize(
    ("roles", "message"),
    [
        (dict(quasi_identifiers=("a", "a")), "twice"),
        (dict(quasi_identifiers="abc"), "list of column names"),
        (dict(direct_identifiers=("a",), quasi_identifiers=("a",)), "cannot also be released"),
        (dict(exposure="a", outcome="a"), "outcome cannot"),
        (dict(exposure="a", covariates=("a",)), "exposure cannot"),
    ],
)
def test_role_conflicts_are_rejected(roles, message):
    with pytest.raises(RecipeError, match=message):
        Roles(**roles)


def test_masking_a_direct_identifier_is_rejected():
    with pytest.raises(RecipeError, match="never released"):
        Recipe(ROLES, (RelativeRound("id", 2),))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"schema_version": 99}', "schema version 99"),
        ('{"steps": {}}', "must be a list"),
        ('{"roles": {"quasi": ["a"]}}', "unknown role"),
        ('{"colour": 1}', "unknown field"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_bad_recipe_files_get_clear_messages(text, message):
    with pytest.raises(RecipeError, match=message):
        Recipe.from_json(text)


def test_describe_lists_each_step():
    recipe = Recipe(ROLES, (RelativeRound("dose", 2),))
    assert recipe.describe() == ["dose: rounded to 2 significant digit(s)"]
    assert Recipe().describe() == ["no masking"]
    assert not recipe.is_random
    assert Recipe(ROLES, (UniformNoise("dose", 0.1),)).is_random
