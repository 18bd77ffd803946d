"""A reference of sdcMicro's ``kAnon`` / ``localSuppression`` heuristic (data-frame method, no
strata, no ``combs``, ``alpha = 1``), written from its published description and algorithm
(sdcMicro's ``R/localSuppression.R``, ``suppSubset``, and ``src/calcSuppInds.cpp``; Templ,
Kowarik & Meindl 2015, JSS 67(4), section 5.3), independently of the product's search.

1. ``importance``: by default the key variables ranked by their number of categories, fewest
   first (rank 1 = most important, suppressed last); the suppression order is the reverse,
   ties going to the later variable (a stable ascending sort, then reversed).
2. Reduction: records are grouped by their keys; from every group larger than k only its
   first k records (in file order) are kept for the search; the others are never suppressed.
3. Repeat until every kept record is compatible with at least k kept records (a missing value
   matching any value): take the records with ``fk < k`` in decreasing order of their
   individual risk (unweighted: ``1/fk``, ties in file order); for each, in turn, find the
   kept records at the smallest positive distance (the number of keys where both have a value
   and the values differ; a record with no positive distance below the number of keys is at
   that number), and suppress the first variable in the suppression order in which one of
   those records has a value different from this record's. Counts ``fk`` are recomputed only
   after every problem record of the pass has had one value suppressed.

The number of suppressed values is what sdcMicro reports as the total number of suppressions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def _compatible_counts(codes: np.ndarray) -> np.ndarray:
    """Brute force: for each record, the records agreeing with it wherever both have a value
    (NaN codes match anything)."""
    n = codes.shape[0]
    observed = ~np.isnan(codes)
    counts = np.empty(n, dtype=np.int64)
    for i in range(n):
        both = observed & observed[i]
        differ = both & (codes != codes[i])
        counts[i] = int((~differ.any(axis=1)).sum())
    return counts


def kanon_suppressions(frame: pd.DataFrame, keys: Sequence[str], k: int) -> pd.DataFrame:
    """The keys of ``frame`` after sdcMicro's kAnon heuristic (suppressed values as NaN)."""
    keys = list(keys)
    n, m = len(frame), len(keys)
    k = min(k, n)
    codes = np.column_stack(
        [pd.factorize(frame[c], use_na_sentinel=True)[0].astype(float) for c in keys]
    )
    codes[codes < 0] = np.nan
    # 1. importance and the order of suppression
    categories = [frame[c].nunique(dropna=True) for c in keys]
    ascending = sorted(range(m), key=lambda j: categories[j])
    importance = np.empty(m, dtype=int)
    for position, j in enumerate(ascending, start=1):
        importance[j] = position
    order = sorted(range(m), key=lambda j: (m + 1 - importance[j], j))
    # 2. reduction: keep the first k records of each larger group
    group = pd.Series(range(n)).groupby([frame[c].to_numpy() for c in keys], dropna=False)
    position_in_group = group.cumcount().to_numpy()
    kept = np.flatnonzero(position_in_group < k)
    mat = codes[kept].copy()
    # 3. the passes
    while True:
        fk = _compatible_counts(mat)
        problems = np.flatnonzero(fk < k)
        if problems.size == 0:
            break
        problems = problems[np.argsort(-(1.0 / fk[problems]), kind="stable")]
        for i in problems:
            observed = ~np.isnan(mat) & ~np.isnan(mat[i])
            distance = (observed & (mat != mat[i])).sum(axis=1)
            positive = distance[(distance > 0) & (distance < m)]
            min_distance = positive.min() if positive.size else m
            ids = np.flatnonzero(distance == min_distance)
            for column in order:
                if ids.size == 1 and ids[0] == i:
                    found = not np.isnan(mat[i, column])
                else:
                    others = mat[ids, column]
                    found = bool(np.any((others != mat[i, column]) & ~np.isnan(others)))
                    found = found and not np.isnan(mat[i, column])
                if found:
                    mat[i, column] = np.nan
                    break
    result = frame[keys].copy().astype(object)
    suppressed = np.zeros((n, m), dtype=bool)
    suppressed[kept] = np.isnan(mat) & ~np.isnan(codes[kept])
    for j, column in enumerate(keys):
        result.loc[suppressed[:, j], column] = np.nan
    return result
