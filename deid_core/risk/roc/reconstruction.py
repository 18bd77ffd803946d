"""What an intruder who knows all but ``m`` records reconstructs from a published ROC curve
(Matthews & Harel 2013; the curve and its publication: :mod:`deid_core.risk.roc.curve`).

**The intruder's reconstruction.** The known records, grouped by distinct score
``v_1 > ... > v_L`` with ``a_j`` diseased and ``b_j`` healthy, are laid on the published path.
A published segment ``s`` (between consecutive points) holds a contiguous block of known groups
plus unknown records; with the full curve (one point per distinct score) a segment is a single
score, so it holds at most one known group and its other records are unknown records tied with
it, while a segment holding no known group is a new score strictly between two known ones. With
rounded points the cumulative counts ``TP_s`` and ``FP_s`` are only known to lie in the integer
intervals ``P (TPR_s -/+ 0.5 10^-d)`` (resp. ``N``). A *feasible configuration* is any
assignment of counts, known groups and unknown records to the segments that reproduces the
published curve; the true data are one of them. A forward-backward dynamic programme over the
states (point ``s``, known groups placed ``j``, ``TP_s``, ``FP_s``) finds every transition used
by some feasible configuration without enumerating them.

The ``m`` unknown records are reported in rank order (slot 1 = highest score; records with the
same score: diseased first), which is how the data owner pairs the reconstruction with the truth.
For slot ``i``:

- **status recovered**: the slot has the same status in every feasible configuration (then it
  is necessarily the true one);
- **location**: in a configuration the record is either tied with known score ``v_j`` or lies in
  the gap ``(v_{g+1}, v_g)`` between two consecutive known scores (``v_0 = +inf``,
  ``v_{L+1} = -inf``);
- **pinned to a single rank**: the location is the same in every feasible configuration, so its
  position among all ``n`` records is known (up to exact ties);
- **score interval**: the hull of its possible locations, ``(low, high)``: the open interval
  between the nearest known scores above and below, the degenerate ``[v, v]`` when the record is
  tied with a known score in every configuration (``tied``), with ``-inf``/``inf`` for an
  unbounded end (no known score below/above); an end coming from a tie is included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from deid_core.bounds import ROC_STATES
from deid_core.errors import DataError
from deid_core.risk.roc.curve import PublishedRoc, checked_scores, checked_status

#: Largest number of dynamic-programme cells the reconstruction will allocate.
MAX_STATES = ROC_STATES.limit


# --------------------------------------------------------------------------- reconstruction


@dataclass(frozen=True, eq=False)
class Reconstruction:
    """What the intruder learns about the ``m`` unknown records, in rank order (slot 0 = the
    highest score; equal scores: diseased first). See the module notes for the definitions.

    ``status[i]``: 1, 0, or -1 when not recovered; ``can_be_diseased``/``can_be_healthy``: the
    statuses slot i has in some feasible configuration; ``low``/``high``: its score interval
    (``-inf``/``inf`` = unbounded); ``pinned``: a single location in every configuration;
    ``tied``: tied with the known score ``low == high`` in every configuration.
    ``known_scores``: the distinct known scores ``v_1 > ... > v_L``.
    """

    status: np.ndarray
    can_be_diseased: np.ndarray
    can_be_healthy: np.ndarray
    low: np.ndarray
    high: np.ndarray
    pinned: np.ndarray
    tied: np.ndarray
    known_scores: np.ndarray

    @property
    def m(self) -> int:
        """Number of unknown records."""
        return len(self.status)

    @property
    def share_status_determined(self) -> float:
        return float(np.mean(self.status >= 0))

    @property
    def share_pinned(self) -> float:
        return float(np.mean(self.pinned))

    def to_frame(self) -> pd.DataFrame:
        """One row per unknown record (rank 1 = highest score)."""
        return pd.DataFrame(
            {
                "rank": np.arange(1, self.m + 1),
                "recovered_status": pd.array(
                    [None if s < 0 else int(s) for s in self.status], dtype="Int64"
                ),
                "interval_low": self.low,
                "interval_high": self.high,
                "width": self.high - self.low,
                "pinned": self.pinned,
                "tied_with_known": self.tied,
            }
        )


def reconstruct(published: PublishedRoc, known_scores: Any, known_status: Any) -> Reconstruction:
    """Reconstruct the records missing from ``known_scores``/``known_status`` using the
    ``published`` curve and its class sizes (see the module notes)."""
    scores = checked_scores(known_scores)
    labels = checked_status(known_status)
    if len(scores) != len(labels):
        raise DataError("ROC reconstruction: known scores and statuses differ in length.")
    if len(scores) == 0:
        raise DataError("ROC reconstruction: the intruder knows no records; nothing to align.")
    p, n = published.n_positive, published.n_negative
    missing_pos, missing_neg = p - int(labels.sum()), n - int(len(labels) - labels.sum())
    if missing_pos < 0 or missing_neg < 0:
        raise DataError(
            "ROC reconstruction: the known records hold more records of one class than the "
            "published curve."
        )
    if missing_pos + missing_neg == 0:
        raise DataError("ROC reconstruction: every record is known; nothing is missing.")
    distinct, inverse = np.unique(scores, return_inverse=True)
    a = np.bincount(inverse, weights=labels, minlength=len(distinct)).astype(np.int64)[::-1]
    b = np.bincount(inverse, minlength=len(distinct)).astype(np.int64)[::-1] - a
    single = published.all_thresholds
    can_d, can_h, code_min, code_max = _feasible_slots(
        published.count_bounds(), a, b, missing_pos, missing_neg, single
    )
    values = distinct[::-1].copy()
    above = np.concatenate([[np.inf], values])  # gap g lies below v_g (v_0 = +inf)
    below = np.concatenate([values, [-np.inf]])  # and above v_{g+1} (v_{L+1} = -inf)
    tied_value = np.concatenate([[np.nan], values])
    high = np.where(code_min % 2 == 1, tied_value[(code_min + 1) // 2], above[code_min // 2])
    low = np.where(code_max % 2 == 1, tied_value[(code_max + 1) // 2], below[code_max // 2])
    status = np.where(can_d & ~can_h, 1, np.where(can_h & ~can_d, 0, -1))
    pinned = code_min == code_max
    return Reconstruction(
        status=status,
        can_be_diseased=can_d,
        can_be_healthy=can_h,
        low=low,
        high=high,
        pinned=pinned,
        tied=pinned & (code_min % 2 == 1),
        known_scores=values,
    )


def _cum_or(x: np.ndarray) -> np.ndarray:
    """``out[j, T, F] = any(x[j, :T+1, :F+1])``."""
    return np.logical_or.accumulate(np.logical_or.accumulate(x, axis=1), axis=2)


def _reach(
    source: np.ndarray,
    origin: tuple[int, int],
    target: tuple[int, int, int, int],
    rows: np.ndarray,
    shift_a: np.ndarray,
    shift_b: np.ndarray,
    strict: bool,
) -> np.ndarray:
    """For each row r: ``out[r, T, F]`` = some ``(T', F') <= (T - shift_a[r], F - shift_b[r])``
    is set in ``source[rows[r]]`` (and, when ``strict``, ``(T', F') != (T, F)``); ``origin`` is
    the source window's lowest (T, F), ``target`` the target window as (T lo, F lo, width T,
    width F)."""
    cum = _cum_or(source)
    t = target[0] + np.arange(target[2])
    f = target[1] + np.arange(target[3])
    high_t, high_f = source.shape[1] - 1, source.shape[2] - 1

    def pick(dt: np.ndarray, df: np.ndarray) -> np.ndarray:
        it = t[None, :] - dt[:, None] - origin[0]
        jf = f[None, :] - df[:, None] - origin[1]
        value = cum[
            rows[:, None, None],
            np.clip(it, 0, high_t)[:, :, None],
            np.clip(jf, 0, high_f)[:, None, :],
        ]
        return value & (it >= 0)[:, :, None] & (jf >= 0)[:, None, :]

    if strict:
        return pick(shift_a + 1, shift_b) | pick(shift_a, shift_b + 1)
    return pick(shift_a, shift_b)


def _feasible_slots(
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    a: np.ndarray,
    b: np.ndarray,
    missing_pos: int,
    missing_neg: int,
    single: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Forward-backward dynamic programme over states (point s, groups placed j, TP, FP).

    Returns, per unknown slot: can be diseased, can be healthy, smallest and largest location
    code (``2g`` = gap g below v_g, ``2j - 1`` = tied with v_j) over all feasible
    configurations."""
    tp_lo, tp_hi, fp_lo, fp_hi = bounds
    segments = len(tp_lo) - 1
    groups = len(a)
    cum_a = np.concatenate([[0], np.cumsum(a)])
    cum_b = np.concatenate([[0], np.cumsum(b)])
    width_t, width_f = tp_hi - tp_lo + 1, fp_hi - fp_lo + 1
    cells = int(np.sum(width_t * width_f)) * (groups + 1)
    ROC_STATES.check(cells, "The ROC reconstruction of this curve and data needs")
    j_all = np.arange(groups + 1)

    def valid(s: int) -> np.ndarray:
        """States allowed by the class sizes: unknown counts so far within [0, missing]."""
        t = tp_lo[s] + np.arange(width_t[s])
        f = fp_lo[s] + np.arange(width_f[s])
        ut = t[None, :] - cum_a[:, None]
        uf = f[None, :] - cum_b[:, None]
        ok_t = (ut >= 0) & (ut <= missing_pos)
        ok_f = (uf >= 0) & (uf <= missing_neg)
        return ok_t[:, :, None] & ok_f[:, None, :]

    def blocks(s: int) -> range:
        """Numbers of known groups a segment ending at point s may hold (0, 1, ...)."""
        if single:
            return range(2)
        reach_t = np.searchsorted(cum_a, cum_a + (tp_hi[s] - tp_lo[s - 1]), side="right")
        reach_f = np.searchsorted(cum_b, cum_b + (fp_hi[s] - fp_lo[s - 1]), side="right")
        return range(int(np.max(np.minimum(reach_t, reach_f) - j_all)))

    forward = [np.zeros((groups + 1, 1, 1), dtype=bool)]
    forward[0][0, 0, 0] = True
    for s in range(1, segments + 1):
        out = np.zeros((groups + 1, width_t[s], width_f[s]), dtype=bool)
        target = (tp_lo[s], fp_lo[s], width_t[s], width_f[s])
        for delta in blocks(s):
            rows = j_all[: groups + 1 - delta]
            shift_a, shift_b = cum_a[rows + delta] - cum_a[rows], cum_b[rows + delta] - cum_b[rows]
            origin = (tp_lo[s - 1], fp_lo[s - 1])
            out[delta:] |= _reach(
                forward[s - 1], origin, target, rows, shift_a, shift_b, delta == 0
            )
        forward.append(out & valid(s))
    if not forward[segments][groups, 0, 0]:
        raise DataError(
            "ROC reconstruction: the known records cannot be laid on the published curve; "
            "they do not come from the data behind it."
        )

    m = missing_pos + missing_neg
    diseased = np.zeros(m + 1, dtype=np.int64)
    healthy = np.zeros(m + 1, dtype=np.int64)
    code_min = np.full(m, 2 * groups + 2, dtype=np.int64)
    code_max = np.full(m, -1, dtype=np.int64)
    backward = forward[segments] & False
    backward[groups, 0, 0] = True
    for s in range(segments, 0, -1):
        # Backward reach in flipped coordinates: (T, F) -> (-T, -F) turns ">=" into "<=".
        flipped = backward[:, ::-1, ::-1]
        prev = forward[s - 1]
        reach = np.zeros_like(prev)
        for delta in blocks(s):
            rows = j_all[delta:]
            shift_a, shift_b = cum_a[rows] - cum_a[rows - delta], cum_b[rows] - cum_b[rows - delta]
            target = (-tp_hi[s - 1], -fp_hi[s - 1], prev.shape[1], prev.shape[2])
            origin = (-tp_hi[s], -fp_hi[s])
            got = _reach(flipped, origin, target, rows, shift_a, shift_b, delta == 0)
            reach[: groups + 1 - delta] |= got[:, ::-1, ::-1]
        prev_ok = prev & reach
        _emit(
            prev_ok,
            backward,
            s,
            bounds,
            cum_a,
            cum_b,
            single,
            blocks(s),
            (diseased, healthy, code_min, code_max),
        )
        backward = prev_ok
    return (
        np.cumsum(diseased)[:m] > 0,
        np.cumsum(healthy)[:m] > 0,
        code_min,
        code_max,
    )


