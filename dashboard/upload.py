"""Uploaded bytes -> a data set, or clear messages; and the role checks of the Data page.

:func:`read_upload` is pure (no Streamlit) so it can be tested with bytes; :func:`show_messages`
draws its result. Messages come from the core, which never quotes a data value; any other
exception becomes a generic message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from dashboard.state import roles_from_primary, user_message
from dashboard.text import literal
from deid_core.errors import DeidError
from deid_core.io.reading import read_table
from deid_core.io.roles import infer_roles, validate_column_for_role
from deid_core.recipe import Roles

#: What the upload widgets accept (compressed text as .csv.gz and the like: the widget matches
#: the last extension, the reader checks the one before it).
UPLOAD_TYPES = (
    *("csv", "tsv", "txt", "xlsx", "xls", "parquet", "dta", "sas7bdat", "xpt"),
    *("gz", "bz2", "xz", "zip"),
)

UNREADABLE = (
    "The file could not be read. Check that it is a table in one of the supported formats "
    "(CSV, TSV, TXT, also compressed, Excel, Parquet, Stata, SAS) and not damaged."
)

#: Roles whose problems stop a computation (shown as errors); others are warnings.
BLOCKING_ROLES = ("exposure", "outcome", "record_id", "weight")


@dataclass(frozen=True)
class Messages:
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors

    def __add__(self, other: Messages) -> Messages:
        return Messages(self.errors + other.errors, self.warnings + other.warnings)


@dataclass(frozen=True)
class UploadOutcome:
    """The frame read (None when unreadable), its name, and what to tell the user."""

    frame: pd.DataFrame | None
    name: str
    messages: Messages = field(default_factory=Messages)
    roles: Roles | None = None
    read_warnings: tuple[str, ...] = ()


def role_assignments(roles: Roles, columns: Iterable[str]) -> list[tuple[str, str]]:
    """(column, role) for every role a column plays; columns with no role are 'other'."""
    pairs = []
    for column in columns:
        found = roles.roles_of(column)
        pairs.extend((column, role) for role in (found or ["other"]))
    return pairs


def role_problems(frame: pd.DataFrame, roles: Roles, family: str = "logistic") -> Messages:
    """What keeps each column from playing its roles (the core's plain-language messages).

    Problems of the exposure, outcome or record id are errors (utility or linkage cannot be
    computed); others are warnings. A message is listed once even if several roles give it.
    The outcome is checked for the model ``family``.
    """
    errors: list[str] = []
    warnings: list[str] = []
    for column, role in role_assignments(roles, frame.columns):
        try:
            problems = validate_column_for_role(frame, column, role, family)
        except DeidError as error:
            problems = [str(error)]
        target = errors if role in BLOCKING_ROLES else warnings
        for problem in problems:
            if problem not in errors and problem not in warnings:
                target.append(problem)
    return Messages(tuple(errors), tuple(warnings))


def read_upload(content: bytes, filename: str) -> UploadOutcome:
    """Read an uploaded file and check it with the roles it would be given."""
    name = (filename or "upload").replace("\\", "/").rsplit("/", 1)[-1]
    try:
        table = read_table(content, filename or "")
    except DeidError as error:
        return UploadOutcome(None, name, Messages(errors=(str(error),)))
    except Exception as error:  # the reader's own text could quote the file
        user_message(error)
        return UploadOutcome(None, name, Messages(errors=(UNREADABLE,)))
    frame = table.frame
    try:
        roles = roles_from_primary(infer_roles(frame))
    except DeidError as error:
        return UploadOutcome(frame, table.name, Messages(warnings=(str(error),)), Roles())
    except Exception as error:
        user_message(error)
        roles = Roles()
    messages = Messages(warnings=tuple(table.warnings)) + role_problems(frame, roles)
    return UploadOutcome(frame, table.name, messages, roles, tuple(table.warnings))


def show_messages(messages: Messages) -> None:
    for text in messages.errors:
        st.error(literal(text), icon=":material/error:")
    for text in messages.warnings:
        st.warning(literal(text), icon=":material/warning:")
