"""Data: choose a built-in demo or upload a file, look at it, and set the variable roles."""

import pandas as pd
import streamlit as st

from dashboard import identifiers, share, state
from dashboard.upload import UPLOAD_TYPES, Messages, read_upload, role_problems, show_messages
from deid_core.datasets import DEMO_DATASETS
from deid_core.errors import DeidError
from deid_core.io.columns import profile_columns
from deid_core.recipe import ROLE_NAMES, Recipe, Roles
from deid_core.report.provenance import FileFingerprint
from deid_core.share import load_configuration

KEY_UPLOAD_ID = "deid.upload_id"
KEY_MESSAGES = "deid.load_messages"
KEY_RECIPE_FILE = "deid.recipe_file"
KEY_SOURCE_TAB = "data.source_tab"
KEY_OPEN_TAB = "deid.data_open_tab"  # the tab to open on the next run (after a load)
DEMO_TAB, UPLOAD_TAB = "Built-in demo data", "Upload a file"
NONE = "(none)"


def _one_column(role: str, columns: list[str], current: str | None, prefix: str, help_text: str):
    """A select box for a role held by at most one column."""
    return st.selectbox(
        ROLE_NAMES[role],
        [NONE, *columns],
        index=1 + columns.index(current) if current in columns else 0,
        key=f"{prefix}.{role}",
        help=help_text,
    )


st.title("Data")
st.caption(
    "Load the data to de-identify and say what each column is. Uploaded data stay in this "
    "browser session only: nothing is written to disk."
)

flash = state.pop_flash()
if flash:
    st.success(flash, icon=":material/check:")

# The open tab is kept in session state, so an upload, a change of roles or a flash message
# (which reruns the page) does not send the user back to the demos; it opens on the source of
# the data in use.
if KEY_OPEN_TAB in st.session_state:
    st.session_state[KEY_SOURCE_TAB] = st.session_state.pop(KEY_OPEN_TAB)
elif KEY_SOURCE_TAB not in st.session_state:
    st.session_state[KEY_SOURCE_TAB] = (
        DEMO_TAB if state.current_dataset().demo_key is not None else UPLOAD_TAB
    )
source_tab, upload_tab = st.tabs([DEMO_TAB, UPLOAD_TAB], key=KEY_SOURCE_TAB, on_change="rerun")

# ----------------------------------------------------------------------------- demos
with source_tab:
    keys = list(DEMO_DATASETS)
    current = state.current_dataset()
    default_index = keys.index(current.demo_key) if current.demo_key in keys else 0
    choice = st.selectbox(
        "Demo data set",
        keys,
        index=default_index,
        format_func=lambda k: DEMO_DATASETS[k].title,
        key="data.demo_choice",
    )
    demo = DEMO_DATASETS[choice]
    if demo.synthetic:
        st.badge("Synthetic data", icon=":material/science:", color="violet")
        st.info("Synthetic data: no row describes a real person.", icon=":material/science:")
    else:
        st.badge("Real data", icon=":material/public:", color="gray")
    st.markdown(demo.description)
    st.markdown(f"**Source and attribution:** {demo.source}")
    st.markdown(f"**Licence:** {demo.licence}")
    loaded = current.demo_key == choice
    if st.button(
        "Reload this demo" if loaded else "Use this demo",
        type="secondary" if loaded else "primary",
        help="Replaces the current data, roles and masking.",
    ):
        try:
            state.load_demo_dataset(choice)
            st.session_state[KEY_MESSAGES] = Messages()
            st.session_state[KEY_OPEN_TAB] = DEMO_TAB
            state.flash(f"Loaded the demo '{demo.title}'.")
        except Exception as error:
            st.error(state.user_message(error))
        else:
            st.rerun()

