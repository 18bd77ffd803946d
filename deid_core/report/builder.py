"""Assembling the release report: what was released, how it was masked, and why that is
acceptable.

El Emam & Malin end the de-identification process with the exported data *and* a report that
documents it. :func:`build_report` assesses a recipe on a workspace and gathers everything such
a report needs into a :class:`Report`: a summary of the data (and whether they are synthetic),
the roles, the release context and threshold, each masking step in plain language, the risk
before and after masking (equivalence classes and Cologne's identifiability), the utility before
and after (the collaborator's model), charts (class sizes, the exposure's distribution, an R-U
map of one sweep with the chosen point) and the verdict.

The report renders as HTML (:meth:`Report.html`, :mod:`deid_core.report.html`, charts as SVG)
and as PDF (:meth:`Report.pdf`, :mod:`deid_core.report.pdf`, charts as PNG), both in memory:
nothing is written to disk. The charts are the pages' own (:mod:`deid_core.charts`, one
Vega-Lite specification each), rendered by :mod:`deid_core.report.charts`. The blocks are in
:mod:`deid_core.report.document`, the number formats and plain-language steps in
:mod:`deid_core.report.formatting`.

Seeds and the exact noise and smoothing parameters (half-width, SD fraction, bandwidth) are
withheld unless ``include_parameters`` is set: with the seed anyone can regenerate the noise
and subtract it, and the exact parameters help an intruder bound each value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from deid_core.charts import (
    AFTER,
    BEFORE,
    class_size_chart,
    class_size_distribution,
    distribution_chart,
    histogram_table,
    ru_map,
    spec_of,
)
from deid_core.errors import DeidError, RecipeError
from deid_core.io.safe_harbor import screen_safe_harbor
from deid_core.recipe import Recipe
from deid_core.report.board import (
    BOARD_TITLES,
    project_section,
    residual_section,
    sign_off_section,
)
from deid_core.report.document import Block, BulletList, Figure, Paragraph, Section, Table
from deid_core.report.formatting import (
    UNAVAILABLE,
    fmt_count,
    fmt_distinct,
    fmt_number,
    fmt_risk,
    parameters_withheld,
    role_text,
    step_text,
)
from deid_core.report.html import render_html
from deid_core.report.identifiers import TITLE as IDENTIFIERS_TITLE
from deid_core.report.identifiers import identifiers_section
from deid_core.report.pdf import render_pdf
from deid_core.report.provenance import FileFingerprint, ProjectDetails
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
    risk_basis,
)
from deid_core.risk.context import ReleaseContext, Verdict
from deid_core.tradeoff.rumap import (
    PERTURBED_SECURITY,
    SECURITY_MEASURES,
    default_sweep_step,
    fit_cologne_theta,
    points_frame,
    security_value,
    sweep,
    sweep_values_with_current,
)
from deid_core.utility import DEFAULT_REPLICATES, UtilityResult
from deid_core.utility.classifier import PROTOCOL as CLASSIFIER_PROTOCOL
from deid_core.utility.classifier import WHAT_IT_ADDS as CLASSIFIER_WHAT_IT_ADDS
from deid_core.utility.classifier import ClassifierAccuracy
from deid_core.utility.information_loss import EIGEN_DEFINITION, IL1S_DEFINITION
from deid_core.workspace import Workspace

Progress = Callable[[int, int], None]

SECTION_TITLES = {
    "project": BOARD_TITLES["project"],
    "summary": "Data summary",
    "roles": "Variable roles",
    "identifiers": IDENTIFIERS_TITLE,
    "context": "Release context and threshold",
    "masking": "Masking steps",
    "risk": "Re-identification risk before and after masking",
    "attribute": "Attribute disclosure: what a class reveals",
    "residual": BOARD_TITLES["residual"],
    "open_data": "Open data: risk if the file is a sample of a population",
    "utility": "Utility before and after masking",
    "information_loss": "Information loss (IL1s and eigenvalue measures, as sdcMicro defines them)",
    "charts": "Charts",
    "verdict": "Verdict",
    "sign_off": BOARD_TITLES["sign_off"],
}


@dataclass(frozen=True)
class Report:
    """The assembled report; render with :meth:`html` or :meth:`pdf`."""

    title: str
    created: str
    sections: tuple[Section, ...]
    verdict: Verdict
    risk_before: RiskSummary
    risk_after: RiskSummary
    linkage_before: LinkageResult | None
    linkage_after: LinkageResult | None
    utility: UtilityResult | None
    include_parameters: bool
    notes: tuple[str, ...] = field(default_factory=tuple)
    judged: RiskSummary | PerturbedRisk | None = None
    attribute: tuple[AttributeDisclosure, ...] = ()
    project: ProjectDetails = field(default_factory=ProjectDetails)
    source_file: FileFingerprint | None = None
    released_file: FileFingerprint | None = None

    def section(self, key: str) -> Section:
        for section in self.sections:
            if section.key == key:
                return section
        raise KeyError(key)

    def text(self) -> str:
        return "\n".join([self.title, self.created, *(s.text() for s in self.sections)])

    def figures(self) -> list[Figure]:
        return [f for s in self.sections for f in s.figures()]

    def html(self) -> str:
        """A self-contained HTML page (styles inline, charts as data URIs)."""
        return render_html(self.title, self.created, self.sections)

    def pdf(self) -> bytes:
        """The same content as a PDF."""
        return render_pdf(self.title, self.created, self.sections)


def _dtype_text(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series.dtype):
        return "true/false"
    if pd.api.types.is_numeric_dtype(series.dtype):
        return "number"
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return "date"
    return "text"


def build_report(
    workspace: Workspace,
    recipe: Recipe,
    *,
    dataset_name: str,
    synthetic: bool,
    context: ReleaseContext,
    model: str | None = None,
    include_parameters: bool = False,
    sweep_step: int | None = None,
    n_replicates: int = DEFAULT_REPLICATES,
    rule: str = "same_masking",
    measure: str = "identifiability",
    missing: str = "category",
    source: pd.DataFrame | None = None,
    keep_record_id: bool = False,
    progress: Progress | None = None,
    open_data: SampleDesign | None = None,
    bf_method: str = "exact",
    classifier: bool = False,
    project: ProjectDetails | None = None,
    source_file: FileFingerprint | None = None,
    released_file: FileFingerprint | None = None,
) -> Report:
    """Assess ``recipe`` on ``workspace`` and assemble the release report.

    ``model`` is an optional plain-language name of the collaborator's model (the formula is
    always shown); ``sweep_step`` the index of the step whose parameter the R-U map sweeps
    (default: :func:`default_sweep_step`); ``n_replicates``, ``rule``, ``measure``,
    ``missing`` and ``source`` are the dashboard's settings (replicates of random masking,
    matching rule, security measure of the map, missing values, linkage source).
    ``open_data`` (how the file was sampled from its population) adds the open-data risk,
    with the Benedetti-Franconi risk by ``bf_method``; without it the section says the file
    was assessed as closed data. ``classifier`` adds the classifier lens of utility
    (:meth:`Workspace.classifier`, which trains classifiers: seconds to minutes).
    ``project`` (title, custodian, recipient, purpose), ``source_file`` and ``released_file``
    (the fingerprints of the file read and of the file sent, exactly as downloaded) fill the
    project and release record (:mod:`deid_core.report.board`).
    ``progress(done, total)`` is called as the work advances. Nothing is modified.
    """
    recipe.check_columns(workspace.original.columns)
    original = workspace.original  # a copy: the workspace's own frame is never touched
    baseline = Recipe(recipe.roles)
    sweep_index = sweep_step if sweep_step is not None else default_sweep_step(recipe, original)
    sweep_values: list[Any] = []
    if sweep_index is not None:
        if not 0 <= sweep_index < len(recipe.steps):
            raise RecipeError("The step to sweep for the R-U map is not in the recipe.")
        step = recipe.steps[sweep_index]
        sweep_values = sweep_values_with_current(recipe, sweep_index, original[step.column])[1]
    project = project if project is not None else ProjectDetails()
    total = 6 + len(sweep_values)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(min(done, total), total)

    notes: list[str] = []
    # ---- risk
    risk_before = workspace.risk(baseline, missing)
    risk_after = workspace.risk(recipe, missing)
    judged = workspace.judged_risk(recipe, missing, source)
    perturbed = judged if isinstance(judged, PerturbedRisk) else None
    open_before = open_after = None
    open_error = None
    if open_data is not None and perturbed is not None:
        open_error = (
            "the open-data estimates count equivalence classes, which perturbed values do not "
            "form (sampling makes record linkage harder still: the record-linkage figures are "
            "an upper bound)"
        )
    elif open_data is not None:
        try:
            open_before, open_after = (
                workspace.sample_risk(
                    r, open_data.sampling_fraction, open_data.population_size, missing, bf_method
                )
                for r in (baseline, recipe)
            )
        except DeidError as error:
            open_error = str(error)
    tick()
    linkage_before = linkage_after = None
    linkage_error = None
    try:
        # Without masking, "same masking" is exact matching (and tolerance has nothing to use).
        base_rule = "exact" if rule == "tolerance" else rule
        linkage_before = workspace.linkage(baseline, base_rule, source=source)
        linkage_after = workspace.linkage(recipe, rule, source=source)
    except DeidError as error:
        linkage_error = str(error)
    tick()
    # ---- utility
    utility = workspace.utility(recipe, n_replicates)
    lens: ClassifierAccuracy | str | None = None
    if classifier:
        try:
            lens = workspace.classifier(recipe)
        except DeidError as error:
            lens = str(error)
    tick()
    verdict = context.judge(judged)
    verdict_before = context.judge(risk_before)
    attribute, attribute_errors = _attribute_results(workspace, recipe, missing)

    released = released_columns(recipe, original.columns, keep_record_id)
    residual = residual_section(original, recipe, released)
    tick()
    created = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")

    # ---- sections
    sections = [
        project_section(
            project,
            created,
            dataset_name,
            recipe,
            include_parameters,
            source_file,
            released_file,
        ),
        _summary_section(workspace, recipe, dataset_name, synthetic, keep_record_id),
        _roles_section(recipe, original),
        identifiers_section(
            recipe,
            screen_safe_harbor(original, record_id=recipe.roles.record_id),
            workspace.people(recipe),
            keep_record_id,
        ),
        _context_section(context),
        _masking_section(workspace, recipe, include_parameters, utility, missing, bf_method),
        _risk_section(
            risk_before, risk_after, linkage_before, linkage_after, linkage_error, rule, context
        )
        if perturbed is None
        else _perturbed_risk_section(
            risk_before, perturbed, linkage_before, recipe, include_parameters
        ),
        _attribute_section(recipe, attribute, attribute_errors),
        residual,
        _open_data_section(open_data, open_before, open_after, open_error),
        _utility_section(utility, model, n_replicates, workspace, lens),
        _information_loss_section(workspace, recipe),
    ]
    tick()

    # ---- charts
    blocks: list[Block] = [
        Figure(
            "Equivalence-class sizes before and after masking",
            spec_of(
                class_size_chart(
                    risk_after.class_size,
                    context.min_cell_size,
                    before=risk_before.class_size,
                    unit=risk_after.unit,
                )
            ),
            f"{risk_after.unit.capitalize()} by the size of their equivalence class on the "
            f"quasi-identifiers ({', '.join(recipe.roles.quasi_identifiers) or 'none'}), before "
            f"(pale) and after (solid) masking; red bars hold {risk_after.unit} in classes "
            f"smaller than the minimum cell size {context.min_cell_size}.",
            *_class_size_text(risk_before, risk_after, context.min_cell_size),
        )
    ]
    exposure = recipe.roles.exposure
    if exposure is not None and exposure in original.columns:
        masked_exposure = workspace.masked_column(recipe, exposure)
        chart = distribution_chart(original[exposure], masked_exposure, exposure)
        if chart is not None:
            blocks.append(
                Figure(
                    f"Distribution of the exposure '{exposure}' before and after masking",
                    spec_of(chart),
                    "Histogram of the original and the released values on shared bins"
                    + (" (one random draw of the noise)." if recipe.is_random else "."),
                    *_histogram_text(original[exposure], masked_exposure, exposure),
                )
            )
        else:
            blocks.append(
                Paragraph(
                    f"The exposure '{exposure}' is not numeric after masking: its distribution "
                    "is not drawn.",
                    "note",
                )
            )
    else:
        blocks.append(Paragraph("No exposure is chosen: no distribution chart.", "note"))
    blocks.extend(
        _rumap_blocks(
            workspace,
            recipe,
            sweep_index,
            sweep_values,
            utility,
            judged,
            linkage_after,
            include_parameters,
            n_replicates,
            rule,
            measure,
            context,
            tick,
        )
    )
    sections.append(Section("charts", SECTION_TITLES["charts"], tuple(blocks)))
    sections.append(_verdict_section(verdict, verdict_before, context, recipe, attribute))
    sections.append(sign_off_section(project, context))
    done = total - 1
    tick()

    return Report(
        title=f"De-identification report: {dataset_name}",
        created=created,
        sections=tuple(sections),
        verdict=verdict,
        risk_before=risk_before,
        risk_after=risk_after,
        linkage_before=linkage_before,
        linkage_after=linkage_after,
        utility=utility,
        include_parameters=include_parameters,
        notes=tuple(notes),
        judged=judged,
        attribute=tuple(attribute),
        project=project,
        source_file=source_file,
        released_file=released_file,
    )


def released_columns(
    recipe: Recipe, columns: Sequence[str], keep_record_id: bool = False
) -> list[str]:
    """The source columns the released file carries, as they are or masked: all but the
    direct identifiers and (unless kept) the record id. Identifiers released as pseudonyms
    are not among them: their values are not released."""
    pseudonymised = {step.column for step in recipe.pseudonym_steps}
    withheld = set(recipe.roles.direct_identifiers) | pseudonymised
    if recipe.roles.record_id and not keep_record_id:
        withheld.add(recipe.roles.record_id)
    return [c for c in columns if c not in withheld]


def _class_size_text(
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


def _histogram_text(original: pd.Series, masked: pd.Series, column: str) -> tuple[str, Table]:
    """The distribution chart's text alternative: a sentence and its bins as a table."""
    table = histogram_table(original, masked)
    before = table[table["data"] == BEFORE].reset_index(drop=True)
    after = table[table["data"] == AFTER].reset_index(drop=True)
    rows = tuple(
        (f"{fmt_number(start)} to {fmt_number(end)}", fmt_count(b), fmt_count(a))
        for start, end, b, a in zip(
            before["bin_start"], before["bin_end"], before["records"], after["records"], strict=True
        )
        if b or a
    )
    alt = (
        f"Histogram of '{column}' before and after masking on {len(before)} shared bins from "
        f"{fmt_number(before['bin_start'].iloc[0])} to {fmt_number(before['bin_end'].iloc[-1])}."
    )
    caption = "Bins empty both before and after masking are left out."
    return alt, Table(("Bin", "Records, original", "Records, released"), rows, caption)


