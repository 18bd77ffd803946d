"""A tour in this session: which tour and step run, and the data set to give back after it.

Starting a tour remembers the data set and recipe in use (in this session's state only) so
they can be restored when the tour ends; a tour never replaces them without the user's
confirmation (see :func:`needs_confirmation`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import compute, jobs, state
from dashboard.tours.content import TOURS, Tour, TourStep

KEY_ACTIVE = "learn.active"  # {"tour": key, "step": index} while a tour runs
KEY_SAVED = "learn.saved"  # the data set and recipe in use before the tour
KEY_PENDING = "learn.pending"  # {"tour": key, "step": index} awaiting confirmation
KEY_ENDED = "learn.ended"  # the title of the tour that just ended (offer to restore)
KEY_MESSAGE = "learn.message"  # an error raised in a callback, shown on the next run


def _ss() -> Any:
    return st.session_state


def active() -> tuple[Tour, int] | None:
    """The running tour and its step index, or None."""
    current = _ss().get(KEY_ACTIVE)
    if not current or current.get("tour") not in TOURS:
        return None
    tour = TOURS[current["tour"]]
    return tour, min(max(int(current.get("step", 0)), 0), len(tour.steps) - 1)


def pending() -> tuple[Tour, int] | None:
    current = _ss().get(KEY_PENDING)
    if not current or current.get("tour") not in TOURS:
        return None
    return TOURS[current["tour"]], int(current.get("step", 0))


def saved_name() -> str | None:
    saved = _ss().get(KEY_SAVED)
    return saved["dataset"].name if saved else None


def ended() -> str | None:
    return _ss().get(KEY_ENDED)


def confirmation_text(step: TourStep) -> str | None:
    """What starting at ``step`` would replace, or None when nothing of the user's is at stake:
    the data set is the step's demo and its recipe is the step's (or a tour already owns it)."""
    dataset = state.current_dataset()
    if dataset.demo_key != step.demo:
        return (
            f"This replaces your data set {dataset.name} and its recipe in this session; "
            "your file is not changed."
        )
    if active() is None and compute.recipe_key(state.current_recipe()) != compute.recipe_key(
        step.recipe()
    ):
        return (
            f"This replaces the recipe of your data set {dataset.name} in this session; "
            "your file is not changed."
        )
    return None


def needs_confirmation(step: TourStep) -> bool:
    return confirmation_text(step) is not None


def _save_previous() -> None:
    ss = _ss()
    if ss.get(KEY_SAVED) is not None:
        return  # the data set from before the first tour is the one to restore
    ss[KEY_SAVED] = {
        "workspace": ss[state.KEY_WORKSPACE],
        "recipe": ss[state.KEY_RECIPE],
        "dataset": ss[state.KEY_DATASET],
        "source": ss.get(state.KEY_SOURCE),
    }


def apply_step(step: TourStep) -> None:
    """Load the step's demo (unless it is in use) and its recipe."""
    if state.current_dataset().demo_key != step.demo:
        state.load_demo_dataset(step.demo)
    recipe = step.recipe()
    recipe.check_columns(state.current_workspace().original.columns)
    state.set_recipe(recipe, external=True)


def go(tour_key: str, index: int, confirmed: bool = False) -> None:
    """Show step ``index`` of a tour with its recipe (asking first when the user's data set or
    recipe would be replaced, unless ``confirmed``)."""
    tour = TOURS[tour_key]
    index = min(max(index, 0), len(tour.steps) - 1)
    step = tour.steps[index]
    ss = _ss()
    if not confirmed and needs_confirmation(step):
        ss[KEY_PENDING] = {"tour": tour_key, "step": index}
        return
    ss.pop(KEY_PENDING, None)
    ss.pop(KEY_ENDED, None)
    if active() is None:
        _save_previous()
    try:
        apply_step(step)
    except Exception as error:  # e.g. the demo could not be built: say so on the next run
        ss[KEY_MESSAGE] = state.user_message(error)
        return
    ss[KEY_ACTIVE] = {"tour": tour_key, "step": index}


def start(tour_key: str) -> None:
    go(tour_key, 0)


def confirm() -> None:
    current = pending()
    if current is not None:
        go(current[0].key, current[1], confirmed=True)


def cancel() -> None:
    _ss().pop(KEY_PENDING, None)


def move(delta: int) -> None:
    current = active()
    if current is not None:
        tour, index = current
        go(tour.key, index + delta)


def reset_step() -> None:
    move(0)


def finish() -> None:
    """End the tour; the page then offers to restore the data set from before it."""
    current = active()
    ss = _ss()
    ss.pop(KEY_ACTIVE, None)
    ss.pop(KEY_PENDING, None)
    if ss.get(KEY_SAVED) is not None:
        ss[KEY_ENDED] = current[0].title if current else "the tour"


def restore() -> None:
    """Put back the data set, recipe and source database from before the tour."""
    ss = _ss()
    saved = ss.pop(KEY_SAVED, None)
    ss.pop(KEY_ENDED, None)
    if saved is None:
        return
    jobs.board().cancel_all("the data changed")
    ss[state.KEY_WORKSPACE] = saved["workspace"]
    ss[state.KEY_RECIPE] = saved["recipe"]
    ss[state.KEY_DATASET] = saved["dataset"]
    if saved["source"] is None:
        ss.pop(state.KEY_SOURCE, None)
    else:
        ss[state.KEY_SOURCE] = saved["source"]
    ss[state.KEY_LAST_CHANGED] = None
    ss[state.KEY_EPOCH] = ss.get(state.KEY_EPOCH, 0) + 1
    state.flash(f"Restored {saved['dataset'].name} and its recipe.")


def keep_tour_data() -> None:
    """Forget the saved data set: the tour's demo stays."""
    _ss().pop(KEY_SAVED, None)
    _ss().pop(KEY_ENDED, None)


def pop_message() -> str | None:
    return _ss().pop(KEY_MESSAGE, None)
