"""The report's risk sections: re-identification risk before and after masking (equivalence
classes, or record linkage when a quasi-identifier is perturbed), open-data risk, attribute
disclosure and the verdict."""

from __future__ import annotations

from typing import Any

import numpy as np

from deid_core.charts import class_size_distribution
from deid_core.errors import DeidError
from deid_core.recipe import Recipe
from deid_core.report.document import Block, BulletList, Paragraph, Section, Table
from deid_core.report.formatting import (
    UNAVAILABLE,
    fmt_count,
    fmt_number,
    fmt_risk,
    parameters_withheld,
)
from deid_core.report.titles import SECTION_TITLES
from deid_core.risk import (
    BF_METHODS,
    CLASS_KINDS,
    DISTANCES,
    MISSING_MODES,
    REFERENCE_TOOL_NOTES,
    AttributeDisclosure,
    LinkageResult,
    PerturbedRisk,
    RiskSummary,
    SampleDesign,
    SampleRisk,
)
from deid_core.risk.context import ReleaseContext, Verdict
from deid_core.risk.release import JUDGED_BASES, JudgedRelease
from deid_core.workspace import Workspace


def class_size_text(
    before: RiskSummary, after: RiskSummary, min_cell_size: int
) -> tuple[str, Table]:
    """The class-size chart's text alternative: a sentence and its bars as a table."""
    tables = [class_size_distribution(s.class_size, min_cell_size) for s in (before, after)]
    rows = tuple(
        (size, fmt_count(b), fmt_count(a), status)
        for size, b, a, status in zip(
            tables[0]["class size"],
            tables[0]["records"],
            tables[1]["records"],
            tables[1]["status"],
            strict=True,
        )
    )
    small = [int((np.asarray(s.class_size) < min_cell_size).sum()) for s in (before, after)]
    alt = (
        f"Bar chart of records by equivalence-class size, before and after masking: "
        f"{small[1]:,} of {after.n_records:,} records are in classes smaller than "
        f"{min_cell_size} after masking ({small[0]:,} of {before.n_records:,} before)."
    )
    header = ("Class size", "Records before masking", "Records after masking", "Status")
    return alt, Table(header, rows)


def risk_section(
    before: RiskSummary,
    after: RiskSummary,
    link_before: LinkageResult | None,
    link_after: LinkageResult | None,
    link_error: str | None,
    rule: str,
    context: ReleaseContext,
) -> Section:
    small = after.small_class_size
    unit = after.unit.capitalize()
    one = "person" if after.unit == "people" else "record"
    rows = [
        (unit, fmt_count(before.n_records), fmt_count(after.n_records)),
        ("Equivalence classes", fmt_count(before.n_classes), fmt_count(after.n_classes)),
        ("k (smallest class)", fmt_count(before.k), fmt_count(after.k)),
        (f"Uniques (classes of one {one})", fmt_count(before.uniques), fmt_count(after.uniques)),
        (
            f"{unit} in classes smaller than {small}",
            fmt_count(before.records_in_small_classes),
            fmt_count(after.records_in_small_classes),
        ),
        ("Maximum risk", fmt_risk(before.max_risk), fmt_risk(after.max_risk)),
        ("Average risk", fmt_risk(before.average_risk), fmt_risk(after.average_risk)),
        (
            "Strict average risk",
            fmt_risk(before.strict_average_risk),
            fmt_risk(after.strict_average_risk),
        ),
        (
            "Cologne identifiability score",
            fmt_risk(link_before.identifiability_score if link_before else None),
            fmt_risk(link_after.identifiability_score if link_after else None),
        ),
        (
            "Cologne anonymity score",
            fmt_risk(link_before.anonymity_score if link_before else None),
            fmt_risk(link_after.anonymity_score if link_after else None),
        ),
    ]
    blocks: list[Block] = [
        Table(
            ("Measure", "Before masking", "After masking"),
            tuple(rows),
            f"Quasi-identifiers: {', '.join(after.quasi_identifiers) or '(none)'}. Missing "
            f"values count as {after.missing}. Identifiability uses the "
            f"'{rule.replace('_', ' ')}' matching rule.",
        )
    ]
    if link_error:
        blocks.append(Paragraph(f"Identifiability unavailable: {link_error}", "note"))
    blocks.append(
        Paragraph(
            "Risk is the probability of re-identifying a record: 1 / the size of its "
            "equivalence class (records identical on every quasi-identifier). Cologne's "
            "identifiability is the average, over released records, of 1 / the number of "
            "source records an intruder would match, counting only correct matches.",
            "note",
        )
    )
    if after.unit == "people":
        blocks.append(
            Paragraph(
                "Several rows per person: class sizes count distinct people, and a person's "
                "class is the smallest class any of their rows is in (a person is at risk by "
                "their riskiest row); k, uniques and the risks run over people. Cologne's "
                "identifiability counts rows.",
                "note",
            )
        )
    elif before.unit == "people":
        blocks.append(
            Paragraph(
                "Several rows per person: before masking the figures count people; after "
                "masking they count rows, each row as a person of its own, because suppressed "
                "or missing values that match any value are not yet counted in people.",
                "note",
            )
        )
    return Section("risk", SECTION_TITLES["risk"], tuple(blocks))


