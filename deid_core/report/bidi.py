"""Names from data kept from reordering the report's own sentences.

A column name (or a file name) may hold Unicode's bidirectional controls: U+202E, the
right-to-left override, makes everything after it on the line run right to left, until the
end of the paragraph, digits included, so "'age\\u202eyrs' was rounded to 5 years" would read
backwards from the name on. The Unicode bidirectional algorithm (UAX #9) has the remedy:
text between U+2068 (first strong isolate, FSI) and U+2069 (pop directional isolate, PDI) is
laid out on its own and ends every embedding and override it opened at its PDI (rule X6a), the
plain-text equivalent of HTML's ``<bdi>``. Browsers and fpdf2's bidi implementation both
follow it, so one change to the report's text serves the HTML and the PDF.

:func:`isolate_sections` wraps every occurrence of a name that holds right-to-left letters or
a directional control; names of left-to-right text are left alone (isolating them changes
nothing). A name that holds stray PDIs of its own (each would close an isolate early) is
wrapped once more for each.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from deid_core.report.document import Block, BulletList, Figure, Paragraph, Section, Table

FIRST_STRONG_ISOLATE = "\u2068"
POP_DIRECTIONAL_ISOLATE = "\u2069"

#: Bidirectional classes that can reorder the text around them.
_DIRECTIONAL = frozenset(
    {"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
)


def needs_isolation(text: str) -> bool:
    """Whether ``text`` holds a right-to-left letter, an Arabic digit or a directional
    control: something that can reorder the text around it."""
    return any(ord(c) > 0x7F and unicodedata.bidirectional(c) in _DIRECTIONAL for c in text)


def isolate(text: str) -> str:
    """``text`` between FSI and PDI, once more for each PDI of its own that no isolate
    initiator of its own opened (so none of them can close the wrapping early)."""
    depth = stray = 0
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("LRI", "RLI", "FSI"):
            depth += 1
        elif kind == "PDI":
            if depth:
                depth -= 1
            else:
                stray += 1
    times = stray + 1
    return FIRST_STRONG_ISOLATE * times + text + POP_DIRECTIONAL_ISOLATE * times


def name_isolator(names: Iterable[str]) -> Callable[[str], str]:
    """A function of a text giving it with every occurrence of each of ``names`` that needs it
    (:func:`needs_isolation`) isolated (:func:`isolate`); longer names first, so a name inside
    another is not split. The names are scanned once, however many texts are isolated."""
    wanted = sorted({n for n in names if n and needs_isolation(n)}, key=len, reverse=True)
    if not wanted:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(name) for name in wanted))

    def isolated(text: str) -> str:
        return pattern.sub(lambda match: isolate(match.group(0)), text)

    return isolated


def isolate_names(text: str, names: Iterable[str]) -> str:
    """``text`` with every occurrence of each name that needs it isolated
    (:func:`name_isolator`)."""
    return name_isolator(names)(text)


def isolate_sections(sections: Sequence[Section], names: Iterable[str]) -> tuple[Section, ...]:
    """The sections with the names isolated in every text they show (paragraphs, list items,
    table captions, headers and cells, figure titles, captions, alt texts and data tables)."""
    text = name_isolator(str(name) for name in names)

    def table(block: Table) -> Table:
        return replace(
            block,
            header=tuple(map(text, block.header)),
            rows=tuple(tuple(map(text, row)) for row in block.rows),
            caption=text(block.caption),
        )

    def block_of(block: Block) -> Block:
        if isinstance(block, Paragraph):
            return replace(block, text=text(block.text))
        if isinstance(block, BulletList):
            return replace(block, items=tuple(map(text, block.items)))
        if isinstance(block, Table):
            return table(block)
        assert isinstance(block, Figure)
        return replace(
            block,
            title=text(block.title),
            caption=text(block.caption),
            alt=text(block.alt),
            data=table(block.data) if block.data is not None else None,
        )

    return tuple(
        replace(section, title=text(section.title), blocks=tuple(map(block_of, section.blocks)))
        for section in sections
    )
