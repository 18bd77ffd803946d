"""Record uniqueness: the NAACCR RU program (uniques and small record sets for every
combination of key variables, the variables' weights, collapse the worst, iterate)."""

import contextlib
import json

import pandas as pd
import streamlit as st

from dashboard import charts, compute, identifiers, jobs, state, widgets
from dashboard.help import metric_help
from dashboard.sidebar import show_release_verdict
from dashboard.text import literal
from deid_core.risk.uniqueness import (
    DEFAULT_SMALL_CLASS,
    MAX_KEYS,
    PUBLIC_THRESHOLD,
    RESEARCH_THRESHOLD,
    iteration_table,
)

st.title("Record uniqueness")
st.caption(
    "The NAACCR Record Uniqueness (RU) program: for every combination of the key variables, "
    "at the precision the recipe's masking gives them, count the unique records and the "
    "records in small sets (combinations shared by at most T records). A regression of "
    "ln(% unique) on the variables present gives each variable's weight: collapse the "
    "heaviest one into fewer values, re-run, and compare the runs until the file meets the "
    f"guideline ({RESEARCH_THRESHOLD:g}% of records in small sets for a research file, "
    f"{PUBLIC_THRESHOLD:g}% for a public file)."
)

MEMORY_KEY = "uniqueness.memory"
HISTORY_KEY = "uniqueness.history"


def remembered(key: str, default) -> str:
    """A widget key initialised from the page's last value: Streamlit drops a widget's state
    while another page is shown, and the steward goes to the Mask page and back."""
    memory = st.session_state.setdefault(MEMORY_KEY, {})
    if key not in st.session_state:
        st.session_state[key] = memory.get(key, default)
    return key


def remember(key: str, value) -> None:
    st.session_state.setdefault(MEMORY_KEY, {})[key] = value


def precision(recipe, column: str) -> str:
    """How precisely ``column`` is released: its masking steps, or 'as recorded'."""
    steps = recipe.steps_for(column)
    if not steps:
        return "as recorded"
    return "; ".join(step.describe().removeprefix(f"{column}: ") for step in steps)


def run_label(recipe, keys) -> str:
    """A run's name in the history: the key variables with their masking (Table 2's
    'Variable list')."""
    return ", ".join(
        key if not recipe.steps_for(key) else f"{key} ({precision(recipe, key)})" for key in keys
    )


def render() -> None:
    workspace = state.current_workspace()
    recipe = state.current_recipe()
    if workspace.people(recipe) is not None:
        st.warning(
            literal(identifiers.rows_only_note("Record uniqueness")), icon=":material/warning:"
        )
    keys, small_class = render_controls(workspace, recipe)
    if keys is None:
        return
    render_precisions(workspace, recipe, keys)
    perturbed = [k for k in keys if any(step.perturbative for step in recipe.steps_for(k))]
    if perturbed:
        st.warning(
            literal(
                f"{', '.join(perturbed)} perturbed (noise, smoothing): every perturbed value is "
                "unique, yet nobody can match it exactly, so the uniques counted here overstate "
                "what an intruder can do with those keys. The verdict judges this release by "
                "record linkage (Risk page); coarsen or leave out perturbed keys to count the "
                "rest."
            ),
            icon=":material/info:",
        )

    def start() -> None:
        if compute.large_data():
            with contextlib.suppress(Exception):  # the results below say what went wrong
                compute.uniqueness(recipe, keys, small_class)

    def results() -> None:
        progress_area = st.empty()
        try:
            live = compute.uniqueness(recipe, keys, small_class, where=progress_area)
        except Exception as error:
            st.error(literal(state.user_message(error)), icon=":material/error:")
            return
        result = live.shown(
            "The figures below are the last counts, for the previous choice of keys or "
            "masking, until the new ones are ready."
        )
        if result is None:
            return
        render_headline(recipe, result)
        render_combinations(result)
        render_weights(result)
        render_omit_one(result)
        if not live.updating:
            render_history(workspace, recipe, keys, small_class, result)

    jobs.live_fragment(results, prepare=start)


