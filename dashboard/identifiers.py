"""Direct identifiers in the dashboard: the Export page's choice to drop each withheld column
or release it as a pseudonym, the secret key of keyed-hash pseudonyms, the crosswalk; and the
Data page's HIPAA Safe Harbor screen.

The key lives in this session's state only (:func:`dashboard.state.pseudonym_key`): it never
enters the recipe, a link, the report or an export. A generated key is shown, with a download
button, until the user confirms they stored it; after that only its fingerprint is shown.
"""

from __future__ import annotations

import secrets
import string
from dataclasses import replace

import streamlit as st

from dashboard import compute, downloads, state
from deid_core.errors import DeidError
from deid_core.identifiers.pseudonyms import (
    DEFAULT_LENGTH,
    MAX_HMAC_LENGTH,
    MAX_RANDOM_LENGTH,
    MIN_LENGTH,
    generate_key,
    key_fingerprint,
    key_from_text,
    key_to_text,
)
from deid_core.io.export import to_bytes
from deid_core.io.safe_harbor import WHY_NOT_ENOUGH, SafeHarborScreen, screen_safe_harbor
from deid_core.masking import HmacPseudonym, MaskingStep, PseudonymStep, RandomPseudonym
from deid_core.recipe import Recipe, Release, Roles

#: How a withheld column is released.
TREATMENTS = {
    "drop": "Drop it (not released)",
    "random": "Random pseudonym",
    "hmac": "Keyed-hash pseudonym (HMAC-SHA-256)",
}
TREATMENT_HELP = (
    "Drop: the column is not in the release. Random pseudonym: each person gets a new random "
    "code (from the operating system's entropy), the same on all their rows; a new release "
    "draws new codes, so linking next year's file needs this release's crosswalk. Keyed-hash "
    "pseudonym: the code is computed from the identifier with a secret key; the same key "
    "gives the same codes next year, so releases stay linkable without a crosswalk."
)
PROTECT_TEXT = (
    "**Which keeps linkability across releases, and what the custodian must protect.** "
    "A *keyed-hash* pseudonym keeps it: the same key gives the same pseudonyms next year. "
    "Anyone who holds the key and a list of identifiers can recompute the pseudonyms, so the "
    "custodian keeps the key as secret as the identifiers and never sends it with the data "
    "(HIPAA's Safe Harbor itself does not allow codes derived from identifiers; El Emam & "
    "Malin cite the 2012 OCR guidance: acceptable under an expert determination when the "
    "means to reverse them are tightly controlled). A *random* pseudonym carries nothing of "
    "the identifier; only the crosswalk links it back, and the next release gets new codes "
    "unless the custodian maps it through the same crosswalk. The crosswalk identifies every "
    "person: the custodian keeps it, never the recipient."
)
DEFAULT_STUDY_ID = "study_id"
#: The name under which the session holds the key for its download button.
KEY_DOWNLOAD = "export.key"
_PUNCTUATION = set(string.punctuation)


def literal(text: object) -> str:
    """``text`` with every Markdown character escaped, for labels and captions that render
    Markdown (a column name is data and must show as it is)."""
    return "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in str(text))


# ---------------------------------------------------------------------------- export page
class _HeldKey:
    """The secret key, held for its deferred download button (which reaches it weakly)."""

    def __init__(self, key: bytes) -> None:
        self.key = key


def withheld_columns(roles: Roles) -> list[str]:
    """The record id, then the direct identifiers: the columns that are dropped unless
    released as pseudonyms."""
    columns = [roles.record_id] if roles.record_id else []
    return columns + [c for c in roles.direct_identifiers if c not in columns]


def _treatment_of(step: PseudonymStep | None) -> str:
    if step is None:
        return "drop"
    return "hmac" if step.needs_key else "random"


