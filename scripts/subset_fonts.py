"""Rebuild the report's bundled fonts (deid_core/report/fonts/) from Debian's font packages.

The PDF report and its charts need glyphs for every script a column or category name may use.
DejaVu Sans (fonts-dejavu-core) covers Latin, Greek, Cyrillic, Arabic, Hebrew and many
symbols and is copied whole. The fallbacks are subsets, each kept under 2 MB:

- Droid Sans Fallback (fonts-droid-fallback, Apache 2.0): every CJK Unified Ideograph of the
  basic block (U+4E00-U+9FFF), kana, bopomofo, Hangul syllables and jamo, CJK punctuation and
  full-width forms, in three files (the ideographs split at U+7000, Hangul apart);
- Symbola (fonts-symbola, free for any use): emoji and pictographs (U+1F000-U+1FAFF), the
  miscellaneous symbols and dingbats that DejaVu Sans lacks, monochrome outlines (fpdf2
  embeds them as text).

Hinting is dropped (the PDF is scaled anyway). Usage:
    apt-get install fonts-dejavu-core fonts-droid-fallback fonts-symbola
    python scripts/subset_fonts.py
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

OUT = Path(__file__).resolve().parents[1] / "deid_core" / "report" / "fonts"
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
DROID = Path("/usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf")
SYMBOLA = Path("/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf")
LIMIT = 2 * 1024 * 1024


def spans(*ranges: tuple[int, int]) -> list[int]:
    return [cp for low, high in ranges for cp in range(low, high + 1)]


#: (file name, source, code points) of each subset.
SUBSETS = (
    (
        "DroidSansFallback-CJK1.ttf",
        DROID,
        spans((0x2E80, 0x2FDF), (0x3000, 0x33FF), (0x4E00, 0x6FFF)),
    ),
    (
        "DroidSansFallback-CJK2.ttf",
        DROID,
        spans((0x7000, 0x9FFF), (0xF900, 0xFAFF), (0xFE30, 0xFE4F)),
    ),
    (
        "DroidSansFallback-Hangul.ttf",
        DROID,
        spans((0x1100, 0x11FF), (0x3130, 0x318F), (0xAC00, 0xD7A3), (0xFF00, 0xFFEF)),
    ),
    (
        "Symbola-Emoji.ttf",
        SYMBOLA,
        spans((0x1F000, 0x1FAFF), (0x2190, 0x21FF), (0x2300, 0x23FF), (0x25A0, 0x27BF))
        + spans((0x2900, 0x297F), (0x2B00, 0x2BFF)),
    ),
)


def make_subset(source: Path, unicodes: list[int], target: Path, skip: set[int]) -> int:
    """Subset ``source`` to ``unicodes`` less ``skip`` (what an earlier font already has)."""
    options = subset.Options()
    options.hinting = False
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[cp for cp in unicodes if cp not in skip])
    subsetter.subset(font)
    subset.save_font(font, str(target), options)
    return target.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"):
        shutil.copyfile(DEJAVU / name, args.out / name)
    covered = set(TTFont(args.out / "DejaVuSans.ttf").getBestCmap())
    for name, source, unicodes in SUBSETS:
        size = make_subset(source, unicodes, args.out / name, covered)
        if size > LIMIT:
            raise SystemExit(f"{name} is {size:,} bytes, over the 2 MB limit: split it further")
    for path in sorted(args.out.glob("*.ttf")):
        print(f"{path.name}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
