"""R-U map: sweep one step's parameter and plot security against analysis potential."""

import contextlib

import streamlit as st

from dashboard import charts, compute, identifiers, jobs, state, tables, widgets
from dashboard.help import SECURITY_MEASURE_NAMES, metric_help
from dashboard.sidebar import show_release_verdict
from dashboard.text import literal
from deid_core.risk import MATCH_RULES, risk_basis
from deid_core.search import DEFAULT_SETTINGS_PER_COLUMN, ColumnSettings, SearchSpace, default_space
from deid_core.search.space import shaped_columns
from deid_core.tradeoff.rumap import PERTURBED_SECURITY, SECURITY_MEASURES

INTEGER_PARAMETERS = ("digits", "decimals")
#: Settings proposed per searched column (the first six are tried by default).
MAX_PROPOSED = 10
#: Frontier recipes with an Apply button.
MAX_FRONTIER_BUTTONS = 12
#: The background jobs' places on the page.
SWEEP_SLOT = "rumap.sweep"
SEARCH_SLOT = "rumap.search"


st.title("Risk-utility map")
st.caption(
    "Each masking configuration is a point: analysis potential (utility) across, security "
    "(1 − risk) up, both 0..1; the ideal is the top right. Sweeping one parameter draws a path "
    "(Cologne et al. 2012, Figure 3)."
)


def parse_values(text: str, parameter: str) -> list:
    """Comma-separated numbers; whole numbers for digits/decimals. ValueError when invalid."""
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError("Give at least two values, separated by commas.")
    values = []
    for part in parts:
        number = float(part)
        if parameter in INTEGER_PARAMETERS:
            if not number.is_integer():
                raise ValueError(f"The values of '{parameter}' must be whole numbers.")
            values.append(int(number))
        else:
            values.append(number)
    values = sorted(set(values))
    if len(values) < 2:
        raise ValueError("Give at least two different values.")
    if len(values) > 25:
        raise ValueError("Give at most 25 values.")
    return values


def render() -> None:
    workspace = state.current_workspace()
    recipe = state.current_recipe()
    show_release_verdict(recipe)
    original = workspace.original
    candidates = [
        i
        for i, step in enumerate(recipe.steps)
        if step.sweep_parameter is not None
        and len(compute.sweep_parameter_values(recipe, i, original[step.column])[1]) >= 1
    ]
    if not candidates:
        st.info(
            "The recipe has no step with a parameter to sweep. Add rounding, truncation, "
            "interval grouping, top coding or noise on the Mask page."
        )
        return
    exposure_steps = [i for i in candidates if recipe.steps[i].column == recipe.roles.exposure]
    default = exposure_steps[0] if exposure_steps else candidates[0]
    epoch = state.epoch()

    left, right = st.columns(2)
    with left:
        step_key = f"rumap.{epoch}.step"
        state.forget_stale_choice(step_key, candidates)
        index = st.selectbox(
            "Step to sweep",
            candidates,
            index=candidates.index(default),
            format_func=lambda i: (
                f"{recipe.steps[i].column}: {recipe.steps[i].label.lower()} "
                f"({recipe.steps[i].sweep_parameter})"
            ),
            key=step_key,
        )
        step = recipe.steps[index]
        parameter, defaults = compute.sweep_parameter_values(recipe, index, original[step.column])
        text = st.text_input(
            f"Values of {literal(parameter)}",
            value=", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in defaults),
            key=f"rumap.{epoch}.{index}.{parameter}.values",
            help="Numbers separated by commas; the current value is included by default.",
        )
    with right:
        measure = st.selectbox(
            "Security measure (vertical axis)",
            list(SECURITY_MEASURES),
            format_func=SECURITY_MEASURE_NAMES.__getitem__,
            **state.bound_to_setting("security_measure"),
            help=metric_help("security_measure"),
        )
        basis = risk_basis(recipe)
        description = SECURITY_MEASURES[measure]
        if not basis.class_based:
            description = PERTURBED_SECURITY[measure]
            st.caption(
                literal(
                    f"{', '.join(basis.perturbed)} perturbed: the release is judged by record "
                    "linkage, so every point's security reads the record-linkage risk (the "
                    "class figures and exact matching do not apply)."
                )
            )
        st.caption(literal(f"Security = {description[0].upper()}{description[1:]}."))
        if measure == "identifiability" and basis.class_based:
            st.caption(
                f"Matching rule: {literal(MATCH_RULES[state.setting('matching_rule')])} "
                "(change it on the Risk page)."
            )
            if state.current_workspace().people(recipe) is not None:
                st.caption(literal(identifiers.rows_only_note("Cologne's identifiability")))
        elif state.current_workspace().people(recipe) is not None:
            st.caption("Several rows per person: the risk counts people (Risk page).")
        if step.random or recipe.is_random:
            widgets.replicates_slider("Replicates per point (random steps)")
        zoom = st.checkbox(
            "Zoom the utility axis to the points",
            value=False,
            key="rumap.zoom",
            help="The map is drawn on 0..1 axes as in Cologne et al.; analysis potential is often "
            "close to 1, and zooming separates the points.",
        )

    try:
        values = parse_values(text, parameter)
    except ValueError as error:
        message = str(error)
        if message.startswith("could not convert"):
            message = "The values must be numbers separated by commas."
        st.error(literal(message), icon=":material/error:")
        return

    def start() -> None:
        if compute.large_data() and not recipe.is_random:
            with contextlib.suppress(Exception):  # the results below say what went wrong
                compute.run_sweep(recipe, index, values, SWEEP_SLOT)

    jobs.live_fragment(
        lambda: render_results(recipe, index, step, parameter, values, zoom, epoch),
        start,
        slots=(SWEEP_SLOT, "utility"),  # not redrawn while a search runs
    )


