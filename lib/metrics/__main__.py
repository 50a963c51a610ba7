"""``python -m lib.metrics report ...``: see :mod:`lib.metrics.cli`."""

import sys

from .cli import main

sys.exit(main())
