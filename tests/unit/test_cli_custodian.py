"""The command line reads the data custodian's own file: bounds from the machine's memory, not
the hosted dashboard's upload bounds, and ``--engine duckdb`` counts a CSV file out of core."""

import json
from dataclasses import replace
from pathlib import Path

from deid_core import bounds
from deid_core.cli import main, shared
from deid_core.datasets.cohort import synthetic_cohort
from deid_core.io.reading import READ_LIMITS

KEYS = "city,sex,age_at_exposure"


def test_the_command_lines_bounds_follow_the_machines_memory():
    gib = 1024**3
    large = shared.custodian_limits(memory=64 * gib)
    assert large.file_bytes.limit == large.decoded_bytes.limit == 32 * gib
    assert large.cells.limit == 32 * gib // shared.CELL_MEMORY_BYTES  # 343 million cells
    assert large.cells.limit >= 5_000_000 * 12 * 5  # a registry's 5 million x 12, and more
    assert large.columns == READ_LIMITS.columns  # the column bound stays the dashboard's
    small = shared.custodian_limits(memory=0)  # never below the dashboard's bounds
    assert small.cells.limit == READ_LIMITS.cells.limit == bounds.CELLS.limit
    assert small.file_bytes.limit == READ_LIMITS.file_bytes.limit
    assert "--engine duckdb" in small.cells.message(10**9, "The file has")


def test_a_file_beyond_memory_is_refused_in_one_line_naming_the_engine(
    tmp_path: Path, monkeypatch, capsys
):
    path = tmp_path / "cohort.csv"
    synthetic_cohort(n=200).to_csv(path, index=False)
    monkeypatch.setattr(bounds, "FILE_BYTES", replace(bounds.FILE_BYTES, limit=100))
    monkeypatch.setattr(shared, "available_memory", lambda: 0)
    assert main(["uniqueness", str(path), "--keys", KEYS]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert "bound 'file_bytes'" in error and "--engine duckdb" in error


def test_duckdb_counts_a_csv_file_as_the_memory_engine_does(tmp_path: Path, capsys):
    path = tmp_path / "cohort.csv"
    frame = synthetic_cohort(n=2000)
    frame.loc[frame.index % 7 == 0, "sex"] = None  # missing values: a category of their own
    frame.to_csv(path, index=False)
    figures = {}
    for engine in ("memory", "duckdb"):
        assert main(["uniqueness", str(path), "--keys", KEYS, "--engine", engine]) == 0
        figures[engine] = json.loads(capsys.readouterr().out)
    assert figures["duckdb"]["combinations"] == figures["memory"]["combinations"]
    assert figures["duckdb"]["n_records"] == 2000
    assert (
        main(["uniqueness", str(tmp_path / "none.csv"), "--keys", "a", "--engine", "duckdb"]) == 2
    )
    assert "No such data file" in capsys.readouterr().err
    text = tmp_path / "data.json"
    text.write_text("{}")
    assert main(["uniqueness", str(text), "--keys", "a", "--engine", "duckdb"]) == 2
    assert "or a CSV file" in capsys.readouterr().err


def test_the_dashboards_reader_keeps_its_upload_bounds():
    assert READ_LIMITS.cells.limit == 30_000_000 and READ_LIMITS.file_bytes.limit == 50 * 1024**2