def open_data_section(
    design: SampleDesign | None,
    before: SampleRisk | None,
    after: SampleRisk | None,
    error: str | None,
) -> Section:
    title = SECTION_TITLES["open_data"]
    if design is None:
        return Section(
            "open_data",
            title,
            (
                Paragraph(
                    "Not assessed: the file was treated as closed data (an intruder knows who "
                    "is in it), the figures above. If it is a sample of a larger population, "
                    "set the sampling fraction on the Risk page for the open-data figures.",
                    "note",
                ),
            ),
        )
    if before is None or after is None:
        return Section(
            "open_data",
            title,
            (Paragraph(f"Open-data risk unavailable: {error or 'no sample design'}", "note"),),
        )

    def pair(a: float, b: float) -> str:
        return f"{fmt_risk(a)} / {fmt_risk(b)}"

    rows = [
        ("Population size", fmt_count(before.population_size), fmt_count(after.population_size)),
        (
            "Sampling fraction",
            fmt_risk(before.sampling_fraction),
            fmt_risk(after.sampling_fraction),
        ),
        (
            "Prosecutor risk (max / average)",
            pair(before.prosecutor_max, before.prosecutor_average),
            pair(after.prosecutor_max, after.prosecutor_average),
        ),
        (
            "Journalist risk (max / average)",
            pair(before.journalist_max, before.journalist_average),
            pair(after.journalist_max, after.journalist_average),
        ),
        ("Marketer risk", fmt_risk(before.marketer), fmt_risk(after.marketer)),
        (
            "Benedetti-Franconi individual risk (max / mean)",
            pair(before.bf_max, before.bf_mean),
            pair(after.bf_max, after.bf_mean),
        ),
        (
            "Expected re-identifications",
            fmt_number(before.expected_reidentifications),
            fmt_number(after.expected_reidentifications),
        ),
        (
            "Sample uniques",
            fmt_count(before.uniques.sample_uniques),
            fmt_count(after.uniques.sample_uniques),
        ),
        (
            "Estimated population uniques",
            f"{fmt_number(before.uniques.estimate)} ({before.uniques.selected})",
            f"{fmt_number(after.uniques.estimate)} ({after.uniques.selected})",
        ),
    ]
    blocks: list[Block] = [
        Table(
            ("Measure", "Before masking", "After masking"),
            tuple(rows),
            f"The released file as {design.describe()}. Population class sizes: "
            f"{after.f_estimator}. Missing quasi-identifier values: "
            f"{MISSING_MODES[after.missing]}. Individual risk: {BF_METHODS[after.bf_method]}.",
        ),
        Paragraph(
            "Prosecutor risk is 1 / the sample class size (the intruder knows the person is in "
            "the file); journalist risk 1 / the estimated population class size; marketer risk "
            "the average of the latter; the Benedetti-Franconi individual risk the expected "
            "1 / population class size given the sample class (a negative-binomial model), "
            "summed over records as the expected number of re-identifications. Population "
            "uniques are estimated by the estimator Dankar et al. (2012) choose for the "
            "sampling fraction.",
            "note",
        ),
        Paragraph("Where these definitions differ from sdcMicro's and ARX's:", "note"),
        BulletList(REFERENCE_TOOL_NOTES),
    ]
    return Section("open_data", title, tuple(blocks))


