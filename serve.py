"""Serve the dashboard for others: ``streamlit run serve.py`` (same options as ``app.py``).

The same app as ``streamlit run app.py``, with the response headers of
:class:`dashboard.hosting.SecurityHeaders` (no framing by other sites, images and fonts only
from the app itself). Streamlit runs a script that defines an ``st.App`` as that app.
"""

import streamlit as st
from starlette.middleware import Middleware

from dashboard.hosting import SecurityHeaders

app = st.App("app.py", middleware=[Middleware(SecurityHeaders)])
