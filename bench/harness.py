"""What every benchmark script shares: the repository on ``sys.path`` (a script runs from the
repository root without installing anything), timing by the median of repeated runs, the line
that says on what machine the figures were taken, and PASS/MISS for a target.

Timings are printed, never enforced: a target is reported as PASS or MISS, and a script fails
only when two implementations disagree (a correctness bug).
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def timed(
    run: Callable[[int], Any], repeat: int, warmup: int | None = 0
) -> tuple[float, list[Any]]:
    """Median wall time in seconds of ``run(i)`` for i in 0..repeat-1, and the results in order.

    ``warmup``: an index to run once, untimed, first (one-off costs such as lazy imports and
    first-touch memory are not what is measured); None for no warm-up. Garbage is collected
    before each timed run.
    """
    if warmup is not None:
        run(warmup)
    times, results = [], []
    for i in range(repeat):
        gc.collect()
        start = time.perf_counter()
        results.append(run(i))
        times.append(time.perf_counter() - start)
    return statistics.median(times), results


def load_average() -> str:
    """The 1-minute load average (other processes make the timings noisy), if known."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):
        return "unknown"


def machine(*libraries: ModuleType) -> str:
    """Python and the ``libraries``' versions, the CPUs and the load: what the figures depend on."""
    versions = [f"python {platform.python_version()}"]
    versions += [f"{library.__name__} {library.__version__}" for library in libraries]
    return (
        f"{', '.join(versions)}, {os.cpu_count()} CPU(s), {platform.machine()}, "
        f"load average {load_average()}"
    )


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def old_tree(commit: str, into: Path, script: Path) -> Path | None:
    """``commit``'s deid_core and bench extracted into ``into``, with the bench ``script`` (this
    tree's) copied beside them as ``<name>_now.py``, to time the old code with today's script
    in a subprocess; None when git or the commit is unavailable (e.g. a shallow clone)."""
    archive = into / "old.tar"
    try:
        with archive.open("wb") as out:
            subprocess.run(
                ["git", "-C", str(ROOT), "archive", commit, "deid_core", "bench"],
                stdout=out,
                stderr=subprocess.DEVNULL,
                check=True,
            )
    except (OSError, subprocess.CalledProcessError):
        return None
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    copy = into / "bench" / f"{script.stem}_now.py"
    copy.write_text(script.read_text())
    return copy
