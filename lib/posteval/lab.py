"""JupyterLab for the book's readers: chapters open as notebooks that read like the HTML book.

``make lab`` starts JupyterLab with ``jupyter-config/`` on the config path, which sets
:class:`BookContentsManager` as the contents manager. It is jupytext's contents manager (the
``.md`` chapters open as notebooks, paired with their reference ``.ipynb``, whose stored outputs
are the reference run) plus a reader's view of myst-nb and Sphinx syntax that jupyterlab-myst
does not render. On opening a chapter, in its markdown cells:

* each ``{glue:text}`key:fmt``` becomes the glued value, as ``{abbr}`value (glue key:fmt)```
  (the key shows on hover): :func:`show_glue_values`;
* each ``{glue:figure}`` directive becomes a MyST ``{figure}`` of the glued PNG, carried as a cell
  attachment, numbered as the HTML book numbers it: :func:`show_glue_figures`;
* each ``{glue}`` directive of a glued table (HTML) or image becomes that table or image between
  two HTML comments that hold the directive: :func:`show_glue_blocks`;
* ``{numref}``, ``{ref}``, ``{doc}`` and ``{cite}`` roles whose target lies in another page of
  the book become their text, as ``{abbr}`Figure 2 (numref fig-01-bias)```, and citations their
  author-year label from the book's bibliography; references inside the notebook are left to
  jupyterlab-myst, which links them (the figures now exist and carry the book's numbers);
  Markdown links to a label of another page keep their text without the dead link:
  :func:`show_references`;
* display equations are left unnumbered, as Sphinx leaves unlabelled ones:
  :func:`show_unnumbered_equations`.

Saving undoes all of it (:func:`restore_sources`), so an unedited chapter is saved byte for
byte as it was, and the ``.md`` source never holds a number, a figure or a resolved reference.

Figure numbers, section titles and citation labels come from a :class:`BookIndex` of the book
the notebook belongs to (the folder above it with ``_toc.yml``): pages in the table of contents'
order, figures numbered by chapter as the book's ``_ext/chapter_numbers.py`` numbers them, so
chapter 2's first figure is "Figure 2.1". The executed pages ``book/NN_name`` are rendered from ``chapters/NN_name.md``, which
is where the index reads them. Importing this module imports no Jupyter, YAML or bibliography
package.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

GLUE_ROLE = re.compile(r"\{glue:text\}`([^`\s]+)`")
SHOWN_ROLE = re.compile(r"\{abbr\}`[^`]*? \(glue ([^`\s()]+)\)`")
RECORD_PREFIX = "application/papermill.record/"
RECORD_MIME = RECORD_PREFIX + "text/plain"

# ```{glue:figure} key  (a fence of backticks or colons, possibly indented, one space, no trailing space)
GLUE_FIGURE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{glue:figure\} (?P<key>\S+)$", re.M)
ATTACHMENT_SUFFIX = ".glue.png"  # attachment name of a glued PNG: "<key>.glue.png"
SHOWN_FIGURE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{figure\} attachment:(?P<key>\S+)" + re.escape(ATTACHMENT_SUFFIX)
    + r"(?:\n(?P=indent):(?:enumerator: [^\n]*|enumerated: false))?$", re.M)  # the number line, unless deleted
OPTION = re.compile(r"^[ \t]*:(?P<name>[A-Za-z][\w-]*):(?:[ \t]+(?P<value>.*))?$")

# ```{glue} key
# ```            (no options, no body: the form myst-nb documents for pasting an output)
GLUE_BLOCK = re.compile(r"^(?P<fence>`{3,}|:{3,})\{glue\} (?P<key>\S+)\n(?P=fence)$", re.M)
SHOWN_BLOCK = re.compile(r"^<!-- posteval-glue (?P<json>\{[^\n]*?\}) -->\n.*?\n<!-- /posteval-glue -->$", re.M | re.S)

BOOK_ROLE = re.compile(r"\{(?P<role>numref|ref|doc|cite|cite:p|cite:t)\}`(?P<content>[^`]+)`")
SHOWN_BOOK_ROLE = re.compile(r"\{abbr\}`[^`]*? \((?P<role>numref|ref|doc|cite|cite:p|cite:t) (?P<content>[^`()]+)\)`")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
LABEL_LINK = re.compile(r"(?<![!\]])\[(?P<text>[^\[\]\n]+)\]\((?P<target>[A-Za-z0-9][\w.:-]*)\)")
SHOWN_LINK = re.compile(r"<!--\[-->(?P<text>[^\n]*?)<!--\]\((?P<target>[A-Za-z0-9][\w.:-]*)\)-->")

# Sphinx numbers a display equation only when it has a label; jupyterlab-myst numbers every one
# unless the notebook's front matter (its first markdown cell) turns equation numbers off.
EQUATION_FRONT_MATTER = "---\nnumbering:\n  equation: false  # posteval.lab: unlabelled, as in the HTML book\n---\n"
DISPLAY_MATH = re.compile(r"^[ \t]*(?:\$\$|`{3,}\{math\}|:{3,}\{math\})", re.M)
LABELLED_MATH = re.compile(r"\$\$[ \t]*\([^()\s]+\)[ \t]*$|^[ \t]*:label:", re.M)

CHAPTER_SOURCES = "chapters"  # book/NN_name (executed) is rendered from chapters/NN_name.md


def _cells(nb):
    return nb["cells"] if isinstance(nb, dict) else nb.cells


def _source(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _markdown_cells(nb):
    return [c for c in _cells(nb) if c.get("cell_type") == "markdown"]


# ---------------------------------------------------------------------------------------------
# glued outputs of the reference run
# ---------------------------------------------------------------------------------------------
def glued_outputs(nb) -> dict[str, dict[str, str]]:
    """{key: {mime type: data}} of every value glued in a notebook's stored outputs (myst-nb glue).

    The mime types are given without glue's ``application/papermill.record/`` prefix::

        >>> import nbformat
        >>> from posteval.paths import ROOT
        >>> nb = nbformat.read(ROOT / "chapters" / "02_synthetic_bimodal.ipynb", as_version=4)
        >>> sorted(glued_outputs(nb)["fig.spectra"])
        ['image/png', 'text/plain']
    """
    outputs = {}
    for cell in _cells(nb):
        for out in cell.get("outputs", []) or []:
            name = (out.get("metadata") or {}).get("scrapbook", {}).get("name")
            if not name:
                continue
            data = {mime[len(RECORD_PREFIX):]: "".join(v) if isinstance(v, list) else v
                    for mime, v in (out.get("data") or {}).items() if mime.startswith(RECORD_PREFIX)}
            if data:
                outputs[name] = data
    return outputs


def glued_values(nb) -> dict[str, str]:
    """{key: text/plain of the glued value} from the stored outputs of a notebook (myst-nb glue)."""
    return {k: v["text/plain"] for k, v in glued_outputs(nb).items() if "text/plain" in v}


def format_glued(text: str, fmt: str) -> str:
    """A glued text/plain value formatted as myst-nb's ``{glue:text}`key:fmt``` would show it.

    >>> format_glued("0.12345", ".2f")
    '0.12'
    """
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if not fmt:
        return str(value)
    try:
        return format(value, fmt)
    except (ValueError, TypeError):
        return str(value)


def show_glue_values(nb) -> int:
    """Replace each ``{glue:text}`` role in the markdown cells by its value; returns how many."""
    values = glued_values(nb)
    count = 0

    def shown(match):
        nonlocal count
        spec = match.group(1)
        key, _, fmt = spec.partition(":")
        if key not in values:
            return match.group(0)
        text = format_glued(values[key], fmt)
        if "`" in text or "\n" in text:
            return match.group(0)
        count += 1
        return f"{{abbr}}`{text} (glue {spec})`"

    for cell in _markdown_cells(nb):
        cell["source"] = GLUE_ROLE.sub(shown, _source(cell))
    return count


# ---------------------------------------------------------------------------------------------
# the book: pages, figure numbers, section titles, citations
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """A label of the book: a figure (``number``) or a section (``title``) on page ``doc``."""

    doc: str
    kind: str  # "figure", "section" or "label" (a label before anything else: needs explicit text)
    number: str | None = None
    title: str | None = None


@dataclass
class BookIndex:
    """What the HTML book knows across pages: page titles, numbered figures, section titles, citations.

    Build it with :meth:`BookIndex.load` from the book's root folder (the one with ``_toc.yml``)::

        >>> from posteval.paths import ROOT
        >>> index = BookIndex.load(ROOT)
        >>> index.targets["fig-02-data"].number, index.titles["book/notation"]
        ('2.1', 'Notation')
    """

    root: Path
    docs: dict[str, Path] = field(default_factory=dict)  # page name -> its MyST source, in the book's order
    titles: dict[str, str] = field(default_factory=dict)
    targets: dict[str, Target] = field(default_factory=dict)
    figure_format: str = "Figure %s"
    citations: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (authors, year)

    @classmethod
    def load(cls, root: Path) -> "BookIndex":
        """Read ``_toc.yml``, ``_config.yml``, every page's source and the bibliography under ``root``."""

        root = Path(root)
        config = yaml.safe_load((root / "_config.yml").read_text()) if (root / "_config.yml").exists() else {}
        config = config or {}
        sphinx = (config.get("sphinx") or {}).get("config") or {}
        index = cls(root=root, figure_format=(sphinx.get("numfig_format") or {}).get("figure", "Figure %s"))
        numbered = sphinx.get("numfig", True)  # Jupyter Book 1 turns numfig on by default
        toc = yaml.safe_load((root / "_toc.yml").read_text())
        # figures numbered by chapter ("2.3") on the pages of the part _ext/chapter_numbers.py names
        chapter_of = {page: i + 1 for part in toc.get("parts") or []
                      if sphinx.get("chapter_numbering_caption") and part.get("caption") == sphinx["chapter_numbering_caption"]
                      for i, entry in enumerate(part.get("chapters") or [])
                      for page in toc_pages({"parts": [{"chapters": [entry]}]})}
        counts = {}
        for doc in toc_pages(toc):
            source = page_source(root, doc)
            if source is None:
                continue
            index.docs[doc] = source
            title, figures, sections, labels = scan_myst(source.read_text())
            if title:
                index.titles[doc] = title
            for label in labels:
                index.targets.setdefault(label, Target(doc, "label"))
            for label, heading in sections.items():
                index.targets[label] = Target(doc, "section", title=heading)
            for label in figures:
                chapter = chapter_of.get(doc)
                counts[chapter] = counts.get(chapter, 0) + 1
                number = str(counts[chapter]) if chapter is None else f"{chapter}.{counts[chapter]}"
                index.targets[label] = Target(doc, "figure", number=number if numbered else None)
        for bib in config.get("bibtex_bibfiles") or []:
            index.citations.update(citation_labels(root / bib, root))
        return index

    def doc_of(self, notebook: Path) -> str | None:
        """The page name of a notebook or source file of this book, e.g. ``book/01_total_variance``."""
        notebook = Path(notebook).resolve()
        for doc, source in self.docs.items():
            if source.resolve().with_suffix("") == notebook.with_suffix(""):
                return doc
        return None


