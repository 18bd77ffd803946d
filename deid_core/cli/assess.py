"""``python -m deid_core assess``: risk and utility of a recipe, one JSON object."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from deid_core import bounds
from deid_core.cli.shared import (
    NO_QI_WARNING,
    add_common_flags,
    add_engine_flags,
    finite_number,
    json_ready,
    load_data,
    load_recipe,
    open_engine,
    prepare,
    recipe_with_flags,
    whole_number,
)
from deid_core.errors import DeidError, LimitError
from deid_core.risk import BF_METHODS, MATCH_RULES, MISSING_MODES
from deid_core.risk.classes import class_size_distribution
from deid_core.risk.context import CONTEXT_TEXT
from deid_core.share import ReleaseSettings, ShareError
from deid_core.utility.counts import (
    DEFAULT_CLASSIFIER_REPLICATES,
    DEFAULT_REPLICATES,
    MAX_CLASSIFIER_REPLICATES,
    MAX_REPLICATES,
)

if TYPE_CHECKING:
    from deid_core.engines import SqlEngine


def add_parser(subparsers: Any) -> None:
    """Add the ``assess`` command to the subparsers of the main parser."""
    assess = subparsers.add_parser("assess", help="print risk and utility of a recipe as JSON")
    add_common_flags(assess)
    assess.add_argument(
        "--rule",
        choices=sorted(MATCH_RULES),
        default="same_masking",
        help="matching rule for the identifiability score (default: same_masking)",
    )
    assess.add_argument(
        "--missing",
        choices=list(MISSING_MODES),
        default="category",
        help="a missing quasi-identifier value is its own category (default) or matches any "
        "value (every figure, closed and open data, then counts the compatible records)",
    )
    assess.add_argument(
        "--source",
        metavar="FILE",
        help="source database to link against (default: the data themselves); it needs the "
        "quasi-identifiers and the record id",
    )
    assess.add_argument(
        "--sampling-fraction",
        type=finite_number(0, 1, above=True),
        metavar="F",
        help="the file is a sample of a population: add open-data risk (prosecutor, journalist, "
        'marketer, individual risk, estimated population uniques) under "open_data"',
    )
    assess.add_argument(
        "--bf-method",
        choices=list(BF_METHODS),
        default="exact",
        help="Benedetti-Franconi individual risk of the open data: exact (default) or sdcmicro "
        "(sdcMicro's default approximation p / (f - 1 + p) for classes of 3 or more, up to 4%% "
        "above the exact value; to reproduce an sdcMicro report)",
    )
    assess.add_argument(
        "--tolerance",
        type=finite_number(0),
        help="for --rule tolerance: how far (in each quasi-identifier's units) a match may be; "
        "default: the noise half-width or half the rounding base of each masked column",
    )
    assess.add_argument(
        "--il-columns",
        nargs="+",
        metavar="COL",
        help="numeric columns of the information loss (sdcMicro's IL1s and eigen) under "
        '"information_loss"; default: the numeric quasi-identifiers, exposure, outcome, '
        "covariates and masked columns",
    )
    assess.add_argument(
        "--replicates",
        type=whole_number(1),
        default=DEFAULT_REPLICATES,
        help=f"replicates for random masking (1..{MAX_REPLICATES}, default {DEFAULT_REPLICATES})",
    )
    assess.add_argument(
        "--classifier",
        nargs="?",
        type=whole_number(1),
        const=DEFAULT_CLASSIFIER_REPLICATES,
        metavar="R",
        help="also give the classifier lens of utility: cross-validated AUC and accuracy of a "
        "logistic regression and a random forest predicting the 0/1 outcome, trained on the "
        "original and on the masked data and evaluated on the original (R replicates of a "
        f"random mask, 1..{MAX_CLASSIFIER_REPLICATES}, default "
        f"{DEFAULT_CLASSIFIER_REPLICATES}; --seed fixes the folds)",
    )
    add_context_flags(assess)
    add_engine_flags(assess)
    assess.set_defaults(handler=run)


def add_context_flags(parser: Any) -> None:
    """The release context a verdict is judged in (the dashboard's first question)."""
    parser.add_argument(
        "--context",
        choices=list(CONTEXT_TEXT),
        default="public",
        help="the release context: public (judged by the maximum risk; default), non_public "
        "(shared under a data-use agreement) or internal (both judged by the worst attack "
        "scenario: its probability x the strict average risk)",
    )
    parser.add_argument(
        "--min-cell-size",
        type=int,
        default=5,
        metavar="C",
        help="minimum cell size: the threshold is 1/C (default 5: 0.2)",
    )
    parser.add_argument(
        "--intruder-holds-source",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="whether an intruder may hold the source file: the release is then also judged by "
        "exact linkage to it, the stricter figure after local suppression or subsampling "
        "(default: yes)",
    )
    parser.add_argument(
        "--safe-harbor",
        action="store_true",
        help="the release must also meet HIPAA Safe Harbor: each unmet item fails the verdict",
    )


def settings_from_flags(args: argparse.Namespace) -> ReleaseSettings:
    """The release settings the flags describe (validated: a clear message, never a
    traceback)."""
    try:
        return ReleaseSettings(
            release_context=args.context,
            min_cell_size=args.min_cell_size,
            missing=args.missing,
            bf_method=args.bf_method,
            intruder_holds_source=args.intruder_holds_source,
            safe_harbor=args.safe_harbor,
        )
    except (ShareError, LimitError) as error:
        raise DeidError(str(error).replace("Context: 'min_cell_size'", "--min-cell-size")) from None


def run(args: argparse.Namespace) -> int:
    bounds.REPLICATES.check(args.replicates, "--replicates asks for")  # before any work
    if args.bootstrap is not None:
        bounds.BOOTSTRAP_RESAMPLES.check(args.bootstrap, "--bootstrap asks for")
    engine = open_engine(args)
    if engine is not None:
        with engine:
            return _run_on_engine(args, engine)
    _, recipe, workspace, warnings = prepare(args)
    if args.tolerance is not None and args.rule != "tolerance":
        raise DeidError("--tolerance goes with --rule tolerance.")
    source = load_data(args.source) if args.source else None
    settings = settings_from_flags(args)
    context = settings.context()
    assessment = workspace.assess(
        recipe,
        rule=args.rule,
        n_replicates=args.replicates,
        tolerance=args.tolerance,
        source=source,
        missing=args.missing,
        public=context.public,
        holds_source=context.intruder_holds_source,
        bf_method=args.bf_method,
    )
    result = assessment.to_dict()
    # Imported here, once the input is read: see deid_core.cli.shared.
    from deid_core.verdict import release_verdict

    found = release_verdict(workspace, recipe, settings, source, judged=assessment.judged)
    result["verdict"] = found.to_dict()
    result["context"] = context.to_dict()
    if source is not None:
        result["risk"]["n_source"] = len(source)
    result["class_size_distribution"] = _distribution(
        class_size_distribution(assessment.risk.class_size, None, assessment.risk.missing)
    )
    result["engine"] = "memory"
    attribute = {}
    for column in recipe.roles.attribute_targets:
        try:
            attribute[column] = workspace.attribute_disclosure(
                recipe, column, args.missing
            ).to_dict()
        except DeidError as error:
            attribute[column] = {"error": str(error)}
    if attribute:
        result["attribute_disclosure"] = attribute
    if args.sampling_fraction is not None or recipe.roles.weight:
        result["open_data"] = workspace.sample_risk(
            recipe, args.sampling_fraction, missing=args.missing, bf_method=args.bf_method
        ).to_dict()
    stage = workspace.release_stage(recipe)
    if stage is not None:
        result["release"] = {
            "n_released": len(workspace.masked_frame(recipe)),
            "data_steps": stage.to_dict(),
        }
        subsample = workspace.release_risk(recipe, args.missing, args.bf_method)
        if subsample is not None:
            result["release"]["subsample_open_data"] = subsample.to_dict()
    loss = workspace.information_loss(recipe, args.il_columns)
    if loss is not None:
        result["information_loss"] = loss.to_dict()
    if args.bootstrap is not None:
        if "utility" not in result:
            raise DeidError("--bootstrap needs a model: give --exposure and --outcome.")
        try:
            interval = workspace.bootstrap(recipe, args.bootstrap, seed=args.seed)
        except DeidError as error:
            result["utility"]["bootstrap"] = {"error": str(error)}
        else:
            result["utility"]["bootstrap"] = interval.to_dict()
    if args.classifier is not None:
        if "utility" not in result:
            raise DeidError("--classifier needs a model: give --exposure and --outcome.")
        try:
            lens = workspace.classifier(recipe, args.classifier, seed=args.seed or 0)
        except DeidError as error:
            result["utility"]["classifier"] = {"error": str(error)}
        else:
            result["utility"]["classifier"] = lens.to_dict()
    result["warnings"] = warnings
    print(json.dumps(json_ready(result), indent=2))
    return 0


def _distribution(table: Any) -> list[dict[str, Any]]:
    return table.to_dict(orient="records")


#: What the SQL engines cannot give: the flags that need the records.
_RECORD_FLAGS = (
    ("exposure", "--exposure/--outcome (the model)"),
    ("source", "--source (linkage)"),
    ("bootstrap", "--bootstrap"),
    ("classifier", "--classifier"),
    ("tolerance", "--tolerance"),
)


def _run_on_engine(args: argparse.Namespace, engine: SqlEngine) -> int:
    """The risk figures of the recipe from the engine's cross-tabulation of the
    quasi-identifiers (closed data, the class-size distribution and, with a sampling fraction
    or a weight column, open data): aggregates only, never a record."""
    from deid_core.engines import distribution_from_cells, risk_from_cells, sample_risk_from_cells

    needing_records = [flag for name, flag in _RECORD_FLAGS if getattr(args, name) is not None]
    if args.rule != "same_masking":
        needing_records.append("--rule")
    if needing_records:
        raise DeidError(
            f"--engine {engine.name} gives the risk figures; {', '.join(needing_records)} "
            "need the records: use --engine memory."
        )
    recipe = recipe_with_flags(load_recipe(args.recipe), args)
    recipe.check_columns(engine.kinds())
    qis = list(recipe.roles.quasi_identifiers)
    if not qis:
        raise DeidError(f"--engine {engine.name}: {NO_QI_WARNING}.")
    crosstab = engine.crosstab(qis, {c: recipe.steps_for(c) for c in qis}, recipe.roles.weight)
    risk = risk_from_cells(crosstab, args.missing)
    result: dict[str, Any] = {"n_records": crosstab.n_records, "risk": risk.to_dict()}
    if args.sampling_fraction is not None or recipe.roles.weight:
        result["open_data"] = sample_risk_from_cells(
            crosstab, args.sampling_fraction, missing=args.missing, bf_method=args.bf_method
        ).to_dict()
    result["class_size_distribution"] = _distribution(
        distribution_from_cells(crosstab, args.missing)
    )
    result["engine"] = engine.name
    result["cells"] = crosstab.n_cells
    result["warnings"] = []
    if recipe.roles.record_id:
        result["warnings"].append(
            f"--engine {engine.name} counts rows: if the record id repeats (several rows per "
            "person), k and the risks count rows, not people; --engine memory counts people."
        )
    print(json.dumps(json_ready(result), indent=2))
    return 0
