"""`make book` itself, run on a small book (a scratch tree with the repository's Makefile, configuration and
extensions, and one tiny chapter): it ends with the HTML and the PDF, and each fault `make test` must catch
fails it, or fails the suite's check of what it executed (issue 39):

* a duplicate glue key: `jupyter-book build -W` stops (the fault that once broke `make book` only);
* a failed cell: papermill stops the run, nothing of the chapter is written;
* a page the table of contents lists and no chapter makes: the build stops;
* a warning that only an executed cell prints: the notebook check of tests/test_clean_outputs.py flags the
  executed chapter (which `make test` checks, since the book it checks is the one `make book` executed).

The tree is the book of its own folder (the Makefile exports POSTEVAL_BOOK_ROOT, posteval.paths); the package
and the virtual environment are this checkout's.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.test_clean_outputs import problems

from posteval import book, paths

TINY = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---

# A tiny chapter

The answer is {glue:text}`answer`.

```{code-cell} ipython3
:tags: [parameters]

seed = 0
```

```{code-cell} ipython3
from posteval.book import record

record("answer", 42 + seed)
```
"""
INTRO = "# A tiny book\n\nOne chapter: {doc}`01_tiny`.\n"
TOC = "format: jb-book\nroot: book/intro\nparts:\n  - caption: Chapters\n    chapters:\n      - file: book/01_tiny\n"
PLANTED_CELL = "\n```{{code-cell}} ipython3\n{}\n```\n"


def scratch_book(tmp_path: Path, *, cell: str = "", toc_extra: str = "") -> Path:
    """A book of one tiny chapter in a scratch folder, built by this checkout's Makefile and .venv."""
    root = tmp_path / "tiny-book"
    root.mkdir()
    for name in ("Makefile", "requirements.txt", "pyproject.toml", "_config.yml"):
        shutil.copy2(book.ROOT / name, root / name)  # mtimes kept: the .venv's stamp stays newer (no reinstall)
    for folder in ("_ext", "_static"):
        shutil.copytree(book.ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for link in (".venv", "vendor"):
        (root / link).symlink_to(book.ROOT / link)
    (root / "_toc.yml").write_text(TOC + toc_extra)
    (root / "book").mkdir()
    (root / "book" / "intro.md").write_text(INTRO)
    shutil.copy2(book.ROOT / "book" / "references.bib", root / "book" / "references.bib")
    (root / "chapters").mkdir()
    shutil.copy2(book.CHAPTERS / "jupytext.toml", root / "chapters" / "jupytext.toml")
    (root / "chapters" / "01_tiny.md").write_text(TINY + (PLANTED_CELL.format(cell) if cell else ""))
    return root


def make_book(root: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in (paths.ROOT_ENV, "MAKEFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "-C", str(root), "book", "PROFILE=ci"], capture_output=True, text=True,
                          env=env, timeout=600)


def _log(proc) -> str:
    return f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def test_make_book_ends_with_the_html_and_the_pdf_and_keeps_what_it_executed(tmp_path):
    # one make book serves two checks (each run costs a kernel, a jupyter-book build and a Chromium PDF): the
    # book ends with its HTML, PDF and record, and a warning that only the executed chapter prints (a planted
    # cell) does not stop make book but is in what it executed, where `make test` finds it
    root = scratch_book(tmp_path, cell='import warnings\n\nwarnings.warn("planted warning")')
    proc = make_book(root)
    assert proc.returncode == 0, _log(proc)
    assert (root / "_build" / "html" / "index.html").exists()
    assert (root / "_build" / "html" / "book" / "01_tiny.html").exists()
    assert (root / "_build" / "pdf" / "pointwise-metrics-mislead.pdf").read_bytes().startswith(b"%PDF")
    record = json.loads((root / "book" / "results" / "01_tiny.json").read_text())
    assert record["answer"] == 42 and record[book.META]["profile"] == "ci"
    assert not (book.ROOT / "book" / "results" / "01_tiny.json").exists(), "the runner wrote into the checkout"
    found = problems(json.loads((root / "book" / "executed" / "01_tiny.ipynb").read_text()))
    assert found and all("planted warning" in f for f in found), found


@pytest.mark.parametrize("cell, toc_extra, message", [
    ('record("answer", 42 + seed)  # planted: a second glue of the same key', "", "duplicate"),
    ('raise RuntimeError("planted failure")', "", "planted failure"),
    ("", "      - file: book/02_never_made\n", "02_never_made"),
], ids=["duplicate-glue-key", "failed-cell", "missing-page"])
def test_a_planted_fault_fails_make_book(tmp_path, cell, toc_extra, message):
    root = scratch_book(tmp_path, cell=cell, toc_extra=toc_extra)
    proc = make_book(root)
    assert proc.returncode != 0, _log(proc)
    assert message in proc.stdout + proc.stderr, _log(proc)
    assert not (root / "_build" / "pdf").exists(), "a PDF was made of a book that failed"


def test_the_book_root_doctests():
    import doctest

    assert doctest.testmod(paths).failed == 0
