"""Fixtures shared by several test modules."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from posteval.runtime import portable_environment

# The chapters' portable CPU kernels (posteval.runtime.PORTABLE_KERNELS) for this process and every kernel
# nbval starts, before numpy is imported here (it reads its setting at import) and before torch runs its
# first operation (seed_everything refuses a late choice of either).
assert "numpy" not in sys.modules, "numpy was imported before the suite could choose its portable kernels"
portable_environment()

from posteval import book, pages, parameters  # noqa: E402
# One thread per process: the suite runs two pytest workers on two cores beside the chapters' own
# worker processes, and a process whose OpenMP threads wait for each other on a busy core takes
# several times the CPU (measured: a flow's sampling, 3 CPU-s on one thread, 12-13 on two).
# The environment reaches the kernels nbval starts and the workers they spawn; torch here is set below.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402
from filelock import FileLock  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

#: The runner's test chapter (tests/fixtures/chapters/99_tiny.md) declares its parameters' ranges
#: as a new chapter would (test_book.py, test_clean_outputs.py run it).
parameters.CHAPTER_RULES["99_tiny"] = {"n": parameters.count(0), "fail": parameters.boolean()}


def replicated_measurements(means, *, n=2000, seed=0, n_resamples=300, seeds=(0, 1, 2), **kwargs):
    """Measurements (posteval.metrics.intervals) of a replicated protocol table: per model a mean
    squared error ``means[model]``, three seeds (one row for "oracle", an untrained model);
    ``kwargs`` go to ``Measurements.from_replicated_table`` (transforms, derived)."""
    import numpy as np

    from posteval import metrics
    from posteval.metrics.intervals import Measurements
    from posteval.metrics.report import replicate_row

    rng = np.random.default_rng(seed)
    inputs = {}
    truth = rng.normal(size=n)
    for name, mu in means.items():
        for r in ([None] if name == "oracle" else seeds):
            inputs[replicate_row(name, r)] = truth + rng.normal(scale=np.sqrt(mu), size=n) + 0.001 * (r or 0)
    table, reps = metrics.protocol_report(inputs, truth, level=0.95, n_resamples=n_resamples, seed=seed, replicates=True)
    return Measurements.from_replicated_table(table.set_index("model"), reps,
                                              lambda m: [replicate_row(m, r) for r in seeds], list(means), **kwargs)


def pytest_addoption(parser):
    parser.addoption(
        "--built-book", action="store_true", default=False,
        help="check the book `make book` has just built (book/executed/, _build/html, _build/pdf) instead of "
             "building one from the committed reference notebooks (`make test` passes it; `make test-fast` does not)")


#: the test modules that hold the suite's longest fixtures (Chromium over every page and the PDF; make book on
#: a scratch book; JupyterLab), in the order pytest-xdist hands them out (the Makefile passes
#: --no-loadscope-reorder): at the start, so that the short modules fill in around them (with --dist loadfile
#: a long module handed out last is waited for alone); the second needs no built site, so the second worker
#: works while the first builds it
LONGEST_FIRST = ("test_reading.py", "test_make_book.py", "test_jupyterlab.py", "test_html.py", "test_chapters.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each module keeps its order


def built_book_mode(config) -> bool:
    """True under `make test`: the page checks see what `make book` executed and built."""
    return bool(config.getoption("--built-book"))


def _check_built_book() -> Path:
    """The HTML `make book` built from the chapters it executed, after checking that every chapter was executed."""
    html = book.ROOT / "_build" / "html"
    missing = [f"book/executed/{src.stem}.ipynb" for src in book.chapter_sources()
               if not (book.ROOT / "book" / "executed" / f"{src.stem}.ipynb").exists()]
    assert not missing, f"--built-book: {missing} not executed (make book)"
    assert (html / "index.html").exists(), "--built-book: _build/html/index.html missing (make book)"
    return html


@pytest.fixture(scope="session")
def executed_chapters(request, built_site) -> Path:
    """The folder of the whole executed chapters the built HTML was made from: `make book`'s book/executed/
    under --built-book, else the reference notebooks' copies in the scratch site."""
    if built_book_mode(request.config):
        return book.ROOT / "book" / pages.EXECUTED.name
    return built_site.parent.parent / "book" / pages.EXECUTED.name


@pytest.fixture(scope="session")
def built_site(request, tmp_path_factory):
    """The built HTML book the page checks read.

    Under ``--built-book`` (``make test``): ``_build/html``, which ``make book`` has just built with -W from the
    chapters it executed (book/executed/NN_name.ipynb). Otherwise (``make test-fast``): the book built with -W
    from the reference notebooks, in a scratch copy of the tree: the reference notebooks
    chapters/NN_name.ipynb stand in for the executed chapters, split into their pages as the runner splits
    them (posteval.pages); execution is off. The pytest workers share one build per run.
    """
    if built_book_mode(request.config):
        return _check_built_book()
    # pytest-xdist's workers share the parent of their base temporary folders (one per run): the first worker
    # to come builds the site there, under a lock, and the others read it (one build per run, not one per worker)
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    html = shared / "reference-site" / "_build" / "html"
    with FileLock(shared / "reference-site.lock"):
        if not (html / "index.html").exists():
            _build_reference_site(shared / "reference-site")
    return html


def _build_reference_site(site: Path) -> None:
    """Build the book with -W from the reference notebooks into ``site`` (a scratch copy of the tree)."""
    root = book.ROOT
    shutil.rmtree(site, ignore_errors=True)
    site.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(root / name, site / name)
    for folder in ("_static", "_ext"):
        shutil.copytree(root / folder, site / folder)
    (site / "book").mkdir()
    for f in (root / "book").glob("*.md"):
        shutil.copy(f, site / "book" / f.name)
    shutil.copy(root / "book" / "references.bib", site / "book" / "references.bib")
    if (root / "book" / "figures").is_dir():  # figures the book's pages include (notation.md's operating characteristic)
        shutil.copytree(root / "book" / "figures", site / "book" / "figures")
    (site / "book" / pages.EXECUTED.name).mkdir()
    for src in book.chapter_sources():
        executed = site / "book" / pages.EXECUTED.name / f"{src.stem}.ipynb"
        shutil.copy(src.with_suffix(".ipynb"), executed)
        pages.write_pages(executed, site / "book", toc_file=site / "_toc.yml")
    # each chapter page links its MyST source chapters/NN_name.md (_ext/source_links.py)
    (site / "chapters").mkdir()
    for src in book.chapter_sources():
        shutil.copy(src, site / "chapters" / src.name)
    mathjax = root / "vendor" / "mathjax" / "tex-mml-chtml.js"
    assert mathjax.exists(), "vendored MathJax missing: run `make setup`"
    (site / "vendor").symlink_to(root / "vendor")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(site), "-W", "-n", "--keep-going"], capture_output=True, text=True)
    assert proc.returncode == 0, f"book build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"


CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--virtual-time-budget=20000",
]


@pytest.fixture(scope="session")
def chromium(tmp_path_factory):
    """Run headless Debian Chromium with the given arguments (e.g. --dump-dom URL); returns the process."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "Debian chromium is not installed (make test installs it)"
    profile = tmp_path_factory.mktemp("chromium-profile")

    def run(*args, profile_dir=None):
        """``profile_dir``: a profile of the caller's own, for Chromiums run side by side (a profile is
        locked by the browser that uses it)."""
        return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile_dir or profile}", *args],
                              capture_output=True, text=True, timeout=120)

    return run
