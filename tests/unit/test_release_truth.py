"""The standing guard: every risk figure the tool reports for a release equals a brute-force,
per-person count on the exported CSV read back from disk (issue 27, item 7).

Random small files with repeated people and missing values; recipes with each whole-data step
alone and combined with column steps. The brute force reads only the two files an intruder
and a checker would have (the released file and the source coarsened as the recipe's column
steps do), compares every pair of rows, and counts distinct people."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from brute_force_counts import compatible
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deid_core.errors import DataError, RecipeError
from deid_core.masking import IntervalGroup, LocalSuppression, RecordSuppression, Subsample
from deid_core.recipe import Recipe, Roles
from deid_core.risk.linkage import mask_source_like
from deid_core.workspace import Workspace

QIS = ("sex", "region", "age")


@st.composite
def visit_files(draw) -> pd.DataFrame:
    n = draw(st.integers(6, 30))
    n_people = draw(st.integers(max(2, n // 3), n))
    people = draw(st.lists(st.integers(0, n_people - 1), min_size=n, max_size=n))
    sex = draw(st.lists(st.sampled_from(["F", "M", None]), min_size=n, max_size=n))
    region = draw(
        st.lists(st.sampled_from(["north", "south", "east", None]), min_size=n, max_size=n)
    )
    age = draw(st.lists(st.one_of(st.integers(20, 70), st.none()), min_size=n, max_size=n))
    return pd.DataFrame(
        {
            "pid": [f"p{p}" for p in people],
            "sex": sex,
            "region": region,
            "age": pd.array(age, dtype="Float64").astype(float),
            "y": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
        }
    )


COLUMN_STEPS = {"none": (), "age_bands": (IntervalGroup("age", width=10),)}
DATA_STEPS = {
    "none": (),
    "local_suppression": (LocalSuppression(k=2),),
    "record_suppression": (RecordSuppression(k=2, limit=1.0),),
    "subsample": (Subsample(fraction=0.6, seed=5),),
    "suppress_then_sample": (LocalSuppression(k=2), Subsample(fraction=0.7, seed=2)),
}


def brute_force(
    released: pd.DataFrame, source: pd.DataFrame, wildcard: bool
) -> tuple[pd.Series, pd.Series]:
    """Per released person: the smallest number of distinct people among the released rows
    compatible with one of their rows, and the largest linkage risk 1 / (distinct source
    people compatible with one of their rows)."""
    rows = released[list(QIS)].values.tolist()
    pool = source[list(QIS)].values.tolist()
    sizes, risks = [], []
    for row in rows:
        sizes.append(
            len(
                {
                    p
                    for p, other in zip(released["pid"], rows, strict=True)
                    if compatible(row, other, wildcard)
                }
            )
        )
        found = {
            p
            for p, other in zip(source["pid"], pool, strict=True)
            if compatible(row, other, wildcard)
        }
        risks.append(1 / len(found))
    per_person = pd.DataFrame({"pid": released["pid"], "size": sizes, "risk": risks})
    grouped = per_person.groupby("pid")
    return grouped["size"].min(), grouped["risk"].max()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    frame=visit_files(),
    column=st.sampled_from(sorted(COLUMN_STEPS)),
    data=st.sampled_from(sorted(DATA_STEPS)),
    missing=st.sampled_from(["category", "wildcard"]),
)
def test_every_figure_is_a_brute_force_count_on_the_exported_file(
    tmp_path: Path, frame: pd.DataFrame, column: str, data: str, missing: str
) -> None:
    roles = Roles(quasi_identifiers=QIS, record_id="pid")
    recipe = Recipe(roles, COLUMN_STEPS[column], data_steps=DATA_STEPS[data])
    workspace = Workspace(frame)
    original = frame.copy(deep=True)
    try:
        judged = workspace.judged_risk(recipe, missing)
    except RecipeError:  # a step that cannot reach its k on so small a file says so
        assume(False)
    except DataError as error:  # or leaves no record to release
        assert "no records" in str(error)
        assume(False)
    pd.testing.assert_frame_equal(frame, original)  # the original is never modified

    path = tmp_path / "release.csv"
    workspace.release(recipe, keep_record_id=True).frame.to_csv(path, index=False)
    released = pd.read_csv(path, dtype={"pid": str})
    source_path = tmp_path / "source.csv"
    coarse = mask_source_like(recipe, frame, list(QIS)).assign(pid=frame["pid"])
    coarse.to_csv(source_path, index=False)
    source = pd.read_csv(source_path, dtype={"pid": str})

    rule = workspace.release_missing_rule(recipe, missing)
    assert judged.missing == rule
    sizes, link = brute_force(released, source, rule == "wildcard")
    classes = judged.classes
    assert classes.n_records == sizes.size  # released people
    assert classes.k == sizes.min()
    assert classes.max_risk == pytest.approx(1 / sizes.min())
    assert classes.average_risk == pytest.approx((1 / sizes).mean())
    assert classes.uniques == int((sizes == 1).sum())
    if DATA_STEPS[data]:
        assert judged.source is not None
        assert judged.source.max_risk == pytest.approx(link.max())
        assert judged.source.average_risk == pytest.approx(link.mean())
        assert judged.max_risk == pytest.approx(max(judged.source.max_risk, judged.judged.max_risk))
    else:  # no whole-data step: the release is the source, coarsened
        assert classes.max_risk == pytest.approx(link.max())
    if "local_suppression" in data and rule == "wildcard":
        assert classes.k >= 2 or classes.n_records < 2


def test_without_masking_the_masked_fit_is_the_original_fit() -> None:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "x": rng.normal(size=400),
            "age": rng.integers(20, 80, 400),
            "sex": rng.integers(0, 2, 400),
        }
    )
    frame["y"] = (rng.random(400) < 1 / (1 + np.exp(-frame["x"]))).astype(int)
    roles = Roles(quasi_identifiers=("age", "sex"), exposure="x", outcome="y", covariates=("age",))
    workspace = Workspace(frame)
    unmasked = workspace.utility(Recipe(roles))
    assert unmasked.analysis_potential == 1.0 and unmasked.ap_note is None
    assert unmasked.records_note is None
    # Masking a column outside the model leaves the fit as it is too.
    sex_only = workspace.utility(Recipe(roles, data_steps=()))
    assert sex_only.masked is sex_only.original
    # Suppressing the covariate leaves records out of the masked fit: said, with the counts.
    suppressed = workspace.utility(Recipe(roles, data_steps=(LocalSuppression(k=3),)))
    assert suppressed.masked.n < suppressed.original.n
    assert f"{suppressed.masked.n:,} records" in suppressed.records_note


def test_every_path_to_a_release_counts_the_same_people() -> None:
    """The dashboard's release (the workspace) and the command line's (``Recipe.release``,
    what ``apply`` writes) suppress the same cells: both count the people of the record id."""
    rng = np.random.default_rng(3)
    people = rng.integers(0, 60, 150)
    frame = pd.DataFrame(
        {
            "pid": [f"p{p}" for p in people],
            "sex": rng.choice(["F", "M"], 150),
            "region": rng.choice(["n", "s", "e", "w"], 150),
            "age": rng.integers(20, 40, 150).astype(float),
        }
    )
    recipe = Recipe(
        Roles(quasi_identifiers=QIS, record_id="pid"), data_steps=(LocalSuppression(k=3),)
    )
    dashboard = Workspace(frame).release(recipe, keep_record_id=True).frame
    command_line = recipe.release(frame, keep_record_id=True)
    pd.testing.assert_frame_equal(
        dashboard.reset_index(drop=True), command_line.reset_index(drop=True)
    )