def render_controls(workspace, recipe) -> tuple[tuple[str, ...] | None, int]:
    """Key variables and T; (None, T) with a message when the choice cannot be run."""
    roles = recipe.roles
    withheld = set(roles.direct_identifiers) | ({roles.record_id} if roles.record_id else set())
    options = [c for c in workspace.original.columns if c not in withheld]
    default = [c for c in roles.quasi_identifiers if c in options][:MAX_KEYS]
    prefix = f"uniqueness.{id(workspace)}"
    left, right = st.columns([3, 1])
    keys_key = remembered(f"{prefix}.keys", default)
    st.session_state[keys_key] = [c for c in st.session_state[keys_key] if c in options]
    keys = left.multiselect(
        f"Key variables (at most {MAX_KEYS})",
        options,
        key=keys_key,
        help="Variables an intruder could know about a person (age, sex, race, year of "
        "diagnosis, geography...). Every combination of them is counted: 2^K - 1 "
        f"combinations for K variables, {2**MAX_KEYS - 1:,} for {MAX_KEYS}. Starts with the "
        "recipe's quasi-identifiers.",
    )
    remember(keys_key, list(keys))
    t_key = remembered(f"{prefix}.small_class", DEFAULT_SMALL_CLASS)
    small_class = right.number_input(
        "Small set size T",
        min_value=1,
        max_value=1000,
        step=1,
        key=t_key,
        help=metric_help("ru_small_class"),
    )
    remember(t_key, int(small_class))
    if len(roles.quasi_identifiers) > MAX_KEYS:
        left.caption(
            f"The recipe has {len(roles.quasi_identifiers):,} quasi-identifiers; the first "
            f"{MAX_KEYS:,} are chosen."
        )
    if not keys:
        st.info(
            "Choose at least one key variable: the combinations of their values are counted.",
            icon=":material/info:",
        )
        return None, int(small_class)
    if len(keys) > MAX_KEYS:
        st.error(
            f"Choose at most {MAX_KEYS:,} key variables ({len(keys):,} are chosen): "
            f"{len(keys):,} variables would make {2 ** len(keys) - 1:,} combinations. Drop the "
            "ones an intruder is least likely to know.",
            icon=":material/error:",
        )
        return None, int(small_class)
    return tuple(keys), int(small_class)


def render_precisions(workspace, recipe, keys) -> None:
    """Each key's precision (its masking) and number of distinct released values (Table 1)."""
    rows = []
    for key in keys:
        try:
            distinct = state.SessionCache("distinct_values", size=64).get(
                (key, json.dumps([s.to_dict() for s in recipe.steps_for(key)], default=str)),
                lambda key=key: int(workspace.masked_column(recipe, key).nunique(dropna=False)),
            )
        except Exception:  # shown by the computation below, with a safe message
            distinct = None
        rows.append({"Variable": key, "Precision": precision(recipe, key), "Values": distinct})
    with st.expander("Precision of the key variables (from the recipe's masking)", expanded=True):
        st.dataframe(
            pd.DataFrame(rows),
            hide_index=True,
            column_config={
                "Precision": st.column_config.TextColumn(width="large"),
                "Values": st.column_config.NumberColumn(
                    help="Distinct released values (missing counts as one value)."
                ),
            },
        )
        st.page_link(
            "app_pages/mask.py",
            label="Change a variable's precision on the Mask page",
            icon=":material/tune:",
        )


