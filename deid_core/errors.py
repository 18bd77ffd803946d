"""Exceptions raised by the core.

Every message is written for the person using the tool: it names the column or parameter at
fault and says what to do, and it never quotes data values (error text may be shown in a
hosted app or a log, and must not leak a record).
"""


class DeidError(ValueError):
    """Base class of every error the core raises on purpose."""


class DataError(DeidError):
    """A file or a column cannot be used as asked (unreadable, empty, wrong type...)."""


class RecipeError(DeidError):
    """A masking step or a recipe is invalid, or does not fit the data."""


class ModelFitError(DeidError):
    """The utility model cannot be fitted (no events, separation, collinearity...)."""


class Cancelled(Exception):
    """A long computation was stopped because its result is no longer wanted.

    Long computations call a ``progress(done, total)`` callback between chunks of work; a
    caller stops them by raising this from the callback (a newer value replaced the one being
    computed, the user left the page, or the session ended). Not a :class:`DeidError`: it is
    not a problem to report, and nothing computed before it is cached as a result.
    """
