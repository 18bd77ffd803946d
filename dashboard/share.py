"""Shareable links: the Streamlit side of :mod:`deid_core.share`.

* :func:`restore_from_url` (once per session, at start-up): reads ``?cfg=...``. A configuration
  made on a demo is applied at once (the demo is loaded, then the roles, masking, model and
  release context); one made on an uploaded file waits until a file with the same columns is
  uploaded (:func:`apply_pending`, every run) and says so on every page (:func:`render_notice`).
  The parameter is then removed from the address bar: it described the configuration at the
  time the link was made, and would be stale (and re-applied on a reload) once the user
  changes anything.
* :func:`render_copy_link`: the sidebar's "Copy link" popover, the link of the *current*
  configuration in ``st.code`` (which has a copy button). The link is built when drawn, from
  ``st.context.url`` (the page the user is on); the address bar is not rewritten on every run
  (Streamlit's page navigation drops query parameters anyway, so it could not stay in step).
* :func:`queue_configuration`: apply a configuration (e.g. an imported recipe file) at the
  start of the next run, before the settings widgets are drawn.

The link never carries data values or seeds, only column names and the recipe's parameters.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import streamlit as st

from dashboard import state
from dashboard.text import literal, literal_list
from deid_core.datasets import DEMO_DATASETS
from deid_core.errors import DeidError
from deid_core.recipe import Recipe
from deid_core.share import (
    PARAM,
    Configuration,
    ModelSettings,
    ReleaseSettings,
    SharedConfig,
    decode_config,
    encode_config,
)

KEY_RESTORED = state.PREFIX + "share.restored"
KEY_PENDING = state.PREFIX + "share.pending"
KEY_ERROR = state.PREFIX + "share.error"
KEY_QUEUED = state.PREFIX + "share.queued"
KEY_NOTICE = state.PREFIX + "share.notice"


# ---------------------------------------------------------------------------- reading the session
def current_model() -> ModelSettings:
    return ModelSettings.of(state.current_workspace())


def current_context() -> ReleaseSettings:
    settings = {name: state.setting(name) for name in state.DEFAULT_SETTINGS}
    return ReleaseSettings.lenient(settings)


def current_configuration() -> Configuration:
    return Configuration(state.current_recipe(), current_model(), current_context())


def current_config() -> SharedConfig:
    """The session's configuration as a link would carry it."""
    info = state.current_dataset()
    recipe = state.current_recipe()
    if info.demo_key is not None:
        return SharedConfig(recipe, current_model(), current_context(), demo=info.demo_key)
    columns = tuple(str(c) for c in state.current_workspace().original.columns)
    return SharedConfig(recipe, current_model(), current_context(), columns=columns)


def link_for(encoded: str) -> str:
    """The link of the current page with ``?cfg=encoded``; only the query string when the
    page's address is unknown (e.g. in tests)."""
    base = None
    try:
        base = st.context.url
    except Exception:  # no browser context (bare script run)
        base = None
    query = f"?{PARAM}={encoded}"
    return f"{base}{query}" if base else query


# ---------------------------------------------------------------------------- applying
def _seeded(recipe: Recipe) -> Recipe:
    """Random steps get this session's seeds (a link or a shared file carries none)."""
    steps = tuple(
        step.with_params(seed=state.seed_for("noise", step.column)) if step.random else step
        for step in recipe.steps
    )
    data_steps = tuple(
        step.with_params(seed=state.seed_for(step.method)) if step.random else step
        for step in recipe.data_steps
    )
    return replace(recipe, steps=steps, data_steps=data_steps)


def apply_configuration(config: Configuration) -> None:
    """Apply roles, masking and (when given) model and release context to the current data.
    Everything is checked before anything changes; a DeidError says what does not fit.
    Call it before the settings widgets are drawn (see :func:`queue_configuration`)."""
    workspace = state.current_workspace()
    config.check_columns(workspace.original.columns)
    recipe = _seeded(config.recipe)
    recipe.check_columns(workspace.original.columns)
    if config.model is not None:
        config.model.apply_to(workspace)
    state.set_recipe(recipe, external=True)
    if config.context is not None:
        state.replace_settings(config.context.to_dict())


def _apply_shared(config: SharedConfig) -> None:
    if config.demo is not None and state.current_dataset().demo_key != config.demo:
        state.load_demo_dataset(config.demo)
    apply_configuration(config.configuration)


def queue_configuration(config: Configuration, message: str) -> None:
    """Apply ``config`` at the start of the next run (call ``st.rerun()`` next)."""
    st.session_state[KEY_QUEUED] = (config, message)


def apply_queued() -> None:
    queued = st.session_state.pop(KEY_QUEUED, None)
    if queued is None:
        return
    config, message = queued
    try:
        apply_configuration(config)
    except DeidError as error:
        st.session_state[KEY_ERROR] = f"The configuration was not applied: {error}"
    else:
        st.session_state[KEY_NOTICE] = message