def find_book_root(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` that holds a ``_toc.yml``, or None."""
    for folder in [Path(path).resolve(), *Path(path).resolve().parents]:
        if (folder / "_toc.yml").is_file():
            return folder
    return None


def toc_pages(toc: dict) -> list[str]:
    """Page names of a Jupyter Book 1 ``_toc.yml`` (root first, then depth first), as Sphinx walks them.

    >>> toc_pages({"root": "intro", "parts": [{"chapters": [{"file": "a", "sections": [{"file": "b"}]}]}]})
    ['intro', 'a', 'b']
    """
    pages = [str(toc["root"])] if toc.get("root") else []

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(str(entry["file"]))
            for key in ("sections", "chapters", "parts"):
                walk(entry.get(key))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    walk(toc.get("sections"))
    return [posixpath.splitext(p)[0] for p in pages]


def page_source(root: Path, doc: str) -> Path | None:
    """The MyST source of page ``doc``: ``<doc>.md``, else ``chapters/<name>.md`` (the executed
    ``book/NN_name.ipynb`` is rendered from there); None when there is neither, as for the section
    pages ``book/NN_name_K`` of a chapter split into pages (:mod:`posteval.pages`): the chapter's
    page stands for the whole chapter, which is what JupyterLab opens."""
    for candidate in (root / f"{doc}.md", root / CHAPTER_SOURCES / f"{posixpath.basename(doc)}.md"):
        if candidate.is_file():
            return candidate
    return None


_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<title>.+?)[ \t]*#*[ \t]*$")
_LABEL = re.compile(r"^\((?P<label>[^()\s]+)\)=[ \t]*$")
_FIGURE = re.compile(r"^[ \t]*(?P<fence>`{3,}|:{3,})\{(?:glue:figure|figure)\}")
_CODE_DIRECTIVES = ("{code-cell}", "{code}", "{code-block}", "{literalinclude}")


