"""The sections an ethics board or data-access committee reads first and last: the project and
release record (who releases what to whom and why, the files' and the recipe's SHA-256, the
software, the date), the residual risk of every column released unmasked, and the sign-off.

The record ties the report to the exact files (:mod:`deid_core.report.provenance`). The
residual-risk statement says plainly what masking did not cover: a column released as in the
source can be matched by anyone who knows a person's value, and may give away the outcome, a
sensitive column or a masked column (:mod:`deid_core.risk.determination`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from deid_core.cancellation import check_cancelled
from deid_core.errors import DeidError
from deid_core.recipe import Recipe
from deid_core.report.document import Block, BulletList, Paragraph, Section, Table
from deid_core.report.formatting import fmt_count, parameters_withheld, role_text
from deid_core.report.provenance import (
    FileFingerprint,
    ProjectDetails,
    recipe_digest,
    software_versions,
)
from deid_core.risk.context import ReleaseContext
from deid_core.risk.determination import (
    DETERMINES,
    MAX_INTERVALS,
    MAX_LEVELS,
    MIN_GROUP,
    NEARLY_DETERMINES,
    SAMPLE_ROWS,
    Determination,
    column_exposure,
    determination,
)

BOARD_TITLES = {
    "project": "Project and release record",
    "residual": "Residual risk of the columns released unmasked",
    "sign_off": "Sign-off",
}

NO_SOURCE_FILE = (
    "not recorded: the data were not read from a file in this session (built-in data, or a "
    "report built without the source file)"
)
NO_RELEASED_FILE = (
    "not recorded: the report was built without the released file (the Export page hashes "
    "the file it offers for download)"
)

#: A signature line: room to sign by hand on the printed report.
SIGNATURE_SPACE = "\n\n"


def recipe_hash_withheld(recipe: Recipe, include_parameters: bool) -> bool:
    """True when the recipe's digest is left out: the recipe holds masking parameters the
    report withholds (noise, smoothing, PRAM), and a digest over those few possible values
    would let anyone confirm a guess of them by hashing candidate recipes."""
    return not include_parameters and any(parameters_withheld(s) for s in recipe.steps)


def _file_rows(label: str, file: FileFingerprint | None, missing: str) -> list[tuple[str, str]]:
    if file is None:
        return [(label, missing)]
    described = f"{file.name} ({file.description})" if file.description else file.name
    return [
        (label, described),
        (f"{label}: size", file.size_text()),
        (f"{label}: SHA-256", file.sha256),
    ]


def project_section(
    project: ProjectDetails,
    created: str,
    dataset_name: str,
    recipe: Recipe,
    include_parameters: bool,
    source_file: FileFingerprint | None,
    released_file: FileFingerprint | None,
) -> Section:
    """Who releases what to whom and why, the date, the files' and the recipe's SHA-256 and
    the software that made the release."""
    rows: list[tuple[str, str]] = [*project.rows(), ("Date of this report", created)]
    rows.append(("Data set", dataset_name))
    rows += _file_rows("Source file", source_file, NO_SOURCE_FILE)
    rows += _file_rows("Released file", released_file, NO_RELEASED_FILE)
    if recipe_hash_withheld(recipe, include_parameters):
        digest = (
            "withheld: the recipe holds the masking parameters this report withholds, and its "
            "digest would let anyone confirm a guess of them (build the report with the "
            "parameters for your own archive to record it)"
        )
    else:
        digest = recipe_digest(recipe)
    rows.append(("Recipe: SHA-256 of its canonical JSON", digest))
    software = "; ".join(f"{name} {version}" for name, version in software_versions())
    rows.append(("Software", software))
    blocks: list[Block] = [
        Table(("Item", "Value"), tuple(rows)),
        Paragraph(
            "SHA-256 (FIPS 180-4) identifies a file: anyone holding it can recompute the "
            "digest (sha256sum FILE, or Python's hashlib.sha256) and compare; a file changed "
            "by a single byte has another digest. The released file's digest is that of the "
            "file exactly as downloaded, in the format stated. The recipe's digest is over its "
            "canonical JSON: the recipe as exported without seeds, with sorted keys, no "
            "whitespace, in UTF-8.",
            "note",
        ),
    ]
    if not all((project.title, project.custodian, project.recipient, project.purpose)):
        blocks.append(
            Paragraph(
                "Some project details are not given: an ethics board or data-access committee "
                "usually needs all four (fill them in on the Export page).",
                "note",
            )
        )
    return Section("project", BOARD_TITLES["project"], tuple(blocks))


def determination_targets(recipe: Recipe, released: Sequence[str]) -> dict[str, str]:
    """The columns an unmasked column could give away, each with what it is: the outcome,
    the sensitive columns and the released columns that masking changes."""
    roles = recipe.roles
    targets: dict[str, str] = {}
    if roles.outcome is not None:
        targets[roles.outcome] = "the outcome"
    for column in roles.sensitive:
        targets.setdefault(column, "a sensitive column")
    for column in recipe.masked_columns:
        if column in released:
            targets.setdefault(column, "a masked column")
    return targets


def residual_risks(
    original: pd.DataFrame, recipe: Recipe, released: Sequence[str]
) -> tuple[list[str], list[Determination], list[str]]:
    """The released columns no step changes, the determinations among them that reach
    :data:`NEARLY_DETERMINES`, and the pairs that could not be measured (as messages).
    :func:`~deid_core.cancellation.check_cancelled` is called before each pair (each counts
    the whole file), so that a report no longer wanted stops there."""
    masked = set(recipe.masked_columns)
    unmasked = [c for c in released if c not in masked]
    targets = determination_targets(recipe, released)
    found: list[Determination] = []
    errors: list[str] = []
    for column in unmasked:
        for target in targets:
            if target == column:
                continue
            check_cancelled()
            try:
                result = determination(original, column, target)
            except DeidError as error:
                errors.append(f"'{column}' and '{target}': {error}")
                continue
            if result is not None and result.level is not None:
                found.append(result)
    return unmasked, found, errors


def residual_section(original: pd.DataFrame, recipe: Recipe, released: Sequence[str]) -> Section:
    """A statement for every column released unmasked: how it matches people, and what it
    gives away."""
    title = BOARD_TITLES["residual"]
    unmasked, found, errors = residual_risks(original, recipe, released)
    if not unmasked:
        text = "Every released column is masked: no column is released as in the source."
        return Section("residual", title, (Paragraph(text, "note"),))
    targets = determination_targets(recipe, released)
    by_column: dict[str, list[Determination]] = {}
    for result in found:
        by_column.setdefault(result.column, []).append(result)
    rows = []
    for column in unmasked:
        exposure = column_exposure(original, column)
        gives = "; ".join(
            f"{r.level} '{r.target}' ({targets[r.target]})" for r in by_column.get(column, [])
        )
        rows.append(
            (
                column,
                role_text(recipe, column),
                fmt_count(exposure.distinct),
                fmt_count(exposure.unique_records),
                gives or "nothing found",
            )
        )
    header = ("Column", "Role", "Distinct values", "Records whose value no other record has")
    blocks: list[Block] = [
        Paragraph(
            f"{len(unmasked)} column(s) are released exactly as in the source: "
            f"{', '.join(unmasked)}. Anyone who knows a person's value of such a column (from "
            "a register, a hospital record, or knowing the person) can look for it in the "
            "released file, alone or together with the other columns they know; a value that "
            "no other record holds points to one record. The risk figures above count only the "
            "quasi-identifiers: an unmasked column that is not one is matched all the same by "
            "anyone who knows it.",
        ),
        Table((*header, "Gives away"), tuple(rows)),
    ]
    for result in found:
        what = targets[result.target]
        consequence = (
            "masking it does not hide it"
            if what == "a masked column"
            else f"whoever learns '{result.column}' learns '{result.target}'"
        )
        blocks.append(
            Paragraph(
                f"'{result.column}' {result.level} '{result.target}' ({what}): {result}. "
                f"Releasing '{result.column}' unmasked releases '{result.target}' with it; "
                f"{consequence}.",
                "warn",
            )
        )
    if errors:
        blocks.append(Paragraph("Not measured:", "note"))
        blocks.append(BulletList(tuple(errors)))
    blocks.append(
        Paragraph(
            "How 'gives away' is measured: each unmasked column predicts the outcome, every "
            "sensitive column and every masked column (its original values) with a simple rule: "
            f"the column's own values when it is text or has at most {MAX_LEVELS} distinct "
            f"values (values of fewer than {MIN_GROUP} records pooled), else at most "
            f"{MAX_INTERVALS} intervals of at least {MIN_GROUP} records found by a decision "
            "tree. For a categorical target the strength is Goodman and Kruskal's lambda, the "
            "share of the errors of guessing the most common value that the rule removes; for "
            "a numeric one, the share of its variance the rule explains (eta squared). At "
            f"least {DETERMINES:g} is 'determines', at least {NEARLY_DETERMINES:g} 'nearly "
            f"determines'. Measured on the whole file (on {SAMPLE_ROWS:,} random records when "
            "it is larger); a column can still reveal a target in ways a simple rule misses.",
            "note",
        )
    )
    return Section("residual", title, tuple(blocks))


def sign_off_section(project: ProjectDetails, context: ReleaseContext) -> Section:
    """Lines to sign: who prepared the release, the custodian, the recipient and the board."""
    rows = (
        ("Prepared by (the person who masked the data)", "", SIGNATURE_SPACE, ""),
        ("Data custodian", project.custodian, SIGNATURE_SPACE, ""),
        ("Recipient", project.recipient, SIGNATURE_SPACE, ""),
        ("Ethics board or data-access committee", "", SIGNATURE_SPACE, ""),
    )
    audience = (
        "a public release: the recipient line may be left empty"
        if context.public
        else "a release to a known recipient"
    )
    return Section(
        "sign_off",
        BOARD_TITLES["sign_off"],
        (
            Paragraph(
                "Each signature confirms that the signatory has read this report, including "
                "the residual risks of the columns released unmasked, and agrees to the release "
                "of the file whose SHA-256 is given in the project and release record, for the "
                f"stated purpose ({audience})."
            ),
            Table(("Role", "Name", "Signature", "Date"), rows),
        ),
    )
