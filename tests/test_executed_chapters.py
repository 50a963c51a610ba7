"""Each chapter `make book` executed (papermill, profile ci, book/executed/NN_name.ipynb) agrees with its
committed reference (chapters/NN_name.ipynb) by nbval's rules (tests/nbcompare.py, tests/nbval_sanitize.cfg):
deterministic outputs and verdict words compared, trained numbers (cells tagged ``nbval-ignore-output``)
executed and not compared, figures never by pixels. Run under `make test` (``--built-book``): every chapter
is executed once, by the book's own runner, and checked here without a second execution.

The comparator is checked on a notebook with a planted difference in each kind of output it compares.
"""

import copy
import json

import pytest
from tests.conftest import built_book_mode
from tests.nbcompare import differences, flipped_words, sanitize_patterns

from posteval import book

SOURCES = book.chapter_sources()
PATTERNS = sanitize_patterns(book.ROOT / "tests" / "nbval_sanitize.cfg")


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_the_executed_chapter_agrees_with_its_reference(request, source):
    if not built_book_mode(request.config):
        pytest.skip("make test-fast executes no chapter: `make test` compares what `make book` executed")
    executed = book.BOOK / "executed" / f"{source.stem}.ipynb"
    assert executed.exists(), f"{executed.relative_to(book.ROOT)} missing: make book did not execute it"
    meta = json.loads((book.RESULTS / f"{source.stem}.json").read_text())[book.META]
    assert meta["profile"] == "ci", f"{source.stem} was executed at profile {meta['profile']}: references are at ci"
    run, ref = json.loads(executed.read_text()), json.loads(source.with_suffix(".ipynb").read_text())
    found = differences(run, ref, PATTERNS)
    flips = flipped_words(run, ref)
    assert found == [], (f"{source.stem}: " + "\n".join(found)
                         + (f"\n{len(flips)} verdict words differ (adjusted p of each run against 0.05):\n"
                            + "\n".join(flips) if flips else ""))


def _cell(source, outputs, tags=(), count=1):
    return {"cell_type": "code", "source": source, "metadata": {"tags": list(tags)}, "execution_count": count,
            "outputs": outputs}


REFERENCE = {"cells": [
    {"cell_type": "markdown", "source": "# A chapter", "metadata": {}},
    _cell("n = 3", [], tags=["parameters"]),
    _cell("print(0.123456)", [{"output_type": "stream", "name": "stdout", "text": "0.123456\n"}]),
    _cell("verdict", [{"output_type": "execute_result", "execution_count": 3, "metadata": {},
                       "data": {"text/plain": "'yes'", "text/html": "<b>yes</b>"}}]),
    _cell("fig", [{"output_type": "display_data", "metadata": {},
                   "data": {"image/png": "iVBORw0KGgoAAAA", "text/plain": "<Figure size 640x480 with 1 Axes>"}}]),
    _cell("trained()", [{"output_type": "stream", "name": "stdout", "text": "loss 0.51\n"}],
          tags=["nbval-ignore-output"]),
    _cell("import warnings", [{"output_type": "stream", "name": "stderr", "text": "note\n"}]),
]}


def _executed(reference=REFERENCE):
    """The reference as the runner leaves it: papermill's injected cell, other counts and timings, a retrained
    number, another PNG, floats that agree to four decimals."""
    run = copy.deepcopy(reference)
    run["cells"].insert(2, _cell("# Parameters\nn = 3\n", [], tags=["injected-parameters"]))
    for i, cell in enumerate(c for c in run["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = i + 10
        cell["metadata"]["papermill"] = {"duration": 1.5}
    run["cells"][3]["outputs"][0]["text"] = "0.1234561\n"
    run["cells"][5]["outputs"][0]["data"]["image/png"] = "iVBORw0KGgoBBBB"
    run["cells"][6]["outputs"][0]["text"] = "loss 0.73\n"
    return run


def test_the_comparison_passes_what_nbval_passes():
    assert differences(_executed(), REFERENCE, PATTERNS) == []


@pytest.mark.parametrize("plant, message", [
    (lambda nb: nb["cells"][3]["outputs"][0].update(text="0.1244\n"), "stdout differs"),
    (lambda nb: nb["cells"][4]["outputs"][0]["data"].update({"text/plain": "'no'"}), "text/plain differs"),
    (lambda nb: nb["cells"][4]["outputs"][0]["data"].update({"text/html": "<b>no</b>"}), "text/html differs"),
    (lambda nb: nb["cells"][4]["outputs"][0]["data"].pop("text/html"), "missing output fields ['text/html']"),
    (lambda nb: nb["cells"][5]["outputs"][0]["data"].update({"text/plain": "<Table>"}), "text/plain differs"),
    (lambda nb: nb["cells"][7]["outputs"][0].update(text="Warning: planted\n"), "stderr differs"),
    (lambda nb: nb["cells"][7]["outputs"].append({"output_type": "stream", "name": "stdout", "text": "x"}),
     "unexpected output fields ['stdout']"),
    (lambda nb: nb["cells"][3]["outputs"].append(
        {"output_type": "error", "ename": "RuntimeError", "evalue": "planted", "traceback": []}), "raised RuntimeError"),
    (lambda nb: nb["cells"][4].update(source="verdict  # edited"), "source differs"),
    (lambda nb: nb["cells"].pop(4), "code cells executed"),
], ids=["stream", "plain", "html", "missing-field", "figure-text", "stderr", "extra-field", "error", "source", "cells"])
def test_the_comparison_fails_on_each_planted_difference(plant, message):
    run = _executed()
    plant(run)
    found = differences(run, REFERENCE, PATTERNS)
    assert len(found) == 1 and message in found[0], found


def test_the_comparator_doctests():
    import doctest

    from tests import nbcompare

    assert doctest.testmod(nbcompare).failed == 0


def test_notebooks_read_as_json_compare_as_nbformat_reads_them():
    """A notebook file stores multi-line text as a list of lines: compared as its joined string, a stream
    split over lines in one notebook and not in the other agrees, and one that differs still fails."""
    reference = copy.deepcopy(REFERENCE)
    reference["cells"][2]["outputs"][0]["text"] = ["0.123456\n", "second line\n"]
    run = _executed(reference)
    run["cells"][3]["outputs"][0]["text"] = "0.1234561\nsecond line\n"
    assert differences(run, reference, PATTERNS) == []
    run["cells"][3]["outputs"][0]["text"] = ["0.1234561\n", "other line\n"]
    found = differences(run, reference, PATTERNS)
    assert len(found) == 1 and "stdout differs" in found[0], found


def test_a_glued_figure_is_sanitised_as_the_rule_says_without_scanning_its_pixels():
    import re

    from tests.nbcompare import _fields

    png = "iVBORw0KGgo" + "AbC+/9=" * 300  # (the path rule alone is quadratic in the slashes of a real figure)
    glued = [{"output_type": "display_data", "metadata": {},
              "data": {"application/papermill.record/image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"}}]
    by_rule = png
    for regex, replace in PATTERNS:
        by_rule = re.sub(regex, replace, by_rule)
    assert _fields(glued, PATTERNS)["application/papermill.record/image/png"] == [by_rule] == ["<PNG>"]
