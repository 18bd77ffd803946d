"""Helpers shared by the AppTest tests (imported as ``app_helpers``)."""

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dashboard.state import GENERIC_ERROR  # noqa: E402
from deid_core.cache import CacheNamespace  # noqa: E402

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


def shown(markdown: str) -> str:
    """The text a reader sees for Markdown the app escaped (``dashboard.text.literal`` puts a
    backslash before every punctuation mark of text from data, and an invisible word joiner
    where an autolink could start; the browser shows neither)."""
    return _ESCAPED.sub(r"\1", markdown).replace("\u2060", "")


_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A ``st.table`` frame as a reader sees it (``dashboard.text.literal_frame`` escapes it)."""

    def unescape(value: object) -> object:
        return shown(value) if isinstance(value, str) else value

    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(unescape)
    out.columns = [unescape(name) for name in out.columns]
    out.index = pd.Index([unescape(label) for label in out.index], name=unescape(out.index.name))
    return out


def assert_clean(at: AppTest) -> None:
    """No uncaught exception, and no generic 'could not be computed' error either (the app
    turns unexpected exceptions into that message, which would otherwise hide a bug)."""
    assert not at.exception, [e.value for e in at.exception]
    generic = [e.value for e in at.error if GENERIC_ERROR in shown(e.value)]
    assert not generic, generic


def metric_value(block, label: str) -> str:
    """The displayed value of the (first) metric called ``label`` in ``block``."""
    values = [shown(m.value) for m in block.metric if shown(m.label) == label]
    assert values, f"no metric {label!r}; have {[m.label for m in block.metric]}"
    return values[0]


def texts(elements) -> list[str]:
    """What a reader sees of each element (escapes removed)."""
    return [shown(e.value) for e in elements]


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
