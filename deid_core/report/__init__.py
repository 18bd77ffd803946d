"""The release report: what was released, how it was masked, and why that is acceptable."""

from deid_core.report.builder import (
    SECTION_TITLES,
    Report,
    build_report,
    default_sweep_step,
    step_text,
    sweepable_steps,
)

__all__ = [
    "SECTION_TITLES",
    "Report",
    "build_report",
    "default_sweep_step",
    "step_text",
    "sweepable_steps",
]
