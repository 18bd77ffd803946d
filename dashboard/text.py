"""Text that comes from data, files or links, shown as literal text.

Streamlit renders Markdown in most places that show text: ``st.markdown``, captions, alerts,
toasts, headers, the label and help of every widget, metric values, radio and select-slider
options, tab labels and ``st.table`` cells. A column name such as
``![x](https://tracker.example/p.png)`` would then load an outside image, and
``[Upload here](https://...)`` would show someone else's link inside the tool. Every string
that did not come from this code (column and category names, file names, demo names and
anything else read from a link, and error messages that name them) goes through
:func:`literal` before it reaches such a place; tables shown with ``st.table`` go through
:func:`literal_frame`. ``st.code``, ``st.text`` and ``st.dataframe`` show text literally and
need nothing. ``tests/unit/test_literal_text.py`` scans the pages for text that escapes this.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

#: Every ASCII punctuation mark: CommonMark lets each be escaped with a backslash, which covers
#: Markdown, GitHub's extensions (autolinks included), raw HTML, Streamlit's directives
#: (``:red[...]``) and LaTeX (``$``); except an underscore, hyphen or dot between two ASCII
#: letters or digits (``age_at_end``, ``x-ray``, ``dose.gy``), which no Markdown construct
#: can use there (an underscore inside a word neither opens nor closes emphasis; a list marker
#: or a rule needs a space or a line of its own) and which widgets announce to screen readers
#: as written, backslashes included.
_PUNCTUATION = re.compile(r"(?!(?<=[A-Za-z0-9])[_.\-](?=[A-Za-z0-9]))([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"[\r\n\t\v\f\u2028\u2029]+")
#: Invisible, and no line may break there: shown text reads the same.
WORD_JOINER = "\u2060"
#: Where an autolink could start: before the colon of the schemes GitHub-flavoured Markdown
#: links (``http:``, ``https:``, ``mailto:``, ``xmpp:``), between ``www`` and its dot, after
#: an e-mail's ``@``. Any other colon (``threshold: 0.2``) is left alone, so text stays
#: searchable as shown.
_AUTOLINK_START = re.compile(
    r"(?i)(?:(?<=http)|(?<=https)|(?<=mailto)|(?<=xmpp))(?=:)|(?<=www)(?=\.)|(?<=@)"
)


def literal(value: object) -> str:
    """``value`` as text that Markdown shows exactly as written, on one line: every ASCII
    punctuation mark is backslash-escaped (but ``_``, ``-`` and ``.`` inside a word), line
    breaks become spaces (a line break would start a list, a heading or a quote), and an
    invisible word joiner (U+2060) goes where GitHub's autolinks would start (``http:``,
    ``www.``, ``@``): they find URLs in the text after escapes are undone, so escaping alone
    does not stop them."""
    text = _AUTOLINK_START.sub(WORD_JOINER, _LINE_BREAKS.sub(" ", str(value)))
    return _PUNCTUATION.sub(r"\\\1", text)


def authored(markdown: str) -> str:
    """Markdown written in this repository (a demo's description, a tour's text), shown as
    Markdown. Marks, for the scan of the pages, the one kind of text that is not escaped: it
    never holds anything read from data, a file or a link."""
    return markdown


def literal_list(values: Iterable[object], limit: int | None = None, quote: str = "'") -> str:
    """``'a', 'b', 'c'``: each value literal, quoted, separated by commas; beyond ``limit``
    values, "and N more"."""
    values = list(values)
    shown = values if limit is None else values[:limit]
    text = ", ".join(f"{quote}{literal(value)}{quote}" for value in shown)
    more = len(values) - len(shown)
    return text + (f" and {more:,} more" if more > 0 else "")


def literal_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` for ``st.table`` (which renders Markdown in its cells): every text
    cell, column name and index label escaped with :func:`literal`."""

    def escape(value: object) -> object:
        return literal(value) if isinstance(value, str) else value

    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].map(escape).astype(object)
    out.columns = [escape(name) for name in out.columns]
    out.index = pd.Index([escape(label) for label in out.index], name=escape(out.index.name))
    return out
