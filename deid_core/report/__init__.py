"""The release report: what was released, how it was masked, and why that is acceptable.

:func:`build_report` (:mod:`~deid_core.report.builder`) assesses a recipe and assembles the
sections (:mod:`~deid_core.report.document`), with number formats and plain-language steps from
:mod:`~deid_core.report.formatting` and charts from :mod:`~deid_core.report.charts`; the
:class:`Report` renders as HTML (:mod:`~deid_core.report.html`) and PDF
(:mod:`~deid_core.report.pdf`).
"""

from deid_core.report.builder import SECTION_TITLES, Report, build_report
from deid_core.report.formatting import step_text

__all__ = ["SECTION_TITLES", "Report", "build_report", "step_text"]
