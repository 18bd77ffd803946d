"""The release link (deid_core.release_summary): what it carries, that it carries nothing of the
source beyond the release (no removed column's name, no withheld parameter, no seed), its round
trip and bounds, and the recipient's checks of the file they received against brute force."""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from deid_core.io.export import export_release
from deid_core.io.reading import read_table
from deid_core.masking import (
    DateReduce,
    LocalSuppression,
    RandomPseudonym,
    UniformNoise,
    ZipToThreeDigits,
)
from deid_core.recipe import Recipe, Roles
from deid_core.release_summary import (
    ReleaseSummary,
    assess_received,
    check_received,
    decode_release,
    encode_release,
    summarise_release,
)
from deid_core.report import build_report
from deid_core.report.provenance import FileFingerprint
from deid_core.risk.context import ReleaseContext
from deid_core.share import MAX_PARAM_CHARS, ShareError, decode_payload, encode_payload
from deid_core.workspace import Workspace

#: Names that only the source has: none may appear in a release link.
SOURCE_ONLY = ("name", "mrn", "date_of_birth")


def visits(n_people: int = 150, seed: int = 3) -> pd.DataFrame:
    """An identifiable visits file: 1 to 3 admissions per patient, with a name, a medical
    record number and a date of birth; the readmission depends on the length of stay."""
    rng = np.random.default_rng(seed)
    first = ("Ana", "Ben", "Chloe", "David", "Emma", "Farid")
    last = ("Smith", "Garcia", "Nguyen", "Okafor", "Rossi")
    people = pd.DataFrame(
        {
            "name": [f"{rng.choice(first)} {rng.choice(last)}" for _ in range(n_people)],
            "mrn": [f"MRN{500000 + i}" for i in range(n_people)],
            "date_of_birth": (
                pd.Timestamp("1930-01-01")
                + pd.to_timedelta(rng.integers(0, 25_000, n_people), unit="D")
            ).strftime("%Y-%m-%d"),
            "zip": rng.choice(["02134", "02139", "03601", "03605", "90210"], n_people),
            "sex": rng.choice(["F", "M"], n_people),
        }
    )
    visits_per = rng.integers(1, 4, n_people)
    rows = people.loc[people.index.repeat(visits_per)].reset_index(drop=True)
    n = len(rows)
    rows["admission_date"] = (
        pd.Timestamp("2018-01-01") + pd.to_timedelta(rng.integers(0, 1800, n), unit="D")
    ).strftime("%Y-%m-%d")
    rows["length_of_stay"] = rng.geometric(0.25, n)
    logit = -2.0 + 0.15 * (rows["length_of_stay"] - 4)
    rows["readmitted"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return rows


ROLES = Roles(
    quasi_identifiers=("zip", "sex", "admission_date"),
    direct_identifiers=("name", "date_of_birth"),
    record_id="mrn",
    exposure="length_of_stay",
    outcome="readmitted",
    covariates=("sex",),
)


def recipe(noise: bool = False, suppress: bool = False) -> Recipe:
    steps = [
        RandomPseudonym("mrn", released_as="study_id"),
        ZipToThreeDigits("zip"),
        DateReduce("admission_date", to="year"),
    ]
    if noise:
        steps.append(UniformNoise("length_of_stay", 0.37, seed=987654321))
    data_steps = (LocalSuppression(k=3),) if suppress else ()
    return Recipe(ROLES, tuple(steps), data_steps)


def released(frame: pd.DataFrame, rec: Recipe, mechanism: bool = False, fmt: str = "csv"):
    """The exported file, the report on it and the release summary, as the Export page makes
    them."""
    workspace = Workspace(frame, name="visits")
    release = workspace.release(rec)
    export = export_release(release.frame, fmt, shuffle_seed=11)
    fingerprint = FileFingerprint.of(export.data, f"visits_masked.{fmt}")
    report = build_report(
        workspace,
        rec,
        dataset_name="visits.csv",
        synthetic=True,
        context=ReleaseContext(public=True, min_cell_size=3),
        include_parameters=mechanism,
        n_replicates=2,
        released_file=fingerprint,
    )
    summary = summarise_release(
        report,
        rec,
        frame.columns,
        release.frame.columns,
        export.columns,
        export.n_rows,
        export.format.label,
    )
    return export, report, summary


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return visits()


@pytest.fixture(scope="module")
def made(frame):
    return released(frame, recipe(noise=True, suppress=True))


def test_the_summary_describes_the_release(frame, made):
    export, report, summary = made
    read = pd.read_csv(io.BytesIO(export.data))
    assert summary.columns == tuple(read.columns)
    assert "study_id" in summary.columns and summary.person_column == "study_id"
    assert summary.removed == 3  # name, date_of_birth, mrn (replaced by pseudonyms)
    assert summary.rows == len(frame) == len(read)
    assert summary.sha256 == hashlib.sha256(export.data).hexdigest()
    assert summary.size == len(export.data)
    assert summary.created == report.created
    assert summary.quasi_identifiers == ("zip", "sex", "admission_date")
    assert summary.missing == "wildcard"  # suppressed cells are blank: they match any value
    assert summary.verdict.measure == report.verdict.measure
    assert summary.verdict.value == pytest.approx(report.verdict.value)
    assert summary.verdict.threshold == pytest.approx(report.verdict.threshold)
    assert summary.verdict.meets == report.verdict.meets
    assert summary.classes.k == report.judged.classes.k
    model = summary.model
    assert model is not None and model.measure == "Odds ratio"
    effect = report.utility.effect()
    assert model.original.value == pytest.approx(effect.value)
    assert (model.original.low, model.original.high) == pytest.approx((effect.low, effect.high))
    masked = report.utility.masked_effect()
    assert model.masked.value == pytest.approx(masked.value)
    # Suppression changes a model column (sex): the model is fitted to the released draw.
    assert model.replicates is None and model.masked.records == report.utility.masked.n


def test_round_trip(made):
    summary = made[2]
    assert decode_release(encode_release(summary)) == summary
    assert ReleaseSummary.from_dict(json.loads(summary.to_json())) == summary


@pytest.mark.parametrize("mechanism", [False, True])
def test_no_source_only_name_seed_or_withheld_parameter_in_the_link(frame, mechanism):
    rec = recipe(noise=True, suppress=True)
    summary = released(frame, rec, mechanism=mechanism)[2]
    content = json.dumps(decode_payload(encode_release(summary)))
    for name in SOURCE_ONLY:
        assert not re.search(rf"\b{name}\b", content), name
    for value in frame["mrn"].head(20):
        assert value not in content
    assert "987654321" not in content  # the noise's seed, never
    assert "seed" not in content
    # The noise's half-width travels only when the custodian includes the mechanism.
    assert ("0.37" in content) is mechanism
    assert "parameters withheld" in content if not mechanism else "uniform noise" in content


def test_a_summary_naming_a_column_the_file_does_not_have_is_refused(made):
    data = made[2].to_dict()
    data["model"]["covariates"] = ["date_of_birth"]
    with pytest.raises(ShareError, match="does not have"):
        ReleaseSummary.from_dict(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"v": 9}, "newer version"),
        ({"v": None}, "format version"),
        ({"sha256": "abc"}, "64 lower-case"),
        ({"rows": -1}, "at least 0"),
        ({"rows": True}, "whole number"),
        ({"columns": []}, "at least one column"),
        ({"columns": ["a", "a"]}, "twice"),
        ({"seed": 3}, "unknown field"),
        ({"verdict": {"meets": "yes"}}, "meets"),
        ({"missing": "maybe"}, "missing"),
        ({"person_column": "mrn"}, "does not have"),
    ],
)
def test_bad_content_is_a_plain_message(made, change, message):
    data = {**made[2].to_dict(), **change}
    if "verdict" in change:
        data["verdict"] = {**made[2].verdict.to_dict(), **change["verdict"]}
    with pytest.raises(ShareError, match=message):
        decode_release(encode_payload(data))


