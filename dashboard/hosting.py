"""What a hosted copy adds around the dashboard: response headers, the page icon.

:class:`SecurityHeaders` is an ASGI middleware that ``serve.py`` puts in front of the app
(``st.App(..., middleware=...)``, Streamlit's documented way to add middleware; its
configuration has no option for response headers). Every HTTP response then carries:

- ``Content-Security-Policy: frame-ancestors 'self'`` and ``X-Frame-Options: SAMEORIGIN``:
  no other site can show the dashboard in a frame (clickjacking: a page that lays its own
  buttons over the dashboard's), while a host that frames the app from its own origin, as
  Streamlit Community Cloud does, keeps working;
- in the same policy, ``img-src``, ``font-src`` and ``media-src`` limited to the app itself
  (and ``data:`` / ``blob:`` URLs it builds): should a string from data ever reach the page as
  an image, the browser refuses to load it from anywhere else; ``object-src 'none'``,
  ``base-uri 'self'`` and ``form-action 'self'`` close the other ways out;
- ``script-src`` (:data:`SCRIPT_SOURCES`): scripts from the app itself only, and the one
  inline script of Streamlit's page by its hash; a script tag that data ever slipped into
  the page, or one pointing at another site, does not run;
- ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer``.

``app.py`` itself defines an ``st.App`` with this middleware, so ``streamlit run app.py``
(what Streamlit Community Cloud runs) sends these headers too, as ``streamlit run serve.py``
does.

:data:`PAGE_ICON` is the browser tab's icon as inline SVG: a Material icon name would make
every page load fetch the icon from Google's font server.

:func:`allow_thread_dumps`: with ``DEID_THREAD_DUMPS=1`` in the server's environment,
``kill -USR1 <pid>`` writes every thread's stack to the server's standard error (where a page
or a background job waits, without any value of the data: no local variables are printed).
The browser tests set it, so that a stuck page's failure says what the server was doing.
"""

from __future__ import annotations

import base64
import faulthandler
import hashlib
import os
import re
import signal
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from starlette.datastructures import MutableHeaders

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def inline_script_hashes() -> list[str]:
    """The CSP sources (``'sha256-...'``) of the inline scripts of the page Streamlit serves
    (its ``static/index.html``, read from the installed package: the hashes follow Streamlit's
    version). Empty if the page cannot be read: the inline script is then blocked, which
    only leaves a prerendering flag unset."""
    import streamlit

    index = Path(streamlit.__file__).parent / "static" / "index.html"
    try:
        page = index.read_text(encoding="utf-8")
    except OSError:
        return []
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"
        for code in scripts
    ]


#: Where scripts may come from: the app itself and the inline scripts of Streamlit's page, by
#: their hashes; never another site, never an inline script planted in the page.
#: ``'unsafe-eval'`` stays: Vega compiles chart expressions into functions at run time.
SCRIPT_SOURCES = " ".join(["'self'", *inline_script_hashes(), "'unsafe-eval'"])

#: The headers :class:`SecurityHeaders` sets on every HTTP response.
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        f"frame-ancestors 'self'; script-src {SCRIPT_SOURCES}; img-src 'self' data: blob:; "
        "font-src 'self' data:; media-src 'self' data: blob:; object-src 'none'; "
        "base-uri 'self'; form-action 'self'"
    ),
    "X-Frame-Options": "SAMEORIGIN",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

#: The tab's icon (a shield), drawn here so that no page load asks another server for it.
PAGE_ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
    '<path fill="#2f6f8f" d="M12 1 3 5v6c0 5.55 3.84 10.74 9 12 5.16-1.26 9-6.45 9-12V5z"/>'
    '<circle cx="12" cy="9" r="3" fill="#fbfbfa"/>'
    '<path fill="#fbfbfa" d="M6.5 16.5c1.2-2.2 3.2-3.3 5.5-3.3s4.3 1.1 5.5 3.3'
    'C16.2 18.6 14.3 20 12 20.7c-2.3-.7-4.2-2.1-5.5-4.2z"/></svg>'
)


class SecurityHeaders:
    """ASGI middleware: :data:`SECURITY_HEADERS` on every HTTP response (WebSocket traffic
    passes through untouched)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def allow_thread_dumps() -> None:
    """With ``DEID_THREAD_DUMPS=1``, SIGUSR1 dumps every thread's stack to standard error."""
    if os.environ.get("DEID_THREAD_DUMPS") == "1" and hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
