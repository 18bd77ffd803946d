"""The clinical steps (dates relative to a person's anchor, date shifting per person, date of
birth to age, calendar generalisation, code prefixes and ICD-10 chapters) against brute-force
references written independently of the steps' vectorised code."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest

from deid_core.datasets import load_demo
from deid_core.errors import RecipeError
from deid_core.masking import (
    AgeAt,
    CodePrefix,
    DateReduce,
    DateShift,
    Icd10Chapter,
    RelativeDates,
    data_step_from_dict,
    step_from_dict,
)
from deid_core.recipe import Recipe, Roles
from deid_core.report.formatting import parameters_withheld, step_text
from deid_core.risk import risk_basis
from deid_core.risk.linkage import masking_tolerance
from deid_core.workspace import Workspace


def _random_visits(seed: int, n_people: int = 40) -> pd.DataFrame:
    """Several visits per person, admission and discharge as ISO text, some missing."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_people):
        start = dt.date(2015, 1, 1) + dt.timedelta(days=int(rng.integers(0, 3000)))
        for _ in range(int(rng.integers(1, 5))):
            start += dt.timedelta(days=int(rng.integers(0, 400)))
            stop = start + dt.timedelta(days=int(rng.integers(0, 20)))
            rows.append(
                {
                    "pid": f"P{p}",
                    "admit": start.isoformat(),
                    "discharge": None if rng.random() < 0.05 else stop.isoformat(),
                    "rand": (dt.date(2014, 6, 1) + dt.timedelta(days=p)).isoformat(),
                    "birth": (dt.date(1930, 1, 1) + dt.timedelta(days=p * 397)).isoformat(),
                }
            )
    frame = pd.DataFrame(rows)
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # persons mixed


def _day(text) -> dt.date | None:
    return (
        None
        if text is None or (isinstance(text, float) and np.isnan(text))
        else (dt.date.fromisoformat(text))
    )


def _roles(**extra) -> Roles:
    return Roles(quasi_identifiers=("admit", "discharge"), record_id="pid", **extra)


# ---------------------------------------------------------------------------- relative dates
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_relative_dates_against_a_loop_over_people(seed):
    frame = _random_visits(seed)
    before = frame.copy()
    recipe = Recipe(_roles(), data_steps=(RelativeDates(columns=("admit", "discharge")),))
    released = recipe.apply(frame)
    pd.testing.assert_frame_equal(frame, before)  # the input is never modified
    for _pid, rows in frame.groupby("pid"):
        dates = [_day(v) for v in (*rows["admit"], *rows["discharge"])]
        anchor = min(d for d in dates if d is not None)
        for i in rows.index:
            for column in ("admit", "discharge"):
                true = _day(frame.at[i, column])
                shown = released.at[i, column]
                if true is None:
                    assert pd.isna(shown)
                else:
                    assert shown == (true - anchor).days
        # intervals within the person are exact
        days = released.loc[rows.index, "admit"].to_numpy(dtype=float)
        real = np.array([_day(v).toordinal() for v in rows["admit"]], dtype=float)
        assert np.array_equal(np.subtract.outer(days, days), np.subtract.outer(real, real))


def test_relative_dates_since_a_named_anchor_released_as_its_quarter():
    frame = _random_visits(4)
    step = RelativeDates(columns=("admit",), anchor="rand", anchor_as="quarter")
    released = Recipe(_roles(), data_steps=(step,)).apply(frame)
    for i in frame.index:
        anchor = min(_day(v) for v in frame.loc[frame["pid"] == frame.at[i, "pid"], "rand"])
        assert released.at[i, "admit"] == (_day(frame.at[i, "admit"]) - anchor).days
        rand = _day(frame.at[i, "rand"])
        assert released.at[i, "rand"] == f"{rand.year}-Q{(rand.month - 1) // 3 + 1}"
    hidden = Recipe(_roles(), data_steps=(step.with_params(anchor_as="hidden"),)).apply(frame)
    assert hidden["rand"].isna().all()


def test_relative_dates_without_a_record_id_treats_each_row_as_a_person():
    frame = _random_visits(5).dropna()
    step = RelativeDates(columns=("admit", "discharge"))
    released = Recipe(Roles(quasi_identifiers=("admit",)), data_steps=(step,)).apply(frame)
    assert (released["admit"] == 0).all()
    stay = [
        (_day(b) - _day(a)).days for a, b in zip(frame["admit"], frame["discharge"], strict=True)
    ]
    assert released["discharge"].tolist() == stay


