"""The report as one self-contained HTML page: styles inline, charts as SVG data URIs in
``<img>`` tags, every string escaped (text from data and files is shown as literal text, never
as markup)."""

from __future__ import annotations

import html as html_lib
from collections.abc import Sequence

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
figcaption,.caption{font-size:.85rem;color:#444}
"""


def render_html(title: str, created: str, sections: Sequence[Section]) -> str:
    """A self-contained HTML page (styles inline, charts as SVG data URIs)."""
    esc = html_lib.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f'<p class="meta">Generated {esc(created)} by the de-identification dashboard.</p>',
    ]
    for section in sections:
        out.append(f'<section id="{esc(section.key)}"><h2>{esc(section.title)}</h2>')
        for block in section.blocks:
            out.append(_block_html(block))
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out)


def _block_html(block: Block) -> str:
    esc = html_lib.escape
    if isinstance(block, Paragraph):
        return f'<p class="{esc(block.kind)}">{esc(block.text)}</p>'
    if isinstance(block, BulletList):
        items = "".join(f"<li>{esc(item)}</li>" for item in block.items)
        return f"<ul>{items}</ul>"
    if isinstance(block, Table):
        head = "".join(f"<th>{esc(h)}</th>" for h in block.header)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in block.rows
        )
        caption = f'<p class="caption">{esc(block.caption)}</p>' if block.caption else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{caption}"
    caption = f"<figcaption>{esc(block.caption)}</figcaption>" if block.caption else ""
    return (
        f"<figure><h3>{esc(block.title)}</h3>"
        f'<img src="{block.svg_data_uri()}" alt="{esc(block.title)}">{caption}</figure>'
    )
