"""Everything the dashboard keeps in ``st.session_state``, behind small functions.

Privacy: the data set lives only in this session's state, inside a
:class:`deid_core.workspace.Workspace`, whose one cache (bounded by memory) holds everything
computed from it, the pages' results included (:class:`SessionCache`). Nothing is written to
disk and nothing derived from the data goes through ``st.cache_data`` / ``st.cache_resource``.
A new data set replaces the old one with a new workspace, and so clears every cache.

Keys (all prefixed ``deid.``):

- ``workspace``: the Workspace of the current data set;
- ``recipe``: the current :class:`~deid_core.recipe.Recipe`;
- ``dataset``: a :class:`DatasetInfo` (name, demo key, synthetic flag, the uploaded file's
  size and SHA-256);
- ``seeds``: the session's random seeds, one per purpose (the noise of each column, the row
  shuffle, the bootstrap, the ROC audit's unknown records...), each drawn independently from
  the operating system's entropy the first time it is needed and kept, so the figures do not
  flicker between reruns (:func:`seed_for`);
- ``epoch``: bumped when the data or the recipe are replaced from outside the Mask page, so
  the Mask page's widgets are rebuilt from the new recipe;
- ``last_changed``: the column whose masking was changed last (the live map sweeps it);
- ``settings``: matching rule, security measure, replicates, minimum cell size, release
  context;
- ``jobs``: the session's background jobs (:mod:`dashboard.jobs`), cancelled when the data
  change;
- ``page``: the page the session shows (jobs started on other pages are cancelled);
- ``source``: an uploaded linkage source database, dropped with the data;
- ``sample_design``: how the file was sampled from its population (the Risk page's open-data
  inputs, for the report), dropped with the data;
- ``pseudonym_key``: the secret key of keyed-hash pseudonyms (Export page), held in this
  session only, never in the recipe, a link, a report or an export, dropped with the data;
  ``pseudonym_key_shown``: whether the user has confirmed storing it (it is then not shown
  again).
- ``project``: the report's project details (title, custodian, recipient, purpose), kept when
  the data change.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import jobs
from deid_core.cache import CacheNamespace
from deid_core.datasets import DEMO_DATASETS, DemoDataset, load_demo
from deid_core.errors import Cancelled, DeidError
from deid_core.io.roles import infer_roles
from deid_core.masking import DataStep, MaskingStep
from deid_core.recipe import Recipe, Roles
from deid_core.report.provenance import FIELD_LIMITS, FileFingerprint, ProjectDetails
from deid_core.risk import SampleDesign
from deid_core.risk.context import ReleaseContext
from deid_core.share import SETTING_CHOICES, SETTING_DEFAULTS, Probability, ReleaseSettings
from deid_core.utility.area_level import AreaLevelData
from deid_core.workspace import Workspace

LOG = logging.getLogger("dashboard")

PREFIX = "deid."
KEY_WORKSPACE = PREFIX + "workspace"
KEY_RECIPE = PREFIX + "recipe"
KEY_DATASET = PREFIX + "dataset"
KEY_SEEDS = PREFIX + "seeds"
KEY_EPOCH = PREFIX + "epoch"
KEY_LAST_CHANGED = PREFIX + "last_changed"
KEY_SETTINGS = PREFIX + "settings"
KEY_FLASH = PREFIX + "flash"
#: The recipe (as JSON) whose search the Mask page's "Search from this recipe" asked for: the
#: R-U map page starts that search once, if the recipe is still the current one.
KEY_SEARCH_FROM_MASK = PREFIX + "search_from_mask"
KEY_SOURCE = PREFIX + "source"
KEY_SAMPLE_DESIGN = PREFIX + "sample_design"
KEY_PAGE = PREFIX + "page"
KEY_PSEUDONYM_KEY = PREFIX + "pseudonym_key"
KEY_PSEUDONYM_KEY_STORED = PREFIX + "pseudonym_key_stored"
KEY_PROJECT = PREFIX + "project"

DEFAULT_DEMO = "cohort"

#: Minimum cell size -> the maximum acceptable risk 1 / size (El Emam & Malin).
CELL_SIZES: dict[int, str] = {
    3: "0.33 (minimum cell size 3)",
    5: "0.2 (minimum cell size 5)",
    11: "0.09 (minimum cell size 11)",
    20: "0.05 (minimum cell size 20)",
}

RELEASE_CONTEXTS: dict[str, str] = {
    "public": "Public release: judge the maximum risk",
    "non_public": "Shared under a data-use agreement: judge the worst attack scenario (its "
    "probability x the strict average risk)",
    "internal": "Internal use within the organisation: judge the worst attack scenario, as "
    "for an agreement",
}

#: Whether the user has chosen the release context (see :func:`context_chosen`).
KEY_CONTEXT_CHOSEN = PREFIX + "context_chosen"


#: The probabilities of the non-public attack scenarios (El Emam & Malin).
SCENARIOS: dict[str, str] = {
    "pr_attempt": "Pr(deliberate attempt)",
    "pr_acquaintance": "Pr(analyst knows someone in the data)",
    "pr_breach": "Pr(data breach at the recipient)",
}

#: The session's settings and their defaults: the release context of a shared configuration
#: (defined, with their allowed values, in :mod:`deid_core.share`).
DEFAULT_SETTINGS: dict[str, Any] = dict(SETTING_DEFAULTS)

#: Allowed values of each setting (anything else falls back to the default).
_SETTING_CHOICES: dict[str, Any] = SETTING_CHOICES
_Probability = Probability

#: Widgets that show a setting under another key (the sidebar's cell size choice).
SETTINGS_WIDGET_KEYS = (PREFIX + "w.cell_size_choice", PREFIX + "w.custom_cell_size")

GENERIC_ERROR = (
    "This could not be computed. The technical details are not shown because they could "
    "contain data values; check the column types and roles, or try another setting."
)


@dataclass(frozen=True)
class DatasetInfo:
    """What the sidebar says about the data set in use."""

    name: str
    demo_key: str | None = None
    synthetic: bool = False
    locations: tuple[str, ...] = ()
    """Coordinate columns the smoothing controls start with."""
    source_file: FileFingerprint | None = None
    """The uploaded file's name, size and SHA-256 (None for built-in data)."""