@pytest.mark.parametrize(
    "params, message",
    [
        ({"columns": ()}, "at least 1"),
        ({"columns": ("a",), "anchor_as": "day"}, "'anchor_as' must be one of"),
        ({"columns": ("a",), "anchor_as": "year"}, "no column of its own"),
        ({"columns": ("a", "b"), "anchor": "b", "anchor_as": "month"}, "also listed"),
        ({"columns": ("a",), "anchor": ""}, "'anchor' must be"),
    ],
)
def test_relative_dates_validates_its_parameters(params, message):
    with pytest.raises(RecipeError, match=message):
        RelativeDates(**params)


def test_relative_dates_counts_entries_that_are_not_dates():
    frame = pd.DataFrame({"pid": [1, 1, 2], "admit": ["2020-01-01", "soon", "later"]})
    recipe = Recipe(Roles(record_id="pid"), data_steps=(RelativeDates(columns=("admit",)),))
    with pytest.raises(RecipeError, match="2 entries that are not dates"):
        recipe.apply(frame)


# ---------------------------------------------------------------------------- date shift
def test_date_shift_is_one_offset_per_person_within_range_and_seeded():
    frame = _random_visits(6, n_people=200)
    step = DateShift(columns=("admit", "discharge"), max_days=10, seed=7)
    recipe = Recipe(_roles(), data_steps=(step,))
    released = recipe.apply(frame)
    offsets = {}
    for i in frame.index:
        for column in ("admit", "discharge"):
            true = _day(frame.at[i, column])
            if true is None:
                assert pd.isna(released.at[i, column])
                continue
            shift = (released.at[i, column].date() - true).days
            offsets.setdefault(frame.at[i, "pid"], set()).add(shift)
    assert all(len(s) == 1 for s in offsets.values())  # identical within a person
    values = [next(iter(s)) for s in offsets.values()]
    assert min(values) >= -10 and max(values) <= 10
    assert len(set(values)) > 10  # people get different shifts
    pd.testing.assert_frame_equal(released, recipe.apply(frame))  # seeded: reproducible
    other = Recipe(_roles(), data_steps=(step.with_params(seed=8),)).apply(frame)
    assert not other["admit"].equals(released["admit"])
    assert step.perturbative and step.random


def test_date_shift_validates_its_range():
    for bad in (0, -3, 1.5, 10**6, True):
        with pytest.raises(RecipeError, match="max_days"):
            DateShift(columns=("a",), max_days=bad)


# ---------------------------------------------------------------------------- age at
def _brute_age(birth: dt.date, at: dt.date) -> int:
    """Count the birthdays up to ``at``: 29 February falls on 1 March in common years."""
    age = 0
    while True:
        year = birth.year + age + 1
        try:
            birthday = birth.replace(year=year)
        except ValueError:  # 29 February in a common year
            birthday = dt.date(year, 3, 1)
        if birthday > at:
            return age
        age += 1


def test_completed_years_across_leap_days_and_month_ends():
    births, refs = [], []
    edges = [
        dt.date(2000, 2, 29),
        dt.date(1999, 1, 31),
        dt.date(1996, 3, 31),
        dt.date(1990, 12, 31),
    ]
    rng = np.random.default_rng(11)
    starts = [
        *edges,
        *(dt.date(1930, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 25000, 300)),
    ]
    for birth in starts:
        for year in (2001, 2003, 2004, 2010, 2024):
            for month, day in ((2, 28), (2, 29), (3, 1), (1, 31), (3, 31), (12, 31), (4, 30)):
                try:
                    ref = dt.date(year, month, day)
                except ValueError:
                    continue
                if ref >= birth:
                    births.append(birth.isoformat())
                    refs.append(ref.isoformat())
    frame = pd.DataFrame({"dob": births, "ref": refs})
    released = Recipe(data_steps=(AgeAt(column="dob", reference="ref"),)).apply(frame)
    expected = [
        _brute_age(dt.date.fromisoformat(b), dt.date.fromisoformat(r))
        for b, r in zip(births, refs, strict=True)
    ]
    assert released["dob"].tolist() == expected
    leap = frame.index[(frame["dob"] == "2000-02-29") & (frame["ref"] == "2001-02-28")]
    assert released.loc[leap, "dob"].tolist() == [0]


