"""The chapters as a book: source/notebook pairs in sync, the table of contents complete,
a clean -W build (under `make test` the one `make book` made from the chapters it executed, under
`make test-fast` one of the reference notebooks), and the built page checked in headless Chromium.

`make test` executes every chapter once (`make book`, papermill) and compares each executed chapter with these
reference outputs by nbval's rules (tests/test_executed_chapters.py), so the reference shows what the code produces.
"""

import json
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest
import yaml

from posteval import book
from posteval.lab import toc_pages

ROOT = book.ROOT
SOURCES = book.chapter_sources()


def _cells_md(path):
    """(type, source) of every code and markdown cell of a MyST chapter."""
    return [(c.cell_type, c.source.strip()) for c in jupytext.read(path).cells if c.cell_type in ("code", "markdown")]


def _cells_ipynb(path):
    """(type, source) of every code and markdown cell of a notebook."""
    cells = json.loads(path.read_text())["cells"]
    return [(c["cell_type"], ("".join(c["source"]) if isinstance(c["source"], list) else c["source"]).strip())
            for c in cells if c["cell_type"] in ("code", "markdown")]


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_pair_in_sync_and_executed(source):
    ipynb = source.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} missing: run python -m posteval.book reference {source.stem[:2]}"
    md, nb = _cells_md(source), _cells_ipynb(ipynb)
    first = next((i for i, (a, b) in enumerate(zip(md, nb)) if a != b), min(len(md), len(nb)))
    assert md == nb, (f"{source.name} and {ipynb.name} differ from cell {first} on (prose or code, "
                      f"{len(md)} vs {len(nb)} cells): re-run the reference")
    cells = [c for c in json.loads(ipynb.read_text())["cells"] if c["cell_type"] == "code"]
    assert all(c.get("execution_count") for c in cells), f"{ipynb.name} has cells that never ran"
    errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{ipynb.name} stores an error output"


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_no_cell_relies_on_a_trailing_semicolon(source):
    """A cell ending with ';' relies on IPython's history to silence its value: a kernel that executes
    cells without storing them there (nbval's, a client of its own) shows the value, which the reference does
    not have. The chapters assign instead."""
    ends = [i for i, (kind, src) in enumerate(_cells_md(source))
            if kind == "code" and src.splitlines() and src.splitlines()[-1].rstrip().endswith(";")]
    assert not ends, f"{source.name}: cells {ends} (all cells counted) end with ';': write '_ = ...'"


GLUE_TEXT = re.compile(r"\{glue:text\}`([^`]*)`")


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_glued_text_has_no_format_spec_of_its_own(source):
    """`record` glues numbers already written in the book's one format (posteval.numformat); a
    format spec in the prose would re-format that text (and fail on "40,000" or "–")."""
    with_spec = [k for k in GLUE_TEXT.findall(source.read_text()) if ":" in k]
    assert not with_spec, f"{source.name}: glue:text with a format spec: {with_spec[:5]}"


def test_the_format_spec_check_sees_a_spec():
    assert GLUE_TEXT.findall("a {glue:text}`n:,d` b {glue:text}`x`") == ["n:,d", "x"]


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] for c in part["chapters"]]


def test_every_chapter_is_in_the_table_of_contents():
    in_toc = {Path(f).name for f in _toc_files() if Path(f).name[:2].isdigit()}
    assert in_toc == {s.stem for s in SOURCES}


# built_site: the book built with -W from the reference notebooks (tests/conftest.py).


def test_book_builds_cleanly_with_every_page(built_site):
    assert (built_site / "index.html").exists()
    for f in toc_pages(yaml.safe_load((ROOT / "_toc.yml").read_text())):  # sub-pages of the chapters included
        assert (built_site / f"{f}.html").exists(), f
    assert (built_site / "mathjax" / "tex-mml-chtml.js").exists()


@pytest.mark.parametrize("source", SOURCES[:1], ids=[s.stem for s in SOURCES[:1]])
def test_page_typesets_math_and_shows_figures_offline(built_site, chromium, tmp_path, source):
    page = built_site / "book" / f"{source.stem}.html"
    dom = chromium("--dump-dom", page.as_uri()).stdout
    assert dom.count("<mjx-container") >= 5, "MathJax did not typeset the page"
    images = [s for s in dom.split("<img")[1:] if ".png" in s.split(">", 1)[0]]
    assert images, "no figure on the page"
    shot = tmp_path / "page.png"
    chromium("--window-size=1280,2400", f"--screenshot={shot}", page.as_uri())
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[0] >= 2000 and pixels.shape[1] >= 1200
    assert pixels[..., :3].std() > 0.05, "the screenshot is blank"
