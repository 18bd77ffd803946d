"""Smoothing: kernel smoothing over locations and its risk-utility profile (Zhou et al. 2010)."""

import pandas as pd
import streamlit as st

from dashboard import charts, compute, jobs, state, tables, widgets
from dashboard.help import metric_help
from deid_core.datasets import DEMO_DATASETS
from deid_core.io.columns import numeric_columns
from deid_core.masking import KernelSmooth
from deid_core.tradeoff.profile import smoothed_columns, smoothing_recipe
from deid_core.utility.area_level import area_level_data

st.title("Smoothing")
st.caption(
    "Kernel smoothing (Zhou, Dominici & Louis 2010) releases, for every record, a weighted "
    "average of its neighbours' values, with the same weights for the exposure, the outcome "
    "and the covariates. The kernel is the *form* of the masking, the bandwidth λ its "
    "*degree*: λ = 0 releases the original values, a larger λ averages over more neighbours "
    "(lower risk, usually more bias)."
)

KERNEL_NAMES = {
    "exponential": "Exponential in distance (Zhou's Euclidean kernel)",
    "prior": "Prior knowledge: distance and an exposure pattern (ring)",
    "gaussian": "Gaussian, coordinates in SD units (optional tilt ρ)",
    "epanechnikov": "Epanechnikov (compact: only neighbours within λ)",
}
KERNEL_HELP = {
    "exponential": "w = exp(−d / λ), d the distance in the coordinates' own units.",
    "prior": "w = exp(−(|p_i − p_k| + s·d) / λ): records with a similar exposure pattern p "
    "(e.g. distance from a source) get high weights, which cuts bias; s = 0 is Zhou's ring.",
    "gaussian": "w = exp(−q / (2λ²)), q the squared distance with each coordinate divided by "
    "its SD (tilted by the correlation ρ for two coordinates); λ in SD units.",
    "epanechnikov": "w = max(0, 1 − (d/λ)²): only neighbours closer than λ count, so large "
    "data sets (100,000 records) smooth in seconds.",
}


def current_step(recipe) -> KernelSmooth | None:
    return next((s for s in recipe.steps if isinstance(s, KernelSmooth)), None)


def demo_defaults() -> tuple[tuple[str, ...], str | None]:
    """The data set's coordinate columns and, for a demo, its exposure-pattern column."""
    info = state.current_dataset()
    demo = DEMO_DATASETS.get(info.demo_key or "")
    return info.locations, demo.pattern if demo is not None else None


def bandwidth_limit(frame: pd.DataFrame, kernel: str, locations, pattern) -> float:
    """Largest bandwidth the slider offers: in SD units for the Gaussian kernel, else the
    spread of the coordinates (or of the pattern for the ring kernel)."""
    if kernel == "gaussian":
        return 2.0
    if kernel == "prior" and pattern:
        spread = float(frame[pattern].max() - frame[pattern].min())
    else:
        spread = max(float(frame[c].max() - frame[c].min()) for c in locations)
    return float(f"{max(spread, 1e-9):.2g}")


