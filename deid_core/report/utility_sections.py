"""The report's utility sections: the collaborator's model before and after masking, the
classifier-accuracy lens, information loss and the R-U map of one sweep."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from deid_core.charts import ru_map, spec_of
from deid_core.errors import DeidError
from deid_core.recipe import Recipe
from deid_core.report.document import Block, Figure, Paragraph, Section, Table
from deid_core.report.formatting import (
    UNAVAILABLE,
    fmt_distinct,
    fmt_number,
    fmt_risk,
    parameters_withheld,
)
from deid_core.report.titles import SECTION_TITLES
from deid_core.risk import LinkageResult, PerturbedRisk, RiskSummary
from deid_core.risk.context import ReleaseContext
from deid_core.tradeoff.rumap import (
    PERTURBED_SECURITY,
    SECURITY_MEASURES,
    fit_cologne_theta,
    points_frame,
    security_value,
    sweep,
)
from deid_core.utility import UtilityResult
from deid_core.utility.classifier import PROTOCOL as CLASSIFIER_PROTOCOL
from deid_core.utility.classifier import WHAT_IT_ADDS as CLASSIFIER_WHAT_IT_ADDS
from deid_core.utility.classifier import ClassifierAccuracy
from deid_core.utility.information_loss import EIGEN_DEFINITION, IL1S_DEFINITION
from deid_core.workspace import Workspace


def information_loss_section(workspace: Workspace, recipe: Recipe) -> Section:
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


def utility_section(
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
    if utility.records_note:
        blocks.append(Paragraph(utility.records_note, "note"))
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


def rumap_blocks(
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
            *(
                (fmt_risk(p.security), fmt_risk(p.analysis_potential))
                if p.unreachable is None
                else ("not reachable", "—")
            ),
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
