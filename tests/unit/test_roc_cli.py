"""The roc-attack command: JSON out, one-line errors (parser built here, as cli/main.py does)."""

import argparse
import json

import pytest

from deid_core.cli.roc_attack import add_parser as add_roc_attack_parser
from deid_core.errors import DeidError


def run(capsys, *argv: str) -> dict:
    parser = argparse.ArgumentParser(prog="python -m deid_core")
    add_roc_attack_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["roc-attack", *argv])
    assert args.handler(args) == 0
    return json.loads(capsys.readouterr().out)


def test_seed_example_by_flag(capsys):
    out = run(capsys, "demo:roc_example", "--score", "score", "--status", "status",
              "--known-flag", "known")  # fmt: skip
    assert out["n_unknown"] == 1 and out["share_status_recovered"] == 1
    record = out["records"][0]
    assert (record["interval_low"], record["interval_high"]) == (0.53, 1.05)
    assert record["recovered_status"] == 1 and record["pinned"]


def test_mitigated_curve_with_random_missing_records(capsys, tmp_path):
    out = run(capsys, "demo:diagnostic_test", "--score", "score", "--status", "status",
              "--missing", "5", "--seed", "3", "--thresholds", "4", "--round", "2")  # fmt: skip
    assert out["n_unknown"] == 5
    assert "every 4th threshold" in out["published"] and "2 decimals" in out["published"]
    assert 0 <= out["utility"]["utility"] <= 1
    binormal = run(capsys, "demo:diagnostic_test", "--score", "score", "--status", "status",
                   "--known-fraction", "0.9", "--seed", "1", "--binormal")  # fmt: skip
    assert binormal["share_pinned"] == 0
    assert binormal["records"][0]["interval_low"] is None  # unbounded


def test_errors_are_deid_errors(capsys):
    with pytest.raises(DeidError, match="no column"):
        run(capsys, "demo:roc_example", "--score", "score", "--status", "status",
            "--known-flag", "nope")  # fmt: skip
    with pytest.raises(DeidError, match="different columns"):
        run(capsys, "demo:roc_example", "--score", "score", "--status", "score",
            "--missing", "1")  # fmt: skip
    with pytest.raises(DeidError, match="binary"):
        run(capsys, "demo:roc_example", "--score", "status", "--status", "score",
            "--missing", "1")  # fmt: skip


def test_the_main_command_line_runs_roc_attack(capsys):
    from deid_core.cli import main

    args = ["roc-attack", "demo:roc_example", "--score", "score", "--status", "status"]
    assert main([*args, "--known-flag", "known"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["records"][0]["recovered_status"] == 1
    assert main([*args, "--known-flag", "score"]) == 2
    assert "error:" in capsys.readouterr().err