def render_results(recipe, index, step, parameter, values, zoom, epoch) -> None:
    """The map of the sweep (swept in the background), its figures, table and profile."""
    try:
        live = compute.run_sweep(recipe, index, values, SWEEP_SLOT, start=False)
        if live is None and recipe.is_random:
            st.caption(
                f"Each point needs {state.setting('replicates'):,} random replicates; this can "
                "take a while."
            )
            if st.button("Run the sweep", type="primary", key=f"rumap.{epoch}.run"):
                live = compute.run_sweep(recipe, index, values, SWEEP_SLOT, where=st.empty())
        elif live is None:
            live = compute.run_sweep(recipe, index, values, SWEEP_SLOT, where=st.empty())
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    if live is None:
        return
    result = live.shown("The map below is the last one drawn, until the new sweep is done.")
    if result is None:
        return

    try:
        utility = compute.live_utility(recipe).value
        current = compute.current_point(recipe, utility)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        current = None
    charts.show_chart(
        charts.ru_map(
            result.points,
            theta=result.theta,
            threshold_security=1 - state.release_context().conditional_limit,
            current=current,
            parameter=result.parameter,
            zoom=zoom,
        ),
        table=tables.sweep_points_table(result.points, parameter, getattr(step, parameter, None)),
    )
    if live.updating:
        return
    theta_text = compute.theta_text(result.theta)
    c1, c2, c3 = st.columns(3)
    c1.metric("Cologne theta", literal(theta_text), help=metric_help("theta"))
    c2.metric(
        "Threshold line (security)",
        f"{1 - state.release_context().conditional_limit:.3f}",
        help="Security = 1 − the largest acceptable risk of the masked data: the threshold "
        + literal(state.threshold_label())
        + " for a public release; for a non-public one, the threshold divided by the largest "
        "scenario probability.",
    )
    c3.metric(
        "Points on the Pareto frontier",
        f"{int(result.points['pareto'].sum()):,}",
        help="Configurations no other point beats on both security and analysis potential.",
    )
    if result.theta is None:
        st.caption("Theta is unavailable: fewer than two points have an analysis-potential score.")
    elif compute.theta_at_limit(result.theta):
        st.caption(
            f"Cologne's curve security = (1 − AP^θ)^(1/θ) fits best with θ {literal(theta_text)}, "
            f"{compute.THETA_AT_LIMIT_NOTE}."
        )
    else:
        st.caption(
            f"Cologne's curve security = (1 − AP^θ)^(1/θ) fitted with θ = {literal(theta_text)} "
            "(Cologne et al. found 178 in their data)."
        )
    if (result.points["analysis_potential"].dropna() > 1).any():
        st.caption(
            "Some analysis potentials exceed 1: there the masked estimate happened to have a "
            "smaller MSE than the original; the axis extends past 1 so they stay apart."
        )
    if result.random:
        st.caption(f"Random step: each point averages {result.n_replicates:,} replicates.")
    unreachable = result.points["judged_by"] == compute.UNREACHABLE
    if unreachable.any():
        st.warning(
            f"{int(unreachable.sum()):,} of {len(unreachable):,} values cannot be applied with the "
            "rest of this recipe (e.g. record suppression cannot reach k within its limit) and "
            "are not plotted; the note in the table says why."
        )
    if result.points.loc[~unreachable, "analysis_potential"].isna().any():
        st.warning(
            "Some points have no analysis-potential score and are not plotted; see the note "
            "in the table."
        )

    st.subheader("Points")
    st.dataframe(
        tables.sweep_points_table(result.points, parameter, getattr(step, parameter, None)),
        hide_index=True,
    )
    st.subheader("Security and utility against the parameter")
    charts.show_chart(
        charts.profile_chart(result.points, parameter),
        f"Security and utility against {parameter}",
        tables.sweep_points_table(result.points, parameter, getattr(step, parameter, None)),
    )

    with st.form(f"rumap.{epoch}.apply"):
        chosen = st.selectbox(
            f"Use a value of {literal(parameter)} in the recipe",
            result.points["value"].tolist(),
            format_func=lambda v: f"{v:g}" if isinstance(v, float) else str(v),
        )
        if st.form_submit_button("Apply to the recipe"):
            try:
                new_recipe = compute.with_swept_value(recipe, index, parameter, chosen)
            except Exception as error:
                st.error(literal(state.user_message(error)))
            else:
                state.set_recipe(new_recipe, changed_column=step.column, external=True)
                st.rerun()


