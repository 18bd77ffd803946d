"""The report's charts: the specifications the pages draw (:mod:`deid_core.charts`) rendered
without a browser by vl-convert, as PNG for the PDF and SVG for the HTML.

vl-convert runs Vega in an embedded JavaScript engine and draws text with the fonts bundled in
``fonts/`` (DejaVu Sans with CJK and emoji fallbacks, see ``fonts/README.md``), so a column
named in Chinese, Arabic or with an emoji is drawn in the chart as it is on the page. It writes
nothing to disk and fetches nothing (external data URLs are refused). Only the width is set
here (the page stretches the chart to its container); the specification is otherwise the
page's.
"""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import Any

#: Where the report's fonts live (shared with :mod:`deid_core.report.pdf`).
FONT_DIR = Path(__file__).with_name("fonts")

#: Chart width in the report, in CSS pixels (the PNG is drawn at twice that).
REPORT_WIDTH = 560
PNG_SCALE = 2.0

_lock = threading.Lock()
_fonts_registered = False


def _converter() -> Any:
    """vl-convert, with the report's fonts registered once per process."""
    global _fonts_registered
    import vl_convert

    with _lock:
        if not _fonts_registered:
            vl_convert.register_font_directory(str(FONT_DIR))
            _fonts_registered = True
    return vl_convert


def start_engine() -> None:
    """Start vl-convert's JavaScript engine, which its first call in a process does: about
    0.6 s of CPU in one native call that no cancellation check can interrupt (a no-op, about
    2 ms, once started). The report builder calls it between two checks, so that this stretch
    is not added to the first chart's (measured with ``bench/bench_cancel_gaps.py``)."""
    _converter().get_themes()


def _sized(spec: dict[str, Any]) -> dict[str, Any]:
    sized = copy.deepcopy(spec)
    sized["width"] = REPORT_WIDTH
    return sized


def render_svg(spec: dict[str, Any]) -> str:
    """The chart as SVG text (for the HTML)."""
    return _converter().vegalite_to_svg(_sized(spec), allowed_base_urls=[])


def svg_to_png(svg: str) -> bytes:
    """An SVG drawn by :func:`render_svg` as a PNG (for the PDF), without running Vega again."""
    return _converter().svg_to_png(svg, scale=PNG_SCALE)


def render_png(spec: dict[str, Any]) -> bytes:
    """The chart as a PNG."""
    return svg_to_png(render_svg(spec))
