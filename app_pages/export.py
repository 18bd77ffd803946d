"""Export: the masked file (without direct identifiers) and the recipe as JSON."""

from dataclasses import dataclass
from pathlib import PurePath

import streamlit as st

from dashboard import compute, downloads, identifiers, release_view, state
from dashboard.downloads import PreparedFile
from dashboard.sidebar import show_verdict
from dashboard.text import literal, literal_list
from deid_core.errors import DeidError
from deid_core.io.export import FORMATS, Export, ExportFormat, export_release
from deid_core.release_summary import ReleaseSummary, summarise_release
from deid_core.report import build_report
from deid_core.report.provenance import FIELD_LABELS, FIELD_LIMITS
from deid_core.tradeoff.rumap import default_sweep_step, sweepable_steps

#: The help of each project detail's text box (the labels are the report's).
PROJECT_HELP = {
    "title": "The study or project this release serves, as the approval names it.",
    "custodian": "The person or body responsible for the source data (who releases them).",
    "recipient": "Who receives the masked file (a person, a team, or 'the public').",
    "purpose": "What the recipient may use the data for.",
}

#: Formats whose spreadsheet formulas can be neutralised.
NEUTRALISED = ("csv", "xlsx")

FORMAT_HELP = {
    "csv": "CSV (.csv)",
    "xlsx": "Excel (.xlsx)",
    "parquet": "Parquet (.parquet)",
    "dta": "Stata (.dta)",
}

st.title("Export")
st.caption(
    "Download the masked data to send, and the recipe that produced it (to document the "
    "release, or replay it on next year's data). Files are built in memory, never on disk."
)


