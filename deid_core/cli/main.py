"""Command line: the dashboard's operations without the UI, JSON out.

    python -m deid_core assess DATA [--recipe R.json] [--qi COL ...] [--exposure COL
        --outcome COL] [--covariate COL ...] [--record-id COL] [--rule RULE]
        [--tolerance T] [--source FILE] [--sampling-fraction F] [--weight COL]
        [--missing {category,wildcard}] [--model {logistic,poisson,linear,err,binomial}]
        [--offset COL] [--trials COL] [--seed S] [--replicates R] [--bootstrap B]
    python -m deid_core apply DATA --recipe R.json -o OUT.csv [--keep-record-id]
    python -m deid_core profile DATA --recipe R.json --sweep STEP.PARAM=START:STOP:N
        [--kernel K ...] [--pattern COL] [--spatial-weight S] [--known COL ...]
        [--bootstrap B] [role and model flags as for assess]
    python -m deid_core uniqueness DATA --keys A,B,C [--recipe R.json] [--small-class T]
        [--format {json,csv}]
    python -m deid_core roc-attack DATA --score COL --status COL (--known-fraction F |
        --known-flag COL | --missing M) [--seed S] [--thresholds K | --quantiles Q]
        [--round D] [--binormal]

DATA may be a file (CSV/TSV, Excel, Parquet, Stata, SAS) or ``demo:KEY`` for a built-in demo.
``uniqueness`` (the NAACCR RU program) counts uniques and records in classes of size <= T for
every combination of the key columns, after the recipe's masking of those columns. ``--format
json`` (default) prints one object: "combinations" (one row each, the full set first), "weights",
"intercept", "n_fit", "weights_note", "worst_variable", "verdict" and "omit_one". ``--format csv``
prints the combinations table as CSV on stdout and the weights (with n_fit, the note, the
variable to collapse first and the verdict) as a second CSV table on stderr.

Errors go to stderr as one line, with exit status 2 (bad input) or 1 (anything unexpected).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from deid_core.cli.roc_attack import add_roc_attack_parser
from deid_core.datasets import DEMO_DATASETS, load_demo
from deid_core.errors import DeidError
from deid_core.io.reading import read_table
from deid_core.io.roles import validate_column_for_role
from deid_core.masking.smoothing import KERNELS
from deid_core.recipe import Recipe, Roles
from deid_core.risk import MATCH_RULES
from deid_core.risk.uniqueness import DEFAULT_SMALL_CLASS, record_uniqueness
from deid_core.tradeoff.profile import SweepSpec, risk_utility_profile, sweep_recipes
from deid_core.utility import DEFAULT_REPLICATES, MAX_REPLICATES, SUPPORTED_FAMILIES
from deid_core.utility.bootstrap import MAX_RESAMPLES, MIN_RESAMPLES
from deid_core.workspace import Workspace

EXIT_BAD_INPUT = 2
EXIT_UNEXPECTED = 1


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
    if path is None:
        return Recipe()
    file = Path(path)
    if not file.is_file():
        raise DeidError(f"No such recipe file: {path}")
    return Recipe.from_json(file.read_bytes())


def _with_flags(recipe: Recipe, args: argparse.Namespace) -> Recipe:
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
    if bool(roles["exposure"]) != bool(roles["outcome"]):
        raise DeidError("Give both an exposure and an outcome to assess utility, or neither.")
    return Recipe(Roles.from_dict(roles), recipe.steps)


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: write null instead."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def role_warnings(data: pd.DataFrame, recipe: Recipe, family: str = "logistic") -> list[str]:
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


def model_choice(args: argparse.Namespace) -> tuple[str, str | None, str | None]:
    """(family, offset, trials): the flags, else the demo's own model, else logistic."""
    demo = (
        DEMO_DATASETS.get(args.data.removeprefix("demo:"))
        if args.data.startswith("demo:")
        else None
    )
    if args.model is None and demo is not None:
        return demo.model_family, args.offset, args.trials or demo.trials
    return args.model or "logistic", args.offset, args.trials


def _prepare(args: argparse.Namespace) -> tuple[pd.DataFrame, Recipe, Workspace, list[str]]:
    """The data, the recipe (roles from the flags, seeded by --seed), a workspace with the
    chosen model, and the role warnings (also printed to stderr): what assess and profile
    share."""
    data = load_data(args.data)
    recipe = _with_flags(load_recipe(args.recipe), args)
    if args.seed is not None:
        recipe = recipe.with_seed(args.seed)
    recipe.check_columns(data.columns)
    family, offset, trials = model_choice(args)
    warnings = role_warnings(data, recipe, family)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    workspace = Workspace(data, name=args.data)
    workspace.set_model(family, offset, trials)
    return data, recipe, workspace, warnings


