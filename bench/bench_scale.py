#!/usr/bin/env python
"""Scale benchmark: the dashboard's live path at 16k, 500k, 1M and 4.67M records.

A script, not a test: it prints timings and never fails on them. It fails (assertion error)
only if the dashboard's figures differ from the baselines' (a correctness bug).

For each size, in a fresh process (so peak memory is that size's own), the data are generated
on the fly (a synthetic cohort of 6 columns, as an upload of ``synthetic_cohort`` without its
id; never written to the repository) and serialised to CSV in memory. Then, in one process:

**The dashboard** (``streamlit.testing.v1.AppTest`` driving ``app.py``, the real pages and
background jobs; server side, without the browser's rendering):

- *upload to figures*: the app's reader on the CSV bytes (``dashboard.upload.read_upload``),
  then the first run of the Data page, whose sidebar strip shows the risk figures (the model
  is fitted in the background);
- *roles applied*: the Data page's roles form submitted (one quasi-identifier fewer);
- *slider move*: the Mask page's interval width of ``age_at_end`` moved to a new value;
  *to figures* is the rerun that draws the new risk figures, *settled* adds the background
  work (model fit, the map's sweep) and the page's final rerun;
- *method switch*: ``age_at_exposure`` switched from interval grouping to top coding (at its
  99th percentile, the page's default);
- *first noise figures*: the exposure switched to uniform noise (100 replicates): the time
  until the first replicates' running mean is there to show (the page shows it at its next
  poll, at most 0.5 s later);
- *peak memory*: the process's resident memory, sampled every 20 ms, at its highest during
  the dashboard's steps, and after ``--moves`` further slider moves (it must not grow).

**Baselines**, as a competent user writes them, in the same process:

- *pandas*: ``read_csv(engine="pyarrow")``, then ``groupby(quasi-identifiers,
  dropna=False).transform("size")`` for the class sizes and the risk summary; a slider move
  or method switch re-masks the column with a vectorised expression and groups again; the
  first noise figure is one replicate fitted by statsmodels' ``Logit`` (Newton, started from
  the original fit);
- *DuckDB*: ``read_csv`` of the same CSV (a temporary file, removed at exit), then one
  ``GROUP BY`` query over the masked expressions giving the class-size summary (no model
  fitting in SQL, so no noise baseline).

Each dashboard figure is checked against the pandas figures on the same masked data (k,
uniques, number of classes).

Run from the repository root::

    .venv/bin/python bench/bench_scale.py                        # 16k, 500k, 1M, 4.67M
    .venv/bin/python bench/bench_scale.py --rows 16000 200000    # chosen sizes
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from harness import ROOT, load_average, machine, verdict  # puts the repository on sys.path

SIZES = (16_000, 500_000, 1_000_000, 4_670_000)
TARGETS_AT = 1_000_000
TARGET_MOVE_FIGURES = 0.300
TARGET_MOVE_SETTLED = 0.600
TARGET_SWITCH = 1.0
TARGET_NOISE = 1.0
TARGET_ROLES = 1.0
TARGET_MEMORY_MB = 1536
SEED = 20260101
QIS = ("city", "sex", "age_at_exposure", "age_at_end")
TIMEOUT = 1800


# --------------------------------------------------------------------------- memory
def rss_mb() -> float:
    """This process's resident memory (Linux /proc; else the peak so far)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class PeakMemory:
    """The highest resident memory seen while it runs (sampled every 20 ms)."""

    def __init__(self) -> None:
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_mb())

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb())


class FigureClock:
    """When the page sends its first "Average risk" metric after :meth:`start`: the moment
    the new risk figures leave the server (a browser draws them a few milliseconds later),
    before the rest of the page (the map, the preview, the sidebar) is drawn."""

    def __init__(self) -> None:
        from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

        self.started = self.seen = 0.0
        ForwardMsgQueue.on_before_enqueue_msg(self._message)

    def _message(self, msg: Any) -> None:
        if self.seen or not msg.HasField("delta"):
            return
        element = msg.delta.new_element
        if element.WhichOneof("type") == "metric" and element.metric.label == "Average risk":
            self.seen = time.perf_counter()

    def start(self) -> None:
        self.started, self.seen = time.perf_counter(), 0.0

    def elapsed(self) -> float:
        assert self.seen, "no risk figure was sent"
        return self.seen - self.started


