"""Release links: the Streamlit side of :mod:`deid_core.release_summary`.

* :func:`render_release_link` (Export page): the release link of the report just built, for
  the recipients of the masked file, beside a plain statement of which link is for whom.
* :func:`active` / :func:`forget` (app.py, every run): a session opened on ``?release=...`` is
  a recipient's session. It shows only the collaborator's page (``app_pages/release.py``): no
  demo is loaded, nothing asks for the source data.
* :func:`render_view` (that page): what the link says (in plain words, the verdict, the
  custodian's estimates labelled as theirs, the file's checksum, rows, columns, date and
  versions), then the check of the file the recipient loads: its SHA-256, rows and columns
  against the link, its own class risk counted as the link says, and the recipient's model
  fitted on it beside the custodian's figures.

Every string read from the link or the file is shown through :func:`dashboard.text.literal`
(or in ``st.code`` and ``st.dataframe``, which show text as it is). The uploaded bytes stay in
this session's memory; nothing is written to disk.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.model_choice import (
    AS_CODED,
    EVENT_HELP,
    REFERENCE_HELP,
    event_options,
    reference_options,
)
from dashboard.text import literal, literal_list
from dashboard.upload import UPLOAD_TYPES
from deid_core.errors import DeidError
from deid_core.io.reading import read_table
from deid_core.release_summary import (
    RELEASE_PARAM,
    Estimate,
    ReceivedCheck,
    ReleaseSummary,
    assess_received,
    check_received,
    decode_release,
    encode_release,
)
from deid_core.risk.classes import RiskSummary
from deid_core.risk.release import JUDGED_BASES
from deid_core.utility import SUPPORTED_FAMILIES, ModelSpec
from deid_core.utility.effects import EFFECT_NAMES
from deid_core.utility.models import FitResult, fit_model
from deid_core.utility.spec import BINARY_FAMILIES

KEY_SUMMARY = state.PREFIX + "release.summary"
KEY_ERROR = state.PREFIX + "release.error"
KEY_RECEIVED = state.PREFIX + "release.received"
KEY_FIT = state.PREFIX + "release.fit"

#: The sentence that says the file loaded is the one the link describes.
MATCHES = "This is the release described"


# ---------------------------------------------------------------------------- custodian side
def app_root_link(query: str) -> str:
    """The app's root address with ``query`` (a recipient opens the app, not the custodian's
    page); the query string alone when the address is unknown (e.g. in tests)."""
    try:
        url = st.context.url
    except Exception:  # no browser context (bare script run)
        url = None
    if not url:
        return query
    parts = urlsplit(url)
    path = parts.path if parts.path.endswith("/") else parts.path.rsplit("/", 1)[0] + "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")) + query


def render_release_link(summary: ReleaseSummary | None, problem: str | None) -> None:
    """The Export page's two links, which is for whom, and the release link itself."""
    st.subheader("Share: a configuration link or a release link")
    st.markdown(
        "- **Configuration link** (the sidebar's *Copy link*): for colleagues who hold the "
        "**same source file**. It names the source's columns and carries every masking "
        "parameter; whoever opens it is asked for the source file. Never send it to a "
        "recipient of the masked file.\n"
        "- **Release link** (below): for the **recipients** of the masked file. It carries "
        "only what the release shows: the released columns' names, how many source columns "
        "were removed (not their names), each masking step in plain words (its parameters only "
        "if the report includes them), the verdict, your model's estimate on the original and "
        "the masked data, and the masked file's rows, columns and SHA-256. Opened, it shows "
        "all that without any upload and lets the recipient check that the file they hold is "
        "this release."
    )
    if problem is not None:
        st.warning(literal(f"The release link could not be made: {problem}"))
        return
    if summary is None:
        st.caption(
            "Build the report above: the release link describes the masked file and the report "
            "exactly as built (their date and the file's SHA-256)."
        )
        return
    try:
        encoded = encode_release(summary)
    except DeidError as error:
        st.warning(literal(error), icon=":material/warning:")
        return
    if summary.mechanism:
        st.warning(
            "The report includes the masking parameters, so this link does too (never the "
            "seeds). Build the report without them for a link without them.",
            icon=":material/visibility:",
        )
    st.markdown("**Release link (for recipients)**")
    st.code(app_root_link(f"?{RELEASE_PARAM}={encoded}"), language=None, wrap_lines=True)
    with st.expander("Exactly what the release link holds"):
        st.code(summary.to_json(), language="json", wrap_lines=True)


