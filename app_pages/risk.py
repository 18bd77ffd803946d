"""Risk: the measure the release is judged by (equivalence classes, or record linkage when
values are perturbed), Cologne's linkage scores, open data, class sizes, riskiest records and
attribute disclosure."""

import pandas as pd
import streamlit as st

from dashboard import charts, compute, identifiers, state, tables
from dashboard.help import judged_caption, metric_help
from dashboard.sidebar import show_verdict
from dashboard.text import literal, literal_frame, literal_list
from dashboard.upload import UPLOAD_TYPES, read_upload, show_messages
from deid_core.risk import (
    BF_METHODS,
    CLASS_KINDS,
    DISTANCES,
    MATCH_RULES,
    MISSING_MODES,
    REFERENCE_TOOL_NOTES,
    PerturbedRisk,
    SampleDesign,
    risk_basis,
)
from deid_core.risk.linkage import masking_tolerance
from deid_core.risk.records_at_risk import records_at_risk
from deid_core.risk.release import JudgedRelease

st.title("Risk")
st.caption(
    "How easily could a released record be re-identified? Records sharing all masked "
    "quasi-identifier values form an equivalence class; a record's risk is 1 / its class size. "
    "When values are perturbed (noise, smoothing), no value matches exactly: the risk is then "
    "that of linking records within the perturbation's reach."
)


