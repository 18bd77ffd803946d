"""The engines: DuckDB and Spark give the very figures of the in-memory path on the same
Parquet files (missing values under both rules, weights, every generalisation step, a lattice of
6 keys), from aggregates alone; the SQL steps reproduce the masking steps value for value; bad
input gets one-line messages.

The Spark tests (marker ``spark``) share one Spark session per test run; ``-m "not spark"``
leaves them out. They are skipped when pyspark or Java is missing, except in CI (``CI`` set),
where scripts/test.sh installs both and a missing one is a failure.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.cli import main
from deid_core.engines import (
    CrossTab,
    DuckDBEngine,
    SparkEngine,
    distribution_from_cells,
    risk_from_cells,
    sample_risk_from_cells,
    uniqueness_from_crosstab,
)
from deid_core.engines import sql as engine_sql
from deid_core.engines.sources import read_parquet_frame
from deid_core.errors import DataError, DeidError, RecipeError
from deid_core.masking import (
    AbsoluteRound,
    DateReduce,
    IntervalGroup,
    MergeLevels,
    RelativeRound,
    TopBottomCode,
    Truncate,
    UniformNoise,
)
from deid_core.recipe import Recipe, Roles
from deid_core.risk import risk_summary
from deid_core.risk.classes import EncodedColumn, class_size_distribution, compatible_class_sizes
from deid_core.risk.uniqueness import record_uniqueness
from deid_core.workspace import Workspace

QIS = ("age", "dose", "sex", "region", "diagnosed")
LATTICE_KEYS = ("age", "dose", "sex", "region", "diagnosed", "stage")
STEPS = (
    TopBottomCode("age", top=90),
    IntervalGroup("age", width=5, release="label"),
    RelativeRound("dose", digits=2),
    TopBottomCode("dose", top=2.0),
    MergeLevels("region", {"north": ["a", "b"], "south": ["c"]}),
    DateReduce("diagnosed", to="year"),
    AbsoluteRound("stage", base=2),
)


def registry(n: int, seed: int) -> pa.Table:
    """A small registry with what real files hold: NaN and infinite numbers, text with spaces
    and missing markers, missing values in every key, dates, integers, dyadic weights (so that
    weight sums are exact in any order of summation)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 100, n).astype(float)
    age[rng.random(n) < 0.05] = np.nan
    dose = np.round(rng.lognormal(-2.0, 1.5, n), 4)
    dose[rng.random(n) < 0.04] = np.nan
    dose[:4] = [np.inf, -0.0004, 0.0, -np.inf]
    sex = rng.choice(["F", "M", " F", "M ", "NA", "", "."], n, p=[0.4, 0.4, 0.05, 0.05, 0.04,
                                                              0.03, 0.03])  # fmt: skip
    region = rng.choice(list("abcdefg"), n).astype(object)
    region[rng.random(n) < 0.04] = None
    diagnosed = pd.Series(
        pd.to_datetime("1995-01-01") + pd.to_timedelta(rng.integers(0, 4000, n), "D")
    )
    diagnosed[rng.random(n) < 0.03] = pd.NaT
    stage = pd.array(rng.integers(0, 9, n), dtype="Int64")
    stage[rng.random(n) < 0.05] = pd.NA
    weight = rng.integers(1, 9, n) * 0.5
    return pa.table(
        {
            "age": pa.array(age),  # NaN stored as NaN
            "dose": pa.array(dose, from_pandas=True),  # NaN stored as null
            "sex": pa.array(sex),
            "region": pa.array(region, type=pa.string()),
            "diagnosed": pa.array(diagnosed),
            "stage": pa.array(stage),
            "weight": pa.array(weight),
        }
    )


