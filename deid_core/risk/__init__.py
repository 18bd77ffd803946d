"""Disclosure risk: equivalence classes (closed data) and linkage to a source database."""

from deid_core.risk.classes import (
    K_LEVELS,
    SMALL_CLASS_SIZE,
    EncodedColumn,
    RiskSummary,
    class_sizes_from_key,
    combine_codes,
    encode_column,
    encode_columns,
    equivalence_class_sizes,
    risk_summary,
    summarise_class_sizes,
)
from deid_core.risk.linkage import (
    MATCH_RULES,
    LinkageResult,
    link_to_source,
    linkage_risk,
    mask_source_like,
    truth_positions,
)

__all__ = [
    "K_LEVELS",
    "MATCH_RULES",
    "SMALL_CLASS_SIZE",
    "EncodedColumn",
    "LinkageResult",
    "RiskSummary",
    "class_sizes_from_key",
    "combine_codes",
    "encode_column",
    "encode_columns",
    "equivalence_class_sizes",
    "link_to_source",
    "linkage_risk",
    "mask_source_like",
    "risk_summary",
    "summarise_class_sizes",
    "truth_positions",
]