def render() -> None:
    workspace = state.current_workspace()
    recipe = state.current_recipe()
    qis = recipe.roles.quasi_identifiers
    if not qis:
        st.warning(
            "No quasi-identifiers are chosen, so every record is in one class and the risk is "
            "trivially low. Choose them on the Data page."
        )

    try:
        summary = compute.risk(recipe)
        release = compute.judged_risk(recipe)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    judged = release.perturbed or release.classes  # the figures drawn below
    perturbed = isinstance(judged, PerturbedRisk)

    st.markdown(f"**Quasi-identifiers:** {literal_list(qis, quote='') or '(none)'}")
    show_verdict(compute.verdict(release, recipe))
    render_release_measures(release)
    render_verdict_details(recipe, judged)

    several = identifiers.several_rows_note(recipe)
    if perturbed:
        render_record_linkage(judged)
        if several:
            st.caption(
                literal(identifiers.rows_only_note("Record linkage, which the verdict uses,"))
            )
    st.subheader(
        "Equivalence classes (do not apply: values perturbed)"
        if perturbed
        else "Summary (closed data: the intruder knows who is in the file)"
    )
    st.radio(
        "Missing quasi-identifier values",
        list(MISSING_MODES),
        format_func=lambda m: literal(MISSING_MODES[m].capitalize()),
        **state.bound_to_setting("missing"),
        horizontal=True,
        help="As a category: records with a missing value form classes among themselves. As "
        "matching any value (sdcMicro's default): a record's class is every record that agrees "
        "with it wherever both have a value, so risk is lower and classes overlap.",
    )
    if perturbed:
        st.caption(
            "Every perturbed value is unique, so these class figures count almost every record "
            "as unique, yet nobody can match a perturbed value exactly: they do not describe "
            "this release's risk and the verdict does not use them."
        )
        with st.expander("Equivalence-class figures (for reference only)"):
            st.table(literal_frame(tables.risk_summary_table(summary).set_index("Measure")))
    else:
        st.table(literal_frame(tables.risk_summary_table(summary).set_index("Measure")))
    if several and summary.unit == "people" and not perturbed:
        st.info(
            literal(several)
            + " An intruder who knows several of a person's rows could narrow them "
            "down further; this count does not model that.",
            icon=":material/group:",
        )
    elif several and not perturbed:
        st.warning(
            literal(
                identifiers.rows_only_note(
                    "With missing or suppressed values matching any value, this summary"
                )
            ),
            icon=":material/warning:",
        )

    # ----------------------------------------------------------------------------- linkage
    st.subheader("Linkage to the source (Cologne et al. 2012)")
    st.caption(
        "An intruder holding source records matches each released record to them on the "
        "quasi-identifiers; with i matching source records the right one is picked with "
        "probability 1/i. The source is the original data unless you upload a source database "
        "(e.g. the whole cohort the file was drawn from)."
    )
    render_source_upload(recipe)
    if perturbed:
        st.caption(
            "With perturbed values the release is linked within the perturbation's reach and "
            "to the nearest record (the figures above, against this source); exact or "
            "same-masking rules would never match a perturbed value, so they are not shown."
        )
        render_open_data(perturbed)
        st.caption(
            "The class-size chart and the records at risk count equivalence classes: they are "
            "not shown for perturbed values (the match table above takes their place)."
        )
        render_attribute_disclosure(recipe, judged)
        return
    rule = st.radio(
        "Matching rule",
        list(MATCH_RULES),
        format_func=MATCH_RULES.__getitem__,
        **state.bound_to_setting("matching_rule"),
        help=metric_help("matching_rule"),
    )
    tolerance = None
    if rule == "tolerance":
        reach = masking_tolerance(recipe, workspace.original)
        st.caption(
            "Masking's own reach per column: "
            + (
                ", ".join(f"{literal(c)} +/-{v:.3g}" for c, v in reach.items())
                or "none (no noise or rounding to a base)"
            )
            + ". Other quasi-identifiers must match exactly."
        )
        override = st.number_input(
            "Tolerance for every numeric quasi-identifier (0 = the masking's own reach)",
            min_value=0.0,
            value=0.0,
            format="%g",
            key="risk.tolerance",
            help="A released value matches a source value within this distance, in the "
            "column's units (e.g. the noise half-width).",
        )
        tolerance = float(override) if override > 0 else None
    try:
        link = compute.linkage(recipe, rule, tolerance=tolerance)
    except Exception as error:
        st.error(literal(state.user_message(error)))
    else:
        c1, c2, c3 = st.columns(3)
        c1.metric(
            "Identifiability risk score",
            f"{link.identifiability_score:.4f}",
            help=metric_help("identifiability"),
        )
        c2.metric("Anonymity score", f"{link.anonymity_score:.4f}", help=metric_help("anonymity"))
        c3.metric("Perceived risk", f"{link.perceived_score:.4f}", help=metric_help("perceived"))
        st.markdown("**Matches per released record** (Cologne Table 1 layout)")
        match = link.match_table().rename(
            columns={
                "source matches": "Source records matching",
                "risk 1/i": "Risk 1/i",
                "correct": "Released records (own record among the matches)",
                "any": "Released records (any match)",
            }
        )
        match["Risk 1/i"] = match["Risk 1/i"].map(lambda v: "—" if v != v else f"{v:.3f}")
        st.table(literal_frame(match.set_index("Source records matching")))
        charts.show_chart(
            charts.match_probability_chart(link.match_probability()),
            "Released records by their probability of correct identification",
        )
        st.caption(
            f"{link.n_released:,} released and {link.n_source:,} source records. Identifiability "
            "= sum over rows of (records with their own record among the matches) x 1/i, divided "
            "by the number of released records; the perceived score uses every match."
        )
        if several:
            st.caption(literal(identifiers.rows_only_note("Linkage to the source")))

    # ----------------------------------------------------------------------------- open data
    render_open_data(perturbed)
    if several:
        st.caption(literal(identifiers.rows_only_note("The open-data risk")))
    render_attribute_disclosure(recipe, judged)

    # ----------------------------------------------------------------------------- distribution
    unit = summary.unit
    st.subheader(f"{literal(unit.capitalize())} by equivalence class size")
    before = compute.risk(compute.unmasked(recipe))
    charts.show_chart(
        charts.class_size_chart(
            summary.class_size, state.setting("min_cell_size"), before=before.class_size, unit=unit
        ),
    )
    st.caption(
        f"Pale bars: before masking; solid bars: after. Red bars hold {literal(unit)} in classes "
        "below the minimum cell size, whose risk is above the threshold."
    )

    # ----------------------------------------------------------------------------- riskiest
    st.subheader("Records at risk")
    top = st.slider("How many to list", 10, 200, 50, step=10, key="risk.top")
    min_size = state.setting("min_cell_size")
    try:
        risky = records_at_risk(workspace, recipe, top=top, min_class_size=min_size)
    except Exception as error:
        st.error(literal(state.user_message(error)))
    else:
        st.caption(
            "The records in the smallest classes, with original and masked quasi-identifier "
            f"values side by side (only in your session). The last column names the "
            f"quasi-identifiers whose removal alone would put the record in a class of at least "
            f"{min_size:,}: drop or coarsen those first. Sort by any column."
            + (" Class sizes count people." if summary.unit == "people" else "")
        )
        st.dataframe(
            risky,
            hide_index=True,
            column_config={"risk 1/f": st.column_config.NumberColumn(format="%.3f")},
        )