@pytest.fixture(scope="module")
def parquet_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two Parquet files in a folder (the engines read folders)."""
    folder = tmp_path_factory.mktemp("registry")
    pq.write_table(registry(1500, 1), folder / "part-0.parquet")
    pq.write_table(registry(1500, 2), folder / "part-1.parquet")
    return folder


@pytest.fixture(scope="module")
def frame(parquet_folder: Path) -> pd.DataFrame:
    return read_parquet_frame(parquet_folder)


@pytest.fixture(scope="module")
def spark_engine(parquet_folder: Path):
    """A Spark engine over the folder (one session for the whole test run)."""
    if os.environ.get("CI"):
        return SparkEngine(path=parquet_folder)
    try:
        return SparkEngine(path=parquet_folder)
    except DeidError as error:
        pytest.skip(f"Spark is not available here: {error}")


def crosstab_of(engine, keys, recipe: Recipe) -> CrossTab:
    return engine.crosstab(keys, {k: recipe.steps_for(k) for k in keys}, recipe.roles.weight)


def recipe_for(keys=QIS, steps=STEPS, weight="weight") -> Recipe:
    kept = tuple(s for s in steps if s.column in keys)
    return Recipe(Roles(quasi_identifiers=tuple(keys), weight=weight), kept)


def assert_close_figures(expected: dict, got: dict) -> None:
    """Counts equal; floating figures equal to 1e-12 relative (sums of 1/F over records or
    over cells differ only in the order of summation)."""
    assert expected.keys() == got.keys()
    for name, value in expected.items():
        if isinstance(value, float):
            assert math.isclose(value, got[name], rel_tol=1e-12), name
        elif isinstance(value, dict):
            assert_close_figures(value, got[name])
        else:
            assert value == got[name], name


def memory_figures(frame: pd.DataFrame, recipe: Recipe, missing: str) -> dict:
    workspace = Workspace(frame)
    risk = workspace.risk(recipe, missing)
    return {
        "risk": risk.to_dict(),
        "distribution": class_size_distribution(risk.class_size, None, missing),
        "open": workspace.sample_risk(recipe, None, missing=missing).to_dict(),
        "open_fraction": workspace.sample_risk(recipe, 0.2, missing=missing).to_dict(),
    }


def engine_figures(crosstab: CrossTab, missing: str) -> dict:
    return {
        "risk": risk_from_cells(crosstab, missing).to_dict(),
        "distribution": distribution_from_cells(crosstab, missing),
        "open": sample_risk_from_cells(crosstab, None, missing=missing).to_dict(),
        "open_fraction": sample_risk_from_cells(crosstab, 0.2, missing=missing).to_dict(),
    }


def check_same(expected: dict, got: dict) -> None:
    assert got["risk"] == expected["risk"]
    pd.testing.assert_frame_equal(got["distribution"], expected["distribution"])
    assert_close_figures(expected["open"], got["open"])
    assert_close_figures(expected["open_fraction"], got["open_fraction"])


# ----------------------------------------------------------------------------- DuckDB


@pytest.mark.parametrize("missing", ["category", "wildcard"])
def test_duckdb_gives_the_in_memory_figures(parquet_folder, frame, missing):
    recipe = recipe_for()
    with DuckDBEngine(parquet_folder) as engine:
        crosstab = crosstab_of(engine, QIS, recipe)
    assert crosstab.n_records == len(frame)
    assert crosstab.n_cells < len(frame)  # aggregates, not records
    check_same(memory_figures(frame, recipe, missing), engine_figures(crosstab, missing))


def test_duckdb_lattice_of_six_keys_equals_the_in_memory_one(parquet_folder, frame):
    recipe = recipe_for(LATTICE_KEYS, weight=None)
    masked = pd.DataFrame({k: recipe.apply_to_column(frame, k) for k in LATTICE_KEYS})
    expected = record_uniqueness(masked, LATTICE_KEYS).to_dict()
    with DuckDBEngine(parquet_folder) as engine:
        crosstab = crosstab_of(engine, LATTICE_KEYS, recipe)
    assert uniqueness_from_crosstab(crosstab).to_dict() == expected


TRICKY = np.array(
    [0.35, 2.5, -2.5, 0.25, 1.005, 2.675, -0.0049, 999.99999999, 1e7 + 0.0005, 123456.789,
     -7.45, 0.000123456, 5e-8, 9.95, 0.0, -0.0, 4.5e9, 12345678912.5, np.nan, 0.3, 0.7,
     1.1, -0.3, 71638.54, 0.99999999999, 2.4999999999999996, 1e14 + 0.1, 7.5, 12.5, -17.5]
)  # fmt: skip
#: Values a grid of one of VALUE_STEPS reaches beyond the SQL engines' exact arithmetic.
BEYOND_THE_FAST_PATH = {"base 0.1": (AbsoluteRound("x", base=0.1), 1e15 + 3),
                        "relative 1e-25": (RelativeRound("x", digits=2), 1.5e-25)}  # fmt: skip
INTERVAL_STEPS = [
    IntervalGroup("x", width=0.1),
    IntervalGroup("x", width=5, origin=2.5),
    IntervalGroup("x", width=10, origin=3),
    IntervalGroup("x", width=0.001),
]
VALUE_STEPS = [
    AbsoluteRound("x", base=0.1),
    AbsoluteRound("x", base=5),
    AbsoluteRound("x", decimals=2),
    AbsoluteRound("x", base=0.001),
    Truncate("x", base=0.1),
    Truncate("x", decimals=0),
    RelativeRound("x", digits=1),
    RelativeRound("x", digits=2),
    RelativeRound("x", digits=3),
    TopBottomCode("x", top=100.0, bottom=-1.0),
]


@pytest.fixture(scope="module")
def tricky_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(7)
    values = np.concatenate([TRICKY, rng.normal(0, 50, 2000).round(3), rng.lognormal(0, 3, 500)])
    path = tmp_path_factory.mktemp("tricky") / "x.parquet"
    pq.write_table(pa.table({"x": values}), path)
    return path


def sql_values(engine, step) -> set[float]:
    table = engine._run(
        engine_sql.render(
            engine_sql.crosstab_query(["x"], {"x": (step,)}, None).sql(
                engine.kinds(), engine.source
            ),
            engine.dialect,
        )
    )
    return {v for v in table["k0"].to_pylist() if v is not None}


def python_values(path: Path, step) -> set[float]:
    masked = step.apply(read_parquet_frame(path)["x"])
    return set(masked.dropna().astype(float).tolist())


@pytest.mark.parametrize("step", VALUE_STEPS, ids=lambda s: s.describe())
def test_duckdb_steps_give_the_masking_steps_values(tricky_file, step):
    with DuckDBEngine(tricky_file) as engine:
        assert sql_values(engine, step) == python_values(tricky_file, step)


def interval_counts_in_order(engine, step) -> list[int]:
    table = engine._run(
        engine_sql.render(
            engine_sql.crosstab_query(["x"], {"x": (step,)}, None).sql(
                engine.kinds(), engine.source
            ),
            engine.dialect,
        )
    ).to_pandas()
    table = table[table["k0"].notna()].sort_values("k0")
    return table["records"].astype(int).tolist()


@pytest.mark.parametrize("step", INTERVAL_STEPS, ids=lambda s: s.describe())
def test_duckdb_intervals_are_the_masking_steps_cells(tricky_file, step):
    """The cells' numbers from SQL partition the values as the masking step's intervals do
    (the same cells in the same order, with the same records)."""
    values = read_parquet_frame(tricky_file)["x"].to_numpy(dtype="float64")
    cells = step.intervals(values[np.isfinite(values)])
    expected = pd.Series(cells.lower).value_counts().sort_index().tolist()
    with DuckDBEngine(tricky_file) as engine:
        assert interval_counts_in_order(engine, step) == expected


@pytest.mark.parametrize("case", BEYOND_THE_FAST_PATH, ids=str)
def test_values_beyond_the_exact_arithmetic_are_refused_not_misrounded(tmp_path, case):
    step, value = BEYOND_THE_FAST_PATH[case]
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"x": [1.25, value]}), path)
    with DuckDBEngine(path) as engine, pytest.raises(RecipeError, match="--engine memory"):
        engine.crosstab(["x"], {"x": (step,)})


def test_a_nan_stored_in_parquet_is_missing_for_duckdb(tmp_path):
    """Parquet's statistics leave NaN out; DuckDB must not trust them to fold the NaN test."""
    path = tmp_path / "nan.parquet"
    pq.write_table(pa.table({"x": [1.0, np.nan, 2.0, np.nan]}), path)
    with DuckDBEngine(path) as engine:
        crosstab = engine.crosstab(["x"])
    assert crosstab.observed[:, 0].sum() == 2 and crosstab.n_cells == 3


