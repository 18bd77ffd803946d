"""The titles of the report's sections, by key."""

from __future__ import annotations

from deid_core.report.board import BOARD_TITLES
from deid_core.report.identifiers import TITLE as IDENTIFIERS_TITLE

SECTION_TITLES = {
    "project": BOARD_TITLES["project"],
    "summary": "Data summary",
    "roles": "Variable roles",
    "identifiers": IDENTIFIERS_TITLE,
    "context": "Release context and threshold",
    "masking": "Masking steps",
    "risk": "Re-identification risk before and after masking",
    "attribute": "Attribute disclosure: what a class reveals",
    "residual": BOARD_TITLES["residual"],
    "open_data": "Open data: risk if the file is a sample of a population",
    "utility": "Utility before and after masking",
    "information_loss": "Information loss (IL1s and eigenvalue measures, as sdcMicro defines them)",
    "charts": "Charts",
    "verdict": "Verdict",
    "sign_off": BOARD_TITLES["sign_off"],
}
