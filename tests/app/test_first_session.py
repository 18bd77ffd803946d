"""What a first session trips on (issue 17, section 3), page by page: the Data page's tab,
suggested roles, one verdict, zero changes, sweeps of whole numbers, the ROC page on a large
file, table labels, citations and the first-run hint."""

import numpy as np
import pandas as pd
import pytest
from app_helpers import assert_clean, goto, metric_value, texts

KEY_TAB = "data.source_tab"


def birthwt_like(n: int = 189) -> pd.DataFrame:
    """The layout of MASS birthwt as R's write.csv leaves it: an unnamed column of row
    numbers, the 0/1 outcome first, whole-number grams."""
    rng = np.random.default_rng(11)
    bwt = rng.integers(709, 4991, n)
    return pd.DataFrame(
        {
            "": np.arange(1, n + 1),
            "low": (bwt < 2500).astype(int),
            "age": rng.integers(14, 46, n),
            "lwt": rng.integers(80, 251, n),
            "smoke": rng.integers(0, 2, n),
            "bwt": bwt,
        }
    )


def upload(app, frame: pd.DataFrame, name: str = "birthwt.csv"):
    goto(app, "data")
    app.file_uploader[0].upload(name, frame.to_csv(index=False).encode(), "text/csv")
    app.run()
    assert_clean(app)
    return app


@pytest.fixture
def birthwt(app):
    return upload(app, birthwt_like())


def test_the_data_page_stays_on_the_upload_tab(birthwt):
    app = birthwt
    assert app.session_state[KEY_TAB] == "Upload a file"
    assert metric_value(app.sidebar, "Records") == "189"
    next(b for b in app.button if b.label == "Apply roles").click().run()
    assert_clean(app)
    assert any("Roles applied" in s for s in texts(app.success))
    assert app.session_state[KEY_TAB] == "Upload a file"
    # Loading a demo opens the demo tab again.
    app.selectbox(key="data.demo_choice").set_value("el_emam").run()
    next(b for b in app.button if b.label == "Use this demo").click().run()
    assert_clean(app)
    assert app.session_state[KEY_TAB] == "Built-in demo data"


def test_a_row_number_column_is_the_record_id_and_low_the_outcome(birthwt):
    roles = birthwt.session_state["deid.recipe"].roles
    assert roles.record_id == "column_1"  # the reader's name for a blank header
    assert roles.outcome == "low"
    assert "column_1" not in roles.covariates and "low" not in roles.covariates


def test_panel_and_sidebar_show_one_verdict_the_same_way(app):
    # The synthetic cohort's default recipe is above the threshold.
    panel = texts(app.main.warning)
    strip = texts(app.sidebar.warning)
    assert any("Above the threshold" in t for t in panel), panel
    assert [t for t in panel if "threshold" in t] == [t for t in strip if "threshold" in t]
    assert not [e for e in texts(app.sidebar.error) if "threshold" in e]
    # Met: green in both.
    app.sidebar.selectbox(key="deid.w.cell_size_choice").set_value(0).run()
    app.sidebar.number_input(key="deid.w.custom_cell_size").set_value(2).run()
    goto(app, "data")
    app.selectbox(key="data.demo_choice").set_value("el_emam").run()
    next(b for b in app.button if b.label == "Use this demo").click().run()
    goto(app, "mask")
    panel = [t for t in texts(app.main.success) + texts(app.main.warning) if "threshold" in t]
    strip = [t for t in texts(app.sidebar.success) + texts(app.sidebar.warning) if "threshold" in t]
    assert panel == strip and len(panel) == 1


def test_a_zero_change_is_grey_without_an_arrow(app):
    goto(app, "data")
    app.selectbox(key="data.demo_choice").set_value("el_emam").run()
    next(b for b in app.button if b.label == "Use this demo").click().run()
    goto(app, "mask")  # nothing masked: the same risk as without masking
    average = next(m for m in app.main.metric if m.label == "Average risk")
    assert average.delta == "no change"
    assert "Arrows: the change from the unmasked data (green: less risk)." in texts(
        app.main.caption
    )
    assert "+0.000" not in " ".join(str(m.delta) for m in app.main.metric)


def test_rounding_grams_sweeps_tens_hundreds_and_thousands(birthwt):
    app = goto(birthwt, "mask")
    method = next(s for s in app.selectbox if s.key.endswith("bwt:method"))
    method.set_value("absolute_round").run()
    assert_clean(app)
    decimals = next(s for s in app.slider if s.key.endswith("bwt:absolute_round:decimals"))
    decimals.set_value(-1).run()
    assert_clean(app)
    recipe = app.session_state["deid.recipe"]
    (step,) = recipe.steps_for("bwt")
    assert step.describe() == "bwt: rounded to the nearest 10"
    captions = " ".join(texts(app.main.caption))
    assert "decimals = -3, -2, -1, 0;" in captions, captions


def test_theta_at_its_bound_is_explained(app):
    from dashboard import compute

    assert compute.theta_text(1e5) == "≥ 100,000"
    goto(app, "mask")
    captions = " ".join(texts(app.main.caption))
    if "≥ 100,000" in captions or "≤ 0.05" in captions:
        assert "edge of the search range" in captions


def test_the_roc_page_opens_on_the_cohort_with_a_subsample(app):
    goto(app, "roc")
    assert not texts(app.error)
    audited = next(n for n in app.number_input if n.label.startswith("Records audited"))
    assert audited.value == 1000
    score = next(s for s in app.selectbox if s.label == "Test score")
    assert score.value != app.session_state["deid.recipe"].roles.exposure
    assert metric_value(app.main, "Statuses recovered").endswith("%")
    assert any("of 1,000 records are unknown" in c for c in texts(app.caption))
    audited.set_value(500).run()
    assert_clean(app)
    assert any("of 500 records are unknown" in c for c in texts(app.caption))


def test_tables_label_columns_in_words(app):
    from dashboard.tables import in_words

    frame = pd.DataFrame({"true_score": [0.5], "note": [None]})
    shown, labels = in_words(frame)
    assert shown["note"].iloc[0] == "—"
    assert set(labels) == {"true_score"}
    goto(app, "roc")
    table = app.dataframe[0]
    assert "None" not in table.value.astype(str).to_numpy().ravel().tolist()


def test_learn_citations_name_no_seed_numbers(app):
    goto(app, "learn")
    shown = " ".join(texts(app.markdown) + texts(app.caption))
    assert "seed 0" not in shown


def test_first_run_hint_until_dismissed(app):
    assert any("New here? Four steps." in m for m in texts(app.main.markdown))
    next(b for b in app.button if b.label == "Got it, hide this").click().run()
    assert_clean(app)
    assert not any("New here?" in m for m in texts(app.main.markdown))
    goto(app, "risk")
    assert not any("New here?" in m for m in texts(app.main.markdown))
