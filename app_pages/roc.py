"""ROC release: what a published ROC curve gives away (Matthews & Harel), and mitigations."""

import pandas as pd
import streamlit as st

from dashboard import charts, compute, state, tables
from dashboard.help import metric_help
from dashboard.text import literal
from deid_core.io.columns import numeric_columns
from deid_core.risk.roc import path_segments

st.title("ROC release audit")
st.caption(
    "Researchers publish ROC curves routinely. Matthews & Harel showed that the empirical "
    "curve plus the records an intruder already knows reveal the others: their disease status "
    "exactly and their test score up to its rank. Check a curve here before you publish it, "
    "and see what publishing it at fewer points, rounded or smoothed costs and buys."
)

MITIGATIONS = {
    "all": "Every threshold (the full empirical curve)",
    "every": "Every k-th point",
    "quantiles": "At k quantile cut-offs",
    "binormal": "A smoothed binormal fit",
}
SWEEP = (
    (),
    (("every", 2),),
    (("every", 5),),
    (("quantiles", 10),),
    (("quantiles", 5),),
    (("decimals", 2),),
    (("decimals", 1),),
    (("every", 2), ("decimals", 1)),
    (("binormal", True),),
)


def binary_columns(frame: pd.DataFrame) -> list[str]:
    out = []
    for column in frame.columns:
        values = frame[column].dropna()
        if len(values) and values.isin([0, 1, True, False]).all() and values.nunique() == 2:
            out.append(column)
    return out


#: Words of a column name that mark a test score (a marker, a probability, a risk score).
SCORE_WORDS = ("score", "test", "marker", "prob", "predict", "risk", "level", "index")
#: Records audited by default: the exact reconstruction grows as the square of their number.
DEFAULT_AUDITED = 1_000


def default_score(numeric: list[str], binary: list[str], roles) -> str:
    """A column named like a test score; else the first numeric column that is not 0/1, plays
    no role in the collaborator's model or the identification of records (the exposure is a
    dose, not a diagnostic test), preferably not a quasi-identifier; else the first numeric
    column."""
    for column in numeric:
        if any(word in column.lower() for word in SCORE_WORDS) and column not in binary:
            return column
    taken = {roles.exposure, roles.outcome, roles.record_id, roles.weight}
    free = [c for c in numeric if c not in binary and c not in taken]
    unknown = [c for c in free if c not in roles.quasi_identifiers]
    return (unknown or free or numeric)[0]


def choose_audited(n: int) -> int | None:
    """How many records to audit (a random subsample of a large file; None: all)."""
    if n <= DEFAULT_AUDITED:
        return None
    audited = st.number_input(
        "Records audited (a random subsample)",
        min_value=10,
        max_value=n,
        value=DEFAULT_AUDITED,
        step=500,
        key=f"roc.{id(state.current_workspace())}.audited",
        help=f"The exact reconstruction grows as the square of the number of records, so a "
        f"file of {n:,} is audited on a random sample that keeps the file's share of each "
        "status, with at least one record of each (drawn once per session). A curve "
        "published from the whole file gives an intruder at least as much as one from a "
        "sample of it.",
    )
    return None if audited >= n else int(audited)


def choose_columns(frame: pd.DataFrame, recipe):
    """The score and status columns (defaults: a test-score-like column and the outcome)."""
    numeric, binary = numeric_columns(frame), binary_columns(frame)
    if not numeric or not binary:
        st.info("The ROC audit needs a numeric score column and a 0/1 status column.")
        return None, None
    roles = recipe.roles
    prefix = f"roc.{id(state.current_workspace())}"
    left, right = st.columns(2)
    score = left.selectbox(
        "Test score",
        numeric,
        index=numeric.index(default_score(numeric, binary, roles)),
        key=f"{prefix}.score",
        help="The score whose ROC curve would be published (higher = more likely diseased).",
    )
    choices = [c for c in binary if c != score] or binary
    status = right.selectbox(
        "Disease status (0/1)",
        choices,
        index=choices.index(roles.outcome) if roles.outcome in choices else 0,
        key=f"{prefix}.status",
    )
    return score, status


#: How the intruder's knowledge is given (the radio's options).
KNOWN_MODES = ["All records but m", "A random share of the records", "A flag column"]


