"""The strip shown in the sidebar of every page: the data set, its risk, its utility and the
release verdict, plus the release threshold settings.

``app.py`` draws the settings before the page runs (so the page sees them) and the strip after
it (so the strip shows the recipe the page has just changed).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import compute, jobs, state
from dashboard.help import metric_help
from dashboard.text import literal
from deid_core.errors import DeidError
from deid_core.risk import MISSING_MODES, PerturbedRisk
from deid_core.risk.context import SCENARIO_HELP, Verdict

CUSTOM = 0  # the "custom minimum cell size" choice


def render_settings(container: Any) -> None:
    """Release threshold and context (they decide the verdict and the map's threshold line)."""
    with container.expander("Release threshold", expanded=False):
        size = state.setting("min_cell_size")
        choice_key = state.PREFIX + "w.cell_size_choice"
        if choice_key not in st.session_state:
            st.session_state[choice_key] = size if size in state.CELL_SIZES else CUSTOM
        choice = st.selectbox(
            "Maximum acceptable risk",
            [*state.CELL_SIZES, CUSTOM],
            format_func=lambda c: state.CELL_SIZES.get(c, "Custom minimum cell size"),
            key=choice_key,
            help=metric_help("threshold"),
        )
        if choice == CUSTOM:
            custom = st.number_input(
                "Minimum cell size",
                min_value=2,
                max_value=1000,
                value=size,
                step=1,
                key=state.PREFIX + "w.custom_cell_size",
                help="The threshold is 1 / this size (El Emam & Malin list 3 to 25 as precedents).",
            )
            state.set_setting("min_cell_size", int(custom))
        else:
            state.set_setting("min_cell_size", int(choice))
        st.radio(
            "Release context",
            list(state.RELEASE_CONTEXTS),
            format_func=state.RELEASE_CONTEXTS.__getitem__,
            **state.bound_to_setting("release_context"),
            help=metric_help("release_context"),
        )
        if state.setting("release_context") != "public":
            for name, label in state.SCENARIOS.items():
                st.number_input(
                    literal(label),
                    min_value=0.0,
                    max_value=1.0,
                    step=0.01,
                    **state.bound_to_setting(name),
                    help=SCENARIO_HELP[name.removeprefix("pr_")],
                )


def render_strip(container: Any) -> None:
    """Data set, records, k, uniques, maximum / average risk, Cologne anonymity score,
    analysis-potential score and the verdict against the threshold."""
    with container:
        info = state.current_dataset()
        st.markdown(f"**Data set:** {literal(info.name)}")
        if info.synthetic:
            st.badge("Synthetic data", icon=":material/science:", color="violet")
        jobs.show_activity()  # where the background work stands, while there is any
        try:
            workspace = state.current_workspace()
            recipe = state.current_recipe()
            judged = compute.judged_risk(recipe)
        except Exception as error:  # never a traceback: the core's message or a generic one
            st.error(literal(state.user_message(error)))
            return
        # Full width: a count of millions is cut off ("500,...") in half the sidebar.
        st.metric("Records", f"{workspace.n_records:,}", help=metric_help("records"))
        left, right = st.columns(2)
        in_people = not isinstance(judged, PerturbedRisk) and judged.unit == "people"
        if in_people:
            left.metric("People", f"{judged.n_records:,}", help=metric_help("people"))
        if isinstance(judged, PerturbedRisk):
            _perturbed_figures(judged, left, right)
        else:
            right.metric("k", f"{judged.k:,}", help=metric_help("k"))
            left.metric("Uniques", f"{judged.uniques:,}", help=metric_help("uniques"))
            right.metric("Max risk", f"{judged.max_risk:.3f}", help=metric_help("max_risk"))
            left.metric(
                "Average risk", f"{judged.average_risk:.3f}", help=metric_help("average_risk")
            )
            try:
                anonymity = f"{compute.linkage(recipe).anonymity_score:.3f}"
            except DeidError:  # e.g. the tolerance rule without a tolerance: see the Risk page
                anonymity = "unavailable"
            right.metric("Anonymity", literal(anonymity), help=metric_help("anonymity"))
        # After the risk figures: on a small file the page waits here for the model's fit, on
        # a large one the strip redraws the analysis potential until it is fitted.
        jobs.live_fragment(lambda: render_analysis_potential(recipe))
        show_verdict(compute.verdict(judged))
        context = (
            f"Threshold {state.threshold_label()}; "
            f"{state.RELEASE_CONTEXTS[state.setting('release_context')].lower()}. "
        )
        several = workspace.people(recipe) is not None
        if isinstance(judged, PerturbedRisk):
            st.caption(
                literal(
                    context + f"Judged by record linkage: {', '.join(judged.basis.perturbed)} "
                    "perturbed, so equivalence classes (k, uniques) do not apply; anonymity is "
                    "1 - the average risk. Details on the Risk page."
                    + (" Record linkage counts rows, not people." if several else "")
                )
            )
        else:
            st.caption(
                literal(
                    context + f"Anonymity is Cologne's score, matching rule: "
                    f"{state.setting('matching_rule').replace('_', ' ')}. Missing values: "
                    f"{MISSING_MODES[state.setting('missing')]}."
                    + (
                        f" {workspace.n_records:,} rows of {judged.n_records:,} people: k and the "
                        "risks count people; the anonymity score counts rows."
                        if in_people
                        else " k and the risks count rows, not people (several rows per person)."
                        if several
                        else ""
                    )
                )
            )


def render_analysis_potential(recipe) -> None:
    """The strip's analysis potential: the result, or the last one marked as updating while
    the model is fitted in the background."""
    try:
        live_utility = compute.live_utility(recipe, where=st.container())
    except Exception as error:
        st.metric("Analysis potential", "unavailable", help=metric_help("analysis_potential"))
        st.caption(f"Unavailable: {literal(state.user_message(error))}")
        return
    ap = compute.ap_status(live_utility.value)
    st.metric(
        "Analysis potential",
        literal(ap.text) if not live_utility.updating or live_utility.value else "computing...",
        help=metric_help("analysis_potential"),
    )
    if live_utility.updating:
        st.caption(f":material/hourglass_top: Updating: {literal(jobs.describe(live_utility.job))}")
    elif ap.reason:
        st.caption(f"Unavailable: {literal(ap.reason)}")


def show_verdict(verdict: Verdict, note: str = "") -> None:
    """The verdict as every page shows it: green when the release meets the threshold, a
    yellow warning when it does not (the same colour and words in the panel and the strip);
    ``note`` follows the verdict's text."""
    text = verdict.text + (f" {note}" if note else "")
    if verdict.meets:
        st.success(literal(text), icon=":material/check_circle:")
    else:
        st.warning(literal(text), icon=":material/warning:")


def _perturbed_figures(judged: PerturbedRisk, left: Any, right: Any) -> None:
    """The record-linkage figures in the strip's places of k, uniques and the class risks."""
    right.metric("Certain links", f"{judged.certain:,}", help=metric_help("certain_links"))
    left.metric("Max risk", f"{judged.max_risk:.3f}", help=metric_help("linkage_max_risk"))
    right.metric(
        "Average risk", f"{judged.average_risk:.3f}", help=metric_help("linkage_average_risk")
    )
    left.metric("Anonymity", f"{judged.anonymity_score:.3f}", help=metric_help("linkage_anonymity"))
    interval = judged.interval_share
    right.metric(
        "Interval disclosure",
        "unavailable" if interval is None else f"{interval:.3f}",
        help=metric_help("interval_disclosure"),
    )
