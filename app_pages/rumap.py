"""R-U map: sweep one step's parameter and plot security against analysis potential."""

import contextlib

import streamlit as st

from dashboard import charts, compute, identifiers, jobs, state, tables, widgets
from dashboard.help import SECURITY_MEASURE_NAMES, metric_help
from dashboard.text import literal
from deid_core.risk import MATCH_RULES, risk_basis
from deid_core.tradeoff.rumap import PERTURBED_SECURITY, SECURITY_MEASURES

INTEGER_PARAMETERS = ("digits", "decimals")


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
                compute.run_sweep(recipe, index, values, "rumap.sweep")

    jobs.live_fragment(
        lambda: render_results(recipe, index, step, parameter, values, zoom, epoch), start
    )


def render_results(recipe, index, step, parameter, values, zoom, epoch) -> None:
    """The map of the sweep (swept in the background), its figures, table and profile."""
    try:
        live = compute.run_sweep(recipe, index, values, "rumap.sweep", start=False)
        if live is None and recipe.is_random:
            st.caption(
                f"Each point needs {state.setting('replicates'):,} random replicates; this can "
                "take a while."
            )
            if st.button("Run the sweep", type="primary", key=f"rumap.{epoch}.run"):
                live = compute.run_sweep(recipe, index, values, "rumap.sweep", where=st.empty())
        elif live is None:
            live = compute.run_sweep(recipe, index, values, "rumap.sweep", where=st.empty())
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
    if result.points["analysis_potential"].isna().any():
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


render()