def verdict_section(
    verdict: Verdict,
    before: Verdict,
    context: ReleaseContext,
    judged: JudgedRelease,
    attribute: list[AttributeDisclosure],
) -> Section:
    blocks: list[Block] = [
        Paragraph(verdict.text, "ok" if verdict.meets else "warn"),
        Paragraph(f"Judged by {JUDGED_BASES[judged.basis]}. {judged.reason}", "note"),
        Table(
            ("Measure", "Counted in", "Maximum risk", "Average risk", "Judged"),
            tuple(
                (name, unit, fmt_risk(figures.max_risk), fmt_risk(figures.average_risk), mark)
                for name, unit, figures, mark in _measures(judged)
            ),
        ),
    ]
    if verdict.scenarios:
        blocks.append(
            Table(
                ("Attack scenario", "Risk (probability x conditional risk)"),
                tuple((name, fmt_risk(value)) for name, value in verdict.scenarios.items()),
            )
        )
    blocks.append(
        Paragraph(
            f"Before masking: {before.text} Threshold {context.threshold:.4g} "
            f"(minimum cell size {context.min_cell_size}).",
            "note",
        )
    )
    if verdict.not_judged:
        blocks.append(
            Paragraph(
                "The release was not judged: mark the quasi-identifiers (the columns an "
                "intruder could know) before sending this file.",
                "note",
            )
        )
    elif not verdict.meets:
        blocks.append(
            Paragraph(
                "The masked data do not meet the threshold: mask more (or revisit the release "
                "context) before sending this file.",
                "note",
            )
        )
    flagged = [a for a in attribute if a.n_homogeneous]
    if flagged:
        blocks.append(
            Paragraph(
                "Attribute disclosure (not part of the threshold): "
                + "; ".join(
                    f"{a.n_homogeneous:,} of {a.n_records:,} records are in classes where "
                    f"everyone shares the value of {a.column} (distinct l = {a.l_distinct})"
                    for a in flagged
                )
                + ". Knowing such a person's class reveals the value.",
                "warn",
            )
        )
    return Section("verdict", SECTION_TITLES["verdict"], tuple(blocks))


def _measures(judged: JudgedRelease) -> list[tuple[str, str, Any, str]]:
    """(name, unit, figures, "yes"/"") of every risk measure of the release."""
    rows = [
        ("Compatible classes of the release", judged.classes.unit, judged.classes, "classes"),
        (
            "Exact linkage to the source",
            judged.source.unit if judged.source else "",
            judged.source,
            "source_linkage",
        ),
        (
            "Open-data risk at the fraction released",
            judged.open_data.unit if judged.open_data else "",
            judged.open_data,
            "open_data",
        ),
        ("Record linkage within reach", "records", judged.perturbed, "record_linkage"),
    ]
    return [
        (name, unit, figures, "yes" if basis == judged.basis else "")
        for name, unit, figures, basis in rows
        if figures is not None
    ]


def attribute_results(
    workspace: Workspace, recipe: Recipe, missing: str
) -> tuple[list[AttributeDisclosure], list[str]]:
    """Attribute disclosure of the outcome and the sensitive columns (errors as messages)."""
    results: list[AttributeDisclosure] = []
    errors: list[str] = []
    for column in recipe.roles.attribute_targets:
        try:
            results.append(workspace.attribute_disclosure(recipe, column, missing))
        except DeidError as error:
            errors.append(f"{column}: {error}")
    return results, errors


def attribute_section(
    recipe: Recipe, results: list[AttributeDisclosure], errors: list[str]
) -> Section:
    title = SECTION_TITLES["attribute"]
    if not results and not errors:
        return Section(
            "attribute",
            title,
            (
                Paragraph(
                    "Not assessed: no outcome and no sensitive column was chosen.",
                    "note",
                ),
            ),
        )
    rows = tuple(
        (
            a.column,
            fmt_count(a.l_distinct),
            fmt_number(a.l_entropy),
            fmt_risk(a.t),
            f"{fmt_count(a.n_homogeneous)} ({100 * a.share_homogeneous:.1f}%)",
        )
        for a in results
    )
    blocks: list[Block] = []
    if rows:
        kinds = sorted({CLASS_KINDS[a.classes] for a in results})
        distances = sorted({f"{a.column}: {DISTANCES[a.distance]}" for a in results})
        blocks.append(
            Table(
                (
                    "Column",
                    "Distinct l-diversity",
                    "Entropy l-diversity",
                    "t-closeness",
                    "Records in classes sharing one value",
                ),
                rows,
                f"Classes: {'; '.join(kinds)}. t-closeness distance: {'; '.join(distances)}.",
            )
        )
    for error in errors:
        blocks.append(Paragraph(f"Unavailable: {error}", "note"))
    blocks.append(
        Paragraph(
            "Distinct l-diversity is the fewest different values of the column in a class, "
            "entropy l-diversity the smallest exp(entropy) (Machanavajjhala et al. 2007; "
            "sdcMicro's definitions): higher is safer. t-closeness is the largest Earth "
            "Mover's Distance between a class's distribution of the column and the whole "
            "file's (Li et al. 2007): lower is safer. Missing values count as a value of their "
            "own.",
            "note",
        )
    )
    return Section("attribute", title, tuple(blocks))