def test_damaged_and_oversized_links_are_refused(made):
    encoded = encode_release(made[2])
    with pytest.raises(ShareError, match="damaged"):
        decode_release(encoded[: len(encoded) // 2])
    with pytest.raises(ShareError, match="empty"):
        decode_release("")
    with pytest.raises(ShareError, match="link_chars"):
        decode_release("A" * (MAX_PARAM_CHARS + 1))
    big = replace(made[2], steps=tuple(f"step {i} " + "x" * 40 for i in range(4000)))
    with pytest.raises(ShareError, match="link_chars"):
        encode_release(big)


# ---------------------------------------------------------------------------- checks
def _read(data: bytes, name: str = "received.csv") -> pd.DataFrame:
    return read_table(data, name).frame


def test_the_file_exported_is_the_release_described(made):
    export, _, summary = made
    check = check_received(summary, export.data, _read(export.data))
    assert check.matches, check.differences
    assert check.sha256 == summary.sha256


def test_an_altered_file_says_what_differs(made):
    export, _, summary = made
    read = _read(export.data)
    altered = read.iloc[:-1].drop(columns=["sex"]).assign(extra=1)
    data = altered.to_csv(index=False).encode()
    check = check_received(summary, data, _read(data))
    assert not check.matches
    text = " ".join(check.differences)
    assert "SHA-256" in text and hashlib.sha256(data).hexdigest() in text
    assert f"{len(read) - 1:,} rows" in text
    assert "'sex'" in text and "'extra'" in text
    # One byte changed, same shape: only the checksum differs.
    changed = export.data.replace(b"\n", b"\r\n", 1)
    check = check_received(summary, changed, _read(changed))
    assert [d for d in check.differences if "SHA-256" not in d] == []
    assert len(check.differences) == 1


def _brute_force(frame: pd.DataFrame, qis, person: str | None) -> tuple[int, float, float]:
    """k, maximum and average risk by definition: a row's class is every row agreeing with it
    on each quasi-identifier where both are present (a blank matches anything); its size is
    the number of distinct people among them; a person's size is the smallest over their rows."""
    values = frame[list(qis)].astype(object).where(frame[list(qis)].notna(), None).to_numpy()
    who = frame[person].to_numpy() if person else np.arange(len(frame))
    sizes = {}
    for i in range(len(frame)):
        people = set()
        for j in range(len(frame)):
            pairs = zip(values[i], values[j], strict=True)
            if all(a is None or b is None or a == b for a, b in pairs):
                people.add(who[j])
        sizes[who[i]] = min(sizes.get(who[i], len(frame) + 1), len(people))
    f = np.array(list(sizes.values()))
    return int(f.min()), float((1 / f).max()), float((1 / f).mean())


def test_the_recipient_counts_the_custodians_class_figures(made):
    export, _, summary = made
    read = _read(export.data)
    assert read[list(summary.quasi_identifiers)].isna().any().any()  # suppressed cells
    mine = assess_received(summary, read)
    assert mine.unit == summary.classes.unit == "people"
    assert mine.k == summary.classes.k
    assert mine.max_risk == pytest.approx(summary.classes.max_risk)
    assert mine.average_risk == pytest.approx(summary.classes.average_risk)
    k, top, mean = _brute_force(read, summary.quasi_identifiers, summary.person_column)
    assert mine.k == k
    assert (mine.max_risk, mine.average_risk) == (pytest.approx(top), pytest.approx(mean))