def _emit(
    prev_ok: np.ndarray,
    next_ok: np.ndarray,
    s: int,
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    cum_a: np.ndarray,
    cum_b: np.ndarray,
    single: bool,
    blocks: range,
    into: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """Record the unknown slots filled by every feasible transition from point s - 1 to s."""
    diseased, healthy, code_min, code_max = into
    tp_lo, _, fp_lo, _ = bounds
    tp = tp_lo[s - 1] + np.arange(prev_ok.shape[1])
    fp = fp_lo[s - 1] + np.arange(prev_ok.shape[2])
    t_next = tp_lo[s] + np.arange(next_ok.shape[1])
    f_next = fp_lo[s] + np.arange(next_ok.shape[2])
    gain_t = t_next[None, None, :, None] - tp[:, None, None, None]
    gain_f = f_next[None, None, None, :] - fp[None, :, None, None]
    live_prev = np.flatnonzero(prev_ok.any(axis=(1, 2)))
    live_next = set(np.flatnonzero(next_ok.any(axis=(1, 2))).tolist())
    for j in live_prev.tolist():
        for delta in blocks:
            if j + delta not in live_next:
                continue
            da, db = cum_a[j + delta] - cum_a[j], cum_b[j + delta] - cum_b[j]
            ok = prev_ok[j][:, :, None, None] & next_ok[j + delta][None, None, :, :]
            ok &= (gain_t >= da) & (gain_f >= db) & (gain_t + gain_f >= 1)
            if not ok.any():
                continue
            i_t, i_f, n_t, n_f = np.nonzero(ok)
            start = tp[i_t] + fp[i_f] - cum_a[j] - cum_b[j]
            x = t_next[n_t] - tp[i_t] - da
            y = f_next[n_f] - fp[i_f] - db
            end = start + x + y
            if single:
                np.add.at(diseased, start, 1)
                np.add.at(diseased, start + x, -1)
                np.add.at(healthy, start + x, 1)
                np.add.at(healthy, end, -1)
                low_code = high_code = 2 * j + delta
            else:
                np.add.at(diseased, start[x > 0], 1)
                np.add.at(diseased, end[x > 0], -1)
                np.add.at(healthy, start[y > 0], 1)
                np.add.at(healthy, end[y > 0], -1)
                low_code, high_code = 2 * j, 2 * (j + delta)
            used = end > start
            if not used.any():
                continue
            first, last = int(start[used].min()), int(end[used].max())
            cover = np.zeros(last - first + 1, dtype=np.int64)
            np.add.at(cover, start[used] - first, 1)
            np.add.at(cover, end[used] - first, -1)
            hit = np.flatnonzero(np.cumsum(cover)[:-1] > 0) + first
            code_min[hit] = np.minimum(code_min[hit], low_code)
            code_max[hit] = np.maximum(code_max[hit], high_code)
