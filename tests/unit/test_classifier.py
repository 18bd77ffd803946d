"""The classifier lens of utility (deid_core.utility.classifier): its protocol rebuilt by hand
with scikit-learn, its invariants, and its messages."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from deid_core.errors import DataError
from deid_core.masking import AbsoluteRound, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.utility.classifier import classifier_accuracy
from deid_core.workspace import Workspace


def frame(n: int = 400, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    z = rng.normal(size=n)
    group = rng.choice(["a", "b", "c"], n)
    eta = -0.5 + 1.2 * x - 0.8 * z + (group == "c")
    return pd.DataFrame(
        {"y": rng.binomial(1, 1 / (1 + np.exp(-eta))), "x": x, "z": z, "group": group}
    )


def by_hand(original: pd.DataFrame, masked: pd.DataFrame, seed: int) -> tuple[float, ...]:
    """Logistic regression on x and z: train on masked training rows, test on original."""
    y = original["y"].to_numpy()
    folds = StratifiedKFold(5, shuffle=True, random_state=seed).split(np.zeros(len(y)), y)
    auc, accuracy, masked_auc, masked_accuracy = [], [], [], []
    for train, test in folds:
        for source, aucs, accs in (
            (original, auc, accuracy),
            (masked, masked_auc, masked_accuracy),
        ):
            scaler = StandardScaler().fit(source[["x", "z"]].iloc[train])
            model = LogisticRegression(C=1.0, max_iter=1000).fit(
                scaler.transform(source[["x", "z"]].iloc[train]), source["y"].iloc[train]
            )
            p = model.predict_proba(scaler.transform(original[["x", "z"]].iloc[test]))[:, 1]
            aucs.append(roc_auc_score(y[test], p))
            accs.append(accuracy_score(y[test], p >= 0.5))
    return tuple(float(np.mean(v)) for v in (auc, accuracy, masked_auc, masked_accuracy))


def test_matches_the_protocol_rebuilt_by_hand():
    original = frame()
    masked = original.assign(x=original["x"].round(0))
    lens = classifier_accuracy(
        original, masked, "y", ["x", "z"], seed=4, classifiers=["logistic_regression"]
    )
    (score,) = lens.scores
    expected = by_hand(original, masked, 4)
    got = (score.auc, score.accuracy, score.masked_auc, score.masked_accuracy)
    assert got == pytest.approx(expected, rel=1e-9)
    assert score.masked_auc < score.auc  # rounding x to whole numbers blurs it
    assert lens.n == 400 and lens.n_events == int(original["y"].sum())
    assert lens.no_information_accuracy == max(lens.n_events, 400 - lens.n_events) / 400


def test_unmasked_data_score_as_the_original_and_input_is_unchanged():
    original = frame()
    before = original.copy()
    lens = classifier_accuracy(original, original.copy(), "y", ["x", "z", "group"], seed=1)
    for score in lens.scores:
        assert score.masked_auc == score.auc and score.masked_accuracy == score.accuracy
        assert score.auc_change == 0
    pd.testing.assert_frame_equal(original, before)
    assert [s.classifier for s in lens.scores] == ["logistic_regression", "random_forest"]
    assert 0.5 < lens.scores[0].auc < 1


def test_random_masks_are_averaged_over_replicates():
    original = frame()
    step = UniformNoise("x", 1.0, seed=3)
    draws = []

    def masked(r: int) -> pd.DataFrame:
        draws.append(r)
        return original.assign(x=step.apply(original["x"], r))

    lens = classifier_accuracy(
        original, masked, "y", ["x", "z"], n_replicates=3, classifiers=["logistic_regression"]
    )
    assert draws == [0, 1, 2] and lens.n_replicates == 3
    (score,) = lens.scores
    low, high = score.masked_auc_range
    assert low <= score.masked_auc <= high and low < high
    singles = [
        classifier_accuracy(
            original, masked(r), "y", ["x", "z"], classifiers=["logistic_regression"]
        ).scores[0]
        for r in range(3)
    ]
    assert score.masked_auc == pytest.approx(np.mean([s.masked_auc for s in singles]))


def test_progress_is_reported_and_can_cancel():
    calls = []
    original = frame(200)
    classifier_accuracy(
        original, original, "y", ["x"], folds=3, progress=lambda d, t: calls.append((d, t))
    )
    assert calls[-1] == (12, 12) and len(calls) == 12  # 2 classifiers x 3 folds x 2 trainings

    class Stop(Exception):
        pass

    def stop(done: int, total: int) -> None:
        raise Stop

    with pytest.raises(Stop):
        classifier_accuracy(original, original, "y", ["x"], progress=stop)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.assign(y=f["y"] * 2), "needs a 0/1 outcome"),
        (lambda f: f.assign(y=0), "at least 5 events"),
    ],
)
def test_bad_outcomes_get_clear_messages(change, message):
    bad = change(frame())
    with pytest.raises(DataError, match=message):
        classifier_accuracy(bad, bad, "y", ["x"])


def test_masked_numbers_turned_labels_and_smoothed_outcomes_are_refused():
    original = frame()
    labels = original.assign(x=pd.cut(original["x"], 3).astype(str))
    with pytest.raises(DataError, match="holds labels where the original holds numbers"):
        classifier_accuracy(original, labels, "y", ["x"])
    smoothed = original.assign(y=original["y"] * 0.5)
    with pytest.raises(DataError, match="no longer 0/1"):
        classifier_accuracy(original, smoothed, "y", ["x"])


def test_workspace_lens_uses_the_model_and_its_factors():
    data = frame().assign(
        code=lambda f: f["group"].map({"a": 1, "b": 2, "c": 3}), t=lambda f: f["z"].abs()
    )
    roles = Roles(exposure="x", outcome="y", covariates=("z", "code"))
    ws = Workspace(data)
    ws.set_model("logistic", factors=("code",))
    lens = ws.classifier(Recipe(roles, (AbsoluteRound("x", base=1.0),)), seed=2)
    assert lens.features == ("x", "z", "code")
    masked = data.assign(x=AbsoluteRound("x", base=1.0).apply(data["x"]))
    direct = classifier_accuracy(
        data, masked, "y", ["x", "z", "code"], categorical=["code"], seed=2
    )
    assert lens == direct
    assert ws.classifier(Recipe(Roles(quasi_identifiers=("x",)))) is None
    ws.set_model("cox", time="t")
    with pytest.raises(DataError, match="Cox model's events are censored"):
        ws.classifier(Recipe(roles))