def render_controls(workspace, recipe) -> None:
    """Location columns, variables, kernel and bandwidth: they set the recipe's smoothing."""
    frame = workspace.original
    numeric = numeric_columns(frame)
    step = current_step(recipe)
    demo_locations, demo_pattern = demo_defaults()
    prefix = f"smooth.{id(workspace)}"
    roles = recipe.roles
    left, right = st.columns(2)
    default_locations = list(step.locations if step else demo_locations)
    locations = left.multiselect(
        "Location columns (coordinates)",
        numeric,
        default=[c for c in default_locations if c in numeric],
        max_selections=3,
        key=f"{prefix}.locations",
        help="One to three numeric columns giving each record's position (e.g. x and y).",
    )
    model_vars = [roles.exposure, roles.outcome, *roles.covariates]
    candidates = [c for c in numeric if c not in locations]
    smoothed = smoothed_columns(recipe)
    default_vars = smoothed or [c for c in model_vars if c in candidates]
    variables = right.multiselect(
        "Variables to smooth (same weights for all)",
        candidates,
        default=[c for c in default_vars if c in candidates],
        key=f"{prefix}.variables",
        help="Zhou et al. smooth the exposure, the outcome and the covariates together.",
    )
    kernels = list(KERNEL_NAMES)
    kernel = left.selectbox(
        "Kernel (form of masking)",
        kernels,
        index=kernels.index(step.kernel) if step else 0,
        format_func=KERNEL_NAMES.__getitem__,
        key=f"{prefix}.kernel",
        help=" ".join(f"{KERNEL_NAMES[k]}: {KERNEL_HELP[k]}" for k in kernels),
    )
    left.caption(KERNEL_HELP[kernel])
    params: dict = {"kernel": kernel, "locations": tuple(locations)}
    if kernel == "prior":
        options = [c for c in numeric if c not in locations]
        default_pattern = step.pattern if step and step.pattern else demo_pattern
        params["pattern"] = right.selectbox(
            "Exposure-pattern column",
            options,
            index=options.index(default_pattern) if default_pattern in options else 0,
            key=f"{prefix}.pattern",
            help="A known pattern of the exposure, e.g. the distance from a point source.",
        )
        params["spatial_weight"] = right.number_input(
            "Weight of the distance (s)",
            min_value=0.0,
            value=float(step.spatial_weight) if step and step.kernel == "prior" else 1.0,
            key=f"{prefix}.spatial_weight",
            help="1 (default): weights fall with the distance and with the pattern difference "
            "alike; 0: Zhou's pure ring kernel (only the pattern difference counts).",
        )
    if kernel == "gaussian" and len(locations) == 2:
        params["rho"] = right.slider(
            "Tilt ρ (correlation of the two coordinates)",
            -0.9,
            0.9,
            value=float(step.rho) if step and step.kernel == "gaussian" else 0.0,
            step=0.1,
            key=f"{prefix}.rho",
        )
    groupings = [c for c in frame.columns if c not in locations and c not in variables]
    within = left.selectbox(
        "Smooth within groups of (optional)",
        ["(none)", *groupings],
        index=1 + groupings.index(step.within) if step and step.within in groupings else 0,
        key=f"{prefix}.within",
        help="Only records of the same group are neighbours (Zhou's block kernel): e.g. "
        "smooth the rows of two population groups separately so the group stays exact.",
    )
    params["within"] = None if within == "(none)" else within
    if not locations and kernel != "prior":
        st.info("Choose the location columns to smooth over.")
        return
    if not variables:
        if smoothed:
            state.set_recipe(
                smoothing_recipe(recipe, []), changed_column=smoothed[0], external=True
            )
            st.rerun()
        st.info("Choose the variables to smooth.")
        return
    limit = bandwidth_limit(frame, kernel, locations, params.get("pattern"))
    start = min(float(step.bandwidth), limit) if step and step.kernel == kernel else limit / 20
    bandwidth = st.slider(
        "Bandwidth λ (degree of masking)",
        0.0,
        limit,
        value=start,
        step=limit / 200,
        format="%.4g",
        key=f"{prefix}.bandwidth.{kernel}",
        help="0 releases the original values; larger values average over more neighbours.",
    )
    params["bandwidth"] = bandwidth
    try:
        candidate = smoothing_recipe(recipe, variables, **params)
        for column in variables:
            workspace.masked_column(candidate, column)  # check it on the data first
    except Exception as error:
        st.error(state.user_message(error), icon=":material/error:")
        return
    if candidate != recipe:
        state.set_recipe(candidate, changed_column=variables[0], external=False)
    used = [*locations, *([params["pattern"]] if params.get("pattern") else [])]
    withhold = [c for c in used if c not in recipe.roles.direct_identifiers]
    if withhold:
        st.warning(
            f"{', '.join(withhold)} will be released unchanged: exact locations identify "
            "people, and an exposure pattern can give the true exposure away. Withhold them by "
            "marking them as direct identifiers on the Data page (smoothing still uses them).",
            icon=":material/warning:",
        )


