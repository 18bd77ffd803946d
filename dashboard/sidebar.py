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
from deid_core.recipe import Recipe
from deid_core.risk import MISSING_MODES, PerturbedRisk
from deid_core.risk.context import SCENARIO_HELP, Verdict
from deid_core.risk.release import JudgedRelease

CUSTOM = 0  # the "custom minimum cell size" choice

#: What a verdict says until the user has chosen the release context.
UNCHOSEN_NOTE = "(Release context not chosen yet: judged as a public release, the strictest.)"


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
        st.toggle(
            "An intruder may hold the source file",
            **state.bound_to_setting("intruder_holds_source"),
            help="On (the default and the safe assumption): the release is also judged by exact "
            "linkage to the source file (the custodian's own data, or a registry it came "
            "from). After local suppression or subsampling this is often the higher risk: a "
            "record left unsuppressed that was unique in the source is found with certainty. "
            "Turn it off only if no recipient or intruder can hold the source.",
        )
        st.toggle(
            "Also require HIPAA Safe Harbor",
            **state.bound_to_setting("safe_harbor"),
            help="Each of Safe Harbor's 18 items still released (for example ages over 89, "
            "dates finer than the year, 5-digit ZIP codes) then fails the verdict, whatever "
            "the risk.",
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
        classes = judged.classes
        in_people = classes.unit == "people"
        if in_people:
            left.metric("People", f"{classes.n_records:,}", help=metric_help("people"))
        if judged.perturbed is not None:
            _perturbed_figures(judged.perturbed, left, right)
        else:
            right.metric("k", f"{classes.k:,}", help=metric_help("k"))
            left.metric("Uniques", f"{classes.uniques:,}", help=metric_help("uniques"))
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
        show_release_verdict(recipe, judged, ask=True)
        context = (
            f"Threshold {state.threshold_label()}; "
            f"{state.RELEASE_CONTEXTS[state.setting('release_context')].lower()}. "
        )
        if judged.perturbed is not None:
            st.caption(
                literal(
                    context
                    + f"Judged by record linkage: {', '.join(judged.perturbed.basis.perturbed)} "
                    "perturbed, so equivalence classes (k, uniques) do not apply; anonymity is "
                    "1 - the average risk. Details on the Risk page."
                    + (" Record linkage counts rows, not people." if in_people else "")
                )
            )
        else:
            judged_by = {
                "classes": "the compatible classes of the release",
                "source_linkage": "linkage to the source (an intruder who holds it)",
                "open_data": "the open-data risk at the fraction released",
            }[judged.basis]
            st.caption(
                literal(
                    context + f"Max and average risk: {judged_by}; k and uniques: the release's "
                    "compatible classes. Anonymity is Cologne's score, matching rule: "
                    f"{state.setting('matching_rule').replace('_', ' ')}. Missing values: "
                    f"{MISSING_MODES[classes.missing]}."
                    + (
                        f" {workspace.n_records:,} rows of {classes.n_records:,} people: k and "
                        "the risks count people; the anonymity score counts rows."
                        if in_people
                        else ""
                    )
                )
            )


def show_release_verdict(
    recipe: Recipe, judged: JudgedRelease | None = None, ask: bool = False
) -> None:
    """The one verdict of the current release, as every page shows it (the strip, the Mask,
    Risk and Export pages): with ``ask`` (the strip), the release-context question first
    until the user has answered it."""
    if ask and not state.context_chosen():
        ask_context()
    try:
        judged = judged or compute.judged_risk(recipe)
        found = compute.verdict(judged, recipe)
    except Exception as error:  # never a traceback
        st.error(literal(state.user_message(error)))
        return
    show_verdict(found)


def ask_context() -> None:
    """The first-use question: who receives the release (it decides how it is judged)."""
    with st.container(border=True):
        choice = st.radio(
            "Who will receive this release?",
            list(state.RELEASE_CONTEXTS),
            format_func=state.RELEASE_CONTEXTS.__getitem__,
            key=state.PREFIX + "w.first_context",
            help=metric_help("release_context"),
        )
        if st.button("Use this release context", key=state.PREFIX + "w.first_context_ok"):
            state.choose_context(choice)
            st.rerun()


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
    ``note`` follows the verdict's text, and until the user has chosen the release context,
    a word that it was judged as a public release."""
    if not state.context_chosen():
        note = (note + " " if note else "") + UNCHOSEN_NOTE
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
