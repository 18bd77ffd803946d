"""The report as one self-contained HTML page: styles inline, charts as SVG data URIs in
``<img>`` tags, every string escaped (text from data and files is shown as literal text, never
as markup).

The page is built for assistive technology as well as the eye: one ``h1``, a contents list
linking to every section, an ``h2`` per section and an ``h3`` per chart; tables with a
``<caption>`` and header cells scoped to their column (and the first cell of each row to its
row); every chart with alt text saying what it shows and its figures as a data table (in a
``<details>`` element a keyboard opens)."""

from __future__ import annotations

import html as html_lib
from collections.abc import Sequence

from deid_core.cancellation import check_cancelled
from deid_core.report.document import Block, BulletList, Paragraph, Section, Table

_CSS = """
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:60rem;
margin:1.5rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;border-bottom:1px solid #ccc;
padding-bottom:.2rem;margin-top:1.8rem}p.meta{color:#555;font-size:.9rem}
p.note{color:#444;font-size:.9rem}p.ok{color:#146e28;font-weight:600}
p.warn{color:#aa1e1e;font-weight:600}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}th{background:#f2f2f2}
figure{margin:1rem 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption,caption{font-size:.85rem;color:#444}caption{caption-side:bottom;
text-align:left;padding-top:.2rem}nav ol{margin:.3rem 0 0 1.2rem;padding:0}
td.sign{min-width:10rem;height:2.2rem}
"""


def render_html(title: str, created: str, sections: Sequence[Section]) -> str:
    """A self-contained HTML page (styles inline, charts as SVG data URIs).

    :func:`~deid_core.cancellation.check_cancelled` is called before each block (a chart is
    drawn by Vega: about 0.1 s), so that a page no longer wanted stops there."""
    esc = html_lib.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<header><h1>{esc(title)}</h1>",
        f'<p class="meta">Generated {esc(created)} by the de-identification dashboard.</p>',
        "</header>",
        _contents(sections),
        "<main>",
    ]
    for section in sections:
        out.append(f'<section id="{esc(section.key)}"><h2>{esc(section.title)}</h2>')
        for block in section.blocks:
            check_cancelled()
            out.append(_block_html(block))
        out.append("</section>")
    out.append("</main></body></html>")
    return "\n".join(out)


def _contents(sections: Sequence[Section]) -> str:
    esc = html_lib.escape
    items = "".join(f'<li><a href="#{esc(s.key)}">{esc(s.title)}</a></li>' for s in sections)
    return f'<nav aria-label="Contents"><h2>Contents</h2><ol>{items}</ol></nav>'


def _table_html(table: Table) -> str:
    """A table with its caption, header cells scoped to columns, first cells to rows."""
    esc = html_lib.escape
    caption = f"<caption>{esc(table.caption)}</caption>" if table.caption else ""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in table.header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<th scope="row">{esc(c)}</th>' if i == 0 else f"<td>{esc(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in table.rows
    )
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _block_html(block: Block) -> str:
    esc = html_lib.escape
    if isinstance(block, Paragraph):
        return f'<p class="{esc(block.kind)}">{esc(block.text)}</p>'
    if isinstance(block, BulletList):
        items = "".join(f"<li>{esc(item)}</li>" for item in block.items)
        return f"<ul>{items}</ul>"
    if isinstance(block, Table):
        return _table_html(block)
    caption = f"<figcaption>{esc(block.caption)}</figcaption>" if block.caption else ""
    alt = block.alt or block.title
    data = (
        f"<details><summary>Data table of this chart</summary>{_table_html(block.data)}</details>"
        if block.data is not None
        else ""
    )
    return (
        f"<figure><h3>{esc(block.title)}</h3>"
        f'<img src="{block.svg_data_uri()}" alt="{esc(alt)}">{caption}{data}</figure>'
    )
