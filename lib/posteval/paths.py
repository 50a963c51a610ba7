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
>>> resolve_chapter("1").name
'01_total_variance.md'
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
CHAPTERS = ROOT / "chapters"


def chapter_sources() -> list[Path]:
    """All chapter sources ``chapters/NN_name.md``, in order."""
    return sorted(p for p in CHAPTERS.glob("[0-9][0-9]_*.md"))


def resolve_chapter(spec: str) -> Path:
    """The chapter source for a stem (``02_synthetic_bimodal``) or its number (``02`` or ``2``)."""
    sources = chapter_sources()
    for p in sources:
        if spec in (p.stem, p.name):
            return p
    if spec.isdigit():
        hits = [p for p in sources if p.stem.split("_", 1)[0] == f"{int(spec):02d}"]
        if len(hits) == 1:
            return hits[0]
    names = ", ".join(p.stem for p in sources) or "none"
    raise ValueError(f"chapter: no chapter matches {spec!r} (have: {names})")
