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
