"""Helpers shared by the AppTest tests (imported as ``app_helpers``)."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dashboard.state import GENERIC_ERROR  # noqa: E402
from deid_core.workspace import CacheNamespace  # noqa: E402

APP = str(ROOT / "app.py")
TIMEOUT = 120


def fresh_app() -> AppTest:
    """The dashboard after its first run: the synthetic cohort on the Mask page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert_clean(at)
    return at


def goto(at: AppTest, page: str) -> AppTest:
    """Switch to ``app_pages/<page>.py`` and run it."""
    at.switch_page(f"app_pages/{page}.py").run()
    assert_clean(at)
    return at


def assert_clean(at: AppTest) -> None:
    """No uncaught exception, and no generic 'could not be computed' error either (the app
    turns unexpected exceptions into that message, which would otherwise hide a bug)."""
    assert not at.exception, [e.value for e in at.exception]
    generic = [e.value for e in at.error if GENERIC_ERROR in e.value]
    assert not generic, generic


def metric_value(block, label: str) -> str:
    """The displayed value of the (first) metric called ``label`` in ``block``."""
    values = [m.value for m in block.metric if m.label == label]
    assert values, f"no metric {label!r}; have {[m.label for m in block.metric]}"
    return values[0]


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def no_events_frame(n: int, seed: int) -> pd.DataFrame:
    """A small cohort whose outcome has no events (the model cannot be fitted)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.arange(1, n + 1),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 80, n),
            "dose": rng.gamma(1.0, 0.5, n).round(3),
            "death": np.zeros(n, dtype=int),
        }
    )


def page_cache(at: AppTest, name: str) -> list:
    """The results a page keeps for the session under ``name`` (``state.SessionCache``), oldest
    first."""
    return CacheNamespace(at.session_state["deid.workspace"].cache, f"page.{name}").values()
