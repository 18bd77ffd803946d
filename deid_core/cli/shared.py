"""What the commands share: reading the data and the recipe, the flags for roles and the model,
the workspace they assess on, and JSON output.

The workspace and the SQL engines are imported where they are used, and each command imports
the modules that compute its results inside its ``run``: parsing the flags and refusing bad
input must not first load statsmodels, scipy, scikit-learn, DuckDB or SQLGlot (seconds
together; ``tests/unit/test_cli_imports.py``)."""

from __future__ import annotations

import argparse
import errno
import math
import os
import resource
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from deid_core import bounds
from deid_core.datasets import DEMO_DATASETS, DemoDataset, load_demo
from deid_core.engines import CSV_SUFFIXES, DEFAULT_SPARK_MASTER, ENGINES
from deid_core.engines.sources import parquet_dataset, parquet_path, read_parquet_frame
from deid_core.errors import DeidError
from deid_core.io.read_budget import ReadLimits
from deid_core.io.reading import read_header, read_table
from deid_core.io.roles import validate_column_for_role
from deid_core.recipe import Recipe, Roles
from deid_core.share import ModelSettings, load_configuration
from deid_core.utility import SUPPORTED_FAMILIES
from deid_core.utility.counts import MAX_RESAMPLES, MIN_RESAMPLES
from deid_core.utility.spec import TIES_METHODS

if TYPE_CHECKING:
    from deid_core.engines import SqlEngine
    from deid_core.workspace import Workspace

TABLE_PREFIX = "table:"
DATA_HELP = (
    "data file, a folder of Parquet files, table:NAME (with --engine spark), or demo:KEY ("
    + ", ".join(DEMO_DATASETS)
    + ")"
)


#: Bytes of memory one cell of a file read in memory may take, at most about (the file's
#: bytes, Arrow's parsed columns and pandas' frame are held at once while reading; text
#: columns as Python strings are the largest): what the command line's bounds assume.
CELL_MEMORY_BYTES = 100
#: What part of an address-space limit (``ulimit -v``) counts as memory for data.
ADDRESS_SPACE_SHARE = 4
#: Share of the machine's available memory the command line lets one file take.
MEMORY_SHARE = 0.5
ENGINE_ADVICE = (
    "The file does not fit this machine's memory: count out of core with --engine duckdb "
    "(CSV or Parquet), or keep only the columns the analysis needs."
)