def prose_lines(lines: list[str], start: int = 0):
    """``(index, line)`` of each line of a MyST text (its lines, from ``start``) outside code.

    Code blocks (a fence of backticks or tildes that is not a directive, or a ``{code-cell}``,
    ``{code}``, ``{code-block}``, ``{literalinclude}``) are skipped with their fences; the lines
    of other directives are prose, their opening line included, their closing fence left out::

        >>> [line for _, line in prose_lines(["# T", "```python", "# code", "```", "```{note}", "## N", "```"])]
        ['# T', '```{note}', '## N']
    """
    code_fence, directives = None, []  # the open code block's fence; the open directives' fences
    for i in range(start, len(lines)):
        line = lines[i]
        fence = _FENCE.match(line)
        if code_fence is not None:
            if fence and fence["fence"] == code_fence and not fence["info"].strip():
                code_fence = None
            continue
        if fence:
            info = fence["info"].strip()
            if not info and directives and directives[-1] == fence["fence"]:
                directives.pop()
                continue
            if fence["fence"][0] == "`" and info.startswith("{") and not info.startswith(_CODE_DIRECTIVES):
                directives.append(fence["fence"])
            else:
                code_fence = fence["fence"]
                continue
        yield i, line


def scan_myst(text: str) -> tuple[str | None, list[str], dict[str, str], list[str]]:
    """The title, named figures, section labels and other labels of a MyST page, in order.

    Returns ``(title, [figure label, ...], {section label: heading text}, [other label, ...])``;
    code cells and code blocks are skipped. A figure is a ``{figure}`` or ``{glue:figure}``
    directive with a ``:name:``; only those get a number, as in Sphinx::

        >>> scan_myst("# T\\n(s)=\\n## 1.1 S\\n```{glue:figure} k\\n:name: fig-a\\n\\nCap.\\n```\\n")
        ('T', ['fig-a'], {'s': '1.1 S'}, [])
    """
    lines = text.split("\n")
    title, figures, sections, labels = None, [], {}, []
    pending = None  # a label waiting for the line it names
    start = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        start = next((j + 1 for j in range(1, len(lines)) if lines[j].strip() == "---"), 0)
    for i, line in prose_lines(lines, start):
        label = _LABEL.match(line)
        heading = _HEADING.match(line)
        if label:
            if pending:
                labels.append(pending)
            pending = label["label"]
            continue
        if heading:
            if title is None and len(heading["hashes"]) == 1:
                title = heading["title"]
            if pending:
                sections[pending] = heading["title"]
                pending = None
            continue
        if line.strip() and pending:
            labels.append(pending)
            pending = None
        if _FIGURE.match(line):
            for option in map(OPTION.match, lines[i + 1:]):
                if not option:
                    break
                if option["name"] == "name" and option["value"]:
                    figures.append(option["value"].strip())
    if pending:
        labels.append(pending)
    return title, figures, sections, labels


