"""Mask: one method and its parameters per column, then the steps on the whole data
(suppression, multivariate microaggregation, subsampling), with a live risk / utility panel.

The masking controls change the recipe, on which the sidebar strip depends too, so moving one
reruns the page. The live panel is a fragment: its own controls (which step the small map
sweeps, how many rows to preview) rerun the panel alone, and on a large file it redraws
itself while the model fit and the map's sweep run in the background (:mod:`dashboard.jobs`):
the risk figures come first, the last analysis potential and map stay, marked as updating.
"""

import contextlib

import pandas as pd
import streamlit as st

from dashboard import charts, compute, data_step_widgets, jobs, state, tables, widgets
from dashboard.help import SECURITY_MEASURE_NAMES, judged_caption, metric_help
from dashboard.sidebar import show_verdict
from dashboard.text import literal, literal_list
from deid_core.masking import MaskingStep
from deid_core.risk import PerturbedRisk
from deid_core.risk.release import JUDGED_BASES

st.title("Mask")
st.caption(
    "Choose how each quasi-identifier, the exposure and the covariates are masked; the risk, "
    "the utility of the collaborator's model and the risk-utility map follow."
)

workspace = state.current_workspace()
recipe = state.current_recipe()
original = workspace.original
roles = recipe.roles
editable = list(dict.fromkeys([*roles.quasi_identifiers, roles.exposure, *roles.covariates]))
editable = [c for c in editable if c and c in original.columns]
editable += [s.column for s in recipe.steps if s.column not in editable]

ROLE_SHORT = {
    "quasi_identifier": "quasi-identifier",
    "exposure": "exposure",
    "outcome": "outcome",
    "covariate": "covariate",
}


def edit_column(column: str, recipe_now):
    """Draw one column's controls; return the recipe with its new step (or unchanged)."""
    labels = [ROLE_SHORT.get(r, r) for r in recipe_now.roles.roles_of(column)]
    st.markdown(f"**{literal(column)}** · {literal(', '.join(labels) or 'no role')}")
    current_steps = recipe_now.steps_for(column)
    if len(current_steps) > 1:
        st.info(
            "Several steps are set for this column in the recipe; they are kept as they are: "
            + "; ".join(literal(s.describe()) for s in current_steps)
        )
        return recipe_now, False
    current = current_steps[0] if current_steps else None
    result = widgets.step_editor(
        column,
        original[column],
        current,
        prefix=f"mask.{state.epoch()}.{column}",
        seed=state.seed_for("noise", column),
    )
    if result.error:
        st.error(literal(result.error), icon=":material/error:")
        return recipe_now, False
    if result.note:
        st.info(literal(result.note))
    new_steps: tuple[MaskingStep, ...] = (result.step,) if result.step is not None else ()
    if new_steps == current_steps:
        return recipe_now, False
    try:
        candidate = recipe_now.with_steps_for(column, new_steps)
        workspace.masked_column(candidate, column)  # check the step on the data first
    except Exception as error:
        st.error(literal(state.user_message(error)), icon=":material/error:")
        return recipe_now, False
    return candidate, True


def show_release_facts(recipe_now) -> None:
    """What the whole-data steps did: values suppressed per column, records left out."""
    try:
        stage = workspace.release_stage(recipe_now)
    except Exception as error:
        st.error(literal(state.user_message(error)), icon=":material/error:")
        return
    if stage is None:
        return
    for step, facts in stage.outcomes:
        st.caption(literal(step.summary(facts)))
        if "suppressed_values" in facts:
            table = pd.DataFrame(
                {
                    "column": list(facts["suppressed_values"]),
                    "values suppressed": list(facts["suppressed_values"].values()),
                }
            )
            st.dataframe(table, hide_index=True)


controls, panel = st.columns([1, 1.35], gap="large")