def perturbed_risk_section(
    before: RiskSummary,
    after: PerturbedRisk,
    link_before: LinkageResult | None,
    recipe: Recipe,
    include_parameters: bool,
) -> Section:
    """Risk before (equivalence classes of the unmasked data) and after masking (record
    linkage: a quasi-identifier is perturbed, so the class figures do not apply). The reach of
    a perturbation whose parameters are withheld (a noise half-width) is withheld with them."""
    na = "does not apply (values perturbed)"
    interval = after.interval
    in_people = before.unit == "people"
    rows = [
        (
            "Records (people before masking)" if in_people else "Records",
            fmt_count(before.n_records),
            fmt_count(after.n_records),
        ),
        ("Equivalence classes", fmt_count(before.n_classes), na),
        ("k (smallest class)", fmt_count(before.k), na),
        (
            "Uniques / records linked with certainty",
            fmt_count(before.uniques),
            fmt_count(after.certain),
        ),
        ("Maximum risk", fmt_risk(before.max_risk), fmt_risk(after.max_risk)),
        ("Average risk", fmt_risk(before.average_risk), fmt_risk(after.average_risk)),
        (
            "Strict average risk",
            fmt_risk(before.strict_average_risk),
            fmt_risk(after.strict_average_risk),
        ),
        (
            "Anonymity score (1 - average risk after masking)",
            fmt_risk(link_before.anonymity_score if link_before else None),
            fmt_risk(after.anonymity_score),
        ),
        (
            "Within-reach average (Cologne, tolerance rule)",
            "",
            fmt_risk(after.within_reach_average),
        ),
        ("Nearest-record linkage rate", "", fmt_risk(after.linkage_rate)),
        (
            "Interval disclosure (sdcMicro dRisk"
            + ("" if interval is None else f", k = {interval.k:g}")
            + ")",
            "—",
            UNAVAILABLE if interval is None else fmt_risk(interval.share),
        ),
    ]
    withheld = not include_parameters and any(parameters_withheld(s) for s in recipe.steps)
    matches = after.basis.matches if withheld else after.matches
    blocks: list[Block] = [
        Table(
            ("Measure", "Before masking", "After masking"),
            tuple(rows),
            f"Quasi-identifiers: {', '.join(after.quasi_identifiers)}. Before masking: "
            f"equivalence classes (missing values count as {before.missing}). After masking: "
            f"{after.basis.name}; missing values match only missing values. The released file "
            "holds one random draw.",
        ),
        Paragraph(after.basis.reason, "note"),
        Table(("Quasi-identifier", "The intruder matches"), matches),
        Paragraph(
            "Per record, the risk is 1 / the number of source records within the "
            "perturbation's reach of the released record (0 when its own record is out of "
            "reach); the maximum risk is its maximum. The average risk is the largest of the "
            "mean of that risk (Cologne's identifiability under the tolerance rule), the share "
            "of records whose nearest record in standardized units is their own, and sdcMicro's "
            "dRisk (the share whose original perturbed values all lie within k x SD of the "
            f"released ones); here: {after.average_source}. The strict average risk is the "
            "average risk if the maximum is at most 1/3, otherwise the maximum.",
            "note",
        ),
    ]
    if in_people:
        blocks.append(
            Paragraph(
                "Several rows per person: before masking, class sizes count distinct people; "
                "record linkage after masking counts rows, each row as a person of its own (not "
                "yet counted in people).",
                "note",
            )
        )
    return Section("risk", SECTION_TITLES["risk"], tuple(blocks))
