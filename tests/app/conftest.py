"""AppTest fixtures: the dashboard, freshly started on the synthetic cohort."""

import pytest
from app_helpers import fresh_app
from streamlit.testing.v1 import AppTest


@pytest.fixture
def app() -> AppTest:
    return fresh_app()
