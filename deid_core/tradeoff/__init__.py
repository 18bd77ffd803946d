"""Risk against utility: the R-U map of one swept parameter and its frontier
(:mod:`~deid_core.tradeoff.rumap`), and risk-utility profiles against a masking parameter,
per form of masking (:mod:`~deid_core.tradeoff.profile`)."""