def test_age_bands_top_code_and_the_persons_first_reference():
    frame = pd.DataFrame(
        {
            "pid": ["a", "a", "b", "c"],
            "dob": ["1920-05-05", "1920-05-05", "1961-07-01", "1980-01-01"],
            "visit": ["2012-05-04", "2015-01-01", "2021-07-01", "2021-06-30"],
        }
    )
    step = AgeAt(column="dob", reference="visit", first=True, width=5, top_code=90)
    released = Recipe(Roles(record_id="pid"), data_steps=(step,)).apply(frame)
    # a: 91 at the first visit -> 90 at both; b: 60 -> 60; c: 41 -> 40
    assert released["dob"].tolist() == [90, 90, 60, 40]
    per_row = Recipe(Roles(record_id="pid"), data_steps=(step.with_params(first=False),))
    assert per_row.apply(frame)["dob"].tolist() == [90, 90, 60, 40]
    whole = AgeAt(column="dob", reference="visit")
    assert Recipe(data_steps=(whole,)).apply(frame)["dob"].tolist() == [91, 94, 60, 41]


def test_age_refuses_a_birth_after_the_reference_and_cut_bands():
    frame = pd.DataFrame({"dob": ["2020-01-01"], "visit": ["2019-01-01"]})
    with pytest.raises(RecipeError, match="after the reference"):
        Recipe(data_steps=(AgeAt(column="dob", reference="visit"),)).apply(frame)
    with pytest.raises(RecipeError, match="multiple of the band width"):
        AgeAt(column="dob", reference="visit", width=5, top_code=89)
    with pytest.raises(RecipeError, match="another column"):
        AgeAt(column="dob", reference="dob")


# ---------------------------------------------------------------------------- calendar
def test_date_reduce_to_quarter_and_iso_week_against_the_calendar():
    days = [dt.date(2019, 1, 1) + dt.timedelta(days=i) for i in range(0, 800, 3)]
    series = pd.Series([d.isoformat() for d in days] + [None])
    quarter = DateReduce("d", to="quarter").apply(series).tolist()
    week = DateReduce("d", to="week").apply(series).tolist()
    for d, q, w in zip(days, quarter[:-1], week[:-1], strict=True):
        assert q == f"{d.year}-Q{(d.month - 1) // 3 + 1}"
        iso = d.isocalendar()
        assert w == f"{iso[0]}-W{iso[1]:02d}"
    assert pd.isna(quarter[-1]) and pd.isna(week[-1])
    assert DateReduce("d", to="week").apply(pd.Series(["2021-01-03"])).tolist() == ["2020-W53"]


# ---------------------------------------------------------------------------- codes
def test_code_prefix_keeps_the_first_characters_without_the_dot():
    series = pd.Series(["A41.9", " J18.0 ", "N02BE01", None, "Z3"])
    assert CodePrefix("c", length=3).apply(series).tolist() == ["A41", "J18", "N02", None, "Z3"]
    assert CodePrefix("c", length=4).apply(series).tolist() == ["A419", "J180", "N02B", None, "Z3"]
    with pytest.raises(RecipeError, match="holds numbers"):
        CodePrefix("c", length=3).apply(pd.Series([2134, 90210]))
    with pytest.raises(RecipeError, match="length"):
        CodePrefix("c", length=0)
    assert CodePrefix("c", length=3).sweep_values(series) == [1, 2, 3, 4, 5, 6, 7]


def test_icd10_chapters_by_range():
    codes = ["A41.9", "B99", "C34.1", "D48.9", "D50.0", "H59", "H60.1", "K94.2", "S72.0",
             "T81.4", "U07.1", "V01", "Y98", "Z38.0", None]  # fmt: skip
    expected = ["A00-B99", "A00-B99", "C00-D48", "C00-D48", "D50-D89", "H00-H59", "H60-H95",
                "K00-K93", "S00-T98", "S00-T98", "U00-U85", "V01-Y98", "V01-Y98", "Z00-Z99",
                None]  # fmt: skip
    assert Icd10Chapter("c").apply(pd.Series(codes)).tolist() == expected
    with pytest.raises(RecipeError, match="1 entry that is not an ICD-10 code"):
        Icd10Chapter("c").apply(pd.Series(["A41", "41A"]))


