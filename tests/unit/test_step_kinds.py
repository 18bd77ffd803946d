"""Each step declares the kind of column it takes, and a recipe refuses a step on a column of
the wrong kind before applying anything, with the message the step gives when applied.

The check (``Recipe.check_columns(frame)``) lets the command line refuse such a recipe before
it loads the libraries that compute results (issue 32). Its verdict is compared here with what
applying the recipe does on the same data: the same message when the step refuses, no refusal
when applying succeeds.
"""

from __future__ import annotations

import pandas as pd
import pytest

from deid_core.errors import RecipeError
from deid_core.masking import DATA_STEP_TYPES, STEP_TYPES, data_step_from_dict, step_from_dict
from deid_core.masking.base import ANY, COLUMN_KINDS
from deid_core.recipe import Recipe, Roles

N = 30


@pytest.fixture
def frame() -> pd.DataFrame:
    numbers_as_text = [str(0.5 * i) for i in range(N)]
    numbers_as_text[4] = numbers_as_text[11] = "forty"
    dates = [f"2019-03-{1 + i % 28:02d}" for i in range(N)]
    bad_dates = list(dates)
    bad_dates[2] = bad_dates[9] = "soon"
    return pd.DataFrame(
        {
            "id": range(N),
            "num": [0.1 * i for i in range(N)],
            "x": [float(i % 7) for i in range(N)],
            "text_num": numbers_as_text,
            "flag": [i % 2 == 0 for i in range(N)],
            "date": dates,
            "bad_date": bad_dates,
            "birth": [f"19{50 + i % 40}-06-15" for i in range(N)],
            "code": [f"J{10 + i % 80}.1" for i in range(N)],
            "zip": [f"{10000 + 37 * i:05d}" for i in range(N)],
            "label": ["a", "b", "c"] * (N // 3),
        }
    )


def _column(method: str, **params) -> dict:
    return {"kind": "column", "method": method, **params}


def _data(method: str, **params) -> dict:
    return {"kind": "data", "method": method, **params}


def _recipe(*specs: dict) -> Recipe:
    steps, data_steps = [], []
    for spec in specs:
        params = {k: v for k, v in spec.items() if k != "kind"}
        if spec["kind"] == "column":
            steps.append(step_from_dict(params))
        else:
            data_steps.append(data_step_from_dict(params))
    roles = Roles(quasi_identifiers=("label",), record_id="id")
    return Recipe(roles, tuple(steps), tuple(data_steps))


#: (name, a step on a column of its kind, the same step on a column of another kind)
CASES = [
    ("absolute_round", _column("absolute_round", column="num", base=1), {"column": "text_num"}),
    ("relative_round", _column("relative_round", column="num", digits=2), {"column": "flag"}),
    ("truncate", _column("truncate", column="num", decimals=0), {"column": "text_num"}),
    ("interval_group", _column("interval_group", column="num", width=1), {"column": "date"}),
    ("top_bottom_code", _column("top_bottom_code", column="num", top=2), {"column": "label"}),
    (
        "uniform_noise",
        _column("uniform_noise", column="num", half_width=1, seed=1),
        {"column": "label"},
    ),
    (
        "gaussian_noise",
        _column("gaussian_noise", column="num", sd_fraction=0.1, seed=1),
        {"column": "text_num"},
    ),
    ("microaggregate", _column("microaggregate", column="num", k=3), {"column": "text_num"}),
    (
        "kernel_smooth_column",
        _column("kernel_smooth", column="num", locations=["x"], bandwidth=1),
        {"column": "text_num"},
    ),
    (
        "kernel_smooth_location",
        _column("kernel_smooth", column="num", locations=["x"], bandwidth=1),
        {"locations": ["text_num"]},
    ),
    ("date_reduce", _column("date_reduce", column="date", to="year"), {"column": "bad_date"}),
    ("code_prefix", _column("code_prefix", column="code", length=3), {"column": "num"}),
    ("icd10_chapter", _column("icd10_chapter", column="code"), {"column": "label"}),
    ("zip3", _column("zip3", column="zip"), {"column": "label"}),
    ("relative_dates", _data("relative_dates", columns=["date"]), {"columns": ["bad_date"]}),
    ("relative_dates_numbers", _data("relative_dates", columns=["date"]), {"columns": ["num"]}),
    ("date_shift", _data("date_shift", columns=["date"], seed=1), {"columns": ["text_num"]}),
    ("age_at", _data("age_at", column="birth", reference="date"), {"reference": "bad_date"}),
    (
        "interval",
        _data("interval", start="birth", end="date", name="label"),
        {"end": "bad_date"},
    ),
    ("event_order", _data("event_order", column="date", name="label"), {"column": "bad_date"}),
    (
        "multivariate_microaggregate",
        _data("multivariate_microaggregate", columns=["num", "x"], k=3),
        {"columns": ["num", "text_num"]},
    ),
]


def _refusal(action) -> str | None:
    try:
        action()
    except RecipeError as error:
        return str(error)
    return None


@pytest.mark.parametrize(("name", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_the_check_refuses_what_applying_refuses_with_the_same_message(frame, name, good, bad):
    right = _recipe(good)
    assert _refusal(lambda: right.check_columns(frame)) is None
    right.apply(frame)  # and applying it works

    wrong = _recipe({**good, **bad})
    applied = _refusal(lambda: wrong.apply(frame))
    checked = _refusal(lambda: wrong.check_columns(frame))
    assert applied is not None, name
    assert checked == applied
    for value in ("forty", "soon", "J10", "True"):
        assert value not in checked


def test_the_message_counts_records_not_distinct_values(frame):
    recipe = _recipe(_column("absolute_round", column="text_num", base=1))
    with pytest.raises(RecipeError, match="'text_num' has 2 entries that are not numbers"):
        recipe.check_columns(frame)


def test_a_step_that_reads_what_an_earlier_step_made_is_left_to_applying(frame):
    """Dates reduced to their year are numbers: rounding them is fine, although the column
    in the data is dates."""
    recipe = _recipe(
        _column("date_reduce", column="date", to="year"),
        _column("absolute_round", column="date", base=10),
    )
    recipe.check_columns(frame)
    assert set(recipe.apply(frame)["date"]) == {2020}  # 2019 to the nearest 10


def test_a_whole_data_step_after_one_that_removes_records_is_left_to_applying(frame):
    """Record suppression removes the one record whose value is not a number, so the
    microaggregation after it sees numbers only: the check must not refuse it."""
    data = frame.assign(label=["lonely"] + ["a", "b"] * ((N - 1) // 2) + ["a"] * ((N - 1) % 2))
    data.loc[0, "text_num"] = "forty"
    data.loc[1:, "text_num"] = [str(float(i)) for i in range(1, N)]
    recipe = _recipe(
        _data("record_suppression", k=2, limit=0.5),
        _data("multivariate_microaggregate", columns=["num", "text_num"], k=3),
    )
    recipe.check_columns(data)
    assert len(recipe.apply(data)) == N - 1


def test_a_column_of_names_or_a_schema_is_checked_for_names_only(frame):
    recipe = _recipe(_column("absolute_round", column="text_num", base=1))
    recipe.check_columns(frame.columns)
    recipe.check_columns(dict.fromkeys(frame.columns, "text"))
    with pytest.raises(RecipeError, match="data do not have: 'text_num'"):
        recipe.check_columns(["id", "label", "num"])


@pytest.mark.parametrize("method", [*STEP_TYPES, *DATA_STEP_TYPES])
def test_every_step_declares_the_kind_it_takes(method):
    cls = {**STEP_TYPES, **DATA_STEP_TYPES}[method]
    assert cls.takes in COLUMN_KINDS
    tested = {case[1]["method"] for case in CASES}
    assert cls.takes == ANY or method in tested, f"{method}: add a case to CASES"


def test_replaced_columns_are_left_to_the_caller(frame):
    """The search replaces the steps of the columns it searches: neither those steps nor what
    a whole-data step reads of those columns is checked; other steps still are."""
    recipe = _recipe(
        _column("absolute_round", column="text_num", base=1),
        _data("relative_dates", columns=["bad_date"]),
    )
    recipe.check_columns(frame, replaced=["text_num", "bad_date"])
    with pytest.raises(RecipeError, match="'bad_date' has 2 entries that are not dates"):
        recipe.check_columns(frame, replaced=["text_num"])
    with pytest.raises(RecipeError, match="'text_num' has 2 entries that are not numbers"):
        recipe.check_columns(frame, replaced=["bad_date"])


def test_one_bad_entry_is_counted_in_the_singular():
    from deid_core.masking.base import numeric_values

    with pytest.raises(RecipeError, match=r"'c' has 1 entry that is not a number\. Clean it "):
        numeric_values(pd.Series(["1", "x", "3"]), "c", "Rounding")
    with pytest.raises(RecipeError, match=r"'c' has 2 entries that are not numbers\. Clean them "):
        numeric_values(pd.Series(["a", "b", "3"]), "c", "Rounding")
