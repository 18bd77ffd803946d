"""Utility: the collaborator's model on the original and the masked data (Cologne Table 2)."""

import pandas as pd
import streamlit as st

from dashboard import charts, compute, identifiers, jobs, state, tables, widgets
from dashboard.help import metric_help
from dashboard.model_choice import (
    AS_CODED,
    EVENT_HELP,
    REFERENCE_HELP,
    event_options,
    reference_options,
)
from dashboard.text import literal, literal_frame
from deid_core.errors import DeidError
from deid_core.io.roles import follow_up_time_candidates
from deid_core.utility import FAMILY_HELP, SUPPORTED_FAMILIES
from deid_core.utility.classifier import PROTOCOL, WHAT_IT_ADDS
from deid_core.utility.distribution import ci_overlap, distribution_changes
from deid_core.utility.schemes import cologne_schemes, scheme_comparison
from deid_core.utility.spec import BINARY_FAMILIES, suggested_factors

st.title("Utility")
st.caption(
    "Does the collaborator's analysis give the same answer on the masked data? The exposure "
    "coefficient is compared by its mean squared error (MSE = SE² + bias²); the "
    "analysis-potential score is MSE(original) / MSE(masked), 1 meaning no loss."
)


def render() -> None:
    workspace = state.current_workspace()
    recipe = state.current_recipe()
    if workspace.people(recipe) is not None:
        st.caption(
            literal(identifiers.rows_only_note("The model"))
            + " Its rows are not independent: the standard errors are too small, before and "
            "after masking alike."
        )
    spec = workspace.model_spec(recipe)
    if spec is None:
        st.warning(
            "Utility is unavailable: no model. Choose an exposure and a binary outcome on the "
            "Data page.",
            icon=":material/info:",
        )
        st.metric("Analysis potential", "unavailable", help=metric_help("analysis_potential"))
        render_information_loss(recipe)
        return
    render_model_choice(workspace, recipe)
    spec = workspace.model_spec(recipe)
    st.code(spec.formula(), language=None)

    random = recipe.is_random
    widgets.replicates_slider("Replicates of the random masking", disabled=not random)
    if not random:
        st.caption("The current recipe has no random step, so one fit of the masked data is exact.")

    jobs.live_fragment(lambda: render_results(workspace, recipe, spec))


def render_results(workspace, recipe, spec) -> None:
    """The model before and after masking: on a large file fitted in the background, with the
    replicates' running mean as they arrive; then the more detailed views."""
    status_area = st.container()
    try:
        live = compute.live_utility(recipe, where=status_area)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    if live.updating:
        jobs.show_status(live.job, status_area, stop_label="Stop here and keep these replicates")
        replicates = getattr(live.value, "replicates", None)
        if replicates is not None:
            st.caption(literal(compute.running_mean_text(replicates, live.job.total)))
        st.caption("The tables below follow when the model has been fitted.")
        return
    result = live.value
    if live.stopped and result.replicates is not None:
        st.caption(
            f"Stopped by you after {result.replicates.n_replicates:,} replicates: "
            + literal(compute.running_mean_text(result.replicates, live.job.total))
        )
    ap = compute.ap_status(result)

    left, middle, right = st.columns([1, 2, 2])
    left.metric("Analysis potential", literal(ap.text), help=metric_help("analysis_potential"))
    render_effects(result, middle, right)
    if result is not None and result.original is not None:
        fit = result.original
        st.caption(
            f"Original data: {fit.n:,} records used, "
            + (f"{fit.n_events:,} events, " if spec.family != "linear" else "")
            + f"{fit.n_dropped:,} dropped for missing values."
        )
    if ap.reason:
        st.warning(
            f"Analysis potential unavailable: {literal(ap.reason)}", icon=":material/warning:"
        )
    if result is None:
        return
    if result.ap_note:
        st.info(literal(result.ap_note), icon=":material/info:")
    if result.records_note:
        st.info(literal(result.records_note), icon=":material/info:")

    st.subheader("Estimates before and after masking (Cologne Table 2 layout)")
    st.table(literal_frame(tables.utility_table(result)))
    with st.expander("What the columns mean"):
        for key, name in (
            ("estimate", "Estimate b"),
            ("se", "SE"),
            ("deviance", "Deviance"),
            ("lr", "LR statistic (p)"),
            ("relative_bias", "Relative bias %"),
            ("mse", "MSE"),
            ("analysis_potential", "Analysis potential"),
        ):
            st.markdown(f"- **{literal(name)}**: {metric_help(key)}")
    reps = result.replicates
    if reps is not None:
        st.caption(
            f"Random masking: mean and (min, max) over {reps.n_replicates:,} replicates; the "
            "analysis potential uses the mean MSE. The released file is one draw."
        )
        if reps.n_failed:
            st.warning(
                f"{reps.n_failed:,} replicate(s) could not be fitted and are left out; the "
                "summary may flatter the masking."
            )

    render_information_loss(recipe)
    render_classifier(recipe)
    render_more_views(workspace, recipe, result)
    render_comparison(recipe)


