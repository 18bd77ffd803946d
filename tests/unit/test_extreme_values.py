"""Numbers stay finite on extreme values, through the whole pipeline.

A data set with 1e300, -1e300, -0.0, huge integers (2**62), tiny values (1e-300) and dates in
1850 and 2100 goes through ``Workspace.risk``, ``Workspace.linkage``, ``Workspace.utility``
and every masking step class of ``deid_core.masking.STEP_TYPES``: every reported figure is
finite or None (never NaN or infinity shown as a number), or the core raises a clear
:class:`DeidError`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import DeidError
from deid_core.io.reading import read_table
from deid_core.masking import (
    STEP_TYPES,
    AbsoluteRound,
    CodePrefix,
    DateReduce,
    GaussianNoise,
    HierarchyLevel,
    HmacPseudonym,
    Icd10Chapter,
    IntervalGroup,
    KernelSmooth,
    MaskingStep,
    MergeLevels,
    Microaggregate,
    Pram,
    RandomPseudonym,
    RelativeRound,
    TopBottomCode,
    Truncate,
    UniformNoise,
    ZipToThreeDigits,
)
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace

N = 40
EXTREME_COLUMNS = ("big", "huge_int", "tiny", "neg_zero")


def extreme_frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    big = np.tile([1e300, -1e300, -0.0, 0.0, 1e-300, 1.5, -2.0, 1e299], N // 8)
    return pd.DataFrame(
        {
            "id": np.arange(1, N + 1),
            "sex": np.tile(["F", "M"], N // 2),
            "big": big,
            "huge_int": (2**62 + np.arange(N) * 2**40).astype("int64"),
            "tiny": np.arange(N) * 1e-300,
            "neg_zero": np.tile([-0.0, 0.0, -0.0, 1.0], N // 4),
            "when": pd.to_datetime(
                np.tile(["1850-01-01", "1850-12-31", "2100-01-01", "2100-12-31"], N // 4)
            ),
            "x": rng.normal(size=N),
            "y": rng.normal(size=N),
            "death": np.tile([0, 1, 1, 0, 0], N // 5),
            "code": np.tile(["A41.9", "C34.1", "U07.1", "Z99.89"], N // 4),
        }
    )


def assert_finite_figures(value, where: str = "") -> None:
    """Every number in a (nested) result is finite, or the value is None."""
    if isinstance(value, (float, np.floating)):
        assert math.isfinite(value), f"non-finite figure at {where}: {value}"
    elif isinstance(value, (int, np.integer, bool, str, type(None))):
        return
    elif isinstance(value, dict):
        for key, item in value.items():
            assert_finite_figures(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            assert_finite_figures(item, f"{where}[{index}]")
    elif isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            assert np.isfinite(value).all(), f"non-finite figures at {where}"
    elif isinstance(value, pd.DataFrame):
        for column in value.columns:
            assert_finite_figures(value[column].to_numpy(), f"{where}.{column}")
    elif dataclasses.is_dataclass(value):
        assert_finite_figures(
            {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, where
        )


def assert_masked_finite(original: pd.Series, masked: pd.Series, label: str) -> None:
    """A present, finite original value stays finite after masking (or becomes missing)."""
    if pd.api.types.is_numeric_dtype(masked.dtype) and pd.api.types.is_numeric_dtype(
        original.dtype
    ):
        values = masked.to_numpy(dtype="float64", na_value=np.nan)
        assert not np.isinf(values).any(), f"{label}: masked values are infinite"
        was_present = original.notna().to_numpy()
        assert not np.isnan(values[was_present]).any(), f"{label}: masked values became NaN"


# Sensible parameters for every step type, on a given column.
STEP_FACTORIES: dict[str, Callable[[str], MaskingStep]] = {
    "absolute_round": lambda c: AbsoluteRound(c, base=10),
    "relative_round": lambda c: RelativeRound(c, digits=2),
    "truncate": lambda c: Truncate(c, base=10),
    "interval_group": lambda c: IntervalGroup(c, width=10),
    "top_bottom_code": lambda c: TopBottomCode(c, top=100.0, bottom=-100.0),
    "uniform_noise": lambda c: UniformNoise(c, half_width=0.1, seed=1),
    "gaussian_noise": lambda c: GaussianNoise(c, sd_fraction=0.1, seed=1),
    "merge_levels": lambda c: MergeLevels(c, groups={"both": ["F", "M"]}),
    "date_reduce": lambda c: DateReduce(c, to="year"),
    "kernel_smooth": lambda c: KernelSmooth(c, ("x", "y"), kernel="gaussian", bandwidth=0.2),
    "microaggregate": lambda c: Microaggregate(c, k=3),
    "pram": lambda c: Pram(c, retention=0.7, invariant=True, seed=1),
    "zip3": lambda c: ZipToThreeDigits(c),
    "random_pseudonym": lambda c: RandomPseudonym(c),
    "hmac_pseudonym": lambda c: HmacPseudonym(c),
    "code_prefix": lambda c: CodePrefix(c, length=3),
    "icd10_chapter": lambda c: Icd10Chapter(c),
    "hierarchy": lambda c: HierarchyLevel(c, level=1, hierarchy=[["F", "any"], ["M", "any"]]),
}
COLUMNS_FOR = {
    "merge_levels": ("sex",),
    "pram": ("sex",),
    "date_reduce": ("when",),
    "code_prefix": ("code",),
    "icd10_chapter": ("code",),
    "hierarchy": ("sex",),
}
#: Pseudonym steps replace a withheld column: the record id, or a direct identifier.
PSEUDONYM_METHODS = ("random_pseudonym", "hmac_pseudonym")
KEY = bytes(range(32))


def test_every_step_type_is_covered():
    assert set(STEP_FACTORIES) == set(STEP_TYPES)


def cases():
    for method in sorted(STEP_FACTORIES):
        for column in COLUMNS_FOR.get(method, EXTREME_COLUMNS):
            yield pytest.param(method, column, id=f"{method}-{column}")


def run_pipeline(frame: pd.DataFrame, recipe: Recipe) -> None:
    """Risk, linkage, utility and the masked data: all finite, or a DeidError."""
    workspace = Workspace(frame, name="extreme")
    masked = workspace.masked_frame(recipe)
    for column in recipe.masked_columns:
        assert_masked_finite(frame[column], masked[column], column)
    risk = workspace.risk(recipe)
    assert_finite_figures(risk.to_dict(), "risk")
    assert np.isfinite(risk.record_risk).all()
    assert_finite_figures(workspace.risk(recipe, missing="wildcard").to_dict(), "risk_wildcard")
    linkage = workspace.linkage(recipe)
    assert_finite_figures(linkage, "linkage")
    assert_finite_figures(linkage.anonymity_score, "anonymity")
    table = linkage.match_table()  # the "4+" row has no single 1/i: blank (NaN) by design
    assert_finite_figures(table[table["source matches"] != "4+"], "match_table")
    try:
        tolerant = workspace.linkage(recipe, rule="tolerance")
    except DeidError:
        pass
    else:
        assert_finite_figures(tolerant, "linkage_tolerance")
    if recipe.roles.has_model:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                utility = workspace.utility(recipe, n_replicates=3)
            except DeidError:
                return
        if utility is not None:
            assert_finite_figures(utility.to_dict(), "utility")


@pytest.mark.parametrize(("method", "column"), list(cases()))
def test_step_on_extreme_values_keeps_figures_finite(method, column):
    frame = extreme_frame()
    try:
        step = STEP_FACTORIES[method](column)
    except DeidError:
        return
    quasi = tuple(dict.fromkeys((column, "sex")))
    exposure = column if pd.api.types.is_numeric_dtype(frame[column]) else "x"
    roles = Roles(quasi_identifiers=quasi, exposure=exposure, outcome="death", record_id="id")
    if method in PSEUDONYM_METHODS:
        roles = Roles(
            quasi_identifiers=("sex",),
            direct_identifiers=(column,),
            exposure="x",
            outcome="death",
            record_id="id",
        )
    recipe = Recipe(roles, (step,))
    try:
        run_pipeline(frame, recipe)
        if method in PSEUDONYM_METHODS:
            release = Workspace(frame).release(recipe, key=KEY)
            assert release.frame[column].notna().all()
            assert len(release.crosswalk) == frame[column].nunique()
    except DeidError as error:
        assert str(error)  # a clear message, and nothing else
        assert "1e+300" not in str(error) and "4611686018427387904" not in str(error)


def test_interval_grouping_of_huge_values_keeps_sign_and_magnitude():
    values = pd.Series([1e300, -1e300, 1e299, 5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        masked = IntervalGroup("v", width=10).apply(values)
    assert np.isfinite(masked).all()
    assert (np.sign(masked) == np.sign(values)).all()
    assert (masked.abs() >= values.abs() / 10).all()


@pytest.mark.parametrize("column", [*EXTREME_COLUMNS, "when", "sex"])
def test_unmasked_extreme_quasi_identifier(column):
    frame = extreme_frame()
    exposure = column if pd.api.types.is_numeric_dtype(frame[column]) else "x"
    recipe = Recipe(Roles(quasi_identifiers=(column,), exposure=exposure, outcome="death"))
    try:
        run_pipeline(frame, recipe)
    except DeidError as error:
        assert str(error)


def test_extreme_csv_through_read_table_and_pipeline():
    """The same values written as text and read back keep their values and stay finite."""
    text = extreme_frame().to_csv(index=False).replace("4611686018427387904", str(2**62))
    frame = read_table(text.encode(), "extreme.csv").frame
    assert frame["big"].abs().max() == 1e300
    assert frame["huge_int"].dtype == "int64"
    assert frame["when"].dt.year.min() == 1850 and frame["when"].dt.year.max() == 2100
    recipe = Recipe(Roles(quasi_identifiers=("big", "sex", "when"), exposure="x", outcome="death"))
    run_pipeline(frame, recipe)


def test_infinite_values_in_a_file_do_not_reach_the_figures():
    """'inf' or 1e400 in a file: read as missing (with a warning) or a clear error."""
    content = b"sex,v,death\nF,inf,0\nM,-inf,1\nF,1e400,1\nM,2,0\nF,3,1\nM,4,0\n"
    try:
        table = read_table(content, "inf.csv")
    except DeidError:
        return
    frame = table.frame
    values = frame["v"]
    if pd.api.types.is_numeric_dtype(values.dtype):
        assert not np.isinf(values.to_numpy(dtype="float64", na_value=np.nan)).any()
    recipe = Recipe(Roles(quasi_identifiers=("v", "sex"), exposure="v", outcome="death"))
    run_pipeline(frame, recipe)
