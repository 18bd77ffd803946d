"""``python -m deid_core assess``: risk and utility of a recipe, one JSON object."""

from __future__ import annotations

import argparse
import json
from typing import Any

from deid_core.cli.shared import add_common_flags, json_ready, load_data, prepare
from deid_core.errors import DeidError
from deid_core.risk import BF_METHODS, MATCH_RULES, MISSING_MODES
from deid_core.utility import DEFAULT_REPLICATES, MAX_REPLICATES
from deid_core.utility.classifier import (
    DEFAULT_CLASSIFIER_REPLICATES,
    MAX_CLASSIFIER_REPLICATES,
)


def add_parser(subparsers: Any) -> None:
    """Add the ``assess`` command to the subparsers of the main parser."""
    assess = subparsers.add_parser("assess", help="print risk and utility of a recipe as JSON")
    add_common_flags(assess)
    assess.add_argument(
        "--rule",
        choices=sorted(MATCH_RULES),
        default="same_masking",
        help="matching rule for the identifiability score (default: same_masking)",
    )
    assess.add_argument(
        "--missing",
        choices=list(MISSING_MODES),
        default="category",
        help="a missing quasi-identifier value is its own category (default) or matches any "
        "value (every figure, closed and open data, then counts the compatible records)",
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
        "--bf-method",
        choices=list(BF_METHODS),
        default="exact",
        help="Benedetti-Franconi individual risk of the open data: exact (default) or sdcmicro "
        "(sdcMicro's default approximation p / (f - 1 + p) for classes of 3 or more, up to 4%% "
        "above the exact value; to reproduce an sdcMicro report)",
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
    assess.add_argument(
        "--classifier",
        nargs="?",
        type=int,
        const=DEFAULT_CLASSIFIER_REPLICATES,
        metavar="R",
        help="also give the classifier lens of utility: cross-validated AUC and accuracy of a "
        "logistic regression and a random forest predicting the 0/1 outcome, trained on the "
        "original and on the masked data and evaluated on the original (R replicates of a "
        f"random mask, 1..{MAX_CLASSIFIER_REPLICATES}, default "
        f"{DEFAULT_CLASSIFIER_REPLICATES}; --seed fixes the folds)",
    )
    assess.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    _, recipe, workspace, warnings = prepare(args)
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
        result["open_data"] = workspace.sample_risk(
            recipe, args.sampling_fraction, missing=args.missing, bf_method=args.bf_method
        ).to_dict()
    if args.bootstrap is not None:
        if "utility" not in result:
            raise DeidError("--bootstrap needs a model: give --exposure and --outcome.")
        try:
            interval = workspace.bootstrap(recipe, args.bootstrap, seed=args.seed)
        except DeidError as error:
            result["utility"]["bootstrap"] = {"error": str(error)}
        else:
            result["utility"]["bootstrap"] = interval.to_dict()
    if args.classifier is not None:
        if "utility" not in result:
            raise DeidError("--classifier needs a model: give --exposure and --outcome.")
        try:
            lens = workspace.classifier(recipe, args.classifier, seed=args.seed or 0)
        except DeidError as error:
            result["utility"]["classifier"] = {"error": str(error)}
        else:
            result["utility"]["classifier"] = lens.to_dict()
    result["warnings"] = warnings
    print(json.dumps(json_ready(result), indent=2))
    return 0