def render_search() -> None:
    """Search whole recipes: every combination of the chosen columns' settings, judged against
    the threshold and ranked by the model's analysis potential; apply one in a click."""
    st.divider()
    st.subheader("Search whole recipes")
    st.caption(
        "Every combination of the settings below is a recipe. Each is judged by the risk that "
        "fits its mask against the release threshold; those that meet it are ranked by the "
        "analysis potential (AP = MSE(b) / MSE(b_m), 1 = no loss) of the collaborator's model. "
        "A recipe finer than one that fails is known to fail and is skipped (coarser "
        "generalisation never lowers a class size). Security = 1 − the "
        + literal(search_measure())
        + "; higher is safer."
    )
    recipe = state.current_recipe()
    workspace = state.current_workspace()
    original = workspace.original
    if not recipe.roles.quasi_identifiers:
        st.info("Choose quasi-identifiers on the Data page to search recipes.")
        return
    epoch = state.epoch()
    keep = False
    if recipe.data_steps:
        keep = st.toggle(
            "Start from the current recipe: keep its whole-data steps",
            value=True,
            key=f"rumap.{epoch}.search.keep",
            help=literal(
                "Every recipe tried keeps "
                + "; ".join(step.describe() for step in recipe.data_steps)
                + ". The columns its date steps write are not searched by default."
            ),
        )
    choices = list(dict.fromkeys([*recipe.roles.quasi_identifiers, *[recipe.roles.exposure or ""]]))
    choices = [c for c in choices if c]
    shaped = shaped_columns(recipe) if keep else set()
    columns = st.multiselect(
        "Columns to search",
        choices,
        default=[c for c in choices if c not in shaped],
        key=f"rumap.{epoch}.search.columns",
    )
    if not columns:
        st.info("Choose at least one column to search.")
        return
    proposed = default_space(original, recipe, columns, count=MAX_PROPOSED)
    space_columns = []
    with st.expander("Settings tried per column (finest first)", expanded=False):
        for settings in proposed.columns:
            labels = list(settings.labels)
            chosen = st.multiselect(
                f"Settings of {literal(settings.column)}",
                list(range(len(labels))),
                default=list(range(min(len(labels), DEFAULT_SETTINGS_PER_COLUMN))),
                format_func=labels.__getitem__,
                key=f"rumap.{epoch}.search.{settings.column}",
            )
            space_columns.append(
                ColumnSettings(
                    settings.column, tuple(settings.settings[i] for i in chosen) or ((),)
                )
            )
        limit = st.number_input(
            "Suppression limit (% of records a recipe may remove)",
            min_value=0.0,
            max_value=50.0,
            value=0.0,
            step=1.0,
            key=f"rumap.{epoch}.search.limit",
            help="ARX's suppression limit: a recipe that fails may remove the records of classes "
            "too small for the threshold when they are at most this share of the records. "
            "Removed records lower the analysis potential; above a few percent, check that the "
            "records left still answer the question.",
        )
    try:
        space = SearchSpace(tuple(space_columns), limit / 100, keep_data_steps=keep)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    st.caption(f"{space.size:,} recipes in the space.")
    jobs.live_fragment(lambda: render_search_results(recipe, space, epoch), slots=(SEARCH_SLOT,))


