"""The report's section on direct identifiers: how each withheld column leaves the file
(dropped, or a pseudonym), several rows per person, and each of HIPAA Safe Harbor's 18 items
in the release (:func:`deid_core.io.safe_harbor.release_status`), with the seed's reasons why
meeting Safe Harbor is not the same as a low risk.

The secret key of keyed-hash pseudonyms never reaches this module: the report is built from
the recipe, which holds at most the key's fingerprint, and the fingerprint is not printed.
"""

from __future__ import annotations

from deid_core.io.safe_harbor import WHY_NOT_ENOUGH, SafeHarborScreen, release_status
from deid_core.recipe import Recipe
from deid_core.report.document import Block, BulletList, Paragraph, Section, Table
from deid_core.risk import People

TITLE = "Direct identifiers and HIPAA Safe Harbor"
CUSTODIAN_TEXT = (
    "Neither the secret key of keyed-hash pseudonyms nor the crosswalk of pseudonyms is in "
    "the release or in this report. The custodian keeps them apart from the data: whoever "
    "holds the key and a list of identifiers can recompute every keyed-hash pseudonym, and the "
    "crosswalk names every person. A keyed-hash pseudonym keeps the releases linkable from "
    "year to year with the same key; random pseudonyms change at every release unless the "
    "custodian maps the next file through the same crosswalk."
)


def identifiers_section(
    recipe: Recipe,
    screen: SafeHarborScreen,
    people: People | None,
    keep_record_id: bool = False,
) -> Section:
    """The section: treatments, several rows per person, the 18 items, and the caveat."""
    roles = recipe.roles
    pseudonyms = {step.column: step for step in recipe.pseudonym_steps}
    withheld = [roles.record_id] if roles.record_id else []
    withheld += [c for c in roles.direct_identifiers if c not in withheld]
    lines = []
    for column in withheld:
        step = pseudonyms.get(column)
        if step is not None:
            lines.append(step.describe())
        elif column == roles.record_id and keep_record_id:
            lines.append(f"{column}: the record id, released as it is (on request)")
        else:
            lines.append(f"{column}: dropped (not released)")
    blocks: list[Block] = [
        Paragraph("How the direct identifiers and the record id leave the file:"),
        BulletList(tuple(lines) or ("none chosen",)),
    ]
    if pseudonyms:
        blocks.append(Paragraph(CUSTODIAN_TEXT, "note"))
    if people is not None:
        blocks.append(
            Paragraph(
                f"Several rows per person: {people.n_rows:,} rows of {people.n_people:,} people "
                f"(the record id '{roles.record_id}' repeats). The closed-data risk, the verdict "
                "and the risk axis of the R-U map count people, each at risk by their riskiest "
                "row; a person's pseudonym is the same on all their rows. Cologne's "
                "identifiability, the open-data risk and the utility model count rows.",
                "note",
            )
        )
    rows = tuple(
        (str(entry.item), entry.title, entry.status, "; ".join(entry.treatments) or "-")
        for entry in release_status(screen, recipe, keep_record_id)
    )
    blocks.append(
        Table(
            ("Item", "Safe Harbor identifier", "In the release", "Columns and treatment"),
            rows,
            "Each of the 18 items of HIPAA Safe Harbor (45 CFR 164.514(b)(2); El Emam & Malin, "
            "Box 2): found by column names and a sample of values of the original data. A "
            "column the screen misses is not thereby free of identifiers.",
        )
    )
    blocks.append(Paragraph(WHY_NOT_ENOUGH, "note"))
    return Section("identifiers", TITLE, tuple(blocks))
