"""Where the book lies: the one home of its root folder.

The root is the folder that holds ``chapters/``, ``params/``, ``book/`` and ``_toc.yml``: the value of
the environment variable ``POSTEVAL_BOOK_ROOT`` when it is set (the Makefile sets it to its own folder,
so that ``make -C OTHER book`` builds the book of ``OTHER``), else the checkout this package was
installed from (editable install: ``lib/posteval/`` lies two folders below it).

>>> import os
>>> book_root({"POSTEVAL_BOOK_ROOT": "/srv/my-book"}).as_posix()
'/srv/my-book'
>>> (book_root({}) / "lib" / "posteval" / "paths.py").exists()
True
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT_ENV = "POSTEVAL_BOOK_ROOT"


def book_root(environ=None) -> Path:
    """The book's root folder (``POSTEVAL_BOOK_ROOT`` or the checkout of this package), absolute."""
    environ = os.environ if environ is None else environ
    given = environ.get(ROOT_ENV)
    if given:
        return Path(given).resolve()
    return Path(__file__).resolve().parents[2]


ROOT = book_root()