def _load_label_module(root: Path):
    """The book's Sphinx extension that defines its author-year labels (``_ext/author_year_labels.py``)."""
    path = root / "_ext" / "author_year_labels.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_book_author_year_labels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def citation_labels(bib: Path, root: Path) -> dict[str, tuple[str, str]]:
    """{key: (authors, year)} of a BibTeX file, as the HTML book cites them ("Baattrup et al.", "2026").

    The labels come from the book's own extension ``_ext/author_year_labels.py`` (the one the HTML
    bibliography uses), read with pybtex; an empty dict when either is missing.
    """
    ext = Path(root) / "_ext" / "author_year_labels.py"
    if not ext.is_file() or not Path(bib).is_file():
        return {}
    stamp = (str(Path(bib).resolve()), Path(bib).stat().st_mtime_ns, ext.stat().st_mtime_ns)
    if stamp not in _CITATIONS:  # pybtex takes seconds (it looks up plugins per name): once per file version
        from pybtex.database import parse_file

        module = _load_label_module(Path(root))
        labels = {}
        for key, entry in parse_file(str(bib)).entries.items():
            try:
                labels[key] = (module.author_label(entry), module.year_label(entry))
            except ValueError:  # no author or year: cited by its key, visibly unresolved
                continue
        _CITATIONS[stamp] = labels
    return dict(_CITATIONS[stamp])