def render_release_measures(release: JudgedRelease) -> None:
    """Every risk measure of the release side by side, the judged one marked, and why."""
    rows = [
        ("Compatible classes of the release", release.classes),
        ("Exact linkage to the source (an intruder who holds it)", release.source),
        ("Open-data risk at the fraction released", release.open_data),
        ("Record linkage within the perturbation's reach", release.perturbed),
    ]
    keys = ("classes", "source_linkage", "open_data", "record_linkage")
    table = pd.DataFrame(
        [
            {
                "Measure": name,
                "Counted in": "records" if key == "record_linkage" else figures.unit,
                "Maximum risk": round(float(figures.max_risk), 4),
                "Average risk": round(float(figures.average_risk), 4),
                "Judged": "yes" if key == release.basis else "",
            }
            for (name, figures), key in zip(rows, keys, strict=True)
            if figures is not None
        ]
    )
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(literal(release.reason))
    if release.source is not None:
        st.caption(
            literal(
                f"Linkage to the source: {release.source.certain:,} of "
                f"{release.source.n_people:,} released {release.source.unit} match exactly one "
                "person of the source file, so anyone who holds it finds them with certainty."
            )
        )


def render_verdict_details(recipe, judged) -> None:
    """What the verdict judges, how the intruder matches each quasi-identifier, and the
    attribute disclosure of the outcome and the sensitive columns."""
    with st.expander("Verdict details"):
        basis = judged.basis if isinstance(judged, PerturbedRisk) else risk_basis(recipe)
        st.markdown(f"**Judged by:** {literal(basis.name)}.")
        st.caption(metric_help("judged_measure"))
        st.text(basis.reason)
        matches = judged.matches if isinstance(judged, PerturbedRisk) else basis.matches
        if matches:
            st.markdown("**How the intruder matches each quasi-identifier**")
            for column, how in matches:
                st.text(f"{column}: {how}")
        lines = []
        for column in recipe.roles.attribute_targets:
            try:
                found = compute.attribute_disclosure(column)
            except Exception as error:
                lines.append(
                    f"{column}: attribute disclosure unavailable ({state.user_message(error)})"
                )
                continue
            lines.append(
                f"{column}: distinct l = {found.l_distinct}, entropy l = {found.l_entropy:.2f}, "
                f"t = {found.t:.3f}; {found.n_homogeneous:,} of {found.n_records:,} records "
                "are in classes where everyone shares the value."
            )
        if lines:
            st.markdown("**Attribute disclosure** (not part of the threshold; see below)")
            for line in lines:
                st.text(line)


