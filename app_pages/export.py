"""Export: the masked file (without direct identifiers) and the recipe as JSON."""

from pathlib import PurePath

import streamlit as st

from dashboard import compute, state

st.title("Export")
st.caption(
    "Download the masked data to send, and the recipe that produced it (to document the "
    "release, or replay it on next year's data). Files are built in memory, never on disk."
)


def render() -> None:
    workspace = state.current_workspace()
    recipe = state.current_recipe()
    roles = recipe.roles
    info = state.current_dataset()
    base = info.demo_key or PurePath(info.name).stem
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in base)[:60] or "data"

    st.subheader("What the recipe does")
    for line in recipe.describe():
        st.markdown(f"- {line}")

    try:
        summary = compute.risk(recipe)
    except Exception as error:
        st.error(state.user_message(error))
        return
    verdict = compute.verdict(summary)
    if not verdict.meets:
        st.warning(
            verdict.text + " Consider more masking before you send this file.",
            icon=":material/warning:",
        )

    # ------------------------------------------------------------------ masked data
    st.subheader("Masked data (CSV)")
    keep_id = False
    if roles.record_id:
        keep_id = st.checkbox(
            f"Keep the record id '{roles.record_id}'",
            value=False,
            key="export.keep_id",
            help="Off by default: the record id links each released record to its source "
            "record, so anyone holding the source could re-identify every record. Keep it only "
            "if the recipient is allowed to link back.",
        )
    try:
        released = workspace.released_frame(recipe, keep_record_id=keep_id)
    except Exception as error:
        st.error(state.user_message(error))
        return
    dropped = list(roles.direct_identifiers) + (
        [roles.record_id] if roles.record_id and not keep_id else []
    )
    st.markdown(
        f"{len(released):,} records, {released.shape[1]} columns: {', '.join(released.columns)}."
    )
    if dropped:
        st.caption("Left out (never released): " + ", ".join(dropped) + ".")
    if recipe.is_random:
        st.caption("The file holds one random draw of the noise (the same one the figures use).")
    unmasked_released = [
        c
        for c in released.columns
        if c not in recipe.masked_columns and c in roles.quasi_identifiers
    ]
    if unmasked_released:
        st.caption("Quasi-identifiers released without masking: " + ", ".join(unmasked_released))
    st.download_button(
        "Download the masked data (CSV)",
        data=lambda: released.to_csv(index=False).encode("utf-8"),
        file_name=f"{stem}_masked.csv",
        mime="text/csv",
        key="export.csv",
        icon=":material/download:",
        type="primary",
    )

    # ------------------------------------------------------------------ recipe
    st.subheader("Recipe (JSON)")
    include_seeds = st.checkbox(
        "Include the random seeds",
        value=False,
        key="export.seeds",
        help="Off by default: with the seed, anyone can regenerate the exact noise and subtract "
        "it, undoing the masking. Knowing the mechanism already helps an intruder; keep seeds "
        "only in your own archive.",
    )
    if recipe.is_random and not include_seeds:
        st.caption("Seeds are left out: the recipe describes the noise but cannot reproduce it.")
    text = recipe.to_json(include_seeds=include_seeds)
    st.download_button(
        "Download the recipe (JSON)",
        data=text.encode("utf-8"),
        file_name=f"{stem}_recipe.json",
        mime="application/json",
        key="export.recipe",
        icon=":material/download:",
    )
    st.code(text, language="json")


render()