def render_information_loss(recipe) -> None:
    """sdcMicro's IL1s and eigenvalue information loss, whatever the model."""
    st.subheader("Information loss (as sdcMicro defines it)")
    try:
        loss = compute.information_loss(recipe)
    except Exception as error:
        st.error(literal(state.user_message(error)))
        return
    if loss is None:
        st.caption("No numeric column among the roles and the masked columns.")
        return
    left, right = st.columns(2)
    left.metric(
        "IL1s (sum over cells)",
        "unavailable" if loss.il1s is None else f"{loss.il1s:.4g}",
        help=metric_help("il1s"),
    )
    right.metric(
        "Eigenvalue loss",
        "unavailable" if loss.eigen is None else f"{loss.eigen:.4g}",
        help=metric_help("eigen"),
    )
    st.caption(
        literal(
            f"Columns: {', '.join(loss.columns)}; {loss.n_records:,} released records, "
            f"{loss.cells:,} cells. IL1s is a sum over cells, as in sdcMicro's dUtility (not a "
            "mean); a suppressed value is left out of it, as sdcMicro does. Each released record "
            "is compared with its own original."
        )
    )
    st.dataframe(
        pd.DataFrame(
            {
                "column": list(loss.il1s_by_column),
                "IL1s (sum over its cells)": list(loss.il1s_by_column.values()),
            }
        ),
        hide_index=True,
    )


def render_effects(result, *places) -> None:
    """The effect measure (odds, rate or hazard ratio, ...) with its 95% CI, original and
    masked, as two metrics in ``places``."""
    if result is None:
        return
    effect, masked = result.effect(), result.masked_effect()
    if effect is None:
        return
    what = ", mean over replicates" if result.replicates is not None else ""
    widgets.effect_metric(places[0], f"{effect.name}, original", effect)
    widgets.effect_metric(places[1], f"{effect.name}, masked{what}", masked)


def render_classifier(recipe) -> None:
    """The classifier lens beside the analysis potential, on request (trains classifiers)."""
    st.subheader("Classifier accuracy: a second lens")
    st.caption(WHAT_IT_ADDS)
    on = st.toggle(
        "Train the classifiers",
        key="utility.classifier_on",
        help=f"{PROTOCOL} Takes seconds (minutes for a random mask on large data).",
    )
    if not on:
        return
    try:
        live = compute.classifier(recipe, where=st.empty())
    except Exception as error:
        st.warning(literal(f"Classifier accuracy unavailable: {state.user_message(error)}"))
        return
    if live.updating:
        jobs.show_status(live.job, st.container())
        return
    lens = live.value
    if lens is None:
        return
    st.table(literal_frame(tables.classifier_table(lens)))
    replicates = (
        f" Masked figures: mean (min, max) over {lens.n_replicates} random replicates."
        if lens.n_replicates > 1
        else ""
    )
    st.caption(
        literal(
            f"{lens.folds}-fold stratified cross-validation on {lens.n:,} records "
            f"({lens.n_events:,} events). Always predicting the more common class is right for "
            f"{lens.no_information_accuracy:.3f} of the records.{replicates} {PROTOCOL}"
        )
    )