# ----------------------------------------------------------------------------- upload
with upload_tab:
    uploaded = st.file_uploader(
        "Upload a table",
        type=list(UPLOAD_TYPES),
        help="CSV, TSV, TXT, Excel, Parquet, Stata or SAS; at most 50 MB. The first row of a "
        "text file holds the column names.",
        key="data.upload",
    )
    reload = False
    showing_demo = state.current_dataset().demo_key is not None
    if (
        uploaded is not None
        and showing_demo
        and st.session_state.get(KEY_UPLOAD_ID) == uploaded.file_id
    ):
        reload = st.button(
            f"Use '{uploaded.name}' again",
            help="Replaces the demo with the uploaded file (roles are suggested afresh).",
        )
    if uploaded is not None and (reload or st.session_state.get(KEY_UPLOAD_ID) != uploaded.file_id):
        st.session_state[KEY_UPLOAD_ID] = uploaded.file_id
        content = uploaded.getvalue()
        outcome = read_upload(content, uploaded.name)
        if outcome.frame is None:
            st.session_state[KEY_MESSAGES] = Messages(
                errors=tuple(
                    f"The file '{outcome.name}' was not loaded: {text}"
                    for text in outcome.messages.errors
                )
            )
        else:
            try:
                state.load_dataset(
                    outcome.frame,
                    outcome.name,
                    source_file=FileFingerprint.of(content, outcome.name, "as uploaded"),
                )
            except Exception as error:
                st.error(state.user_message(error))
            else:
                st.session_state[KEY_MESSAGES] = Messages(warnings=outcome.read_warnings)
                st.session_state[KEY_OPEN_TAB] = UPLOAD_TAB
                state.flash(
                    f"Loaded '{outcome.name}': {len(outcome.frame):,} records, "
                    f"{outcome.frame.shape[1]} columns. Check the roles below."
                )
                st.rerun()

messages = st.session_state.get(KEY_MESSAGES)
if isinstance(messages, Messages):
    show_messages(messages)

# ----------------------------------------------------------------------------- preview
workspace = state.current_workspace()
recipe = state.current_recipe()
frame = workspace.original
info = state.current_dataset()

st.header(f"{info.name}")
st.caption(f"{len(frame):,} records, {frame.shape[1]} columns. First rows:")
st.dataframe(frame.head(20), hide_index=True)

st.subheader("Column profile")
profiles = state.SessionCache("column_profiles", size=2).get(
    id(workspace), lambda: profile_columns(frame)
)
st.dataframe(
    pd.DataFrame(
        [
            {
                "Column": p.name,
                "Type": p.kind,
                "Missing": p.n_missing,
                "Distinct values": p.n_distinct,
                "Roles": ", ".join(recipe.roles.roles_of(p.name)) or "other (released as is)",
                "Notes": "; ".join(
                    note
                    for note, flag in (
                        ("all missing", p.all_missing),
                        ("a single value", p.one_level and not p.all_missing),
                        ("almost every value different", p.high_cardinality),
                        (f"{p.numeric_with_text} entries are not numbers", p.numeric_with_text),
                    )
                    if flag
                ),
            }
            for p in profiles
        ]
    ),
    hide_index=True,
)

# ----------------------------------------------------------------------------- roles
st.subheader("Variable roles")
st.caption(
    "Quasi-identifiers are what an intruder may know (age, sex, place, dates, dose) and drive "
    "the risk; the exposure, outcome and covariates make the collaborator's model and drive "
    "utility. A column can be both (Cologne's dose is a quasi-identifier and the exposure). "
    "Direct identifiers and the record id are never released as they are (the Export page "
    "drops them or replaces them by pseudonyms); columns with no role are released unchanged. "
    "Sensitive columns (and the outcome) are what a class must not reveal."
)
columns = [str(c) for c in frame.columns]
roles = recipe.roles
prefix = f"roles.{state.epoch()}"
with st.form(f"{prefix}.form", border=True):
    qis = st.multiselect(
        ROLE_NAMES["quasi_identifier"],
        columns,
        default=[c for c in roles.quasi_identifiers if c in columns],
        key=f"{prefix}.qi",
        help="Known to an intruder from outside; the exposure may be one too.",
    )
    left, right = st.columns(2)
    with left:
        exposure = _one_column(
            "exposure",
            columns,
            roles.exposure,
            prefix,
            "Numeric; its coefficient is what the utility compares.",
        )
        outcome = _one_column(
            "outcome",
            columns,
            roles.outcome,
            prefix,
            "Binary 0/1 for logistic and ERR models and the Cox model's event indicator; a "
            "count for Poisson and binomial models; numeric for linear regression (the model "
            "is chosen on the Utility page).",
        )
        record_id = _one_column(
            "record_id",
            columns,
            roles.record_id,
            prefix,
            "One value per person; used to tell correct from wrong re-identifications. It may "
            "repeat (several rows per person: visits, events): class sizes then count people.",
        )
        weight = _one_column(
            "weight",
            columns,
            roles.weight,
            prefix,
            "Sampling weights (positive): their sum in a class estimates its population size "
            "for the open-data risk on the Risk page.",
        )
    with right:
        covariates = st.multiselect(
            ROLE_NAMES["covariate"],
            columns,
            default=[c for c in roles.covariates if c in columns],
            key=f"{prefix}.covariates",
            help="Adjustment variables of the model.",
        )
        direct = st.multiselect(
            ROLE_NAMES["direct_identifier"],
            columns,
            default=[c for c in roles.direct_identifiers if c in columns],
            key=f"{prefix}.direct",
            help="Names, phone numbers, record numbers: dropped from the release, or replaced "
            "by pseudonyms (Export page).",
        )
        sensitive = st.multiselect(
            ROLE_NAMES["sensitive"],
            columns,
            default=[c for c in roles.sensitive if c in columns],
            key=f"{prefix}.sensitive",
            help="Released columns an intruder must not learn (a diagnosis, an income): the "
            "Risk page measures how much a class reveals about them (l-diversity, "
            "t-closeness), as it does for the outcome. Not a quasi-identifier.",
        )
    submitted = st.form_submit_button("Apply roles", type="primary")