def render() -> None:
    workspace = state.current_workspace()
    recipe = state.current_recipe()
    roles = recipe.roles
    info = state.current_dataset()
    base = info.demo_key or PurePath(info.name).stem
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in base)[:60] or "data"

    recipe = identifiers.pseudonym_controls(recipe)

    st.subheader("What the recipe does")
    for line in recipe.describe():
        st.markdown(f"- {literal(line)}")

    try:
        judged = compute.judged_risk(recipe)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    verdict = compute.verdict(judged, recipe)
    show_verdict(verdict)
    if verdict.not_judged:
        st.caption("Mark the quasi-identifiers on the Data page before you send this file.")
    elif not verdict.meets:
        st.caption("Consider more masking before you send this file.")

    # ------------------------------------------------------------------ masked data
    st.subheader("Masked data")
    keep_id = False
    pseudonymised = {step.column: step.released_name for step in recipe.pseudonym_steps}
    if roles.record_id and roles.record_id not in pseudonymised:
        keep_id = st.checkbox(
            f"Keep the record id '{literal(roles.record_id)}'",
            value=False,
            key="export.keep_id",
            help="Off by default: the record id links each released record to its source "
            "record, so anyone holding the source could re-identify every record. Keep it only "
            "if the recipient is allowed to link back.",
        )
    try:
        token, release = identifiers.release(recipe, keep_id)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    released = release.frame
    dropped = [c for c in roles.direct_identifiers if c not in pseudonymised]
    if roles.record_id and not keep_id and roles.record_id not in pseudonymised:
        dropped.append(roles.record_id)
    st.markdown(
        f"{len(released):,} records, {released.shape[1]:,} columns: "
        f"{literal_list(released.columns, quote='')}."
    )
    if dropped:
        st.caption(f"Left out (never released): {literal_list(dropped, quote='')}.")
    if pseudonymised:
        st.caption(
            "Released as pseudonyms: "
            + ", ".join(
                f"{literal(column)} as {literal(name)}" for column, name in pseudonymised.items()
            )
            + ". The key and the crosswalk are never in this file."
        )
    several = identifiers.several_rows_note(recipe)
    if several:
        st.caption(literal(several))
    if recipe.is_random:
        st.caption("The file holds one random draw of the noise (the same one the figures use).")
    unmasked_released = [
        c
        for c in released.columns
        if c not in recipe.masked_columns and c in roles.quasi_identifiers
    ]
    if unmasked_released:
        st.caption(
            "Quasi-identifiers released without masking: "
            + literal_list(unmasked_released, quote="")
        )
    left, right = st.columns(2)
    fmt_key = left.selectbox(
        "File format",
        list(FORMATS),
        format_func=lambda k: FORMAT_HELP[k],
        key="export.format",
        help="CSV opens anywhere; Excel for spreadsheets; Parquet keeps column types (for R, "
        "Python, Spark); Stata (.dta, version 14+): invalid variable names are renamed by "
        "Stata's rules and long text is kept as strL.",
    )
    shuffle = right.checkbox(
        "Shuffle the rows",
        value=True,
        key="export.shuffle",
        help="On by default: otherwise the file keeps the source's record order, so anyone "
        "holding the source could pair row i with row i and undo every masking step. Rows are "
        "shuffled one by one, so a person's rows are not kept together or in order. The "
        "order is drawn from a seed of its own (128 bits from the operating system's entropy, "
        "the same on every download in this session), written nowhere. Turn it off only if "
        "the recipient must keep your order.",
    )
    neutralise = right.checkbox(
        "Neutralise spreadsheet formulas (CSV and Excel)",
        value=True,
        key="export.neutralise",
        disabled=fmt_key not in NEUTRALISED,
        help="On by default: a text cell or column name starting with =, +, -, @, a tab or a "
        "carriage return is run as a formula when the file is opened in a spreadsheet (CSV "
        "injection); it then gets a leading ' so it shows as text. Numbers are never changed. "
        "Turn it off only if the recipient reads the file with a program, not a spreadsheet.",
    )
    fmt = FORMATS[fmt_key]
    described = [f"{fmt.label}, {len(released):,} records, {released.shape[1]:,} columns"]
    described += ["rows shuffled"] if shuffle else []
    described += (
        ["spreadsheet formulas neutralised"] if neutralise and fmt.key in NEUTRALISED else []
    )
    prepared = PreparedFile(
        (compute.recipe_key(recipe), fmt_key, shuffle, keep_id, neutralise, token),
        f"{stem}_masked.{fmt.extension}",
        ", ".join(described),
        lambda: export_release(
            released,
            fmt_key,
            shuffle_seed=state.seed_for("shuffle"),
            shuffle=shuffle,
            neutralise=neutralise,
        ),
    )
    if st.button(literal(f"Prepare the masked data ({fmt.label})"), key="export.prepare"):
        with st.spinner(literal(f"Writing {len(released):,} records as {fmt.label}...")):
            try:
                prepared.prepared()
            except Exception as error:
                st.error(literal(state.user_message(error)))
                return
    download_slot = st.container()  # drawn last: building the report may write the file
    identifiers.crosswalk_download(release, stem)

    # ------------------------------------------------------------------ recipe
    st.subheader("Recipe (JSON)")
    include_seeds = st.checkbox(
        "Include the random seeds",
        value=False,
        key="export.seeds",
        help="Off by default: with the seed, anyone can regenerate the exact noise and subtract "
        "it, undoing the masking. Knowing the mechanism already helps an intruder; keep seeds "
        "only in your own archive.",
    )
    if recipe.is_random and not include_seeds:
        st.caption("Seeds are left out: the recipe describes the noise but cannot reproduce it.")
    if recipe.needs_key:
        st.caption(
            "The recipe never holds the secret key, only its fingerprint (which tells a later "
            "release whether it was given the same key, and reveals nothing else)."
        )
    text = recipe.to_json(include_seeds=include_seeds)
    downloads.download_button(
        "Download the recipe (JSON)",
        recipe,
        lambda r: r.to_json(include_seeds=include_seeds).encode("utf-8"),
        name="export.recipe",
        file_name=f"{stem}_recipe.json",
        mime="application/json",
        key="export.recipe",
        icon=":material/download:",
    )
    st.code(text, language="json")

    render_report(workspace, recipe, info, stem, keep_id, prepared, tuple(released.columns))
    with download_slot:
        render_download(prepared, fmt)