def _summary_section(
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


def _roles_section(recipe: Recipe, original: pd.DataFrame) -> Section:
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


def _context_section(context: ReleaseContext) -> Section:
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


def _masking_section(
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


def _information_loss_section(workspace: Workspace, recipe: Recipe) -> Section:
    title = SECTION_TITLES["information_loss"]
    try:
        loss = workspace.information_loss(recipe)
    except DeidError as error:
        return Section("information_loss", title, (Paragraph(f"Unavailable: {error}", "warn"),))
    if loss is None:
        text = "Unavailable: no numeric column among the roles and the masked columns."
        return Section("information_loss", title, (Paragraph(text, "note"),))
    rows = [(column, fmt_number(value)) for column, value in loss.il1s_by_column.items()]
    rows.append(("All columns (IL1s)", fmt_number(loss.il1s)))
    return Section(
        "information_loss",
        title,
        (
            Paragraph(
                f"Columns: {', '.join(loss.columns)}; {loss.n_records:,} released records "
                f"({loss.cells:,} cells)."
            ),
            Table(("Column", "IL1s (sum over its cells)"), tuple(rows)),
            Paragraph(f"Eigenvalue loss: {fmt_number(loss.eigen)}."),
            Paragraph(IL1S_DEFINITION, "note"),
            Paragraph(EIGEN_DEFINITION, "note"),
            Paragraph(
                "As in sdcMicro, a value missing in the original or the released file (a "
                "suppressed value) is left out of IL1s; each released record is compared with "
                "its own original.",
                "note",
            ),
        ),
    )


def _risk_section(
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


def _open_data_section(
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


def _utility_section(
    utility: UtilityResult | None,
    model: str | None,
    n_replicates: int,
    workspace: Workspace,
    lens: ClassifierAccuracy | str | None = None,
) -> Section:
    if utility is None:
        return Section(
            "utility",
            SECTION_TITLES["utility"],
            (
                Paragraph(
                    "Utility: unavailable. No model: choose an exposure and an outcome to "
                    "measure utility.",
                    "warn",
                ),
            ),
        )
    blocks: list[Block] = []
    spec = utility.spec
    if spec is not None:
        name = model or f"{spec.family} model"
        blocks.append(Paragraph(f"The collaborator's analysis: {name}, {spec.formula()}."))
    if not utility.available:
        blocks.append(
            Paragraph(
                f"Utility: unavailable. {utility.error or 'The model could not be fitted.'}",
                "warn",
            )
        )
        return Section("utility", SECTION_TITLES["utility"], tuple(blocks))
    ap = utility.analysis_potential
    mse, masked_mse = fmt_distinct([utility.mse, utility.masked_mse])
    effect, masked_effect = utility.effect(), utility.masked_effect()
    rows = (
        ("Estimate b", fmt_number(utility.estimate), fmt_number(utility.masked_estimate)),
        ("Standard error", fmt_number(utility.se), fmt_number(utility.masked_se)),
        (
            f"{effect.label}" if effect else "Effect measure (95% CI)",
            effect.text() if effect else UNAVAILABLE,
            masked_effect.text() if masked_effect and ap is not None else UNAVAILABLE,
        ),
        ("Mean squared error", mse, masked_mse),
        (
            "Relative bias",
            "0",
            UNAVAILABLE if utility.relative_bias is None else f"{100 * utility.relative_bias:.2f}%",
        ),
        ("Analysis potential", "1", fmt_risk(ap)),
    )
    blocks.append(Table(("Figure", "Original data", "Masked data"), rows))
    if utility.ap_note:
        blocks.append(Paragraph(utility.ap_note, "note"))
    if utility.error or ap is None or not math.isfinite(ap):
        reason = utility.error or "The masked data could not be fitted."
        blocks.append(Paragraph(f"Masked-data utility unavailable: {reason}", "warn"))
    if utility.replicates is not None:
        reps = utility.replicates
        blocks.append(
            Paragraph(
                f"Masked figures are means over {reps.n_replicates} random replicates "
                f"(estimate from {fmt_number(reps.estimate_min)} to "
                f"{fmt_number(reps.estimate_max)}); the analysis potential uses the mean MSE.",
                "note",
            )
        )
    blocks.append(
        Paragraph(
            "Analysis potential = MSE(original) / MSE(masked), where MSE(masked) = SE^2 + "
            "(b_masked - b)^2 (Cologne et al. 2012); 1 means no loss. The effect measure is "
            "exp(b) for odds, rate and hazard ratios (b itself for linear and ERR models) with "
            "its 95% Wald interval, b -/+ 1.96 SE; for a random mask, from the mean estimate "
            "and mean SE over the replicates.",
            "note",
        )
    )
    blocks.extend(_classifier_blocks(lens))
    return Section("utility", SECTION_TITLES["utility"], tuple(blocks))


def _classifier_blocks(lens: ClassifierAccuracy | str | None) -> list[Block]:
    """The classifier lens: scores trained on the original and on the masked data."""
    if lens is None:
        return []
    blocks: list[Block] = [Paragraph("Classifier accuracy, a second lens on utility:")]
    if isinstance(lens, str):
        return [*blocks, Paragraph(f"Classifier accuracy: unavailable. {lens}", "warn")]
    rows = tuple(
        (
            s.name,
            fmt_risk(s.auc),
            fmt_risk(s.masked_auc),
            fmt_risk(s.accuracy),
            fmt_risk(s.masked_accuracy),
        )
        for s in lens.scores
    )
    header = ("Classifier", "AUC, trained on original", "AUC, trained on masked")
    header += ("Accuracy, trained on original", "Accuracy, trained on masked")
    blocks.append(Table(header, rows))
    replicates = (
        f" Masked figures are means over {lens.n_replicates} random replicates."
        if lens.n_replicates > 1
        else ""
    )
    blocks.append(
        Paragraph(
            f"Outcome '{lens.outcome}' predicted from {', '.join(lens.features)}; "
            f"{lens.n:,} records, {lens.n_events:,} events; {lens.folds}-fold cross-validation. "
            f"Always predicting the more common class is right for "
            f"{fmt_risk(lens.no_information_accuracy)} of the records.{replicates} "
            f"{CLASSIFIER_PROTOCOL}",
            "note",
        )
    )
    blocks.append(Paragraph(CLASSIFIER_WHAT_IT_ADDS, "note"))
    return blocks


def _rumap_blocks(
    workspace: Workspace,
    recipe: Recipe,
    index: int | None,
    values: list[Any],
    utility: UtilityResult | None,
    judged: RiskSummary | PerturbedRisk,
    linkage_after: LinkageResult | None,
    include_parameters: bool,
    n_replicates: int,
    rule: str,
    measure: str,
    context: ReleaseContext,
    tick: Callable[[], None],
) -> list[Block]:
    if index is None or not values:
        return [Paragraph("R-U map not drawn: no masking step has a parameter to sweep.", "note")]
    if utility is None or not utility.available:
        return [
            Paragraph(
                "R-U map not drawn: utility is unavailable, so analysis potential cannot be "
                "plotted.",
                "note",
            )
        ]
    step = recipe.steps[index]
    try:
        points = sweep(
            workspace,
            recipe,
            index,
            values,
            measure=measure,
            rule=rule,
            n_replicates=n_replicates,
            progress=lambda done, total: tick(),
        )
    except DeidError as error:
        return [Paragraph(f"R-U map not drawn: {error}", "note")]
    security = security_value(measure, judged, linkage_after)
    described = (PERTURBED_SECURITY if isinstance(judged, PerturbedRisk) else SECURITY_MEASURES)[
        measure
    ]
    ap = utility.analysis_potential
    chosen = (security, ap if ap is not None and math.isfinite(ap) else None)
    show = include_parameters or not parameters_withheld(step)
    parameter = step.sweep_parameter or "parameter"
    table = points_frame(points)
    if not show:
        table["label"] = [f"point {i}" for i in range(1, len(table) + 1)]
    theta = fit_cologne_theta([p.analysis_potential for p in points], [p.security for p in points])
    threshold = 1 - context.conditional_limit
    chart = ru_map(
        table, theta=theta, threshold_security=threshold, current=chosen, parameter=parameter
    )
    theta_note = (
        "Cologne's curve security = (1 - AP^theta)^(1/theta) could not be fitted (fewer than "
        "two points with an analysis potential)"
        if theta is None
        else f"the dashed grey line is Cologne's curve security = (1 - AP^theta)^(1/theta) "
        f"fitted with theta = {theta:.4g}"
    )
    rows = tuple(
        (
            p.label.split(" = ")[-1] if show else f"point {i}",
            fmt_risk(p.security),
            fmt_risk(p.analysis_potential),
        )
        for i, p in enumerate(points, start=1)
    )
    data = Table(
        (parameter if show else "Sweep point", "Security", "Analysis potential"),
        (*rows, ("this recipe", fmt_risk(chosen[0]), fmt_risk(chosen[1]))),
    )
    alt = (
        f"Scatter plot of security (vertical, 0 to 1, higher is safer) against analysis "
        f"potential (horizontal, 1 means no loss) for {len(points)} values of the {parameter} "
        f"of '{step.column}'; this recipe is at security {fmt_risk(chosen[0])} and analysis "
        f"potential {fmt_risk(chosen[1])}, the threshold at security {threshold:.4g}."
    )
    blocks: list[Block] = [
        Figure(
            f"R-U map: {parameter} of the step on '{step.column}'",
            spec_of(chart),
            f"Each point is the recipe with the {parameter} of '{step.column}' set to one "
            f"value (security = {described}); the diamond is this recipe, the "
            f"green line the Pareto frontier (points no other point beats on both axes), "
            f"{theta_note}, and the dashed red line the threshold (security "
            f"{threshold:.4g}). "
            + ("" if show else "The swept values are withheld with the masking parameters."),
            alt,
            data,
        )
    ]
    return blocks


def _verdict_section(
    verdict: Verdict,
    before: Verdict,
    context: ReleaseContext,
    recipe: Recipe,
    attribute: list[AttributeDisclosure],
) -> Section:
    basis = risk_basis(recipe)
    blocks: list[Block] = [
        Paragraph(verdict.text, "ok" if verdict.meets else "warn"),
        Paragraph(f"Judged by {basis.name}. {basis.reason}", "note"),
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
    if not verdict.meets:
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


def _attribute_results(
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


def _attribute_section(
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


def _perturbed_risk_section(
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
