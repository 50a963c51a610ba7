"""What readers see is clean: no warning on a stderr stream and no absolute path of the machine
that ran it, in the reference notebooks (chapters/*.ipynb) and in the built book (the executed
chapters book/executed/*.ipynb and their pages book/*.ipynb, when `make book` or
`python -m posteval.book run` has made them)."""

import json
import re

import nbformat
import pytest
from nbclient import NotebookClient

from posteval import book

NOTEBOOKS = (sorted(book.CHAPTERS.glob("[0-9][0-9]_*.ipynb")) + sorted((book.BOOK / "executed").glob("[0-9][0-9]_*.ipynb"))
             + sorted(book.BOOK.glob("[0-9][0-9]_*.ipynb")))
ABSOLUTE_PATH = re.compile(
    r"(?<![\w.~-])/(?:home|root|work|tmp|usr|opt|var|mnt|srv|Users|private|scratch|nix|etc|lib|proc)/"
    r"|file://|[A-Za-z]:\\\\(?:Users|Windows|Program)"
    # the checkout's own root, wherever it lies (CI checks out under /check/...)
    + "|" + re.escape(str(book.ROOT))
)
TEXT_MIMES = ("text/plain", "text/html", "text/markdown", "text/latex", "application/json")


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value if isinstance(value, str) else json.dumps(value)


def _output_texts(out):
    """(what, text) for every text a reader sees of one output."""
    if out.get("output_type") == "stream":
        yield f"{out.get('name')} stream", _text(out.get("text", ""))
    elif out.get("output_type") == "error":
        yield "error", out.get("evalue", "") + "\n".join(out.get("traceback", []))
    for mime in TEXT_MIMES:
        if mime in out.get("data", {}):
            yield mime, _text(out["data"][mime])


def problems(nb: dict) -> list[str]:
    """Warnings on stderr and absolute paths anywhere in outputs or metadata of a notebook."""
    found = []
    for hit in ABSOLUTE_PATH.finditer(json.dumps(nb.get("metadata", {}))):
        found.append(f"notebook metadata: absolute path {hit.group()!r}")
    for i, cell in enumerate(nb["cells"]):
        if ABSOLUTE_PATH.search(json.dumps(cell.get("metadata", {}))):
            found.append(f"cell {i} metadata: absolute path")
        for out in cell.get("outputs", []):
            for what, text in _output_texts(out):
                if what == "stderr stream" and "Warning" in text:
                    found.append(f"cell {i}: stderr warning: {text.strip().splitlines()[0][:200]}")
                hit = ABSOLUTE_PATH.search(text)
                if hit:
                    line = next(ln for ln in text.splitlines() if hit.group() in ln)
                    found.append(f"cell {i} {what}: absolute path: {line.strip()[:200]}")
    return found


def test_the_check_finds_warnings_and_paths():
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=f"{book.ROOT}/lib/x.py:3: FutureWarning: old\n")]
    nb = nbformat.v4.new_notebook(cells=[cell], metadata={"papermill": {"output_path": "/tmp/x.ipynb"}})
    assert len(problems(nb)) == 3
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="chi2 / ndf = 1.0, GeV/c, ../data, a/b/c\n")]
    assert problems(nbformat.v4.new_notebook(cells=[cell])) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in NOTEBOOKS])
def test_notebook_has_no_warning_and_no_absolute_path(path):
    found = problems(json.loads(path.read_text()))
    assert not found, f"{path.relative_to(book.ROOT)}:\n" + "\n".join(found)


def test_library_progress_bars_import_silently_in_a_kernel():
    """tqdm.auto warns about missing ipywidgets on its first import in a kernel; posteval.progress does not."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import posteval.progress\nimport posteval.models.training")])
    NotebookClient(nb, timeout=120, kernel_name="python3", config=book._ipc_kernels(),
                   resources={"metadata": {"path": str(book.ROOT)}}).execute()
    assert nb.cells[0].outputs == []


def test_runner_kernel_logs_no_warning_and_stores_no_absolute_path(tmp_path, monkeypatch, capfd):
    """`posteval.book.run_chapter` runs its kernel over IPC (no TCP warning on the kernel's stderr) and
    writes papermill's paths relative to the repository."""
    (tmp_path / "params" / "ci").mkdir(parents=True)
    monkeypatch.setattr(book, "PARAMS", tmp_path / "params")
    book.run_chapter(book.ROOT / "tests" / "fixtures" / "chapters" / "99_tiny.md", "ci", out_dir=tmp_path / "out")
    log = capfd.readouterr().err
    assert "without encryption" not in log and "Warning" not in log, log
    for path in (tmp_path / "out" / "executed" / "99_tiny.ipynb", tmp_path / "out" / "99_tiny.ipynb"):  # run, page
        nb = json.loads(path.read_text())
        assert nb["metadata"]["papermill"]["input_path"] == "tests/fixtures/chapters/99_tiny.md"
        assert problems(nb) == []


@pytest.mark.parametrize("path", sorted(book.CHAPTERS.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.name)
def test_reference_notebook_is_written_as_nbformat_writes_it(path):
    """A reference notebook edited by hand (a patched output) must keep nbformat's serialisation (sorted keys,
    one-space indent, characters unescaped), or saving the unedited chapter in JupyterLab rewrites it."""
    text = path.read_text(encoding="utf-8")
    assert nbformat.writes(nbformat.reads(text, as_version=4)) + "\n" == text, (
        f"{path.name} is not in nbformat's serialisation: rewrite it with nbformat.write")