with controls:
    st.subheader("Masking")
    if not editable:
        st.info("No quasi-identifier, exposure or covariate is set: choose roles on the Data page.")
    changed_column = None
    for column in editable:
        with st.container(border=True):
            recipe, changed = edit_column(column, recipe)
            if changed:
                changed_column = column
    if changed_column is not None:
        state.set_recipe(recipe, changed_column=changed_column)

    st.subheader("Whole data")
    st.caption(
        "Steps on several columns at once or on whole records, applied after the column "
        "steps, in the order shown."
    )
    numeric = [c for c in editable if pd.api.types.is_numeric_dtype(original[c].dtype)]
    edited = data_step_widgets.data_steps_editor(
        recipe.data_steps,
        original,
        roles.quasi_identifiers,
        numeric,
        prefix=f"mask.{state.epoch()}.data",
        seed=state.seed_for("subsample"),
    )
    if edited.error:
        st.error(literal(edited.error), icon=":material/error:")
    elif edited.steps is not None and edited.steps != recipe.data_steps:
        candidate = recipe.with_data_steps(edited.steps)
        try:
            workspace.release_stage(candidate)  # run the steps on the data first
        except Exception as error:
            st.error(literal(state.user_message(error)), icon=":material/error:")
        else:
            changed = [s for s in candidate.data_steps if s not in recipe.data_steps]
            recipe = candidate
            name = compute.step_name(changed[0]) if changed else None
            state.set_recipe(recipe, changed_column=name)
    show_release_facts(recipe)
    if recipe.data_steps and workspace.people(recipe) is not None:
        st.caption(
            "Several rows per person: these steps work on rows, not people, so a person may "
            "keep some rows and lose others (subsampling, record suppression) or share a group "
            "with their own rows (microaggregation)."
        )
    others = [
        c
        for c in original.columns
        if c not in editable
        and c not in roles.direct_identifiers
        and c != roles.record_id
        and c != roles.outcome
    ]
    if others:
        st.caption(
            "Released unchanged (no role): " + literal_list(others, quote="") + ". Give them a "
            "role on the "
            "Data page to mask them."
        )


def step_series(step):
    """The column a column step masks (whole-data steps sweep without one)."""
    return original[step.column] if isinstance(step, MaskingStep) else None


def sweepable_steps(recipe_now) -> list[int]:
    out = []
    for index, step in enumerate(recipe_now.all_steps):
        parameter, values = compute.sweep_parameter_values(recipe_now, index, step_series(step))
        if parameter is not None and len(values) >= 2:
            out.append(index)
    return out


def auto_step(recipe_now, candidates: list[int]) -> int | None:
    if not candidates:
        return None
    by_name = {compute.step_name(recipe_now.all_steps[i]): i for i in candidates}
    for name in (state.last_changed_column(), recipe_now.roles.exposure):
        if name in by_name:
            return by_name[name]
    return candidates[0]


def map_step_key() -> str:
    return f"mask.{state.epoch()}.map_step"


def map_step(recipe_now, candidates: list[int]) -> int:
    """The step the small map sweeps: the one chosen above it, or the one changed last."""
    chosen = st.session_state.get(map_step_key(), "auto")
    by_name = {compute.step_name(recipe_now.all_steps[i]): i for i in candidates}
    return by_name.get(chosen, auto_step(recipe_now, candidates))


def start_live_work() -> None:
    """On a large file, start the panel's background work (the model fit, the map's sweep)
    before the panel is drawn, so that it polls while they run."""
    if not compute.large_data():
        return
    recipe_now = state.current_recipe()
    with contextlib.suppress(Exception):  # the panel itself says what went wrong
        compute.live_utility(recipe_now)
        candidates = sweepable_steps(recipe_now)
        if candidates and not recipe_now.is_random:
            index = map_step(recipe_now, candidates)
            step = recipe_now.all_steps[index]
            values = compute.sweep_parameter_values(recipe_now, index, step_series(step))[1]
            compute.run_sweep(recipe_now, index, values, "mask.sweep")


