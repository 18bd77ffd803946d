"""AppTest fixtures: the dashboard, freshly started on the synthetic cohort.

AppTest reports the Markdown source of text elements, in which the app backslash-escapes every
punctuation mark of text from data (``dashboard.text.literal``); the browser shows no
backslash. The tests compare what a reader sees, so the ``value`` of alerts, headings,
Markdown, captions and metrics is read with those escapes removed (``app_helpers.shown``);
``element.proto.body`` keeps the source, for the tests of the escaping itself.
"""

import pytest
from app_helpers import fresh_app, shown, shown_frame
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import element_tree as tree

for _kind in (tree.AlertBase, tree.HeadingBase, tree.Markdown, tree.Metric):
    _kind.value = property(lambda element: shown(element.proto.body))
_table_value = tree.Table.value.fget
tree.Table.value = property(lambda element: shown_frame(_table_value(element)))


@pytest.fixture
def app() -> AppTest:
    return fresh_app()