# ---------------------------------------------------------------------------- session
def active() -> bool:
    """Whether this session is a recipient's: opened on ``?release=...`` (read once; the
    parameter stays in the address bar, so a reload opens the same view)."""
    ss = st.session_state
    if ss.get(KEY_SUMMARY) is not None or ss.get(KEY_ERROR) is not None:
        return True
    param = st.query_params.get(RELEASE_PARAM)
    if param is None:
        return False
    try:
        ss[KEY_SUMMARY] = decode_release(param)
    except DeidError as error:
        ss[KEY_ERROR] = f"The release link could not be read: {error}"
    except Exception as error:  # never a traceback
        ss[KEY_ERROR] = f"The release link could not be read: {state.user_message(error)}"
    return True


def forget() -> None:
    """Leave the recipient's view for the whole dashboard."""
    for key in (KEY_SUMMARY, KEY_ERROR, KEY_RECEIVED, KEY_FIT):
        st.session_state.pop(key, None)
    if RELEASE_PARAM in st.query_params:
        del st.query_params[RELEASE_PARAM]


def render_sidebar() -> None:
    st.sidebar.caption(
        "You are viewing a release link: it holds no data. A file you load stays in this "
        "browser session; nothing is written to disk or shared."
    )
    if st.sidebar.button("Open the whole dashboard instead", key="release.leave"):
        forget()
        st.rerun()


# ---------------------------------------------------------------------------- the view
def _estimate_row(who: str, estimate: Estimate | None) -> dict[str, Any]:
    if estimate is None:
        return {"Fit": who, "Estimate (95% CI)": "not available", "Records used": None}
    return {"Fit": who, "Estimate (95% CI)": estimate.text(), "Records used": estimate.records}


def render_view() -> None:
    """The collaborator's page (see the module docstring)."""
    summary: ReleaseSummary | None = st.session_state.get(KEY_SUMMARY)
    error = st.session_state.get(KEY_ERROR)
    st.title("A release shared with you")
    if summary is None:
        st.error(literal(error or "The release link could not be read."))
        return
    st.caption(
        "You opened a release link. It describes the masked file the data custodian released "
        "and holds no data. Everything below is as the custodian's report states it; load the "
        "file you received to check it."
    )
    render_described(summary)
    render_check(summary)


def render_described(summary: ReleaseSummary) -> None:
    st.subheader("What was done")
    st.markdown(
        f"The released file has **{summary.rows:,} rows** and **{summary.n_columns:,} "
        f"columns**: {literal_list(summary.columns, limit=60)}."
    )
    st.markdown(
        f"{summary.removed:,} column(s) of the source file were removed (direct identifiers, "
        "the record id, identifiers replaced by pseudonyms); their names are not shared."
    )
    st.markdown("Masking, step by step:")
    for line in summary.steps or ("no masking step",):
        st.markdown(f"- {literal(line)}")
    st.caption(
        "The custodian included the masking parameters in the report; never the random seeds."
        if summary.mechanism
        else "The custodian withheld the masking parameters and the random seeds."
    )

    st.subheader("The custodian's verdict")
    verdict = summary.verdict
    show = st.success if verdict.meets else st.warning
    show(literal(verdict.text()), icon=":material/gavel:")
    st.caption(literal(f"Judged on the {JUDGED_BASES[verdict.basis]}."))
    classes = summary.classes
    st.markdown(
        f"The custodian's count on the released file ({literal(classes.unit)}, on the "
        f"quasi-identifiers {literal_list(summary.quasi_identifiers)}): smallest class "
        f"k = {classes.k:,}, maximum risk {classes.max_risk:.4f}, average risk "
        f"{classes.average_risk:.4f}."
    )

    st.subheader("The custodian's model (their figures)")
    model = summary.model
    if model is None:
        st.caption("The custodian's report gives no model estimate that this link can share.")
    else:
        st.markdown(
            f"A {literal(model.family)} model of {literal(repr(model.outcome))} on "
            f"{literal(repr(model.exposure))}"
            + (f", adjusted for {literal_list(model.covariates)}" if model.covariates else "")
            + f": {literal(model.label)}. Fitted by the custodian on the original data (which "
            "you do not hold) and on the masked data"
            + (f" (mean over {model.replicates:,} random replicates)." if model.replicates else ".")
        )
        st.dataframe(
            pd.DataFrame(
                [
                    _estimate_row("Custodian, original data", model.original),
                    _estimate_row("Custodian, masked data", model.masked),
                ]
            ),
            hide_index=True,
        )

    st.subheader("The released file")
    st.markdown(
        f"{literal(summary.file_format)}, {summary.size:,} bytes, {summary.rows:,} rows, "
        f"{summary.n_columns:,} columns. Report of {literal(summary.created)}. SHA-256:"
    )
    st.code(summary.sha256, language=None)
    st.caption("Software: " + ", ".join(f"{literal(n)} {literal(v)}" for n, v in summary.software))


