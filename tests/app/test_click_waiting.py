"""A click is never lost to the rerun a live fragment asks for (``dashboard.jobs``).

``st.rerun()`` resets every trigger of the run it ends. A live fragment reruns the page when
its work starts (so that polling starts) and when it ends (so that the sidebar shows the final
figures). When a click arrives with that run, for a widget further down the page (or in a
fragment queued after this one: a poll and a click sent together run as one queue), the rerun
would reset the click before its widget is drawn, and the button would do nothing: seen in a
loaded browser run, where "Run the sweep" was clicked as the strip's fit ended. The rerun is
now put off until the click has been read.
"""

import app_helpers  # noqa: F401  (puts the repository on sys.path)
from streamlit.testing.v1 import AppTest


def reads_its_clicks():
    import streamlit as st

    from dashboard import jobs

    seen = st.session_state.setdefault("seen", [])
    seen.append(("before", jobs.click_waiting()))
    if st.button("Go", key="go"):
        seen.append(("clicked", True))
    seen.append(("after", jobs.click_waiting()))


def test_a_click_waits_until_its_button_is_drawn():
    at = AppTest.from_function(reads_its_clicks, default_timeout=30)
    at.run()
    assert at.session_state["seen"] == [("before", False), ("after", False)]
    at.button(key="go").click().run()
    assert at.session_state["seen"][2:] == [("before", True), ("clicked", True), ("after", False)]
    at.run()  # the click was read once: the next run carries none
    assert at.session_state["seen"][5:] == [("before", False), ("after", False)]


def starts_work_above_a_button():
    """A live fragment whose body starts a job on every page run after the first (the strip
    starting a fit for a new recipe), and a button below it; the end of the script is app.py's
    (``pay_owed_rerun``)."""
    import threading

    import streamlit as st

    from dashboard import jobs

    runs = st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    gate = st.session_state.setdefault("gate", threading.Event())

    def body() -> None:
        if runs > 1:
            jobs.board().submit("work", runs, "Work", lambda reporter: gate.wait(30), heavy=False)

    jobs.live_fragment(body, slots=("work",))
    if st.button("Run the sweep", key="sweep"):
        st.session_state["clicks"] = st.session_state.get("clicks", 0) + 1
    jobs.pay_owed_rerun()  # as app.py does after the page


def test_a_click_arriving_as_work_starts_is_read_and_polling_still_starts():
    at = AppTest.from_function(starts_work_above_a_button, default_timeout=30)
    at.run()
    assert "clicks" not in at.session_state
    # The click's run starts a job above the button: the fragment asks for a rerun (to start
    # polling) before the button is drawn.
    at.button(key="sweep").click().run()
    try:
        assert at.session_state["clicks"] == 1  # the click was read, not reset by the rerun
        # ... and the rerun was paid at the end of the run: a later run polls the job
        assert "deid.jobs.rerun_owed" not in at.session_state
        assert at.session_state["runs"] >= 3
    finally:
        at.session_state["gate"].set()