def render_more_views(workspace, recipe, result) -> None:
    """Interval overlap, changes in means, SDs and correlations, distributions, replicates."""
    if not result.available or result.masked_estimate is None:
        return
    st.subheader("More views")
    left, right = st.columns([1, 3])
    try:
        overlap = ci_overlap(result.estimate, result.se, result.masked_estimate, result.masked_se)
    except DeidError as error:
        left.metric("CI overlap", "unavailable", help=literal(error))
    else:
        left.metric(
            "CI overlap",
            f"{overlap:.3f}",
            help="Karr et al. (2006): average share of each 95% confidence interval (original "
            "and masked) covered by their overlap; 1 = identical, 0 = just touching, negative "
            "= disjoint. Higher is better.",
        )
    spec = result.spec
    columns = [spec.exposure, *spec.covariates]
    masked = workspace.masked_frame(recipe)
    right.markdown("**Means, SDs and correlations before and after masking**")
    right.dataframe(
        distribution_changes(workspace.original, masked, columns),
        hide_index=True,
    )
    distribution = charts.distribution_chart(
        workspace.original[spec.exposure], masked[spec.exposure], spec.exposure
    )
    if distribution is not None:
        charts.show_chart(distribution)
    reps = result.replicates
    if reps is not None and reps.estimates:
        charts.show_chart(
            charts.replicate_estimates_chart(reps.estimates, result.estimate),
            "Estimates over the replicates (red: the unmasked estimate)",
            pd.DataFrame({"estimate": reps.estimates}),
        )
    render_bootstrap(recipe, result)


BOOTSTRAP_SIZES = (50, 100, 200, 500, 1000)


def render_bootstrap(recipe, result) -> None:
    """Naive against bootstrap intervals of the masked estimate, on request (takes seconds)."""
    st.markdown("**Bootstrap confidence interval of the masked estimate**")
    st.caption(
        "Smoothing and interval means make masked records share information, so the model's "
        "usual (naive) interval can be too narrow or too wide. The bootstrap resamples the "
        "people, masks each resample the same way and refits: its percentile interval "
        "reflects that sharing. A width ratio (naive / bootstrap) near 1 means the naive "
        "interval can be trusted."
    )
    left, right = st.columns([1, 2])
    on = left.toggle(
        "Compute the bootstrap interval",
        key="utility.bootstrap_on",
        help="Refits the model to every resample; takes seconds on large data.",
    )
    n = right.select_slider(
        "Bootstrap resamples", BOOTSTRAP_SIZES, value=200, key="utility.bootstrap_n"
    )
    if not on:
        return
    try:
        live = compute.bootstrap(recipe, n, where=st.empty())
    except Exception as error:
        st.warning(f"Bootstrap interval unavailable: {literal(state.user_message(error))}")
        return
    if live.updating:
        jobs.show_status(live.job, st.container())
        return
    interval = live.value
    if interval is None:
        return
    pct = f"{100 * interval.level:g}%"
    a, b, c = st.columns(3)
    a.metric(
        f"Naive {literal(pct)} CI",
        f"({interval.naive_low:.3f}, {interval.naive_high:.3f})",
        help="Masked estimate ± 1.96 × its model-based SE, as if the records were independent.",
    )
    b.metric(
        f"Bootstrap {literal(pct)} CI",
        f"({interval.bootstrap_low:.3f}, {interval.bootstrap_high:.3f})",
        help="2.5th and 97.5th percentiles of the estimates over the masked resamples.",
    )
    c.metric(
        "Width ratio (naive / bootstrap)",
        f"{interval.width_ratio:.2f}",
        help="Below 1: the naive interval is too narrow (overconfident); above 1: too wide. "
        "Closer to 1 is better.",
    )
    if interval.n_failed:
        st.caption(
            f"{interval.n_failed:,} of {interval.n_resamples:,} resamples could not be fitted."
        )
    z = (interval.naive_high - interval.estimate) / interval.se if interval.se else 0.0
    rows = [
        (
            "Original, naive",
            result.estimate,
            result.estimate - z * result.se,
            result.estimate + z * result.se,
        ),
        ("Masked, naive", interval.estimate, interval.naive_low, interval.naive_high),
        ("Masked, bootstrap", interval.estimate, interval.bootstrap_low, interval.bootstrap_high),
    ]
    charts.show_chart(
        charts.interval_chart(rows, result.estimate),
        "Exposure coefficient and its 95% intervals",
        pd.DataFrame(rows, columns=["interval", "estimate", "low", "high"]),
    )


