"""Cologne's Table 2 as numbers: schemes side by side, random ones over replicates."""

import pandas as pd
import pytest

from deid_core.datasets.cohort import synthetic_cohort
from deid_core.recipe import Recipe, Roles
from deid_core.utility.schemes import cologne_schemes, scheme_comparison
from deid_core.workspace import Workspace

ROLES = Roles(
    quasi_identifiers=("stomach_dose_gy",), exposure="stomach_dose_gy", outcome="stomach_cancer"
)


def test_six_cologne_schemes_side_by_side():
    workspace = Workspace(synthetic_cohort(n=6000))
    recipe = Recipe(ROLES)
    schemes = cologne_schemes(recipe, seed=3)
    assert len(schemes) == 6
    results = [(name, workspace.utility(r, n_replicates=20)) for name, r in schemes]
    table = scheme_comparison(results)
    assert table["scheme"].tolist()[0] == "No masking"
    assert len(table) == 7
    reference = table.iloc[0]
    assert reference["analysis_potential"] == 1.0 and reference["relative_bias_pct"] == 0.0
    for _, row in table.iloc[1:].iterrows():
        # The Cologne arithmetic: MSE = SE^2 + bias^2 (mean over replicates for noise).
        if row["replicates"] == 0:
            bias = row["estimate"] - reference["estimate"]
            assert row["mse"] == pytest.approx(row["se"] ** 2 + bias**2)
        assert row["analysis_potential"] == pytest.approx(reference["mse"] / row["mse"])
    noisy = table[table["scheme"] == "noise +/-0.1"].iloc[0]
    assert noisy["replicates"] == 20
    assert noisy["estimate_min"] <= noisy["estimate"] <= noisy["estimate_max"]


def test_a_scheme_that_cannot_be_fitted_is_reported_not_zeroed():
    frame = pd.DataFrame({"x": [i / 10 for i in range(30)], "y": [0] * 30})
    roles = Roles(quasi_identifiers=("x",), exposure="x", outcome="y")
    workspace = Workspace(frame)
    table = scheme_comparison([("current", workspace.utility(Recipe(roles)))])
    assert len(table) == 1  # no reference row without an unmasked fit
    assert pd.isna(table.iloc[0]["estimate"]) and "no events" in table.iloc[0]["note"]
