"""``python -m deid_core apply``: write the masked file (no direct identifiers, no record id),
its rows shuffled.

The rows are shuffled by default, as the dashboard's export does: a masked file in the source's
order lets anyone holding the source pair row i with row i and undo every masking step. The
order is drawn afresh from the operating system's entropy and written nowhere;
``--keep-order`` keeps the source's order (only for a recipient allowed to link back)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from deid_core.cli.shared import load_data, load_recipe
from deid_core.errors import DeidError
from deid_core.io.export import shuffle_rows, to_bytes
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
        "--keep-order",
        action="store_true",
        help="keep the source's row order (off by default: the rows are shuffled, since in the "
        "source's order anyone holding the source can pair the rows and undo the masking)",
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
    out = Path(args.output)
    if out.is_dir():
        raise DeidError(
            f"The output {out} is a folder; give a file name, e.g. {out / 'masked.csv'}"
        )
    if out.parent and not out.parent.exists():
        raise DeidError(f"The output folder does not exist: {out.parent}")
    workspace = Workspace(data)
    released = workspace.released_frame(recipe, keep_record_id=args.keep_record_id)
    if not args.keep_order:
        released = shuffle_rows(released, seed=None)
    exported = to_bytes(released, "csv", neutralise=not args.keep_formulas)
    out.write_bytes(exported.data)
    for note in exported.notes:
        print(note, file=sys.stderr)
    stage = workspace.release_stage(recipe)
    for line in stage.summaries() if stage is not None else []:
        print(line, file=sys.stderr)
    order = "in the source's order" if args.keep_order else "in shuffled order"
    print(f"wrote {len(released)} masked records {order} to {out}", file=sys.stderr)
    return 0