FAMILY_NAMES = {
    "logistic": "Logistic regression",
    "poisson": "Poisson rate model (with person-time)",
    "linear": "Linear regression",
    "err": "Linear excess relative risk (radiation epidemiology)",
    "binomial": "Binomial model of grouped counts (events out of trials)",
    "cox": "Cox proportional hazards (time to an event)",
}
TIES_NAMES = {
    "breslow": "Breslow (statsmodels' and Stata's default)",
    "efron": "Efron (R's default; closer when many event times are tied)",
}


def render_model_choice(workspace, recipe) -> None:
    """The collaborator's model: family (with one-line help), the offset for Poisson, the
    trials column for the binomial model of grouped counts, the follow-up time and ties for
    Cox, and which covariates are categories (factors) with their reference levels."""
    left, right = st.columns(2)
    prefix = f"utility.{state.epoch()}"
    family = left.selectbox(
        "The collaborator's model",
        list(SUPPORTED_FAMILIES),
        index=list(SUPPORTED_FAMILIES).index(workspace.model_family),
        format_func=FAMILY_NAMES.__getitem__,
        key=f"{prefix}.family",
        help=" ".join(f"{FAMILY_NAMES[f]}: {FAMILY_HELP[f]}" for f in SUPPORTED_FAMILIES),
    )
    left.caption(FAMILY_HELP[family])
    original = workspace.original
    numeric = [c for c in original.columns if pd.api.types.is_numeric_dtype(original[c])]
    offset = trials = time = None
    ties = workspace.model_ties
    if family == "poisson":
        choice = right.selectbox(
            "Person-time (offset: its log)",
            ["(none)", *numeric],
            index=1 + numeric.index(workspace.model_offset)
            if workspace.model_offset in numeric
            else 0,
            key=f"{prefix}.offset",
            help="Years at risk per record; the model then compares rates.",
        )
        offset = None if choice == "(none)" else choice
    if family in ("binomial", "cox") and not numeric:
        st.error("This model needs a numeric column (trials or follow-up time); there is none.")
        return
    if family == "binomial":
        trials = _column_choice(
            right,
            "Trials (e.g. population of each area)",
            numeric,
            workspace.model_trials,
            f"{prefix}.trials",
            "Each row's outcome counts the events among this many trials (people).",
        )
    if family == "cox":
        roles = recipe.roles
        times = follow_up_time_candidates(original, exclude=(roles.outcome, roles.exposure))
        time = _column_choice(
            right,
            "Follow-up time",
            times or numeric,
            workspace.model_time,
            f"{prefix}.time",
            "Time from the start of follow-up to the event or to censoring (any unit); "
            "columns named like a time come first, row numbers are not offered. The outcome "
            "chosen on the Data page is the event indicator: 1 = the event happened, 0 = "
            "censored (R's 1/2 coding, 2 = event, is read too), or choose below which of its "
            "values is the event.",
        )
        ties = right.radio(
            "Tied event times",
            list(TIES_NAMES),
            index=list(TIES_NAMES).index(workspace.model_ties),
            format_func=TIES_NAMES.__getitem__,
            key=f"{prefix}.ties",
            horizontal=True,
            help="How records with the same event time share the risk set in the partial "
            "likelihood; the two agree when few times are tied.",
        )
    event = render_event_choice(workspace, recipe, family, right, prefix)
    factors, references = render_factor_choice(workspace, recipe, prefix)
    chosen = (family, offset, trials, factors, references, time, ties, event)
    if chosen != workspace.model_key:
        try:
            workspace.set_model(
                family,
                offset,
                trials,
                factors=factors,
                references=references,
                time=time,
                ties=ties,
                event=event,
            )
        except DeidError as error:
            st.error(literal(error))


