"""Record linkage of a release whose dates are shifted, with whole-data steps an intruder who
holds the source can redo (a date of birth to an age) and suppressed cells.

Before this was fixed the intruder's copy of the source skipped whole-data steps (it compared
the released ages with the true dates of birth) and matched a suppressed (blank) cell only to a
blank: every record's own row fell out of reach and the maximum record-linkage risk was 0.0,
so a recipe with a date shift and an age step "met" any threshold. Here every figure is checked
against a brute-force count on the exported file read back from disk.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import RecipeError
from deid_core.masking import AgeAt, DateShift, LocalSuppression, RecordSuppression, Subsample
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace

SHIFT = 30
WIDTH = 10


def _visits(n_people: int, seed: int) -> pd.DataFrame:
    """Patients with one to three admissions: birth date, admission date, sex, a code."""
    rng = np.random.default_rng(seed)
    rows = []
    for person in range(n_people):
        birth = dt.date(1930, 1, 1) + dt.timedelta(days=int(rng.integers(0, 365 * 60)))
        first = dt.date(2015, 1, 1) + dt.timedelta(days=int(rng.integers(0, 365 * 3)))
        sex = str(rng.choice(["F", "M"]))
        for visit in range(int(rng.integers(1, 4))):
            admitted = first + dt.timedelta(days=int(visit * rng.integers(20, 200)))
            rows.append(
                {
                    "visit": len(rows),
                    "mrn": f"M{person:04d}",
                    "birth_date": birth.isoformat(),
                    "admission_date": admitted.isoformat(),
                    "sex": sex,
                    "ward": str(rng.choice(["A", "B", "C"])),
                }
            )
    return pd.DataFrame(rows)


def _recipe(data_steps: tuple) -> Recipe:
    roles = Roles(
        quasi_identifiers=("birth_date", "admission_date", "sex", "ward"), record_id="mrn"
    )
    return Recipe(roles, data_steps=data_steps)


def _age_band(birth: str, reference: dt.date) -> int:
    """Completed years at ``reference`` in bands of WIDTH, by hand."""
    born = dt.date.fromisoformat(birth)
    years = reference.year - born.year - ((reference.month, reference.day) < (born.month, born.day))
    return years // WIDTH * WIDTH


def _brute_force_risk(source: pd.DataFrame, released: pd.DataFrame) -> np.ndarray:
    """Per released row: 1/(source rows within reach) when its own row (the source row of
    its visit number) is among them, else 0. An intruder holding the source computes each
    person's age at their first admission, matches sex and ward exactly, the admission date
    within the shift's reach, and a blank released cell with anything."""
    first = source.groupby("mrn")["admission_date"].transform("min").map(dt.date.fromisoformat)
    ages = [_age_band(b, f) for b, f in zip(source["birth_date"], first, strict=True)]
    days = pd.to_datetime(source["admission_date"]).to_numpy("datetime64[D]").astype(np.int64)
    shown_days = pd.to_datetime(released["admission_date"]).to_numpy("datetime64[D]")
    risk = np.zeros(len(released))
    for i in range(len(released)):
        row = released.iloc[i]
        within = []
        for j in range(len(source)):
            ok = pd.isna(row["birth_date"]) or int(row["birth_date"]) == ages[j]
            ok &= (
                pd.isna(row["admission_date"])
                or abs(int(shown_days[i].astype(np.int64)) - int(days[j])) <= SHIFT
            )
            for column in ("sex", "ward"):
                ok &= pd.isna(row[column]) or row[column] == source[column].iloc[j]
            if ok:
                within.append(j)
        own = int(np.flatnonzero(source["visit"].to_numpy() == row["visit"])[0])
        if own in within:
            risk[i] = 1.0 / len(within)
    return risk


@pytest.mark.parametrize(
    "then", ["nothing", "suppression", "subsample"], ids=["shift", "+suppression", "+subsample"]
)
@pytest.mark.parametrize("seed", [1, 2])
def test_record_linkage_of_an_age_and_a_date_shift_is_the_brute_force_count(then, seed, tmp_path):
    source = _visits(40, seed)
    steps = [
        AgeAt(column="birth_date", reference="admission_date", first=True, width=WIDTH),
        DateShift(columns=("admission_date",), max_days=SHIFT, seed=seed),
    ]
    if then == "suppression":
        steps.append(LocalSuppression(k=3))
    elif then == "subsample":  # the intruder holds every source record
        steps.append(Subsample(fraction=0.5, seed=seed))
    recipe = _recipe(tuple(steps))
    workspace = Workspace(source)
    judged = workspace.judged_risk(recipe, holds_source=False)
    assert judged.basis == "record_linkage"

    path = tmp_path / "release.csv"
    workspace.released_frame(recipe, keep_record_id=True).to_csv(path, index=False)
    released = pd.read_csv(path, dtype={"sex": object, "ward": object})
    if then == "subsample":
        assert 0 < len(released) < len(source)
    else:
        assert list(released["visit"]) == list(source["visit"])  # one row per source row
    if then == "suppression":
        assert released[["birth_date", "admission_date", "sex", "ward"]].isna().any().any()

    expected = _brute_force_risk(source, released)
    assert expected.max() > 0  # a record is within reach of its own row
    np.testing.assert_allclose(judged.perturbed.record_risk, expected)
    assert judged.max_risk == pytest.approx(expected.max())
    assert judged.perturbed.out_of_reach == 0


def test_the_source_linkage_of_an_age_step_compares_ages_with_ages():
    """Class-based release (age step, local suppression): the intruder's source carries the
    ages they compute, so each released row is compatible with its own person."""
    source = _visits(60, 3)
    recipe = Recipe(
        Roles(quasi_identifiers=("birth_date", "sex", "ward"), record_id="mrn"),
        data_steps=(
            AgeAt(column="birth_date", reference="admission_date", first=True, width=WIDTH),
            LocalSuppression(k=3),
        ),
    )
    link = Workspace(source).source_linkage(recipe)
    first = source.groupby("mrn")["admission_date"].transform("min").map(dt.date.fromisoformat)
    ages = pd.Series([_age_band(b, f) for b, f in zip(source["birth_date"], first, strict=True)])
    pool = pd.DataFrame(
        {"age": ages, "sex": source["sex"], "ward": source["ward"], "mrn": source["mrn"]}
    )
    released = Workspace(source).released_frame(recipe, keep_record_id=True)
    per_row = []
    for _, row in released.iterrows():
        ok = np.ones(len(pool), dtype=bool)
        for mine, theirs in (("birth_date", "age"), ("sex", "sex"), ("ward", "ward")):
            if pd.notna(row[mine]):
                ok &= (pool[theirs] == row[mine]).to_numpy()
        assert ok[(pool["mrn"] == row["mrn"]).to_numpy()].any()  # its own person is compatible
        per_row.append(1.0 / pool.loc[ok, "mrn"].nunique())
    per_person = pd.Series(per_row).groupby(released["mrn"].to_numpy()).max()
    assert link.max_risk == pytest.approx(per_person.max())
    assert link.average_risk == pytest.approx(per_person.mean())


@pytest.mark.parametrize(
    "earlier",
    [DateShift(columns=("admission_date",), max_days=SHIFT, seed=1), RecordSuppression(k=2)],
    ids=["after a shift of its reference", "after records were removed"],
)
def test_an_age_step_after_a_step_no_intruder_can_redo_is_refused(earlier):
    age = AgeAt(column="birth_date", reference="admission_date", first=True, width=WIDTH)
    with pytest.raises(RecipeError, match="put it first"):
        _recipe((earlier, age))
    _recipe((age, earlier))  # the order the Mask page uses