def live_panel() -> None:
    recipe_now = state.current_recipe()
    st.subheader("Live risk and utility")
    try:
        release = compute.judged_risk(recipe_now)
        judged = release.perturbed or release.classes  # the figures drawn below
        baseline = compute.risk(compute.unmasked(recipe_now))
        link = None if isinstance(judged, PerturbedRisk) else compute.linkage(recipe_now)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    if isinstance(judged, PerturbedRisk):
        ap_place = perturbed_figures(judged, baseline)
    else:
        ap_place = class_figures(judged, baseline, link)
    st.caption(CHANGE_NOTE)
    status_area = st.container()
    try:
        live_utility = compute.live_utility(recipe_now, where=status_area)
    except Exception as error:
        ap_place.metric("Analysis potential", "unavailable", help=metric_help("analysis_potential"))
        st.error(literal(state.user_message(error)))
        live_utility = compute.Live(None)
    else:
        show_analysis_potential(live_utility, ap_place, status_area)
        effect_figures(live_utility.value, compute.ap_status(live_utility.value))
    verdict = compute.verdict(release, recipe_now)
    show_verdict(verdict)
    searchable = not verdict.meets and not verdict.not_judged  # nothing to search without QIs
    if searchable and st.button(
        "Search from this recipe",
        key="mask.search_from_recipe",
        help="Search whole recipes (on the R-U map page) starting from this one: its "
        "whole-data steps (local suppression, dates, ages) are kept, and each "
        "quasi-identifier's settings are tried; when nothing meets the threshold, it says why "
        "and what would.",
    ):
        st.session_state[state.KEY_SEARCH_FROM_MASK] = recipe_now.to_json()
        st.switch_page("app_pages/rumap.py")
    if release.basis in ("source_linkage", "open_data"):
        st.caption(
            literal(
                f"Judged by {JUDGED_BASES[release.basis]}: maximum {release.max_risk:.3f}, "
                f"average {release.average_risk:.3f} (over {release.unit}). {release.reason}"
            )
        )
    show_subsample_risk(recipe_now)
    caption = judged_caption(judged)
    if caption:
        st.caption(literal(caption))
    # After the figures: on a large file the map is swept in the background, never in front
    # of them.
    small_map(recipe_now, judged, live_utility)
    preview(recipe_now)


#: What the arrows under the risk figures compare (said once, under the figures: in a
#: metric's narrow column "-113,857 vs no masking" was cut off).
CHANGE_NOTE = "Arrows: the change from the unmasked data (green: less risk)."


def change_from_unmasked(change: str) -> dict:
    """A risk metric's delta from its signed, formatted change against the unmasked data
    (:data:`CHANGE_NOTE`): a rise red, a fall green, and a change that shows as zero grey with
    no arrow."""
    if not any(digit in "123456789" for digit in change):
        return {"delta": "no change", "delta_color": "off", "delta_arrow": "off"}
    return {"delta": change, "delta_color": "inverse"}


def class_figures(summary, baseline, link):
    """The equivalence-class figures (every quasi-identifier generalised or unmasked); the
    place of the analysis potential."""
    row1 = st.columns(3)
    row1[0].metric(
        "Average risk",
        f"{summary.average_risk:.3f}",
        **change_from_unmasked(f"{summary.average_risk - baseline.average_risk:+.3f}"),
        help=metric_help("average_risk"),
    )
    row1[1].metric("Max risk", f"{summary.max_risk:.3f}", help=metric_help("max_risk"))
    row1[2].metric("k", f"{summary.k:,}", help=metric_help("k"))
    row2 = st.columns(3)
    row2[0].metric(
        "Uniques",
        f"{summary.uniques:,}",
        **change_from_unmasked(f"{summary.uniques - baseline.uniques:+,}"),
        help=metric_help("uniques"),
    )
    row2[1].metric("Anonymity score", f"{link.anonymity_score:.3f}", help=metric_help("anonymity"))
    return row2[2].empty()


