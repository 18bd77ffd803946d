#!/usr/bin/env python
"""Benchmark of reading files: the speed of a large CSV, and what crafted hostile files cost.

A script, not a test: it prints timings, peak memory and PASS/MISS against the target ("a
25 MB CSV of 1 million rows read in well under 5 s"), and never fails on them. It fails
(assertion error) only if the reader's table differs from the baseline's, a correctness bug.

(a) Speed, in this process, median of ``--repeat`` runs after a warm-up: a seeded CSV of
    ``--rows`` rows x 6 columns (ids, a 2-level and a 50-level text column, whole ages, doses
    with 3 decimals, 0/1 deaths; 28 MB at 1 million rows) read by

    - ``read_table`` (pyarrow's multithreaded CSV reader, every cell as text, each column's
      type inferred once);
    - baseline 1, the former reader: ``pandas.read_csv(dtype=str)`` then the same type
      inference (``natural_type``) on each column;
    - baseline 2, ``pandas.read_csv`` with its own type inference (what a user would write;
      it keeps leading zeros of codes only by accident and reads "NA" and "." differently,
      so only its time is compared).

    The tables of ``read_table`` and baseline 1 are asserted equal.

(b) ``--hostile``: each crafted file of ``tests/unit/hostile_inputs.py`` (the issue's attacks:
    a 414 KB Parquet file of 4 GB of text, a 611 KB workbook of 10 million cells, a 597 KB
    gzip of 600 MB, headers that claim 2^40 rows, ...) read in a child process by
    ``read_table`` and by pandas' own reader for its format (what the former reader called),
    each with its address space capped at ``--memory-cap`` GB and its CPU at ``--cpu-cap``
    seconds. Peak memory (``ru_maxrss`` of the child) and CPU time are printed side by side;
    "killed" means the cap stopped the baseline.

Run from the repository root::

    .venv/bin/python bench/bench_reading.py                       # 1 M rows, 3 repeats
    .venv/bin/python bench/bench_reading.py --rows 20000 --repeat 1   # quick (CI)
    .venv/bin/python bench/bench_reading.py --rows 100000 --hostile   # and the crafted files
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from harness import ROOT, machine, timed, verdict  # puts the repository on sys.path

sys.path.insert(0, str(ROOT / "tests" / "unit"))  # the crafted files live with their tests

import hostile_inputs as crafted
import pyarrow

from deid_core.io.columns import natural_type
from deid_core.io.reading import read_table

TARGET_SECONDS = 5.0
MB = 1024 * 1024


def synthetic_csv(rows: int, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "id": np.arange(rows),
            "sex": rng.choice(["F", "M"], rows),
            "age": rng.integers(0, 100, rows),
            "region": rng.choice([f"region_{i}" for i in range(50)], rows),
            "dose": np.round(rng.lognormal(0, 1, rows), 3),
            "death": rng.integers(0, 2, rows),
        }
    )
    return frame.to_csv(index=False).encode()


def former_reader(content: bytes) -> pd.DataFrame:
    """The reader this one replaced: pandas' C parser with every cell as text, then the same
    type inference per column."""
    cells = pd.read_csv(io.BytesIO(content), dtype=str, keep_default_na=False)
    return pd.DataFrame({name: natural_type(cells[name]) for name in cells.columns})


def bench_speed(rows: int, repeat: int) -> None:
    content = synthetic_csv(rows)
    print(f"(a) a CSV of {rows:,} rows x 6 columns, {len(content) / MB:.1f} MB")
    ours, tables = timed(lambda _: read_table(content, "big.csv").frame, repeat)
    former, former_tables = timed(lambda _: former_reader(content), repeat)
    plain, _ = timed(lambda _: pd.read_csv(io.BytesIO(content)), repeat)
    pd.testing.assert_frame_equal(tables[0], former_tables[0], check_dtype=False)
    print("    tables identical to the former reader's")
    print(f"    read_table (pyarrow, types inferred once): {ours:7.2f} s")
    print(f"    former reader (pandas, text, then types):  {former:7.2f} s  ({former / ours:.1f}x)")
    print(f"    pandas.read_csv with its own inference:    {plain:7.2f} s  ({plain / ours:.1f}x)")
    print(f"    target: at most {TARGET_SECONDS:g} s -> {verdict(ours <= TARGET_SECONDS)}")


_CHILD_OURS = """
import sys
sys.path.insert(0, {root!r})
from deid_core.errors import DeidError
from deid_core.io.reading import read_table
path = sys.argv[1]
try:
    table = read_table(open(path, "rb").read(), path.rsplit("/", 1)[-1])
    print("read", table.frame.shape, file=sys.stderr)