def render_record_linkage(judged: PerturbedRisk) -> None:
    """The record-linkage figures that judge a release with perturbed quasi-identifiers."""
    st.subheader("Record linkage: the risk that fits this mask")
    caption = judged_caption(judged)
    if caption:
        st.caption(literal(caption))
    interval = judged.interval
    rows = [
        ("Maximum risk (within reach)", f"{judged.max_risk:.4f}", metric_help("linkage_max_risk")),
        (
            f"Average risk (here: {judged.average_source})",
            f"{judged.average_risk:.4f}",
            metric_help("linkage_average_risk"),
        ),
        (
            "Strict average risk",
            f"{judged.strict_average_risk:.4f}",
            "The average risk if the maximum risk is at most 1/3, otherwise the maximum risk. "
            "Lower is safer; judged for non-public releases.",
        ),
        ("Anonymity score", f"{judged.anonymity_score:.4f}", metric_help("linkage_anonymity")),
        (
            "Within-reach average (Cologne, tolerance rule)",
            f"{judged.within_reach_average:.4f}",
            metric_help("within_reach"),
        ),
        (
            "Nearest-record linkage rate",
            f"{judged.linkage_rate:.4f}",
            metric_help("linkage_rate"),
        ),
        (
            "Interval disclosure (sdcMicro dRisk, k = "
            + ("0.05" if interval is None else f"{interval.k:g}")
            + ")",
            "unavailable (no perturbed numeric column)"
            if interval is None
            else f"{interval.share:.4f} ({interval.disclosed:,} records)",
            metric_help("interval_disclosure"),
        ),
        ("Records linked with certainty", f"{judged.certain:,}", metric_help("certain_links")),
        (
            "Fewest records within reach",
            f"{judged.fewest_candidates:,}",
            metric_help("fewest_candidates"),
        ),
        (
            "Records out of reach",
            f"{judged.out_of_reach:,}",
            "Records whose own record lies beyond the reach used (possible with Gaussian noise "
            "or smoothing): the within-reach match misses them.",
        ),
    ]
    st.table(
        literal_frame(
            pd.DataFrame(rows, columns=["Measure", "Value", "Definition and direction"]).set_index(
                "Measure"
            )
        )
    )
    st.markdown("**Matches within reach per released record** (Cologne Table 1 layout)")
    match = judged.within_reach.match_table().rename(
        columns={
            "source matches": "Source records within reach",
            "risk 1/i": "Risk 1/i",
            "correct": "Released records (own record among them)",
            "any": "Released records (any)",
        }
    )
    match["Risk 1/i"] = match["Risk 1/i"].map(lambda v: "—" if v != v else f"{v:.3f}")
    st.table(literal_frame(match.set_index("Source records within reach")))
    charts.show_chart(
        charts.match_probability_chart(judged.record_risk),
        "Released records by their probability of correct identification",
    )
    st.caption(
        "Missing quasi-identifier values are matched as a category of their own here (a missing "
        "value matches only a missing value). The released file holds one random draw."
    )


def render_attribute_disclosure(recipe, judged) -> None:
    """l-diversity and t-closeness of the outcome and the sensitive columns."""
    st.subheader("Attribute disclosure: what a class reveals")
    st.caption(
        "Knowing which class a person is in can reveal their outcome without finding their "
        "record: if everyone in the class shares it, the intruder learns it. Higher l is "
        "safer (more different values in every class); lower t is safer (each class looks "
        "like the whole file); fewer records in classes that share one value is safer."
    )
    targets = recipe.roles.attribute_targets
    if not targets:
        st.info(
            "No outcome and no sensitive column is chosen: choose them on the Data page to see "
            "what a class reveals."
        )
        return
    if recipe.roles.outcome in recipe.roles.quasi_identifiers:
        st.caption(
            literal(
                f"The outcome '{recipe.roles.outcome}' is a quasi-identifier: its value "
                "defines the class, so it is not measured here."
            )
        )
    for column in targets:
        st.markdown(f"**{literal(column)}**")
        try:
            with st.spinner("Counting values within each class...", show_time=True):
                found = compute.attribute_disclosure(column)
        except Exception as error:
            st.error(literal(state.user_message(error)))
            continue
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Distinct l-diversity", f"{found.l_distinct:,}", help=metric_help("l_distinct"))
        c2.metric("Entropy l-diversity", f"{found.l_entropy:.2f}", help=metric_help("l_entropy"))
        c3.metric(
            "t-closeness",
            "unavailable" if found.t != found.t else f"{found.t:.3f}",
            help=metric_help("t_closeness"),
        )
        c4.metric(
            "Records in classes sharing one value",
            f"{found.n_homogeneous:,}",
            help=metric_help("homogeneous"),
        )
        st.caption(
            literal(
                f"Classes: {CLASS_KINDS[found.classes]}. Distance: {DISTANCES[found.distance]}. "
                f"{found.n_homogeneous:,} of {found.n_records:,} records "
                f"({100 * found.share_homogeneous:.1f}%) are in classes where everyone shares the "
                f"value of {column}. Missing values of {column} count as a value of their own."
            )
        )
        if found.n_homogeneous:
            with st.expander(literal(f"Records flagged: their class shares one value of {column}")):
                workspace = state.current_workspace()
                masked = workspace.masked_frame(recipe)
                shown = list(dict.fromkeys([*recipe.roles.quasi_identifiers, column]))
                flagged = masked.loc[found.homogeneous, shown].copy()
                flagged.insert(0, "row", flagged.index)
                st.dataframe(flagged.head(500), hide_index=True)
                st.caption("Masked values as released (only in your session); at most 500 rows.")