def available_memory() -> int:
    """Bytes of memory available to this program: Linux's MemAvailable (elsewhere the
    physical memory's free pages, else 8 GiB), and never more than a quarter of the process's
    own address-space limit (``ulimit -v``, a batch system's cap) when one is set: address
    space counts what the libraries reserve (thread stacks, allocator arenas, about 2 GB here
    before any data), not only what the data take."""
    machine = _machine_memory()
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError):
        return machine
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return machine
    return min(machine, int(soft) // ADDRESS_SPACE_SHARE)


def _machine_memory() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return 8 * 1024**3


def custodian_limits(memory: int | None = None) -> ReadLimits:
    """The read bounds of the command line. The dashboard's bounds
    (:data:`deid_core.io.reading.READ_LIMITS`) protect a shared server from an upload; on
    the command line the data custodian reads their own file on their own machine, so a
    file is read in memory when ``MEMORY_SHARE`` of the ``memory`` available (default: the
    machine's, now) holds it: at most that many bytes of file and of unpacked data, and that
    many bytes / ``CELL_MEMORY_BYTES`` cells and rows; beyond, the message names
    ``--engine duckdb``. The column bound and Excel's stay the dashboard's."""
    budget = int(MEMORY_SHARE * (available_memory() if memory is None else memory))
    cells = max(budget // CELL_MEMORY_BYTES, bounds.CELLS.limit)
    size = max(budget, bounds.FILE_BYTES.limit)
    return ReadLimits(
        file_bytes=replace(bounds.FILE_BYTES, limit=size, advice=ENGINE_ADVICE),
        decoded_bytes=replace(
            bounds.DECODED_BYTES,
            limit=max(budget, bounds.DECODED_BYTES.limit),
            advice=ENGINE_ADVICE,
        ),
        rows=replace(bounds.ROWS, limit=max(cells, bounds.ROWS.limit), advice=ENGINE_ADVICE),
        cells=replace(bounds.CELLS, limit=cells, advice=ENGINE_ADVICE),
    )


# ---------------------------------------------------------------------------- numeric flags
def _shown(text: str) -> str:
    """A flag's value as the message quotes it (cut: it may be thousands of digits long)."""
    return repr(text if len(text) <= 24 else text[:20] + "...")


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``minimum`` (to ``maximum``), refused otherwise
    with a message saying what is allowed (argparse then exits with status 2)."""
    allowed = f"a whole number of at least {minimum:,}" + (
        f" and at most {maximum:,}" if maximum is not None else ""
    )

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not {allowed}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be {allowed}, not {_shown(text)}")
        return value

    return parse


def finite_number(
    minimum: float | None = None, maximum: float | None = None, above: bool = False
) -> Callable[[str], float]:
    """An argparse type: a finite number (NaN and infinities refused) from ``minimum``
    (strictly ``above`` it when asked) to ``maximum``."""
    parts = []
    if minimum is not None:
        parts.append(f"{'above' if above else 'at least'} {minimum:g}")
    if maximum is not None:
        parts.append(f"at most {maximum:g}")
    allowed = "a finite number" + (" " + " and ".join(parts) if parts else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not {allowed}") from None
        if (
            not math.isfinite(value)
            or (minimum is not None and (value <= minimum if above else value < minimum))
            or (maximum is not None and value > maximum)
        ):
            raise argparse.ArgumentTypeError(f"must be {allowed}, not {_shown(text)}")
        return value

    return parse


def write_output(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path``; a failure is one plain line naming the file and the
    reason (a full disk, a read-only or special file...), never the bare kind of error."""
    try:
        Path(path).write_bytes(data)
    except OSError as error:
        raise DeidError(f"Could not write {path}: {os_error_words(error)}.") from None


def os_error_words(error: OSError) -> str:
    """What went wrong with a file, in plain words."""
    words = {
        errno.ENOSPC: "the disk or device is full",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "the operation is not permitted there",
        errno.EISDIR: "it is a folder",
        errno.ENOENT: "no such file or folder",
        errno.EIO: "the device refused the data (is it a special file, such as one in /proc?)",
        errno.EINVAL: "the file does not accept data written this way (a special file?)",
    }
    if error.errno in words:
        return words[error.errno]
    return (error.strerror or type(error).__name__).lower()


def load_data(spec: str) -> pd.DataFrame:
    """Read a data file, a Parquet folder, or a built-in demo given as ``demo:KEY``. Parquet
    (a file or a folder of files) is read by the engines' rule, as DuckDB and Spark read it
    (:func:`deid_core.engines.sources.read_parquet_frame`); every file within the bounds of
    :func:`custodian_limits` (larger data: ``--engine duckdb``)."""
    if spec.startswith("demo:"):
        key = spec.removeprefix("demo:")
        if key not in DEMO_DATASETS:
            raise DeidError(f"Unknown demo '{key}'; known: {', '.join(DEMO_DATASETS)}.")
        return load_demo(key)
    if spec.startswith(TABLE_PREFIX):
        raise DeidError("A table name is read by Spark only: add --engine spark.")
    limits = custodian_limits()
    parquet = parquet_path(spec)
    if parquet is not None:
        return read_parquet_frame(parquet, limits=limits)
    path = Path(spec)
    if path.is_dir():
        raise DeidError(f"{spec} is a folder; give a data file.")
    if not path.is_file():
        raise DeidError(f"No such data file: {spec}")
    limits.file_bytes.check(path.stat().st_size, "The data file has")  # before reading it
    return read_table(path.read_bytes(), path.name, limits).frame


def check_names_before_reading(spec: str, recipe: Recipe) -> None:
    """Refuse a recipe naming a column the data lack before the data are read (a registry's
    file may take minutes and gigabytes to read only to be told a column is missing): a
    Parquet file or folder from its footers, a delimited-text file or a workbook from its
    header row (:func:`~deid_core.io.reading.read_header`, as :func:`read_table` cleans the
    names). Other inputs, and text whose names cannot be known from its header alone, are
    checked once read."""
    parquet = parquet_path(spec)
    if parquet is not None:
        recipe.check_columns(parquet_dataset(parquet).schema.names)
        return
    path = Path(spec)
    if spec.startswith(("demo:", TABLE_PREFIX)) or not path.is_file():
        return  # load_data names the problem
    limits = custodian_limits()
    limits.file_bytes.check(path.stat().st_size, "The data file has")  # before reading it
    header = read_header(path.read_bytes(), path.name, limits)
    if header is not None:
        recipe.check_columns([name for name in recipe.missing_columns(()) if header.may_have(name)])


def add_engine_flags(command: argparse.ArgumentParser) -> None:
    """--engine and --spark-master, shared by assess and uniqueness."""
    command.add_argument(
        "--engine",
        choices=list(ENGINES),
        default="memory",
        help="where the counting runs: memory (default; every figure), duckdb (embedded, out "
        "of core: a CSV file, or a Parquet file or folder, larger than memory) or spark (a "
        f"Parquet file or folder, or {TABLE_PREFIX}NAME for a table); duckdb and spark "
        "return aggregates only and give the risk figures",
    )
    command.add_argument(
        "--spark-master",
        default=DEFAULT_SPARK_MASTER,
        metavar="URL",
        help=f"Spark master for --engine spark (default {DEFAULT_SPARK_MASTER}: two local "
        "cores; e.g. spark://host:7077 or yarn)",
    )


def open_engine(args: argparse.Namespace) -> SqlEngine | None:
    """The SQL engine the flags ask for (None for memory), over DATA: a Parquet file or
    folder, or for Spark ``table:NAME``."""
    if args.engine == "memory":
        return None
    from deid_core.engines import DuckDBEngine, SparkEngine

    if args.spark_master != DEFAULT_SPARK_MASTER and args.engine != "spark":
        raise DeidError("--spark-master goes with --engine spark.")
    if args.data.startswith(TABLE_PREFIX):
        if args.engine != "spark":
            raise DeidError("A table name is read by Spark only: use --engine spark.")
        name = args.data.removeprefix(TABLE_PREFIX)
        if not name or not all(part.replace("_", "").isalnum() for part in name.split(".")):
            raise DeidError("Give the table as table:NAME or table:DATABASE.NAME.")
        return SparkEngine(table=name, master=args.spark_master)
    if args.engine == "duckdb" and args.data.lower().endswith(CSV_SUFFIXES):
        if not Path(args.data).is_file():
            raise DeidError(f"No such data file: {args.data}")
        return DuckDBEngine(Path(args.data))
    path = parquet_path(args.data)
    if path is None:
        raise DeidError(
            f"--engine {args.engine} reads a Parquet file or a folder of Parquet files"
            + (
                ", or a table given as table:NAME."
                if args.engine == "spark"
                else f", or a CSV file ({', '.join(CSV_SUFFIXES)})."
            )
        )
    if args.engine == "duckdb":
        return DuckDBEngine(path)
    return SparkEngine(path=path, master=args.spark_master)


def load_recipe(path: str | None) -> Recipe:
    """Read a recipe JSON file (an empty recipe without one)."""
    if path is None:
        return Recipe()
    file = Path(path)
    if file.is_dir():
        raise DeidError(f"{path} is a folder; give a recipe file.")
    if not file.is_file():
        raise DeidError(f"No such recipe file: {path}")
    bounds.TEXT_FILE_BYTES.check(file.stat().st_size, "The recipe file has")  # before reading
    return Recipe.from_json(file.read_bytes())


#: Each role and the flag that sets it.
ROLE_FLAGS = {
    "quasi_identifiers": "qi",
    "exposure": "exposure",
    "outcome": "outcome",
    "covariates": "covariate",
    "record_id": "record_id",
    "weight": "weight",
    "sensitive": "sensitive",
}


#: Pairs of roles one column may hold at once (Cologne's dose is a quasi-identifier and the
#: exposure); every other pair is exclusive (:class:`deid_core.recipe.Roles`).
SHARED_ROLES = {
    frozenset(("quasi_identifiers", role)) for role in ("exposure", "outcome", "covariates")
}


def recipe_with_flags(recipe: Recipe, args: argparse.Namespace) -> Recipe:
    """Command-line role flags override the recipe's roles; without a recipe, a built-in
    demo (``demo:KEY``) starts from the roles it is meant for (its quasi-identifiers, record
    id, model), as the dashboard does, so that it is never judged with no quasi-identifier.
    A column a flag names leaves the roles the flags do not set and it cannot share
    (:data:`SHARED_ROLES`): ``--exposure x`` on a demo whose covariates hold x makes x the
    exposure, not both; a quasi-identifier named the exposure stays a quasi-identifier."""
    demo = _demo_of(args)
    base = demo.roles if args.recipe is None and demo is not None else recipe.roles
    flags = {role: getattr(args, flag) for role, flag in ROLE_FLAGS.items() if getattr(args, flag)}
    roles = base.to_dict()
    for role, value in roles.items():
        if role in flags or not value:
            continue
        drop = {
            column
            for other, named in flags.items()
            if frozenset((role, other)) not in SHARED_ROLES
            for column in ([named] if isinstance(named, str) else named)
        }
        if isinstance(value, str):
            roles[role] = None if value in drop else value
        else:
            roles[role] = [c for c in value if c not in drop]
    roles.update(flags)
    if bool(roles["exposure"]) != bool(roles["outcome"]):
        raise DeidError("Give both an exposure and an outcome to assess utility, or neither.")
    return recipe.with_roles(Roles.from_dict(roles))


def json_ready(value: Any) -> Any:
    """JSON has no NaN or infinity: write null instead."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    return value


#: The warning of a command run with no quasi-identifier (its verdict is "Not judged").
NO_QI_WARNING = (
    "no quasi-identifier is marked (give --qi COL ... or a recipe with roles): every record "
    "falls in one class, so the risk is not judged"
)


def _role_warnings(
    data: pd.DataFrame, recipe: Recipe, family: str = "logistic", event: str | None = None
) -> list[str]:
    """Problems with the columns in their roles (all missing, one level, text in numbers...);
    with an ``event`` value the outcome is coded, not 0/1, and is checked by the model."""
    roles = recipe.roles
    checks = [(c, "quasi_identifier") for c in roles.quasi_identifiers]
    checks += [(c, "covariate") for c in roles.covariates]
    checks += [(roles.exposure, "exposure")]
    if event is None:
        checks += [(roles.outcome, "outcome")]
    found: list[str] = []
    if not roles.quasi_identifiers:
        found.append(NO_QI_WARNING)
    for column, role in checks:
        if column is not None:
            problems = validate_column_for_role(data, column, role, family)
            found += [w for w in problems if w not in found]
    return found


def _demo_of(args: argparse.Namespace) -> DemoDataset | None:
    """The built-in demo the data argument names (``demo:KEY``), else None."""
    key = args.data.removeprefix("demo:") if args.data.startswith("demo:") else None
    return DEMO_DATASETS.get(key) if key is not None else None


def _model_choice(args: argparse.Namespace) -> ModelSettings:
    """The model: the flags, over the configuration file's model (``--recipe``), over the
    demo's own model, else logistic."""
    base = None
    if args.recipe is not None:
        base = load_configuration(Path(args.recipe).read_bytes()).model
    demo = _demo_of(args)
    if base is None and demo is not None:
        base = ModelSettings(demo.model_family, trials=demo.trials)
    base = base or ModelSettings()
    family = args.model or base.family
    same = family == base.family
    references = dict(base.references)
    for item in args.reference or ():
        column, sep, level = item.partition("=")
        if not (sep and column and level):
            raise DeidError("--reference takes COLUMN=LEVEL, e.g. --reference race=1.")
        references[column] = level
    return ModelSettings(
        family,
        offset=args.offset or (base.offset if same else None),
        trials=args.trials or (base.trials if same else None),
        factors=tuple(args.factor) if args.factor is not None else base.factors,
        references=references,
        time=args.time or (base.time if same else None),
        ties=args.ties or base.ties,
        event=args.event if args.event is not None else base.event,
    )


def every_step_applied(recipe: Recipe) -> tuple[str, ...]:
    """For :func:`prepare`: the command applies every step of the recipe (none unchecked)."""
    return ()


def prepare(
    args: argparse.Namespace,
    *,
    unchecked: Callable[[Recipe], Iterable[str] | None] = every_step_applied,
) -> tuple[pd.DataFrame, Recipe, Workspace, list[str]]:
    """The data, the recipe (roles from the flags, seeded by --seed), a workspace with the
    chosen model, and the role warnings (also printed to stderr): what assess, profile and
    search share. The recipe's columns are checked against the data, their names and each
    step's kind of column (:meth:`Recipe.check_columns`), before the workspace's libraries are
    loaded, so that a step on a column of the wrong kind is refused within a second or two.
    ``unchecked``: given the recipe, the columns whose steps the command replaces or does not
    apply (their kinds are not checked: the command may accept them), or None when that is
    not known before its libraries are loaded (then only names are checked)."""
    recipe = recipe_with_flags(load_recipe(args.recipe), args)
    if args.seed is not None:
        recipe = recipe.with_seed(args.seed)
    check_names_before_reading(args.data, recipe)
    data = load_data(args.data)
    skipped = unchecked(recipe)
    if skipped is None:
        recipe.check_columns(data.columns)
    else:
        recipe.check_columns(data, replaced=skipped)
    model = _model_choice(args)
    warnings = _role_warnings(data, recipe, model.family, model.event)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    from deid_core.workspace import Workspace

    workspace = Workspace(data, name=args.data)
    model.apply_to(workspace)
    return data, recipe, workspace, warnings


def add_common_flags(command: argparse.ArgumentParser) -> None:
    """Data, recipe, roles and model flags shared by assess and profile."""
    command.add_argument("data", help=DATA_HELP)
    command.add_argument(
        "--recipe",
        help="recipe JSON (roles and masking steps); without one, demo:KEY takes the demo's "
        "own roles and no masking, and any other file has only the roles the flags give",
    )
    command.add_argument("--qi", nargs="+", metavar="COL", help="quasi-identifier columns")
    command.add_argument("--exposure", metavar="COL", help="exposure column of the model")
    command.add_argument("--outcome", metavar="COL", help="outcome column of the model")
    command.add_argument("--covariate", nargs="+", metavar="COL", help="model covariates")
    command.add_argument("--record-id", metavar="COL", help="record id linking to the source")
    command.add_argument("--weight", metavar="COL", help="sampling-weight column (positive)")
    command.add_argument(
        "--sensitive",
        nargs="+",
        metavar="COL",
        help="sensitive columns: assess adds their l-diversity and t-closeness (as the "
        'outcome\'s) under "attribute_disclosure"',
    )
    command.add_argument(
        "--model",
        choices=list(SUPPORTED_FAMILIES),
        help="the collaborator's model: logistic, poisson (with --offset), linear, err (the "
        "linear excess-relative-risk odds model, b = ERR per unit dose), binomial (grouped "
        "counts, with --trials) or cox (proportional hazards, with --time; the outcome is the "
        "0/1 event indicator); default: the configuration file's model, else the demo's own "
        "model, else logistic",
    )
    command.add_argument("--offset", metavar="COL", help="person-time column (poisson model)")
    command.add_argument(
        "--trials", metavar="COL", help="trials column, e.g. population (binomial model)"
    )
    command.add_argument("--time", metavar="COL", help="follow-up time column (cox model)")
    command.add_argument(
        "--event",
        metavar="VALUE",
        help="the outcome's value that is the event, e.g. --event 2 for a status coded "
        "0/1/2 (2 = death): every other value is censored (cox) or 0 (logistic, err)",
    )
    command.add_argument(
        "--ties",
        choices=list(TIES_METHODS),
        help="tied event times in the cox model: breslow (default) or efron",
    )
    command.add_argument(
        "--factor",
        nargs="*",
        metavar="COL",
        help="numeric covariates to fit as categories (one coefficient per code, e.g. race "
        "coded 1/2/3) instead of one linear term; --factor alone clears the file's factors",
    )
    command.add_argument(
        "--reference",
        nargs="+",
        metavar="COL=LEVEL",
        help="reference level of a categorical covariate, e.g. race=1 (default: the first)",
    )
    command.add_argument(
        "--seed",
        type=int,
        help="seed for the recipe's random steps (step i gets seed + i) and the bootstrap; "
        "without it, the recipe's own seeds, or fresh draws when it has none",
    )
    command.add_argument(
        "--bootstrap",
        type=whole_number(0),
        metavar="B",
        help="also give naive and percentile-bootstrap 95%% intervals of the masked estimate "
        f"from B resamples ({MIN_RESAMPLES}..{MAX_RESAMPLES}); for masks that make records "
        "correlated (smoothing, interval means)",
    )
