"""Learn: guided tours that re-live published analyses on the demo data sets.

The tours are content (``dashboard/tours/``, one file per tour); this page draws the list of
tours, the running tour's step with its live figures, and the confirmation / restore prompts.
"""

import streamlit as st

from dashboard import charts, state, tours

st.title("Learn")
st.caption(
    "Guided tours through the papers this dashboard is built on. Each step sets a recipe, "
    "shows the live figures, and asks a question to try; move any slider you like, and press "
    "'Reset to this step' to get the step's settings back."
)


def render_figures(figures: list[tours.Figure]) -> None:
    metrics = [f for f in figures if f.kind in ("metric", "check")]
    for start in range(0, len(metrics), 4):
        columns = st.columns(4)
        for column, figure in zip(columns, metrics[start : start + 4], strict=False):
            column.metric(figure.label, figure.value, help=figure.note)
            if figure.kind == "check":
                if figure.ok:
                    column.success(
                        f"Agrees with the paper ({figure.expected}).", icon=":material/check:"
                    )
                else:
                    column.warning(
                        f"The paper has {figure.expected}: press 'Reset to this step' to "
                        "compare with the step's own recipe.",
                        icon=":material/info:",
                    )
    for figure in figures:
        if figure.kind == "table":
            st.markdown(f"**{figure.label}**")
            st.dataframe(figure.value, hide_index=True)
            if figure.note:
                st.caption(figure.note)
        elif figure.kind == "chart":
            charts.show_chart(figure.value, figure.label)
        elif figure.kind == "text":
            st.markdown(f"**{figure.label}.** {figure.value}")


def render_reproduction(tour: tours.Tour) -> None:
    with st.expander("What this tour reproduces exactly, and what only in shape"):
        st.markdown("**Exactly** (arithmetic the paper prints):")
        st.markdown("\n".join(f"- {item}" for item in tour.exact))
        st.markdown("**In shape only** (synthetic data stand in for the paper's):")
        st.markdown("\n".join(f"- {item}" for item in tour.shape_only))


def render_pending() -> bool:
    current = tours.pending()
    if current is None:
        return False
    tour, index = current
    text = tours.confirmation_text(tour.steps[index])
    if text is None:  # nothing at stake any more
        tours.confirm()
        st.rerun()
    st.warning(f"**{tour.title}.** {text}", icon=":material/warning:")
    left, right, _ = st.columns([1, 1, 3])
    left.button("Start the tour", key="learn.confirm", on_click=tours.confirm, type="primary")
    right.button("Cancel", key="learn.cancel", on_click=tours.cancel)
    return True


def render_restore_offer() -> None:
    title = tours.ended()
    name = tours.saved_name()
    if title is None or name is None:
        return
    st.info(
        f"You finished {title}. Your data set from before the tour, {name}, and its recipe "
        "are kept in this session.",
        icon=":material/restore:",
    )
    left, right, _ = st.columns([2, 2, 3])
    left.button(
        f"Restore {name} and its recipe",
        key="learn.restore",
        on_click=tours.restore,
        type="primary",
    )
    right.button("Keep the tour's data", key="learn.keep", on_click=tours.keep_tour_data)


def render_list() -> None:
    for tour in tours.TOURS.values():
        with st.container(border=True):
            st.subheader(tour.title)
            st.caption(tour.source)
            st.markdown(
                "**Steps:** "
                + " → ".join(f"({i}) {step.title}" for i, step in enumerate(tour.steps, start=1))
            )
            render_reproduction(tour)
            st.button(
                "Start this tour",
                key=f"learn.start.{tour.key}",
                on_click=tours.start,
                args=(tour.key,),
                icon=":material/play_arrow:",
            )


def render_step(tour: tours.Tour, index: int) -> None:
    step = tour.steps[index]
    st.subheader(tour.title)
    st.caption(tour.source)
    st.progress((index + 1) / len(tour.steps), text=f"Step {index + 1} of {len(tour.steps)}")
    st.markdown(f"### {index + 1}. {step.title}")
    st.markdown(step.text)
    render_reproduction(tour)

    first, last = index == 0, index == len(tour.steps) - 1
    cols = st.columns(4)
    cols[0].button(
        "Previous",
        key="learn.previous",
        on_click=tours.move,
        args=(-1,),
        disabled=first,
        icon=":material/arrow_back:",
    )
    cols[1].button(
        "Reset to this step",
        key="learn.reset",
        on_click=tours.reset_step,
        icon=":material/restart_alt:",
        help="Load the step's demo and recipe again (your slider moves are undone).",
    )
    if last:
        cols[2].button(
            "Finish",
            key="learn.finish",
            on_click=tours.finish,
            type="primary",
            icon=":material/flag:",
        )
    else:
        cols[2].button(
            "Next",
            key="learn.next",
            on_click=tours.move,
            args=(1,),
            type="primary",
            icon=":material/arrow_forward:",
        )
    cols[3].button("Leave the tour", key="learn.leave", on_click=tours.finish)

    st.markdown("#### Live figures")
    recipe = state.current_recipe()
    st.caption(
        "For the current recipe: "
        + ("; ".join(recipe.describe()) or "no masking")
        + ". Change it on the other pages and come back; 'Reset to this step' restores the "
        "step's recipe."
    )
    try:
        with st.spinner("Computing the step's figures...", show_time=True):
            figures = tours.step_figures(step)
    except Exception as error:
        st.error(state.user_message(error))
        figures = []
    if figures is None:
        st.warning(
            f"The data set in use is no longer this tour's demo "
            f"({step.demo_title}). Press 'Reset to this step' to load it again.",
            icon=":material/warning:",
        )
    else:
        render_figures(figures)
    st.info(f"**Try this:** {step.question}", icon=":material/help:")
    st.page_link(step.page, label=step.page_label, icon=":material/open_in_new:")


def render() -> None:
    message = tours.pop_message()
    if message:
        st.error(message)
    flash = state.pop_flash()
    if flash:
        st.success(flash)
    if render_pending():
        return
    render_restore_offer()
    current = tours.active()
    if current is None:
        render_list()
    else:
        render_step(*current)


render()