_CITATIONS: dict[tuple, dict[str, tuple[str, str]]] = {}


# ---------------------------------------------------------------------------------------------
# figures and glued blocks
# ---------------------------------------------------------------------------------------------
def show_glue_figures(nb, index: BookIndex | None = None) -> int:
    """Show each ``{glue:figure}`` whose key has a glued PNG as a numbered MyST ``{figure}``.

    The PNG becomes the cell attachment ``<key>.glue.png``; one option line after the directive
    line gives the figure the number the HTML book gives it (``:enumerator: 6``) or none when the
    book numbers no such figure (``:enumerated: false``); without ``index`` (a notebook outside
    the book) the figures are numbered in the notebook's order. Everything else (``:name:``, the
    caption) stays as written. Returns how many figures were shown::

        ```{glue:figure} fig.spectra            ```{figure} attachment:fig.spectra.glue.png
        :name: fig-01-spectra           ->      :enumerator: 1
                                                :name: fig-01-spectra
        Caption.                                (caption unchanged)
        ```                                     ```

    A ``{glue:figure}`` of a key with no glued PNG (the cell never ran) is left as it is.
    """
    images = {k: v["image/png"] for k, v in glued_outputs(nb).items() if "image/png" in v}
    count = 0
    for cell in _markdown_cells(nb):
        source = _source(cell)
        lines = source.split("\n")
        attachments = {}

        def shown(match):
            nonlocal count
            key = match["key"]
            if key not in images:
                return match.group(0)
            name = None
            tail = lines[source.count("\n", 0, match.start()) + 1:]
            for line in tail:
                option = OPTION.match(line)
                if not option:
                    break
                if option["name"] == "name" and option["value"]:
                    name = option["value"].strip()
            target = index.targets.get(name) if (index and name) else None
            if target is not None and target.number is not None:
                option_line = f":enumerator: {target.number}"
            elif index is not None:
                option_line = ":enumerated: false"
            else:  # not in a book: the notebook's own order (jupyterlab-myst counts from 1)
                option_line = f":enumerator: {count + 1}"
            attachments[key + ATTACHMENT_SUFFIX] = {"image/png": _one_line(images[key])}
            count += 1
            return f"{match['indent']}{match['fence']}{{figure}} attachment:{key}{ATTACHMENT_SUFFIX}\n{match['indent']}{option_line}"

        new = GLUE_FIGURE.sub(shown, source)
        if attachments:
            cell["source"] = new
            cell.setdefault("attachments", {}).update(attachments)
    return count


def _one_line(data: str) -> str:
    """Base64 data without line breaks (as nbformat stores attachments)."""
    return "".join(data.split())


def _comment_json(value: dict) -> str:
    """JSON that can sit inside an HTML comment (no ``--``)."""
    return json.dumps(value, ensure_ascii=False).replace("--", "-\\u002d")


def show_glue_blocks(nb) -> int:
    """Show each ``{glue}`` directive (no options) as its glued HTML table or PNG; returns how many.

    The shown block starts with an HTML comment holding the directive and ends with
    ``<!-- /posteval-glue -->``; in between, the glued HTML (its blank lines removed, so that it
    stays one HTML block) in a ``<div class="posteval-glue">``, or a Markdown image of the PNG
    (cell attachment ``<key>.glue.png``). Keys glued as text only are left as directives.
    """
    outputs = glued_outputs(nb)
    count = 0
    for cell in _markdown_cells(nb):
        attachments = {}

        def shown(match):
            nonlocal count
            data = outputs.get(match["key"], {})
            if "text/html" in data:
                html = "\n".join(line for line in data["text/html"].split("\n") if line.strip())
                body = f'<div class="posteval-glue" title="glue {match["key"]}">\n{html}\n</div>'
            elif "image/png" in data:
                name = match["key"] + ATTACHMENT_SUFFIX
                attachments[name] = {"image/png": _one_line(data["image/png"])}
                body = f"![{match['key']}](attachment:{name})"
            else:
                return match.group(0)
            count += 1
            return (f"<!-- posteval-glue {_comment_json({'directive': match.group(0)})} -->\n\n{body}\n\n"
                    "<!-- /posteval-glue -->")

        new = GLUE_BLOCK.sub(shown, _source(cell))
        if new != _source(cell):
            cell["source"] = new
            if attachments:
                cell.setdefault("attachments", {}).update(attachments)
    return count