def choose_known(frame: pd.DataFrame) -> tuple[str, object]:
    """What the intruder knows: a random share, all but m records, or a flag column."""
    prefix = f"roc.{id(state.current_workspace())}"
    flags = [c for c in binary_columns(frame) if c.lower().startswith("known")] or [
        c for c in binary_columns(frame)
    ]
    default = 2 if any(c.lower() == "known" for c in flags) else 0
    mode = st.radio(
        "The intruder already knows",
        KNOWN_MODES,
        index=default,
        horizontal=True,
        key=f"{prefix}.known_mode",
        help="Matthews & Harel: e.g. a collaborator who holds part of the data, or the data "
        "set minus the few records they are after.",
    )
    n = len(frame)
    if mode == KNOWN_MODES[0]:
        m = st.number_input(
            "Records the intruder does not know (m)",
            min_value=1,
            max_value=max(1, n - 1),
            value=min(max(1, n // 20), 10),
            key=f"{prefix}.missing",
        )
        return ("missing", int(m))
    if mode == KNOWN_MODES[1]:
        share = st.slider(
            "Share of records known", 0.50, 0.99, 0.95, 0.01, key=f"{prefix}.fraction"
        )
        return ("fraction", float(share))
    column = st.selectbox(
        "Flag column (1 = known to the intruder)", flags, key=f"{prefix}.flag_column"
    )
    return ("flag", column)


def choose_publication() -> dict:
    """How the curve is published: every threshold, thinned, quantiles, rounded, or smoothed."""
    left, mid, right = st.columns(3)
    how = left.selectbox(
        "Publish the curve as",
        list(MITIGATIONS),
        format_func=MITIGATIONS.__getitem__,
        key="roc.publish",
        help="Fewer points, rounding and smoothing hide the individual steps; they also "
        "change the curve's shape and area a little.",
    )
    options: dict = {}
    if how == "every":
        options["every"] = mid.slider("k (keep every k-th point)", 2, 20, 3, key="roc.every")
    elif how == "quantiles":
        options["quantiles"] = mid.slider("k (quantile groups)", 2, 50, 10, key="roc.quantiles")
    elif how == "binormal":
        options["binormal"] = True
    if how != "binormal":
        decimals = right.selectbox(
            "Round TPR and FPR to",
            ["no rounding", 3, 2, 1],
            key="roc.decimals",
            format_func=lambda d: d if isinstance(d, str) else f"{d} decimal(s)",
        )
        if decimals != "no rounding":
            options["decimals"] = int(decimals)
    return options


def render() -> None:
    workspace = state.current_workspace()
    recipe = state.current_recipe()
    score, status = choose_columns(workspace.original, recipe)
    if score is None:
        return
    audited = choose_audited(workspace.n_records)
    frame = compute.roc_records(audited, status)
    known = choose_known(frame)
    options = choose_publication()
    try:
        result = compute.roc_attack(score, status, known, options, audited)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return

    cols = st.columns(4)
    cols[0].metric(
        "Statuses recovered",
        f"{result.share_status_recovered:.0%}",
        help=metric_help("roc_status"),
    )
    cols[1].metric("Pinned to a rank", f"{result.share_pinned:.0%}", help=metric_help("roc_pinned"))
    width = result.mean_finite_width
    cols[2].metric(
        "Mean score interval",
        "unbounded" if width is None else f"{width:.3g}",
        help=metric_help("roc_width"),
    )
    cols[3].metric(
        "AUC published",
        f"{result.utility.auc_published:.4f}",
        delta=f"{result.utility.auc_change:+.4f} vs empirical",
        delta_color="off",
        help=metric_help("roc_auc"),
    )
    st.caption(
        f"{result.m:,} of {result.n:,} records are unknown to the intruder; the curve is "
        f"published as {literal(result.published.description)}, with the numbers of diseased "
        f"({result.published.n_positive:,}) and healthy ({result.published.n_negative:,}) "
        "records. Status recovered means: the same in every arrangement of the unknown "
        "records that reproduces the published curve."
    )

    table = result.to_frame()
    segments = path_segments(frame[score], frame[status], compute.known_flags(frame, known))
    recovered = table["recovered_status"].notna().reset_index(drop=True)
    charts.show_chart(
        charts.roc_attack_chart(segments, recovered, result.published.fpr, result.published.tpr),
        "The published ROC curve and the paths an intruder reconstructs",
        pd.DataFrame({"FPR": result.published.fpr, "TPR": result.published.tpr}),
    )
    st.subheader("The unknown records, reconstructed (truth beside it)")
    shown, labels = tables.in_words(table)
    st.dataframe(
        shown,
        hide_index=True,
        column_config={
            **labels,
            "recovered_status": st.column_config.NumberColumn(
                "recovered status", help="1 or 0 when the curve determines it; empty otherwise"
            ),
            "interval_low": st.column_config.NumberColumn("score above", format="%.4g"),
            "interval_high": st.column_config.NumberColumn("score below", format="%.4g"),
        },
    )
    render_mitigations(score, status, known, result.published.description, audited)


def render_mitigations(score: str, status: str, known, current: str, audited) -> None:
    st.subheader("Ways to publish it: risk against utility")
    st.caption(
        "Each point is one way to publish the same curve: the share of the unknown records' "
        "statuses an intruder recovers (security = 1 − that share, higher is safer) against "
        "how much the area under the curve moves (utility = 1 − |AUC change|, higher is "
        "better). Top right is best."
    )
    if not st.toggle("Compare the ways to publish", key="roc.compare"):
        return
    try:
        table = compute.roc_mitigations(score, status, known, SWEEP, st.empty(), audited)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    charts.show_chart(
        charts.roc_mitigation_chart(table, current), "Ways to publish: security against utility"
    )
    shown, labels = tables.in_words(table)
    st.dataframe(shown, hide_index=True, column_config=labels)


render()
