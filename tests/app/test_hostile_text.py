"""Strings from data, files and links are literal text on every page: an uploaded file whose
column names, category names and file name hold Markdown and HTML, and a link that carries
them, never reach a Markdown-rendering element unescaped. Also what the "Copy link" popover
says a link holds.

The check reads the Markdown source of every element AppTest sees (``proto``), in the fields
Streamlit renders as Markdown, and looks for an image, a link or an HTML tag that is not
backslash-escaped; the browser test (``tests/e2e/test_hostile_browser.py``) checks the
rendered page and its network requests.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from app_helpers import APP, TIMEOUT, assert_clean, goto, texts
from streamlit.testing.v1 import AppTest

from deid_core.masking import MergeLevels, TopBottomCode
from deid_core.recipe import Recipe, Roles
from deid_core.share import PARAM, SharedConfig, encode_config

PIXEL = "![p](https://attacker.example/pixel.png)"
LINK = "[Upload your file here](https://attacker.example/upload)"
TAG = "<img src=https://attacker.example/i.png>"
FILE_NAME = "![f](https:attacker.example) <b>x _y_.csv"  # no slash: folders are cut
#: Markdown or HTML that would render: an unescaped image or link opener, or an HTML tag.
RENDERS = re.compile(r"(?<!\\)!(?<!\\)\[|(?<!\\)\]\((?:https?:)?|(?<!\\)<img|(?<!\\)<a ")

#: Element types whose text Streamlit shows literally (or not as Markdown at all).
LITERAL_TYPES = {
    *("code", "text", "arrow_data_frame", "dataframe", "json", "vega_lite_chart"),
    *("arrow_vega_lite_chart", "text_input", "file_uploader"),
}
#: Widgets whose options are plain text (their label and help are still Markdown).
PLAIN_OPTIONS = {"selectbox", "multiselect"}
MARKDOWN_FIELDS = ("body", "label", "help", "captions", "delta", "text")


def hostile_frame(n: int = 80) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            PIXEL: rng.choice([LINK, TAG, "plain"], n),
            "age": rng.integers(20, 80, n),
            TAG: rng.gamma(1.0, 0.5, n).round(3),
            "death": rng.integers(0, 2, n),
        }
    )


def hostile_recipe() -> Recipe:
    roles = Roles(
        quasi_identifiers=(PIXEL, "age", TAG),
        exposure=TAG,
        outcome="death",
        covariates=(PIXEL,),
        record_id="person_id",
    )
    steps = (MergeLevels(PIXEL, groups={LINK: [LINK, TAG]}), TopBottomCode(TAG, top=2.0))
    return Recipe(roles, steps)


def rendered_markdown(at: AppTest) -> list[tuple[str, str]]:
    """(element type, text) for every text Streamlit renders as Markdown on the page."""
    found = []
    for node in at._tree:
        proto = getattr(node, "proto", None)
        kind = getattr(node, "type", "")
        if proto is None or kind in LITERAL_TYPES:
            continue
        for field, value in proto.ListFields():
            if field.name == "options" and kind not in PLAIN_OPTIONS:
                found += [(kind, str(option)) for option in value]
            elif field.name in MARKDOWN_FIELDS:
                values = value if isinstance(value, list | tuple) else [value]
                found += [(kind, v) for v in values if isinstance(v, str)]
            elif field.type == field.TYPE_MESSAGE and not field.is_repeated:
                found += [
                    (kind, v)
                    for sub, v in value.ListFields()
                    if sub.name in MARKDOWN_FIELDS and isinstance(v, str)
                ]
    return found


def unescaped(at: AppTest) -> list[tuple[str, str]]:
    return [(kind, text) for kind, text in rendered_markdown(at) if RENDERS.search(text)]


def test_the_scan_finds_raw_markdown():
    at = AppTest.from_string(
        "import streamlit as st\nst.caption('![p](https://attacker.example/p.png)')\n"
        "st.caption('\\\\!\\\\[p\\\\]\\\\(https\\\\:x\\\\)')"
    ).run()
    assert [kind for kind, _ in unescaped(at)] == ["caption"]


def test_an_upload_with_markdown_in_names_and_values_shows_it_literally_on_every_page():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    goto(at, "data")
    at.file_uploader(key="data.upload").upload(
        FILE_NAME, hostile_frame().to_csv(index=False).encode(), "text/csv"
    )
    at.run()
    assert_clean(at)
    assert at.session_state["deid.dataset"].name == FILE_NAME
    at.session_state["deid.recipe"] = hostile_recipe()
    at.session_state["deid.epoch"] = at.session_state["deid.epoch"] + 1
    for page in ("data", "mask", "risk", "uniqueness", "utility", "smoothing", "roc", "rumap"):
        goto(at, page)
        assert not unescaped(at), (page, unescaped(at))
        if page in ("mask", "risk"):  # where the column is named in the text: as written
            assert any(PIXEL in text for text in texts(at.markdown)), page
    goto(at, "export")
    assert not unescaped(at), unescaped(at)
    # The data set's name is shown as written.
    assert any(FILE_NAME in text for text in texts(at.sidebar.markdown))


def test_a_link_naming_markdown_columns_waits_with_a_literal_notice():
    config = SharedConfig(hostile_recipe(), columns=tuple(hostile_frame().columns))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[PARAM] = encode_config(config)
    at.run()
    assert_clean(at)
    notice = " ".join(texts(at.info))
    assert "waiting for its data" in notice and PIXEL in notice  # named, as written
    assert not unescaped(at), unescaped(at)


def test_copy_link_says_which_values_of_the_data_the_link_holds(app):
    recipe = app.session_state["deid.recipe"]
    roles = recipe.roles
    app.session_state["deid.recipe"] = Recipe(
        roles, (*recipe.steps, TopBottomCode("stomach_dose_gy", top=2.5))
    )
    app.run()
    assert_clean(app)
    popover_warnings = texts(app.sidebar.warning)
    assert any(
        "Values of your data in this link" in w and "stomach_dose_gy: top 2.5" in w
        for w in popover_warnings
    ), popover_warnings
    captions = " ".join(texts(app.sidebar.caption))
    assert "carries no data" not in captions and "holds no records and no random seeds" in captions
    held = [c.value for c in app.sidebar.code if c.language == "json"]
    assert held and '"top": 2.5' in held[0] and '"seed"' not in held[0]
