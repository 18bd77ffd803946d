"""AppTest fixtures: the dashboard, freshly started on the synthetic cohort.

AppTest reports the Markdown source of text elements, in which the app backslash-escapes every
punctuation mark of text from data (``dashboard.text.literal``); the browser shows no
backslash. The tests compare what a reader sees, so the ``value`` of alerts, headings,
Markdown, captions and metrics is read with those escapes removed (``app_helpers.shown``);
``element.proto.body`` keeps the source, for the tests of the escaping itself.
"""

import functools

import pytest
from app_helpers import fresh_app, shown, shown_frame
from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import element_tree as tree

from dashboard import jobs

for _kind in (tree.AlertBase, tree.HeadingBase, tree.Markdown, tree.Metric):
    _kind.value = property(lambda element: shown(element.proto.body))
_table_value = tree.Table.value.fget
tree.Table.value = property(lambda element: shown_frame(_table_value(element)))

# Every AppTest instance scans all installed distributions' metadata for Streamlit components
# on its first run (``BidiComponentManager.discover_and_register_components``, 0.11-0.15 s of
# CPU; a server does it once, at its start). The installed packages cannot change during the
# test run, so the scan is done once per test process.
manifest_scanner.scan_component_manifests = functools.cache(
    manifest_scanner.scan_component_manifests
)


@pytest.fixture
def app() -> AppTest:
    return fresh_app()


#: How long a test's teardown waits for each of its jobs to see its cancellation (a job checks
#: between chunks, well within a second on a quiet machine).
JOB_END_WAIT = 60.0


@pytest.fixture(autouse=True)
def no_job_outlives_its_test(monkeypatch):
    """Every background job a test started is cancelled at its end, and waited for.

    Under AppTest a session has no browser to close, so a job it started would otherwise run
    on, in the same process as the next tests (pytest-xdist runs many files in one worker):
    it takes CPU from them and, being heavy, the server's place for heavy work, so the next
    test's job waits in the queue behind it (a job "queued" where the test expected it
    "running", and a wait that ran out). The Streamlit server cancels such jobs when the
    session ends; this does the same when the test ends."""
    started: list[jobs.Job] = []
    start = jobs.Job.start

    def recorded_start(job: jobs.Job) -> jobs.Job:
        started.append(job)
        return start(job)

    monkeypatch.setattr(jobs.Job, "start", recorded_start)
    yield
    for job in started:
        job.cancel("the test is over")
    for job in started:
        job.wait(JOB_END_WAIT)