def perturbed_figures(judged: PerturbedRisk, baseline):
    """The record-linkage figures (a quasi-identifier is perturbed): the same places as the
    class figures, compared with the unmasked data's class figures (which apply there); the
    place of the analysis potential."""
    row1 = st.columns(3)
    row1[0].metric(
        "Average risk",
        f"{judged.average_risk:.3f}",
        **change_from_unmasked(f"{judged.average_risk - baseline.average_risk:+.3f}"),
        help=metric_help("linkage_average_risk"),
    )
    row1[1].metric("Max risk", f"{judged.max_risk:.3f}", help=metric_help("linkage_max_risk"))
    row1[2].metric(
        "Interval disclosure",
        "unavailable" if judged.interval_share is None else f"{judged.interval_share:.3f}",
        help=metric_help("interval_disclosure"),
    )
    row2 = st.columns(3)
    row2[0].metric(
        "Certain links",
        f"{judged.certain:,}",
        **change_from_unmasked(f"{judged.certain - baseline.uniques:+,}"),
        help=metric_help("certain_links"),
    )
    row2[1].metric(
        "Anonymity score", f"{judged.anonymity_score:.3f}", help=metric_help("linkage_anonymity")
    )
    return row2[2].empty()


def show_analysis_potential(live_utility, place, status_area) -> None:
    """The analysis-potential metric: the result, or while the model is fitted in the
    background the running mean of the replicates so far (with its Monte-Carlo error and a
    button to stop there) or the last value, marked as updating."""
    utility = live_utility.value
    ap = compute.ap_status(utility)
    text = ap.text if not live_utility.updating or utility else "computing..."
    place.metric("Analysis potential", literal(text), help=metric_help("analysis_potential"))
    replicates = getattr(utility, "replicates", None)
    job = live_utility.job
    if replicates is not None and (live_utility.updating or live_utility.stopped):
        st.caption(literal(compute.running_mean_text(replicates, job.total if job else None)))
    if live_utility.updating:
        jobs.show_status(job, status_area, stop_label="Stop here and keep these replicates")
    elif live_utility.stopped:
        st.caption(
            f"Stopped by you after {replicates.n_replicates:,} replicates: change the number of "
            "replicates or the masking to fit again."
        )
    if ap.reason and not live_utility.updating:
        st.caption(f"Analysis potential unavailable: {literal(ap.reason)}")
    elif utility is not None and utility.ap_note:
        st.caption(literal(utility.ap_note))


def effect_figures(utility, ap) -> None:
    """The effect measure (odds, rate or hazard ratio) with its CI, original beside masked."""
    effect = utility.effect() if utility is not None else None
    if effect is None:
        return
    masked = utility.masked_effect()
    row3 = st.columns(2)
    widgets.effect_metric(row3[0], f"{effect.name}, original", effect)
    widgets.effect_metric(row3[1], f"{effect.name}, masked", None if ap.reason else masked)


def small_map(recipe_now, judged, live_utility) -> None:
    """The small R-U map of the step changed last (or the chosen one)."""
    st.markdown("**Risk-utility map**")
    candidates = sweepable_steps(recipe_now)
    if not candidates:
        st.caption("Add a rounding, grouping or noise step to see the map.")
        return
    options = ["auto", *(compute.step_name(recipe_now.all_steps[i]) for i in candidates)]
    key = map_step_key()
    state.forget_stale_choice(key, options)
    st.selectbox(
        "Sweep the masking parameter of",
        options,
        format_func=lambda o: "the column changed last" if o == "auto" else o,
        key=key,
        help="The map shows what other values of this column's parameter would give.",
    )
    show_map(recipe_now, map_step(recipe_now, candidates), judged, live_utility)


