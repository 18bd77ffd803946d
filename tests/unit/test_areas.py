"""Aggregation of records to areas and equal grid cells (deid_core.masking.areas)."""

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import DataError
from deid_core.masking.areas import AreaTable, aggregate_to_areas, grid_areas


@pytest.fixture
def records() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "zip": ["B", "A", "B", "C", "B"],
            "death": [1, 0, 0, 1, 1],
            "black": [True, False, True, False, False],
            "age": [70.0, 80.0, 90.0, 65.0, 75.0],
            "years": [1.0, 2.0, 0.5, 1.5, 2.5],
            "lon": [0.0, 4.0, 2.0, 10.0, 1.0],
            "lat": [3.0, 5.0, 3.0, 1.0, 6.0],
        }
    )


def test_aggregation_by_hand(records):
    result = aggregate_to_areas(
        records,
        "zip",
        coordinates=("lon", "lat"),
        count_columns=("death", "black"),
        mean_columns=("age",),
        person_time="years",
    )
    expected = pd.DataFrame(
        {
            "zip": ["B", "A", "C"],
            "n": [3, 1, 1],
            "death": [2, 0, 1],
            "death_proportion": [2 / 3, 0.0, 1.0],
            "black": [2, 0, 0],
            "black_proportion": [2 / 3, 0.0, 0.0],
            "age_mean": [235 / 3, 80.0, 65.0],
            "years": [4.0, 2.0, 1.5],
            "death_rate": [0.5, 0.0, 1 / 1.5],
            "black_rate": [0.5, 0.0, 0.0],
            "lon": [1.0, 4.0, 10.0],
            "lat": [4.0, 5.0, 1.0],
        }
    )
    pd.testing.assert_frame_equal(result.table, expected)
    assert result.columns == tuple(expected.columns)
    assert result.value_columns == tuple(expected.columns[1:-2])
    assert result.n_records == 5
    assert result.n_areas == 3


def test_minimal_aggregation_counts_records_only(records):
    result = aggregate_to_areas(records, "zip")
    assert result.table.to_dict("list") == {"zip": ["B", "A", "C"], "n": [3, 1, 1]}
    assert result.value_columns == ("n",)


def test_float_counts_stay_float_and_numeric_area_ids_work():
    frame = pd.DataFrame({"cell": [2, 2, 7], "cases": [0.5, 1.0, 2.0]})
    table = aggregate_to_areas(frame, "cell", count_columns=["cases"]).table
    assert table["cell"].tolist() == [2, 7]
    assert table["cases"].tolist() == [1.5, 2.0]
    assert table["cases"].dtype == float


def test_str_summarises_without_data_values(records):
    text = str(
        aggregate_to_areas(
            records, "zip", coordinates=["lon", "lat"], count_columns=["death"], person_time="years"
        )
    )
    assert "5 records in 3 areas by 'zip'" in text
    assert "min 1, median 1, max 3" in text
    assert "death" in text and "years" in text and "lon, lat" in text


def test_input_is_not_modified(records):
    before = records.copy()
    aggregate_to_areas(
        records, "zip", coordinates=["lon"], count_columns=["death"], person_time="years"
    )
    grid_areas(records, "lon", "lat", 3)
    pd.testing.assert_frame_equal(records, before)


def test_errors_for_empty_missing_and_wrong_columns(records):
    with pytest.raises(DataError, match="no records"):
        aggregate_to_areas(records.iloc[:0], "zip")
    with pytest.raises(DataError, match="no column 'nope'"):
        aggregate_to_areas(records, "nope")
    missing_area = records.assign(zip=["B", None, "B", "C", "B"])
    with pytest.raises(DataError, match="1 records have no value in the area column 'zip'"):
        aggregate_to_areas(missing_area, "zip")
    missing_count = records.assign(death=[1, np.nan, 0, 1, 1])
    with pytest.raises(DataError, match="'death' has 1 missing values"):
        aggregate_to_areas(missing_count, "zip", count_columns=["death"])
    with pytest.raises(DataError, match="'zip' must be numeric"):
        aggregate_to_areas(records.assign(region=records["zip"]), "region", mean_columns=["zip"])
    text_count = records.assign(death=["yes", "no", "no", "yes", "yes"])
    with pytest.raises(DataError, match="'death' must be numeric"):
        aggregate_to_areas(text_count, "zip", count_columns=["death"])
    with pytest.raises(DataError, match="infinite"):
        aggregate_to_areas(records.assign(age=np.inf), "zip", mean_columns=["age"])
    with pytest.raises(DataError, match="must not be negative"):
        aggregate_to_areas(records.assign(death=-1), "zip", count_columns=["death"])
    with pytest.raises(DataError, match="named more than once"):
        aggregate_to_areas(records, "zip", count_columns=["age"], mean_columns=["age"])


