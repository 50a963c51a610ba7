"""On every page: where its source is, and downloads of its notebook, its MyST source and the book's PDF.

Offline and without a repository URL: the files are copied into the HTML output and linked
relatively.

* A notebook page (a chapter, ``book/NN_name.ipynb``) is the twin of a MyST source
  ``chapters/NN_name.md`` (``source_links_dirs``): that file is copied to
  ``_sources/chapters/NN_name.md``; the notebook itself is in ``_sources/`` (Sphinx copies it).
* A page of a chapter split into pages (``posteval.pages``: ``book/NN_name.ipynb``,
  ``book/NN_name_1.ipynb``, ...; its notebook metadata ``posteval_page`` names the chapter and the
  whole executed chapter ``book/executed/NN_name.ipynb``) links the chapter's source
  ``chapters/NN_name.md`` and downloads the whole executed chapter, copied to
  ``_sources/book/executed/NN_name.ipynb``: every page of a chapter offers the same two files.
* A MyST page (``book/intro.md``) is its own source (in ``_sources/``); its notebook form is
  written beside it by jupytext (``_sources/book/intro.ipynb``), so that every page opens in Jupyter.
* The whole book as one PDF (``make pdf``) is ``source_links_pdf`` at the root of the output.

A page of a chapter also says how to open the chapter in JupyterLab (``make lab CHAPTER=NN``) and run it
with the book's runner (``p.source-links-run``).

The links go at the end of the article (``div.source-links``) and into the theme's download menu
(sphinx-book-theme's button group "download-buttons"), in place of its "print this page".
"""

import html
import json
import shutil
from pathlib import Path, PurePosixPath

from sphinx.util import logging

logger = logging.getLogger(__name__)


def _paired_markdown(srcdir: Path, source: Path, dirs) -> tuple[Path, str] | None:
    """The MyST twin of a notebook source and its path in the repository, e.g. ``chapters/01_x.md``."""
    for folder in dirs:
        candidate = srcdir / folder / f"{source.stem}.md"
        if candidate.is_file():
            return candidate, PurePosixPath(folder, candidate.name).as_posix()
    sibling = source.with_suffix(".md")
    if sibling.is_file():
        return sibling, sibling.relative_to(srcdir).as_posix()
    return None


PAGE_METADATA = "posteval_page"  # posteval.pages.META


def _chapter_of_page(source: Path) -> dict | None:
    """``{"chapter": "03_top_quark", "executed": "executed/03_top_quark.ipynb"}`` for a page that
    ``posteval.pages`` wrote, else None."""
    with open(source, encoding="utf-8") as f:
        return json.load(f).get("metadata", {}).get(PAGE_METADATA)


def _copy_if_changed(source: Path, target: Path) -> None:
    if target.is_file() and target.stat().st_size == source.stat().st_size \
            and target.stat().st_mtime_ns == source.stat().st_mtime_ns:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


def _write_notebook(markdown: Path, target: Path) -> None:
    import jupytext

    target.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(jupytext.read(markdown, fmt="md:myst"), target, fmt="ipynb")