# ---------------------------------------------------------------------------- errors
def user_message(error: BaseException) -> str:
    """A message safe to show: the core's own (DeidError) text, else a generic one.

    Unexpected errors are logged by type only: their text could quote a data value.
    :class:`Cancelled` (the page's run was told to stop: its browser tab was closed) is raised
    again: it is no error to show, and a page that showed it would go on to its next section's
    work for nobody (``app.py`` ends the run on it).
    """
    if isinstance(error, Cancelled):
        raise error
    if isinstance(error, DeidError):
        return str(error)
    LOG.error("Unexpected %s in the dashboard (message withheld)", type(error).__name__)
    return GENERIC_ERROR


# ---------------------------------------------------------------------------- defaults
def _demo_default_steps(demo_key: str | None, frame: pd.DataFrame) -> tuple[MaskingStep, ...]:
    """The masking a demo starts with (its ``default_steps``), for columns the frame has."""
    if demo_key not in DEMO_DATASETS:
        return ()
    wanted = DEMO_DATASETS[demo_key].default_steps
    return tuple(step for step in wanted if step.column in frame.columns)


def demo_recipe(key: str, steps: tuple[MaskingStep, ...] | None = None) -> Recipe:
    """A demo's roles with ``steps`` (None: the masking the demo starts with)."""
    demo = DEMO_DATASETS[key]
    return Recipe(demo.roles, demo.default_steps if steps is None else steps)


def roles_from_primary(primary: Mapping[str, str], extra_qis: tuple[str, ...] = ()) -> Roles:
    """Roles from one primary role per column (as :func:`deid_core.io.roles.infer_roles` gives),
    plus columns that are also quasi-identifiers (an exposure often is)."""

    def first(role: str) -> str | None:
        return next((c for c, r in primary.items() if r == role), None)

    qis = [c for c, r in primary.items() if r == "quasi_identifier"]
    qis += [c for c in extra_qis if c not in qis]
    return Roles(
        quasi_identifiers=tuple(qis),
        direct_identifiers=tuple(c for c, r in primary.items() if r == "direct_identifier"),
        exposure=first("exposure"),
        outcome=first("outcome"),
        covariates=tuple(c for c, r in primary.items() if r == "covariate"),
        record_id=first("record_id"),
    )


def keep_valid_steps(steps: tuple[MaskingStep, ...], roles: Roles, columns) -> tuple:
    """Steps of columns that still exist and still fit their role under ``roles``: masking
    of released columns, pseudonyms of withheld ones (direct identifiers, the record id)."""
    present = set(columns)
    withheld = set(roles.direct_identifiers) | ({roles.record_id} if roles.record_id else set())
    return tuple(s for s in steps if s.column in present and (s.column in withheld) == s.pseudonym)


