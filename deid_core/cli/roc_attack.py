"""Command line for the ROC-curve reconstruction attack (Matthews & Harel), JSON out.

    python -m deid_core roc-attack DATA --score COL --status COL
        (--known-fraction F | --known-flag COL | --missing M) [--seed S]
        [--thresholds K | --quantiles Q] [--round D] [--binormal]

``--thresholds K`` publishes every K-th point of the curve, ``--quantiles Q`` the points at the
cut-offs of Q equal-sized groups, ``--round D`` rounds the points to D decimals and
``--binormal`` publishes the smoothed binormal fit instead (see :mod:`deid_core.risk.roc`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from deid_core.cli.shared import finite_number, load_data, whole_number
from deid_core.errors import DeidError
from deid_core.risk.roc import known_records, roc_attack


def add_parser(subparsers: Any) -> None:
    """Add the ``roc-attack`` command to the subparsers of the main parser."""
    command = subparsers.add_parser(
        "roc-attack",
        help="reconstruct unknown records from a published ROC curve; print JSON",
    )
    command.add_argument("data", help="data file, or demo:KEY")
    command.add_argument("--score", required=True, help="column of test scores")
    command.add_argument("--status", required=True, help="column of 0/1 disease status")
    known = command.add_mutually_exclusive_group(required=True)
    known.add_argument(
        "--known-fraction", type=finite_number(0, 1), help="random share of known records"
    )
    known.add_argument("--known-flag", help="true/false column marking the known records")
    known.add_argument("--missing", type=whole_number(0), help="number of random unknown records")
    command.add_argument("--seed", type=int, help="seed of the random choice of known records")
    thin = command.add_mutually_exclusive_group()
    thin.add_argument(
        "--thresholds", type=whole_number(1), help="publish every K-th point of the curve"
    )
    thin.add_argument(
        "--quantiles", type=whole_number(1), help="publish at Q quantile-group cut-offs"
    )
    command.add_argument(
        "--round", type=whole_number(0), dest="decimals", help="round points to D decimals"
    )
    command.add_argument("--binormal", action="store_true", help="publish the binormal fit")
    command.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the attack and print its result as JSON (unbounded ends and unknowns as null)."""
    data = load_data(args.data)
    if args.known_flag is not None:
        if args.known_flag not in data.columns:
            raise DeidError(f"roc-attack: the data have no column '{args.known_flag}'.")
        known = known_records(len(data), flag=data[args.known_flag].to_numpy())
    else:
        known = known_records(
            len(data), fraction=args.known_fraction, missing=args.missing, seed=args.seed
        )
    result = roc_attack(
        data,
        args.score,
        args.status,
        known,
        every=args.thresholds,
        quantiles=args.quantiles,
        decimals=args.decimals,
        binormal=args.binormal,
    )
    print(json.dumps(result.to_dict(), indent=2))
    return 0