def pseudonym_controls(recipe: Recipe) -> Recipe:
    """Draw the choice of drop or pseudonym for each withheld column and return the recipe
    with the chosen pseudonym steps (stored as the session's recipe when it changed)."""
    st.subheader("Direct identifiers and the record id")
    st.caption(
        "Each is dropped from the release, or replaced by a pseudonym: a study ID that keeps "
        "a person's rows together (visits, baseline and follow-up) and lets you return "
        "results or send more data later (El Emam & Malin)."
    )
    columns = withheld_columns(recipe.roles)
    if not columns:
        st.caption("No direct identifier or record id is chosen (Data page).")
        return recipe
    current = {step.column: step for step in recipe.pseudonym_steps}
    new = recipe
    for column in columns:
        new = _column_controls(new, column, current.get(column), column == recipe.roles.record_id)
    downloads.forget(KEY_DOWNLOAD)  # held again below only while the key is on show
    if any(step.needs_key for step in new.pseudonym_steps):
        new = key_controls(new)
    st.info(PROTECT_TEXT, icon=":material/key:")
    if new != recipe:
        state.set_recipe(new)
    return new


def _column_controls(
    recipe: Recipe, column: str, step: PseudonymStep | None, is_record_id: bool
) -> Recipe:
    prefix = f"export.{state.epoch()}.pseudonym.{column}"
    role = "record id" if is_record_id else "direct identifier"
    left, middle, right = st.columns([3, 2, 1])
    treatment = left.selectbox(
        f"{literal(column)} ({role})",
        list(TREATMENTS),
        index=list(TREATMENTS).index(_treatment_of(step)),
        format_func=TREATMENTS.__getitem__,
        key=f"{prefix}.treatment",
        help=TREATMENT_HELP,
    )
    if treatment == "drop":
        return recipe.with_steps_for(column, [])
    default_name = DEFAULT_STUDY_ID if is_record_id else f"{column}_pseudonym"
    name = middle.text_input(
        "Released as",
        value=(step.released_as if step is not None and step.released_as else default_name),
        key=f"{prefix}.name",
        help="The name of the column of pseudonyms in the release.",
    )
    longest = MAX_HMAC_LENGTH if treatment == "hmac" else MAX_RANDOM_LENGTH
    length = right.number_input(
        "Digits",
        min_value=MIN_LENGTH,
        max_value=longest,
        value=min(step.length if step is not None else DEFAULT_LENGTH, longest),
        step=1,
        key=f"{prefix}.length.{treatment}",
        help="Hexadecimal digits of each pseudonym (4 bits each): 16 digits give 2^64 codes.",
    )
    try:
        if treatment == "random":
            new_step: MaskingStep = RandomPseudonym(column, int(length), name)
        else:
            key = state.pseudonym_key()
            fingerprint = step.key_fingerprint if isinstance(step, HmacPseudonym) else None
            if fingerprint is None and key is not None:
                fingerprint = key_fingerprint(key)
            new_step = HmacPseudonym(column, int(length), name, key_fingerprint=fingerprint)
        return recipe.with_steps_for(column, [new_step])
    except DeidError as error:
        st.error(str(error), icon=":material/error:")
        return recipe