def cmd_assess(args: argparse.Namespace) -> int:
    _, recipe, workspace, warnings = _prepare(args)
    if args.tolerance is not None and args.rule != "tolerance":
        raise DeidError("--tolerance goes with --rule tolerance.")
    source = load_data(args.source) if args.source else None
    result = workspace.assess(
        recipe,
        rule=args.rule,
        n_replicates=args.replicates,
        tolerance=args.tolerance,
        source=source,
        missing=args.missing,
    ).to_dict()
    if source is not None:
        result["risk"]["n_source"] = len(source)
    if args.sampling_fraction is not None or recipe.roles.weight:
        result["open_data"] = workspace.sample_risk(recipe, args.sampling_fraction).to_dict()
    if args.bootstrap is not None:
        if "utility" not in result:
            raise DeidError("--bootstrap needs a model: give --exposure and --outcome.")
        try:
            interval = workspace.bootstrap(recipe, args.bootstrap, seed=args.seed)
        except DeidError as error:
            result["utility"]["bootstrap"] = {"error": str(error)}
        else:
            result["utility"]["bootstrap"] = interval.to_dict()
    result["warnings"] = warnings
    print(json.dumps(_finite(result), indent=2))
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    data, recipe, workspace, warnings = _prepare(args)
    sweep = SweepSpec.parse(args.sweep)
    forms = [
        (
            kernel,
            {
                "kernel": kernel,
                "pattern": args.pattern if kernel == "prior" else None,
                "spatial_weight": args.spatial_weight if kernel == "prior" else 0.0,
                "rho": 0.0,
            },
        )
        for kernel in args.kernel or ()
    ]
    if forms and sweep.selector != "kernel_smooth":
        raise DeidError("--kernel goes with a sweep of the smoothing: kernel_smooth.PARAM=...")
    roles = recipe.roles
    known = args.known or [
        c
        for c in (roles.exposure, *roles.covariates)
        if c is not None and pd.api.types.is_numeric_dtype(data[c])
    ]
    result = risk_utility_profile(
        workspace,
        sweep_recipes(recipe, sweep, forms),
        sweep.parameter,
        known,
        n_bootstrap=args.bootstrap or 0,
        seed=args.seed,
    ).to_dict()
    result["warnings"] = warnings
    print(json.dumps(_finite(result), indent=2))
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    data = load_data(args.data)
    recipe = load_recipe(args.recipe)
    recipe.check_columns(data.columns)
    released = Workspace(data).released_frame(recipe, keep_record_id=args.keep_record_id)
    out = Path(args.output)
    if out.parent and not out.parent.exists():
        raise DeidError(f"The output folder does not exist: {out.parent}")
    released.to_csv(out, index=False)
    print(f"wrote {len(released)} masked records to {out}", file=sys.stderr)
    return 0