def render_search_results(recipe, space, epoch) -> None:
    """The search's results: run in the background at the click of Search, streamed in as
    they come with a Stop button, then drawn (or the best recipes found before a stop)."""
    try:
        live = compute.run_search(recipe, space, SEARCH_SLOT, start=False)
        if live is None:
            asked = st.session_state.pop(state.KEY_SEARCH_FROM_MASK, None) == recipe.to_json()
            clicked = st.button("Search", type="primary", key=f"rumap.{epoch}.search.run")
            if not (clicked or asked):
                return
            live = compute.run_search(recipe, space, SEARCH_SLOT)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    if live.updating:
        jobs.show_status(
            live.job,
            st.container(),
            stop_label="Stop the search",
            key=str(epoch),
            before_partial=True,
        )
        if live.value is not None:  # the summary and best recipes only, redrawn as they come
            st.caption("The best recipes found so far (the search goes on):")
            draw_search_summary(live.value)
        return
    elif live.stopped:
        st.caption("Stopped: the best recipes found before the stop.")
        if st.button("Search again", key=f"rumap.{epoch}.search.again"):
            jobs.board().cancel(SEARCH_SLOT, "searched again")
            st.rerun()
    if live.value is None:
        return
    draw_search(recipe, space, live.value)


def search_measure() -> str:
    return "maximum risk" if state.release_context().public else "strict average risk"


def draw_search(recipe, space, result) -> None:
    """The frontier, the threshold line, the current recipe, the best recipes; when none meets
    the threshold, why and what would."""
    st.text(result.summary())
    if result.best is None and result.complete:
        try:
            why = compute.search_explanation(recipe, space)
        except Exception as error:
            st.error(literal(state.user_message(error)))
        else:
            st.warning(literal(why["message"]), icon=":material/block:")
            st.markdown(
                "**Would help:**\n" + "\n".join(f"- {literal(text)}" for text in why["would_help"])
            )
    try:
        current = compute.search_current_point(recipe, space)
        here = (current.security, current.analysis_potential)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        here = None
    if result.points:
        chart_place, table_place = st.columns([3, 2]) if result.frontier else (st, None)
        chart_place.altair_chart(
            charts.ru_map(
                tables.search_map_frame(result),
                theta=None,
                threshold_security=1 - state.release_context().conditional_limit,
                current=here,
                parameter="recipe",
                zoom=True,
            ),
            width="stretch",
        )
        if table_place is not None:
            table_place.caption("The frontier's points, numbered as on the chart:")
            table_place.dataframe(tables.search_frontier_table(result), hide_index=True)
    if result.frontier:
        st.markdown("**Frontier**: no other recipe is both safer and more useful.")
        for i, point in enumerate(tables.frontier_order(result)[:MAX_FRONTIER_BUTTONS]):
            left, right = st.columns([4, 1])
            ap = (
                "unavailable"
                if point.analysis_potential is None
                else f"{point.analysis_potential:.4f}"
            )
            left.text(f"{i + 1}. {result.label(point)}  —  AP {ap}, risk {point.risk:.3f}")
            if right.button(
                "Apply",
                key=f"rumap.search.apply.{i}",
                help="Use this recipe; fine-tune it by hand on the Mask page.",
            ):
                state.set_recipe(point.recipe, external=True)
                st.rerun()
    draw_best_recipes(result)


def draw_search_summary(result) -> None:
    """A search still running: its summary so far and its best recipes (the map and the
    frontier's Apply buttons wait for its end)."""
    st.text(result.summary())
    draw_best_recipes(result)


def draw_best_recipes(result) -> None:
    if result.points:
        st.markdown("**Best recipes** (highest analysis potential first)")
        st.dataframe(tables.search_top_table(result), hide_index=True)
        if result.best is not None and result.best.effect_name:
            st.caption(
                "Masked effect: the "
                + literal(result.best.effect_name.lower())
                + " of the exposure on the masked data, with its 95% Wald interval."
            )


render()
render_search()
