"""Disclosure from a released ROC curve (Matthews & Harel 2013), and what mitigating it costs:
the curve and its publication (:mod:`~deid_core.risk.roc.curve`), the intruder's reconstruction
(:mod:`~deid_core.risk.roc.reconstruction`), and the audit that compares it with the truth
(:mod:`~deid_core.risk.roc.attack`)."""

from deid_core.risk.roc.attack import (
    RocAttackResult,
    RocUtility,
    audit_sample,
    known_records,
    mitigation_sweep,
    roc_attack,
    roc_utility,
)
from deid_core.risk.roc.curve import (
    PublishedRoc,
    RocCurve,
    empirical_roc,
    path_segments,
    publish_roc,
)
from deid_core.risk.roc.reconstruction import Reconstruction, reconstruct

__all__ = [
    "PublishedRoc",
    "Reconstruction",
    "RocAttackResult",
    "RocCurve",
    "RocUtility",
    "audit_sample",
    "empirical_roc",
    "known_records",
    "mitigation_sweep",
    "path_segments",
    "publish_roc",
    "reconstruct",
    "roc_attack",
    "roc_utility",
]
