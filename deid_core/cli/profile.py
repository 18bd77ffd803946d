"""``python -m deid_core profile``: risk and utility over a range of one masking parameter (one
JSON object per value and kernel)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pandas as pd

from deid_core.cli.shared import add_common_flags, finite_number, json_ready, prepare
from deid_core.errors import DeidError
from deid_core.masking.smoothing import KERNELS


def add_parser(subparsers: Any) -> None:
    """Add the ``profile`` command to the subparsers of the main parser."""
    profile = subparsers.add_parser(
        "profile", help="print risk and utility over a range of one parameter as JSON"
    )
    add_common_flags(profile)
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
        type=finite_number(0),
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
    profile.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, once the flags are read: see deid_core.cli.shared.
    from deid_core.tradeoff.profile import SweepSpec, risk_utility_profile, sweep_recipes

    sweep = SweepSpec.parse(args.sweep)  # a flag: read before the data
    # The profile applies only the steps its risk and utility read (a step on a text column
    # they do not read is accepted): the kinds of the columns are left to it.
    data, recipe, workspace, warnings = prepare(args, unchecked=lambda recipe: None)
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
    print(json.dumps(json_ready(result), indent=2))
    return 0