def render_headline(recipe, result) -> None:
    full = result.full
    a, b, c = st.columns(3)
    a.metric(
        "Unique records (all keys)",
        f"{full.uniques_pct:.2f}%",
        help=metric_help("ru_uniques_pct"),
    )
    a.caption(f"{full.uniques:,} of {full.records:,} records")
    b.metric(
        f"Records in small sets (≤ {result.small_class:,})",
        f"{full.small_pct:.2f}%",
        help=metric_help("ru_small_pct"),
    )
    b.caption(f"{full.small:,} of {full.records:,} records")
    worst = result.worst_variable
    if worst is not None and result.weights is not None:
        c.metric(
            "Collapse first",
            literal(worst),
            help="The key variable with the largest RU weight: collapsing it into fewer "
            "values cuts unique records the most. " + metric_help("ru_weight"),
        )
        st.markdown(
            f"**Collapse first: {literal(worst)}** (weight {result.weights[worst]:.3f}), "
            f"currently released {literal(precision(recipe, worst))}."
        )
    else:
        c.metric("Collapse first", "unavailable", help=metric_help("ru_weight"))
        if result.weights_note:
            c.caption(literal(result.weights_note))
    guideline = result.verdict()
    lines = []
    for name, threshold, passed in (
        ("research", RESEARCH_THRESHOLD, guideline["research"]),
        ("public", PUBLIC_THRESHOLD, guideline["public"]),
    ):
        lines.append(
            f"{name.capitalize()} file guideline: {full.small_pct:.2f}% of records in small sets "
            f"(≤ {result.small_class:,}) against {threshold:g}%: "
            + ("within the guideline." if passed else "above the guideline.")
        )
    st.markdown("\n".join(f"- {literal(line)}" for line in lines))
    st.caption(
        "The NAACCR guidelines describe the key variables' small sets, counted in records; "
        "they are not the release's verdict, which is the one below (and in the sidebar)."
    )
    show_release_verdict(state.current_recipe())
    st.caption(metric_help("ru_verdict"))


def render_combinations(result) -> None:
    st.subheader("Every combination of the key variables")
    table = result.to_frame()
    k = len(result.keys)
    left, right = st.columns(2)
    low, high = 1, k
    if k > 1:
        low, high = left.slider(
            "Number of variables in the combination",
            1,
            k,
            (1, k),
            key="uniqueness.filter.size",
            help="Show only combinations of this many variables.",
        )
    contains = right.multiselect(
        "Contains the variables",
        list(result.keys),
        key="uniqueness.filter.contains",
        help="Show only combinations that include every variable chosen here.",
    )
    wanted = set(contains)
    members = pd.Series([wanted <= set(c.variables) for c in result.combinations], table.index)
    shown = table[table["n_variables"].between(low, high) & members]
    st.caption(
        f"{len(shown):,} of {len(table):,} combinations (2^{k:d} - 1); the full set of "
        "variables on top. Click a column header to sort."
    )
    st.dataframe(
        shown,
        hide_index=True,
        column_config={
            "variables": st.column_config.TextColumn("Variables", width="large"),
            "n_variables": st.column_config.NumberColumn("Number of variables"),
            "records": st.column_config.NumberColumn("Records"),
            "uniques": st.column_config.NumberColumn("Unique records", help="Class size 1."),
            "uniques_pct": st.column_config.NumberColumn(
                "Unique %", format="%.2f", help=metric_help("ru_uniques_pct")
            ),
            "small": st.column_config.NumberColumn(
                f"Records in sets ≤ {result.small_class}",
                help=f"Records whose combination is shared by at most {result.small_class}.",
            ),
            "small_pct": st.column_config.NumberColumn(
                f"Sets ≤ {result.small_class} %", format="%.2f", help=metric_help("ru_small_pct")
            ),
        },
    )
    widgets.csv_download(
        "Download every combination (CSV)",
        table,
        "record_uniqueness.csv",
        "All combinations, unfiltered, in full precision.",
    )


def render_weights(result) -> None:
    st.subheader("Weight of each variable")
    k = len(result.keys)
    fit = f"{result.n_fit:,} of 2^{k} - 1 = {2**k - 1:,} combinations entered the fit."
    if result.weights is None:
        st.info(
            literal((result.weights_note or "The weights could not be estimated.") + " " + fit),
            icon=":material/info:",
        )
        return
    charts.show_chart(
        charts.uniqueness_weights_chart(result.weights_frame(), result.worst_variable),
        "Weight of each variable",
    )
    st.caption(
        literal(
            f"OLS of ln(% unique) on 0/1 indicators of the variables present: {fit}"
            + (f" {result.weights_note}" if result.weights_note else "")
        )
    )


