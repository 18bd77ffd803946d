"""Hierarchy files in ARX's format (one row per value, one column per level, ';' separated):
each level against a look-up by hand, monotone classes on random consistent hierarchies,
clear messages for broken files and columns, the JSON and command-line round trips."""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.cli import main
from deid_core.errors import RecipeError
from deid_core.masking import HierarchyLevel, hierarchy_from_csv, step_from_dict
from deid_core.recipe import Recipe, Roles

ARX_FILE = """A41.9;A41;A00-B99;*
A41.0;A41;A00-B99;*
B34.9;B34;A00-B99;*
J18.9;J18;J00-J99;*
J44.1; J44 ;J00-J99;*

"""


def test_each_level_is_the_files_column_worked_example():
    rows = hierarchy_from_csv(ARX_FILE)
    assert rows[4] == ("J44.1", "J44", "J00-J99", "*")  # spaces stripped, blank line skipped
    column = pd.Series(["J18.9", "A41.0", None, "B34.9", "A41.9", "J44.1"])
    expected = {
        0: ["J18.9", "A41.0", None, "B34.9", "A41.9", "J44.1"],
        1: ["J18", "A41", None, "B34", "A41", "J44"],
        2: ["J00-J99", "A00-B99", None, "A00-B99", "A00-B99", "J00-J99"],
        3: ["*", "*", None, "*", "*", "*"],
    }
    for level, values in expected.items():
        step = HierarchyLevel("dx", level=level, hierarchy=rows)
        assert _listed(step.apply(column)) == values
    assert HierarchyLevel("dx", hierarchy=rows).sweep_values() == [0, 1, 2, 3]
    # whole numbers read back as floats match the file's "1"
    ages = HierarchyLevel("age", hierarchy=[["1", "0-4"], ["7", "5-9"]])
    assert _listed(ages.apply(pd.Series([1.0, 7.0, None]))) == ["0-4", "5-9", None]


def _listed(series: pd.Series) -> list:
    """The values, missing ones as None."""
    return [None if pd.isna(v) else v for v in series]


def test_broken_files_and_columns_get_clear_messages():
    with pytest.raises(RecipeError, match="different numbers of levels"):
        HierarchyLevel("dx", hierarchy=[["a", "x", "*"], ["b", "x"]])
    with pytest.raises(RecipeError, match="not consistent at level 2: 1 row"):
        HierarchyLevel("dx", hierarchy=[["a", "x", "p"], ["b", "x", "q"], ["c", "y", "q"]])
    with pytest.raises(RecipeError, match="more than one row"):
        HierarchyLevel("dx", hierarchy=[["a", "x"], ["a", "y"]])
    with pytest.raises(RecipeError, match="one column only"):
        HierarchyLevel("dx", hierarchy=[["a"], ["b"]])
    with pytest.raises(RecipeError, match="level"):
        HierarchyLevel("dx", level=3, hierarchy=[["a", "x"], ["b", "x"]])
    with pytest.raises(RecipeError, match="lists the rows"):
        HierarchyLevel("dx", hierarchy="a;x")
    with pytest.raises(RecipeError, match="no rows"):
        hierarchy_from_csv("\n \n")
    step = HierarchyLevel("dx", level=1, hierarchy=[["a", "x"], ["b", "x"]])
    with pytest.raises(RecipeError, match=r"2 distinct value\(s\) of 'dx' \(3 records\)"):
        step.apply(pd.Series(["a", "c", "d", "d"]))
    with pytest.raises(RecipeError, match="no row in the hierarchy"):  # even at level 0
        step.with_params(level=0).apply(pd.Series(["a", "c"]))


@st.composite
def _hierarchies(draw):
    """A random consistent hierarchy: values 0..n-1, each level grouping the labels of the
    level below by a random map onto fewer labels."""
    n = draw(st.integers(1, 12))
    depth = draw(st.integers(1, 4))
    labels = [f"v{i}" for i in range(n)]
    columns = [labels]
    for level in range(1, depth + 1):
        below = sorted(set(columns[-1]))
        groups = draw(st.lists(st.integers(0, 3), min_size=len(below), max_size=len(below)))
        up = {b: f"L{level}g{g}" for b, g in zip(below, groups, strict=True)}
        columns.append([up[v] for v in columns[-1]])
    return [list(row) for row in zip(*columns, strict=True)]


@settings(max_examples=60, deadline=None)
@given(_hierarchies(), st.data())
def test_property_levels_are_look_ups_and_classes_only_merge(rows, data):
    values = [row[0] for row in rows]
    column = pd.Series(data.draw(st.lists(st.sampled_from(values), min_size=1, max_size=30)))
    text = "\n".join(";".join(row) for row in rows)
    parsed = hierarchy_from_csv(text)
    released = []
    for level in range(len(rows[0])):
        out = HierarchyLevel("c", level=level, hierarchy=parsed).apply(column).tolist()
        by_hand = [next(row[level] for row in rows if row[0] == v) for v in column]
        assert out == by_hand
        released.append(out)
    for low, high in itertools.pairwise(released):
        # records that share a class at a level share it at the next one
        for i in range(len(column)):
            for j in range(len(column)):
                if low[i] == low[j]:
                    assert high[i] == high[j]


def test_json_and_command_line_round_trips(tmp_path, capsys):
    rows = hierarchy_from_csv(ARX_FILE)
    step = HierarchyLevel("dx", level=1, hierarchy=rows)
    assert step_from_dict(json.loads(json.dumps(step.to_dict()))) == step
    recipe = Recipe(Roles(quasi_identifiers=("dx", "sex")), (step,))
    assert Recipe.from_json(recipe.to_json()) == recipe
    frame = pd.DataFrame(
        {"dx": ["J18.9", "A41.0", "A41.9", "J44.1", "B34.9"], "sex": ["F", "M", "F", "M", "F"]}
    )
    data, recipe_file, out = tmp_path / "d.csv", tmp_path / "r.json", tmp_path / "out.csv"
    frame.to_csv(data, index=False)
    recipe_file.write_text(recipe.to_json())
    code = main(["apply", str(data), "--recipe", str(recipe_file), "-o", str(out), "--keep-order"])
    assert code == 0
    released = pd.read_csv(out)
    assert released["dx"].tolist() == ["J18", "A41", "A41", "J44", "B34"]
    capsys.readouterr()


def test_the_search_tries_every_level_of_the_recipes_hierarchy():
    from deid_core.search import default_space

    rows = hierarchy_from_csv(ARX_FILE)
    frame = pd.DataFrame(
        {"dx": ["J18.9", "A41.0", "A41.9", "J44.1", "B34.9"] * 4, "sex": list("FMFMF") * 4}
    )
    base = Recipe(
        Roles(quasi_identifiers=("dx", "sex")), (HierarchyLevel("dx", level=2, hierarchy=rows),)
    )
    space = default_space(frame, base, columns=("dx",))
    (dx,) = space.columns
    assert [s[0].level if s else 0 for s in dx.settings] == [0, 1, 2, 3]
    for choice, setting in enumerate(dx.settings):
        recipe = space.recipe(base, [choice])
        assert recipe.steps_for("dx") == setting
