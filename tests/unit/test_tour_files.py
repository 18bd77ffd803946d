"""The tour files: every one loads and its recipes fit its demo; a broken file is refused with a
message naming the file and the field; the engine fills templates and checks expected figures."""

from pathlib import Path

import pytest

from dashboard.tours import TOURS, TourFileError, live_figures, load_tours
from dashboard.tours.content import TOUR_FOLDER, load_tour
from dashboard.tours.engine import UNAVAILABLE
from dashboard.tours.figure_functions import FIGURE_FUNCTIONS, FigureFunction
from deid_core.datasets import load_demo
from deid_core.recipe import Recipe

SMALL_TOUR = """
title = "A small tour"
source = "A paper (2020), Table 1."
order = 1
exact = ["The race example."]
shape_only = ["Nothing."]

[[steps]]
title = "Counting"
text = "Count the records."
demo = "cohort"
question = "Which record is unique?"
page = "app_pages/uniqueness.py"
page_label = "Open the Record uniqueness page"

[steps.recipe]
base = "demo"

[steps.compute.race]
function = "value_counts_uniqueness"
column = "race"
counts = { Chinese = 150, Japanese = 50, Korean = 4, Vietnamese = 1 }

[[steps.figures]]
kind = "check"
label = "Unique records (%)"
computed = "race.uniques_pct"
expected = "100/205"
decimals = 2
citation = "Page 1: one record (0.49 percent) is unique."
note = "{race.uniques} record of {race.records:,}"

[[steps.figures]]
kind = "table"
label = "The {race.records} records"
table = "race.table"
"""


