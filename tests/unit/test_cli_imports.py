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
    assert "statsmodels" in _loaded_after("import deid_core.workspace")


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
