"""The chapters as a book: source/notebook pairs in sync, the table of contents complete,
a clean -W build of the reference notebooks, and the built page checked in headless Chromium.

nbval (run on chapters/*.ipynb in the same pytest call) re-executes every chapter once and
compares with these reference outputs, so the book built here shows what the code produces.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import numpy as np
import pytest
import yaml

from lib import book

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
    assert ipynb.exists(), f"{ipynb.name} missing: run python -m lib.book reference {source.stem[:2]}"
    md, nb = _cells_md(source), _cells_ipynb(ipynb)
    first = next((i for i, (a, b) in enumerate(zip(md, nb)) if a != b), min(len(md), len(nb)))
    assert md == nb, (f"{source.name} and {ipynb.name} differ from cell {first} on (prose or code, "
                      f"{len(md)} vs {len(nb)} cells): re-run the reference")
    cells = [c for c in json.loads(ipynb.read_text())["cells"] if c["cell_type"] == "code"]
    assert all(c.get("execution_count") for c in cells), f"{ipynb.name} has cells that never ran"
    errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{ipynb.name} stores an error output"


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] for c in part["chapters"]]


def test_every_chapter_is_in_the_table_of_contents():
    in_toc = {Path(f).name for f in _toc_files() if Path(f).name[:2].isdigit()}
    assert in_toc == {s.stem for s in SOURCES}


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """The book built with -W from the reference notebooks, in a scratch copy of the tree."""
    site = tmp_path_factory.mktemp("site")
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, site / name)
    shutil.copytree(ROOT / "_static", site / "_static")
    (site / "book").mkdir()
    for f in (ROOT / "book").glob("*.md"):
        shutil.copy(f, site / "book" / f.name)
    shutil.copy(ROOT / "book" / "references.bib", site / "book" / "references.bib")
    for src in SOURCES:
        shutil.copy(src.with_suffix(".ipynb"), site / "book" / f"{src.stem}.ipynb")
    mathjax = ROOT / "vendor" / "mathjax" / "tex-mml-chtml.js"
    assert mathjax.exists(), "vendored MathJax missing: run `make setup`"
    (site / "vendor").symlink_to(ROOT / "vendor")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(site), "-W", "-n", "--keep-going"], capture_output=True, text=True)
    assert proc.returncode == 0, f"book build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
    return site / "_build" / "html"


def test_book_builds_cleanly_with_every_page(built_site):
    assert (built_site / "index.html").exists()
    for f in _toc_files():
        assert (built_site / f"{f}.html").exists(), f
    assert (built_site / "mathjax" / "tex-mml-chtml.js").exists()


CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--virtual-time-budget=20000",
]


def _chromium(tmp_path, *args):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "Debian chromium is not installed (make test installs it)"
    profile = tmp_path / "chromium-profile"
    return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("source", SOURCES[:1], ids=[s.stem for s in SOURCES[:1]])
def test_page_typesets_math_and_shows_figures_offline(built_site, tmp_path, source):
    page = built_site / "book" / f"{source.stem}.html"
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert dom.count("<mjx-container") >= 5, "MathJax did not typeset the page"
    images = [s for s in dom.split("<img")[1:] if ".png" in s.split(">", 1)[0]]
    assert images, "no figure on the page"
    shot = tmp_path / "page.png"
    _chromium(tmp_path, "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri())
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[0] >= 2000 and pixels.shape[1] >= 1200
    assert pixels[..., :3].std() > 0.05, "the screenshot is blank"