def cmd_uniqueness(args: argparse.Namespace) -> int:
    data = load_data(args.data)
    keys = [k.strip() for k in args.keys.split(",") if k.strip()]
    recipe = load_recipe(args.recipe)
    absent = [k for k in keys if k not in data.columns]
    if absent:
        raise DeidError(f"Key column(s) not in the data: {', '.join(absent)}.")
    frame = data[keys]
    if recipe.steps:
        recipe.check_columns(data.columns)
        # The recipe's masking of the key columns (steps may read other columns of the data).
        frame = pd.DataFrame({k: recipe.apply_to_column(data, k) for k in keys})
    result = record_uniqueness(frame, keys, small_class=args.small_class)
    if args.format == "csv":
        result.to_frame().to_csv(sys.stdout, index=False)
        weights = result.weights_frame()
        verdict = result.verdict()
        print(
            f"# weights: n_fit={result.n_fit}, worst_variable={result.worst_variable}, "
            f"research={verdict['research']}, public={verdict['public']}"
            + (f", note: {result.weights_note}" if result.weights_note else ""),
            file=sys.stderr,
        )
        weights.to_csv(sys.stderr, index=False)
        return 0
    print(json.dumps(_finite(result.to_dict()), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m deid_core",
        description="Mask health microdata and measure disclosure risk and analysis utility.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    assess = sub.add_parser("assess", help="print risk and utility of a recipe as JSON")
    _add_common_flags(assess)
    assess.add_argument(
        "--rule",
        choices=sorted(MATCH_RULES),
        default="same_masking",
        help="matching rule for the identifiability score (default: same_masking)",
    )
    assess.add_argument(
        "--missing",
        choices=["category", "wildcard"],
        default="category",
        help="a missing quasi-identifier value is its own category (default) or matches any value",
    )
    assess.add_argument(
        "--source",
        metavar="FILE",
        help="source database to link against (default: the data themselves); it needs the "
        "quasi-identifiers and the record id",
    )
    assess.add_argument(
        "--sampling-fraction",
        type=float,
        metavar="F",
        help="the file is a sample of a population: add open-data risk (prosecutor, journalist, "
        'marketer, individual risk, estimated population uniques) under "open_data"',
    )
    assess.add_argument(
        "--tolerance",
        type=float,
        help="for --rule tolerance: how far (in each quasi-identifier's units) a match may be; "
        "default: the noise half-width or half the rounding base of each masked column",
    )
    assess.add_argument(
        "--replicates",
        type=int,
        default=DEFAULT_REPLICATES,
        help=f"replicates for random masking (1..{MAX_REPLICATES}, default {DEFAULT_REPLICATES})",
    )
    assess.set_defaults(handler=cmd_assess)

    apply = sub.add_parser("apply", help="write the masked file (no direct identifiers)")
    apply.add_argument("data", help="data file, or demo:KEY")
    apply.add_argument("--recipe", required=True, help="recipe JSON")
    apply.add_argument("-o", "--output", required=True, help="output CSV path")
    apply.add_argument(
        "--keep-record-id", action="store_true", help="keep the record-id column (off by default)"
    )
    apply.set_defaults(handler=cmd_apply)

    profile = sub.add_parser(
        "profile", help="print risk and utility over a range of one parameter as JSON"
    )
    _add_common_flags(profile)
    profile.add_argument(
        "--sweep",
        required=True,
        metavar="STEP.PARAM=START:STOP:N",
        help="the parameter to vary: STEP is a method (every step with it, e.g. kernel_smooth) "
        "or a step index; e.g. kernel_smooth.bandwidth=0:0.2:11 or 0.digits=1,2,3",
    )
    profile.add_argument(
        "--kernel",
        nargs="+",
        choices=list(KERNELS),
        help="compare these smoothing kernels (forms of masking) over the sweep; default: the "
        "recipe's own",
    )
    profile.add_argument(
        "--pattern", metavar="COL", help="exposure-pattern column of the prior kernel"
    )
    profile.add_argument(
        "--spatial-weight",
        type=float,
        default=1.0,
        help="prior kernel: weight of the distance beside the pattern difference (default 1; "
        "0 is the pure ring kernel)",
    )
    profile.add_argument(
        "--known",
        nargs="+",
        metavar="COL",
        help="variables whose true values the intruder holds (default: the exposure and the "
        "numeric covariates)",
    )
    profile.set_defaults(handler=cmd_profile)

    uniqueness = sub.add_parser(
        "uniqueness",
        help="uniques and small-set records for every combination of key columns (NAACCR RU)",
    )
    uniqueness.add_argument(
        "data", help="data file, or demo:KEY (" + ", ".join(DEMO_DATASETS) + ")"
    )
    uniqueness.add_argument(
        "--keys", required=True, metavar="A,B,C", help="key columns, comma-separated (1..12)"
    )
    uniqueness.add_argument(
        "--recipe", help="recipe JSON: its masking of the key columns is applied first"
    )
    uniqueness.add_argument(
        "--small-class",
        type=int,
        default=DEFAULT_SMALL_CLASS,
        metavar="T",
        help=f"records in classes of size <= T count as small sets (default {DEFAULT_SMALL_CLASS})",
    )
    uniqueness.add_argument(
        "--format",
        choices=["json", "csv"],
        default="json",
        help="json (one object) or csv (combinations on stdout, weights on stderr)",
    )
    uniqueness.set_defaults(handler=cmd_uniqueness)

    add_roc_attack_parser(sub)
    return parser


def _add_common_flags(command: argparse.ArgumentParser) -> None:
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except DeidError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:
        print(f"error: unexpected failure ({type(error).__name__}).", file=sys.stderr)
        return EXIT_UNEXPECTED
