"""Chapters 2-4 are split into pages for the HTML book (posteval.pages): _toc.yml lists exactly the
pages the split makes, every line of the chapter lands on one page, each page starts with its H1
and carries the glued values it shows. Read from the reference notebooks; nothing is executed."""

import json
import re

import nbformat
import pytest
import yaml

from posteval import book, pages

TOC = yaml.safe_load((book.ROOT / "_toc.yml").read_text())
SOURCES = book.chapter_sources()
IDS = [s.stem for s in SOURCES]
ADDED = ("posteval-page-glue", "posteval-page-sections")  # the cells the split adds


def _reference(source):
    return nbformat.read(source.with_suffix(".ipynb"), as_version=4)


def _split(source):
    return pages.split_chapter(_reference(source), source.stem)


def test_chapters_2_to_4_are_split_and_chapters_1_and_5_are_one_page():
    assert {s.stem[:2]: pages.toc_sections(TOC, s.stem) is not None for s in SOURCES} == {
        "01": False, "02": True, "03": True, "04": True, "05": False}


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_the_table_of_contents_lists_the_pages_the_split_makes(source):
    listed = pages.toc_sections(TOC, source.stem)
    if listed is None:
        return
    made = _split(source)
    assert pages.toc_problems(made, TOC, source.stem) == [], "update the chapter's `sections` in _toc.yml"
    assert [p.name for p in made[1:]] == listed


def _unsplit(page_cells, promoted: bool) -> tuple[list[str], list[str]]:
    """(non-blank markdown lines, code sources) of a page's own cells, headings put back a level down."""
    lines, code = [], []
    for cell in page_cells:
        if cell.get("id") in ADDED:
            continue
        if cell.cell_type == "code":
            code.append(cell.source)
            continue
        text = cell.source.split("\n")
        for i, line in pages.prose_lines(text):
            if promoted and pages._HEADING.match(line):
                text[i] = "#" + re.sub(r"^# \d+\. (?=\D)", "# ", line)  # "# 3. Exercises": "## Exercises" in the chapter
        lines += [line for line in text if line.strip()]
    return lines, code


@pytest.mark.parametrize("source", SOURCES[1:], ids=IDS[1:])
def test_every_line_of_the_chapter_is_on_one_page_in_order(source):
    nb = _reference(source)
    want = _unsplit(nb.cells, promoted=False)
    got_lines, got_code = [], []
    for k, page in enumerate(pages.split_chapter(nb, source.stem)):
        lines, code = _unsplit(page.notebook.cells, promoted=k > 0)
        got_lines += lines
        got_code += code
    assert (got_lines, got_code) == want


@pytest.mark.parametrize("source", SOURCES[1:], ids=IDS[1:])
def test_each_page_starts_with_its_title_and_shows_only_values_it_carries(source):
    made = _split(source)
    for page in made:
        cells = page.notebook.cells
        markdown = [c for c in cells if c.cell_type == "markdown"]
        prose = [line for c in markdown for _, line in pages.prose_lines(c.source.split("\n"))]
        headings = [line for line in prose if pages._HEADING.match(line)]
        assert headings[0] == f"# {page.title}", f"{page.name}: first heading {headings[0]!r}"
        assert [h for h in headings if h.startswith("# ")] == [headings[0]], f"{page.name}: more than one H1"
        first = next(line for line in markdown[0].source.split("\n") if not pages._LABEL.match(line))
        assert first == f"# {page.title}", f"{page.name}: starts with {first!r}"
        glued = [out["metadata"]["scrapbook"]["name"] for c in cells if c.cell_type == "code"
                 for out in c.outputs if out.get("metadata", {}).get("scrapbook")]
        assert len(glued) == len(set(glued)), f"{page.name}: a key glued twice (myst-nb warns)"
        missing = set(pages.glue_keys_shown(cells)) - set(glued)
        assert not missing, f"{page.name}: shows glued values it does not carry: {sorted(missing)[:5]}"
        assert page.notebook.metadata[pages.META] == {"chapter": source.stem,
                                                      "executed": f"executed/{source.stem}.ipynb"}
    listing = made[0].notebook.cells[-1].source
    assert all(f"{{doc}}`{p.name}`" in listing for p in made[1:]), "the chapter's page lists its sections"


def _chapter():
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 2. A chapter\n\n(sec-in-brief)=\n## In brief\n\nIt is {glue:text}`x.b:.2f`."),
        nbformat.v4.new_code_cell("record('x.a', 1)", outputs=[_glued("x.a")]),
        nbformat.v4.new_markdown_cell("Closing words.\n\n(sec-a)=\n(sec-a2)=\n## 2.1 The problem\n\nUses "
                                      "{glue:text}`x.a`.\n\n```python\n## not a heading\n```\n\n### Details"),
        nbformat.v4.new_code_cell("record('x.b', 2)", outputs=[_glued("x.b")]),
        nbformat.v4.new_markdown_cell("## 2.2 Figures\n\n```{glue:figure} x.a\n```\n\n## Exercises\n\nNone."),
    ])


