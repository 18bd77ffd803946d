"""Guided tours of the Learn page: published analyses re-lived on the demo data sets.

A :class:`Tour` is data: its source, what it reproduces exactly (arithmetic from the paper) and
what only in shape (synthetic data standing in for confidential data), and a few
:class:`TourStep`. Each step names its demo, builds its pre-set recipe, asks a question and
computes its live figures (through :mod:`dashboard.compute`, or the core where compute has no
function for it) for whatever recipe is current, so the user may move sliders elsewhere and
come back.

Session handling: starting a tour remembers the data set and recipe in use (in this session's
state only) so they can be restored when the tour ends; a tour never replaces them without
the user's confirmation (see :func:`needs_confirmation`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import charts, compute, state, tables
from deid_core.datasets import DEMO_DATASETS
from deid_core.masking import IntervalGroup, KernelSmooth, RelativeRound
from deid_core.recipe import Recipe
from deid_core.risk import risk_summary
from deid_core.risk.uniqueness import (
    DEFAULT_SMALL_CLASS,
    MAX_KEYS,
    iteration_table,
    record_uniqueness,
)
from deid_core.utility.compare import UtilityComparison
from deid_core.utility.schemes import cologne_schemes, scheme_comparison

#: Replicates of random masking in the tours' figures (Cologne used 500; the Utility page uses
#: the sidebar's setting). Few, so a step draws in seconds.
TOUR_REPLICATES = 20

KEY_ACTIVE = "learn.active"  # {"tour": key, "step": index} while a tour runs
KEY_SAVED = "learn.saved"  # the data set and recipe in use before the tour
KEY_PENDING = "learn.pending"  # {"tour": key, "step": index} awaiting confirmation
KEY_ENDED = "learn.ended"  # the title of the tour that just ended (offer to restore)
KEY_MESSAGE = "learn.message"  # an error raised in a callback, shown on the next run


# ---------------------------------------------------------------------------- the data model
@dataclass(frozen=True)
class Figure:
    """One live figure of a step.

    ``kind``: "metric" (``value`` a text), "check" (``value`` the computed text, ``expected``
    the paper's, ``ok`` whether they agree), "table" (a DataFrame), "chart" (an Altair chart)
    or "text" (markdown).
    """

    kind: str
    label: str
    value: Any = None
    note: str | None = None
    expected: str | None = None
    ok: bool | None = None


Figures = Callable[[Recipe], list[Figure]]


@dataclass(frozen=True)
class TourStep:
    title: str
    text: str
    demo: str
    recipe_builder: Callable[[], Recipe]
    question: str
    page: str
    """The page script (``app_pages/...``) where the user explores further."""
    page_label: str
    figures: Figures


@dataclass(frozen=True)
class Tour:
    key: str
    title: str
    source: str
    exact: tuple[str, ...]
    """Figures reproduced exactly (arithmetic the paper prints)."""
    shape_only: tuple[str, ...]
    """Figures reproduced only in shape (our synthetic data stand in for the paper's)."""
    steps: tuple[TourStep, ...]

    @property
    def demo(self) -> str:
        return self.steps[0].demo


# ---------------------------------------------------------------------------- helpers
def demo_roles(key: str):
    return state.roles_from_demo(DEMO_DATASETS[key])


def demo_recipe(key: str, steps: tuple | None = None) -> Recipe:
    """The demo's roles with ``steps`` (None: the demo's default masking)."""
    demo = DEMO_DATASETS[key]
    return Recipe(demo_roles(key), demo.default_steps if steps is None else tuple(steps))


def _f3(value: float) -> str:
    return f"{value:.3f}"


def check(label: str, computed: float, expected: float, digits: int = 3, note: str = "") -> Figure:
    """A computed figure beside the paper's, agreeing when equal at ``digits`` decimals."""
    text = f"{computed:.{digits}f}"
    want = f"{expected:.{digits}f}"
    return Figure("check", label, text, note or None, expected=want, ok=text == want)


# ---------------------------------------------------------------------------- El Emam & Malin
#: The per-record probabilities the seed prints in its Table 4 (decade of birth), by record id.
#: Kept only to show where they disagree with the computed class sizes.
EL_EMAM_PRINTED_TABLE4 = {
    1: 0.33, 2: 0.125, 3: 0.167, 4: 0.33, 5: 1, 6: 0.33, 7: 0.33, 8: 1, 9: 0.33,
    10: 0.125, 11: 0.125, 12: 0.167, 13: 0.125, 14: 0.125, 15: 0.33, 16: 0.167, 17: 0.125,
    18: 0.167, 19: 0.167, 20: 1, 21: 0.33, 22: 0.125, 23: 0.33, 24: 0.167, 25: 0.33, 26: 1,
    27: 0.125,
}  # fmt: skip
#: The records the seed's Table 5 leaves out (it keeps 23, 6 and 25).
EL_EMAM_TABLE5_DROPPED = (5, 8, 20, 26)


def el_emam_decades() -> Recipe:
    return demo_recipe("el_emam", (IntervalGroup("year_of_birth", width=10.0, release="label"),))


def _record_table(recipe: Recipe) -> pd.DataFrame:
    workspace = state.current_workspace()
    summary = compute.risk(recipe)
    roles = recipe.roles
    table = pd.DataFrame(
        {"record": workspace.original[roles.record_id].to_numpy()}
        if roles.record_id
        else {"record": np.arange(1, workspace.n_records + 1)}
    )
    for column in roles.quasi_identifiers:
        table[column] = workspace.masked_column(recipe, column).to_numpy()
    table["class size"] = summary.class_size
    table["risk 1/f"] = np.round(1.0 / summary.class_size, 3)
    return table


def el_emam_original_figures(recipe: Recipe) -> list[Figure]:
    summary = compute.risk(recipe)
    return [
        check(
            "Average risk",
            summary.average_risk,
            16 / 27,
            note=f"{summary.n_classes} classes / {summary.n_records} records; the paper: "
            "16/27 = 0.59.",
        ),
        check("Maximum risk", summary.max_risk, 1.0, note="A unique record has risk 1."),
        check(
            "Strict average risk",
            summary.strict_average_risk,
            1.0,
            note="The maximum is above 1/3, so the strict average is the maximum.",
        ),
        Figure("metric", "Unique records", f"{summary.uniques}"),
        Figure("table", "Every record with its class", _record_table(recipe)),
    ]


def el_emam_decade_figures(recipe: Recipe) -> list[Figure]:
    summary = compute.risk(recipe)
    table = _record_table(recipe)
    table.insert(2, "born", state.current_workspace().original["year_of_birth"].to_numpy())
    table["printed in the seed"] = table["record"].map(EL_EMAM_PRINTED_TABLE4)
    computed = 1.0 / table["class size"]
    table["agrees"] = np.isclose(computed, table["printed in the seed"], atol=0.01)
    wrong = table[~table["agrees"]]
    if len(wrong):
        listing = "; ".join(
            f"record {r['record']} ({r['sex']}, born {r['born']}): class of "
            f"{r['class size']} (risk {1 / r['class size']:.2g}), printed "
            f"{r['printed in the seed']:g}"
            for r in wrong.to_dict("records")
        )
        explain = (
            f"**{len(wrong)} printed values disagree with the computed classes:** {listing}. "
            "The two men of the 1970s (born 1971 and 1978) share one class of 2, and so do "
            "the two women (1975 and 1977): each of them has risk 1/2, not the printed 1 or "
            "1/3. The averages still agree because the printed errors cancel out in the count "
            "of classes."
        )
    else:
        explain = "The current recipe's classes agree with every value printed in the seed."
    return [
        check(
            "Average risk",
            summary.average_risk,
            9 / 27,
            note=f"{summary.n_classes} classes / {summary.n_records} records; the paper: "
            "9/27 = 0.33.",
        ),
        Figure("metric", "Classes", f"{summary.n_classes}", "The paper: 9 classes."),
        check("Maximum risk", summary.max_risk, 1.0, note="Still uniques: the maximum stays 1."),
        Figure("text", "Where the seed's printed values are wrong", explain),
        Figure("table", "Per-record risk: computed and printed", table),
    ]


def _suppressed_summary(recipe: Recipe, keep: np.ndarray):
    frame = state.current_workspace().masked_frame(recipe)[list(recipe.roles.quasi_identifiers)]
    return risk_summary(frame[keep].reset_index(drop=True), recipe.roles.quasi_identifiers)


def el_emam_suppression_figures(recipe: Recipe) -> list[Figure]:
    summary = compute.risk(recipe)
    keep = summary.class_size >= 3
    ours = _suppressed_summary(recipe, keep)
    ids = state.current_workspace().original[recipe.roles.record_id].to_numpy()
    dropped = ", ".join(str(i) for i in ids[~keep])
    seed_keep = ~np.isin(ids, EL_EMAM_TABLE5_DROPPED)
    theirs = _suppressed_summary(recipe, seed_keep)
    rows = pd.DataFrame(
        [
            {
                "records removed": f"classes of 1 or 2 ({dropped})",
                "records kept": ours.n_records,
                "classes": ours.n_classes,
                "average risk": _f3(ours.average_risk),
                "maximum risk": _f3(ours.max_risk),
                "strict average risk": _f3(ours.strict_average_risk),
            },
            {
                "records removed": "the seed's Table 5 choice (5, 8, 20, 26)",
                "records kept": theirs.n_records,
                "classes": theirs.n_classes,
                "average risk": _f3(theirs.average_risk),
                "maximum risk": _f3(theirs.max_risk),
                "strict average risk": _f3(theirs.strict_average_risk),
            },
        ]
    )
    return [
        Figure("metric", "Records suppressed", f"{int((~keep).sum())} of {len(keep)}"),
        Figure(
            "metric",
            "Strict average risk after suppression",
            _f3(ours.strict_average_risk),
            "No class below 3 is left, so the maximum is at most 1/3 and the strict average "
            "is the plain average.",
        ),
        Figure("table", "Suppression: ours against the seed's", rows),
        Figure(
            "text",
            "Why the seed's Table 5 does not reach its 0.22",
            "Keeping records 6, 23 and 25 leaves the man born 1971 alone in his class and the "
            "two women of the 1970s as a pair, so the maximum stays 1. The seed's figures rest "
            "on the mistaken class sizes of its Table 4.",
        ),
    ]


EL_EMAM = Tour(
    key="el_emam",
    title="El Emam & Malin: equivalence classes and the three risk measures",
    source="K. El Emam and B. Malin, Concepts and methods for de-identifying clinical trial "
    "data (seed 001), Tables 1, 3, 4 and 5.",
    exact=(
        "Average risk of the 27 records: 16 classes / 27 records = 0.593 (printed 0.59); "
        "maximum risk 1.",
        "Year of birth to decade: 9 classes, average 9/27 = 0.333 (printed 0.33).",
        "The per-record values of the decade table, computed from the class sizes (several "
        "printed values are wrong: see step 2).",
    ),
    shape_only=(
        "Nothing: the 27 records are the paper's own hypothetical table. The suppression step "
        "follows the paper's idea (no uniques or doubles) but computes its own figures, which "
        "differ from the printed 0.22 for the reason shown.",
    ),
    steps=(
        TourStep(
            title="Classes, and three ways to sum up their risk",
            text="An intruder who knows a person's sex and year of birth can narrow the 27 "
            "records down to those sharing both values: an *equivalence class*. Picking one "
            "record of a class of size f at random hits the right person with probability "
            "1/f. Averaged over records this gives the **average risk** (which is simply the "
            "number of classes divided by the number of records); the worst record gives the "
            "**maximum risk**; the **strict average** only accepts the average when no class "
            "is smaller than 3.",
            demo="el_emam",
            recipe_builder=lambda: demo_recipe("el_emam", ()),
            question="Which records are alone in their class? Would a public release (judged "
            "on the maximum) ever pass while such records remain?",
            page="app_pages/risk.py",
            page_label="See every risk measure on the Risk page",
            figures=el_emam_original_figures,
        ),
        TourStep(
            title="Generalise year of birth to decade",
            text="Coarsening a quasi-identifier merges classes. With decades instead of years "
            "only 9 classes remain, so the average risk falls to 9/27; but three people are "
            "still alone in their class, so the maximum does not move. The average reacts to "
            "every change, the maximum only to the worst record. Compute the table rather "
            "than copy it: some values printed in the source are wrong.",
            demo="el_emam",
            recipe_builder=el_emam_decades,
            question="On the Mask page, try 20-year intervals instead: when does the maximum "
            "risk finally drop below 1?",
            page="app_pages/mask.py",
            page_label="Change the interval width on the Mask page",
            figures=el_emam_decade_figures,
        ),
        TourStep(
            title="Suppress the records that are still too rare",
            text="Removing the records in classes of 1 or 2 leaves no uniques and no doubles: "
            "the maximum drops to 1/3 and the strict average becomes usable. Suppression costs "
            "records (here a quarter of the file), which is why coarsening usually comes "
            "first. The Risk page lists the riskiest records and which variable to coarsen to "
            "rescue each one.",
            demo="el_emam",
            recipe_builder=el_emam_decades,
            question="With a minimum cell size of 5 in the sidebar, how many records would "
            "have to go? Is that acceptable for a 27-record file?",
            page="app_pages/risk.py",
            page_label="List the records at risk on the Risk page",
            figures=el_emam_suppression_figures,
        ),
    ),
)


# ---------------------------------------------------------------------------- Cologne et al.
#: Cologne et al. Table 2: (scheme, ERR estimate, standard error) as printed.
COLOGNE_TABLE2 = (("No masking", 0.5235, 0.1548), ("Stratified (interval means)", 0.5320, 0.1553))
COLOGNE_MSE = (0.0240, 0.0242)


def cologne_arithmetic() -> pd.DataFrame:
    """Cologne's MSE arithmetic recomputed from the printed estimates and standard errors."""
    (_, b, se), (_, bm, sem) = COLOGNE_TABLE2
    comparison = UtilityComparison(b, se, bm, sem)
    return pd.DataFrame(
        {
            "scheme": [COLOGNE_TABLE2[0][0], COLOGNE_TABLE2[1][0]],
            "ERR (printed)": [b, bm],
            "SE (printed)": [se, sem],
            "MSE computed": [f"{comparison.mse:.4f}", f"{comparison.masked_mse:.4f}"],
            "MSE printed": [f"{v:.4f}" for v in COLOGNE_MSE],
            "formula": ["se²", "se_m² + (b_m − b)²"],
        }
    )


def _exposure_step_index(recipe: Recipe) -> int | None:
    exposure = recipe.roles.exposure
    for index, step in enumerate(recipe.steps):
        if step.column == exposure and step.sweep_parameter is not None:
            return index
    return None


def cologne_linkage_figures(recipe: Recipe) -> list[Figure]:
    rule = state.setting("matching_rule")
    link = compute.linkage(recipe, rule)
    summary = compute.risk(recipe)
    match = link.match_table()
    match["risk 1/i"] = match["risk 1/i"].map(lambda v: "—" if v != v else f"{v:.3f}")
    return [
        Figure("metric", "Identifiability risk score", f"{link.identifiability_score:.4f}"),
        Figure("metric", "Anonymity score", f"{link.anonymity_score:.4f}"),
        Figure("metric", "Perceived risk", f"{link.perceived_score:.4f}"),
        Figure("metric", "Average risk (classes)", f"{summary.average_risk:.4f}"),
        Figure("table", "Matches per released record (Table 1 layout)", match),
        Figure(
            "text",
            "Reading it",
            f"{link.n_released:,} released records matched against {link.n_source:,} source "
            "records. Each row counts the released records with i matching source records; "
            "the identifiability score weighs each by 1/i when its own record is among the "
            "matches.",
        ),
    ]


def cologne_table2_figures(recipe: Recipe) -> list[Figure]:
    arithmetic = cologne_arithmetic()
    figures = [
        Figure("table", "The paper's MSE arithmetic, recomputed", arithmetic),
        check("MSE, no masking", 0.1548**2, COLOGNE_MSE[0], digits=4),
        check(
            "MSE, stratified",
            UtilityComparison(0.5235, 0.1548, 0.5320, 0.1553).masked_mse,
            COLOGNE_MSE[1],
            digits=4,
        ),
    ]
    try:
        schemes = [("Current recipe", recipe), *cologne_schemes(recipe, seed=state.session_seed())]
    except Exception as error:  # no exposure chosen
        figures.append(Figure("text", "Schemes", state.user_message(error)))
        return figures
    results = [
        (name, compute.utility(scheme, n_replicates=TOUR_REPLICATES)) for name, scheme in schemes
    ]
    table = scheme_comparison(results)
    figures.append(
        Figure(
            "table",
            "The six schemes on the synthetic cohort (Table 2 layout)",
            tables.comparison_display(table),
            f"Noise schemes: mean over {TOUR_REPLICATES} replicates (the Utility page uses the "
            "sidebar's setting; the paper used 500). The model is a logistic regression, not "
            "the paper's excess-relative-risk model, so the estimates are on another scale.",
        )
    )
    return figures


def cologne_rumap_figures(recipe: Recipe) -> list[Figure]:
    index = _exposure_step_index(recipe)
    if index is None:
        return [
            Figure(
                "text",
                "Nothing to sweep",
                "The current recipe does not mask the dose with a step that has a parameter: "
                "press 'Reset to this step'.",
            )
        ]
    step = recipe.steps[index]
    values = [1, 2, 3, 4] if isinstance(step, RelativeRound) else None
    if values is None:
        series = state.current_workspace().original[step.column]
        values = compute.sweep_parameter_values(recipe, index, series)[1]
    result = compute.run_sweep(recipe, index, values, n_replicates=TOUR_REPLICATES)
    threshold = 1 - state.release_context().conditional_limit
    chart = charts.ru_map(
        result.points, theta=result.theta, threshold_security=threshold, parameter=result.parameter
    )
    return [
        Figure(
            "metric",
            "Cologne theta (fitted)",
            compute.theta_text(result.theta),
            "security = (1 − AP^θ)^(1/θ); the paper found 178 on its data.",
        ),
        Figure("chart", "Security against analysis potential", chart),
        Figure(
            "table",
            f"The sweep over {result.parameter} of {result.column}",
            tables.sweep_points_table(result.points, result.parameter),
        ),
    ]


COLOGNE = Tour(
    key="cologne",
    title="Cologne et al.: rounding, stratification or noise for a dose",
    source="J. Cologne et al., Protecting privacy of shared epidemiologic data without "
    "compromising analysis potential (2012; seed 000), Tables 1-2 and Figures 3-4.",
    exact=(
        "Table 2's MSE arithmetic: ERR 0.5235 with SE 0.1548 gives MSE 0.0240; the stratified "
        "0.5320 with SE 0.1553 gives 0.0242 (MSE = se² + bias²).",
        "The formulas: identifiability = Σ 1/i over correct matches / N, analysis potential = "
        "MSE(b) / MSE(b_m), and the fitted curve security = (1 − AP^θ)^(1/θ).",
    ),
    shape_only=(
        "Every estimate, score and θ on the synthetic cohort: it mimics the atomic-bomb "
        "survivor data (which are confidential), so the numbers differ while the pattern "
        "(relative rounding keeps utility, coarser masking buys security) is the same.",
    ),
    steps=(
        TourStep(
            title="How identifiable is a released record? (Table 1 layout)",
            text="The intruder holds the source records and matches each released record on "
            "city, sex, ages and dose. If i source records match, the right one is picked "
            "with probability 1/i. Averaging that over the released records (counting only "
            "the matches that really include the person) gives the identifiability score; "
            "one minus it is the anonymity score. Here the dose is rounded to 2 significant "
            "digits and the ages to 5-year intervals.",
            demo="cohort",
            recipe_builder=lambda: demo_recipe("cohort"),
            question="Switch the matching rule on the Risk page from 'same masking' to exact: "
            "why does the score collapse when the intruder does not mask the source?",
            page="app_pages/risk.py",
            page_label="Explore linkage on the Risk page",
            figures=cologne_linkage_figures,
        ),
        TourStep(
            title="What does masking cost the analysis? (Table 2 layout)",
            text="Fit the collaborator's dose-response model to the original and to the "
            "masked data. The mean squared error of the masked estimate adds its squared "
            "bias to its variance; the analysis potential divides the original MSE by the "
            "masked one (1 = nothing lost). First check the paper's own arithmetic, then "
            "see the six schemes on the cohort.",
            demo="cohort",
            recipe_builder=lambda: demo_recipe("cohort"),
            question="Which scheme loses the most? Does noise of ±0.1 Gy hurt more than "
            "rounding to one decimal, and why (classical against Berkson-type error)?",
            page="app_pages/utility.py",
            page_label="Compare schemes on the Utility page",
            figures=cologne_table2_figures,
        ),
        TourStep(
            title="The security-utility plot and its fitted curve",
            text="Each number of significant digits for the dose is one point: utility "
            "(analysis potential) across, security (anonymity) up. Fewer digits move up and "
            "a little left. The curve security = (1 − AP^θ)^(1/θ) summarises the trade-off; a "
            "large θ means security can be bought with almost no utility.",
            demo="cohort",
            recipe_builder=lambda: demo_recipe("cohort"),
            question="Which number of digits would you release? Is any point beaten on both "
            "axes by another (off the Pareto frontier)?",
            page="app_pages/rumap.py",
            page_label="Sweep any step on the R-U map page",
            figures=cologne_rumap_figures,
        ),
    ),
)


# ---------------------------------------------------------------------------- NAACCR RU
RU_RACE_COUNTS = {"Chinese": 150, "Japanese": 50, "Korean": 4, "Vietnamese": 1}


def ru_keys(recipe: Recipe) -> tuple[str, ...]:
    return tuple(recipe.roles.quasi_identifiers[:MAX_KEYS])


def ru_race_figures(recipe: Recipe) -> list[Figure]:
    race = pd.DataFrame({"race": [name for name, n in RU_RACE_COUNTS.items() for _ in range(n)]})
    result = record_uniqueness(race, ("race",), small_class=DEFAULT_SMALL_CLASS)
    full = result.full
    return [
        Figure("metric", "Records", f"{full.records}"),
        check("Unique records (%)", full.uniques_pct, 100 / 205, digits=2,
              note=f"{full.uniques} record; the paper: 1 (0.49%)."),
        check("Records in sets ≤ 5 (%)", full.small_pct, 500 / 205, digits=2,
              note=f"{full.small} records; the paper: 5 (2.4%)."),
        Figure("table", "The race column", pd.DataFrame(
            {"race": list(RU_RACE_COUNTS), "records": list(RU_RACE_COUNTS.values())})),
    ]  # fmt: skip


def _ru_run(recipe: Recipe):
    return compute.uniqueness(recipe, ru_keys(recipe), DEFAULT_SMALL_CLASS)


def _ru_figures(result) -> list[Figure]:
    full = result.full
    figures = [
        Figure("metric", "Unique records", f"{full.uniques_pct:.2f}%",
               f"{full.uniques:,} of {full.records:,} records"),
        Figure("metric", f"Records in sets ≤ {result.small_class}", f"{full.small_pct:.2f}%",
               f"{full.small:,} of {full.records:,} records"),
        Figure("metric", "Collapse first", result.worst_variable or "unavailable"),
    ]  # fmt: skip
    if result.weights:
        weights = pd.DataFrame(
            {"variable": list(result.weights), "weight": list(result.weights.values())}
        )
        figures.append(
            Figure(
                "chart",
                "Each variable's weight",
                charts.uniqueness_weights_chart(weights, result.worst_variable),
            )
        )
    return figures


def ru_first_run_figures(recipe: Recipe) -> list[Figure]:
    return _ru_figures(_ru_run(recipe))


def ru_collapse_recipe() -> Recipe:
    dose = "stomach_dose_gy"
    return demo_recipe("cohort").with_steps_for(dose, [RelativeRound(dose, digits=1)])


def ru_history_figures(recipe: Recipe) -> list[Figure]:
    before = _ru_run(demo_recipe("cohort"))
    after = _ru_run(recipe)
    table = iteration_table([("Run 1: the demo's masking", before), ("Run 2: current", after)])
    figures = _ru_figures(after)
    figures.append(Figure("table", "Iteration history (RU Table 2 layout)", table))
    return figures


NAACCR = Tour(
    key="naaccr",
    title="NAACCR Record Uniqueness: count, collapse the heaviest variable, repeat",
    source="NAACCR, the Record Uniqueness (RU) program for cancer registry data (seed 003).",
    exact=(
        "The race example: 205 records coded 150 / 50 / 4 / 1 give 1 unique record (0.49%) "
        "and 5 records in sets of at most 5 (2.44%, printed 2.4%).",
        "The method: every one of the 2^K − 1 combinations counted, and each variable's "
        "weight from the regression of ln(% unique) on the variables present.",
    ),
    shape_only=(
        "The iteration itself runs on the 16,000-record synthetic cohort, not on the paper's "
        "4.67 million SEER records: the percentages differ, the procedure and its direction "
        "(collapsing the heaviest variable cuts uniques the most) are the same.",
    ),
    steps=(
        TourStep(
            title="Uniques and small record sets, on one variable",
            text="Count how many records share each value. A value held by one record makes "
            "that record unique; values held by a few records (at most T = 5) form small "
            "record sets, which are nearly as easy to single out. With four race codes held "
            "by 150, 50, 4 and 1 records there is one unique record and five in small sets.",
            demo="cohort",
            recipe_builder=lambda: demo_recipe("cohort"),
            question="Which single change of coding would remove the unique record here, and "
            "what would an analyst lose?",
            page="app_pages/uniqueness.py",
            page_label="Open the Record uniqueness page",
            figures=ru_race_figures,
        ),
        TourStep(
            title="Every combination of the key variables",
            text="With several key variables, uniqueness is counted for every combination "
            "of them (31 for five variables). A regression of the log share of unique "
            "records on which variables are present gives each variable a weight: the one "
            "with the largest weight is the first to collapse into fewer values.",
            demo="cohort",
            recipe_builder=lambda: demo_recipe("cohort"),
            question="Is it the precise dose or an age that drives uniqueness? Why would a "
            "continuous variable dominate?",
            page="app_pages/uniqueness.py",
            page_label="See every combination on the Record uniqueness page",
            figures=ru_first_run_figures,
        ),
        TourStep(
            title="Collapse the heaviest variable and re-run",
            text="Release the dose at 1 significant digit instead of 2 and count again. The "
            "share of unique records falls sharply; the history keeps both runs side by side "
            "with their weights, as the program's iteration table does. Repeat until the "
            "share in small sets meets the guideline (20% for research files, 5% for public "
            "ones).",
            demo="cohort",
            recipe_builder=ru_collapse_recipe,
            question="Which variable is heaviest now? Collapse it on the Mask page, come back "
            "and keep the run in the page's history: how many rounds until the research "
            "guideline is met?",
            page="app_pages/uniqueness.py",
            page_label="Keep runs in the history on the Record uniqueness page",
            figures=ru_history_figures,
        ),
    ),
)


# ---------------------------------------------------------------------------- Zhou et al.
ZHOU_BANDWIDTHS = (0.02, 0.05, 0.1, 0.2)


def zhou_recipe(kernel: str = "exponential", bandwidth: float = 0.05) -> Recipe:
    extra = {"pattern": "dist_to_source", "spatial_weight": 1.0} if kernel == "prior" else {}
    steps = tuple(
        KernelSmooth(column, ("x", "y"), kernel=kernel, bandwidth=bandwidth, **extra)
        for column in ("exposure", "cases")
    )
    return demo_recipe("point_source", steps)


def _smoothing_steps(recipe: Recipe) -> list[int]:
    return [i for i, s in enumerate(recipe.steps) if isinstance(s, KernelSmooth)]


def _zhou_known(recipe: Recipe) -> tuple[str, ...]:
    return tuple(recipe.roles.quasi_identifiers) or ("exposure",)


def _zhou_row(name: str, recipe: Recipe) -> dict[str, Any]:
    share = compute.match_share(recipe, _zhou_known(recipe))
    result = compute.utility(recipe, n_replicates=1)
    usable = result is not None and result.available and result.masked_estimate is not None
    return {
        "masking": name,
        "expected correct matches": f"{100 * share.share:.1f}%",
        "masked b": f"{result.masked_estimate:.3f}" if usable else "unavailable",
        "original b": f"{result.estimate:.3f}" if usable else "unavailable",
        "MSE": f"{result.masked_mse:.4f}" if usable else "unavailable",
        "_share": share.share,
        "_mse": result.masked_mse if usable else None,
    }


def _with_smoothing(recipe: Recipe, **params) -> Recipe:
    steps = list(recipe.steps)
    for i in _smoothing_steps(recipe):
        steps[i] = steps[i].with_params(**params)
    return Recipe(recipe.roles, tuple(steps))


def _no_smoothing() -> list[Figure]:
    return [
        Figure(
            "text",
            "No smoothing",
            "The current recipe has no kernel smoothing step: press 'Reset to this step'.",
        )
    ]


def zhou_current_figures(recipe: Recipe) -> list[Figure]:
    if not _smoothing_steps(recipe):
        return _no_smoothing()
    row = _zhou_row("current recipe", recipe)
    return [
        Figure("metric", "Expected correct matches", row["expected correct matches"],
               "The share of people an intruder who knows their true exposure links to "
               "their own released record."),
        Figure("metric", "Masked b", row["masked b"], f"Original b = {row['original b']}."),
        Figure("metric", "MSE of b", row["MSE"]),
    ]  # fmt: skip


def zhou_degree_figures(recipe: Recipe) -> list[Figure]:
    if not _smoothing_steps(recipe):
        return _no_smoothing()
    rows = [
        _zhou_row(f"bandwidth {bw:g}", _with_smoothing(recipe, bandwidth=bw))
        for bw in ZHOU_BANDWIDTHS
    ]
    table = pd.DataFrame(rows).drop(columns=["_share", "_mse"])
    kernel = recipe.steps[_smoothing_steps(recipe)[0]].kernel
    return [
        Figure("table", f"The degree of masking ({kernel} kernel)", table),
        Figure(
            "text",
            "Reading it",
            "A wider bandwidth averages over more neighbours: fewer people can be linked to "
            "their own record, and the coefficient drifts away from the truth (larger MSE).",
        ),
    ]


def zhou_form_figures(recipe: Recipe) -> list[Figure]:
    steps = _smoothing_steps(recipe)
    if not steps:
        return _no_smoothing()
    bandwidth = recipe.steps[steps[0]].bandwidth
    exponential = _zhou_row(
        f"exponential, bandwidth {bandwidth:g}",
        _with_smoothing(recipe, kernel="exponential", pattern=None, spatial_weight=0.0),
    )
    prior = _zhou_row(
        f"prior knowledge, bandwidth {bandwidth:g}",
        _with_smoothing(recipe, kernel="prior", pattern="dist_to_source", spatial_weight=1.0),
    )
    table = pd.DataFrame([exponential, prior]).drop(columns=["_share", "_mse"])
    figures = [Figure("table", "The form of masking at one degree", table)]
    if exponential["_mse"] is not None and prior["_mse"] is not None:
        lower = prior["_mse"] < exponential["_mse"]
        riskier = prior["_share"] > exponential["_share"]
        figures.append(
            Figure(
                "check",
                "Prior-knowledge kernel: lower MSE at a higher risk",
                "yes" if lower and riskier else "no",
                "Zhou et al.'s finding, reproduced in shape.",
                expected="yes",
                ok=lower and riskier,
            )
        )
    return figures


ZHOU = Tour(
    key="zhou",
    title="Zhou, Dominici & Louis: smoothing a point-source exposure",
    source="Y. Zhou, F. Dominici and T. A. Louis, A smoothing approach for masking spatial "
    "data (2010; seed 004), section 3, example I.",
    exact=(
        "The definitions: each released value is a weighted average of its neighbours' "
        "values, the bandwidth is the degree of masking and the weight function its form; "
        "risk is the expected share of correct record matches.",
    ),
    shape_only=(
        "Zhou's simulation: our 1,000 synthetic locations follow the design of example I "
        "(a source at the centre, log expected cases rising by 2 per unit of exposure) but "
        "not its exact exposure function, so the numbers differ; the shapes (risk falls and "
        "MSE rises with the bandwidth; the prior-knowledge kernel has lower MSE at a higher "
        "risk) are the paper's.",
    ),
    steps=(
        TourStep(
            title="Smoothing as masking",
            text="Each location's exposure and case count are replaced by a weighted average "
            "over nearby locations (the weights fall exponentially with distance). The "
            "released values still follow the same dose-response line, but an intruder who "
            "knows people's true exposure can no longer tell which released record is whose.",
            demo="point_source",
            recipe_builder=zhou_recipe,
            question="On the Smoothing page, move the bandwidth down to 0.01: what happens "
            "to the share of correct matches?",
            page="app_pages/smoothing.py",
            page_label="Move the bandwidth on the Smoothing page",
            figures=zhou_current_figures,
        ),
        TourStep(
            title="The degree: bandwidth",
            text="The bandwidth says how far the averaging reaches. Small: the data are "
            "nearly unchanged and easy to link. Large: records blur into their neighbourhood, "
            "links fail, and the exposure coefficient is biased because the exposure varies "
            "within the window.",
            demo="point_source",
            recipe_builder=lambda: zhou_recipe(bandwidth=0.1),
            question="Where would you put the bandwidth so that fewer than 5% of people are "
            "matched while the MSE stays within twice the original's?",
            page="app_pages/smoothing.py",
            page_label="Draw the bandwidth profile on the Smoothing page",
            figures=zhou_degree_figures,
        ),
        TourStep(
            title="The form: a kernel that knows the exposure pattern",
            text="If the data holder knows how the exposure is laid out (here: it falls with "
            "the distance from the source), the weights can favour neighbours on the same "
            "ring around the source. Averaging mostly over similar exposures keeps the "
            "coefficient closer to the truth (lower MSE) but also keeps each record more like "
            "its original: the intruder links more people. Form and degree are two separate "
            "dials.",
            demo="point_source",
            recipe_builder=lambda: zhou_recipe(kernel="prior"),
            question="Can a larger bandwidth with the prior-knowledge kernel beat the "
            "exponential kernel on both risk and MSE?",
            page="app_pages/smoothing.py",
            page_label="Compare kernels on the Smoothing page",
            figures=zhou_form_figures,
        ),
    ),
)


# ---------------------------------------------------------------------------- Matthews & Harel
ROC_KNOWN = ("flag", "known")
ROC_OPTIONS = (
    (),
    (("every", 2),),
    (("decimals", 1),),
    (("binormal", True),),
)


def _roc_columns(recipe: Recipe) -> tuple[str, str]:
    return recipe.roles.exposure or "score", recipe.roles.outcome or "status"


def roc_attack_figures(recipe: Recipe) -> list[Figure]:
    from deid_core.risk.roc import path_segments

    score, status = _roc_columns(recipe)
    result = compute.roc_attack(score, status, ROC_KNOWN, {})
    table = result.to_frame()
    figures: list[Figure] = [
        Figure("metric", "Statuses recovered", f"{result.share_status_recovered:.0%}"),
    ]
    if len(table) == 1:
        row = table.iloc[0]
        status_value = row["recovered_status"]
        figures.append(
            Figure(
                "check",
                "Recovered status of the missing record",
                "unknown" if pd.isna(status_value) else f"{int(status_value)}",
                expected="1",
                ok=not pd.isna(status_value) and int(status_value) == 1,
            )
        )
        interval = f"({row['interval_low']:.2f}, {row['interval_high']:.2f})"
        figures.append(
            Figure(
                "check",
                "Score interval of the missing record",
                interval,
                f"The true score, {row['true_score']:g}, lies inside.",
                expected="(0.53, 1.05)",
                ok=interval == "(0.53, 1.05)",
            )
        )
    frame = state.current_workspace().original
    segments = path_segments(frame[score], frame[status], compute.known_flags(frame, ROC_KNOWN))
    recovered = table["recovered_status"].notna().reset_index(drop=True)
    figures.append(
        Figure(
            "chart",
            "The curve, one step per record",
            charts.roc_attack_chart(
                segments, recovered, result.published.fpr, result.published.tpr
            ),
        )
    )
    figures.append(Figure("table", "The missing record, reconstructed (truth beside it)", table))
    return figures


def roc_mitigation_figures(recipe: Recipe) -> list[Figure]:
    score, status = _roc_columns(recipe)
    table = compute.roc_mitigations(score, status, ROC_KNOWN, ROC_OPTIONS)
    shown = table[
        ["published", "share_status_recovered", "share_pinned", "mean_finite_width", "auc_change"]
    ].rename(
        columns={
            "share_status_recovered": "statuses recovered",
            "share_pinned": "pinned to a rank",
            "mean_finite_width": "score interval width",
            "auc_change": "AUC change",
        }
    )
    return [
        Figure("table", "Four ways to publish the same curve", shown),
        Figure(
            "text",
            "Reading it",
            "Thinning or smoothing the curve widens (or removes) the bracket around the "
            "missing score and barely moves the area under the curve. The status is still "
            "recovered: with one unknown record, the published numbers of diseased and "
            "healthy records give it away whatever the curve looks like. Rounding to one "
            "decimal changes nothing here, as the steps are tenths and fifths already.",
        ),
    ]


ROC = Tour(
    key="roc",
    title="Matthews & Harel: what a published ROC curve gives away",
    source="G. J. Matthews and O. Harel, An examination of data confidentiality and "
    "disclosure issues related to publication of empirical ROC curves (2013; seed 002), "
    "Tables 1-2.",
    exact=(
        "The ten-record example: the curve and the nine known records reveal the missing "
        "record's status (1) and bracket its score between 0.53 and 1.05 (its true score is "
        "0.61).",
    ),
    shape_only=(
        "The mitigations compared in step 2 are ours (every k-th point, rounding, a binormal "
        "fit); the paper discusses the risk without this table.",
    ),
    steps=(
        TourStep(
            title="Rebuilding a missing record from the curve",
            text="An empirical ROC curve is a staircase with one step per record, taken in "
            "order of score: up for a diseased record, across for a healthy one. An intruder "
            "who holds nine of the ten records lays them on the staircase; the one step left "
            "over is the missing record's. Its direction gives the status, and its place in "
            "the order puts the score between two known scores.",
            demo="roc_example",
            recipe_builder=lambda: demo_recipe("roc_example", ()),
            question="What would the intruder learn if the missing record's score tied a "
            "known one?",
            page="app_pages/roc.py",
            page_label="Audit a curve on the ROC release page",
            figures=roc_attack_figures,
        ),
        TourStep(
            title="Publishing the curve more safely",
            text="Publishing fewer points, rounded coordinates or a smooth fitted curve hides "
            "individual steps. Each option is scored on risk (what the intruder still "
            "recovers) and utility (how far the area under the curve moves).",
            demo="roc_example",
            recipe_builder=lambda: demo_recipe("roc_example", ()),
            question="On the ROC release page, let the intruder miss 3 records instead of 1: "
            "which publication keeps their statuses hidden?",
            page="app_pages/roc.py",
            page_label="Compare publications on the ROC release page",
            figures=roc_mitigation_figures,
        ),
    ),
)


TOURS: dict[str, Tour] = {tour.key: tour for tour in (COLOGNE, EL_EMAM, NAACCR, ZHOU, ROC)}


# ---------------------------------------------------------------------------- session
def _ss() -> Any:
    return st.session_state


def active() -> tuple[Tour, int] | None:
    """The running tour and its step index, or None."""
    current = _ss().get(KEY_ACTIVE)
    if not current or current.get("tour") not in TOURS:
        return None
    tour = TOURS[current["tour"]]
    return tour, min(max(int(current.get("step", 0)), 0), len(tour.steps) - 1)


def pending() -> tuple[Tour, int] | None:
    current = _ss().get(KEY_PENDING)
    if not current or current.get("tour") not in TOURS:
        return None
    return TOURS[current["tour"]], int(current.get("step", 0))


def saved_name() -> str | None:
    saved = _ss().get(KEY_SAVED)
    return saved["dataset"].name if saved else None


def ended() -> str | None:
    return _ss().get(KEY_ENDED)


def confirmation_text(step: TourStep) -> str | None:
    """What starting at ``step`` would replace, or None when nothing of the user's is at stake:
    the data set is the step's demo and its recipe is the step's (or a tour already owns it)."""
    dataset = state.current_dataset()
    if dataset.demo_key != step.demo:
        return (
            f"This replaces your data set {dataset.name} and its recipe in this session; "
            "your file is not changed."
        )
    if active() is None and compute.recipe_key(state.current_recipe()) != compute.recipe_key(
        step.recipe_builder()
    ):
        return (
            f"This replaces the recipe of your data set {dataset.name} in this session; "
            "your file is not changed."
        )
    return None


def needs_confirmation(step: TourStep) -> bool:
    return confirmation_text(step) is not None


def _save_previous() -> None:
    ss = _ss()
    if ss.get(KEY_SAVED) is not None:
        return  # the data set from before the first tour is the one to restore
    ss[KEY_SAVED] = {
        "workspace": ss[state.KEY_WORKSPACE],
        "recipe": ss[state.KEY_RECIPE],
        "dataset": ss[state.KEY_DATASET],
        "source": ss.get(state.KEY_SOURCE),
    }


def apply_step(step: TourStep) -> None:
    """Load the step's demo (unless it is in use) and its recipe."""
    if state.current_dataset().demo_key != step.demo:
        state.load_demo_dataset(step.demo)
    recipe = step.recipe_builder()
    recipe.check_columns(state.current_workspace().original.columns)
    state.set_recipe(recipe, external=True)


def go(tour_key: str, index: int, confirmed: bool = False) -> None:
    """Show step ``index`` of a tour with its recipe (asking first when the user's data set or
    recipe would be replaced, unless ``confirmed``)."""
    tour = TOURS[tour_key]
    index = min(max(index, 0), len(tour.steps) - 1)
    step = tour.steps[index]
    ss = _ss()
    if not confirmed and needs_confirmation(step):
        ss[KEY_PENDING] = {"tour": tour_key, "step": index}
        return
    ss.pop(KEY_PENDING, None)
    ss.pop(KEY_ENDED, None)
    if active() is None:
        _save_previous()
    try:
        apply_step(step)
    except Exception as error:  # e.g. the demo could not be built: say so on the next run
        ss[KEY_MESSAGE] = state.user_message(error)
        return
    ss[KEY_ACTIVE] = {"tour": tour_key, "step": index}


def start(tour_key: str) -> None:
    go(tour_key, 0)


def confirm() -> None:
    current = pending()
    if current is not None:
        go(current[0].key, current[1], confirmed=True)


def cancel() -> None:
    _ss().pop(KEY_PENDING, None)


def move(delta: int) -> None:
    current = active()
    if current is not None:
        tour, index = current
        go(tour.key, index + delta)


def reset_step() -> None:
    move(0)


def finish() -> None:
    """End the tour; the page then offers to restore the data set from before it."""
    current = active()
    ss = _ss()
    ss.pop(KEY_ACTIVE, None)
    ss.pop(KEY_PENDING, None)
    if ss.get(KEY_SAVED) is not None:
        ss[KEY_ENDED] = current[0].title if current else "the tour"


def restore() -> None:
    """Put back the data set, recipe and source database from before the tour."""
    ss = _ss()
    saved = ss.pop(KEY_SAVED, None)
    ss.pop(KEY_ENDED, None)
    if saved is None:
        return
    ss[state.KEY_WORKSPACE] = saved["workspace"]
    ss[state.KEY_RECIPE] = saved["recipe"]
    ss[state.KEY_DATASET] = saved["dataset"]
    if saved["source"] is None:
        ss.pop(state.KEY_SOURCE, None)
    else:
        ss[state.KEY_SOURCE] = saved["source"]
    ss[state.KEY_CACHE] = {}
    ss[state.KEY_LAST_CHANGED] = None
    ss[state.KEY_EPOCH] = ss.get(state.KEY_EPOCH, 0) + 1
    state.flash(f"Restored {saved['dataset'].name} and its recipe.")


def keep_tour_data() -> None:
    """Forget the saved data set: the tour's demo stays."""
    _ss().pop(KEY_SAVED, None)
    _ss().pop(KEY_ENDED, None)


def pop_message() -> str | None:
    return _ss().pop(KEY_MESSAGE, None)


def step_figures(step: TourStep) -> list[Figure] | None:
    """The step's live figures for the current recipe; None when the data set in use is not
    the step's demo (the figures would not mean anything)."""
    if state.current_dataset().demo_key != step.demo:
        return None
    return step.figures(state.current_recipe())