def render_download(prepared: PreparedFile, fmt: ExportFormat) -> None:
    exported = prepared.cached()
    if exported is None:
        st.caption(
            "The file is written when you press the button (in memory, never on disk); the "
            "download link then works for a minute after each click."
        )
        return
    downloads.download_button(
        f"Download the masked data ({fmt.label})",
        exported,
        lambda export: export.data,
        name="export.data",
        file_name=prepared.file_name,
        mime=fmt.mime,
        key=f"export.{fmt.key}",
        icon=":material/download:",
        type="primary",
    )
    for note in exported.notes:
        st.caption(literal(note))


# ---------------------------------------------------------------------------- report
def _report_key(recipe, include_parameters: bool, sweep_step, prepared: PreparedFile) -> tuple:
    source = state.current_source()
    return (
        id(state.current_workspace()),
        compute.recipe_key(recipe),
        include_parameters,
        sweep_step,
        prepared.key,
        state.project_details(),
        state.release_context(),
        *(state.setting(n) for n in ("matching_rule", "security_measure", "replicates")),
        state.setting("missing"),
        state.setting("bf_method"),
        state.sample_design(),
        source.token if source else 0,
    )


def render_project_fields() -> None:
    """The project details the report carries for an ethics board or data-access committee."""
    st.markdown("**For the ethics board or data-access committee**")
    columns = st.columns(2)
    for position, (field, label) in enumerate(FIELD_LABELS.items()):
        draw = (
            columns[position % 2].text_area
            if field == "purpose"
            else columns[position % 2].text_input
        )
        draw(
            label,
            max_chars=FIELD_LIMITS[field],
            help=PROJECT_HELP[field],
            **state.bound_to_project(field),
        )
    st.caption(
        "All optional; they head the report, with the date, the SHA-256 of the source file "
        "and of the released file (the masked data above, exactly as downloaded), the "
        "software version and the recipe's SHA-256, and end it in sign-off lines."
    )