# ---------------------------------------------------------------------------- the check
@dataclass(frozen=True)
class Received:
    """The file loaded, read once: its table, the check against the link, and its own class
    risk (or why that could not be counted)."""

    digest: str
    name: str
    frame: pd.DataFrame | None
    problem: str | None = None
    check: ReceivedCheck | None = None
    risk: RiskSummary | None = None
    risk_problem: str | None = None


def _received(summary: ReleaseSummary, data: bytes, name: str) -> Received:
    digest = hashlib.sha256(data).hexdigest()
    found: Received | None = st.session_state.get(KEY_RECEIVED)
    if found is not None and found.digest == digest and found.name == name:
        return found
    try:
        frame = read_table(data, name).frame
    except Exception as error:
        received = Received(digest, name, None, state.user_message(error))
    else:
        check = check_received(summary, data, frame)
        risk = risk_problem = None
        try:
            risk = assess_received(summary, frame)
        except Exception as error:
            risk_problem = state.user_message(error)
        received = Received(digest, name, frame, None, check, risk, risk_problem)
    st.session_state[KEY_RECEIVED] = received
    st.session_state.pop(KEY_FIT, None)
    return received


def render_check(summary: ReleaseSummary) -> None:
    st.subheader("Check the file you received")
    uploaded = st.file_uploader(
        "The masked file",
        type=list(UPLOAD_TYPES),
        key="release.upload",
        help="The file the custodian sent you. It is read in this session's memory only.",
    )
    if uploaded is None:
        st.caption(
            "Load the masked file: its SHA-256, rows and columns are compared with the link, "
            "its risk is counted as the link says, and you can fit your own model on it."
        )
        return
    received = _received(summary, uploaded.getvalue(), uploaded.name)
    if received.frame is None or received.check is None:
        st.error(literal(received.problem or "The file could not be read."))
        return
    check = received.check
    if check.matches:
        st.success(
            f"**{MATCHES}**: the same SHA-256, {summary.rows:,} rows and the "
            f"{summary.n_columns:,} columns the link names.",
            icon=":material/verified:",
        )
    else:
        st.error(
            "**This is not the release described.** "
            + " ".join(literal(d) for d in check.differences),
            icon=":material/error:",
        )
    st.caption("SHA-256 of the file you loaded:")
    st.code(check.sha256, language=None)
    render_risk(summary, received)
    render_model(summary, received.frame)


def render_risk(summary: ReleaseSummary, received: Received) -> None:
    st.markdown("**Its risk, counted on the file you loaded**")
    if received.risk is None:
        st.warning(literal(received.risk_problem or "The risk could not be counted."))
        return
    risk = received.risk
    st.caption(
        "Counted "
        + (
            f"in people (through the column {literal(repr(summary.person_column))})"
            if risk.unit == "people"
            else "in records"
        )
        + f" on the quasi-identifiers {literal_list(summary.quasi_identifiers)}; "
        + (
            "a blank (suppressed or missing) value matches any value"
            if summary.missing == "wildcard"
            else "a blank value is a category of its own"
        )
        + ", as the link says."
    )
    classes = summary.classes
    st.dataframe(
        pd.DataFrame(
            {
                "Figure": ["Smallest class k", "Maximum risk", "Average risk"],
                "Your count": [f"{risk.k:,}", f"{risk.max_risk:.4f}", f"{risk.average_risk:.4f}"],
                "Custodian's count": [
                    f"{classes.k:,}",
                    f"{classes.max_risk:.4f}",
                    f"{classes.average_risk:.4f}",
                ],
            }
        ),
        hide_index=True,
    )


