"""Command line: ``python -m deid_core COMMAND``, one module per command (see
:mod:`deid_core.cli.main` for the parser and the list of commands)."""

from deid_core.cli.main import main

__all__ = ["main"]
