"""The charts the pages and the report share (deid_core.charts) and their rendering by
vl-convert (deid_core.report.charts)."""

import itertools
import json

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.charts import (
    AFTER,
    BEFORE,
    HISTOGRAM_BINS,
    class_size_bins,
    class_size_chart,
    class_size_distribution,
    distribution_chart,
    histogram_table,
    nice_bin_edges,
    ru_map,
    spec_of,
)
from deid_core.report.charts import render_png, render_svg


def datasets(spec: dict) -> list[list[dict]]:
    return list(spec.get("datasets", {}).values())


@settings(deadline=None)
@given(st.integers(min_value=1, max_value=500))
def test_every_class_size_bin_lies_wholly_on_one_side_of_the_minimum_cell_size(k):
    bins = class_size_bins(k)
    assert bins[0][0] == 1 and bins[-1][1] is None
    for (_, high), (next_low, _) in itertools.pairwise(bins):
        assert high == next_low - 1  # contiguous, no gap, no overlap
    for low, high in bins:
        top = high if high is not None else 10**9
        assert top < k or low >= k
    assert any(low == k for low, _ in bins)


def test_classes_of_the_minimum_cell_size_pass():
    """Classes of exactly 20 meet a minimum cell size of 20; 11-19 do not (the old report
    shaded an 11-20 bar as failing)."""
    sizes = np.array([19] * 19 + [20] * 20 + [11] * 11)
    table = class_size_distribution(sizes, 20).set_index("class size")
    assert table.loc["11–19", "records"] == 30
    assert table.loc["11–19", "status"] == "below the minimum cell size 20"
    assert table.loc["20–49", "records"] == 20
    assert table.loc["20–49", "status"] == "at or above 20"
    assert table["records"].sum() == len(sizes)


@settings(deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=200))
def test_class_size_counts_add_up_to_the_records(sizes):
    for k in (3, 5, 7, 20, 150):
        assert class_size_distribution(np.array(sizes), k)["records"].sum() == len(sizes)


def test_class_size_chart_shows_before_and_after_side_by_side():
    spec = spec_of(class_size_chart(np.array([1, 2, 2, 5]), 3, before=np.array([1, 1, 1, 1])))
    rows = datasets(spec)[0]
    assert {r["data"] for r in rows} == {BEFORE, AFTER}
    assert spec["encoding"]["xOffset"]["field"] == "data"
    only_after = spec_of(class_size_chart(np.array([1, 2, 2, 5]), 3))
    assert {r["data"] for r in datasets(only_after)[0]} == {AFTER}


def test_histograms_are_binned_before_they_reach_the_chart():
    """Only counts per shared bin go into the specification, never a record's value (not even
    the extremes: the bin edges are round numbers around them)."""
    rng = np.random.default_rng(4)
    original = pd.Series(rng.normal(50, 10, 3000))
    masked = original.round(-1)
    marker = 123.456789
    original.iloc[0] = marker
    table = histogram_table(original, masked)
    before = table[table["data"] == BEFORE].reset_index(drop=True)
    after = table[table["data"] == AFTER].reset_index(drop=True)
    assert len(before) == len(after) <= HISTOGRAM_BINS + 2
    pd.testing.assert_series_equal(before["bin_start"], after["bin_start"])  # shared bins
    edges = [*before["bin_start"], before["bin_end"].iloc[-1]]
    assert before["records"].tolist() == np.histogram(original, bins=edges)[0].tolist()
    assert before["records"].sum() == len(original)
    assert after["records"].sum() == len(masked)
    text = json.dumps(spec_of(distribution_chart(original, masked, "dose")))
    assert str(marker) not in text and "123.45" not in text
    assert len(datasets(json.loads(text))[0]) == len(table)


@settings(deadline=None)
@given(
    st.floats(-1e9, 1e9, allow_nan=False),
    st.floats(0, 1e6, allow_nan=False),
)
def test_nice_bins_cover_the_range_with_round_widths(low, span):
    high = low + span
    edges = nice_bin_edges(low, high)
    assert 2 <= len(edges) <= HISTOGRAM_BINS + 3  # the ends rounded out: 2 more at most
    assert edges[0] <= low <= high < edges[-1]
    step = (edges[-1] - edges[0]) / (len(edges) - 1)
    rounding = 8 * np.finfo(float).eps * max(abs(low), abs(high), 1.0)
    assert np.allclose(np.diff(edges), step, rtol=1e-9, atol=rounding)
    mantissa = step / 10 ** np.floor(np.log10(step))
    assert any(np.isclose(mantissa, m) for m in (1, 2, 2.5, 5, 10))


def test_distribution_chart_skips_text_and_uses_symlog_counts_when_skewed():
    assert distribution_chart(pd.Series([1.0, 2.0]), pd.Series(["a", "b"]), "x") is None
    assert distribution_chart(pd.Series([np.nan]), pd.Series([np.nan]), "x") is None
    skewed = pd.Series(np.r_[np.zeros(5000), np.linspace(1, 100, 200)])
    spec = spec_of(distribution_chart(skewed, skewed, "x"))
    assert spec["encoding"]["y"]["scale"]["type"] == "symlog"
    even = pd.Series(np.linspace(0, 1, 4000))
    assert "scale" not in spec_of(distribution_chart(even, even, "x"))["encoding"]["y"]


def points() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "label": ["1", "2", "3", "4"],
            "security": [0.9, 0.6, 0.5, 0.2],
            "analysis_potential": [0.5, 0.8, 0.7, None],
            "pareto": [True, True, False, False],
            "note": [None, None, None, "no fit"],
        }
    )


def test_ru_map_has_the_frontier_the_curve_the_threshold_and_the_current_point():
    spec = spec_of(
        ru_map(points(), theta=2.0, threshold_security=0.8, current=(0.55, 0.75), parameter="d")
    )
    series = {row.get("series") for rows in datasets(spec) for row in rows}
    assert {"Sweep points", "Pareto frontier", "Cologne curve", "Threshold", "Current"} <= series
    sweep = next(r for r in datasets(spec) if r and r[0].get("series") == "Sweep points")
    assert [r["label"] for r in sweep] == ["1", "2", "3"]  # no AP: not plotted
    assert all(
        set(r) == {"label", "security", "analysis_potential", "pareto", "series"} for r in sweep
    )  # columns the chart does not draw stay out
    bare = spec_of(ru_map(points(), theta=None, threshold_security=None))
    bare_series = {row.get("series") for rows in datasets(bare) for row in rows}
    assert "Cologne curve" not in bare_series and "Threshold" not in bare_series


def test_the_report_renders_the_same_specification_as_png_and_svg():
    spec = spec_of(class_size_chart(np.array([1, 2, 2, 40]), 5))
    before = json.dumps(spec, sort_keys=True)
    png = render_png(spec)
    svg = render_svg(spec)
    assert png.startswith(b"\x89PNG")
    assert svg.startswith("<svg") and "Equivalence class size" in svg
    assert json.dumps(spec, sort_keys=True) == before  # rendering does not change the chart


def test_rendering_refuses_external_data():
    spec = {
        "data": {"url": "http://127.0.0.1:9/data.csv"},
        "mark": "point",
        "encoding": {"x": {"field": "a", "type": "quantitative"}},
    }
    try:
        render_svg(spec)
    except Exception as error:
        assert "not allowed" in str(error)
    else:
        raise AssertionError("an external data URL was fetched")