def render_event_choice(workspace, recipe, family: str, place, prefix: str) -> str | None:
    """For a model of a 0/1 outcome, which of the outcome's values is the event (a status
    coded 0/1/2: "event when status = 2", every other value censored or 0); None keeps the
    outcome as it is. Offered when the outcome has at most ``MAX_EVENT_LEVELS`` values."""
    outcome = recipe.roles.outcome
    if family not in BINARY_FAMILIES or outcome is None:
        return None
    options = event_options(workspace.original[outcome])
    if options is None:
        return None
    current = workspace.model_event if workspace.model_event in options[1:] else AS_CODED
    chosen = place.selectbox(
        f"Event when {literal(outcome)} is",
        options,
        index=options.index(current),
        key=f"{prefix}.event",
        format_func=literal,
        help=EVENT_HELP,
    )
    return None if chosen == AS_CODED else chosen


def _column_choice(place, label: str, columns: list, current, key: str, help_text: str):
    """A select box of ``columns`` showing ``current`` (else the first)."""
    index = columns.index(current) if current in columns else 0
    return place.selectbox(literal(label), columns, index=index, key=key, help=literal(help_text))


def render_factor_choice(workspace, recipe, prefix: str) -> tuple[tuple, tuple]:
    """Which numeric covariates are categories (factors), offering those that look like
    codes, and the reference level of every categorical covariate. Returns the factors and
    the reference levels as the workspace stores them."""
    covariates = list(recipe.roles.covariates)
    original = workspace.original
    is_number, is_bool = pd.api.types.is_numeric_dtype, pd.api.types.is_bool_dtype
    numeric = [c for c in covariates if is_number(original[c]) and not is_bool(original[c])]
    if not covariates:
        return workspace.model_factors, workspace.model_references
    suggested = suggested_factors(original, numeric)
    factors = st.multiselect(
        "Covariates fitted as categories (factors)",
        numeric,
        default=[c for c in workspace.model_factors if c in numeric],
        key=f"{prefix}.factors",
        help="A numeric covariate enters the model as one linear term: equal steps in the "
        "log odds (or rate, hazard) between successive codes. A factor gives each code its "
        "own coefficient against a reference level: use it for codes without an order or "
        "spacing, such as race coded 1/2/3. Text columns are always factors.",
    )
    unticked = [c for c in suggested if c not in factors]
    if unticked:
        names = ", ".join(f"'{c}'" for c in unticked)
        st.caption(
            literal(
                f"{names}: few whole-number codes, fitted as one linear term (equal steps "
                "between codes). Tick them above if the codes are categories."
            )
        )
    categorical = [c for c in covariates if c in factors or c not in numeric]
    references = dict(r for r in workspace.model_references if r[0] not in categorical)
    columns = st.columns(min(len(categorical), 3) or 1)
    for index, column in enumerate(categorical):
        labels = reference_options(original[column])
        if labels is None:
            continue
        key = f"{prefix}.reference.{column}"
        state.forget_stale_choice(key, labels)
        current = dict(workspace.model_references).get(column)
        chosen = columns[index % len(columns)].selectbox(
            literal(f"Reference level of {column}"),
            labels,
            index=labels.index(current) if current in labels else 0,
            key=key,
            help=REFERENCE_HELP,
        )
        if chosen != labels[0]:  # the first level is the default: nothing to store
            references[column] = chosen
    return tuple(factors), tuple(sorted(references.items()))