def test_wildcards_from_cells_equal_the_brute_force_on_records():
    """Compatibility depends only on a record's values, so summing the compatible cells'
    records gives each record's compatible count: (1, NA) matches (1, 2) and (1, 3), which do
    not match each other; (NA, NA) matches everyone."""
    records = pd.DataFrame(
        {"a": [1, 1, 1, 1, 2, np.nan, 2], "b": [np.nan, 2, 3, 3, 3, np.nan, np.nan]}
    )
    brute = np.array(
        [
            sum(
                all(pd.isna(x) or pd.isna(y) or x == y for x, y in zip(r1, r2, strict=True))
                for r2 in records.itertuples(index=False)
            )
            for r1 in records.itertuples(index=False)
        ]
    )
    assert np.array_equal(compatible_class_sizes(records, ["a", "b"]), brute)
    cells = records.groupby(["a", "b"], dropna=False).size().reset_index(name="n")
    codes = [pd.factorize(cells[c], use_na_sentinel=False) for c in "ab"]
    crosstab = CrossTab(
        ("a", "b"),
        tuple(EncodedColumn(c.astype(np.int64), len(u)) for c, u in codes),
        cells[["a", "b"]].notna().to_numpy(),
        cells["n"].to_numpy(),
    )

    def values(row: tuple) -> tuple:
        return tuple(None if pd.isna(v) else v for v in row)

    sizes = crosstab.class_sizes("wildcard")
    per_cell = {values(row): size for row, size in zip(cells[["a", "b"]].itertuples(
        index=False), sizes, strict=True)}  # fmt: skip
    got = [per_cell[values(row)] for row in records.itertuples(index=False)]
    assert got == brute.tolist()
    expected = risk_summary(records, ["a", "b"], missing="wildcard").to_dict()
    assert risk_from_cells(crosstab, "wildcard").to_dict() == expected


