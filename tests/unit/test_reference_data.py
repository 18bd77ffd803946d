"""Risk figures on reference data shipped with established tools (sdcMicro, ARX), checked
against an independent pandas computation. Skipped when ../shared/reference-data is absent."""

from pathlib import Path

import numpy as np
import pandas as pd
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


# ---------------------------------------------------------------------------- sdcMicro's dRisk
def onedims_microaggregation(frame: pd.DataFrame, aggr: int) -> pd.DataFrame:
    """Each column on its own: sort the values, replace each run of ``aggr`` consecutive
    values by their mean (the last run takes the remainder). The perturbation sdcMicro's dRisk
    example applies (``microaggregation(method = "onedims", aggr = 3)``), written here so the
    test needs no masking method of the product."""
    out = frame.astype(float).copy()
    for column in frame.columns:
        order = np.argsort(frame[column].to_numpy(), kind="stable")
        values = frame[column].to_numpy(dtype=float)[order]
        groups = np.minimum(np.arange(len(values)) // aggr, len(values) // aggr - 1)
        means = pd.Series(values).groupby(groups).transform("mean").to_numpy()
        column_values = np.empty(len(values))
        column_values[order] = means
        out[column] = column_values
    return out


DRISK_CASES = [
    # (file, numeric columns, perturbation, k): sdcMicro's documented example first
    ("sdcmicro/free1.csv", ["INCOME", "MONEY", "ASSETS", "DEBTS"], "onedims3", 0.05),
    ("sdcmicro/free1.csv", ["INCOME", "MONEY", "ASSETS", "DEBTS"], "onedims3", 0.01),
    ("sdcmicro/CASCrefmicrodata.csv", ["AFNLWGT", "AGI", "FEDTAX", "PTOTVAL"], "noise", 0.05),
    ("sdcmicro/Tarragona.csv", ["SALES", "LABOR.COSTS", "NET.PROFIT"], "noise", 0.1),
]


@pytest.mark.parametrize(("name", "columns", "perturbation", "k"), DRISK_CASES)
def test_drisk_agrees_with_sdcmicros_definition(name, columns, perturbation, k):
    """dRisk(x, xm, k): the share of records whose original values all lie within
    xm +/- k x sd(xm) (sdcMicro's dRiskWORK), checked against the brute-force loop of
    test_interval_disclosure on sdcMicro's own reference data. Perturbations: sdcMicro's
    documented example (one-dimensional microaggregation of groups of 3) and additive normal
    noise with SD 5% of each column's SD (numpy seed 2026)."""
    from test_interval_disclosure import brute_force_drisk

    from deid_core.risk import interval_disclosure

    path = REFERENCE / name
    original = read_table(path.read_bytes(), path.name).frame[columns].astype(float)
    if perturbation == "onedims3":
        released = onedims_microaggregation(original, 3)
    else:
        rng = np.random.default_rng(2026)
        released = original + rng.normal(0, 1, original.shape) * 0.05 * original.std().to_numpy()
    result = interval_disclosure(original, released, columns, k=k)
    expected = brute_force_drisk(original, released, k)
    assert result.share == pytest.approx(expected, abs=1e-12)
    assert 0 < result.share < 1  # the case tells records apart


# ---------------------------------------------------------------------------- sdcMicro's ldiversity
def sdcmicro_ldiversity(frame: pd.DataFrame, keys: list[str], sensitive: str) -> np.ndarray:
    """Per record (Distinct_Ldiversity, Entropy_Ldiversity) as sdcMicro's measure_risk C code
    computes them, loop by loop: the records sharing every key value form a group; distinct =
    the number of values of the sensitive variable present in the group; entropy l =
    exp(-sum p ln p) over those values. (The reference files have no missing values.)"""
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(frame[keys].itertuples(index=False)):
        groups.setdefault(tuple(row), []).append(i)
    out = np.zeros((len(frame), 2))
    values = frame[sensitive].tolist()
    for members in groups.values():
        counts: dict = {}
        for i in members:
            counts[values[i]] = counts.get(values[i], 0) + 1
        entropy = 0.0
        for count in counts.values():
            ratio = count / len(members)
            entropy += ratio * np.log(ratio)
        for i in members:
            out[i] = (len(counts), np.exp(-entropy))
    return out


LDIVERSITY_CASES = [
    # sdcMicro's documented examples: ldiversity(testdata, keyVars = c("urbrur", "roof",
    # "walls", "water", "sex"), ldiv_index = "electcon") and ldiv_index = c(.., "relat")
    ("sdcmicro/testdata.csv", ["urbrur", "roof", "walls", "water", "sex"], "electcon"),
    ("sdcmicro/testdata.csv", ["urbrur", "roof", "walls", "water", "sex"], "relat"),
    ("sdcmicro/testdata2.csv", ["urbrur", "roof", "walls", "water", "sex"], "relat"),
    ("sdcmicro/francdat.csv", ["Key1", "Key2", "Key3"], "Key4"),
    ("sdcmicro/free1.csv", ["REGION", "SEX"], "AGE"),
]


@pytest.mark.parametrize(("name", "keys", "sensitive"), LDIVERSITY_CASES)
def test_ldiversity_agrees_with_sdcmicro(name, keys, sensitive):
    from deid_core.risk import attribute_disclosure

    path = REFERENCE / name
    frame = read_table(path.read_bytes(), path.name).frame
    assert not frame[[*keys, sensitive]].isna().any().any()
    result = attribute_disclosure(frame, keys, sensitive)
    expected = sdcmicro_ldiversity(frame, keys, sensitive)
    assert np.array_equal(result.distinct_l, expected[:, 0].astype(int))
    assert np.allclose(result.entropy_l, expected[:, 1], rtol=1e-12)
    assert result.l_distinct == int(expected[:, 0].min())
    assert result.n_homogeneous == int((expected[:, 0] == 1).sum())