# ---------------------------------------------------------------------------------------------
# references and citations
# ---------------------------------------------------------------------------------------------
def reference_text(role: str, content: str, index: BookIndex, doc: str | None) -> str | None:
    """The text the HTML book shows for a role, or None to leave it to jupyterlab-myst.

    None when the target is on the notebook's own page (jupyterlab-myst links it) or is unknown
    (it then stays visibly unresolved)::

        >>> from posteval.paths import ROOT
        >>> index = BookIndex.load(ROOT)
        >>> reference_text("numref", "fig-01-bias", index, "book/02_synthetic_bimodal")
        'Figure 1.2'
        >>> reference_text("cite:p", "gneiting2007scoring", index, None)
        '[Gneiting and Raftery, 2007]'
    """
    if role.startswith("cite"):
        keys = [k.strip() for k in content.split(",")]
        if not keys or any(k not in index.citations for k in keys):
            return None
        if role == "cite:t":
            return "; ".join(f"{index.citations[k][0]} [{index.citations[k][1]}]" for k in keys)
        return "[" + "; ".join(", ".join(index.citations[k]) for k in keys) + "]"
    explicit = EXPLICIT.match(content)
    text, target = (explicit["text"], explicit["target"].strip()) if explicit else (None, content.strip())
    if role == "doc":
        page = posixpath.normpath(posixpath.join(posixpath.dirname(doc or ""), target)) if not target.startswith("/") \
            else target.lstrip("/")
        if page == doc or page not in index.docs:
            return None
        return text or index.titles.get(page)
    found = index.targets.get(target)
    if found is None or found.doc == doc:
        return None
    if role == "numref":
        if found.number is None:
            return None
        template = text or index.figure_format
        return template.replace("%s", found.number).replace("{number}", found.number)
    return text or found.title or (index.figure_format % found.number if found.number else None)


def show_references(nb, index: BookIndex, doc: str | None) -> int:
    """Show roles and Markdown links that point to other pages of the book as text; returns how many.

    A role becomes ``{abbr}`TEXT (ROLE CONTENT)``` (the role shows on hover); a Markdown link
    ``[text](label)`` to a label on another page becomes ``<!--[-->text<!--](label)-->``, the
    text without a link that would lead nowhere in JupyterLab.
    """
    count = 0

    def role(match):
        nonlocal count
        text = reference_text(match["role"], match["content"], index, doc)
        if text is None or "`" in text or "\n" in text or "(" in match["content"] or ")" in match["content"]:
            return match.group(0)
        count += 1
        return f"{{abbr}}`{text} ({match['role']} {match['content']})`"

    def link(match):
        nonlocal count
        found = index.targets.get(match["target"])
        if found is None or found.doc == doc:
            return match.group(0)
        count += 1
        return f"<!--[-->{match['text']}<!--]({match['target']})-->"

    for cell in _markdown_cells(nb):
        source = BOOK_ROLE.sub(role, _source(cell))
        cell["source"] = LABEL_LINK.sub(link, source)
    return count


def show_unnumbered_equations(nb) -> bool:
    """Turn off jupyterlab-myst's equation numbers where the HTML book shows none; returns whether it did.

    When the markdown cells have display math and none of it is labelled (``$$ ... $$ (label)``,
    ``:label:``), the first markdown cell gets :data:`EQUATION_FRONT_MATTER` before its text; a
    cell that already starts with front matter is left alone.
    """
    cells = _markdown_cells(nb)
    text = "\n".join(_source(c) for c in cells)
    if not cells or not DISPLAY_MATH.search(text) or LABELLED_MATH.search(text) or _source(cells[0]).startswith("---"):
        return False
    cells[0]["source"] = EQUATION_FRONT_MATTER + _source(cells[0])
    return True