def keep_valid_data_steps(steps: tuple[DataStep, ...], roles: Roles, columns) -> tuple:
    """Whole-data steps whose columns still exist and are still released under ``roles``."""
    present = set(columns)
    withheld = set(roles.direct_identifiers) | ({roles.record_id} if roles.record_id else set())
    qis = roles.quasi_identifiers
    return tuple(
        s for s in steps if set(s.reads(qis)) <= present and not set(s.writes(qis)) & withheld
    )


# ---------------------------------------------------------------------------- session
def _ss() -> Any:
    return st.session_state


def needs_setup() -> bool:
    """Whether this session has no data set yet (its first run)."""
    return KEY_WORKSPACE not in _ss() or KEY_RECIPE not in _ss()


def ensure_state() -> None:
    """Initialise the session on its first run: settings and the synthetic demo."""
    ss = _ss()
    if KEY_SETTINGS not in ss:
        ss[KEY_SETTINGS] = dict(DEFAULT_SETTINGS)
    ss.setdefault(KEY_EPOCH, 0)
    if KEY_WORKSPACE not in ss or KEY_RECIPE not in ss:
        load_demo_dataset(DEFAULT_DEMO)


def load_demo_dataset(key: str) -> None:
    """Load a built-in demo with its default roles and masking."""
    demo = DEMO_DATASETS[key]
    load_dataset(load_demo(key), demo.title, demo=demo)


def load_area_level(area_level: AreaLevelData, name: str, synthetic: bool) -> None:
    """Make an area-level table (step 1 of two-step smoothing) the session's data set, with
    its roles and area-level model; the original individual data are left as they were."""
    load_dataset(area_level.frame, name)
    ss = _ss()
    workspace: Workspace = ss[KEY_WORKSPACE]
    workspace.set_model(area_level.family, area_level.offset, area_level.trials)
    ss[KEY_RECIPE] = Recipe(area_level.roles)
    ss[KEY_DATASET] = DatasetInfo(
        name=name, synthetic=synthetic, locations=area_level.areas.coordinates
    )


def load_dataset(
    frame: pd.DataFrame,
    name: str,
    demo: DemoDataset | None = None,
    source_file: FileFingerprint | None = None,
) -> None:
    """Make ``frame`` the session's data set: a fresh Workspace and a default Recipe from the
    demo's roles (or roles inferred from names and contents), replacing everything before.
    ``source_file`` is the fingerprint of the file it was read from (for the report).

    Raises DataError (via Workspace) when the frame is empty.
    """
    workspace = Workspace(frame, name=name)
    if demo is not None:
        roles = demo.roles
        steps = _demo_default_steps(demo.key, frame)
        workspace.set_model(demo.model_family, trials=demo.trials)
    else:
        roles = roles_from_primary(infer_roles(frame))
        steps = ()
    recipe = Recipe(roles, steps)
    recipe.check_columns(frame.columns)
    ss = _ss()
    ss[KEY_WORKSPACE] = workspace
    ss[KEY_RECIPE] = recipe
    ss[KEY_DATASET] = DatasetInfo(
        name=name,
        demo_key=demo.key if demo is not None else None,
        synthetic=bool(demo.synthetic) if demo is not None else False,
        locations=demo.locations if demo is not None else (),
        source_file=source_file,
    )
    jobs.board().cancel_all("the data changed")
    ss.pop(KEY_SOURCE, None)  # a source database belongs to the data set it was linked to
    ss.pop(KEY_SAMPLE_DESIGN, None)  # and so does a sampling fraction
    forget_pseudonym_key()  # and the key of its pseudonyms
    ss[KEY_LAST_CHANGED] = None
    ss[KEY_EPOCH] = ss.get(KEY_EPOCH, 0) + 1


@dataclass(frozen=True)
class SourceDatabase:
    """An uploaded file an intruder could match against (kept in this session only)."""

    frame: pd.DataFrame
    name: str
    token: int


def set_source(frame: pd.DataFrame | None, name: str = "") -> None:
    """Use ``frame`` as the linkage source (None: back to the original data)."""
    ss = _ss()
    if frame is None:
        ss.pop(KEY_SOURCE, None)
        return
    previous = ss.get(KEY_SOURCE)
    ss[KEY_SOURCE] = SourceDatabase(frame, name, (previous.token + 1) if previous else 1)


def current_source() -> SourceDatabase | None:
    return _ss().get(KEY_SOURCE)


def set_sample_design(design: SampleDesign | None) -> None:
    """Remember how the file was sampled from its population (None: closed data)."""
    _ss()[KEY_SAMPLE_DESIGN] = design