except DeidError as error:
    print("refused:", str(error).split(" (bound")[0][:70], file=sys.stderr)
"""

_CHILD_PANDAS = """
import bz2, gzip, io, sys, zipfile
import pandas as pd
path = sys.argv[1]
data = open(path, "rb").read()
name = path.rsplit("/", 1)[-1]
try:
    if name.endswith(".parquet"):
        frame = pd.read_parquet(io.BytesIO(data))
    elif name.endswith(".xlsx"):
        frame = pd.read_excel(io.BytesIO(data), header=None, dtype=object)
    elif name.endswith(".dta"):
        frame = pd.read_stata(io.BytesIO(data))
    elif name.endswith(".gz"):
        frame = pd.read_csv(io.BytesIO(gzip.decompress(data)), dtype=str)
    elif name.endswith(".zip"):
        frame = pd.read_csv(io.BytesIO(data), compression="zip", dtype=str)
    else:
        frame = pd.read_csv(io.BytesIO(data), dtype=str)
    frame = frame.astype("str")
    print("read", frame.shape, file=sys.stderr)
except MemoryError:
    print("killed: out of memory (the cap)", file=sys.stderr)
except Exception as error:
    print("failed:", type(error).__name__, file=sys.stderr)
"""

HOSTILE_FILES = [
    ("text.parquet", lambda: crafted.parquet_repeated_text(4_000_000, 1000)),
    ("rows.parquet", lambda: crafted.parquet_zeros(50_000_000)),
    ("cells.xlsx", lambda: crafted.xlsx_cells(1_000_000, 10)),
    ("far_cell.xlsx", crafted.xlsx_far_cell),
    ("zeros.csv.gz", lambda: crafted.gzip_zeros(600 * MB)),
    ("zeros.zip", lambda: crafted.zip_zeros(600 * MB)),
    ("claims_rows.dta", lambda: crafted.stata_claiming(2**40)),
    ("wide.csv", lambda: crafted.csv_wide(100_000)),
]


def _describe(run) -> str:
    if run.returncode < 0:
        return f"killed (signal {-run.returncode})"
    return run.last_line[:48] or f"exit {run.returncode}"


def bench_hostile(memory_gb: float, cpu_seconds: int) -> None:
    cap = int(memory_gb * 1024)
    print(
        f"(b) crafted files, each read in a child capped at {memory_gb:g} GB, {cpu_seconds} s CPU"
    )
    print(f"    {'file':<16} {'size':>8} | {'read_table':^34} | {'pandas (the former path)':^34}")
    with tempfile.TemporaryDirectory() as folder:
        for name, make in HOSTILE_FILES:
            path = Path(folder) / name
            path.write_bytes(make())
            runs = []
            for code in (_CHILD_OURS.format(root=str(ROOT)), _CHILD_PANDAS):
                run = crafted.run_limited(["-c", code, str(path)], cap, cpu_seconds)
                runs.append(f"{run.max_rss_mb:5.0f} MB {run.cpu_seconds:6.1f} s {_describe(run)}")
            size = f"{path.stat().st_size / 1024:.0f} KB"
            print(f"    {name:<16} {size:>8} | {runs[0]}")
            print(f"    {'':<16} {'':>8} | {'':34} | {runs[1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the speed CSV")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each reader")
    parser.add_argument("--hostile", action="store_true", help="also read the crafted files")
    parser.add_argument("--memory-cap", type=float, default=6.0, help="GB per child")
    parser.add_argument("--cpu-cap", type=int, default=180, help="CPU seconds per child")
    args = parser.parse_args()
    print(machine(np, pd, pyarrow))
    bench_speed(args.rows, args.repeat)
    if args.hostile:
        bench_hostile(args.memory_cap, args.cpu_cap)


if __name__ == "__main__":
    main()