def _glued(key):
    return nbformat.v4.new_output("display_data", data={f"application/papermill.record/text/plain": key},
                                  metadata={"scrapbook": {"name": key, "mime_prefix": "application/papermill.record/"}})


def test_a_chapter_is_split_at_its_numbered_sections_with_their_labels():
    made = pages.split_chapter(_chapter(), "02_a")
    assert [(p.name, p.title) for p in made] == [("02_a", "2. A chapter"), ("02_a_1", "2.1 The problem"),
                                                 ("02_a_2", "2.2 Figures"), ("02_a_exercises", "2. Exercises")]
    opening, first, second, exercises = (p.notebook.cells for p in made)
    assert opening[-2].source == "Closing words." and "## In brief" in opening[1].source
    assert first[1].source.startswith("(sec-a)=\n(sec-a2)=\n# 2.1 The problem\n")
    assert "## not a heading" in first[1].source and first[1].source.endswith("## Details")
    assert first[1]["id"] != opening[-2]["id"]
    # glued values: each page carries those it shows and does not glue itself, in a removed first cell
    assert [o.metadata["scrapbook"]["name"] for o in opening[0].outputs] == ["x.b"]
    assert opening[0].metadata["tags"] == ["remove-cell"]
    assert [o.metadata["scrapbook"]["name"] for o in first[0].outputs] == ["x.a"]
    assert [o.metadata["scrapbook"]["name"] for o in second[0].outputs] == ["x.a"]
    assert [c.cell_type for c in exercises] == ["markdown"] and exercises[0].source == "# 2. Exercises\n\nNone."
    assert opening[-1].source.endswith("* {doc}`02_a_1`\n* {doc}`02_a_2`\n* {doc}`02_a_exercises`")


def test_a_section_numbered_for_another_chapter_or_a_repeated_page_is_refused():
    nb = _chapter()
    nb.cells[4].source = "## 3.2 Figures"
    with pytest.raises(ValueError, match="numbered for chapter 3"):
        pages.split_chapter(nb, "02_a")
    nb.cells[4].source = "## 2.1 Again"
    with pytest.raises(ValueError, match=r"same page \['02_a_1'\]"):
        pages.split_chapter(nb, "02_a")


def _toc(tmp_path, sections):
    entry = {"file": "book/02_a"} | ({"sections": [{"file": f"book/{s}"} for s in sections]} if sections else {})
    (tmp_path / "_toc.yml").write_text(yaml.safe_dump({"format": "jb-book", "root": "intro",
                                                       "parts": [{"caption": "Chapters", "chapters": [entry]}]}))
    return tmp_path / "_toc.yml"


def test_pages_are_written_as_the_table_of_contents_lists_them(tmp_path):
    executed = tmp_path / "book" / "executed" / "02_a.ipynb"
    executed.parent.mkdir(parents=True)
    nbformat.write(_chapter(), executed)
    (tmp_path / "book" / "02_a_9.ipynb").write_text("{}")  # a page of an earlier split
    toc = _toc(tmp_path, ["02_a_1", "02_a_2", "02_a_exercises"])
    written = pages.write_pages(executed, tmp_path / "book", toc_file=toc)
    assert [p.name for p in written] == ["02_a.ipynb", "02_a_1.ipynb", "02_a_2.ipynb", "02_a_exercises.ipynb"]
    assert sorted(p.name for p in (tmp_path / "book").glob("*.ipynb")) == sorted(p.name for p in written)
    assert pages.write_pages(executed, tmp_path / "book", toc_file=toc) == written
    before = {p: p.read_bytes() for p in written}
    assert all(p.read_bytes() == before[p] for p in pages.write_pages(executed, tmp_path / "book", toc_file=toc)), \
        "the same chapter makes the same pages, byte for byte"
    # a heading renamed without updating _toc.yml: refused, nothing written
    nb = _chapter()
    nb.cells[4].source = nb.cells[4].source.replace("## Exercises", "## Problems")
    nbformat.write(nb, executed)
    with pytest.raises(ValueError, match=r"02_a_problems"):
        pages.write_pages(executed, tmp_path / "book", toc_file=toc)
    assert {p: p.read_bytes() for p in written} == before
    # no sections listed: the chapter is one page, all of it
    (tmp_path / "one").mkdir()
    [page] = pages.write_pages(executed, tmp_path / "one", toc_file=_toc(tmp_path, []))
    assert json.loads(page.read_text())["cells"] == json.loads(executed.read_text())["cells"]


def test_the_examples_of_the_module_hold():
    import doctest

    assert doctest.testmod(pages).failed == 0