def render_model(summary: ReleaseSummary, frame: pd.DataFrame) -> None:
    """The recipient's model on the file, chosen among the released columns it has."""
    st.markdown("**Your model on this file**")
    columns = [c for c in map(str, frame.columns) if c in summary.columns]
    if len(columns) < 2:
        st.caption("The file has too few of the release's columns for a model.")
        return
    model = summary.model
    families = list(SUPPORTED_FAMILIES)
    left, middle, right = st.columns(3)
    family = left.selectbox(
        "Model family",
        families,
        index=families.index(model.family) if model and model.family in families else 0,
        key="release.family",
    )

    def default(name: str | None, fallback: int) -> int:
        return columns.index(name) if name in columns else min(fallback, len(columns) - 1)

    outcome = middle.selectbox(
        "Outcome",
        columns,
        index=default(model.outcome if model else None, len(columns) - 1),
        key="release.outcome",
    )
    exposure = right.selectbox(
        "Exposure",
        columns,
        index=default(model.exposure if model else None, 0),
        key="release.exposure",
    )
    others = [c for c in columns if c not in (outcome, exposure)]
    covariates = st.multiselect(
        "Covariates",
        others,
        default=[c for c in (model.covariates if model else ()) if c in others],
        key="release.covariates",
    )
    factors = st.multiselect(
        "Covariates fitted as factors (categories)",
        covariates,
        default=[],
        key="release.factors",
        help="Numeric codes (e.g. a region coded 1 to 5) dummy-coded instead of one linear term.",
    )
    references = _reference_choices(frame, covariates, factors)
    extra: dict[str, Any] = {"references": references} if references else {}
    if family in BINARY_FAMILIES:
        options = event_options(frame[outcome])
        if options is not None:
            state.forget_stale_choice("release.event", options)
            chosen = st.selectbox(
                f"Event when {literal(outcome)} is",
                options,
                key="release.event",
                format_func=literal,
                help=EVENT_HELP,
            )
            if chosen != AS_CODED:
                extra["event"] = chosen
    rest = [c for c in others if c not in covariates]
    if family == "cox":
        extra["time"] = st.selectbox("Follow-up time", rest, key="release.time")
    elif family == "binomial":
        extra["trials"] = st.selectbox("Trials", rest, key="release.trials")
    elif family == "poisson":
        extra["offset"] = st.selectbox(
            "Person-time offset (optional)", [None, *rest], key="release.offset"
        )
    try:
        spec = ModelSpec(
            outcome,
            exposure,
            covariates=tuple(covariates),
            family=family,
            factors=tuple(factors),
            **extra,
        )
        fit = _fit(frame, spec)
    except Exception as error:
        st.warning(literal(f"Your model could not be fitted: {state.user_message(error)}"))
        return
    mine = Estimate.of(fit.effect(), fit.n)
    rows = [_estimate_row("You, the file you loaded", mine)]
    same = model is not None and (model.family, model.outcome, model.exposure) == (
        family,
        outcome,
        exposure,
    )
    if model is not None:
        rows = [
            _estimate_row("Custodian, original data", model.original),
            _estimate_row("Custodian, masked data", model.masked),
            *rows,
        ]
    label = f"{EFFECT_NAMES[family]} per unit of {exposure} (95% CI)"
    st.markdown(f"{literal(label)}: {literal(mine.text())}")
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    if model is not None and not same:
        st.caption(
            "Your model differs from the custodian's (family, outcome or exposure): the "
            "figures are not estimates of the same quantity."
        )


def _reference_choices(
    frame: pd.DataFrame, covariates: list[str], factors: list[str]
) -> tuple[tuple[str, str], ...]:
    """The reference level of each categorical covariate (a factor, or a column that is not
    numeric) chosen by the recipient; the first level, the model's default, is not stored."""
    is_number, is_bool = pd.api.types.is_numeric_dtype, pd.api.types.is_bool_dtype
    categorical = [
        c for c in covariates if c in factors or not is_number(frame[c]) or is_bool(frame[c])
    ]
    references = []
    places = st.columns(min(len(categorical), 3) or 1)
    for index, column in enumerate(categorical):
        labels = reference_options(frame[column])
        if labels is None:
            continue
        key = f"release.reference.{column}"
        state.forget_stale_choice(key, labels)
        chosen = places[index % len(places)].selectbox(
            literal(f"Reference level of {column}"),
            labels,
            key=key,
            format_func=literal,
            help=REFERENCE_HELP,
        )
        if chosen != labels[0]:
            references.append((column, chosen))
    return tuple(references)


def _fit(frame: pd.DataFrame, spec: ModelSpec) -> FitResult:
    """The fit of ``spec`` on the loaded file, kept for the session (one at a time)."""
    found = st.session_state.get(KEY_FIT)
    if found is not None and found[0] == spec:
        return found[1]
    with st.spinner("Fitting your model..."):
        fit = fit_model(frame, spec)
    st.session_state[KEY_FIT] = (spec, fit)
    return fit
