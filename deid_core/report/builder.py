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
:mod:`deid_core.report.formatting`; the sections are made in
:mod:`~deid_core.report.data_sections`, :mod:`~deid_core.report.risk_sections`,
:mod:`~deid_core.report.utility_sections` and :mod:`~deid_core.report.board`.

Seeds and the exact noise and smoothing parameters (half-width, SD fraction, bandwidth) are
withheld unless ``include_parameters`` is set: with the seed anyone can regenerate the noise
and subtract it, and the exact parameters help an intruder bound each value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from deid_core.cancellation import check_cancelled
from deid_core.charts import (
    AFTER,
    BEFORE,
    class_size_chart,
    distribution_chart,
    histogram_table,
    spec_of,
)
from deid_core.errors import DeidError, RecipeError
from deid_core.io.safe_harbor import screen_safe_harbor, unmet_items
from deid_core.recipe import Recipe
from deid_core.report.bidi import isolate_names, isolate_sections
from deid_core.report.board import project_section, residual_section, sign_off_section
from deid_core.report.charts import start_engine
from deid_core.report.data_sections import (
    context_section,
    masking_section,
    roles_section,
    summary_section,
)
from deid_core.report.document import Block, Figure, Paragraph, Section, Table
from deid_core.report.formatting import fmt_count, fmt_number
from deid_core.report.html import render_html
from deid_core.report.identifiers import identifiers_section
from deid_core.report.pdf import render_pdf
from deid_core.report.provenance import FileFingerprint, ProjectDetails
from deid_core.report.risk_sections import (
    attribute_results,
    attribute_section,
    class_size_text,
    open_data_section,
    perturbed_risk_section,
    risk_section,
    verdict_section,
)
from deid_core.report.titles import SECTION_TITLES
from deid_core.report.utility_sections import (
    information_loss_section,
    rumap_blocks,
    utility_section,
)
from deid_core.risk import (
    AttributeDisclosure,
    LinkageResult,
    RiskSummary,
    SampleDesign,
)
from deid_core.risk.context import ReleaseContext, Verdict
from deid_core.risk.release import JudgedRelease
from deid_core.tradeoff.rumap import default_sweep_step, sweep_values_with_current
from deid_core.utility import DEFAULT_REPLICATES, UtilityResult
from deid_core.utility.classifier import ClassifierAccuracy
from deid_core.workspace import Workspace

Progress = Callable[[int, int], None]


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
    judged: JudgedRelease | None = None
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
    safe_harbor: bool = False,
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
    project and release record (:mod:`deid_core.report.board`). ``safe_harbor``: the
    release must also meet HIPAA Safe Harbor (its unmet items fail the verdict).
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
    total = 7 + len(sweep_values)
    done = 0

    def tick() -> None:
        nonlocal done
        check_cancelled()
        done += 1
        if progress is not None:
            progress(min(done, total), total)

    notes: list[str] = []
    # ---- risk
    risk_before = workspace.risk(baseline, missing)
    risk_after = workspace.risk(recipe, missing)
    judged = workspace.judged_risk(
        recipe,
        missing,
        source,
        public=context.public,
        holds_source=context.intruder_holds_source,
        bf_method=bf_method,
    )
    perturbed = judged.perturbed
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
    if safe_harbor:
        screen = screen_safe_harbor(original, record_id=recipe.roles.record_id)
        verdict = verdict.with_safe_harbor(unmet_items(screen, recipe, keep_record_id))
    verdict_before = context.judge(risk_before)
    attribute, attribute_errors = attribute_results(workspace, recipe, missing)

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
        summary_section(workspace, recipe, dataset_name, synthetic, keep_record_id),
        roles_section(recipe, original),
        identifiers_section(
            recipe,
            screen_safe_harbor(original, record_id=recipe.roles.record_id),
            workspace.people(recipe),
            keep_record_id,
        ),
        context_section(context),
        masking_section(workspace, recipe, include_parameters, utility, missing, bf_method),
        risk_section(
            risk_before, risk_after, linkage_before, linkage_after, linkage_error, rule, context
        )
        if perturbed is None
        else perturbed_risk_section(
            risk_before, perturbed, linkage_before, recipe, include_parameters
        ),
        attribute_section(recipe, attribute, attribute_errors),
        residual,
        open_data_section(open_data, open_before, open_after, open_error),
        utility_section(utility, model, n_replicates, workspace, lens),
        information_loss_section(workspace, recipe),
    ]
    tick()
    start_engine()  # once per process, a stretch of its own between two checks
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
            *class_size_text(risk_before, risk_after, context.min_cell_size),
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
        rumap_blocks(
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
    sections.append(verdict_section(verdict, verdict_before, context, judged, attribute))
    sections.append(sign_off_section(project, context))
    done = total - 1
    tick()

    # Names from the data laid out on their own: a right-to-left override in a column name
    # must not reverse the report's own sentences (deid_core.report.bidi).
    names = [*map(str, original.columns), dataset_name]
    return Report(
        title=isolate_names(f"De-identification report: {dataset_name}", names),
        created=created,
        sections=isolate_sections(sections, names),
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
