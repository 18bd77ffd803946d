"""``python -m deid_core apply``: write the masked file (no direct identifiers, no record id)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from deid_core.cli.shared import load_data, load_recipe
from deid_core.errors import DeidError
from deid_core.io.export import to_bytes
from deid_core.workspace import Workspace


def add_parser(subparsers: Any) -> None:
    """Add the ``apply`` command to the subparsers of the main parser."""
    apply = subparsers.add_parser("apply", help="write the masked file (no direct identifiers)")
    apply.add_argument("data", help="data file, or demo:KEY")
    apply.add_argument("--recipe", required=True, help="recipe JSON")
    apply.add_argument("-o", "--output", required=True, help="output CSV path")
    apply.add_argument(
        "--keep-record-id", action="store_true", help="keep the record-id column (off by default)"
    )
    apply.add_argument(
        "--keep-formulas",
        action="store_true",
        help="write text starting with =, +, -, @, a tab or a carriage return as it is (by "
        "default it gets a leading ' so that spreadsheets show it as text, not run it)",
    )
    apply.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    data = load_data(args.data)
    recipe = load_recipe(args.recipe)
    recipe.check_columns(data.columns)
    workspace = Workspace(data)
    released = workspace.released_frame(recipe, keep_record_id=args.keep_record_id)
    out = Path(args.output)
    if out.parent and not out.parent.exists():
        raise DeidError(f"The output folder does not exist: {out.parent}")
    exported = to_bytes(released, "csv", neutralise=not args.keep_formulas)
    out.write_bytes(exported.data)
    for note in exported.notes:
        print(note, file=sys.stderr)
    stage = workspace.release_stage(recipe)
    for line in stage.summaries() if stage is not None else []:
        print(line, file=sys.stderr)
    print(f"wrote {len(released)} masked records to {out}", file=sys.stderr)
    return 0
