"""``python -m deid_core apply``: write the masked file (no direct identifiers, no record id,
unless they are replaced by pseudonyms), its rows shuffled, and, on request, the crosswalk of
the pseudonyms.

The rows are shuffled by default, as the dashboard's export does: a masked file in the source's
order lets anyone holding the source pair row i with row i and undo every masking step. The
order is drawn afresh from the operating system's entropy and written nowhere;
``--keep-order`` keeps the source's order (only for a recipient allowed to link back)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from deid_core.cli.shared import (
    check_names_before_reading,
    load_data,
    load_recipe,
    whole_number,
    write_output,
)
from deid_core.errors import DeidError
from deid_core.identifiers.pseudonyms import (
    DEFAULT_LENGTH,
    generate_key,
    key_fingerprint,
    key_from_text,
    key_to_text,
)
from deid_core.io.export import shuffle_rows, to_bytes
from deid_core.masking import HmacPseudonym, RandomPseudonym
from deid_core.recipe import Recipe

#: A key file is a line of hexadecimal text: anything much larger is not one.
MAX_KEY_FILE_BYTES = 4096
DEFAULT_STUDY_ID = "study_id"
PSEUDONYM_KINDS = {"random": RandomPseudonym, "hmac": HmacPseudonym}


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
    apply.add_argument(
        "--pseudonym",
        choices=tuple(PSEUDONYM_KINDS),
        help="release the record id as a pseudonym (the study ID): 'random' (new codes each "
        "release; only the crosswalk links them back) or 'hmac' (a keyed hash: the same key "
        "gives the same pseudonyms next year)",
    )
    apply.add_argument(
        "--pseudonym-length",
        type=whole_number(1),
        default=DEFAULT_LENGTH,
        help=f"hexadecimal digits of the pseudonym (default {DEFAULT_LENGTH})",
    )
    apply.add_argument(
        "--study-id",
        default=DEFAULT_STUDY_ID,
        help=f"name of the released pseudonym column (default {DEFAULT_STUDY_ID})",
    )
    apply.add_argument(
        "--key-file",
        help="file holding the secret key of keyed-hash pseudonyms (hexadecimal text); keep it "
        "apart from the data",
    )
    apply.add_argument(
        "--new-key",
        action="store_true",
        help="write a new random key to --key-file (which must not exist yet)",
    )
    apply.add_argument(
        "--crosswalk",
        help="also write the crosswalk (original -> pseudonym) to this CSV: it identifies "
        "people, keep it with the custodian and never send it with the data",
    )
    apply.set_defaults(handler=run)


def _with_pseudonym(recipe: Recipe, args: argparse.Namespace) -> Recipe:
    """The recipe with its record id released as the pseudonym ``--pseudonym`` asks for."""
    if args.pseudonym is None:
        return recipe
    record_id = recipe.roles.record_id
    if record_id is None:
        raise DeidError("--pseudonym replaces the record id, but the recipe names none.")
    if args.keep_record_id:
        raise DeidError("--keep-record-id and --pseudonym exclude each other: choose one.")
    step = PSEUDONYM_KINDS[args.pseudonym](
        record_id, length=args.pseudonym_length, released_as=args.study_id
    )
    return recipe.with_steps_for(record_id, [step])


def _key(recipe: Recipe, args: argparse.Namespace) -> bytes | None:
    """The secret key: read from --key-file, or made anew with --new-key (None when the
    recipe needs none)."""
    if args.new_key and not args.key_file:
        raise DeidError("--new-key writes the key to --key-file: give its path.")
    if not recipe.needs_key:
        if args.new_key:
            raise DeidError("--new-key: no keyed-hash pseudonym here needs a key.")
        if args.key_file:
            print("note: no keyed-hash pseudonym here; the key file is not used", file=sys.stderr)
        return None
    if not args.key_file:
        raise DeidError(
            "A keyed-hash pseudonym needs its secret key: give --key-file (with --new-key to "
            "make one)."
        )
    path = Path(args.key_file)
    if args.new_key:
        key = generate_key()
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise DeidError(
                f"The key file already exists: {path} (it is never overwritten; leave out "
                "--new-key to use it)."
            ) from None
        except OSError:
            raise DeidError(f"The key file cannot be written: {path}") from None
        with os.fdopen(descriptor, "w") as file:
            file.write(key_to_text(key) + "\n")
        print(
            f"wrote a new key to {path} (fingerprint {key_fingerprint(key)}); keep it apart "
            "from the data: whoever holds it can recompute every pseudonym",
            file=sys.stderr,
        )
        return key
    if not path.is_file():
        raise DeidError(f"No such key file: {path}")
    if path.stat().st_size > MAX_KEY_FILE_BYTES:
        raise DeidError("The key file is too large to hold a key.")
    return key_from_text(path.read_bytes())


def _check_paths(args: argparse.Namespace) -> None:
    paths = [Path(p).resolve() for p in (args.output, args.crosswalk, args.key_file) if p]
    if len(set(paths)) < len(paths):
        raise DeidError("The output, the crosswalk and the key file must be different files.")
    for path in (args.output, args.crosswalk):
        if path and Path(path).is_dir():
            raise DeidError(f"The output {path} is a folder; give a file name in it.")
        if path and not Path(path).parent.exists():
            raise DeidError(f"The output folder does not exist: {Path(path).parent}")


def run(args: argparse.Namespace) -> int:
    _check_paths(args)
    recipe = _with_pseudonym(load_recipe(args.recipe), args)
    check_names_before_reading(args.data, recipe)
    data = load_data(args.data)
    recipe.check_columns(data)  # names, and each step's kind of column (before the workspace)
    if args.crosswalk and not recipe.pseudonym_steps:
        raise DeidError("--crosswalk: the release has no pseudonyms (use --pseudonym).")
    key = _key(recipe, args)
    # Imported here, once the flags, paths, data and recipe have passed: see
    # deid_core.cli.shared.
    from deid_core.workspace import Workspace

    workspace = Workspace(data)
    release = workspace.release(recipe, keep_record_id=args.keep_record_id, key=key)
    out = Path(args.output)
    released = release.frame if args.keep_order else shuffle_rows(release.frame, seed=None)
    exported = to_bytes(released, "csv", neutralise=not args.keep_formulas)
    write_output(out, exported.data)
    for note in exported.notes:
        print(note, file=sys.stderr)
    stage = workspace.release_stage(recipe)
    for line in stage.summaries() if stage is not None else []:
        print(line, file=sys.stderr)
    order = "in the source's order" if args.keep_order else "in shuffled order"
    print(f"wrote {len(released)} masked records {order} to {out}", file=sys.stderr)
    if args.crosswalk:
        crosswalk = to_bytes(release.crosswalk, "csv", neutralise=not args.keep_formulas)
        write_output(args.crosswalk, crosswalk.data)
        print(
            f"wrote the crosswalk ({len(release.crosswalk)} pseudonyms) to {args.crosswalk}: "
            "it identifies people, keep it with the custodian",
            file=sys.stderr,
        )
    elif any(isinstance(s, RandomPseudonym) for s in recipe.pseudonym_steps):
        print(
            "note: no crosswalk written: nobody can trace the random pseudonyms back",
            file=sys.stderr,
        )
    return 0
