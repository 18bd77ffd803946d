"""The invariant of the live figures, checked over sequences of a user's moves (issue 28).

On a file of 200,000 records (the background path: figures drawn at once, the model fitted in
the background), after any sequence of method switches, slider moves, page changes, stops
and cancellations: within a bounded time after the last job ends (here: the page runs again,
as a poll does, at most :data:`SETTLE_RUNS` times), the Mask page shows the analysis
potential of the *current* recipe, or says it is being computed (and why: the status line
names the job); never a figure missing without a word, never an older recipe's figure
unmarked. Between moves, whatever the jobs are doing, the figure is there, final or marked as
updating.

A hypothesis rule-based state machine drives AppTest; the example count is kept small so the
file runs within a minute on a quiet machine.
"""

from __future__ import annotations

from app_helpers import APP, TIMEOUT, assert_clean, metric_value, texts
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from streamlit.testing.v1 import AppTest

from dashboard import compute, jobs, state
from deid_core.datasets import DEMO_DATASETS
from deid_core.datasets.cohort import synthetic_cohort
from deid_core.recipe import Recipe
from deid_core.workspace import Workspace

N_RECORDS = 200_000
#: Replicates of a random recipe (the session's setting): few, so that a fit ends soon.
REPLICATES = 4
#: Runs of the page after the last job ended within which the figures must be final.
SETTLE_RUNS = 3
#: How long the test waits for the session's jobs to end (never reached unless stuck).
JOB_WAIT = 300.0

METHODS = ("none", "relative_round", "uniform_noise", "interval_group")
HALF_WIDTHS = ("0.01", "0.05", "0.1")
PAGES = ("risk", "utility", "data")

_FRAME: dict[str, object] = {}


def big_cohort():
    """The synthetic cohort's shape at 200,000 records (made once per process, in memory)."""
    if "frame" not in _FRAME:
        _FRAME["frame"] = synthetic_cohort(n=N_RECORDS, seed=7)
    return _FRAME["frame"]


def load_big_file(at: AppTest) -> None:
    """Make the 200,000-record cohort the session's data set, with the demo's roles and no
    masking, as the Data page does for an upload (``state.load_dataset``)."""
    assert N_RECORDS > jobs.WAIT_ROWS  # the background path
    demo = DEMO_DATASETS["cohort"]
    board = at.session_state[jobs.KEY_JOBS]
    board.cancel_all("the data changed")
    assert board.wait_all(JOB_WAIT)
    at.session_state[state.KEY_WORKSPACE] = Workspace(big_cohort(), name="cohort_200k.csv")
    at.session_state[state.KEY_RECIPE] = Recipe(demo.roles)
    at.session_state[state.KEY_DATASET] = state.DatasetInfo(name="cohort_200k.csv", synthetic=True)
    at.session_state[state.KEY_EPOCH] = at.session_state[state.KEY_EPOCH] + 1
    at.session_state[state.KEY_LAST_CHANGED] = None
    settings_now = dict(at.session_state[state.KEY_SETTINGS])
    settings_now["replicates"] = REPLICATES
    at.session_state[state.KEY_SETTINGS] = settings_now


