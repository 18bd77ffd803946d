"""Every string from data, a file or a link is shown as literal text: the escaping helper, and a
scan of the pages for text that reaches a Markdown-rendering call without it.

Streamlit renders Markdown (links, images, Streamlit's ``:color[...]`` directives, LaTeX) in
the body of text elements, the labels and help of every widget, metric values, radio and
select-slider options, tab labels and ``st.table`` cells. Column names, category names, file
names and anything read from a link must reach those only through
:func:`dashboard.text.literal` (or :func:`dashboard.text.literal_frame` for a table).

The scan (:func:`unsafe_calls`) accepts, in a rendering argument: constant text; numbers
formatted in an f-string (``{n:,}``, ``{x:.3f}``); calls of the helpers in ``SAFE_CALLS``,
and of those in ``LABEL_CALLS`` whose first argument (the label) is safe;
module constants (UPPER_CASE names); and ``+``, ``"...".join(...)``, ``a or b`` or
``a if c else b`` of those. Anything else (a variable, an attribute, an unformatted f-string
hole) is reported with its file and line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from dashboard.text import literal, literal_frame

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py"))]
SCANNED += sorted((ROOT / "dashboard").rglob("*.py"))

#: Calls whose first argument (or ``body`` / ``label`` / ``text``) renders Markdown.
TEXT_CALLS = {
    "markdown", "write", "caption", "info", "warning", "error", "success", "toast", "title",
    "header", "subheader", "badge", "spinner", "status", "expander", "popover", "button",
    "download_button", "link_button", "page_link", "checkbox", "toggle", "radio", "selectbox",
    "multiselect", "select_slider", "slider", "number_input", "text_input", "text_area",
    "date_input", "time_input", "file_uploader", "color_picker", "pills", "segmented_control",
    "form_submit_button", "metric", "table", "tabs", "feedback", "chat_input",
}  # fmt: skip
#: Keywords that render Markdown in any of those calls.
TEXT_KEYWORDS = {"body", "label", "help", "text", "captions"}
#: Keywords that render Markdown in ``st.metric`` only (elsewhere ``value`` is a widget's value).
METRIC_KEYWORDS = {"value", "delta"}
#: Calls whose options are rendered as Markdown (through format_func when given).
MARKDOWN_OPTIONS = {"radio", "select_slider", "pills", "segmented_control"}
#: Receivers that are not Streamlit (loggers, the tours' field reader), or helpers that escape
#: their label themselves (``downloads.download_button``).
NOT_STREAMLIT = {"LOG", "logging", "logger", "fields", "warnings", "self", "compute", "downloads"}
#: Helpers that return literal (escaped) or constant text.
SAFE_CALLS = {"literal", "literal_list", "literal_frame", "metric_help", "authored"}
#: Helpers that escape the data they add to their first argument, this code's label
#: (``widgets.for_column``): safe when that label is.
LABEL_CALLS = {"for_column"}
#: A format specification that only numbers accept: a sign, a thousands separator or a
#: numeric presentation type (a string with one raises ValueError).
_NUMERIC_SPEC = re.compile(r"^(?:.?[<>=^])?(?:[+\- ]|[^,_]*[,_]|.*[dfFeEgGn%]$)")


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_constant_name(node: ast.AST) -> bool:
    name = _name(node)
    return name is not None and name.isupper() and len(name) > 1


def safe(node: ast.AST) -> bool:
    """Whether ``node`` can only produce constant or escaped text (see the module notes)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(_safe_hole(part) for part in node.values if isinstance(part, ast.FormattedValue))
    if isinstance(node, ast.IfExp):
        return safe(node.body) and safe(node.orelse)
    if isinstance(node, ast.BoolOp):  # text or "(none)"
        return all(safe(value) for value in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return safe(node.left) and safe(node.right)
    if isinstance(node, ast.Call):
        if _name(node.func) in SAFE_CALLS:
            return True
        if _name(node.func) in LABEL_CALLS:
            return bool(node.args) and safe(node.args[0])
        if isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            return safe(node.func.value) and all(_safe_items(arg) for arg in node.args)
        return False
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(safe(item) for item in node.elts)
    if isinstance(node, ast.Subscript):
        return _is_constant_name(node.value)
    return _is_constant_name(node)


def _safe_items(node: ast.AST) -> bool:
    if isinstance(node, (ast.GeneratorExp, ast.ListComp)):
        return safe(node.elt)
    return safe(node)


def _safe_hole(part: ast.FormattedValue) -> bool:
    if safe(part.value):
        return True
    spec = part.format_spec
    if part.conversion == -1 and isinstance(spec, ast.JoinedStr) and len(spec.values) == 1:
        text = spec.values[0]
        return isinstance(text, ast.Constant) and bool(_NUMERIC_SPEC.match(str(text.value)))
    return False


def _safe_format_func(node: ast.AST) -> bool:
    if _name(node) in SAFE_CALLS:
        return True
    if isinstance(node, ast.Lambda):
        return safe(node.body)
    if isinstance(node, ast.Attribute) and node.attr in ("get", "__getitem__"):
        return _is_constant_name(node.value)
    return False


def unsafe_calls(path: Path) -> list[str]:
    """``file:line: call(argument)`` for each rendering argument that is not safe."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.IfExp) and isinstance(func.body, ast.Attribute):
            func = func.body  # (st.success if ok else st.warning)(text)
        if not isinstance(func, ast.Attribute):
            continue
        call = func.attr
        if call not in TEXT_CALLS or _name(func.value) in NOT_STREAMLIT:
            continue
        checked: list[tuple[str, ast.AST]] = []
        positions = {"metric": 3, "page_link": 0}.get(call, 1)  # page_link's first is a page
        checked += [(f"argument {i}", arg) for i, arg in enumerate(node.args[:positions])]
        keywords = TEXT_KEYWORDS | (METRIC_KEYWORDS if call == "metric" else set())
        checked += [(k.arg, k.value) for k in node.keywords if k.arg in keywords]
        where = f"{path.relative_to(ROOT)}:{node.lineno}: {call}"
        found += [f"{where}({what})" for what, arg in checked if not safe(arg)]
        if call in MARKDOWN_OPTIONS or call == "tabs":
            format_func = next((k.value for k in node.keywords if k.arg == "format_func"), None)
            options = node.args[1] if len(node.args) > 1 else None
            options = options or next((k.value for k in node.keywords if k.arg == "options"), None)
            if format_func is not None:
                if not _safe_format_func(format_func):
                    found.append(f"{where}(format_func)")
            elif call != "tabs" and options is not None and not safe(options):
                found.append(f"{where}(options)")
    return found


def test_no_page_renders_unescaped_text():
    found = [problem for path in SCANNED for problem in unsafe_calls(path)]
    assert not found, "text that may come from data reaches Markdown unescaped:\n" + "\n".join(
        found
    )


def test_the_scan_catches_what_it_should():
    source = "\n".join(
        [
            "st.markdown(f'**Data set:** {info.name}')",  # unescaped attribute
            "left.caption('Left out: ' + ', '.join(dropped))",  # joined data
            "st.radio('Column', columns)",  # options rendered as Markdown
            "st.metric('Rows', f'{n:,}')",  # fine: a number
            "st.info(f'Loaded {literal(name)}.')",  # fine: escaped
            "st.error(GENERIC_ERROR)",  # fine: a constant
            "st.slider(for_column(label, column))",  # a label that may be data
            "st.slider(for_column('Interval width', column))",  # fine: the column is escaped
        ]
    )
    path = ROOT / "tests" / "unit" / "_scan_example.py"
    try:
        path.write_text(source)
        found = unsafe_calls(path)
    finally:
        path.unlink()
    assert [line.split(": ", 1)[1] for line in found] == [
        "markdown(argument 0)",
        "caption(argument 0)",
        "radio(options)",
        "slider(argument 0)",
    ]


HOSTILE = [
    "![pixel](https://attacker.example/p.png)",
    "[Upload your file here](https://attacker.example/)",
    "<img src=https://attacker.example/i.png>",
    "**bold** _it_ `code` ~~gone~~ # head",
    ":red[red] :material/warning: :smile: $x^2$ $$y$$",
    "a\\\\*b* &amp; &lt;b&gt; 1. item\n- item\n> quote",
    "| a | b |\n|---|---|",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_literal_escapes_every_markdown_and_html_marker(text):
    escaped = literal(text)
    assert "\n" not in escaped
    # Every ASCII punctuation mark is backslash-escaped, so nothing is left for Markdown,
    # HTML, Streamlit's directives or LaTeX to act on; only _ - . inside a word stay as they
    # are (no construct can use them there).
    inside_word = re.sub(r"(?<=[A-Za-z0-9])[_.\-](?=[A-Za-z0-9])", "", escaped)
    unescaped = re.findall(r"(?<!\\)(?:\\\\)*[!-/:-@\[-`{-~]", inside_word.replace("\\\\", ""))
    assert all(mark == "\\" for mark in unescaped)
    assert literal(123) == "123" and literal(None) == "None"


@pytest.mark.parametrize(
    "text",
    [
        "https://a.example/p.png",
        "see www.a.example",
        "mail u@a.example",
        "HTTP://A.X",
        "mailto:u@a.example",
        "xmpp:u@a.example",
    ],
)
def test_literal_breaks_the_autolinks_markdown_finds_after_unescaping(text):
    """GitHub-flavoured Markdown links bare URLs and e-mail addresses found in the text once
    escapes are undone: an invisible word joiner breaks each start."""
    reader_sees = re.sub(r"\\(.)", r"\1", literal(text))
    assert reader_sees.replace("\u2060", "") == text
    assert not re.search(r"(?i)https?://|www\.|@\w|(?:mailto|xmpp):", reader_sees)


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("age_at_end", "age_at_end"),
        ("x-ray.dose_gy", "x-ray.dose_gy"),
        ("_x_ a__b -a a- 1. x", "\\_x\\_ a\\_\\_b \\-a a\\- 1\\. x"),
    ],
)
def test_literal_leaves_underscores_hyphens_and_dots_inside_words(text, escaped):
    """Widgets announce their label to screen readers as written, backslashes included: a
    column such as age_at_end keeps its name where no Markdown construct can use the mark."""
    assert literal(text) == escaped


def test_literal_leaves_other_colons_alone():
    assert literal("Meets the threshold: k = 5") == "Meets the threshold\\: k \\= 5"


def test_literal_frame_escapes_cells_index_and_names():
    import pandas as pd

    frame = pd.DataFrame({"![x](http://a/b.png)": ["**b**", 1]}, index=["[l](u)", "ok"])
    out = literal_frame(frame)
    assert list(out.columns) == [literal("![x](http://a/b.png)")]
    assert out.iloc[0, 0] == literal("**b**") and out.iloc[1, 0] == 1
    assert list(out.index) == [literal("[l](u)"), "ok"]