SCHEMES_KEY = "utility.schemes"


def render_comparison(recipe) -> None:
    """Cologne's Table 2: the current recipe beside candidate schemes for the exposure."""
    st.subheader("Compare masking schemes (Cologne Table 2)")
    st.caption(
        "Candidate maskings of the exposure (the other columns as in the current recipe), "
        "side by side. Random schemes show the mean and (min, max) over the replicates set "
        "above; their deviance and LR statistic are those of one draw."
    )
    schemes: list = st.session_state.setdefault(SCHEMES_KEY, [])
    c1, c2, c3 = st.columns(3)
    if c1.button(
        "Add Cologne's six schemes",
        help="Rounding to 3 significant digits, to 2 and "
        "1 decimals, stratification with interval means, noise +/-0.01 and +/-0.1.",
    ):
        try:
            schemes.extend(cologne_schemes(recipe, seed=state.seed_for("cologne schemes")))
        except DeidError as error:
            st.error(literal(error))
    if c2.button("Add the current recipe", help="Keep it to compare with later changes."):
        schemes.append(("; ".join(recipe.describe()), recipe))
    if c3.button("Clear the schemes", disabled=not schemes):
        schemes.clear()
    render_custom_scheme(recipe, schemes)
    entries = [("Current recipe", recipe), *schemes]
    progress_area = st.empty()
    results = []
    overall = progress_area.progress(0.0, text="Fitting the schemes")
    for done, (name, scheme) in enumerate(entries, start=1):
        try:
            results.append((name, compute.utility(scheme, where=st.empty())))
        except Exception as error:
            st.error(literal(f"{name}: {state.user_message(error)}"))
        overall.progress(
            done / len(entries), text=f"Fitting the schemes ({done} of {len(entries)})"
        )
    progress_area.empty()
    table = scheme_comparison(results)
    st.dataframe(
        tables.comparison_display(table),
        hide_index=True,
        column_config={"Scheme": st.column_config.TextColumn(width="large")},
    )
    widgets.csv_download(
        "Download the comparison (CSV)",
        table,
        "utility_comparison.csv",
        "The figures in full precision, one row per scheme.",
    )


def render_custom_scheme(recipe, schemes: list) -> None:
    """A form for a candidate masking of the exposure: method, parameter, optional name."""
    exposure = recipe.roles.exposure
    if exposure is None:
        return
    workspace = state.current_workspace()
    with st.expander(f"Add your own scheme for the exposure '{literal(exposure)}'"):
        result = widgets.step_editor(
            exposure,
            workspace.original[exposure],
            None,
            prefix="utility.candidate",
            seed=state.seed_for("noise", exposure),
        )
        if result.error:
            st.error(literal(result.error), icon=":material/error:")
        name = st.text_input(
            "Name in the table (optional)",
            key="utility.candidate.name",
            help="Left empty, the scheme is named by its masking, e.g. 'rounded to 1 decimal'.",
        )
        if st.button("Add this scheme", disabled=result.error is not None):
            steps = (result.step,) if result.step is not None else ()
            try:
                candidate = recipe.with_steps_for(exposure, steps)
                workspace.masked_column(candidate, exposure)  # check it on the data first
            except Exception as error:
                st.error(literal(state.user_message(error)), icon=":material/error:")
            else:
                label = name.strip() or (
                    result.step.describe() if result.step is not None else "exposure unmasked"
                )
                schemes.append((label, candidate))


render()