class LiveFigures(RuleBasedStateMachine):
    """A user on the Mask page of a large file, moving faster than the work."""

    @initialize()
    def open_the_big_file(self) -> None:
        self.at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        self.at.run()
        assert_clean(self.at)
        load_big_file(self.at)
        self.at.run()
        assert_clean(self.at)
        self.on_mask = True

    # ------------------------------------------------------------------ moves
    @rule(method=st.sampled_from(METHODS))
    def switch_the_dose_method(self, method: str) -> None:
        self._to_mask()
        self.at.selectbox(key=self._key("stomach_dose_gy:method")).set_value(method).run()
        assert_clean(self.at)

    @rule(width=st.sampled_from(HALF_WIDTHS))
    def move_the_noise_width(self, width: str) -> None:
        self._to_mask()
        key = self._key("stomach_dose_gy:uniform_noise:half_width", required=False)
        if key is None:  # the dose is not noised: switch first
            self.at.selectbox(key=self._key("stomach_dose_gy:method")).set_value(
                "uniform_noise"
            ).run()
            key = self._key("stomach_dose_gy:uniform_noise:half_width")
        self.at.select_slider(key=key).set_value(float(width)).run()
        assert_clean(self.at)

    @rule(digits=st.integers(1, 4))
    def move_the_digits(self, digits: int) -> None:
        self._to_mask()
        key = self._key("stomach_dose_gy:relative_round:digits", required=False)
        if key is None:
            self.at.selectbox(key=self._key("stomach_dose_gy:method")).set_value(
                "relative_round"
            ).run()
            key = self._key("stomach_dose_gy:relative_round:digits")
        self.at.slider(key=key).set_value(digits).run()
        assert_clean(self.at)

    @rule()
    def away_to_no_masking_and_back(self) -> None:
        """The dose's method switched to "No masking" (whose fit is known: its job is told to
        cancel) and back before the job has seen it."""
        self._to_mask()
        method = self.at.selectbox(key=self._key("stomach_dose_gy:method"))
        before = method.value
        method.set_value("none").run()
        assert_clean(self.at)
        self.at.selectbox(key=self._key("stomach_dose_gy:method")).set_value(before).run()
        assert_clean(self.at)

    @rule(page=st.sampled_from(PAGES))
    def open_another_page(self, page: str) -> None:
        self.at.switch_page(f"app_pages/{page}.py").run()
        assert_clean(self.at)
        self.on_mask = False

    @rule()
    def stop_the_fit(self) -> None:
        """The user's "Stop here" (the job keeps its partial result), if the page offers it."""
        self._to_mask()
        stops = [b for b in self.at.button if b.label == "Stop here and keep these replicates"]
        if stops:
            stops[0].click().run()
            assert_clean(self.at)

    @rule(reason=st.sampled_from(["another page was opened", "the session ended"]))
    def cancel_the_running_fit(self, reason: str) -> None:
        """A cancellation the page did not ask for in this run (a page left and come back to
        between two polls; the rerun that followed lost), then a poll."""
        job = self.board.current("utility")
        if job is not None:
            job.cancel(reason)
        self._to_mask()
        self.at.run()
        assert_clean(self.at)

    @rule()
    def let_the_work_end(self) -> None:
        """The user waits: within a bounded number of polls after the last job ends, every
        figure of the current recipe is shown, final."""
        self._to_mask()
        for _ in range(SETTLE_RUNS):
            assert self.board.wait_all(JOB_WAIT), jobs.activity_line(self.board)
            self.at.run()
            assert_clean(self.at)
            if not self.board.active():
                break
        assert not self.board.active(), "work still starting after the last job ended"
        ap = metric_value(self.at.main, "Analysis potential")
        captions = texts(self.at.caption)
        assert not any("Updating" in text for text in captions), captions
        if any("Stopped by you" in text for text in captions):
            return  # the user's own stop: the partial result, said to be one
        workspace = self.at.session_state[state.KEY_WORKSPACE]
        recipe = self.at.session_state[state.KEY_RECIPE]
        assert workspace.utility_is_cached(recipe, REPLICATES), "the fit of this recipe is lost"
        expected = compute.ap_status(workspace.utility(recipe, REPLICATES)).text
        assert ap == expected, f"shown {ap}, the current recipe's is {expected}"

    # ------------------------------------------------------------------ between every move
    @invariant()
    def the_figure_is_there_or_said_to_be_coming(self) -> None:
        """Whatever the jobs are doing: the analysis potential is drawn; "computing..." comes
        with what is being computed; a figure not marked as updating (nor as stopped by the
        user) is the current recipe's."""
        if not getattr(self, "on_mask", False):
            return
        ap = metric_value(self.at.main, "Analysis potential")
        captions = texts(self.at.caption)
        updating = any("Updating" in text for text in captions) or any(
            "Updating" in (bar.proto.text or "") for bar in self.at.get("progress")
        )
        if ap == "computing...":
            assert updating, "'computing...' without a word of what"
            return
        if updating or any("Stopped by you" in text for text in captions):
            return
        workspace = self.at.session_state[state.KEY_WORKSPACE]
        recipe = self.at.session_state[state.KEY_RECIPE]
        # Shown unmarked, so fitted when drawn (the fit is cached as its job ends).
        assert workspace.utility_is_cached(recipe, REPLICATES), (
            f"{ap} shown unmarked, yet the current recipe's fit is not done"
        )
        expected = compute.ap_status(workspace.utility(recipe, REPLICATES)).text
        assert ap == expected, f"shown {ap} unmarked, the current recipe's is {expected}"

    # ------------------------------------------------------------------ helpers
    @property
    def board(self) -> jobs.JobBoard:
        return self.at.session_state[jobs.KEY_JOBS]

    def _to_mask(self) -> None:
        if not self.on_mask:
            self.at.switch_page("app_pages/mask.py").run()
            assert_clean(self.at)
            self.on_mask = True

    def _key(self, suffix: str, required: bool = True) -> str | None:
        widgets = [*self.at.selectbox, *self.at.select_slider, *self.at.slider]
        keys = [w.key for w in widgets if w.key and w.key.endswith(suffix)]
        if required:
            assert keys, f"no widget {suffix}"
        return keys[0] if keys else None

    def teardown(self) -> None:
        if hasattr(self, "at"):
            self.board.cancel_all("test over")
            self.board.wait_all(JOB_WAIT)


LiveFigures.TestCase.settings = settings(
    max_examples=3,
    stateful_step_count=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
TestLiveFigures = LiveFigures.TestCase
