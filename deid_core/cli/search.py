"""``python -m deid_core search``: every combination of the searched columns' masking settings,
judged against the release threshold and ranked by the analysis potential of the model; the
frontier as JSON on stdout and the best recipe written to a file (:mod:`deid_core.search`)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from deid_core.cli.shared import (
    add_common_flags,
    finite_number,
    json_ready,
    prepare,
    whole_number,
    write_output,
)
from deid_core.errors import DeidError
from deid_core.recipe import Recipe
from deid_core.risk.classes import MISSING_MODES
from deid_core.risk.context import ReleaseContext
from deid_core.search.limits import (
    DEFAULT_SEARCH_REPLICATES,
    DEFAULT_SETTINGS_PER_COLUMN,
    MAX_SEARCH_REPLICATES,
)


def add_parser(subparsers: Any) -> None:
    """Add the ``search`` command to the subparsers of the main parser."""
    command = subparsers.add_parser(
        "search",
        help="search every combination of masking settings for the release that meets the "
        "threshold with the highest analysis potential; print the frontier as JSON",
    )
    add_common_flags(command)
    command.add_argument(
        "--threshold",
        required=True,
        type=finite_number(0, above=True),
        metavar="C_OR_RISK",
        help="the release threshold: a minimum cell size c (a whole number >= 2, e.g. 5) or the "
        "largest acceptable risk 1/c (e.g. 0.2)",
    )
    command.add_argument(
        "--non-public",
        action="store_true",
        help="judge a non-public release (the strict average risk times the worst scenario's "
        "probability) instead of a public one (the maximum risk)",
    )
    command.add_argument(
        "--columns",
        nargs="+",
        metavar="COL",
        help="columns to search (default: the quasi-identifiers, then the exposure)",
    )
    command.add_argument(
        "--settings",
        type=whole_number(1),
        default=DEFAULT_SETTINGS_PER_COLUMN,
        metavar="N",
        help=f"settings per column proposed from the data, 'as is' included (default "
        f"{DEFAULT_SETTINGS_PER_COLUMN})",
    )
    command.add_argument(
        "--space",
        metavar="FILE",
        help='search space JSON ({"columns": {COL: [[step, ...], ...]}, '
        '"suppression_limit": 0.05, "keep_data_steps": true}) instead of the proposed one; '
        "without --space, a --recipe with whole-data steps (suppression, dates relative to "
        "each person, ages) is searched from where it stands: its whole-data steps are kept",
    )
    command.add_argument(
        "--print-space",
        action="store_true",
        help="print the search space as JSON (to edit and pass back with --space) and stop",
    )
    command.add_argument(
        "--suppression-limit",
        type=finite_number(0, 1),
        metavar="SHARE",
        help="share of records (0..1) a recipe may remove from classes too small for the "
        "threshold (default 0, or the space file's)",
    )
    command.add_argument(
        "--missing",
        choices=list(MISSING_MODES),
        default="category",
        help="a missing quasi-identifier value is its own category (default) or matches any",
    )
    command.add_argument(
        "--replicates",
        type=whole_number(1),
        default=DEFAULT_SEARCH_REPLICATES,
        help=f"replicates per random recipe (1..{MAX_SEARCH_REPLICATES}, default "
        f"{DEFAULT_SEARCH_REPLICATES})",
    )
    command.add_argument(
        "--top",
        type=whole_number(1),
        default=10,
        metavar="N",
        help="recipes in the ranked list (default 10)",
    )
    command.add_argument(
        "--best-recipe",
        metavar="PATH",
        help="write the best recipe (no seeds) to this JSON file",
    )
    command.set_defaults(handler=run)


def min_cell_size(threshold: float) -> int:
    """The minimum cell size a ``--threshold`` gives: c itself, or 1/risk when that is a whole
    number (0.2 -> 5)."""
    if not math.isfinite(threshold) or threshold <= 0:
        raise DeidError("--threshold must be a minimum cell size (e.g. 5) or a risk (e.g. 0.2).")
    if threshold >= 2 and float(threshold).is_integer():
        return int(threshold)
    if threshold < 1:
        cells = 1 / threshold
        if abs(cells - round(cells)) < 1e-6 * cells and round(cells) >= 2:
            return round(cells)
        raise DeidError("--threshold as a risk must be 1/c for a whole c, e.g. 0.2 or 0.05.")
    raise DeidError("--threshold must be a minimum cell size (e.g. 5) or a risk (e.g. 0.2).")


def _unchecked(args: argparse.Namespace, recipe: Recipe) -> list[str] | None:
    """The columns whose steps the command line leaves to the search rather than check
    before it: the columns it may search (those of :func:`deid_core.search.default_space`, or
    more), whose steps it replaces, and every column other than a quasi-identifier, whose
    steps it does not apply (a step on them is judged, if at all, as a model that cannot be
    fitted). None with a --space file, read once the search is loaded."""
    if args.space:
        return None
    roles = recipe.roles
    searched = args.columns if args.columns is not None else [*roles.quasi_identifiers]
    if args.columns is None and roles.exposure:
        searched.append(roles.exposure)
    kept = [c for c in roles.quasi_identifiers if c not in searched]
    return [step.column for step in recipe.steps if step.column not in kept]


def run(args: argparse.Namespace) -> int:
    context = ReleaseContext(
        public=not args.non_public, min_cell_size=min_cell_size(args.threshold)
    )
    data, recipe, workspace, warnings = prepare(args, unchecked=lambda r: _unchecked(args, r))
    # The search and its model libraries are loaded once the flags, the data and the recipe
    # have passed (issue 32).
    from deid_core.search import SearchSpace, default_space, search_space
    from deid_core.search.search import explain_no_pass

    if args.space:
        path = Path(args.space)
        if not path.is_file():
            raise DeidError(f"No such search space file: {args.space}")
        try:
            space = SearchSpace.from_dict(json.loads(path.read_bytes()))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise DeidError("The search space is not valid JSON.") from error
    else:
        if not 1 <= args.settings <= 50:
            raise DeidError("--settings must be from 1 to 50.")
        space = default_space(
            data, recipe, args.columns, args.settings, keep_data_steps=bool(recipe.data_steps)
        )
    if args.suppression_limit is not None:
        space = space.with_suppression_limit(args.suppression_limit)
    if args.print_space:
        print(space.to_json())
        return 0
    if args.top < 1:
        raise DeidError("--top must be at least 1.")
    result = search_space(
        workspace,
        recipe,
        space,
        context,
        missing=args.missing,
        n_replicates=args.replicates,
    )
    out = result.to_dict(top=args.top)
    if result.best is None:
        out["why_none_passes"] = explain_no_pass(
            workspace, recipe, space, context, missing=args.missing
        )
    out["warnings"] = warnings
    print(json.dumps(json_ready(out), indent=2))
    if args.best_recipe:
        best = result.best
        if best is None:
            print("warning: no recipe meets the threshold; no recipe written.", file=sys.stderr)
        else:
            write_output(args.best_recipe, best.recipe.to_json(include_seeds=False).encode())
    return 0
