"""Streamlit user interface of the de-identification dashboard.

The pages in ``app_pages/`` stay thin: they read widgets, call :mod:`deid_core` through the helpers
here, and draw. ``state`` owns everything kept in ``st.session_state`` (the data never leave the
session), ``sidebar`` draws the strip shown on every page, ``widgets`` the per-method masking
controls, ``charts`` the Altair charts, ``help`` the one-line help of every metric, ``tables``
the tables people compare numbers in, ``upload`` turns uploaded bytes into a data set or a
clear message, and ``jobs`` runs long work in the background.
"""

import logging

# The dashboard's own log (errors by type only, background jobs started and abandoned; never
# a data value) goes to the server's console, at INFO.
_LOG = logging.getLogger("dashboard")
if not _LOG.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    _LOG.addHandler(_handler)
    _LOG.setLevel(logging.INFO)