# ---------------------------------------------------------------------------- start-up
def restore_from_url() -> None:
    """Once per session: read ``?cfg=...`` and apply it (demo) or keep it waiting (upload)."""
    ss = st.session_state
    if ss.get(KEY_RESTORED):
        return
    ss[KEY_RESTORED] = True
    param = st.query_params.get(PARAM)
    if param is None:
        return
    try:
        config = decode_config(param)
        if config.is_demo:
            _apply_shared(config)
            title = DEMO_DATASETS[config.demo].title
            ss[KEY_NOTICE] = (
                f"Opened the shared configuration on the demo '{title}': roles, masking, "
                "model and release context restored."
            )
        else:
            ss[KEY_PENDING] = config
    except DeidError as error:
        ss[KEY_ERROR] = f"The shared link could not be used: {error}"
    except Exception as error:  # never a traceback
        ss[KEY_ERROR] = f"The shared link could not be used: {state.user_message(error)}"
    _drop_param()


def _drop_param() -> None:
    if PARAM in st.query_params:
        del st.query_params[PARAM]


def pending() -> SharedConfig | None:
    return st.session_state.get(KEY_PENDING)


def apply_pending() -> None:
    """Every run: a configuration waiting for an upload is applied as soon as the data set in
    use is an uploaded file with every column it needs."""
    config = pending()
    if config is None or state.current_dataset().demo_key is not None:
        return
    columns = [str(c) for c in state.current_workspace().original.columns]
    if config.missing_columns(columns):
        return  # render_notice says which columns are missing
    try:
        apply_configuration(config.configuration)
    except DeidError as error:
        st.session_state[KEY_ERROR] = f"The shared configuration was not applied: {error}"
    else:
        st.session_state[KEY_NOTICE] = (
            f"Applied the shared configuration to '{state.current_dataset().name}': roles, "
            "masking, model and release context."
        )
    st.session_state.pop(KEY_PENDING, None)


def render_notice() -> None:
    """Problems with a link, and a configuration waiting for an upload, said plainly."""
    notice = st.session_state.pop(KEY_NOTICE, None)
    if notice:
        st.success(literal(notice), icon=":material/link:")
    error = st.session_state.pop(KEY_ERROR, None)
    if error:
        st.error(literal(error), icon=":material/link_off:")
    config = pending()
    if config is None:
        return
    with st.container(border=True, key="share_pending"):
        st.info(
            "**A shared configuration is waiting for its data.** The link was made on an "
            "uploaded file, and links never carry data. Upload a file with the columns "
            f"{literal_list(config.columns, limit=30)} on the Data page (tab 'Upload a file'); "
            "the roles, "
            "masking, model and release context of the link are applied as soon as it is "
            "loaded.",
            icon=":material/hourglass_top:",
        )
        info = state.current_dataset()
        if info.demo_key is None:
            columns = [str(c) for c in state.current_workspace().original.columns]
            missing = config.missing_columns(columns)
            if missing:
                st.warning(
                    f"The data set in use, '{literal(info.name)}', does not have the column(s) "
                    f"{literal_list(missing, limit=30)} of the shared configuration, so it was "
                    "not applied. "
                    "Upload a file that has them.",
                    icon=":material/warning:",
                )
        if st.button("Forget the shared configuration", key="share.forget"):
            st.session_state.pop(KEY_PENDING, None)
            st.rerun()


# ---------------------------------------------------------------------------- sidebar control
def render_copy_link(container: Any = None) -> None:
    """The "Copy link" popover: what the link holds (the values it carries that come from the
    data), the link to the current configuration, and the link's whole content."""
    target = container if container is not None else st.sidebar
    with target.popover("Copy link", icon=":material/link:", width="stretch", key="share.copy"):
        try:
            config = current_config()
            encoded = encode_config(config)
        except DeidError as error:
            st.warning(literal(error), icon=":material/warning:")
            return
        except Exception as error:
            st.warning(literal(state.user_message(error)))
            return
        uploaded = state.current_dataset().demo_key is None
        st.caption(
            "**A configuration link, for colleagues who hold the same source file** (for the "
            "recipients of the masked file, use the release link on the Export page). "
            "This link restores the roles, masking, model and release context. It holds no "
            "records and no random seeds, but it holds "
            + ("the file's column names and " if uploaded else "the column names and ")
            + "every masking parameter as set."
            + (
                " It was made on an uploaded file: whoever opens it is asked to upload a file "
                "with the same columns."
                if uploaded
                else ""
            )
        )
        values = config.data_values()
        if values:
            st.warning(
                "**Values of your data in this link.** Category names and numbers on a "
                "column's own scale travel as set (defaults such as a percentile as the top "
                "code or the minimum as the interval origin come from the data): "
                + "; ".join(literal(line) for line in values),
                icon=":material/visibility:",
            )
        st.code(link_for(encoded), language=None, wrap_lines=True)
        with st.expander("Exactly what the link holds"):
            st.code(config.payload_json(), language="json", wrap_lines=True)