def render_omit_one(result) -> None:
    st.subheader("Omitting one variable (RU Table 3 layout)")
    st.caption(
        "Uniques and small sets of the full set less one variable: the variable whose omission "
        "lowers them most is the one to collapse or drop."
    )
    table = result.omit_one()
    st.dataframe(
        table,
        hide_index=True,
        column_config={
            "omitted": st.column_config.TextColumn("Variable omitted"),
            "uniques": st.column_config.NumberColumn("Unique records"),
            "uniques_pct": st.column_config.NumberColumn(
                "Unique %", format="%.2f", help=metric_help("ru_uniques_pct")
            ),
            "small": st.column_config.NumberColumn(f"Records in sets ≤ {result.small_class}"),
            "small_pct": st.column_config.NumberColumn(
                f"Sets ≤ {result.small_class} %", format="%.2f", help=metric_help("ru_small_pct")
            ),
            "variables": st.column_config.TextColumn("Variables kept", width="large"),
        },
    )


def history_runs(workspace) -> list[dict]:
    """The kept runs of this data set (a new data set starts a new history)."""
    history = st.session_state.get(HISTORY_KEY)
    if not history or history.get("workspace") != id(workspace):
        history = {"workspace": id(workspace), "runs": []}
        st.session_state[HISTORY_KEY] = history
    return history["runs"]


def _text(value, spec: str) -> str:
    return "" if pd.isna(value) else format(value, spec)


def history_display(table: pd.DataFrame) -> pd.DataFrame:
    """The iteration table as the paper prints it: each run's variable list with its full-set
    figures, then its variables' weights (largest first) indented below."""
    header = table["row"] == "variables"
    return pd.DataFrame(
        {
            "Run": header.cumsum(),
            "Variable list / variable": [
                run if first else f"   ↳ {row}"
                for run, row, first in zip(table["run"], table["row"], header, strict=True)
            ],
            "RU weight": [_text(v, ".4f") for v in table["weight"]],
            "Unique records": [_text(v, ",") for v in table["uniques"]],
            "Unique %": [_text(v, ".2f") for v in table["uniques_pct"]],
            "Records in small sets": [_text(v, ",") for v in table["small"]],
            "Small sets %": [_text(v, ".2f") for v in table["small_pct"]],
        }
    )


def render_history(workspace, recipe, keys, small_class, result) -> None:
    st.subheader("Iteration history (RU Table 2 layout)")
    st.caption(
        "Keep each run, collapse the heaviest variable on the Mask page, come back and keep "
        "the new run: the runs stay side by side with their recipes."
    )
    runs = history_runs(workspace)
    left, right = st.columns(2)
    label = run_label(recipe, keys)
    if small_class != DEFAULT_SMALL_CLASS:
        label += f" [small sets ≤ {small_class}]"
    signature = (compute.recipe_key(recipe), keys, small_class)
    if left.button(
        "Keep this run",
        help="Add the current recipe and its results to the history below.",
        icon=":material/bookmark_add:",
    ):
        if any(run["signature"] == signature for run in runs):
            st.info("This run is already in the history.", icon=":material/info:")
        else:
            runs.append(
                {
                    "label": label,
                    "recipe": recipe.to_json(include_seeds=False),
                    "result": result,
                    "signature": signature,
                }
            )
    if right.button(
        "Clear history", disabled=not runs, help="Forget every kept run.", icon=":material/delete:"
    ):
        runs.clear()
    if not runs:
        st.caption("No run kept yet.")
        return
    table = iteration_table([(run["label"], run["result"]) for run in runs])
    st.dataframe(
        history_display(table),
        hide_index=True,
        column_config={
            "Run": st.column_config.NumberColumn(width="small"),
            "Variable list / variable": st.column_config.TextColumn(width="large"),
            "RU weight": st.column_config.TextColumn(help=metric_help("ru_weight")),
            "Unique %": st.column_config.TextColumn(help=metric_help("ru_uniques_pct")),
            "Small sets %": st.column_config.TextColumn(help=metric_help("ru_small_pct")),
        },
    )
    widgets.csv_download(
        "Download the history (CSV)",
        table,
        "record_uniqueness_history.csv",
        "Every kept run with its variables' weights, in full precision.",
    )
    for number, run in enumerate(runs, start=1):
        with st.expander(f"Run {number:d}: the recipe ({literal(run['label'])})"):
            st.code(run["recipe"], language="json")


render()
