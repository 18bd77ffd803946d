"""Built-in demo data sets: shapes, summary figures, determinism and declared roles."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from deid_core.datasets import DEMO_DATASETS, load_demo
from deid_core.datasets.cohort import synthetic_cohort
from deid_core.datasets.el_emam import el_emam_table
from deid_core.datasets.flchain import FLCHAIN_COLUMNS, FLCHAIN_PATH, load_flchain
from deid_core.errors import DataError
from deid_core.io.roles import ROLES


@pytest.fixture(scope="module")
def cohort() -> pd.DataFrame:
    return synthetic_cohort()


def test_cohort_shape_and_columns(cohort):
    assert cohort.shape == (16000, 7)
    assert list(cohort.columns) == [
        "person_id",
        "city",
        "sex",
        "age_at_exposure",
        "age_at_end",
        "stomach_dose_gy",
        "stomach_cancer",
    ]
    assert cohort["person_id"].tolist() == list(range(1, 16001))
    assert set(cohort["city"]) == {"Hiroshima", "Nagasaki"}
    assert set(cohort["sex"]) == {"F", "M"}
    assert (cohort["age_at_end"] > cohort["age_at_exposure"]).all()
    hiroshima_share = (cohort["city"] == "Hiroshima").mean()
    assert 0.6 < hiroshima_share < 0.73


def test_cohort_is_deterministic_for_a_seed_and_changes_with_it(cohort):
    pd.testing.assert_frame_equal(synthetic_cohort(), cohort)
    assert not synthetic_cohort(seed=1).equals(cohort)


def test_cohort_dose_and_case_figures(cohort):
    dose = cohort["stomach_dose_gy"]
    assert 60 <= cohort["stomach_cancer"].sum() <= 100
    assert 0.2 <= dose.median() <= 0.4
    assert 0.45 <= dose.mean() <= 0.75
    assert 2.5 <= dose.max() <= 4.5
    assert 0.3 <= (dose < 0.005).mean() <= 0.45
    assert (dose >= 0).all()
    assert np.allclose(dose, dose.round(4))


def test_cohort_logistic_regression_of_cancer_on_dose_has_a_positive_slope(cohort):
    design = sm.add_constant(cohort[["stomach_dose_gy"]])
    fit = sm.Logit(cohort["stomach_cancer"], design).fit(disp=0)
    assert fit.params["stomach_dose_gy"] > 0


def test_flchain_rows_and_columns():
    frame = load_flchain()
    assert len(frame) == 7874
    assert tuple(frame.columns) == FLCHAIN_COLUMNS
    assert frame["record_id"].tolist() == list(range(1, 7875))
    assert set(frame["death"]) == {0, 1}
    assert frame["death"].sum() == 2169
    assert set(frame["sex"]) == {"F", "M"}
    assert FLCHAIN_PATH.stat().st_size < 300_000


def test_el_emam_average_risk_is_16_of_27():
    frame = el_emam_table()
    assert len(frame) == 27
    assert frame.loc[frame["id"] == 4, "lab_result"].item() == "Negative"
    class_size = frame.groupby(["sex", "year_of_birth"])["id"].transform("size")
    per_record_risk = 1 / class_size
    assert per_record_risk.mean() == pytest.approx(16 / 27)
    assert per_record_risk.max() == 1


@pytest.mark.parametrize("key", list(DEMO_DATASETS))
def test_demo_metadata_matches_its_table(key):
    demo = DEMO_DATASETS[key]
    frame = load_demo(key)
    assert demo.key == key
    assert demo.title and demo.description and demo.source and demo.licence
    named = [*demo.quasi_identifiers, *demo.covariates]
    named += [column for column in (demo.exposure, demo.outcome, demo.record_id) if column]
    assert set(named) <= set(frame.columns)
    assert set(demo.default_roles.values()) <= set(ROLES)
    if demo.record_id:
        assert demo.default_roles[demo.record_id] == "record_id"
        if key == "visits":  # several admissions per patient: the id names the person
            assert frame.groupby(demo.record_id).size().max() > 1
        else:
            assert frame[demo.record_id].is_unique


def test_load_demo_returns_a_fresh_copy():
    first = load_demo("el_emam")
    first.loc[0, "sex"] = "changed"
    assert load_demo("el_emam").loc[0, "sex"] == "Male"


def test_unknown_demo():
    with pytest.raises(DataError, match="no demo data set"):
        load_demo("nope")
