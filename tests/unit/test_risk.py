"""Risk: El Emam & Malin's worked example, Cologne's linkage scores, agreement with groupby."""

import numpy as np
import pandas as pd
import pytest

from deid_core.datasets.el_emam import el_emam_table
from deid_core.errors import DataError
from deid_core.masking import IntervalGroup, RelativeRound, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.risk import (
    class_sizes_from_key,
    equivalence_class_sizes,
    link_to_source,
    linkage_risk,
    risk_summary,
    truth_positions,
)

QIS = ["sex", "year_of_birth"]
DECADE = IntervalGroup("year_of_birth", width=10, release="label")


def test_el_emam_table_1_average_risk_is_16_of_27_and_maximum_1():
    summary = risk_summary(el_emam_table(), QIS)
    assert summary.n_records == 27
    assert summary.n_classes == 16
    assert summary.average_risk == pytest.approx(16 / 27)
    assert round(summary.average_risk, 2) == 0.59
    assert summary.max_risk == 1.0
    assert summary.strict_average_risk == 1.0
    assert summary.k == 1


def test_el_emam_decade_of_birth_gives_9_classes_and_average_9_of_27():
    recipe = Recipe(Roles(quasi_identifiers=tuple(QIS)), (DECADE,))
    summary = risk_summary(recipe.apply(el_emam_table()), QIS)
    assert summary.n_classes == 9
    assert summary.average_risk == pytest.approx(9 / 27)
    assert summary.max_risk == 1.0
    # Males born 1971 and 1978 share the 1970s class: size 2, not 1 and 3 as the seed prints.
    masked = recipe.apply(el_emam_table())
    sizes = pd.Series(summary.class_size, index=masked["id"])
    assert sizes[20] == 2 and sizes[23] == 2


def test_el_emam_table_5_without_uniques_and_doubles_has_strict_average_one_third():
    table = el_emam_table()
    recipe = Recipe(Roles(quasi_identifiers=tuple(QIS)), (DECADE,))
    masked = recipe.apply(table)
    sizes = equivalence_class_sizes(masked, QIS)
    kept = masked[sizes >= 3]
    summary = risk_summary(kept, QIS)
    assert summary.max_risk <= 1 / 3
    assert summary.strict_average_risk == summary.average_risk
    assert summary.k >= 3


def test_summary_agrees_with_an_independent_groupby():
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 5, 3000),
            "b": rng.choice(["x", "y", "z", None], 3000),
            "c": np.round(rng.exponential(1, 3000), 1),
        }
    )
    df.loc[::97, "c"] = np.nan
    summary = risk_summary(df, ["a", "b", "c"])
    sizes = df.groupby(["a", "b", "c"], dropna=False)["a"].transform("size").to_numpy()
    assert np.array_equal(summary.class_size, sizes)
    assert summary.average_risk == pytest.approx(np.mean(1 / sizes))
    assert summary.uniques == int((sizes == 1).sum())
    assert summary.records_in_small_classes == int((sizes <= 5).sum())
    assert summary.k_violations == {k: int((sizes < k).sum()) for k in (2, 3, 5)}
    assert summary.n_classes == df.groupby(["a", "b", "c"], dropna=False).ngroups


def test_no_quasi_identifiers_means_one_class_of_everyone():
    summary = risk_summary(el_emam_table(), [])
    assert summary.k == 27 and summary.average_risk == pytest.approx(1 / 27)


def test_missing_quasi_identifier_column_is_a_clear_error():
    with pytest.raises(DataError, match="not in the data"):
        risk_summary(el_emam_table(), ["sex", "zip"])


def test_risk_summary_prints_readably():
    text = str(risk_summary(el_emam_table(), QIS))
    assert "average risk (over records) 0.5926" in text
    assert "maximum risk                1.0000" in text


def test_same_masking_linkage_against_the_original_equals_the_average_risk():
    table = el_emam_table()
    recipe = Recipe(Roles(quasi_identifiers=tuple(QIS), record_id="id"), (DECADE,))
    result = linkage_risk(recipe, recipe.apply(table), table, "same_masking")
    assert result.identifiability_score == pytest.approx(9 / 27)
    assert result.anonymity_score == pytest.approx(18 / 27)


