"""Disclosure from a released ROC curve (Matthews & Harel 2013), and what mitigating it costs."""

from deid_core.risk.roc.reconstruction import (
    PublishedRoc,
    Reconstruction,
    RocAttackResult,
    RocCurve,
    RocUtility,
    empirical_roc,
    known_records,
    mitigation_sweep,
    path_segments,
    publish_roc,
    reconstruct,
    roc_attack,
    roc_utility,
)

__all__ = [
    "PublishedRoc",
    "Reconstruction",
    "RocAttackResult",
    "RocCurve",
    "RocUtility",
    "empirical_roc",
    "known_records",
    "mitigation_sweep",
    "path_segments",
    "publish_roc",
    "reconstruct",
    "roc_attack",
    "roc_utility",
]
