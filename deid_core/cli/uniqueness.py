"""``python -m deid_core uniqueness``: uniques and records in small sets for every combination
of key variables (the NAACCR RU program).

``--format json`` (default) prints one object: "combinations" (one row each, the full set
first), "weights", "intercept", "n_fit", "weights_note", "worst_variable", "verdict" and
"omit_one". ``--format csv`` prints the combinations table as CSV on stdout and the weights
(with n_fit, the note, the variable to collapse first and the verdict) as a second CSV table on
stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import pandas as pd

from deid_core import bounds
from deid_core.cli.shared import (
    DATA_HELP,
    add_engine_flags,
    json_ready,
    load_data,
    load_recipe,
    open_engine,
    whole_number,
)
from deid_core.engines import uniqueness_from_crosstab
from deid_core.errors import DeidError
from deid_core.risk.uniqueness import DEFAULT_SMALL_CLASS, UniquenessResult, record_uniqueness


def add_parser(subparsers: Any) -> None:
    """Add the ``uniqueness`` command to the subparsers of the main parser."""
    uniqueness = subparsers.add_parser(
        "uniqueness",
        help="uniques and small-set records for every combination of key columns (NAACCR RU)",
    )
    uniqueness.add_argument("data", help=DATA_HELP)
    uniqueness.add_argument(
        "--keys", required=True, metavar="A,B,C", help="key columns, comma-separated (1..12)"
    )
    uniqueness.add_argument(
        "--recipe", help="recipe JSON: its masking of the key columns is applied first"
    )
    uniqueness.add_argument(
        "--small-class",
        type=whole_number(1, bounds.ROWS.limit),
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
    add_engine_flags(uniqueness)
    uniqueness.set_defaults(handler=run)


def _in_memory(args: argparse.Namespace, keys: list[str]) -> UniquenessResult:
    data = load_data(args.data)
    recipe = load_recipe(args.recipe)
    absent = [k for k in keys if k not in data.columns]
    if absent:
        raise DeidError(f"Key column(s) not in the data: {', '.join(absent)}.")
    frame = data[keys]
    if recipe.steps:
        recipe.check_columns(data.columns)
        # The recipe's masking of the key columns (steps may read other columns of the data).
        frame = pd.DataFrame({k: recipe.apply_to_column(data, k) for k in keys})
    return record_uniqueness(frame, keys, small_class=args.small_class)


def run(args: argparse.Namespace) -> int:
    keys = [k.strip() for k in args.keys.split(",") if k.strip()]
    engine = open_engine(args)
    if engine is None:
        result = _in_memory(args, keys)
    else:
        with engine:
            recipe = load_recipe(args.recipe)
            recipe.check_columns(engine.kinds())
            crosstab = engine.crosstab(keys, {k: recipe.steps_for(k) for k in keys})
        result = uniqueness_from_crosstab(crosstab, args.small_class)
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
    print(json.dumps(json_ready(result.to_dict()), indent=2))
    return 0
