#!/usr/bin/env python
"""Benchmark of kernel smoothing (``deid_core.masking.smoothing``).

A script, not a test: it prints timings and never fails on them. It only fails (assertion
error) if our results differ from the plain numpy computation, which is a correctness bug.

The issue's targets: "Dense weights for up to a few thousand points (2,000 points in under
50 ms); neighbour queries with a compact kernel beyond that (100,000 points in a few seconds).
Bench both against a plain dense numpy computation where it fits in memory, in the same run."

What it measures, in one process, as the median of ``--repeat`` runs (``time.perf_counter``,
after one untimed warm-up), smoothing 3 variables (exposure, outcome, covariate) at once:

(a) dense kernels on ``--n-dense`` points (default 2,000) in the unit square: the Gaussian
    kernel (rho = 0.5, bandwidth 0.1 SD) and the exponential kernel (bandwidth 0.05), our
    ``smooth_values`` against a plain dense numpy computation (broadcast differences, full
    n x n weights, ``W @ Z / W.sum(1)``);
(b) the compact Epanechnikov kernel on ``--n-compact`` points (default 100,000), the bandwidth
    chosen for about 30 neighbours per point, and the same kernel on ``--n-baseline`` points
    (default 20,000) against the plain dense numpy computation (n x n distances, in place).

Run from the repository root::

    .venv/bin/python bench/bench_smoothing.py            # full sizes (about 30 s, 7 GB RAM peak)
    .venv/bin/python bench/bench_smoothing.py --quick    # small sizes (CI)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import scipy
from harness import load_average, machine, timed  # puts the repository on sys.path

from deid_core.masking import smooth_values

NEIGHBOURS = 30


def median_ms(run: Callable[[], np.ndarray], repeat: int) -> tuple[float, np.ndarray]:
    """:func:`harness.timed` of ``run()`` in ms (after one warm-up), and its last result."""
    seconds, results = timed(lambda _i: run(), repeat)
    return 1000.0 * seconds, results[-1]


def plain_gaussian(coords: np.ndarray, values: np.ndarray, lam: float, rho: float) -> np.ndarray:
    """The Gaussian kernel written directly: standardised differences, Mahalanobis form."""
    u, v = (coords / coords.std(axis=0, ddof=1)).T
    du = u[:, None] - u[None, :]
    dv = v[:, None] - v[None, :]
    q = (du**2 - 2 * rho * du * dv + dv**2) / (1 - rho**2)
    w = np.exp(-q / (2 * lam**2))
    return w @ values / w.sum(axis=1, keepdims=True)


def plain_exponential(coords: np.ndarray, values: np.ndarray, lam: float) -> np.ndarray:
    diff = coords[:, None, :] - coords[None, :, :]
    w = np.exp(-np.sqrt((diff**2).sum(axis=2)) / lam)
    return w @ values / w.sum(axis=1, keepdims=True)


def plain_epanechnikov(coords: np.ndarray, values: np.ndarray, lam: float) -> np.ndarray:
    """All n x n squared distances, in place to keep two n x n arrays at most."""
    w = np.subtract.outer(coords[:, 0], coords[:, 0])
    w *= w
    for column in range(1, coords.shape[1]):
        other = np.subtract.outer(coords[:, column], coords[:, column])
        other *= other
        w += other
        del other
    w *= -1.0 / lam**2
    w += 1.0
    np.maximum(w, 0.0, out=w)
    return w @ values / w.sum(axis=1, keepdims=True)


def data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, n])
    coords = rng.uniform(size=(n, 2))
    dose = rng.gamma(2.0, 0.5, size=n) * (1 + coords[:, 0])
    outcome = (rng.uniform(size=n) < 0.05 + 0.02 * dose).astype(float)
    age = rng.integers(20, 80, size=n).astype(float)
    return coords, np.column_stack([dose, outcome, age])


def check(ours: np.ndarray, plain: np.ndarray) -> float:
    np.testing.assert_allclose(ours, plain, rtol=1e-9, atol=1e-12)
    return float(np.max(np.abs(ours - plain)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (300 / 3,000 / 1,000)")
    parser.add_argument("--n-dense", type=int, default=2_000)
    parser.add_argument("--n-compact", type=int, default=100_000)
    parser.add_argument("--n-baseline", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20100601)
    args = parser.parse_args(argv)
    if args.quick:
        args.n_dense, args.n_compact, args.n_baseline, args.repeat = 300, 3_000, 1_000, 2
    big_repeat = max(1, min(args.repeat, 3))

    print("Kernel smoothing benchmark: 3 variables (exposure, outcome, covariate) smoothed at once")
    print(machine(np, scipy))

    print(f"\n(a) dense kernels, {args.n_dense:,} points (median of {args.repeat}, ms)")
    print(f"    {'kernel':40s} {'ours':>9s} {'plain':>9s} {'plain/ours':>11s}  max |diff|")
    coords, values = data(args.n_dense, args.seed)
    cases = [
        (
            "gaussian, rho 0.5, bandwidth 0.1 SD",
            lambda: smooth_values(values, coords, kernel="gaussian", bandwidth=0.1, rho=0.5),
            lambda: plain_gaussian(coords, values, 0.1, 0.5),
        ),
        (
            "exponential, bandwidth 0.05",
            lambda: smooth_values(values, coords, kernel="exponential", bandwidth=0.05),
            lambda: plain_exponential(coords, values, 0.05),
        ),
    ]
    dense_times = []
    for name, ours, plain in cases:
        ours_ms, ours_out = median_ms(ours, args.repeat)
        plain_ms, plain_out = median_ms(plain, args.repeat)
        gap = check(ours_out, plain_out)
        dense_times.append(ours_ms)
        print(
            f"    {name:40s} {ours_ms:9.1f} {plain_ms:9.1f} {plain_ms / ours_ms:10.1f}x  {gap:.1e}"
        )

    print("\n(b) compact Epanechnikov kernel, about 30 neighbours per point (ms)")
    print(f"    {'points':40s} {'ours':>9s} {'plain':>9s} {'plain/ours':>11s}  max |diff|")
    coords, values = data(args.n_baseline, args.seed)
    lam = float(np.sqrt(NEIGHBOURS / (np.pi * args.n_baseline)))
    ours_ms, ours_out = median_ms(
        lambda: smooth_values(values, coords, kernel="epanechnikov", bandwidth=lam), big_repeat
    )
    plain_ms, plain_out = median_ms(lambda: plain_epanechnikov(coords, values, lam), 1)
    gap = check(ours_out, plain_out)
    del plain_out
    print(
        f"    {f'{args.n_baseline:,} (bandwidth {lam:.4f})':40s} {ours_ms:9.1f} {plain_ms:9.1f} "
        f"{plain_ms / ours_ms:10.1f}x  {gap:.1e}"
    )
    coords, values = data(args.n_compact, args.seed)
    lam = float(np.sqrt(NEIGHBOURS / (np.pi * args.n_compact)))
    compact_ms, _ = median_ms(
        lambda: smooth_values(values, coords, kernel="epanechnikov", bandwidth=lam), big_repeat
    )
    print(
        f"    {f'{args.n_compact:,} (bandwidth {lam:.4f})':40s} {compact_ms:9.1f} "
        f"{'n/a':>9s}  (the n x n weights would take {args.n_compact**2 * 8 / 1e9:.3g} GB)"
    )

    print("\ntargets (printed only, never enforced):")
    verdict = "PASS" if max(dense_times) < 50 else "MISS"
    print(
        f"  {args.n_dense:,} points dense in under 50 ms: worst {max(dense_times):.1f} ms {verdict}"
    )
    verdict = "PASS" if compact_ms < 5000 else "MISS"
    print(
        f"  {args.n_compact:,} points compact in a few seconds: {compact_ms / 1000:.2f} s {verdict}"
    )
    print("correctness: every result equals the plain dense numpy computation (rtol 1e-9)")
    print(f"load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
