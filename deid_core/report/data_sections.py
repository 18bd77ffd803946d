"""The report's sections on the data and the masking: data summary, variable roles, release
context and threshold, and each masking step in plain language."""

from __future__ import annotations

import pandas as pd

from deid_core.recipe import Recipe
from deid_core.report.document import Block, BulletList, Paragraph, Section, Table
from deid_core.report.formatting import (
    fmt_count,
    fmt_risk,
    parameters_withheld,
    role_text,
    step_text,
)
from deid_core.report.titles import SECTION_TITLES
from deid_core.risk.context import ReleaseContext
from deid_core.utility import UtilityResult
from deid_core.workspace import Workspace


def _dtype_text(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series.dtype):
        return "true/false"
    if pd.api.types.is_numeric_dtype(series.dtype):
        return "number"
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return "date"
    return "text"


def summary_section(
    workspace: Workspace, recipe: Recipe, name: str, synthetic: bool, keep_record_id: bool
) -> Section:
    original = workspace.original
    roles = recipe.roles
    pseudonyms = {step.column: step.released_name for step in recipe.pseudonym_steps}
    withheld = [c for c in roles.direct_identifiers if c not in pseudonyms]
    if roles.record_id and not keep_record_id and roles.record_id not in pseudonyms:
        withheld.append(roles.record_id)
    released = [pseudonyms.get(c, c) for c in original.columns if c not in withheld]
    people = workspace.people(recipe)
    blocks: list[Block] = []
    if synthetic:
        blocks.append(
            Paragraph(
                "Synthetic data: these records were generated for demonstration and describe "
                "no real persons.",
                "warn",
            )
        )
    blocks.append(
        Table(
            ("Item", "Value"),
            (
                ("Data set", name),
                ("Records", fmt_count(workspace.n_records)),
                *(
                    [("People (several rows each)", fmt_count(people.n_people))]
                    if people is not None
                    else []
                ),
                ("Columns", fmt_count(original.shape[1])),
                ("Released columns", ", ".join(released) or "(none)"),
                ("Withheld (never released)", ", ".join(withheld) or "(none)"),
                *(
                    [
                        (
                            "Released as pseudonyms",
                            ", ".join(f"{c} as {n}" for c, n in pseudonyms.items()),
                        )
                    ]
                    if pseudonyms
                    else []
                ),
            ),
        )
    )
    return Section("summary", SECTION_TITLES["summary"], tuple(blocks))


def roles_section(recipe: Recipe, original: pd.DataFrame) -> Section:
    masked = set(recipe.masked_columns)
    rows = tuple(
        (
            column,
            role_text(recipe, column),
            _dtype_text(original[column]),
            "yes" if column in masked else "no",
        )
        for column in original.columns
    )
    return Section(
        "roles",
        SECTION_TITLES["roles"],
        (
            Table(("Column", "Role", "Type", "Masked"), rows),
            Paragraph(
                "Quasi-identifiers are what an intruder may know (and so link on); direct "
                "identifiers and the record id are never released.",
                "note",
            ),
        ),
    )


def context_section(context: ReleaseContext) -> Section:
    rows = [
        ("Release", "public" if context.public else "non-public (to a known recipient)"),
        ("Minimum cell size", str(context.min_cell_size)),
        ("Threshold (largest acceptable risk, 1 / cell size)", f"{context.threshold:.4g}"),
    ]
    if context.public:
        judged = "the maximum risk (an intruder attacks the most exposed record)"
    else:
        judged = (
            "the worst of three attack scenarios, each its probability times the strict "
            "average risk (El Emam & Malin, Table 6)"
        )
        rows += [
            ("Pr(deliberate attempt)", f"{context.pr_attempt:.3g}"),
            ("Pr(analyst knows someone in the data)", f"{context.pr_acquaintance:.3g}"),
            ("Pr(data breach at the recipient)", f"{context.pr_breach:.3g}"),
        ]
    return Section(
        "context",
        SECTION_TITLES["context"],
        (
            Table(("Setting", "Value"), tuple(rows)),
            Paragraph(f"The release is judged by {judged}."),
        ),
    )


def masking_section(
    workspace: Workspace,
    recipe: Recipe,
    include_parameters: bool,
    utility: UtilityResult | None,
    missing: str,
    bf_method: str,
) -> Section:
    items = tuple(step_text(s, include_parameters) for s in recipe.all_steps) or ("no masking",)
    blocks: list[Block] = [BulletList(items)]
    stage = workspace.release_stage(recipe)
    if stage is not None:
        blocks.append(Paragraph("What the steps on the whole data did:"))
        blocks.append(BulletList(tuple(stage.summaries())))
        if stage.wildcards:
            blocks.append(
                Paragraph(
                    "Suppressed values are released as missing; in every risk figure a "
                    "suppressed value matches any value of its column (sdcMicro's convention), "
                    "so a record's class is every record compatible with it. Values missing in "
                    "the original data follow the missing-value rule of the risk section.",
                    "note",
                )
            )
        subsample = workspace.release_risk(recipe, missing, bf_method)
        if subsample is not None:
            blocks.append(
                Paragraph(
                    f"The release is a random subsample (sampling fraction "
                    f"{subsample.sampling_fraction:.3f}): nobody can know who is in it, so the "
                    "risk that applies is the open-data risk at that fraction: "
                    f"Benedetti-Franconi individual risk at most {fmt_risk(subsample.bf_max)} "
                    f"(mean {fmt_risk(subsample.bf_mean)}), "
                    f"{subsample.expected_reidentifications:.1f} expected re-identifications, "
                    f"journalist risk at most {fmt_risk(subsample.journalist_max)}. The "
                    "class-based figures below assume the intruder knows who was sampled.",
                )
            )
    secret = [s for s in recipe.all_steps if parameters_withheld(s)]
    if secret and not include_parameters:
        blocks.append(
            Paragraph(
                "Exact noise, smoothing and PRAM parameters and the random seeds are withheld "
                "from this report: with them, an intruder could bound or regenerate the noise.",
                "note",
            )
        )
    if include_parameters and secret:
        blocks.append(
            Paragraph(
                "This report includes masking parameters and seeds: keep it internal. Anyone "
                "holding a seed can regenerate the noise and subtract it.",
                "warn",
            )
        )
    if recipe.is_random:
        replicates = utility.replicates if utility is not None else None
        blocks.append(
            Paragraph(
                "The released file holds one random draw of the random steps; "
                + (
                    f"utility figures are summarised over {replicates.n_replicates} random "
                    "replicates."
                    if replicates is not None
                    else "utility figures are those of that draw."
                ),
                "note",
            )
        )
    return Section("masking", SECTION_TITLES["masking"], tuple(blocks))