def render_live(workspace, recipe) -> None:
    """Risk (expected share of correct matches) and utility of the current smoothing."""
    roles = recipe.roles
    frame = workspace.original
    numeric = numeric_columns(frame)
    regressors = [c for c in (roles.exposure, *roles.covariates) if c in numeric]
    qis = [c for c in roles.quasi_identifiers if c in numeric]
    known = st.multiselect(
        "The intruder knows the true values of",
        numeric,
        default=qis or regressors,
        key="smooth.known",
        help="Zhou et al.: the intruder holds every person's true values of some variables "
        "(the regressors, or the quasi-identifiers: the default) and links each person to the "
        "released record closest to them.",
    )
    cols = st.columns(4)
    if known:
        try:
            share = compute.match_share(recipe, tuple(known))
        except Exception as error:
            cols[0].metric("Expected correct matches", "unavailable", help=str(error))
        else:
            cols[0].metric(
                "Expected correct matches",
                f"{100 * share.share:.1f}%",
                help=metric_help("match_share"),
            )
    result = compute.utility(recipe, where=st.empty())
    ap = compute.ap_status(result)
    if result is not None and result.available and result.masked_estimate is not None:
        cols[1].metric(
            "Masked estimate b",
            f"{result.masked_estimate:.4g}",
            delta=f"{result.masked_estimate - result.estimate:+.3g} vs original",
            delta_color="off",
            help=f"Original b = {result.estimate:.4g} (SE {result.se:.3g}).",
        )
        cols[2].metric("MSE", f"{result.masked_mse:.3g}", help=metric_help("mse"))
    cols[3].metric("Analysis potential", ap.text, help=metric_help("analysis_potential"))
    if ap.reason:
        st.caption(f"Utility unavailable: {ap.reason}")
    st.caption(
        "The sidebar's class-based figures compare exact values: smoothed continuous values "
        "are all distinct, so every record there is unique, and an intruder who re-smooths "
        "the original data the same way (the 'same masking' rule) links every record. The "
        "expected share of correct matches is the risk of Zhou et al.: the intruder knows true "
        "values, not the smoothing."
    )


def render_profile(workspace, recipe) -> None:
    """Estimate, MSE and risk against the bandwidth for the chosen kernels."""
    st.subheader("Risk-utility profile over the bandwidth")
    step = current_step(recipe)
    if step is None:
        st.info("Set up smoothing above to draw its profile.")
        return
    st.caption(
        "For each kernel and bandwidth: the masked estimate with its naive 95% interval "
        "(and a bootstrap interval if asked), its MSE, and the risk as the expected share of "
        "correct matches. Zhou et al.: a kernel that knows the exposure pattern (ring) gives "
        "lower bias and MSE than the Euclidean one at the same bandwidth, at a higher risk."
    )
    kernels = [k for k in KERNEL_NAMES if k != "prior" or step.pattern or demo_defaults()[1]]
    left, mid, right = st.columns(3)
    chosen = left.multiselect(
        "Kernels to compare",
        kernels,
        default=[k for k in ("exponential", "prior") if k in kernels] or [step.kernel],
        format_func=KERNEL_NAMES.__getitem__,
        key="smooth.profile.kernels",
    )
    limit = bandwidth_limit(
        workspace.original, step.kernel, step.locations, step.pattern or demo_defaults()[1]
    )
    low, high = mid.slider(
        "Bandwidth range",
        0.0,
        limit,
        value=(0.0, limit / 10),
        step=limit / 200,
        format="%.4g",
        key=f"smooth.profile.range.{limit}",
    )
    points = mid.slider("Bandwidths", 3, 25, value=10, key="smooth.profile.points")
    n_boot = right.select_slider(
        "Bootstrap resamples per point",
        (0, 20, 50, 100, 200),
        value=0,
        key="smooth.profile.bootstrap",
        help="0: naive intervals only (fast). The bootstrap refits the model many times per "
        "point, so it takes longer.",
    )
    known = tuple(st.session_state.get("smooth.known") or ())
    if not chosen or not known:
        st.info("Choose at least one kernel, and what the intruder knows, above.")
        return
    pattern = step.pattern or demo_defaults()[1]
    spatial_weight = step.spatial_weight if step.kernel == "prior" else 1.0
    settings = (tuple(chosen), low, high, points, n_boot, known, pattern, spatial_weight)
    if st.button("Draw the profile", type="primary"):
        st.session_state["smooth.profile.asked"] = settings
    if st.session_state.get("smooth.profile.asked") != settings:
        st.caption("Press the button to compute the profile for these settings.")
        return
    args = (recipe, tuple(chosen), low, high, points, n_boot, known, pattern, spatial_weight)
    jobs.live_fragment(lambda: render_profile_charts(args, step, low, high))


