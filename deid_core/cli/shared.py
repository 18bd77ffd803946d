"""What the commands share: reading the data and the recipe, the flags for roles and the model,
the workspace they assess on, and JSON output."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from deid_core.datasets import DEMO_DATASETS, load_demo
from deid_core.errors import DeidError
from deid_core.io.reading import read_table
from deid_core.io.roles import validate_column_for_role
from deid_core.recipe import Recipe, Roles
from deid_core.utility import SUPPORTED_FAMILIES
from deid_core.utility.bootstrap import MAX_RESAMPLES, MIN_RESAMPLES
from deid_core.workspace import Workspace


def load_data(spec: str) -> pd.DataFrame:
    """Read a data file, or a built-in demo given as ``demo:KEY``."""
    if spec.startswith("demo:"):
        key = spec.removeprefix("demo:")
        if key not in DEMO_DATASETS:
            raise DeidError(f"Unknown demo '{key}'; known: {', '.join(DEMO_DATASETS)}.")
        return load_demo(key)
    path = Path(spec)
    if not path.is_file():
        raise DeidError(f"No such data file: {spec}")
    return read_table(path.read_bytes(), path.name).frame


def load_recipe(path: str | None) -> Recipe:
    """Read a recipe JSON file (an empty recipe without one)."""
    if path is None:
        return Recipe()
    file = Path(path)
    if not file.is_file():
        raise DeidError(f"No such recipe file: {path}")
    return Recipe.from_json(file.read_bytes())


def _recipe_with_flags(recipe: Recipe, args: argparse.Namespace) -> Recipe:
    """Command-line role flags override the recipe's roles."""
    roles = recipe.roles.to_dict()
    if args.qi:
        roles["quasi_identifiers"] = args.qi
    if args.exposure:
        roles["exposure"] = args.exposure
    if args.outcome:
        roles["outcome"] = args.outcome
    if args.covariate:
        roles["covariates"] = args.covariate
    if args.record_id:
        roles["record_id"] = args.record_id
    if args.weight:
        roles["weight"] = args.weight
    if args.sensitive:
        roles["sensitive"] = args.sensitive
    if bool(roles["exposure"]) != bool(roles["outcome"]):
        raise DeidError("Give both an exposure and an outcome to assess utility, or neither.")
    return Recipe(Roles.from_dict(roles), recipe.steps)


def json_ready(value: Any) -> Any:
    """JSON has no NaN or infinity: write null instead."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    return value


def _role_warnings(data: pd.DataFrame, recipe: Recipe, family: str = "logistic") -> list[str]:
    """Problems with the columns in their roles (all missing, one level, text in numbers...)."""
    roles = recipe.roles
    checks = [(c, "quasi_identifier") for c in roles.quasi_identifiers]
    checks += [(c, "covariate") for c in roles.covariates]
    checks += [(c, role) for c, role in ((roles.exposure, "exposure"), (roles.outcome, "outcome"))]
    found: list[str] = []
    for column, role in checks:
        if column is not None:
            problems = validate_column_for_role(data, column, role, family)
            found += [w for w in problems if w not in found]
    return found


def _model_choice(args: argparse.Namespace) -> tuple[str, str | None, str | None]:
    """(family, offset, trials): the flags, else the demo's own model, else logistic."""
    demo = (
        DEMO_DATASETS.get(args.data.removeprefix("demo:"))
        if args.data.startswith("demo:")
        else None
    )
    if args.model is None and demo is not None:
        return demo.model_family, args.offset, args.trials or demo.trials
    return args.model or "logistic", args.offset, args.trials


def prepare(args: argparse.Namespace) -> tuple[pd.DataFrame, Recipe, Workspace, list[str]]:
    """The data, the recipe (roles from the flags, seeded by --seed), a workspace with the
    chosen model, and the role warnings (also printed to stderr): what assess and profile
    share."""
    data = load_data(args.data)
    recipe = _recipe_with_flags(load_recipe(args.recipe), args)
    if args.seed is not None:
        recipe = recipe.with_seed(args.seed)
    recipe.check_columns(data.columns)
    family, offset, trials = _model_choice(args)
    warnings = _role_warnings(data, recipe, family)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    workspace = Workspace(data, name=args.data)
    workspace.set_model(family, offset, trials)
    return data, recipe, workspace, warnings


def add_common_flags(command: argparse.ArgumentParser) -> None:
    """Data, recipe, roles and model flags shared by assess and profile."""
    command.add_argument("data", help="data file, or demo:KEY (" + ", ".join(DEMO_DATASETS) + ")")
    command.add_argument("--recipe", help="recipe JSON (roles and masking steps)")
    command.add_argument("--qi", nargs="+", metavar="COL", help="quasi-identifier columns")
    command.add_argument("--exposure", metavar="COL", help="exposure column of the model")
    command.add_argument("--outcome", metavar="COL", help="outcome column of the model")
    command.add_argument("--covariate", nargs="+", metavar="COL", help="model covariates")
    command.add_argument("--record-id", metavar="COL", help="record id linking to the source")
    command.add_argument("--weight", metavar="COL", help="sampling-weight column (positive)")
    command.add_argument(
        "--sensitive",
        nargs="+",
        metavar="COL",
        help="sensitive columns: assess adds their l-diversity and t-closeness (as the "
        'outcome\'s) under "attribute_disclosure"',
    )
    command.add_argument(
        "--model",
        choices=list(SUPPORTED_FAMILIES),
        help="the collaborator's model: logistic, poisson (with --offset), linear, err (the "
        "linear excess-relative-risk odds model, b = ERR per unit dose) or binomial (grouped "
        "counts, with --trials); default: the demo's own model, else logistic",
    )
    command.add_argument("--offset", metavar="COL", help="person-time column (poisson model)")
    command.add_argument(
        "--trials", metavar="COL", help="trials column, e.g. population (binomial model)"
    )
    command.add_argument(
        "--seed",
        type=int,
        help="seed for the recipe's random steps (step i gets seed + i) and the bootstrap; "
        "without it, the recipe's own seeds, or fresh draws when it has none",
    )
    command.add_argument(
        "--bootstrap",
        type=int,
        metavar="B",
        help="also give naive and percentile-bootstrap 95%% intervals of the masked estimate "
        f"from B resamples ({MIN_RESAMPLES}..{MAX_RESAMPLES}); for masks that make records "
        "correlated (smoothing, interval means)",
    )
