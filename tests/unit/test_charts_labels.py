"""The R-U map's point labels: one per position, alternating above and below."""

import pandas as pd

from deid_core.charts import ru_map, spec_of, spread_labels


def test_points_at_one_place_share_a_label_and_neighbours_alternate():
    table = pd.DataFrame(
        {
            "label": ["0", "1", "2", "-1", "-2"],
            "x": [1.0, 1.0, 1.0, 0.99, 0.6],
            "y": [0.2, 0.2005, 0.21, 0.5, 0.9],
        }
    )
    labels = spread_labels(table, "x", "y", (0.01, 0.04))
    assert labels["label"].tolist() == ["-2", "-1", "0, 1, 2"]
    assert labels["dy"].tolist() == [-9, 13, -9]


def test_the_legend_lists_only_the_series_drawn():
    points = pd.DataFrame(
        {
            "label": ["1", "2"],
            "security": [0.2, 0.6],
            "analysis_potential": [0.99, 0.9],
            "pareto": [False, False],
        }
    )
    spec = spec_of(ru_map(points, theta=None, threshold_security=0.8, current=None))
    domains = {
        str(layer["encoding"]["color"]["scale"]["domain"])
        for layer in spec["layer"]
        if "color" in layer.get("encoding", {})
    }
    assert domains == {str(["Sweep points", "Threshold"])}
    # the series differ by dashes and shapes too, not by colour alone
    dashes = [layer["encoding"].get("strokeDash") for layer in spec["layer"]]
    assert any(d and d["scale"]["range"] == [[1, 0], [8, 4]] for d in dashes)
    assert spec["title"].startswith("Risk-utility map")


def test_marks_replace_the_labels_on_the_chart_and_empty_marks_write_nothing():
    points = pd.DataFrame(
        {
            "label": ["zip: 3 digits; icd10: 3 characters", "zip: 5 digits", "zip: none"],
            "security": [0.9, 0.85, 0.5],
            "analysis_potential": [0.7, 0.8, 0.95],
            "pareto": [True, True, False],
            "mark": ["2", "1", ""],
        }
    )
    spec = spec_of(ru_map(points, theta=None, threshold_security=0.8, current=None))
    texts = [layer for layer in spec["layer"] if str(layer.get("mark", "")).find("text") >= 0]
    assert len(texts) == 1
    data = spec["datasets"][texts[0]["data"]["name"]]
    assert sorted(row["label"] for row in data) == ["1", "2"]  # numbers only, no long labels
    # the tooltips still name every point
    points_layer = next(layer for layer in spec["layer"] if "tooltip" in layer.get("encoding", {}))
    named = spec["datasets"][points_layer["data"]["name"]]
    assert {row["label"] for row in named} == set(points["label"])
