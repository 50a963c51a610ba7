"""A chapter's HTML pages: the executed chapter split into its opening and one page per section.

A long chapter reads better as several pages (QuantEcon and d2l do the same). The chapter stays
one notebook everywhere else (``chapters/NN_name.md`` and its reference ``.ipynb``, nbval,
JupyterLab, the papermill run); only the HTML book sees it split, into notebooks beside each
other in ``book/``:

* ``book/NN_name.ipynb``, the chapter's page (its URL is the chapter's): the title, "In brief"
  and the prose before the first numbered section ("## 3.1 ..."), then a list of its sections;
* ``book/NN_name_K.ipynb`` for each numbered section "## N.K ..." and ``book/NN_name_<slug>.ipynb``
  for each section after them without a number ("## Key takeaways" -> ``NN_name_key_takeaways``):
  the section from its label line ``(sec-...)=`` to the next page's, its headings one level up
  (a page starts with its H1; the number "3.1" stays in the title, and a closing section's title
  takes its chapter's number, "3. Key takeaways", so that a page never says only "Exercises").

**Where the whole executed chapter lives.** ``python -m posteval.book run`` writes it to
``book/executed/NN_name.ipynb`` (:data:`EXECUTED`), then writes the pages from it. ``_toc.yml``
lists the pages only (``only_build_toc_files: true``), so the whole notebook is not a page; each
page's download menu offers it (``_ext/source_links.py``, which finds it through the page's
notebook metadata ``posteval_page``), and the tests read it as "the executed chapter".

**Which chapters are split**: those whose entry in ``_toc.yml`` has ``sections``; the others
(chapter 1) are one page, a copy of the whole notebook. The sections listed must be the pages the
split makes, in order (:func:`toc_problems`; ``tests/test_pages.py``), so a renamed heading
cannot drop a page from the book unnoticed: :func:`write_pages` refuses a mismatch.

**Glue.** myst-nb pastes a ``{glue:text}`key``` only from the glued outputs of its own page (and
warns about a key glued twice in one page). A page that shows a value glued on another page of
the chapter gets a first code cell, tagged ``remove-cell`` (never shown), whose outputs are copies
of those glued outputs: only the keys the page shows and does not glue itself. Every other
reference (``{numref}``, ``{ref}``, ``{doc}``, ``{cite}``, equations) is resolved across pages by
Sphinx; the pages lie flat in ``book/`` so a ``{doc}`01_total_variance``` still resolves.

Example::

    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_markdown_cell("# 2. A chapter\\n\\n## In brief\\n\\nIt is {glue:text}`x`."),
    ...     nbformat.v4.new_markdown_cell("(sec-a)=\\n## 2.1 The problem\\n\\n### Details"),
    ...     nbformat.v4.new_markdown_cell("## Exercises")])
    >>> [(p.name, p.title) for p in split_chapter(nb, "02_a")]
    [('02_a', '2. A chapter'), ('02_a_1', '2.1 The problem'), ('02_a_exercises', '2. Exercises')]
    >>> split_chapter(nb, "02_a")[1].notebook.cells[0].source
    '(sec-a)=\\n# 2.1 The problem\\n\\n## Details'

From a shell (the executed chapters already in ``book/executed/``, e.g. after editing ``_toc.yml``)::

    python -m posteval.pages            # every chapter of book/executed/ into its pages in book/
    python -m posteval.pages 03         # one chapter
"""

from __future__ import annotations

import copy
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from .lab import _HEADING, _LABEL, prose_lines
from .paths import ROOT, resolve_chapter
from .runtime import atomic_write_text

BOOK = ROOT / "book"
EXECUTED = BOOK / "executed"  # the whole executed chapters, book/executed/NN_name.ipynb
TOC = ROOT / "_toc.yml"
META = "posteval_page"  # notebook metadata of a page: {"chapter": "03_top_quark", "executed": "executed/03_top_quark.ipynb"}

_NUMBERED = re.compile(r"^(?P<chapter>\d+)\.(?P<section>\d+)\s")
# a glue role ({glue}, {glue:text}, {glue:md}, ...) and its key, or a glue directive's key
_GLUE_REF = re.compile(r"\{glue(?::\w*)?\}(?:`(?P<role>[^`]+)`|[ \t]+(?P<directive>\S+))")


@dataclass
class Page:
    """One HTML page of a chapter: its name in ``book/`` (no suffix), its title, its notebook."""

    name: str
    title: str
    notebook: object  # nbformat.NotebookNode