def write(folder: Path, text: str, name: str = "small.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_every_tour_file_loads_in_its_order():
    files = sorted(path.stem for path in TOUR_FOLDER.glob("*.toml"))
    assert sorted(TOURS) == files
    orders = [tour.order for tour in TOURS.values()]
    assert orders == sorted(orders)
    assert list(TOURS) == ["cologne", "el_emam", "naaccr", "zhou", "roc"]


@pytest.mark.parametrize("tour_key", list(TOURS))
def test_every_step_recipe_fits_its_demo(tour_key):
    for step in TOURS[tour_key].steps:
        recipe = step.recipe()
        recipe.check_columns(load_demo(step.demo).columns)
        assert Recipe.from_json(recipe.to_json()) == recipe


def test_a_small_tour_loads_and_its_figures_agree(tmp_path):
    tour = load_tour(write(tmp_path, SMALL_TOUR))
    assert tour.key == "small" and tour.demo == "cohort"
    check, table = live_figures(tour.steps[0], Recipe())
    assert (check.kind, check.value, check.expected, check.ok) == ("check", "0.49", "0.49", True)
    assert check.note == "1 record of 205"
    assert table.label == "The 205 records"
    assert table.value["records"].tolist() == [150, 50, 4, 1]


def test_a_check_that_disagrees_says_so(tmp_path):
    tour = load_tour(write(tmp_path, SMALL_TOUR.replace('"100/205"', '"1/205"')))
    check, _ = live_figures(tour.steps[0], Recipe())
    assert (check.value, check.expected, check.ok) == ("0.49", "0.00", False)


def test_a_text_expectation_is_compared_as_shown(tmp_path):
    text = SMALL_TOUR.replace('computed = "race.uniques_pct"', 'computed = "race.uniques"')
    text = text.replace('expected = "100/205"\ndecimals = 2', 'expected = "1"')
    check, _ = live_figures(load_tour(write(tmp_path, text)).steps[0], Recipe())
    assert (check.value, check.expected, check.ok) == ("1", "1", True)


@pytest.fixture
def probe(monkeypatch):
    """A figure function that returns a missing value, or has nothing to show (no steps)."""

    def probe(recipe, *, flag: bool = True):
        from dashboard.tours.figure_functions import FigureUnavailable

        if not recipe.steps:
            raise FigureUnavailable("The recipe has no steps.")
        return {"missing": None, "flag": flag}

    monkeypatch.setitem(
        FIGURE_FUNCTIONS, "probe", FigureFunction("probe", probe, ("missing", "flag"))
    )


PROBE_TOUR = (
    SMALL_TOUR
    + """
[steps.compute.probe]
function = "probe"
flag = false

[[steps.figures]]
kind = "metric"
label = "Missing"
value = "{probe.missing:.3f}"

[[steps.figures]]
kind = "text"
label = "Flagged"
when = "probe.flag"
text = "The flag is set."
otherwise = "The flag is not set."

[[steps.figures]]
kind = "metric"
label = "Shown only when flagged"
when = "probe.flag"
value = "yes"
"""
)


def test_missing_values_when_and_otherwise(tmp_path, probe):
    step = load_tour(write(tmp_path, PROBE_TOUR)).steps[0]
    masked = Recipe.from_dict(
        {"steps": [{"method": "relative_round", "column": "dose", "digits": 2}]}
    )
    figures = live_figures(step, masked)
    assert [f.label for f in figures] == [
        "Unique records (%)",
        "The 205 records",
        "Missing",
        "Flagged",
    ]
    assert figures[2].value == UNAVAILABLE
    assert figures[3].value == "The flag is not set."


def test_an_unavailable_computation_is_one_text_in_place_of_its_figures(tmp_path, probe):
    text = PROBE_TOUR.replace(
        "flag = false", 'flag = false\nif_unavailable = { label = "Nothing to show" }'
    )
    figures = live_figures(load_tour(write(tmp_path, text)).steps[0], Recipe())
    assert [f.kind for f in figures] == ["check", "table", "text"]
    assert (figures[2].label, figures[2].value) == ("Nothing to show", "The recipe has no steps.")


BROKEN = [
    # (old, new, the message's place and field)
    ('title = "A small tour"\n', "", "small.toml, 'title': missing"),
    ("order = 1", 'order = "first"', "small.toml, 'order': must be a whole number"),
    ('exact = ["The race example."]', "exact = []", "'exact': must be a non-empty list"),
    ('demo = "cohort"', 'demo = "nope"', "small.toml, step 1, 'demo': 'nope' is not a demo"),
    (
        '"app_pages/uniqueness.py"',
        '"app_pages/nope.py"',
        "step 1, 'page': 'app_pages/nope.py' is not a page",
    ),
    (
        'text = "Count the records."\n',
        'text = "Count."\ntxet = "x"\n',
        "step 1, 'txet': not a field here",
    ),
    ('base = "demo"', 'base = "masked"', "step 1, recipe, 'base': must be one of demo"),
    (
        'base = "demo"',
        'base = "demo"\nsteps = [{ method = "blur", column = "dose" }]',
        "step 1, recipe, 'steps': step 1: Unknown masking method 'blur'",
    ),
    ('"value_counts_uniqueness"', '"counts"', "step 1, compute, race, 'function': 'counts' is"),
    ('column = "race"', 'colour = "race"', "race, 'colour': not a parameter of value_counts"),
    ('column = "race"', "column = 3", "race, 'column': must be a text"),
    ('column = "race"\n', "", "race, 'column': missing (a parameter of value_counts"),
    ("Korean = 4", 'Korean = "four"', "'counts': must be a table, each value a whole number"),
    ('kind = "check"', 'kind = "gauge"', "step 1, figure 1, 'kind': must be one of"),
    ('"race.uniques_pct"', '"ru.uniques_pct"', "figure 1, 'computed': 'ru.uniques_pct': the step"),
    ('"race.uniques_pct"', '"race.unique"', "figure 1, 'computed': 'race.unique': value_counts"),
    ('"race.uniques_pct"', '"uniques_pct"', "'computed': 'uniques_pct' must name a value as"),
    ("{race.uniques} record", "{race.uniqes} record", "figure 1, 'note': 'race.uniqes'"),
    ("{race.uniques} record", "{race.uniques!r} record", "figure 1, 'note': '{race.uniques}'"),
    ("{race.uniques} record", "{race.uniques record", "figure 1, 'note': not a valid template"),
    ('citation = "Page 1: one record (0.49 percent) is unique."\n', "", "'citation': missing"),
    ('"100/205"', '"100/0"', "figure 1, 'expected': must be a number or a fraction"),
    ('expected = "100/205"\ndecimals = 2', "expected = 0.49", "'expected': must be the text"),
    ('label = "The {race.records} records"', 'lable = "x"', "figure 2, 'label': missing"),
    (
        'table = "race.table"',
        'table = "race.table"\nwhen = "race.records"\notherwise = "x"',
        "figure 2, 'otherwise': not a field here",
    ),
    (
        'kind = "table"',
        'kind = "text"\ntext = "y"\notherwise = "z"',
        "'otherwise': shown only when",
    ),
    ("[[steps]]", "[[steps]]\n[[steps]]", "small.toml, step 1, 'title': missing"),
    ("order = 1", "order = 1\norder = 2", "small.toml: not valid TOML"),
]


@pytest.mark.parametrize(("old", "new", "message"), BROKEN)
def test_a_broken_tour_file_names_the_file_and_the_field(tmp_path, old, new, message):
    assert old in SMALL_TOUR
    path = write(tmp_path, SMALL_TOUR.replace(old, new, 1))
    with pytest.raises(TourFileError) as error:
        load_tour(path)
    assert message in str(error.value)


def test_a_computation_no_figure_shows_is_refused(tmp_path):
    text = SMALL_TOUR.replace(
        "[steps.compute.race]", '[steps.compute.spare]\nfunction = "risk_summary"\n\n'
        "[steps.compute.race]"
    )  # fmt: skip
    with pytest.raises(TourFileError, match="compute, 'spare': computed but no figure shows"):
        load_tour(write(tmp_path, text))


def test_the_file_name_is_the_key_and_orders_differ(tmp_path):
    with pytest.raises(TourFileError, match=r"Small-Tour\.toml: the file name is the tour's key"):
        load_tour(write(tmp_path, SMALL_TOUR, "Small-Tour.toml"))
    folder = tmp_path / "tours"
    folder.mkdir()
    with pytest.raises(TourFileError, match="No tour files"):
        load_tours(folder)
    write(folder, SMALL_TOUR, "first.toml")
    assert list(load_tours(folder)) == ["first"]
    write(folder, SMALL_TOUR, "second.toml")
    with pytest.raises(TourFileError, match=r"first\.toml and second\.toml: both have order 1"):
        load_tours(folder)
