"""Guided tours of the Learn page: published analyses re-lived on the demo data sets.

A tour is content: one TOML file per tour in this folder (its source, what it reproduces
exactly and what only in shape, and its steps: text, demo, pre-set recipe, question and live
figures with the paper's expected values), described in ``README.md``. The package:

- :mod:`~dashboard.tours.content` reads and checks the files (``TOURS``);
- :mod:`~dashboard.tours.figure_functions` computes what the figures show (the only Python a
  new tour may need);
- :mod:`~dashboard.tours.engine` turns a step into its live figures and checks them against
  the paper's;
- :mod:`~dashboard.tours.session` runs a tour in the session and gives the user's data back.
"""

from dashboard.tours.content import TOURS, Tour, TourFileError, TourStep, load_tours
from dashboard.tours.engine import Figure, live_figures, step_figures
from dashboard.tours.session import (
    active,
    apply_step,
    cancel,
    confirm,
    confirmation_text,
    ended,
    finish,
    go,
    keep_tour_data,
    move,
    needs_confirmation,
    pending,
    pop_message,
    reset_step,
    restore,
    saved_name,
    start,
)

__all__ = [
    "TOURS",
    "Figure",
    "Tour",
    "TourFileError",
    "TourStep",
    "active",
    "apply_step",
    "cancel",
    "confirm",
    "confirmation_text",
    "ended",
    "finish",
    "go",
    "keep_tour_data",
    "live_figures",
    "load_tours",
    "move",
    "needs_confirmation",
    "pending",
    "pop_message",
    "reset_step",
    "restore",
    "saved_name",
    "start",
    "step_figures",
]