def test_error_for_areas_without_person_time(records):
    no_time = records.assign(years=[1.0, 0.0, 1.0, 1.0, 1.0])
    with pytest.raises(DataError, match="no person-time in 'years'"):
        aggregate_to_areas(no_time, "zip", count_columns=["death"], person_time="years")


def test_error_for_clashing_output_names(records):
    clash = records.rename(columns={"age": "death_proportion"})
    with pytest.raises(DataError, match="two columns named 'death_proportion'"):
        aggregate_to_areas(clash, "zip", count_columns=["death"], coordinates=["death_proportion"])
    with pytest.raises(DataError, match="two columns named 'n'"):
        aggregate_to_areas(records.rename(columns={"death": "n"}), "zip", count_columns=["n"])


def test_area_table_validates_up_front():
    table = pd.DataFrame({"zip": ["A", "A"], "n": [1, 2]})
    with pytest.raises(DataError, match="more than one row"):
        AreaTable(table=table, area="zip", n_records=3)
    with pytest.raises(DataError, match="lacks the columns cases"):
        AreaTable(table=table, area="zip", count_columns=("cases",), n_records=3)
    with pytest.raises(DataError, match="record count"):
        AreaTable(table=table.assign(zip=["A", "B"]), area="zip", n_records=4)


def test_grid_cells_by_hand():
    frame = pd.DataFrame(
        {"x": [0.0, 0.49, 0.5, 1.0, 0.2, 0.9], "y": [0.0, 0.1, 0.0, 1.0, 0.75, 0.5]},
        index=[10, 11, 12, 13, 14, 15],
    )
    cells = grid_areas(frame, "x", "y", 2)
    # column = floor(2 x), row = floor(2 y), both capped at 1; cell = 2 row + column
    assert cells.tolist() == [0, 0, 1, 3, 2, 3]
    assert cells.name == "cell"
    assert cells.dtype == "int64"
    assert cells.index.tolist() == [10, 11, 12, 13, 14, 15]


def test_grid_with_bounds_of_the_study_area():
    frame = pd.DataFrame({"x": [-0.9, 0.1, 0.6], "y": [-0.9, -0.1, 0.9]})
    cells = grid_areas(frame, "x", "y", 4, bounds=(-1, 1, -1, 1))
    # width 0.5: x columns 0, 2, 3; y rows 0, 1, 3
    assert cells.tolist() == [0, 4 + 2, 12 + 3]
    assert grid_areas(frame, "x", "y", 1).tolist() == [0, 0, 0]


def test_grid_of_a_single_point_is_one_cell():
    frame = pd.DataFrame({"x": [3.0, 3.0], "y": [1.0, 1.0]})
    assert grid_areas(frame, "x", "y", 5).tolist() == [0, 0]


def test_grid_then_aggregate_covers_every_record():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.uniform(-1, 1, 500), "y": rng.uniform(-1, 1, 500)})
    cells = grid_areas(frame, "x", "y", 5, bounds=(-1, 1, -1, 1))
    assert cells.between(0, 24).all()
    result = aggregate_to_areas(frame.assign(cell=cells), "cell", coordinates=["x", "y"])
    assert result.table["n"].sum() == 500
    assert result.n_areas == 25


def test_grid_errors():
    frame = pd.DataFrame({"x": [0.0, 1.0], "y": [0.0, np.nan], "t": ["a", "b"], "v": [0.0, 1.0]})
    with pytest.raises(DataError, match="at least 1"):
        grid_areas(frame, "x", "v", 0)
    with pytest.raises(DataError, match="whole number"):
        grid_areas(frame, "x", "v", 2.5)
    with pytest.raises(DataError, match="no records"):
        grid_areas(frame.iloc[:0], "x", "v", 2)
    with pytest.raises(DataError, match="named more than once"):
        grid_areas(frame, "x", "x", 2)
    with pytest.raises(DataError, match="'y' has 1 missing"):
        grid_areas(frame, "x", "y", 2)
    with pytest.raises(DataError, match="'t' must be numeric"):
        grid_areas(frame, "x", "t", 2)
    with pytest.raises(DataError, match="no column 'z'"):
        grid_areas(frame, "x", "z", 2)
    with pytest.raises(DataError, match="1 records lie outside"):
        grid_areas(frame, "x", "v", 2, bounds=(0, 0.5, 0, 1))
    with pytest.raises(DataError, match="min <= max"):
        grid_areas(frame, "x", "v", 2, bounds=(1, 0, 0, 1))
