"""The search's defaults and bounds, in a module of their own: the command line checks its
flags against them before it loads the libraries the search computes with (issue 32)."""

#: Replicates per random recipe by default, and the most a search may ask for.
DEFAULT_SEARCH_REPLICATES = 10
MAX_SEARCH_REPLICATES = 50
#: The most settings a default column gets (the first is "as it is").
DEFAULT_SETTINGS_PER_COLUMN = 6
