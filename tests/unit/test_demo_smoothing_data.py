"""Demo data for kernel smoothing (Zhou et al. 2010): point source and areas."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from deid_core.datasets import DEMO_DATASETS, DemoDataset, load_demo
from deid_core.datasets.areas import (
    AREA_COLUMNS,
    TRUE_AREA_GROUP_LOG_OR,
    area_data,
)
from deid_core.datasets.point_source import (
    EXPOSURE_SCALE,
    SOURCE,
    TRUE_POINT_SOURCE_COEF,
    point_source_data,
)
from deid_core.errors import DataError


@pytest.fixture(scope="module")
def points() -> pd.DataFrame:
    return point_source_data()


@pytest.fixture(scope="module")
def areas() -> pd.DataFrame:
    return area_data()


# ----------------------------------------------------------------------------- point source
def test_point_source_shape_columns_and_ranges(points):
    assert list(points.columns) == ["id", "x", "y", "dist_to_source", "exposure", "cases"]
    assert points.shape == (1000, 6)
    assert points["id"].tolist() == list(range(1, 1001))
    assert not points.isna().any().any()
    assert points[["x", "y"]].abs().max().max() <= 1
    distance = np.hypot(points["x"] - SOURCE[0], points["y"] - SOURCE[1])
    np.testing.assert_allclose(points["dist_to_source"], distance, atol=1e-6)
    np.testing.assert_allclose(
        points["exposure"], np.exp(-points["dist_to_source"] / EXPOSURE_SCALE), atol=1e-6
    )
    assert points["cases"].dtype == "int64"
    assert (points["cases"] >= 0).all()
    # "reasonable variability": a few cases on average, neither all zeros nor huge counts
    assert 1 <= points["cases"].mean() <= 4
    assert 0.05 <= (points["cases"] == 0).mean() <= 0.5


def test_point_source_is_deterministic_for_a_seed(points):
    pd.testing.assert_frame_equal(point_source_data(), points)
    assert not point_source_data(seed=1).equals(points)
    assert len(point_source_data(n=10)) == 10
    with pytest.raises(DataError, match="at least one"):
        point_source_data(n=0)


def test_poisson_regression_recovers_the_point_source_coefficient(points):
    design = sm.add_constant(points[["exposure"]])
    fit = sm.GLM(points["cases"], design, family=sm.families.Poisson()).fit()
    estimate, se = fit.params["exposure"], fit.bse["exposure"]
    assert abs(estimate - TRUE_POINT_SOURCE_COEF) < 2 * se
    assert se < 0.2


# ----------------------------------------------------------------------------- areas
def test_areas_shape_columns_and_ranges(areas):
    assert tuple(areas.columns) == AREA_COLUMNS
    assert areas.shape == (4000, 7)
    assert not areas.isna().any().any()
    assert areas["row_id"].is_unique
    assert areas["area_id"].tolist() == [a for a in range(1, 2001) for _ in range(2)]
    assert areas["group"].tolist() == [0, 1] * 2000
    per_area = areas.groupby("area_id")[["x", "y"]].nunique()
    assert (per_area == 1).all().all()
    assert areas[["x", "y"]].min().min() >= 0 and areas[["x", "y"]].max().max() <= 100
    assert (areas["population"] >= 1).all()
    assert ((areas["deaths"] >= 0) & (areas["deaths"] <= areas["population"])).all()
    assert 0.03 < areas["deaths"].sum() / areas["population"].sum() < 0.08
    totals = areas.groupby("area_id")["population"].sum()
    assert totals.mean() > 1.2 * totals.median()  # right-skewed populations


def test_area_group_share_varies_in_space(areas):
    wide = areas.pivot(index="area_id", columns="group", values="population")
    share = wide[1] / (wide[0] + wide[1])
    assert share.quantile(0.9) - share.quantile(0.1) > 0.3


def test_areas_are_deterministic_for_a_seed(areas):
    pd.testing.assert_frame_equal(area_data(), areas)
    assert not area_data(seed=1).equals(areas)
    assert len(area_data(n_areas=5)) == 10
    with pytest.raises(DataError, match="at least one"):
        area_data(n_areas=0)


def _group_log_or(areas: pd.DataFrame, columns: list[str]) -> tuple[float, float]:
    counts = np.column_stack([areas["deaths"], areas["population"] - areas["deaths"]])
    design = sm.add_constant(areas[columns].astype(float))
    fit = sm.GLM(counts, design, family=sm.families.Binomial()).fit()
    return fit.params["group"], fit.bse["group"]


def test_binomial_regression_with_place_recovers_the_group_log_odds_ratio(areas):
    estimate, se = _group_log_or(areas, ["group", "x", "y"])
    assert abs(estimate - TRUE_AREA_GROUP_LOG_OR) < 2 * se


def test_group_alone_is_confounded_by_place(areas):
    estimate, se = _group_log_or(areas, ["group"])
    assert estimate - TRUE_AREA_GROUP_LOG_OR > 5 * se


# ----------------------------------------------------------------------------- registry
def test_registry_entries_for_smoothing_demos():
    points = DEMO_DATASETS["point_source"]
    assert points.synthetic and "no real persons" in points.licence
    assert (points.exposure, points.outcome, points.record_id) == ("exposure", "cases", "id")
    assert points.quasi_identifiers == ("exposure",)
    assert points.covariates == ()
    assert points.locations == ("x", "y")
    assert points.pattern == "dist_to_source"
    assert (points.model_family, points.trials) == ("poisson", None)
    assert {s.column for s in points.default_steps} == {"exposure", "cases"}
    assert {(s.method, s.locations) for s in points.default_steps} == {
        ("kernel_smooth", ("x", "y"))
    }
    assert points.direct_identifiers == ("x", "y", "dist_to_source")
    assert points.default_roles["dist_to_source"] == "direct_identifier"

    areas = DEMO_DATASETS["areas"]
    assert areas.synthetic and "no real persons" in areas.licence
    assert (areas.exposure, areas.outcome, areas.record_id) == ("group", "deaths", "row_id")
    assert areas.locations == ("x", "y")
    assert areas.pattern is None
    assert (areas.model_family, areas.trials) == ("binomial", "population")
    assert {(s.column, s.within) for s in areas.default_steps} == {
        ("deaths", "group"),
        ("population", "group"),
    }


@pytest.mark.parametrize("key", ["point_source", "areas"])
def test_smoothing_demo_columns_exist(key):
    demo = DEMO_DATASETS[key]
    frame = load_demo(key)
    named = [*demo.quasi_identifiers, *demo.covariates, *demo.locations]
    named += [c for c in (demo.exposure, demo.outcome, demo.record_id, demo.pattern) if c]
    named += [demo.trials] if demo.trials else []
    assert set(named) <= set(frame.columns)
    assert frame[demo.record_id].is_unique


def test_existing_demos_keep_the_defaults_of_the_new_fields():
    for key in ("cohort", "flchain", "el_emam"):
        demo = DEMO_DATASETS[key]
        assert demo.locations == ()
        assert demo.pattern is None
        assert demo.model_family == "logistic"
        assert demo.trials is None


def test_demo_dataset_checks_its_model_family():
    demo = DEMO_DATASETS["areas"]
    with pytest.raises(DataError, match="model_family must be one of"):
        dataclasses.replace(demo, model_family="probit")
    with pytest.raises(DataError, match="trials column"):
        dataclasses.replace(demo, trials=None)
    with pytest.raises(DataError, match="trials column"):
        dataclasses.replace(DEMO_DATASETS["point_source"], trials="population")
    assert isinstance(dataclasses.replace(demo), DemoDataset)
