"""Disclosure risk: equivalence classes (closed data), linkage to a source database, and
sample-to-population estimates (open data)."""

from deid_core.risk.classes import (
    K_LEVELS,
    MISSING_MODES,
    SMALL_CLASS_SIZE,
    EncodedColumn,
    RiskSummary,
    check_missing_mode,
    class_sizes_from_key,
    combine_codes,
    compatible_class_sizes,
    compatible_class_sizes_from_codes,
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
    masking_tolerance,
    truth_positions,
)
from deid_core.risk.matching import MatchShareResult, expected_correct_match_share
from deid_core.risk.population import (
    PopulationUniques,
    SampleRisk,
    estimate_population_uniques,
    population_uniqueness_curve,
    sample_risk,
)

__all__ = [
    "K_LEVELS",
    "MATCH_RULES",
    "MISSING_MODES",
    "SMALL_CLASS_SIZE",
    "EncodedColumn",
    "LinkageResult",
    "MatchShareResult",
    "PopulationUniques",
    "RiskSummary",
    "SampleRisk",
    "check_missing_mode",
    "class_sizes_from_key",
    "combine_codes",
    "compatible_class_sizes",
    "compatible_class_sizes_from_codes",
    "encode_column",
    "encode_columns",
    "equivalence_class_sizes",
    "estimate_population_uniques",
    "expected_correct_match_share",
    "link_to_source",
    "linkage_risk",
    "mask_source_like",
    "masking_tolerance",
    "population_uniqueness_curve",
    "risk_summary",
    "sample_risk",
    "summarise_class_sizes",
    "truth_positions",
]
