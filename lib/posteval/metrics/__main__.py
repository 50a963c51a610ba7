"""``python -m posteval.metrics report ...``: see :mod:`posteval.metrics.cli`."""

import sys

from .cli import main

sys.exit(main())
