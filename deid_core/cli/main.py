"""Command line: the dashboard's operations without the UI, JSON out.

    python -m deid_core assess DATA [--recipe R.json] [--qi COL ...] [--exposure COL
        --outcome COL] [--covariate COL ...] [--record-id COL] [--rule RULE]
        [--tolerance T] [--source FILE] [--sampling-fraction F] [--weight COL]
        [--missing {category,wildcard}] [--bf-method {exact,sdcmicro}]
        [--model {logistic,poisson,linear,err,binomial,cox}] [--offset COL] [--trials COL]
        [--time COL] [--ties {breslow,efron}] [--factor COL ...] [--reference COL=LEVEL ...]
        [--seed S] [--replicates R] [--bootstrap B] [--classifier [R]]
        [--engine {memory,duckdb,spark}] [--spark-master URL]
    python -m deid_core apply DATA --recipe R.json -o OUT.csv [--keep-record-id] [--keep-order]
        [--keep-formulas] [--pseudonym {random,hmac} [--pseudonym-length N] [--study-id NAME]]
        [--key-file K [--new-key]] [--crosswalk OUT.csv]
    python -m deid_core profile DATA --recipe R.json --sweep STEP.PARAM=START:STOP:N
        [--kernel K ...] [--pattern COL] [--spatial-weight S] [--known COL ...]
        [--bootstrap B] [role and model flags as for assess]
    python -m deid_core uniqueness DATA --keys A,B,C [--recipe R.json] [--small-class T]
        [--format {json,csv}] [--engine {memory,duckdb,spark}] [--spark-master URL]
    python -m deid_core roc-attack DATA --score COL --status COL (--known-fraction F |
        --known-flag COL | --missing M) [--seed S] [--thresholds K | --quantiles Q]
        [--round D] [--binormal]
    python -m deid_core search DATA --qi COL ... --exposure COL --outcome COL
        --threshold C_OR_RISK [--non-public] [--columns COL ...] [--settings N]
        [--space FILE] [--print-space] [--suppression-limit SHARE] [--top N]
        [--best-recipe PATH] [role and model flags as for assess]

DATA may be a file (CSV/TSV, Excel, Parquet, Stata, SAS), a folder of Parquet files,
``table:NAME`` (a Spark table, with ``--engine spark``) or ``demo:KEY`` for a built-in demo.
``--engine duckdb`` or ``spark`` runs the counting of assess and uniqueness where the data are
and returns aggregates only (:mod:`deid_core.engines`).
Each command is a module of this package with ``add_parser(subparsers)`` and ``run(args)``;
what they share (loading, role and model flags, JSON output) is in :mod:`deid_core.cli.shared`.
Only the command named on the command line is imported (all of them for ``--help`` or an
unknown command), and each imports what computes its results inside ``run``: a bad flag or a
refused file ends before statsmodels, scipy or scikit-learn are loaded.

Errors go to stderr as one line, with exit status 2 (bad input, including input the machine
cannot hold or compute with: :data:`PLAIN_WORDS`) or 1 (anything unexpected).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from deid_core.cli.shared import os_error_words
from deid_core.errors import DeidError

EXIT_BAD_INPUT = 2
EXIT_UNEXPECTED = 1

#: What the input did, in plain words, for failures the core does not foresee one by one (its
#: bounds and checks catch the known cases first).
PLAIN_WORDS: dict[type[BaseException], str] = {
    RecursionError: "the input is nested too deeply to be read",
    OverflowError: "a number in the input is too large to compute with (beyond about 1e308)",
    IsADirectoryError: "a path names a folder where a file is expected",
    FileNotFoundError: "a file or folder named on the command line does not exist",
    PermissionError: "a file named on the command line cannot be read or written (permissions)",
    MemoryError: "the input needs more memory than this machine has; use a smaller input",
}

#: The commands, in the order ``--help`` lists them: name, module of this package.
COMMANDS = {
    "assess": "assess",
    "apply": "apply",
    "profile": "profile",
    "uniqueness": "uniqueness",
    "roc-attack": "roc_attack",
    "search": "search",
}


class _Parser(argparse.ArgumentParser):
    """argparse, its refusals in one line (``error: argument --replicates: must be...``),
    exit status 2, like every other refusal of the command line."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the command ``only`` alone (the others are then not
    imported; parsing that command's flags is the same either way)."""
    parser = _Parser(
        prog="python -m deid_core",
        description="Mask health microdata and measure disclosure risk and analysis utility.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(f"deid_core.cli.{module}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except DeidError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except tuple(PLAIN_WORDS) as error:
        words = next(text for kind, text in PLAIN_WORDS.items() if isinstance(error, kind))
        print(f"error: {words} ({type(error).__name__}).", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:  # reading or writing a file named on the command line
        where = f" {error.filename}" if error.filename else " a file named on the command line"
        print(f"error: could not use{where}: {os_error_words(error)}.", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:
        print(f"error: unexpected failure ({type(error).__name__}).", file=sys.stderr)
        return EXIT_UNEXPECTED