def page_files(app, docname: str) -> dict | None:
    """The page's files in the output (paths relative to its root) and how each is named in the repository.

    ``{"md": ..., "md_name": ..., "ipynb": ..., "ipynb_name": ..., "pdf": ...}``, plus ``"chapter"``
    (its name) on a page of a chapter; files that are not there yet are copied or written. None for a
    page without a source file (genindex, search).
    """
    env = app.env
    if docname not in env.all_docs:
        return None
    srcdir, outdir = Path(app.srcdir), Path(app.outdir)
    source = Path(env.doc2path(docname))
    sources = PurePosixPath("_sources")
    page = PurePosixPath(docname)
    files = {"pdf": app.config.source_links_pdf}
    if source.suffix == ".ipynb":
        files["ipynb"] = (sources / page.parent / source.name).as_posix()
        files["ipynb_name"] = source.name
        chapter = _chapter_of_page(source)
        if chapter is not None:  # a page of a chapter: the whole executed chapter
            executed = source.parent / chapter["executed"]
            if not executed.is_file():
                logger.warning(f"source_links: {docname} is a page of {chapter['chapter']}, whose executed "
                               f"notebook {executed.relative_to(srcdir)} is missing")
            else:
                files["ipynb"] = (sources / page.parent / chapter["executed"]).as_posix()
                files["ipynb_name"] = executed.name
                files["chapter"] = chapter["chapter"]
                _copy_if_changed(executed, outdir / files["ipynb"])
            source = source.with_name(f"{chapter['chapter']}.ipynb")
        twin = _paired_markdown(srcdir, source, app.config.source_links_dirs)
        if twin is None:
            logger.info(f"source_links: no MyST twin of {source.name} in {app.config.source_links_dirs}")
        else:
            path, name = twin
            files["md"], files["md_name"] = (sources / name).as_posix(), name
            target = outdir / files["md"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    elif source.suffix == ".md":
        files["md"] = (sources / page.parent / source.name).as_posix()
        files["md_name"] = source.relative_to(srcdir).as_posix()
        files["ipynb"] = (sources / page.parent / f"{source.stem}.ipynb").as_posix()
        files["ipynb_name"] = f"{source.stem}.ipynb"
        _write_notebook(source, outdir / files["ipynb"])
    else:
        return None
    return files


def links_html(files: dict, url) -> str:
    """The block at the end of the article; ``url(path)`` makes a path relative to the output's root a link."""
    def a(key, text, download=True):
        return (f'<a class="source-link source-link-{key}" href="{html.escape(url(files[key]))}"'
                f'{" download" if download else ""}>{html.escape(text)}</a>')

    parts = []
    if "md" in files:
        parts.append(f"Source: {a('md', files['md_name'], download=False)}")
        if "ipynb" in files:
            parts[-1] += f" (as a notebook: {a('ipynb', files['ipynb_name'], download=False)})"
    downloads = [a(k, label) for k, label in (("ipynb", ".ipynb"), ("md", ".md"), ("pdf", "PDF of the whole book"))
                 if k in files]
    parts.append("Download: " + ", ".join(downloads))
    return f'<div class="source-links" role="note"><p>{" · ".join(parts)}</p>{run_html(files)}</div>'


def run_html(files: dict) -> str:
    """On a page of a chapter, how to open the chapter in JupyterLab and run it from a clone ("" elsewhere)."""
    if "chapter" not in files:
        return ""
    number, md = files["chapter"][:2], html.escape(files.get("md_name", f"chapters/{files['chapter']}.md"))
    return (f'<p class="source-links-run">Open this chapter in JupyterLab: <code>make lab CHAPTER={number}</code> '
            f'(opens <code>{md}</code>, the stored outputs already shown); run it whole: '
            f'<code>python -m posteval.book run {number}</code>, a parameter changed with '
            f'<code>--set NAME=VALUE</code>.</p>')


def _buttons(files: dict, url) -> list[dict]:
    whole = "this chapter" if "chapter" in files else "this page"
    named = (("ipynb", ".ipynb", f"Download {whole} as a notebook", "fas fa-code"),
             ("md", ".md", f"Download {whole}'s MyST source", "fas fa-file"),
             ("pdf", ".pdf", "Download the whole book as a PDF", "fas fa-file-pdf"))
    return [{"type": "link", "url": url(files[key]), "text": text, "tooltip": tip, "icon": icon,
             "label": f"download-{key}-button"} for key, text, tip, icon in named if key in files]


def add_links(app, pagename, templatename, context, doctree):
    if doctree is None or "body" not in context:
        return
    files = page_files(app, pagename)
    if files is None:
        return

    def url(path):
        return context["pathto"](path, 1)

    context["body"] += links_html(files, url)
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            button["buttons"] = _buttons(files, url)


def setup(app):
    app.add_config_value("source_links_pdf", "book.pdf", "html", types=[str])
    app.add_config_value("source_links_dirs", ["chapters"], "html", types=[list])
    # after sphinx-book-theme has made its header buttons (priority 501)
    app.connect("html-page-context", add_links, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