def render_source_upload(recipe) -> None:
    """An optional source database (kept in this session only); records are linked to it
    through the record id."""
    source = state.current_source()
    with st.expander(
        f"Source database: {literal(source.name)} ({len(source.frame):,} records)"
        if source
        else "Source database: the original data (upload another to compare)"
    ):
        uploaded = st.file_uploader(
            "What an intruder could match against",
            type=list(UPLOAD_TYPES),
            key="risk.source_upload",
            help="It must have the quasi-identifier columns and the record-id column, so that "
            "a match can be checked as right or wrong.",
        )
        if uploaded is not None and st.button("Use this file as the source", key="risk.use_src"):
            outcome = read_upload(uploaded.getvalue(), uploaded.name)
            show_messages(outcome.messages)
            if outcome.frame is not None:
                problems = source_problems(outcome.frame, recipe)
                if problems:
                    st.error(literal(problems))
                else:
                    state.set_source(outcome.frame, outcome.name)
                    st.rerun()
        if source and st.button("Back to the original data", key="risk.drop_src"):
            state.set_source(None)
            st.rerun()


def source_problems(frame, recipe) -> str | None:
    """Why a file cannot serve as the linkage source, or None."""
    needed = [*recipe.roles.quasi_identifiers]
    if recipe.roles.record_id is None:
        return "Choose a record-id column on the Data page: it tells right matches from wrong."
    needed.append(recipe.roles.record_id)
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        return "The source lacks column(s): " + ", ".join(missing) + "."
    return None


