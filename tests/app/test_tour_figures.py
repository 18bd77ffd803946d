"""Every step of every tour, run on its own demo and recipe in a Streamlit session: each figure
its tour file lists is shown (none replaced by an 'unavailable' text or left out), and every
check agrees with the paper's expected figure."""

import pytest
from app_helpers import TIMEOUT
from streamlit.testing.v1 import AppTest

from dashboard.tours import TOURS

STEPS = [(key, index) for key, tour in TOURS.items() for index in range(len(tour.steps))]


def run_step(tour_key: str, index: int) -> None:
    """The AppTest script: load the step's demo and recipe, keep what its figures show."""
    import streamlit as st

    from dashboard import state, tours

    state.ensure_state()
    step = tours.TOURS[tour_key].steps[index]
    tours.apply_step(step)
    figures = tours.step_figures(step)
    st.session_state["shown"] = [(f.kind, f.label, f.value, f.expected, f.ok) for f in figures]


@pytest.mark.parametrize(("tour_key", "index"), STEPS, ids=[f"{k}-{i + 1}" for k, i in STEPS])
def test_each_step_shows_its_figures_and_agrees_with_the_paper(tour_key, index):
    app = AppTest.from_function(run_step, args=(tour_key, index), default_timeout=TIMEOUT)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    step = TOURS[tour_key].steps[index]
    shown = app.session_state["shown"]
    assert [kind for kind, *_ in shown] == [spec.kind for spec in step.figures]
    checks = [
        (spec, figure)
        for spec, figure in zip(step.figures, shown, strict=True)
        if spec.kind == "check"
    ]
    for spec, (_, label, value, expected, ok) in checks:
        assert ok, f"{label}: computed {value}, the paper {expected} ({spec.expected.citation})"


@pytest.mark.parametrize("tour_key", list(TOURS))
def test_every_tour_checks_a_figure_of_its_paper(tour_key):
    kinds = [figure.kind for step in TOURS[tour_key].steps for figure in step.figures]
    assert "check" in kinds
