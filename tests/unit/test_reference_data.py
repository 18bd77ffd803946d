"""Risk figures on reference data shipped with established tools (sdcMicro, ARX), checked
against an independent pandas computation. Skipped when ../shared/reference-data is absent."""

from pathlib import Path

import numpy as np
import pytest

from deid_core.io.reading import read_table
from deid_core.recipe import Recipe, Roles
from deid_core.risk import linkage_risk, risk_summary

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference-data"

pytestmark = pytest.mark.skipif(
    not REFERENCE.is_dir(), reason="../shared/reference-data is not beside the project"
)

CASES = [
    (
        "arx/adult.csv",
        [
            "sex",
            "age",
            "race",
            "marital-status",
            "education",
            "native-country",
            "workclass",
            "occupation",
            "salary-class",
        ],
    ),
    ("sdcmicro/free1.csv", ["REGION", "SEX", "AGE"]),
    ("sdcmicro/testdata.csv", ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]),
    ("sdcmicro/francdat.csv", ["Key1", "Key2", "Key3", "Key4"]),
]


@pytest.mark.parametrize(("name", "keys"), CASES, ids=[c[0] for c in CASES])
def test_risk_on_reference_data_agrees_with_groupby(name, keys):
    path = REFERENCE / name
    frame = read_table(path.read_bytes(), path.name).frame
    summary = risk_summary(frame, keys)
    sizes = frame.groupby(keys, dropna=False)[keys[0]].transform("size").to_numpy()
    assert np.array_equal(summary.class_size, sizes)
    assert summary.average_risk == pytest.approx(np.mean(1 / sizes))
    assert summary.uniques == int((sizes == 1).sum())
    # Linkage of the file to itself with the same (no) masking is the closed-data average risk.
    recipe = Recipe(Roles(quasi_identifiers=tuple(keys)))
    linked = linkage_risk(recipe, frame, frame, "same_masking")
    assert linked.identifiability_score == pytest.approx(summary.average_risk)