# ---------------------------------------------------------------------------------------------
# the whole view, and back
# ---------------------------------------------------------------------------------------------
def show_book_view(nb, path: Path | None = None) -> dict[str, int]:
    """Everything a reader should see in place of myst-nb and Sphinx syntax; counts per kind.

    ``path`` is the notebook's file (``chapters/01_total_variance.md``): it places the notebook in
    its book, whose index gives figure numbers and the text of references to other pages; without
    it (or outside a book) only glued values, figures and blocks are shown::

        >>> import nbformat
        >>> from posteval.paths import ROOT
        >>> path = ROOT / "chapters" / "01_total_variance.ipynb"
        >>> counts = show_book_view(nbformat.read(path, as_version=4), path.with_suffix(".md"))
        >>> sorted(counts), counts["figures"] > 0
        (['blocks', 'equations_unnumbered', 'figures', 'references', 'values'], True)
    """
    root = find_book_root(Path(path).parent) if path is not None else None
    index = BookIndex.load(root) if root is not None else None
    doc = index.doc_of(path) if index is not None else None
    counts = {"values": show_glue_values(nb), "figures": show_glue_figures(nb, index if doc else None),
              "blocks": show_glue_blocks(nb), "references": 0, "equations_unnumbered": 0}
    if index is not None:
        counts["references"] = show_references(nb, index, doc)
        counts["equations_unnumbered"] = int(show_unnumbered_equations(nb))
    return counts


def restore_sources(nb) -> None:
    """Undo :func:`show_book_view` in every markdown cell: the directives, roles and links as written,
    and no glued attachment left."""
    for cell in _markdown_cells(nb):
        source = SHOWN_BLOCK.sub(lambda m: json.loads(m["json"])["directive"], _source(cell))
        source = SHOWN_FIGURE.sub(lambda m: f"{m['indent']}{m['fence']}{{glue:figure}} {m['key']}", source)
        source = SHOWN_BOOK_ROLE.sub(lambda m: f"{{{m['role']}}}`{m['content']}`", source)
        source = SHOWN_LINK.sub(lambda m: f"[{m['text']}]({m['target']})", source)
        source = SHOWN_ROLE.sub(lambda m: f"{{glue:text}}`{m.group(1)}`", source)
        cell["source"] = source[len(EQUATION_FRONT_MATTER):] if source.startswith(EQUATION_FRONT_MATTER) else source
        attachments = cell.get("attachments")
        if isinstance(attachments, dict):
            for name in [n for n in attachments if n.endswith(ATTACHMENT_SUFFIX)]:
                del attachments[name]
            if not attachments:
                del cell["attachments"]


def paired_twins(names: list[str]) -> set[str]:
    """The ``.ipynb`` names of a folder listing that have a ``.md`` of the same stem (jupytext pairs).

    >>> sorted(paired_twins(["01_a.md", "01_a.ipynb", "notes.ipynb"]))
    ['01_a.ipynb']
    """
    stems = {n[:-3] for n in names if n.endswith(".md")}
    return {n for n in names if n.endswith(".ipynb") and n[:-6] in stems}


def _contents_manager_class():
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class
    from traitlets import Bool

    base = build_async_jupytext_contents_manager_class(AsyncLargeFileManager)

    class BookContentsManager(base):
        """jupytext's contents manager showing chapters as the HTML book does (see the module doc)."""

        list_paired_notebooks = Bool(
            False, config=True,
            help="List the .ipynb twin of a paired .md in the file browser (it opens the same notebook).")

        async def get(self, path, content=True, type=None, format=None, **kwargs):
            model = await super().get(path, content=content, type=type, format=format, **kwargs)
            if content and model.get("type") == "notebook" and model.get("content"):
                try:
                    show_book_view(model["content"], Path(self._get_os_path(path)))
                except Exception as err:  # a broken _toc.yml or bibliography must not keep the notebook closed
                    restore_sources(model["content"])
                    self.log.warning("%s opens without the book's view (figures, references): %s: %s",
                                     path, type(err).__name__, err)
            elif content and model.get("type") == "directory" and not self.list_paired_notebooks:
                twins = paired_twins([m["name"] for m in model.get("content") or []])
                model["content"] = [m for m in model["content"] if m["name"] not in twins]
            return model

        async def save(self, model, path=""):
            if model.get("type") == "notebook" and model.get("content"):
                restore_sources(model["content"])
            return await super().save(model, path)

    return BookContentsManager


def __getattr__(name):
    if name == "BookContentsManager":  # built on first use: importing posteval.lab needs no Jupyter server
        cls = _contents_manager_class()
        globals()[name] = cls
        return cls
    raise AttributeError(name)