def sample_design() -> SampleDesign | None:
    return _ss().get(KEY_SAMPLE_DESIGN)


def open_page(title: str) -> None:
    """The session runs page ``title``: background jobs other pages started are abandoned."""
    _ss()[KEY_PAGE] = title
    jobs.board().leave_pages_except(title)


def current_page() -> str | None:
    return _ss().get(KEY_PAGE)


def set_pseudonym_key(key: bytes, stored: bool = False) -> None:
    """Hold the secret key of keyed-hash pseudonyms in this session (``stored``: the user
    brought it, so it need not be shown to be saved)."""
    ss = _ss()
    ss[KEY_PSEUDONYM_KEY] = bytes(key)
    ss[KEY_PSEUDONYM_KEY_STORED] = stored


def pseudonym_key() -> bytes | None:
    return _ss().get(KEY_PSEUDONYM_KEY)


def pseudonym_key_stored() -> bool:
    """Whether the user has the key (brought it, or confirmed saving the one generated)."""
    return bool(_ss().get(KEY_PSEUDONYM_KEY_STORED))


def confirm_pseudonym_key_stored() -> None:
    _ss()[KEY_PSEUDONYM_KEY_STORED] = True


def forget_pseudonym_key() -> None:
    ss = _ss()
    ss.pop(KEY_PSEUDONYM_KEY, None)
    ss.pop(KEY_PSEUDONYM_KEY_STORED, None)


def current_workspace() -> Workspace:
    return _ss()[KEY_WORKSPACE]


def current_recipe() -> Recipe:
    return _ss()[KEY_RECIPE]


def current_dataset() -> DatasetInfo:
    return _ss().get(KEY_DATASET, DatasetInfo("(no data)"))


def set_recipe(recipe: Recipe, changed_column: str | None = None, external: bool = False) -> None:
    """Store a new recipe. ``changed_column`` is remembered for the live map; ``external``
    (the recipe was replaced from another page) rebuilds the Mask page's widgets."""
    ss = _ss()
    ss[KEY_RECIPE] = recipe
    if changed_column is not None:
        ss[KEY_LAST_CHANGED] = changed_column
    if external:
        ss[KEY_EPOCH] = ss.get(KEY_EPOCH, 0) + 1


def epoch() -> int:
    return int(_ss().get(KEY_EPOCH, 0))


def last_changed_column() -> str | None:
    return _ss().get(KEY_LAST_CHANGED)


#: Bits of every seed the session draws (numpy's SeedSequence takes integers of any size).
SEED_BITS = 128


def seed_for(*purpose: str) -> int:
    """The seed of one kind of random draw in this session, e.g. ``seed_for("noise", column)``
    or ``seed_for("shuffle")``: ``SEED_BITS`` bits from the operating system's entropy
    (``secrets``), drawn independently for each purpose the first time it is asked for and kept
    for the session. No seed is derived from another, so trying every value is out of reach
    and one seed that leaves the session (a recipe exported with its seeds) gives away nothing
    of the others."""
    seeds = _ss().setdefault(KEY_SEEDS, {})
    if purpose not in seeds:
        seeds[purpose] = secrets.randbits(SEED_BITS)
    return seeds[purpose]


def flash(message: str) -> None:
    """A one-off success message shown on the next run (after st.rerun)."""
    _ss()[KEY_FLASH] = message


def pop_flash() -> str | None:
    return _ss().pop(KEY_FLASH, None)


# ---------------------------------------------------------------------------- settings
def setting(name: str) -> Any:
    settings = _ss().get(KEY_SETTINGS) or DEFAULT_SETTINGS
    value = settings.get(name, DEFAULT_SETTINGS[name])
    return value if value in _SETTING_CHOICES[name] else DEFAULT_SETTINGS[name]


def set_setting(name: str, value: Any) -> None:
    if name not in DEFAULT_SETTINGS:
        raise KeyError(name)
    ss = _ss()
    ss.setdefault(KEY_SETTINGS, dict(DEFAULT_SETTINGS))
    ss[KEY_SETTINGS][name] = value