def _source(cell) -> str:
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def _slug(title: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", title.lower())) or "section"


def page_name(stem: str, title: str) -> str:
    """The page of a section heading: ``NN_name_K`` for "N.K ...", ``NN_name_<slug>`` otherwise.

    ValueError when the heading's chapter number is not the chapter's::

        >>> page_name("03_top_quark", "3.1 The simulated sample"), page_name("03_top_quark", "Key takeaways")
        ('03_top_quark_1', '03_top_quark_key_takeaways')
    """
    numbered = _NUMBERED.match(title)
    if numbered is None:
        return f"{stem}_{_slug(title)}"
    if stem[:2].isdigit() and int(numbered["chapter"]) != int(stem[:2]):
        raise ValueError(f"{stem}: section {title!r} is numbered for chapter {numbered['chapter']}")
    return f"{stem}_{int(numbered['section'])}"


def _breaks(nb) -> list[tuple[int, int, str]]:
    """Where each page after the chapter's page starts: (cell, line, section title).

    A page starts at each numbered H2 and each H2 after the first numbered one, at its label
    lines ``(label)=`` if they stand right before it; headings in code blocks do not count."""
    found, numbered = [], False
    for c, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        lines = _source(cell).split("\n")
        for i, line in prose_lines(lines):
            heading = _HEADING.match(line)
            if not heading or len(heading["hashes"]) != 2:
                continue
            numbered = numbered or bool(_NUMBERED.match(heading["title"]))
            if numbered:
                start = i
                while start > 0 and _LABEL.match(lines[start - 1]):
                    start -= 1
                found.append((c, start, heading["title"]))
    return found


def _promote(cell) -> None:
    """Every heading of a markdown cell one level up (## -> #), code blocks left alone."""
    lines = _source(cell).split("\n")
    for i, line in list(prose_lines(lines)):
        if _HEADING.match(line) and line.startswith("##"):
            lines[i] = line[1:]
    cell.source = "\n".join(lines)


def _numbered_title(cells, stem: str, title: str) -> str:
    """A closing section's page title with its chapter's number ("Exercises" -> "2. Exercises"), set in
    the page's H1 too; a numbered section's title ("2.1 ...") or a stem without a number is kept."""
    if _NUMBERED.match(title) or not stem[:2].isdigit():
        return title
    numbered = f"{int(stem[:2])}. {title}"
    first = next(c for c in cells if c.cell_type == "markdown")
    lines = _source(first).split("\n")
    lines[lines.index(f"# {title}")] = f"# {numbered}"
    first.source = "\n".join(lines)
    return numbered


def _segments(cell, cuts: list[int]) -> list:
    """A markdown cell cut before each line of ``cuts``: the part before the first cut (None when
    blank), then one cell from each cut on, with a cell id of its own (nbformat 4.5)."""
    lines = _source(cell).split("\n")
    bounds = [0, *cuts, len(lines)]
    parts = []
    for k, (start, end) in enumerate(zip(bounds, bounds[1:])):
        part = copy.deepcopy(cell)
        part.source = "\n".join(lines[start:end]).rstrip()
        if k and "id" in part:
            part["id"] = f"{cell['id'][:56]}-{start}"
        parts.append(part if k or part.source.strip() else None)
    return parts


def glue_keys_shown(cells) -> list[str]:
    """The glue keys that markdown cells paste, in order of first use (a ``:fmt`` spec dropped).

    >>> import nbformat
    >>> glue_keys_shown([nbformat.v4.new_markdown_cell("{glue:text}`a.b:.2f` and\\n```{glue:figure} fig.c\\n```")])
    ['a.b', 'fig.c']
    """
    keys = []
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        for m in _GLUE_REF.finditer(_source(cell)):
            key = m["directive"] or m["role"].split(":", 1)[0]
            if key not in keys:
                keys.append(key)
    return keys


def glued_outputs(cells) -> dict[str, dict]:
    """{key: output} of every glued output (myst-nb ``glue``: ``metadata.scrapbook.name``) of the cells."""
    return {out["metadata"]["scrapbook"]["name"]: out for cell in cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if (out.get("metadata") or {}).get("scrapbook", {}).get("name")}


def _cell(kind: str, source: str, ident: str, **fields):
    """A new markdown or code cell with a fixed id (the same pages from the same chapter, byte for byte)."""
    import nbformat

    cell = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(source, **fields)
    cell["id"] = ident
    return cell


def _page_notebook(nb, stem: str, cells: list):
    """A page: the cells, the chapter's metadata and ``posteval_page``."""
    import nbformat

    metadata = copy.deepcopy(nb.metadata)
    metadata[META] = {"chapter": stem, "executed": f"{EXECUTED.name}/{stem}.ipynb"}
    return nbformat.v4.new_notebook(cells=cells, metadata=metadata, nbformat_minor=nb.get("nbformat_minor", 5))


def split_chapter(nb, stem: str) -> list[Page]:
    """The pages of an executed chapter notebook: the chapter's page, then one per section.

    ``stem`` is the chapter's name (``03_top_quark``). The notebook is not changed. Each page is a
    notebook with the chapter's metadata plus ``posteval_page`` (the chapter's name and where the
    whole executed chapter lies, relative to the page); glued values shown on a page but made on
    another come as copies in a first cell tagged ``remove-cell``. ValueError when two sections
    would make the same page.
    """
    cuts: dict[int, list[int]] = {}
    titles = []
    for c, line, section in _breaks(nb):
        cuts.setdefault(c, []).append(line)
        titles.append(section)
    groups = [[]]
    for c, cell in enumerate(nb.cells):
        if c not in cuts:
            groups[-1].append(copy.deepcopy(cell))
            continue
        head, *rest = _segments(cell, cuts[c])
        if head is not None:
            groups[-1].append(head)
        groups += [[part] for part in rest]
    title = next((h["title"] for cell in nb.cells if cell.cell_type == "markdown"
                  for _, line in prose_lines(_source(cell).split("\n"))
                  if (h := _HEADING.match(line)) and len(h["hashes"]) == 1), stem)
    names = [stem] + [page_name(stem, t) for t in titles]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{stem}: two sections make the same page {repeated}: give them other titles")
    if len(names) > 1:
        listing = "\n".join(f"* {{doc}}`{name}`" for name in names[1:])
        groups[0].append(_cell("markdown", f"**The sections of this chapter**\n\n{listing}", "posteval-page-sections"))
    glued = glued_outputs(nb.cells)
    pages = []
    for k, (name, page_title, cells) in enumerate(zip(names, [title, *titles], groups)):
        if k:
            for cell in cells:
                if cell.cell_type == "markdown":
                    _promote(cell)
            page_title = _numbered_title(cells, stem, page_title)
        own = glued_outputs(cells)
        borrowed = [glued[key] for key in glue_keys_shown(cells) if key in glued and key not in own]
        if borrowed:
            cells.insert(0, _cell("code", "# glued values this page shows, made on other pages of the chapter "
                                  "(posteval.pages)", "posteval-page-glue", metadata={"tags": ["remove-cell"]},
                                  outputs=copy.deepcopy(borrowed)))
        pages.append(Page(name, page_title, _page_notebook(nb, stem, cells)))
    return pages


def toc_sections(toc: dict, stem: str) -> list[str] | None:
    """The sub-pages ``_toc.yml`` lists for the chapter ``book/<stem>`` (names without ``book/``),
    or None when it lists none (the chapter is one page)."""
    def walk(entries):
        for entry in entries or []:
            if str(entry.get("file", "")).removesuffix(".ipynb") == f"book/{stem}":
                return entry.get("sections") or None
            for key in ("parts", "chapters", "sections"):
                found = walk(entry.get(key))
                if found:
                    return found
        return None

    sections = walk(toc.get("parts")) or walk(toc.get("chapters"))
    return None if sections is None else [Path(str(s["file"])).stem for s in sections]


def toc_chapter_pages(toc: dict, stem: str) -> list[str]:
    """Every page of the chapter ``book/<stem>`` in reading order: the chapter's, then its sections'.

    >>> toc_chapter_pages({"chapters": [{"file": "book/03_x", "sections": [{"file": "book/03_x_1"}]}]}, "03_x")
    ['03_x', '03_x_1']
    """
    return [stem, *(toc_sections(toc, stem) or [])]


def _read_toc(toc_file: Path) -> dict:
    return yaml.safe_load(Path(toc_file).read_text())


def toc_problems(pages: list[Page], toc: dict, stem: str) -> list[str]:
    """How the pages differ from what ``_toc.yml`` lists for the chapter; [] when they agree."""
    listed = toc_sections(toc, stem)
    made = [p.name for p in pages[1:]]
    if listed is None or listed == made:
        return []
    return [f"{stem}: _toc.yml lists the sections {listed}, the chapter makes the pages {made}: "
            f"list these under the chapter's `sections` (book/<name>)"]


def write_pages(executed: Path, out_dir: Path = BOOK, toc_file: Path = TOC) -> list[Path]:
    """Write the pages of the executed chapter ``executed`` (``book/executed/NN_name.ipynb``) into
    ``out_dir``; returns their paths, the chapter's page first.

    The chapter is split when ``_toc.yml`` lists sections for it, else copied as one page. Pages
    of an earlier split that the chapter no longer makes are removed. ValueError (nothing written)
    when the sections listed are not the pages the split makes.
    """
    import nbformat

    executed, out_dir = Path(executed), Path(out_dir)
    stem = executed.stem
    nb = nbformat.read(executed, as_version=4)
    toc = _read_toc(toc_file)
    if toc_sections(toc, stem) is None:  # one page: the whole chapter
        pages = [Page(stem, stem, _page_notebook(nb, stem, nb.cells))]
    else:
        pages = split_chapter(nb, stem)
    problems = toc_problems(pages, toc, stem)
    if problems:
        raise ValueError("\n".join(problems))
    written = []
    for page in pages:
        path = out_dir / f"{page.name}.ipynb"
        atomic_write_text(path, nbformat.writes(page.notebook) + "\n")
        written.append(path)
    for old in out_dir.glob(f"{stem}_*.ipynb"):
        if old not in written:
            old.unlink()
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m posteval.pages [chapter ...]``: the pages of executed chapters; exit code 2 on an error."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        stems = [resolve_chapter(spec).stem for spec in argv] or sorted(p.stem for p in EXECUTED.glob("*.ipynb"))
        for stem in stems:
            executed = EXECUTED / f"{stem}.ipynb"
            if not executed.is_file():
                raise ValueError(f"{executed.relative_to(ROOT)} missing: run python -m posteval.book run {stem[:2]}")
            written = write_pages(executed)
            print(f"{stem}: {len(written)} pages -> " + ", ".join(p.name for p in written))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
