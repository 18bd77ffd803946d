"""Risk against utility: the R-U map of one swept parameter with its frontier, and risk-utility
profiles against a masking parameter.

:mod:`~deid_core.tradeoff.rumap` (sweeps, the Pareto frontier, Cologne's fitted curve),
:mod:`~deid_core.tradeoff.profile` (profiles per form of masking, Zhou et al. 2010).
"""
