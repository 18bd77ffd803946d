"""Information loss as sdcMicro's dUtility defines it, against an independent computation of
its published definitions (plain sums and ``statistics.stdev`` for IL1s; a pairwise covariance
of the scaled columns and a general eigen-solver for eigen), on sdcMicro's CASCrefmicrodata
(microaggregated) and Tarragona (noise, and suppressed values)."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest
from sdcmicro_data import sdcmicro_data

from deid_core.errors import DataError
from deid_core.masking import GaussianNoise, MultivariateMicroaggregate
from deid_core.recipe import Recipe, Roles
from deid_core.utility.information_loss import information_loss
from deid_core.workspace import Workspace


def il1s_by_definition(x: pd.DataFrame, xm: pd.DataFrame) -> float:
    """sum_j sum_i |x_ij - xm_ij| / (S_j sqrt 2), cells missing in either left out."""
    total = 0.0
    for column in x.columns:
        sd = statistics.stdev(v for v in x[column] if not math.isnan(v))
        for a, b in zip(x[column], xm[column], strict=True):
            if not (math.isnan(a) or math.isnan(b)):
                total += abs(a - b) / (sd * math.sqrt(2))
    return total


def eigen_by_definition(x: pd.DataFrame, xm: pd.DataFrame) -> float:
    """sum |e1 - e2| / e1, e = eigenvalues (largest first) of var(scale(.)), pairwise."""

    def scaled_covariance(frame: pd.DataFrame) -> np.ndarray:
        columns = []
        for column in frame.columns:
            values = [v for v in frame[column] if not math.isnan(v)]
            mean, sd = statistics.fmean(values), statistics.stdev(values)
            columns.append([(v - mean) / sd for v in frame[column]])
        p = len(columns)
        out = np.empty((p, p))
        for a in range(p):
            for b in range(p):
                pairs = [
                    (u, v)
                    for u, v in zip(columns[a], columns[b], strict=True)
                    if not (math.isnan(u) or math.isnan(v))
                ]
                mu = statistics.fmean(u for u, _ in pairs)
                mv = statistics.fmean(v for _, v in pairs)
                out[a, b] = sum((u - mu) * (v - mv) for u, v in pairs) / (len(pairs) - 1)
        return out

    e1 = np.sort(np.linalg.eigvals(scaled_covariance(x)).real)[::-1]
    e2 = np.sort(np.linalg.eigvals(scaled_covariance(xm)).real)[::-1]
    return float(np.sum(np.abs(e1 - e2) / e1))


def test_casc_microaggregated_matches_the_definitions():
    data = sdcmicro_data("CASCrefmicrodata.csv")[
        ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL"]
    ]
    step = MultivariateMicroaggregate(columns=tuple(data.columns), k=3)
    masked = pd.DataFrame(step.apply(data).values)
    loss = information_loss(data, masked, list(data.columns))
    assert loss.il1s == pytest.approx(il1s_by_definition(data, masked), rel=1e-10)
    assert loss.eigen == pytest.approx(eigen_by_definition(data, masked), rel=1e-8)
    assert loss.il1s > 100  # a sum over 5,400 cells, not a mean
    assert loss.cells == 5400


def test_tarragona_with_noise_and_suppressed_values_matches_the_definitions():
    data = sdcmicro_data("Tarragona.csv").iloc[:, 4:7].astype(float)
    masked = data.copy()
    for j, column in enumerate(data.columns):
        masked[column] = GaussianNoise(column, sd_fraction=0.2, seed=j).apply(data[column])
    masked.iloc[::7, 0] = np.nan  # suppressed values: left out of IL1s, pairwise in eigen
    loss = information_loss(data, masked, list(data.columns))
    assert loss.il1s == pytest.approx(il1s_by_definition(data, masked), rel=1e-10)
    assert loss.eigen == pytest.approx(eigen_by_definition(data, masked), rel=1e-8)
    assert sum(loss.il1s_by_column.values()) == pytest.approx(loss.il1s)


def test_worked_example():
    x = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, 0.0, 2.0]})
    xm = pd.DataFrame({"a": [1.0, 2.0, 4.0], "b": [1.0, 0.0, 2.0]})
    loss = information_loss(x, xm, ["a", "b"])
    assert loss.il1s == pytest.approx(1 / math.sqrt(2))  # |3 - 4| / (SD 1 x sqrt 2)
    assert information_loss(x, x, ["a", "b"]).il1s == 0
    assert information_loss(x, x, ["a", "b"]).eigen == 0
    assert information_loss(x, xm, ["a"]).eigen is None  # one column: no correlation matrix


def test_messages_and_a_released_subset():
    x = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "t": ["p", "q", "r", "s"]})
    with pytest.raises(DataError, match="'t' is not numeric"):
        information_loss(x, x, ["a", "t"])
    with pytest.raises(DataError, match="no column"):
        information_loss(x, x, ["z"])
    subset = x.iloc[[1, 3]].assign(a=[2.0, 6.0])
    assert information_loss(x, subset, ["a"]).il1s == pytest.approx(
        2 / (statistics.stdev([1, 2, 3, 4]) * math.sqrt(2))
    )


def test_workspace_default_columns_are_the_numeric_roles():
    frame = pd.DataFrame(
        {"age": [20, 30, 40, 50, 60, 70], "sex": list("FMFMFM"), "y": [0, 1, 0, 1, 1, 0]}
    )
    roles = Roles(quasi_identifiers=("age", "sex"), outcome="y", exposure="age")
    workspace = Workspace(frame)
    recipe = Recipe(roles, data_steps=(MultivariateMicroaggregate(("age",), 3, strata=("sex",)),))
    assert workspace.information_columns(recipe) == ["age", "y"]
    loss = workspace.information_loss(recipe)
    assert loss.il1s > 0 and loss.columns == ("age", "y")
