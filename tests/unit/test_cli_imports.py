"""The command line refuses bad input before it loads the libraries that compute results.

Importing statsmodels, scipy, scikit-learn, DuckDB and SQLGlot took the command line about 3 s
(6.7 s on a busy machine) before it could read a flag; a bad flag or a file refused from its
footer must end in one line long before that (issue 32). Each test runs a fresh interpreter and
lists which of those libraries it has loaded: no timing is measured, so the tests do not depend
on the machine's load.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Libraries that only computing results needs (model fits, risk estimates, classifiers, SQL
#: engines, charts and the report).
HEAVY = ("statsmodels", "scipy", "sklearn", "duckdb", "sqlglot", "altair", "vl_convert", "fpdf")

#: Commands whose module loads none of them (each loads what computes its results in ``run``).
LIGHT_COMMANDS = ("assess", "apply", "profile", "uniqueness", "roc_attack", "search")


def _loaded_after(code: str) -> list[str]:
    """Which of ``HEAVY`` a fresh interpreter has loaded after running ``code``."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_importing_the_command_line_loads_no_heavy_library():
    assert _loaded_after("import deid_core.cli") == []


@pytest.mark.parametrize("command", LIGHT_COMMANDS)
def test_a_command_module_loads_no_heavy_library(command):
    assert _loaded_after(f"import deid_core.cli.{command}") == []


def test_the_heavy_libraries_are_seen_when_loaded():
    """The probe itself: a module that does load them is caught."""
    assert "statsmodels" in _loaded_after("import deid_core.utility.models")


def test_the_workspace_loads_the_model_libraries_only_to_fit(tmp_path):
    """A whole-data step past its bound and an output that cannot be written were refused only
    after the workspace had loaded statsmodels, scipy.stats and scikit-learn (3.6 s and
    3.5-4.3 s of CPU for one line, issue 32): the workspace now loads them where it fits a
    model, and both refusals need none of them."""
    recipe = tmp_path / "suppress.json"
    roles = {"quasi_identifiers": ["city", "sex", "age_at_exposure"]}
    recipe.write_text(
        json.dumps(
            {
                "schema_version": 3,
                "roles": roles,
                "steps": [],
                "data_steps": [{"method": "local_suppression", "k": 10000}],
            }
        )
    )
    refusals = [
        (["assess", "demo:cohort", "--recipe", str(recipe)], "bound 'suppression_work'"),
        (["apply", "demo:cohort", "--recipe", str(recipe), "-o", "/dev/full"], "suppression"),
    ]
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"schema_version": 3, "roles": roles, "steps": []}))
    if Path("/dev/full").exists():
        refusals.append(
            (["apply", "demo:cohort", "--recipe", str(plain), "-o", "/dev/full"], "is full")
        )
    code = (
        "import contextlib, io\nfrom deid_core.cli import main\n"
        "import deid_core.workspace\n"
        f"for argv, named in {refusals!r}:\n"
        "    with contextlib.redirect_stderr(io.StringIO()) as err:\n"
        "        code = main(argv)\n"
        "    assert code == 2 and named in err.getvalue(), (argv, err.getvalue())"
    )
    assert _loaded_after(code) == []


def test_refusals_end_before_any_heavy_library_is_loaded(tmp_path):
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"PAR1" + bytes(range(256)) * 8)
    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps({"steps": [{"method": "nope"}]}))
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"steps": []}))
    refusals = [
        ["assess", str(junk), "--qi", "a"],  # read: not Parquet
        ["assess", "demo:cohort", "--replicates", "0"],  # a flag
        ["assess", "demo:el_emam", "--recipe", str(recipe)],  # the recipe
        ["profile", "demo:cohort", "--sweep", "0.digits=1:2:1000000000"],  # an argument's bound
        ["uniqueness", "demo:el_emam", "--keys", "sex", "--small-class", "1e23"],
        ["search", "demo:cohort", "--threshold", "5", "--settings", "-2"],
        ["search", "demo:cohort", "--threshold", "5", "--replicates", "0"],
        ["apply", "demo:el_emam", "--recipe", str(empty), "-o", str(tmp_path)],  # a folder
    ]
    code = (
        "import contextlib, io\nfrom deid_core.cli import main\n"
        f"for argv in {refusals!r}:\n"
        "    with contextlib.redirect_stderr(io.StringIO()) as err:\n"
        "        try:\n"
        "            code = main(argv)\n"
        "        except SystemExit as stop:\n"
        "            code = stop.code\n"
        "    assert code == 2 and err.getvalue().startswith('error:'), (argv, err.getvalue())"
    )
    assert _loaded_after(code) == []