def show_map(recipe_now, index: int, judged, live_utility) -> None:
    """The small R-U map of step ``index``: drawn from the cache, else swept in the
    background (a random recipe's map on request: each point needs its replicates)."""
    step = recipe_now.all_steps[index]
    values = compute.sweep_parameter_values(recipe_now, index, step_series(step))[1]
    try:
        live_map = compute.run_sweep(
            recipe_now, index, values, "mask.sweep", start=not recipe_now.is_random
        )
        if live_map is None:
            st.caption(
                f"The recipe has random noise: each point needs "
                f"{state.setting('replicates'):,} replicates."
            )
            if st.button("Draw the map", key=f"mask.{state.epoch()}.draw_random"):
                live_map = compute.run_sweep(recipe_now, index, values, "mask.sweep")
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    if live_map is None:
        return
    drawn = live_map.shown()
    if drawn is None:
        return
    security, ap_now = compute.current_point(recipe_now, live_utility.value)
    charts.show_chart(
        charts.ru_map(
            drawn.points,
            theta=drawn.theta,
            threshold_security=1 - state.release_context().conditional_limit,
            current=(security, ap_now),
            parameter=drawn.parameter,
            height=300,
            zoom=True,
            title=f"Risk-utility map of {compute.step_name(step)}",
        ),
        table=tables.sweep_points_table(
            drawn.points, drawn.parameter, getattr(step, drawn.parameter, None)
        ),
    )
    theta = compute.theta_text(drawn.theta)
    if compute.theta_at_limit(drawn.theta):
        theta = f"{theta}, {compute.THETA_AT_LIMIT_NOTE}"
    else:
        theta = f"= {theta}"
    measure = SECURITY_MEASURE_NAMES[state.setting("security_measure")]
    kind = f" ({step.label.lower()})" if isinstance(step, MaskingStep) else ""
    if isinstance(judged, PerturbedRisk):
        measure += " of the record-linkage risk (values perturbed)"
    st.caption(
        literal(
            f"Points: {drawn.column}{kind} with {drawn.parameter} = "
            f"{', '.join(drawn.points['label'])}; security: {measure}; "
            f"Cologne's fitted theta {theta}. The dashed red line is the threshold; the "
            "R-U map page has the full table."
        )
    )


def preview(recipe_now) -> None:
    """The first released rows, original and masked side by side (from the cached masked
    columns: no copy of the whole file)."""
    st.markdown("**Before and after (first rows)**")
    n_rows = st.slider("Rows to preview", 3, 20, 5, key=f"mask.{state.epoch()}.preview_rows")
    masked_columns = recipe_now.masked_columns
    if not masked_columns:
        st.caption("Nothing is masked yet.")
        return
    try:
        released = workspace.released_rows(recipe_now)
        rows = range(min(n_rows, len(original))) if released is None else released[:n_rows]
        index = original.index[rows]
        table = pd.DataFrame(index=index)
        for column in masked_columns:
            table[f"{column} (original)"] = original.loc[index, column]
            table[f"{column} (masked)"] = workspace.masked_column(recipe_now, column).iloc[rows]
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    st.dataframe(table, hide_index=True)


def show_subsample_risk(recipe_now) -> None:
    """A subsampled release: the open-data risk at the fraction it achieved is the one that
    applies (an intruder cannot know who is in the sample)."""
    try:
        release = compute.release_risk(recipe_now)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    if release is None:
        return
    st.markdown(
        f"**This release is a subsample** (sampling fraction {release.sampling_fraction:.3f}): "
        "an intruder cannot know who is in it, so the risk that applies is the open-data "
        "risk at that fraction. The figures above assume the intruder knows who was sampled."
    )
    row = st.columns(3)
    row[0].metric(
        "Max individual risk (open data)",
        f"{release.bf_max:.3f}",
        help=metric_help("benedetti_franconi"),
    )
    row[1].metric(
        "Expected re-identifications",
        f"{release.expected_reidentifications:.1f}",
        help=metric_help("expected_reidentifications"),
    )
    row[2].metric(
        "Max journalist risk", f"{release.journalist_max:.3f}", help=metric_help("journalist")
    )


with panel:
    jobs.live_fragment(live_panel, prepare=start_live_work)