def key_controls(recipe: Recipe) -> Recipe:
    """The secret key of the keyed-hash pseudonyms: generate one or bring one; a generated
    key is shown with a download button until the user confirms they stored it."""
    st.markdown("**Secret key of the keyed-hash pseudonyms**")
    key = state.pseudonym_key()
    if key is None:
        st.caption(
            "Generate a new key for a first release, or bring the key of an earlier release so "
            "that the same people get the same pseudonyms. The key stays in this browser "
            "session; it is never written into the recipe, a link, the report or the data."
        )
        left, right = st.columns(2)
        if left.button("Generate a new key", key="export.key.generate", icon=":material/key:"):
            key = generate_key()
            state.set_pseudonym_key(key)
            recipe = _with_fingerprint(recipe, key_fingerprint(key))
            state.set_recipe(recipe)
            st.rerun()
        uploaded = right.file_uploader(
            "Or use an existing key file",
            type=["key", "txt", "hex"],
            key="export.key.upload",
            help="The key file downloaded at an earlier release (hexadecimal text).",
        )
        if uploaded is not None:
            try:
                key = key_from_text(uploaded.getvalue()[:4096])
            except DeidError as error:
                st.error(str(error), icon=":material/error:")
            else:
                state.set_pseudonym_key(key, stored=True)
                st.rerun()
        st.warning("A key is needed before the release can be written.", icon=":material/key:")
        return recipe
    fingerprint = key_fingerprint(key)
    expected = {s.key_fingerprint for s in recipe.pseudonym_steps if s.needs_key} - {None}
    if expected and expected != {fingerprint}:
        st.error(
            "This key is not the one the recipe was made with (the fingerprints differ): the "
            "pseudonyms would not match the earlier release. Bring that key, or generate a new "
            "one to start new pseudonyms.",
            icon=":material/error:",
        )
    else:
        st.success(f"Key in use (fingerprint {fingerprint}).", icon=":material/key:")
    if not state.pseudonym_key_stored():
        st.warning(
            "Save this key now: it is shown only until you confirm you stored it. Keep it "
            "apart from the data; whoever holds it can recompute every pseudonym.",
            icon=":material/warning:",
        )
        st.code(key_to_text(key), language=None)
        left, right = st.columns(2)
        downloads.download_button(
            "Download the key",
            _HeldKey(key),
            lambda held: (key_to_text(held.key) + "\n").encode("ascii"),
            name=KEY_DOWNLOAD,
            where=left,
            file_name="pseudonym.key",
            mime="text/plain",
            key="export.key.download",
            icon=":material/download:",
        )
        if right.button("I have stored the key: hide it", key="export.key.stored"):
            state.confirm_pseudonym_key_stored()
            st.rerun()
    if st.button("Forget this key", key="export.key.forget"):
        state.forget_pseudonym_key()
        st.rerun()
    return recipe


def _with_fingerprint(recipe: Recipe, fingerprint: str) -> Recipe:
    """Every keyed-hash step set to the key of ``fingerprint`` (a new key starts new
    pseudonyms)."""
    steps = tuple(
        step.with_params(key_fingerprint=fingerprint) if isinstance(step, HmacPseudonym) else step
        for step in recipe.steps
    )
    return replace(recipe, steps=steps)


def release(recipe: Recipe, keep_record_id: bool) -> tuple[str, Release]:
    """The release of ``recipe`` and a token naming this draw of its random pseudonyms
    (cached per session, so the file and its crosswalk always come from the same draw)."""
    workspace = state.current_workspace()
    key = state.pseudonym_key() if recipe.needs_key else None
    fingerprint = key_fingerprint(key) if key is not None else None
    cache = state.SessionCache("release", size=2)
    cache_key = (id(workspace), compute.recipe_key(recipe), keep_record_id, fingerprint)
    found = cache.peek(cache_key)
    if found is None:
        with st.spinner("Writing the release..."):
            found = (
                secrets.token_hex(8),
                workspace.release(recipe, keep_record_id=keep_record_id, key=key),
            )
        cache.put(cache_key, found)
    return found


def crosswalk_download(released: Release, stem: str) -> None:
    """The crosswalk of the release's pseudonyms, a separate file for the custodian."""
    if released.crosswalk.empty:
        return
    st.markdown("**Crosswalk (for the custodian only)**")
    st.warning(
        "The crosswalk pairs every pseudonym with the original identifier: it identifies every "
        "person. Keep it with the custodian, apart from the key; never send it with the data.",
        icon=":material/warning:",
    )
    downloads.download_button(
        f"Download the crosswalk ({len(released.crosswalk):,} pseudonyms, CSV)",
        released,
        lambda release: to_bytes(release.crosswalk, "csv").data,
        name="export.crosswalk",
        file_name=f"{stem}_crosswalk.csv",
        mime="text/csv",
        key="export.crosswalk",
        icon=":material/download:",
    )