def _text_in_columns(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """A data file whose 'dose' holds one word among numbers and whose 'visit' holds one
    word among dates, and recipes that mask them as numbers and dates."""
    rows = ["id,sex,age,dose,visit"]
    for i in range(60):
        dose = "forty" if i == 7 else f"{0.1 * i:.1f}"
        visit = "soon" if i == 5 else f"2019-03-{1 + i % 28:02d}"
        rows.append(f"{i},{'MF'[i % 2]},{30 + i % 40},{dose},{visit}")
    data = tmp_path / "text.csv"
    data.write_text("\n".join(rows) + "\n")
    roles = {"quasi_identifiers": ["sex", "age"], "record_id": "id"}
    recipes = {
        "round": [{"method": "absolute_round", "column": "dose", "base": 1}],
        "noise": [{"method": "uniform_noise", "column": "sex", "half_width": 1}],
        "dates": [],
    }
    paths = {}
    for name, steps in recipes.items():
        recipe = {"schema_version": 3, "roles": roles, "steps": steps}
        if name == "dates":
            recipe["data_steps"] = [{"method": "relative_dates", "columns": ["visit"]}]
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(recipe))
    return data, paths


#: (command and flags, recipe, what the one line names: the step and the column). The search
#: replaces the steps of the columns it searches (by default every quasi-identifier) and
#: applies no step of other columns: it refuses a step on a quasi-identifier it does not
#: search, and a whole-data step. (``profile`` applies only the steps its figures read: the
#: kinds are left to it.)
TEXT_IN_COLUMNS = [
    ("assess", "round", ("Absolute rounding", "'dose'")),
    ("assess", "noise", ("Uniform noise", "'sex'")),
    ("assess", "dates", ("Dates relative to the person's anchor", "'visit'")),
    ("apply -o OUT", "round", ("Absolute rounding", "'dose'")),
    ("apply -o OUT", "dates", ("Dates relative", "'visit'")),
    ("search --threshold 5 --columns age", "noise", ("Uniform noise", "'sex'")),
    ("search --threshold 5", "dates", ("Dates relative", "'visit'")),
]


def test_a_step_on_a_column_of_the_wrong_kind_is_refused_before_any_heavy_library(tmp_path):
    """A recipe step on a column holding text it cannot read (a word among numbers, numbers
    or words for dates) used to be refused only while the workspace applied the recipe, after
    the model libraries were loaded (issue 32); each command now refuses it first."""
    data, recipes = _text_in_columns(tmp_path)
    cases = []
    for command, recipe, named in TEXT_IN_COLUMNS:
        name, *flags = command.replace("OUT", str(tmp_path / "out.csv")).split()
        cases.append(([name, str(data), "--recipe", str(recipes[recipe]), *flags], named))
    code = (
        "import contextlib, io\nfrom deid_core.cli import main\n"
        f"for argv, named in {cases!r}:\n"
        "    with contextlib.redirect_stderr(io.StringIO()) as err:\n"
        "        code = main(argv)\n"
        "    errors = [l for l in err.getvalue().splitlines() if l.startswith('error:')]\n"
        "    assert code == 2 and len(errors) == 1, (argv, err.getvalue())\n"
        "    assert all(n in errors[0] for n in named), (argv, errors)\n"
        "    assert 'forty' not in errors[0] and 'soon' not in errors[0], errors"
    )
    assert _loaded_after(code) == []
    assert not (tmp_path / "out.csv").exists()


def test_help_still_lists_every_command():
    run = subprocess.run(
        [sys.executable, "-m", "deid_core", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    for name in ("assess", "apply", "profile", "uniqueness", "roc-attack", "search"):
        assert name in run.stdout