# ---------------------------------------------------------------------------- JSON
@pytest.mark.parametrize(
    "step",
    [
        RelativeDates(columns=("admit", "discharge")),
        RelativeDates(columns=("admit",), anchor="rand", anchor_as="month"),
        DateShift(columns=("admit",), max_days=30, seed=3),
        AgeAt(column="birth", reference="admit", first=True, width=5, top_code=90),
    ],
)
def test_data_steps_round_trip_through_json(step):
    text = json.dumps(step.to_dict())
    assert data_step_from_dict(json.loads(text)) == step
    recipe = Recipe(_roles(), data_steps=(step,))
    assert Recipe.from_json(recipe.to_json()) == recipe


@pytest.mark.parametrize(
    "step", [CodePrefix("icd", length=3), Icd10Chapter("icd"), DateReduce("d", to="quarter")]
)
def test_column_steps_round_trip_through_json(step):
    assert step_from_dict(json.loads(json.dumps(step.to_dict()))) == step


def test_the_interface_of_the_issue_reads_as_written():
    recipe = Recipe.from_dict(
        {
            "schema_version": 3,
            "roles": {"record_id": "pid", "quasi_identifiers": ["admit", "birth", "code"]},
            "steps": [{"method": "code_prefix", "column": "code", "length": 3}],
            "data_steps": [
                {"method": "age_at", "column": "birth", "reference": "admit", "top_code": 90},
                {"method": "relative_dates", "columns": ["admit"], "anchor": "first"},
            ],
        }
    )
    frame = pd.DataFrame(
        {
            "pid": [1, 1],
            "admit": ["2020-01-01", "2020-03-01"],
            "birth": ["1950-01-02"] * 2,
            "code": ["A41.9", "J18.1"],
        }
    )
    released = recipe.apply(frame)
    assert released["admit"].tolist() == [0, 60]
    assert released["birth"].tolist() == [69, 70]
    assert released["code"].tolist() == ["A41", "J18"]


# ---------------------------------------------------------------------------- the demo
def test_visits_demo_is_deterministic_and_consistent():
    first, second = load_demo("visits"), load_demo("visits")
    pd.testing.assert_frame_equal(first, second)
    stay = (
        pd.to_datetime(first["discharge_date"]) - pd.to_datetime(first["admission_date"])
    ).dt.days
    assert (stay == first["length_of_stay"]).all() and (stay >= 1).all()
    assert first.groupby("mrn")["admission_date"].apply(lambda s: s.is_monotonic_increasing).all()
    assert first.groupby("mrn").size().max() > 1
    assert first["zip"].str.fullmatch(r"\d{5}").all()
    assert first["icd10"].str.fullmatch(r"[A-Z]\d{2}\.\d").all()
    assert set(first["readmitted"]) == {0, 1}


# ---------------------------------------------------------------------------- shift risk
def test_a_date_shift_is_judged_by_linkage_within_its_reach():
    frame = _random_visits(9, n_people=60).dropna().reset_index(drop=True)
    roles = Roles(quasi_identifiers=("admit",), record_id="pid")
    step = DateShift(columns=("admit", "discharge"), max_days=20, seed=4)
    recipe = Recipe(roles, data_steps=(step,))
    assert risk_basis(recipe).perturbed == ("admit",)
    assert masking_tolerance(recipe, frame) == {"admit": 20.0}
    released = recipe.apply(frame)
    risk = Workspace(frame).judged_risk(recipe).perturbed
    true_days = np.array([_day(v).toordinal() for v in frame["admit"]])
    shown_days = np.array([d.date().toordinal() for d in released["admit"]])
    # brute force: the source records whose true date is within 20 days of the released one
    for i in range(len(frame)):
        near = np.abs(true_days - shown_days[i]) <= 20
        assert risk.candidates[i] == near.sum()
        assert risk.record_risk[i] == pytest.approx(1 / near.sum())  # its own is always near


def test_the_report_withholds_a_date_shifts_range_as_it_does_noises():
    step = DateShift(columns=("admit", "discharge"), max_days=45, seed=3)
    text = step_text(step)
    assert "45" not in text and "withheld" in text and "admit, discharge" in text
    assert "[-45, 45]" in step_text(step, include_parameters=True)
    assert parameters_withheld(step)
    age = AgeAt(column="birth", reference="admit", first=True, width=5, top_code=90)
    assert (
        step_text(age)
        == "birth: age at the person's first admit in 5-year bands (lower end), 90 and over as 90"
    )