def clock(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


# --------------------------------------------------------------------------- data
def make_csv(n_rows: int) -> bytes:
    from deid_core.datasets.cohort import synthetic_cohort

    frame = synthetic_cohort(n=n_rows, seed=SEED).drop(columns=["person_id"])
    return frame.to_csv(index=False).encode()


def summary_of_sizes(sizes: np.ndarray, n_classes: int) -> dict[str, float]:
    return {
        "k": int(sizes.min()),
        "uniques": int((sizes == 1).sum()),
        "classes": int(n_classes),
        "average_risk": n_classes / sizes.size,
    }


# --------------------------------------------------------------------------- baselines
def interval_midpoints(values: pd.Series, width: float) -> pd.Series:
    return np.floor(values / width) * width + width / 2


def pandas_summary(frame: pd.DataFrame) -> dict[str, float]:
    groups = frame.groupby(list(QIS), dropna=False, sort=False)
    sizes = groups[QIS[0]].transform("size").to_numpy()
    return summary_of_sizes(sizes, groups.ngroups)


def top_cut(frame: pd.DataFrame) -> float:
    """The dashboard's default top cut of ``age_at_exposure``: its 99th percentile, 3
    significant digits."""
    return float(f"{np.quantile(frame['age_at_exposure'].dropna(), 0.99):.3g}")


def pandas_masked(frame: pd.DataFrame, end_width: float, top: float | None) -> pd.DataFrame:
    """Ages at the end grouped by ``end_width``; ages at exposure in 5-year groups, or (the
    method switch) top-coded at ``top``."""
    masked = frame.assign(age_at_end=interval_midpoints(frame["age_at_end"], end_width))
    if top is not None:
        masked["age_at_exposure"] = masked["age_at_exposure"].clip(upper=top)
    else:
        masked["age_at_exposure"] = interval_midpoints(masked["age_at_exposure"], 5.0)
    return masked


def duckdb_summary(con: Any, end_width: float, top: float | None) -> dict[str, float]:
    exposure = (
        f"least(age_at_exposure, {top})"
        if top is not None
        else "floor(age_at_exposure / 5) * 5 + 2.5"
    )
    end = f"floor(age_at_end / {end_width}) * {end_width} + {end_width / 2}"
    row = con.execute(
        f"""
        SELECT min(f), sum(CASE WHEN f = 1 THEN 1 ELSE 0 END), count(*), sum(f)
        FROM (SELECT count(*) AS f FROM cohort GROUP BY city, sex, {exposure}, {end})
        """
    ).fetchone()
    return {"k": int(row[0]), "uniques": int(row[1]), "classes": int(row[2]),
            "average_risk": row[2] / row[3]}  # fmt: skip


def statsmodels_replicate(frame: pd.DataFrame, start: np.ndarray) -> float:
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    dose = frame["stomach_dose_gy"].to_numpy() + rng.uniform(-0.05, 0.05, len(frame))
    X = sm.add_constant(np.clip(dose, 0, None))
    fit = sm.Logit(frame["stomach_cancer"].to_numpy(), X).fit(
        method="newton", start_params=start, disp=0
    )
    return float(fit.params[1])


def pandas_baselines(content: bytes, widths: list[float]) -> dict[str, Any]:
    import statsmodels.api as sm

    out: dict[str, Any] = {}
    with PeakMemory() as memory:
        t_upload, frame = clock(lambda: pd.read_csv(io.BytesIO(content), engine="pyarrow"))
        t_first, _ = clock(lambda: pandas_summary(pandas_masked(frame, 5.0, None)))
        out["pandas_upload"] = t_upload + t_first
        moves = [clock(lambda w=w: pandas_summary(pandas_masked(frame, w, None))) for w in widths]
        out["pandas_move"] = statistics.median(t for t, _ in moves)
        out["pandas_figures"] = {w: s for w, (_, s) in zip(widths, moves, strict=True)}
        out["top"] = top = top_cut(frame)
        out["pandas_switch"], out["pandas_switch_figures"] = clock(
            lambda: pandas_summary(pandas_masked(frame, widths[-1], top))
        )
        y = frame["stomach_cancer"].to_numpy()
        original = sm.Logit(y, sm.add_constant(frame["stomach_dose_gy"].to_numpy())).fit(
            method="newton", disp=0
        )
        out["pandas_noise"], _ = clock(lambda: statsmodels_replicate(frame, original.params))
    out["pandas_memory"] = memory.peak
    return out


def duckdb_baselines(content: bytes, widths: list[float], top: float) -> dict[str, Any]:
    import duckdb

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cohort.csv"
        path.write_bytes(content)
        with PeakMemory() as memory:
            con = duckdb.connect()
            start = time.perf_counter()
            con.execute(f"CREATE TABLE cohort AS SELECT * FROM read_csv('{path}')")
            duckdb_summary(con, 5.0, None)
            out["duckdb_upload"] = time.perf_counter() - start
            moves = [clock(lambda w=w: duckdb_summary(con, w, None)) for w in widths]
            out["duckdb_move"] = statistics.median(t for t, _ in moves)
            out["duckdb_figures"] = {w: s for w, (_, s) in zip(widths, moves, strict=True)}
            out["duckdb_switch"], out["duckdb_switch_figures"] = clock(
                lambda: duckdb_summary(con, widths[-1], top)
            )
            con.close()
        out["duckdb_memory"] = memory.peak
    return out


# --------------------------------------------------------------------------- the dashboard
def widget(elements: Any, suffix: str) -> Any:
    found = [w for w in elements if w.key and w.key.endswith(suffix)]
    assert len(found) == 1, (suffix, [w.key for w in elements])
    return found[0]


def run_dashboard(content: bytes, widths: list[float], extra_moves: int) -> dict[str, Any]:
    from streamlit.testing.v1 import AppTest

    from dashboard.state import DatasetInfo
    from dashboard.upload import read_upload
    from deid_core.io import reading
    from deid_core.masking import IntervalGroup, RelativeRound
    from deid_core.recipe import Recipe
    from deid_core.workspace import Workspace

    out: dict[str, Any] = {}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    ss = at.session_state

    def settle() -> float:
        """Wait for the session's background jobs, then the page's final rerun (none when the
        rerun itself waited for its work: a small file)."""
        start = time.perf_counter()
        board = ss.get("deid.jobs")
        if board is None or not board.active():
            return 0.0
        board.wait_all(TIMEOUT)
        at.run()
        return time.perf_counter() - start

    def risk_now() -> dict[str, float]:
        summary = ss["deid.workspace"].risk(ss["deid.recipe"])
        return summary_of_sizes(summary.class_size, summary.n_classes)

    figures = FigureClock()

    def timed_run(action: Callable[[], Any]) -> tuple[float, float]:
        """(to the risk figures, to the end of the page's run) of a user's action."""
        figures.start()
        action()
        assert not at.exception, at.exception
        return figures.elapsed(), time.perf_counter() - figures.started

    if len(content) > reading.MAX_UPLOAD_BYTES:
        # Above the upload limit (a registry's file): measured as on a server of its own whose
        # operator raised the limit.
        reading.MAX_UPLOAD_BYTES = len(content)
    with PeakMemory() as memory:
        out["read"], outcome = clock(lambda: read_upload(content, "cohort.csv"))
        assert outcome.frame is not None, outcome.messages

        def load() -> None:
            # What the Data page does with an upload (dashboard.state.load_dataset), then its
            # rerun: the sidebar strip's figures.
            ss["deid.workspace"] = Workspace(outcome.frame, name="cohort.csv")
            steps = (
                IntervalGroup("age_at_exposure", width=5.0, release="midpoint"),
                IntervalGroup("age_at_end", width=5.0, release="midpoint"),
                RelativeRound("stomach_dose_gy", digits=2),
            )
            ss["deid.recipe"] = Recipe(outcome.roles, steps)
            ss["deid.dataset"] = DatasetInfo("cohort.csv")
            ss["deid.epoch"] = ss["deid.epoch"] + 1
            at.switch_page("app_pages/data.py").run()

        first, run = timed_run(load)
        out["upload"] = out["read"] + first
        out["upload_settled"] = out["read"] + run + settle()

        # Roles: one quasi-identifier fewer, submitted with the form, then back.
        qi_box = widget(at.multiselect, ".qi")
        qi_box.set_value([c for c in qi_box.value if c != "city"])
        submit = next(b for b in at.button if b.label == "Apply roles")
        out["roles"], out["roles_run"] = timed_run(lambda: submit.click().run())
        settle()
        roles = ss["deid.recipe"].roles
        ss["deid.recipe"] = Recipe(replace(roles, quasi_identifiers=QIS), ss["deid.recipe"].steps)
        ss["deid.epoch"] = ss["deid.epoch"] + 1

        out["mask_first"], run = timed_run(lambda: at.switch_page("app_pages/mask.py").run())
        out["mask_first_settled"] = run + settle()

        to_figures, settled, checked = [], [], {}
        for width in widths:
            slider = widget(at.select_slider, "age_at_end:interval_group:width")
            first, run = timed_run(lambda s=slider, w=width: s.set_value(w).run())
            to_figures.append(first)
            settled.append(run + settle())
            checked[width] = risk_now()
        out["move_figures"] = statistics.median(to_figures)
        out["move_settled"] = statistics.median(settled)
        out["move_first_settled"] = settled[0]
        out["dashboard_figures"] = checked

        method = widget(at.selectbox, "age_at_exposure:method")
        out["switch"], run = timed_run(lambda: method.set_value("top_bottom_code").run())
        out["switch_settled"] = run + settle()
        out["switch_figures"] = risk_now()

        noise = widget(at.selectbox, "stomach_dose_gy:method")
        start = time.perf_counter()
        noise.set_value("uniform_noise").run()
        assert not at.exception, at.exception
        job = ss["deid.jobs"].current("utility")
        while job is not None and job.active and job.partial is None:
            time.sleep(0.005)
        out["noise_first"] = time.perf_counter() - start
        out["noise_settled"] = out["noise_first"] + settle()
    out["memory_peak"] = memory.peak

    # Memory over further moves: it must not grow with the number of moves.
    options = widget(at.select_slider, "age_at_end:interval_group:width").options
    after = []
    for i in range(extra_moves):
        slider = widget(at.select_slider, "age_at_end:interval_group:width")
        slider.set_value(float(options[(i * 2 + 1) % len(options)])).run()
        settle()
        after.append(rss_mb())
    out["memory_moves"] = after
    out["cache_mb"] = ss["deid.workspace"].cache.nbytes / 2**20
    return out


def one_size(n_rows: int, extra_moves: int) -> dict[str, Any]:
    widths = [2.0, 10.0, 1.0, 20.0]
    content = make_csv(n_rows)
    out = {"rows": n_rows, "csv_mb": len(content) / 1e6, "start_mb": rss_mb()}
    out.update(pandas_baselines(content, widths))
    gc.collect()
    out.update(duckdb_baselines(content, widths, out["top"]))
    gc.collect()
    out.update(run_dashboard(content, widths, extra_moves))
    for width in widths:  # the dashboard's figures are the baselines' figures
        app, pandas_figures = out["dashboard_figures"][width], out["pandas_figures"][width]
        duck = out["duckdb_figures"][width]
        for name in ("k", "uniques", "classes"):
            assert app[name] == pandas_figures[name] == duck[name], (width, name)
    for name in ("k", "uniques", "classes"):
        switched = out["switch_figures"][name]
        assert switched == out["pandas_switch_figures"][name] == out["duckdb_switch_figures"][name]
    for name in ("dashboard", "pandas", "duckdb", "switch", "pandas_switch", "duckdb_switch"):
        del out[f"{name}_figures"]
    return out


# --------------------------------------------------------------------------- report
def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def print_report(results: list[dict[str, Any]]) -> None:
    import duckdb
    import streamlit

    sizes = ", ".join(f"{r['rows']:,}" for r in results)
    print(f"Scale benchmark: the dashboard's live path ({sizes} records x 6 columns)")
    print(machine(np, pd, streamlit, duckdb))
    print(
        "Dashboard: AppTest driving app.py, server side (no browser rendering); baselines in "
        "the same process. Ratio = baseline / dashboard (above 1: the dashboard is faster)."
    )
    for r in results:
        print()
        print(f"{r['rows']:,} records ({r['csv_mb']:.0f} MB of CSV)")
        rows = [
            ("upload to figures", r["upload"], r["pandas_upload"], r["duckdb_upload"]),
            ("  of which reading the file", r["read"], None, None),
            ("  then settled (model fitted)", r["upload_settled"], None, None),
            ("roles applied: figures", r["roles"], None, None),
            ("  end of the page's run", r["roles_run"], None, None),
            ("Mask page first figures", r["mask_first"], None, None),
            ("  then settled (map swept)", r["mask_first_settled"], None, None),
            ("slider move to figures", r["move_figures"], r["pandas_move"], r["duckdb_move"]),
            ("slider move to settled", r["move_settled"], r["pandas_move"], r["duckdb_move"]),
            ("  first move of that slider, settled", r["move_first_settled"], None, None),
            ("method switch to figures", r["switch"], r["pandas_switch"], r["duckdb_switch"]),
            ("  then settled (new map swept)", r["switch_settled"], None, None),
            ("first noise figures (running mean)", r["noise_first"], r["pandas_noise"], None),
            ("  all 100 replicates, settled", r["noise_settled"], None, None),
        ]
        print(
            f"  {'':40s}{'dashboard':>12s}{'pandas':>12s}{'ratio':>8s}{'DuckDB':>12s}{'ratio':>8s}"
        )
        for label, app, pandas_t, duck_t in rows:
            cells = f"  {label:40s}{ms(app):>12s}"
            for base in (pandas_t, duck_t):
                cells += f"{ms(base):>12s}{base / app:>7.2f}x" if base else f"{'':>12s}{'':>8s}"
            print(cells)
        growth = r["memory_moves"]
        print(
            f"  peak memory (process): dashboard {r['memory_peak']:,.0f} MB, pandas "
            f"{r['pandas_memory']:,.0f} MB, DuckDB {r['duckdb_memory']:,.0f} MB (process at start "
            f"{r['start_mb']:,.0f} MB); cache {r['cache_mb']:,.0f} MB"
        )
        if growth:
            print(
                f"  memory over {len(growth)} more moves: {growth[0]:,.0f} MB after the first, "
                f"{max(growth):,.0f} MB at most, {growth[-1]:,.0f} MB after the last"
            )
    at = [r for r in results if r["rows"] == TARGETS_AT]
    if at:
        r = at[0]
        print()
        print(f"targets at {TARGETS_AT:,} x 6 (printed only, never enforced):")
        checks = [
            ("slider move to figures <= 300 ms", r["move_figures"] <= TARGET_MOVE_FIGURES),
            ("slider move to settled <= 600 ms", r["move_settled"] <= TARGET_MOVE_SETTLED),
            ("method switch <= 1 s", r["switch"] <= TARGET_SWITCH),
            ("first noise figures <= 1 s", r["noise_first"] <= TARGET_NOISE),
            ("roles applied <= 1 s", r["roles"] <= TARGET_ROLES),
            ("peak memory <= 1.5 GB", r["memory_peak"] <= TARGET_MEMORY_MB),
        ]
        for label, ok in checks:
            print(f"  {label:40s}{verdict(ok)}")
    print(
        "correctness: the dashboard's k, uniques and classes equal pandas' and DuckDB's at "
        "every move and switch"
    )
    print(f"load average at the end: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--moves", type=int, default=30, help="extra moves for memory growth")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # one size, JSON out
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_size(args.one, args.moves)))
        return
    results = []
    for n_rows in args.rows:
        command = [sys.executable, __file__, "--one", str(n_rows), "--moves", str(args.moves)]
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-4000:])
            raise SystemExit(f"the {n_rows:,}-record run failed")
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print_report(results)


if __name__ == "__main__":
    main()
