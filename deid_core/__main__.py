"""``python -m deid_core``: see :mod:`deid_core.cli`."""

import sys

from deid_core.cli import main

sys.exit(main())
