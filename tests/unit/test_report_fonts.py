"""The report keeps every script: Chinese, Arabic and emoji names in the PDF's text (its bundled
fonts), a word for any character no font holds, and wide data (hundreds of columns, a very long
name) in both formats."""

import io
import re

import numpy as np
import pandas as pd
import pytest
from pypdf import PdfReader

from deid_core.masking import MergeLevels, RelativeRound
from deid_core.recipe import Recipe, Roles
from deid_core.report import build_report
from deid_core.report.charts import FONT_DIR
from deid_core.report.pdf import REPLACEMENT, fallbacks_needed
from deid_core.risk.context import ReleaseContext
from deid_core.workspace import Workspace

REGION, SEX, AGE, DOSE, OUTCOME = "地区", "الجنس", "年龄 😀", "剂量 $", "🏥 死亡"
CITIES = ("北京", "上海", "广州")
SEXES = ("ذكر", "أنثى")


def pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def unicode_frame(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dose = rng.gamma(0.8, 0.6, n).round(4)
    return pd.DataFrame(
        {
            "编号": np.arange(n),
            REGION: rng.choice(CITIES, n),
            SEX: rng.choice(SEXES, n),
            AGE: rng.integers(20, 80, n),
            DOSE: dose,
            OUTCOME: (rng.random(n) < 1 / (1 + np.exp(2 - 0.6 * dose))).astype(int),
        }
    )


def unicode_recipe(extra_qi: tuple[str, ...] = ()) -> Recipe:
    roles = Roles(
        quasi_identifiers=(REGION, SEX, AGE, DOSE, *extra_qi),
        exposure=DOSE,
        outcome=OUTCOME,
        covariates=(AGE,),
        record_id="编号",
    )
    return Recipe(
        roles,
        (
            RelativeRound(DOSE, digits=2),
            MergeLevels(REGION, {"华北 🏙": ["北京"], "南方": ["上海", "广州"]}),
            MergeLevels(SEX, {"كل": list(SEXES)}),
        ),
    )


def report_for(frame: pd.DataFrame, recipe: Recipe, name: str):
    return build_report(
        Workspace(frame), recipe, dataset_name=name, synthetic=True, context=ReleaseContext()
    )


@pytest.fixture(scope="module")
def unicode_report():
    return report_for(unicode_frame(), unicode_recipe(), "队列 $100 data.csv")


def test_chinese_arabic_and_emoji_names_are_in_the_pdf_text(unicode_report):
    data = unicode_report.pdf()
    text = pdf_text(data)
    names = [REGION, SEX, AGE, DOSE, OUTCOME, "编号", *CITIES, *SEXES, "华北 🏙", "南方", "كل"]
    missing = [name for name in names if name not in text]
    assert not missing, missing
    assert "队列 $100 data.csv" in text
    assert REPLACEMENT not in text  # every character had a font
    assert "in none of the PDF's fonts" not in text


def test_only_the_fallback_fonts_a_report_needs_are_loaded():
    assert fallbacks_needed(["plain English, Ελληνικά, русский, العربية"]) == []
    assert fallbacks_needed(["北京 (U+5317), 广 (U+5E7F)"]) == ["DroidSansFallback-CJK1.ttf"]
    assert fallbacks_needed(["한국어 🏥"]) == [
        "DroidSansFallback-Hangul.ttf",
        "Symbola-Emoji.ttf",
    ]


def test_a_character_no_font_holds_is_replaced_and_said(unicode_report):
    frame = unicode_frame().rename(columns={AGE: "age \ue000"})  # a private-use character
    recipe = unicode_recipe()
    roles = Roles(
        quasi_identifiers=(REGION, SEX, "age \ue000", DOSE),
        exposure=DOSE,
        outcome=OUTCOME,
        record_id="编号",
    )
    report = report_for(frame, Recipe(roles, recipe.steps), "cohort")
    text = pdf_text(report.pdf())
    assert "age " + REPLACEMENT in text
    count = re.search(r"(\d+) character\(s\) of this report are in none of the PDF's fonts", text)
    assert count and int(count.group(1)) >= 1
    assert "age \ue000" in report.html()  # the HTML keeps it


def test_the_charts_draw_the_names_in_both_formats(unicode_report):
    svg = " ".join(f.svg() for f in unicode_report.figures())
    assert DOSE in svg.replace("&#36;", "$")
    html = unicode_report.html()
    assert html.count('<img src="data:image/svg+xml;base64,') == len(unicode_report.figures())


def test_a_wide_file_with_a_very_long_name_gives_both_formats():
    frame = unicode_frame(300)
    long_name = "measured " + "x" * 491
    assert len(long_name) == 500
    rng = np.random.default_rng(2)
    extra = {long_name: rng.choice(["a", "b"], len(frame))}
    extra.update({f"lab_{i:03d}": rng.normal(size=len(frame)).round(2) for i in range(293)})
    wide = pd.concat([frame, pd.DataFrame(extra)], axis=1)
    assert wide.shape[1] == 300
    report = report_for(wide, unicode_recipe(extra_qi=(long_name,)), "wide.csv")
    html = report.html()
    assert long_name in html and "lab_292" in html
    text = pdf_text(report.pdf())
    flat = re.sub(r"\s+", "", text)
    assert re.sub(r"\s+", "", long_name) in flat
    assert "lab_292" in flat and REGION in text


def test_font_files_are_small_and_licensed():
    fonts = sorted(FONT_DIR.glob("*.ttf"))
    assert len(fonts) == 6
    for path in fonts:
        assert path.stat().st_size < 2 * 1024 * 1024, path.name
    readme = (FONT_DIR / "README.md").read_text()
    assert all(path.name in readme for path in fonts)
    assert len(list(FONT_DIR.glob("LICENSE-*.txt"))) == 3
