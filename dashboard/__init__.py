"""Streamlit user interface of the de-identification dashboard.

The pages in ``app_pages/`` stay thin: they read widgets, call :mod:`deid_core` through the helpers
here, and draw. ``state`` owns everything kept in ``st.session_state`` (the data never leave the
session), ``sidebar`` draws the strip shown on every page, ``widgets`` the per-method masking
controls, ``charts`` the Altair charts, ``help`` the one-line help of every metric, ``tables``
the tables people compare numbers in, and ``upload`` turns uploaded bytes into a data set or a
clear message.
"""