# ---------------------------------------------------------------------------- data page
def safe_harbor_screen() -> SafeHarborScreen:
    """The Safe Harbor screen of the session's data (cached per session and record id)."""
    workspace = state.current_workspace()
    record_id = state.current_recipe().roles.record_id
    return state.SessionCache("safe_harbor", size=4).get(
        (id(workspace), record_id),
        lambda: screen_safe_harbor(workspace.original, record_id=record_id),
    )


def render_safe_harbor(recipe: Recipe) -> Recipe | None:
    """The Safe Harbor screen on the Data page; returns the recipe with the suggested roles
    and masking steps when the user asks to apply them (else None)."""
    st.subheader("HIPAA Safe Harbor screen")
    st.caption(
        "For each of Safe Harbor's 18 identifiers (El Emam & Malin, Box 2): the columns that "
        "look like it by their name or by a sample of their values, and what to do. Nothing "
        "here shows a value."
    )
    screen = safe_harbor_screen()
    table = screen.table()
    found = len(screen.items_found)
    st.markdown(
        f"**{found} of 18 items found** in {len(screen.flagged_columns)} column(s)."
        if found
        else "**No item found.**"
    )
    st.dataframe(
        table,
        hide_index=True,
        height=35 * (len(table) + 1) + 3,  # every item in view, no scrolling
        column_config={"Item": st.column_config.NumberColumn(width="small")},
    )
    st.info(WHY_NOT_ENOUGH, icon=":material/info:")
    suggested = suggested_recipe(recipe, screen)
    if suggested is None:
        return None
    if st.button(
        "Apply the suggested roles and masking",
        key="data.safe_harbor.apply",
        help="Columns to drop become direct identifiers; dates, ZIP codes, ages and places "
        "become quasi-identifiers with their masking (dates to the year, ZIP codes to 3 "
        "digits, ages top-coded at 90). Choose pseudonyms on the Export page.",
    ):
        return suggested
    return None


def suggested_recipe(recipe: Recipe, screen: SafeHarborScreen) -> Recipe | None:
    """The recipe with the screen's suggested roles and steps (None when it would not
    change, or the suggestion does not fit the roles)."""
    roles = recipe.roles
    suggested = screen.suggested_roles()
    direct = [*roles.direct_identifiers]
    qis = [*roles.quasi_identifiers]
    taken = {roles.exposure, roles.outcome, roles.record_id, roles.weight, *roles.covariates}
    taken |= set(roles.sensitive)
    for column, role in suggested.items():
        if column in taken:
            continue
        if role == "direct_identifier" and column not in direct:
            direct.append(column)
            qis = [c for c in qis if c != column]
        elif role == "quasi_identifier" and column not in qis and column not in direct:
            qis.append(column)
    try:
        new_roles = replace(roles, quasi_identifiers=tuple(qis), direct_identifiers=tuple(direct))
        columns = list(screen.columns)
        steps = list(state.keep_valid_steps(recipe.steps, new_roles, columns))
        masked = {s.column for s in steps}
        steps += [s for s in screen.suggested_steps() if s.column in qis and s.column not in masked]
        data_steps = state.keep_valid_data_steps(recipe.data_steps, new_roles, columns)
        new = Recipe(new_roles, tuple(steps), data_steps)
    except DeidError:
        return None
    return None if new == recipe else new


def several_rows_note(recipe: Recipe) -> str | None:
    """A sentence on several rows per person when the record id repeats (else None)."""
    people = state.current_workspace().people(recipe)
    if people is None:
        return None
    return (
        f"{people.n_rows:,} rows of {people.n_people:,} people: the record id repeats (visits, "
        "events). Class sizes, k, the risks and the verdict count people, each judged by their "
        "riskiest row; a person's pseudonym is the same on all their rows."
    )


def rows_only_note(figure: str) -> str:
    """Say that ``figure`` counts rows, not people, when a person has several rows."""
    return (
        f"{figure} counts rows, not people: with several rows per person, each row is treated "
        "as a person of its own (not yet counted in people)."
    )