def test_steps_that_need_the_records_are_refused(parquet_folder):
    with DuckDBEngine(parquet_folder) as engine, pytest.raises(RecipeError, match="in memory"):
        engine.crosstab(["dose"], {"dose": (UniformNoise("dose", 0.1, seed=1),)})


def test_a_step_after_interval_grouping_is_refused(parquet_folder):
    steps = (IntervalGroup("age", width=5), AbsoluteRound("age", base=10))
    with DuckDBEngine(parquet_folder) as engine, pytest.raises(RecipeError, match="last step"):
        engine.crosstab(["age"], {"age": steps})


def test_text_that_is_not_a_number_is_refused_by_count(parquet_folder):
    with DuckDBEngine(parquet_folder) as engine, pytest.raises(RecipeError, match=r"cannot read"):
        engine.crosstab(["region"], {"region": (AbsoluteRound("region", base=1),)})


def test_bad_weights_and_absent_columns_get_one_line_messages(tmp_path):
    path = tmp_path / "w.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3], "w": [1.0, None, 2.0], "v": [1.0, -1.0, 2.0]}), path)
    with DuckDBEngine(path) as engine:
        with pytest.raises(DataError, match="missing values"):
            engine.crosstab(["a"], weight="w")
        with pytest.raises(DataError, match="positive and finite"):
            engine.crosstab(["a"], weight="v")
        with pytest.raises(DataError, match="no column"):
            engine.crosstab(["nope"])


def test_spark_without_pyspark_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(DeidError, match=r"pip install -r requirements-spark\.txt"):
        engine_sql.spark_session()