def render_report(
    workspace,
    recipe,
    info,
    stem: str,
    keep_id: bool,
    prepared: PreparedFile,
    released_columns: tuple[str, ...],
) -> None:
    st.subheader("Report (HTML and PDF)")
    st.caption(
        "Documents the release: the project and the files' SHA-256, the data, the roles, the "
        "release context, each masking step in plain language, the risk (and the open-data "
        "risk, when the Risk page treats the file as a sample), what each column released "
        "unmasked still gives away, the utility before and after masking, charts, the verdict "
        "and sign-off lines. Built in memory; it may take a few seconds (random masking is "
        "refitted). Building it also writes the masked data above, whose SHA-256 it records."
    )
    render_project_fields()
    include = st.checkbox(
        "Include masking parameters and seeds",
        value=False,
        key="export.report_params",
        help="Off by default: the report then says which noise or smoothing was applied but "
        "not its exact size, and never a seed. With the seed anyone can regenerate the noise "
        "and subtract it; the exact half-width or bandwidth helps an intruder bound the true "
        "values.",
    )
    if include:
        st.warning(
            "The report will contain the masking parameters and the random seeds: keep it in "
            "your own archive and do not send it with the data.",
            icon=":material/warning:",
        )
    original = workspace.original
    sweepable = sweepable_steps(recipe, original)
    sweep_step = default_sweep_step(recipe, original)
    if len(sweepable) > 1:
        sweep_step = st.selectbox(
            "Step swept on the R-U map",
            sweepable,
            index=sweepable.index(sweep_step) if sweep_step in sweepable else 0,
            format_func=lambda i: f"{recipe.steps[i].column}: {recipe.steps[i].label.lower()}",
            key="export.report_sweep",
            help="The report draws the risk-utility path of this step's parameter, with the "
            "current recipe marked.",
        )
    lens = st.checkbox(
        "Include the classifier lens of utility",
        key="export.report_classifier",
        help="Trains a logistic regression and a random forest on the original and on the "
        "masked data (see the Utility page); adds seconds, minutes for random masks on large "
        "data.",
    )
    key = (_report_key(recipe, include, sweep_step, prepared), lens)
    cache = state.SessionCache("report", size=2)
    built = cache.peek(key)
    if built is not None:
        prepared.keep(built.export)  # the download offers the bytes this report hashed
    if st.button("Build the report", key="export.build_report", icon=":material/description:"):
        with st.status("Building the report...", expanded=True) as status:
            progress = compute.LazyProgress(st.container(), "Assessing the recipe")
            try:
                exported = prepared.prepared()
                source = state.current_source()
                report = build_report(
                    workspace,
                    recipe,
                    dataset_name=info.name,
                    synthetic=info.synthetic,
                    context=state.release_context(),
                    include_parameters=include,
                    sweep_step=sweep_step,
                    n_replicates=state.setting("replicates"),
                    rule=state.setting("matching_rule"),
                    measure=state.setting("security_measure"),
                    missing=state.setting("missing"),
                    source=source.frame if source else None,
                    keep_record_id=keep_id,
                    progress=progress,
                    open_data=state.sample_design(),
                    bf_method=state.setting("bf_method"),
                    classifier=lens,
                    project=state.project_details(),
                    source_file=info.source_file,
                    released_file=prepared.fingerprint(exported),
                )
                st.write("Rendering the HTML and the PDF...")
                built = BuiltReport(
                    report.html(),
                    exported,
                    *_pdf_or_problem(report),
                    *_release_summary(report, recipe, keep_id, exported, released_columns),
                )
            except Exception as error:
                progress.clear()
                status.update(label="The report could not be built", state="error")
                st.error(literal(state.user_message(error)))
                return
            progress.clear()
            cache.put(key, built)
            status.update(label="Report ready", state="complete", expanded=False)
    if built is None:
        st.caption("Press the button to build the report for the current recipe and settings.")
        release_view.render_release_link(None, None)
        return
    left, right = st.columns(2)
    downloads.download_button(
        "Download the report (HTML)",
        built,
        lambda b: b.html.encode("utf-8"),
        name="export.report_html",
        where=left,
        file_name=f"{stem}_report.html",
        mime="text/html",
        key="export.report_html",
        icon=":material/download:",
    )
    if built.pdf is not None:
        downloads.download_button(
            "Download the report (PDF)",
            built,
            lambda b: b.pdf,
            name="export.report_pdf",
            where=right,
            file_name=f"{stem}_report.pdf",
            mime="application/pdf",
            key="export.report_pdf",
            icon=":material/download:",
        )
    else:
        right.warning(
            literal(
                f"The PDF could not be made ({built.pdf_problem}); the HTML report holds "
                "everything the PDF would."
            ),
            icon=":material/warning:",
        )
    release_view.render_release_link(built.summary, built.summary_problem)
    st.markdown("**Preview**")
    st.iframe(built.html, height=800)


@dataclass(frozen=True)
class BuiltReport:
    """The report's two files (``pdf`` None, and why, when it could not be made), the
    masked file whose SHA-256 it records and the release link's content."""

    html: str
    export: Export
    pdf: bytes | None
    pdf_problem: str | None = None
    summary: ReleaseSummary | None = None
    """What the release link carries (None, and why in ``summary_problem``, when it could
    not be made)."""
    summary_problem: str | None = None


def _release_summary(
    report, recipe, keep_id: bool, exported: Export, released_columns: tuple[str, ...]
) -> tuple[ReleaseSummary | None, str | None]:
    """The release link's content for the report just built, or why it could not be made."""
    try:
        summary = summarise_release(
            report,
            recipe,
            tuple(map(str, state.current_workspace().original.columns)),
            released_columns,
            exported.columns,
            exported.n_rows,
            exported.format.label,
            keep_record_id=keep_id,
        )
    except Exception as error:
        return None, state.user_message(error)
    return summary, None


def _pdf_or_problem(report) -> tuple[bytes | None, str | None]:
    try:
        return report.pdf(), None
    except Exception as error:
        message = state.user_message(error)  # logs an unexpected error's type, never its text
        return None, message if isinstance(error, DeidError) else "the PDF writer failed"


render()