if submitted:
    try:
        new_roles = Roles(
            quasi_identifiers=tuple(qis),
            direct_identifiers=tuple(direct),
            exposure=None if exposure == NONE else exposure,
            outcome=None if outcome == NONE else outcome,
            covariates=tuple(covariates),
            record_id=None if record_id == NONE else record_id,
            weight=None if weight == NONE else weight,
            sensitive=tuple(sensitive),
        )
        steps = state.keep_valid_steps(recipe.steps, new_roles, columns)
        data_steps = state.keep_valid_data_steps(recipe.data_steps, new_roles, columns)
        new_recipe = Recipe(new_roles, steps, data_steps)
    except DeidError as error:
        st.error(str(error), icon=":material/error:")
    except Exception as error:
        st.error(state.user_message(error))
    else:
        dropped = len(recipe.all_steps) - len(new_recipe.all_steps)
        state.set_recipe(new_recipe, external=True)
        note = f" {dropped} masking step(s) of withheld columns removed." if dropped else ""
        state.flash("Roles applied." + note)
        st.rerun()

show_messages(
    state.SessionCache("role_problems", size=4).get(
        (id(workspace), recipe.roles, workspace.model_family),
        lambda: role_problems(frame, recipe.roles, workspace.model_family),
    )
)

several = identifiers.several_rows_note(recipe)
if several:
    st.info(several, icon=":material/group:")

# ----------------------------------------------------------------------------- Safe Harbor
suggested = identifiers.render_safe_harbor(recipe)
if suggested is not None:
    state.set_recipe(suggested, external=True)
    state.flash("Applied the Safe Harbor screen's suggested roles and masking.")
    st.rerun()

# ----------------------------------------------------------------------------- recipe import
st.subheader("Import a recipe")
st.caption(
    "Apply a recipe or configuration file (JSON, e.g. downloaded from the Export page) to the "
    "data above: its roles and masking, and, when the file has them, the model and the release "
    "context. Recipes of every schema version are read; the data must have every column the "
    "file names."
)
recipe_file = st.file_uploader(
    "Recipe or configuration file",
    type=["json"],
    key="data.recipe_upload",
    help="A JSON recipe (schema version 1, 2 or 3). Nothing in it is data: only column names "
    "and masking parameters.",
)
if recipe_file is not None:
    seen = st.session_state.get(KEY_RECIPE_FILE)
    if seen is None or seen[0] != recipe_file.file_id:
        problem = None
        try:
            configuration = load_configuration(recipe_file.getvalue())
            configuration.check_columns(columns)
        except DeidError as error:
            problem = f"The recipe '{recipe_file.name}' was not applied: {error}"
        except Exception as error:
            problem = (
                f"The recipe '{recipe_file.name}' was not applied: {state.user_message(error)}"
            )
        st.session_state[KEY_RECIPE_FILE] = (recipe_file.file_id, problem)
        if problem is None:
            parts = ["roles", "masking"]
            parts += ["model"] if configuration.model is not None else []
            parts += ["release context"] if configuration.context is not None else []
            share.queue_configuration(
                configuration,
                f"Applied the recipe '{recipe_file.name}' to '{info.name}': {', '.join(parts)}.",
            )
            st.rerun()
    seen = st.session_state.get(KEY_RECIPE_FILE)
    if seen and seen[0] == recipe_file.file_id and seen[1]:
        st.error(seen[1], icon=":material/error:")
