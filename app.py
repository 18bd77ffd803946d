"""De-identification dashboard: entry point (``streamlit run app.py``).

Sets up the page, makes sure the session has a data set (the synthetic cohort on a first
visit), draws the shared sidebar strip and routes to the pages with ``st.navigation``.

The file plays two parts. Streamlit runs it as the page script (``__name__`` is
``"__main__"`` in every run, under ``streamlit run``, ``st.App`` and AppTest alike). And
``streamlit run app.py``, what Streamlit Community Cloud runs, first reads the file for an
``st.App``: it finds the one at the bottom, imports this module (as ``app``) and serves that
app, which runs this same file as its page script behind the response headers of
:class:`dashboard.hosting.SecurityHeaders` (no framing by other sites, scripts and images
from the app only), as ``serve.py`` does.
"""

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from dashboard import jobs, release_view, resources, share, sidebar, state
from dashboard.hosting import PAGE_ICON, SecurityHeaders, allow_thread_dumps
from dashboard.text import literal
from deid_core.cancellation import cancellable
from deid_core.errors import Cancelled


# The page scripts live in ``app_pages/``, not ``pages/``: Streamlit (1.67) also registers every
# file of a ``pages/`` folder as a page of its own, so a link such as ``/risk`` ran
# ``pages/risk.py`` alone (no sidebar, no session set-up), and AppTest did the same on reruns.
def pages() -> list[st.Page]:
    """The pages, in the order the navigation lists them (built in each run, not at import:
    the module is also imported to be served)."""
    return [
        st.Page("app_pages/learn.py", title="Learn", icon=":material/school:"),
        st.Page("app_pages/data.py", title="Data", icon=":material/table:"),
        st.Page("app_pages/mask.py", title="Mask", icon=":material/tune:", default=True),
        st.Page("app_pages/risk.py", title="Risk", icon=":material/person_search:"),
        st.Page(
            "app_pages/uniqueness.py",
            title="Record uniqueness",
            icon=":material/grid_view:",
            url_path="uniqueness",
        ),
        st.Page("app_pages/utility.py", title="Utility", icon=":material/query_stats:"),
        st.Page("app_pages/smoothing.py", title="Smoothing", icon=":material/blur_on:"),
        st.Page(
            "app_pages/roc.py", title="ROC release", icon=":material/show_chart:", url_path="roc"
        ),
        st.Page(
            "app_pages/rumap.py", title="R-U map", icon=":material/scatter_plot:", url_path="ru-map"
        ),
        st.Page("app_pages/export.py", title="Export", icon=":material/download:"),
    ]


KEY_HINT_DISMISSED = "deid.first_run_hint_dismissed"


def first_run_hint() -> None:
    """Where to start, above every page until the newcomer dismisses it (once a session)."""
    if st.session_state.get(KEY_HINT_DISMISSED):
        return
    with st.container(border=True, key="first_run_hint"):
        st.markdown(
            "**New here? Four steps.** "
            "1. **Data**: upload a file or pick a demo (one is loaded now: the sidebar names it). "
            "2. **Data**: check the role of each column (quasi-identifiers, exposure, outcome). "
            "3. **Mask**: choose a method per column and watch risk and utility move. "
            "4. **Export**: download the masked file, its recipe and the report. "
            "The **Learn** page has guided tours."
        )
        if st.button("Got it, hide this", key="deid.first_run_hint_dismiss"):
            st.session_state[KEY_HINT_DISMISSED] = True
            st.rerun()


def run_page(page: StreamlitPage) -> None:
    """Run the chosen page; an error it did not handle is shown as a plain message (a
    cancellation ends the run: the session's tab was closed)."""
    try:
        page.run()
    except Cancelled:
        raise
    except Exception as error:  # st.rerun / st.stop are BaseExceptions and pass through
        st.error(literal(state.user_message(error)))


def recipient_view() -> None:
    """A session opened on a release link (``?release=...``): the collaborator's page alone.
    No demo is loaded and nothing asks for the source data."""
    release_view.render_sidebar()
    page = st.navigation(
        [
            st.Page(
                "app_pages/release.py",
                title="Release received",
                icon=":material/inventory_2:",
                default=True,
            )
        ],
        position="hidden",
    )
    run_page(page)


def main() -> None:
    if release_view.active():
        recipient_view()
        return
    try:
        if state.needs_setup():
            with st.spinner("Preparing the demo data...", show_time=True):
                state.ensure_state()
        else:
            state.ensure_state()
    except Exception as error:  # e.g. the demo could not be built: say so, no traceback
        st.error(literal(state.user_message(error)))
        st.stop()
    # A shared link (?cfg=...) is read once per session; a configuration waiting for an upload
    # or queued by the Data page is applied here, before the settings widgets are drawn.
    try:
        share.restore_from_url()
        share.apply_queued()
        share.apply_pending()
    except Exception as error:  # never a traceback
        st.error(literal(state.user_message(error)))
    page = st.navigation(pages())
    state.open_page(page.title)
    # The strip is drawn after the page, which may change the recipe: until then it says it is
    # updating, rather than showing the last run's figures beside the page's new ones.
    strip = st.sidebar.empty()
    strip.caption("Updating the key figures...")
    settings = st.sidebar.container()
    link_area = st.sidebar.container()
    sidebar.render_settings(settings)
    share.render_notice()
    first_run_hint()
    run_page(page)
    sidebar.render_strip(strip.container())
    # After the page, like the strip: the link describes the recipe the page has just changed.
    share.render_copy_link(link_area)
    st.sidebar.caption(
        "Your data stay in this browser session: nothing is written to disk or shared."
    )


def run_page_script() -> None:
    """One run of the page script."""
    st.set_page_config(
        page_title="De-identification dashboard",
        page_icon=PAGE_ICON,  # inline: a Material icon name is fetched from Google on every load
        layout="wide",
    )
    # Hosting services may override .streamlit/config.toml (Community Cloud forces
    # showErrorDetails = false, which still shows tracebacks): set it from the script too, so
    # an uncaught error never shows details that could quote a data value.
    st.set_option("client.showErrorDetails", "none")
    allow_thread_dumps()
    jobs.board()  # made in the first run: what the session leaves is freed with it
    try:
        # The core's long loops check whether the tab is still open (see dashboard.jobs).
        with cancellable(jobs.session_check()):
            main()
        jobs.pay_owed_rerun()  # after every widget of the page has read its click
    except Cancelled:  # the browser tab was closed: nobody is left to show the page to
        pass
    finally:  # reruns too; in place of Streamlit's collection after every run (see there)
        resources.collect_garbage()


if __name__ == "__main__":
    run_page_script()
else:  # imported by ``streamlit run app.py`` to be served (see the module docstring)
    from starlette.middleware import Middleware

    app = st.App("app.py", middleware=[Middleware(SecurityHeaders)])