def replace_settings(values: Mapping[str, Any]) -> None:
    """Replace the session's settings (e.g. from a shared configuration) and drop the widget
    state that mirrors them, so every settings widget is re-created from the new values.
    Call it before the widgets are drawn in this run (at start-up, or before ``st.rerun``)."""
    ss = _ss()
    settings = dict(ss.get(KEY_SETTINGS) or DEFAULT_SETTINGS)
    for name, value in values.items():
        if name not in DEFAULT_SETTINGS:
            raise KeyError(name)
        settings[name] = value
    ss[KEY_SETTINGS] = settings
    if "release_context" in values:  # a configuration that states its context chose it
        ss[KEY_CONTEXT_CHOSEN] = True
    for key in [*(f"{PREFIX}w.{name}" for name in DEFAULT_SETTINGS), *SETTINGS_WIDGET_KEYS]:
        if key in ss:
            del ss[key]


def setting_widget_key(name: str) -> str:
    """The key of the widget that edits setting ``name``, initialised from the setting.

    Widget state is dropped by Streamlit when the widget is not drawn (another page); the
    setting itself persists, and the widget is re-created from it. Use
    :func:`bound_to_setting` to pass the key and the callback together.
    """
    key = f"{PREFIX}w.{name}"
    ss = _ss()
    if key not in ss:
        ss[key] = setting(name)
    return key


def forget_stale_choice(key: str, options: list) -> None:
    """Drop a select box's stored value that is no longer among its ``options`` (after the
    recipe changed), so the box shows its default instead of failing."""
    ss = _ss()
    if key in ss and ss[key] not in options:
        del ss[key]


def bound_to_setting(name: str) -> dict[str, Any]:
    """Keyword arguments that bind a widget to setting ``name`` (its key, initialised from the
    setting, and the callback that stores a change): ``st.radio(..., **bound_to_setting(n))``."""
    return {"key": setting_widget_key(name), "on_change": _store_setting, "args": (name,)}


def _store_setting(name: str) -> None:
    """on_change callback: copy the widget's value into the persistent setting (choosing the
    release context in the settings answers the first-use question too)."""
    set_setting(name, _ss()[setting_widget_key(name)])
    if name == "release_context":
        _ss()[KEY_CONTEXT_CHOSEN] = True


# ---------------------------------------------------------------------------- project
def project_details() -> ProjectDetails:
    """The report's project details as the user last entered them (empty at first)."""
    return _ss().get(KEY_PROJECT) or ProjectDetails()


def project_widget_key(field: str) -> str:
    """The key of the text box that edits project detail ``field``, initialised from the
    stored details (widget state is dropped on another page; the details persist)."""
    key = f"{PREFIX}w.project.{field}"
    ss = _ss()
    if key not in ss:
        ss[key] = getattr(project_details(), field)
    return key


def bound_to_project(field: str) -> dict[str, Any]:
    """Keyword arguments binding a text box to project detail ``field`` (key and callback)."""
    return {"key": project_widget_key(field), "on_change": _store_project, "args": (field,)}


def _store_project(field: str) -> None:
    """on_change callback: store the text box's value in the project details (a value too
    long is cut to the field's limit rather than lost)."""
    value = str(_ss()[project_widget_key(field)]).strip()[: FIELD_LIMITS[field]]
    _ss()[KEY_PROJECT] = replace(project_details(), **{field: value})


def release_context() -> ReleaseContext:
    """The session's release context (public, shared under agreement or internal; cell size;
    scenario probabilities; whether an intruder may hold the source file)."""
    return ReleaseSettings.lenient({name: setting(name) for name in DEFAULT_SETTINGS}).context()


def context_chosen() -> bool:
    """Whether the user has chosen the release context (on first use, or by loading a
    configuration that states one): until then verdicts say they assume a public release."""
    return bool(_ss().get(KEY_CONTEXT_CHOSEN))


def choose_context(kind: str) -> None:
    """Record the user's choice of release context."""
    set_setting("release_context", kind)
    _ss().pop(setting_widget_key("release_context"), None)
    _ss()[KEY_CONTEXT_CHOSEN] = True


def threshold_label() -> str:
    size = setting("min_cell_size")
    return CELL_SIZES.get(size, f"{1 / size:.3g} (minimum cell size {size})")


# ---------------------------------------------------------------------------- caches
class SessionCache:
    """The results one page keeps for this session under ``name``: a part of the session's one
    cache (the workspace's, bounded by memory and dropped when the data change), holding at
    most ``size`` results of this name. Made in a script run, it can then be used from the
    session's background jobs."""

    def __init__(self, name: str, size: int = 64) -> None:
        self.name = name
        self.size = size
        self._items = CacheNamespace(current_workspace().cache, f"page.{name}", size)

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        return self._items.get_or_make(key, make)

    def peek(self, key: Hashable) -> Any:
        return self._items.get(key)

    def put(self, key: Hashable, value: Any) -> None:
        self._items[key] = value
