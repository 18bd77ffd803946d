#!/usr/bin/env python
"""Benchmark of the engines on a synthetic cancer registry: in memory, DuckDB, Spark.

A script, not a test: it prints a table of times and peak memory and never fails on them. It
fails (assertion error) only if two engines give different figures, which is a correctness bug.

Data: a seeded synthetic registry generated as Parquet on the fly in a temporary folder
(files of at most 5 million rows; removed at the end, never committed): sex, age in years, 34
registries (text), 78 sites, a diagnosis date (1995-2019), 3,000 counties (FIPS-like numbers),
stage (missing for 5%) and a sampling weight.

The query, the same for every engine: the recipe generalises age to 5-year groups and the
diagnosis date to its year; the quasi-identifiers are sex, age, registry, site and year of
diagnosis; the figures are the closed-data risk summary (missing values as a
category), the class-size distribution and the open-data figures from the weights. Each engine
runs in a child process of its own (its peak resident memory, ``ru_maxrss``, is measured
alone; Spark's Java process is not counted, its driver memory is capped at 2 GB):

- memory: the Parquet folder read into pandas, then :class:`deid_core.workspace.Workspace`
  (only up to ``--memory-max-rows``: beyond, the data do not fit a 4 GB budget);
- duckdb: :class:`deid_core.engines.DuckDBEngine` (memory limit 2 GB, spilling to a temporary
  folder), the figures from its cells;
- spark: :class:`deid_core.engines.SparkEngine` on ``local[2]``, the figures from its cells
  (session start-up timed apart).

Run from the repository root::

    .venv/bin/python bench/bench_registry.py                       # 4.67 M and 50 M rows
    .venv/bin/python bench/bench_registry.py --rows 200000 --engines memory duckdb  # quick
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from harness import load_average, machine, verdict  # puts the repository on sys.path

from deid_core.masking import DateReduce, IntervalGroup
from deid_core.recipe import Recipe, Roles

QIS = ("sex", "age", "registry", "site", "diagnosed")
CHUNK_ROWS = 5_000_000
TARGET_ROWS = 50_000_000
TARGET_SECONDS = 120.0
TARGET_GB = 4.0


def recipe() -> Recipe:
    return Recipe(
        Roles(quasi_identifiers=QIS, weight="weight"),
        (IntervalGroup("age", width=5, release="label"), DateReduce("diagnosed", to="year")),
    )


def write_registry(folder: Path, n_rows: int, seed: int) -> None:
    """The registry as Parquet files of at most CHUNK_ROWS rows each."""
    rng = np.random.default_rng(seed)
    registries = np.array([f"registry {i:02d}" for i in range(34)])
    counties = 3000
    first = np.sort(rng.choice(np.arange(1, counties), 33, replace=False))
    county_registry = np.searchsorted(first, np.arange(counties), side="right")
    state = rng.permutation(np.arange(1, 57))[:34]
    popularity = 1.0 / np.arange(1, counties + 1) ** 0.9
    popularity = rng.permutation(popularity / popularity.sum())
    for part, start in enumerate(range(0, n_rows, CHUNK_ROWS)):
        n = min(CHUNK_ROWS, n_rows - start)
        county = rng.choice(counties, n, p=popularity)
        age = np.clip(np.rint(rng.normal(64, 14, n)), 0, 100).astype(np.int64)
        stage = rng.choice(4, n, p=[0.4, 0.3, 0.18, 0.12]).astype(float)
        stage[rng.random(n) < 0.05] = np.nan
        day = rng.integers(0, 25 * 365, n).astype("timedelta64[D]")
        table = pa.table(
            {
                "sex": pa.array(np.where(rng.random(n) < 0.52, "F", "M")),
                "age": age,
                "registry": pa.array(registries[county_registry[county]]),
                "site": rng.choice(78, n, p=_zipf(rng, 78)),
                "diagnosed": pa.array(np.datetime64("1995-01-01") + day),
                "county": state[county_registry[county]] * 1000 + county,
                "stage": pa.array(stage, from_pandas=True),
                "weight": rng.choice([1.0, 2.0, 4.0, 8.0], n, p=[0.4, 0.3, 0.2, 0.1]),
            }
        )
        pq.write_table(table, folder / f"part-{part:03d}.parquet", row_group_size=1_000_000)


def _zipf(rng: np.random.Generator, levels: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, levels + 1) ** 1.1
    return rng.permutation(weights / weights.sum())


def folder_gb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.iterdir()) / 1024**3


# --------------------------------------------------------------------------- one engine
def run_engine(engine: str, folder: Path) -> dict:
    """The figures on one engine, with the seconds it took (in this process)."""
    from deid_core.engines import (
        DuckDBEngine,
        SparkEngine,
        distribution_from_cells,
        risk_from_cells,
        sample_risk_from_cells,
    )
    from deid_core.engines.sources import read_parquet_frame
    from deid_core.risk.classes import class_size_distribution
    from deid_core.workspace import Workspace

    r = recipe()
    out: dict = {}
    start = time.perf_counter()
    if engine == "memory":
        frame = read_parquet_frame(folder, [*QIS, "weight"])
        out["read_s"] = time.perf_counter() - start
        workspace = Workspace(frame)
        risk = workspace.risk(r)
        figures = {
            "risk": risk.to_dict(),
            "distribution": class_size_distribution(risk.class_size).to_dict("list"),
            "open": workspace.sample_risk(r).to_dict(),
        }
    else:
        if engine == "spark":
            from deid_core.engines.sql import spark_session

            spark_session()
            out["startup_s"] = time.perf_counter() - start
            start = time.perf_counter()
            source = SparkEngine(path=folder)
        else:
            source = DuckDBEngine(folder)
        with source:
            crosstab = source.crosstab(QIS, {c: r.steps_for(c) for c in QIS}, "weight")
        out["query_s"] = time.perf_counter() - start
        out["cells"] = crosstab.n_cells
        figures = {
            "risk": risk_from_cells(crosstab).to_dict(),
            "distribution": distribution_from_cells(crosstab).to_dict("list"),
            "open": sample_risk_from_cells(crosstab).to_dict(),
        }
    out["seconds"] = time.perf_counter() - start
    out["figures"] = figures
    return out


def measure(engine: str, folder: Path) -> dict:
    """Run one engine in a child process; its result and peak resident memory."""
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        child = subprocess.Popen(
            [sys.executable, __file__, "--worker", engine, str(folder), result.name]
        )
        _, status, usage = os.wait4(child.pid, 0)
        if status != 0:
            return {"error": f"exit status {status}"}
        out = json.loads(Path(result.name).read_text())
    out["peak_gb"] = usage.ru_maxrss / 1024**2
    return out


def same_figures(a: dict, b: dict) -> bool:
    """Counts equal; floating figures to 1e-12 relative (order of summation)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_figures(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_figures(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return math.isclose(a, b, rel_tol=1e-12)
    return a == b


# --------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[4_670_000, 50_000_000])
    parser.add_argument("--engines", nargs="+", default=["memory", "duckdb", "spark"])
    parser.add_argument("--memory-max-rows", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=20260501)
    parser.add_argument("--dir", help="where to write the temporary Parquet (default: tmp)")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        engine, folder, result = args.worker
        Path(result).write_text(json.dumps(run_engine(engine, Path(folder))))
        return 0

    import pandas as pd

    print("Registry benchmark: the engines on a synthetic registry written as Parquet")
    print(f"{machine(np, pd)}")
    print(f"quasi-identifiers: {', '.join(QIS)}; {'; '.join(recipe().describe())}; weights")
    rows_out = []
    for n_rows in args.rows:
        folder = Path(tempfile.mkdtemp(prefix="deid-registry-", dir=args.dir))
        try:
            start = time.perf_counter()
            write_registry(folder, n_rows, args.seed)
            print(
                f"\n{n_rows:,} rows: Parquet written in {time.perf_counter() - start:.0f} s "
                f"({folder_gb(folder):.2f} GB, {len(list(folder.iterdir()))} files; disk free "
                f"{shutil.disk_usage(folder).free / 1024**3:.0f} GB)"
            )
            results = {}
            for engine in args.engines:
                if engine == "memory" and n_rows > args.memory_max_rows:
                    results[engine] = {"skipped": f"over {args.memory_max_rows:,} rows"}
                    continue
                results[engine] = measure(engine, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        done = {e: r for e, r in results.items() if "figures" in r}
        reference = next(iter(done.values()), None)
        for engine, result in done.items():
            assert same_figures(reference["figures"], result["figures"]), (
                f"{engine} differs from {next(iter(done))} at {n_rows:,} rows"
            )
        if reference:
            risk = reference["figures"]["risk"]
            print(
                f"  figures equal on {', '.join(done)}: k {risk['k']}, uniques {risk['uniques']:,}"
                f", average risk {risk['average_risk']:.4f}, "
                f"{next((r['cells'] for r in done.values() if 'cells' in r), 0):,} cells returned"
            )
        rows_out.append((n_rows, results))

    print()
    print(f"{'rows':>12} {'engine':<8} {'seconds':>9} {'peak GB':>8}  notes")
    for n_rows, results in rows_out:
        for engine, r in results.items():
            if "figures" not in r:
                print(f"{n_rows:>12,} {engine:<8} {'n/a':>9} {'n/a':>8}  "
                      f"{r.get('skipped') or r.get('error')}")  # fmt: skip
                continue
            notes = []
            if "read_s" in r:
                notes.append(f"of which reading {r['read_s']:.1f} s")
            if "startup_s" in r:
                notes.append(f"plus session start {r['startup_s']:.1f} s")
            if "cells" in r:
                notes.append(f"{r['cells']:,} cells returned")
            print(f"{n_rows:>12,} {engine:<8} {r['seconds']:>9.1f} {r['peak_gb']:>8.2f}  "
                  f"{'; '.join(notes)}")  # fmt: skip
    print()
    print("targets (printed only, never enforced):")
    for n_rows, results in rows_out:
        duck = results.get("duckdb", {})
        if n_rows == TARGET_ROWS and "figures" in duck:
            ok = duck["seconds"] <= TARGET_SECONDS and duck["peak_gb"] <= TARGET_GB
            print(
                f"  {n_rows:,} rows through DuckDB in at most {TARGET_SECONDS:g} s and "
                f"{TARGET_GB:g} GB: {duck['seconds']:.0f} s, {duck['peak_gb']:.2f} GB "
                f"{verdict(ok)}"
            )
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