def test_spark_without_java_runtime_says_what_to_install(monkeypatch):
    pytest.importorskip("pyspark")
    monkeypatch.setattr(engine_sql.shutil, "which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(DeidError, match="default-jre-headless"):
        engine_sql.spark_session()


def run_cli(capsys, *args) -> tuple[int, dict | str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else captured.err)


@pytest.mark.parametrize("missing", ["category", "wildcard"])
def test_cli_assess_gives_the_same_figures_in_memory_and_in_duckdb(
    parquet_folder, tmp_path, capsys, missing
):
    recipe_file = tmp_path / "recipe.json"
    recipe_file.write_text(recipe_for().to_json())
    base = ["assess", parquet_folder, "--recipe", recipe_file, "--missing", missing]
    code_m, memory = run_cli(capsys, *base)
    code_d, duck = run_cli(capsys, *base, "--engine", "duckdb")
    assert code_m == code_d == 0
    assert duck["engine"] == "duckdb" and memory["engine"] == "memory"
    assert duck["n_records"] == memory["n_records"]
    assert {k: memory["risk"][k] for k in duck["risk"]} == duck["risk"]
    assert duck["class_size_distribution"] == memory["class_size_distribution"]
    assert_close_figures(memory["open_data"], duck["open_data"])


def test_cli_uniqueness_in_duckdb_equals_memory(parquet_folder, capsys):
    args = ["uniqueness", parquet_folder, "--keys", ",".join(LATTICE_KEYS)]
    assert run_cli(capsys, *args)[1] == run_cli(capsys, *args, "--engine", "duckdb")[1]


def test_cli_engine_errors_are_one_line(parquet_folder, capsys):
    code, err = run_cli(capsys, "assess", parquet_folder, "--qi", "age", "--engine", "duckdb",
                        "--exposure", "age", "--outcome", "sex")  # fmt: skip
    assert code == 2 and "need the records" in err and err.count("\n") == 1
    code, err = run_cli(capsys, "assess", "table:registry", "--qi", "age", "--engine", "duckdb")
    assert code == 2 and "Spark only" in err
    code, err = run_cli(capsys, "uniqueness", "demo:cohort", "--keys", "sex", "--engine", "duckdb")
    assert code == 2 and "Parquet" in err


# ----------------------------------------------------------------------------- Spark


@pytest.mark.spark
def test_spark_gives_the_duckdb_and_in_memory_figures(parquet_folder, frame, spark_engine):
    """Both missing-value rules, weights, every step; the 6-key lattice."""
    recipe = recipe_for()
    spark = crosstab_of(spark_engine, QIS, recipe)
    with DuckDBEngine(parquet_folder) as engine:
        duck = crosstab_of(engine, QIS, recipe)
        duck_lattice = crosstab_of(engine, LATTICE_KEYS, recipe_for(LATTICE_KEYS, weight=None))
    for missing in ("category", "wildcard"):
        got = engine_figures(spark, missing)
        check_same(memory_figures(frame, recipe, missing), got)
        expected = engine_figures(duck, missing)
        assert got["open"] == expected["open"]  # both sum the same cells
    lattice = crosstab_of(spark_engine, LATTICE_KEYS, recipe_for(LATTICE_KEYS, weight=None))
    assert (
        uniqueness_from_crosstab(lattice).to_dict()
        == uniqueness_from_crosstab(duck_lattice).to_dict()
    )


@pytest.mark.spark
def test_spark_steps_give_the_masking_steps_values(tricky_file, spark_engine):
    with SparkEngine(path=tricky_file) as engine:
        for step in VALUE_STEPS:
            assert sql_values(engine, step) == python_values(tricky_file, step), step.describe()


@pytest.mark.spark
def test_cli_runs_on_spark(parquet_folder, capsys, spark_engine):
    args = ["uniqueness", parquet_folder, "--keys", "age,sex,region"]
    assert run_cli(capsys, *args)[1] == run_cli(capsys, *args, "--engine", "spark")[1]