def test_cologne_identifiability_score_by_hand():
    # Released doses: 1.5 matches one source record (its own), 2.0 matches two (one its own),
    # 3.0 matches three others (wrong person), 9.9 matches none.
    source = pd.DataFrame(
        {"id": [1, 2, 3, 4, 5, 6, 7, 8], "dose": [1.5, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 9.0]}
    )
    released = pd.DataFrame({"id": [1, 2, 7, 8], "dose": [1.5, 2.0, 3.0, 9.9]})
    truth = truth_positions(released, source, "id")
    result = link_to_source(released, source, ["dose"], truth, "exact")
    assert result.match_count.tolist() == [1, 2, 3, 0]
    assert result.correct.tolist() == [True, True, False, False]
    assert result.identifiability_score == pytest.approx((1 + 1 / 2) / 4)
    assert result.perceived_score == pytest.approx((1 + 1 / 2 + 1 / 3) / 4)
    table = result.match_table()
    assert table["correct"].tolist()[:3] == [1, 1, 0]
    assert table["any"].tolist()[:3] == [1, 1, 1]


def test_rounded_doses_matching_other_people_count_only_as_perceived_risk():
    # Cologne Table 1(b): a 3-digit rounded dose may equal someone else's exact dose.
    source = pd.DataFrame({"id": [1, 2], "dose": [0.312, 0.3124]})
    recipe = Recipe(
        Roles(quasi_identifiers=("dose",), record_id="id"), (RelativeRound("dose", digits=3),)
    )
    released = recipe.apply(source)
    exact = linkage_risk(recipe, released, source, "exact")
    assert exact.identifiability_score == pytest.approx(0.5)  # record 1 is itself; record 2 not
    assert exact.perceived_score == pytest.approx(1.0)
    same = linkage_risk(recipe, released, source, "same_masking")
    assert same.identifiability_score == pytest.approx(0.5)  # both round to 0.312: 1/2 each


def test_noise_defeats_exact_matching():
    rng = np.random.default_rng(0)
    source = pd.DataFrame({"id": range(500), "dose": np.round(rng.exponential(0.6, 500), 4)})
    recipe = Recipe(
        Roles(quasi_identifiers=("dose",), record_id="id"),
        (UniformNoise("dose", half_width=0.1, seed=1),),
    )
    result = linkage_risk(recipe, recipe.apply(source), source, "same_masking")
    assert result.identifiability_score == 0.0


def test_row_order_links_records_without_an_id():
    df = pd.DataFrame({"x": [1, 2, 2]})
    assert truth_positions(df, df, None).tolist() == [0, 1, 2]
    with pytest.raises(DataError, match="same number of rows"):
        truth_positions(df, df.iloc[:2], None)


@pytest.mark.parametrize("cardinality", [50, 10**7, 2**40, 2**61])
def test_every_counting_path_agrees_with_value_counts(cardinality):
    # Small ranges are counted with bincount, large ones by sorting, huge ones by hashing.
    rng = np.random.default_rng(cardinality % 1000)
    key = rng.integers(0, min(cardinality, 60), 5000) * (cardinality // 60 or 1)
    sizes, n_classes = class_sizes_from_key(key.astype(np.int64), cardinality)
    expected = pd.Series(key).map(pd.Series(key).value_counts()).to_numpy()
    assert np.array_equal(sizes, expected)
    assert n_classes == len(np.unique(key))


def test_parallel_encoding_gives_the_same_classes(monkeypatch):
    import deid_core.risk.classes as classes

    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {
            "a": rng.choice(["x", "y", None], 3000),
            "b": rng.integers(0, 40, 3000),
            "c": rng.random(3000),
        }
    )
    serial = risk_summary(frame, ["a", "b", "c"])
    monkeypatch.setattr(classes, "_PARALLEL_ENCODING_ROWS", 1)
    parallel = risk_summary(frame, ["a", "b", "c"])
    assert np.array_equal(serial.class_size, parallel.class_size)


def test_text_codes_are_kept_with_the_data_and_dropped_with_them():
    """Text held by pyarrow is hashed once per (immutable) array; the kept codes go with it."""
    import gc

    from deid_core.risk import classes

    before = len(classes._TEXT_CODES)
    column = pd.Series(["a", "b", None, "a", "b"], dtype="str")
    first = classes.encode_column(column)
    assert first.codes.tolist() == [0, 1, 2, 0, 1] and first.n_levels == 3
    assert classes.encode_column(column.copy()) is first  # a copy shares the array
    assert not first.codes.flags.writeable
    del column
    gc.collect()
    classes.encode_column(pd.Series(["x"], dtype="str"))  # the next use drops dead entries
    assert len(classes._TEXT_CODES) <= before + 1