def render_profile_charts(args: tuple, step, low: float, high: float) -> None:
    """The profile's charts, computed in the background (the last ones stay while a newer
    profile is computed)."""
    try:
        live = compute.smoothing_profile(*args, where=st.empty())
    except Exception as error:
        st.error(state.user_message(error))
        return
    profile = live.shown("The charts below are the last profile drawn, until the new one is done.")
    if profile is None:
        return
    table = profile.to_frame()
    current = step.bandwidth if low <= step.bandwidth <= high else None
    top = st.columns(2)
    charts.show_chart(
        charts.profile_estimate_chart(table, profile.original_estimate, current),
        "Estimate (95% intervals; red: unmasked)",
        where=top[0],
    )
    charts.show_chart(
        charts.profile_metric_chart(table, "mse", "MSE", current), "MSE", where=top[1]
    )
    bottom = st.columns(2)
    charts.show_chart(
        charts.profile_metric_chart(table, "match_share", "Share of correct matches", current),
        "Share of correct matches",
        where=bottom[0],
    )
    charts.show_chart(charts.profile_risk_mse_chart(table), "Risk against MSE", where=bottom[1])
    failed = table["error"].dropna()
    if len(failed):
        st.warning(f"{len(failed)} point(s) incomplete: {failed.iloc[0]}")
    shown, labels = tables.in_words(table)
    st.dataframe(shown, hide_index=True, column_config=labels)
    widgets.csv_download("Download the profile (CSV)", table, "smoothing_profile.csv")


def render_area_level(workspace, recipe) -> None:
    """Two-step mode: aggregate the records to areas, then smooth the areas."""
    roles = recipe.roles
    with st.expander("Area level: aggregate the records to areas first (two-step smoothing)"):
        st.caption(
            "Zhou et al.'s second mode: replace the records by area totals and means (events "
            "and records per area, mean exposure and covariates, the area's centroid), then "
            "smooth the areas and fit the area-level model (binomial counts for a 0/1 "
            "outcome, Poisson with the records as offset for counts). The table becomes the "
            "data set in use; reload your data or the demo to go back."
        )
        if not roles.has_model:
            st.info("Choose an exposure and an outcome on the Data page first.")
            return
        frame = workspace.original
        numeric = numeric_columns(frame)
        how = st.radio(
            "Areas",
            ["Equal square cells", "An area column"],
            horizontal=True,
            key="smooth.area.how",
        )
        grid = area = None
        if how == "Equal square cells":
            locations, _ = demo_defaults()
            left, mid, right = st.columns(3)
            x = left.selectbox(
                "x",
                numeric,
                index=numeric.index(locations[0])
                if len(locations) > 1 and locations[0] in numeric
                else 0,
                key="smooth.area.x",
            )
            y = mid.selectbox(
                "y",
                numeric,
                index=numeric.index(locations[1])
                if len(locations) > 1 and locations[1] in numeric
                else min(1, len(numeric) - 1),
                key="smooth.area.y",
            )
            cells = right.slider("Cells per side", 2, 50, 10, key="smooth.area.cells")
            grid = (x, y, cells)
        else:
            area = st.selectbox("Area column", list(frame.columns), key="smooth.area.column")
        if st.button("Aggregate and use the area table"):
            try:
                area_level = area_level_data(
                    frame,
                    roles,
                    workspace.model_family,
                    area=area,
                    grid=grid,
                    offset=workspace.model_offset,
                    trials=workspace.model_trials,
                )
            except Exception as error:
                st.error(state.user_message(error))
                return
            info = state.current_dataset()
            state.load_area_level(area_level, f"{info.name} by area", info.synthetic)
            state.flash(f"Aggregated to areas: {area_level.areas.n_areas:,} areas.")
            st.rerun()


def render() -> None:
    flash = state.pop_flash()
    if flash:
        st.success(flash, icon=":material/check:")
    workspace = state.current_workspace()
    recipe = state.current_recipe()
    if len(numeric_columns(workspace.original)) < 2:
        st.info("Smoothing needs numeric location columns and numeric variables to smooth.")
        return
    render_area_level(workspace, recipe)
    with st.container(border=True):
        render_controls(workspace, recipe)
    recipe = state.current_recipe()
    if current_step(recipe) is None:
        return
    render_live(workspace, recipe)
    render_profile(workspace, recipe)


render()