def render_open_data(perturbed: bool = False) -> None:
    """Risk when the released file is a sample of a larger population nobody can list."""
    st.subheader("Open data: the file is a sample of a population")
    st.caption(
        "If an intruder cannot know who is in the file, a record unique in the sample may not "
        "be unique in the population. Population class sizes are estimated from the sampling "
        "fraction (sample class size / fraction) or summed sampling weights."
    )
    design = state.sample_design()
    is_sample = st.toggle(
        "The released file is a sample of a larger population",
        value=design is not None,
        key="risk.is_sample",
        help="Off: closed data, the intruder knows who is in the file (the figures above). "
        "On: the open-data figures below also go into the report.",
    )
    if not is_sample:
        state.set_sample_design(None)
        return
    recipe = state.current_recipe()
    if perturbed:
        st.info(
            "The open-data estimates count population equivalence classes, which perturbed "
            "values do not form: they are not computed for this recipe. Sampling makes record "
            "linkage harder still, so the record-linkage figures above are an upper bound."
        )
        return
    fraction = population = None
    if recipe.roles.weight:
        st.caption(
            f"Population class sizes: the sum of the weight column "
            f"'{literal(recipe.roles.weight)}' in "
            "each class (change the weight on the Data page)."
        )
    else:
        given = st.radio(
            "Size of the population given as",
            ["sampling fraction", "population size"],
            index=int(design is not None and design.population_size is not None),
            horizontal=True,
            key="risk.population_given",
        )
        n = state.current_workspace().n_records
        if given == "sampling fraction":
            fraction = st.number_input(
                "Sampling fraction",
                min_value=0.0001,
                max_value=1.0,
                value=(design.sampling_fraction if design else None) or 0.1,
                step=0.01,
                format="%.4f",
                key="risk.sampling_fraction",
                help=metric_help("sampling_fraction"),
            )
        else:
            population = st.number_input(
                "Population size",
                min_value=n,
                value=max(n, (design.population_size if design else None) or 10 * n),
                step=1000,
                key="risk.population_size",
                help="Number of people in the population the file was drawn from.",
            )
    st.selectbox(
        "Individual (Benedetti-Franconi) risk",
        list(BF_METHODS),
        format_func=BF_METHODS.__getitem__,
        **state.bound_to_setting("bf_method"),
        help=metric_help("bf_method"),
    )
    try:
        state.set_sample_design(
            SampleDesign(
                float(fraction) if fraction else None, int(population) if population else None
            )
        )
        with st.spinner("Estimating population class sizes...", show_time=True):
            open_risk = compute.sample_risk(
                float(fraction) if fraction else None, int(population) if population else None
            )
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    st.caption(
        f"Missing quasi-identifier values: {literal(MISSING_MODES[open_risk.missing])} (the choice "
        "above), here as for the closed-data figures"
        + (
            ": a record's sample class is every record compatible with it, its population "
            "class the sum of their weights (or sample class / fraction)."
            if open_risk.missing == "wildcard"
            else "."
        )
    )
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Prosecutor risk (max / average)",
        f"{open_risk.prosecutor_max:.3f} / {open_risk.prosecutor_average:.3f}",
        help=metric_help("prosecutor"),
    )
    c2.metric(
        "Journalist risk (max / average)",
        f"{open_risk.journalist_max:.3f} / {open_risk.journalist_average:.3f}",
        help=metric_help("journalist"),
    )
    c3.metric("Marketer risk", f"{open_risk.marketer:.3f}", help=metric_help("marketer"))
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Individual risk (mean / max)",
        f"{open_risk.bf_mean:.3f} / {open_risk.bf_max:.3f}",
        help=metric_help("benedetti_franconi"),
    )
    c2.metric(
        "Expected re-identifications",
        f"{open_risk.expected_reidentifications:,.1f}",
        help=metric_help("expected_reidentifications"),
    )
    uniques = open_risk.uniques
    c3.metric(
        "Population uniques (estimated)",
        f"{uniques.estimate:,.0f}",
        help=metric_help("population_uniques"),
    )
    st.caption(
        f"Sample uniques: {uniques.sample_uniques:,}. Estimates of population uniques: "
        + ", ".join(
            literal(f"{name.capitalize() if name != 'snb' else 'SNB'} ")
            + ("unavailable" if value != value else f"{value:,.0f}")
            for name, value in uniques.as_dict().items()
        )
        + literal(f". Chosen: {uniques.selected} ({uniques.reason}).")
    )
    with st.spinner(
        "Estimating population uniqueness across sampling fractions...", show_time=True
    ):
        curve = compute.uniqueness_curve()
    charts.show_chart(
        charts.population_uniqueness_chart(curve, open_risk.sampling_fraction),
        "Population uniques against the sampling fraction",
    )
    st.caption(
        "Estimated share of the population that is unique on the masked quasi-identifiers, "
        "if the file were a sample of each size; the orange line marks your fraction."
    )
    with st.expander("Definitions that differ from sdcMicro and ARX"):
        for note in REFERENCE_TOOL_NOTES:
            st.text(note)


render()
