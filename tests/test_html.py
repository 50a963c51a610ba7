"""The built HTML book reads like a book: on every page of a chapter each image is a captioned
figure; every chapter (on one of its pages) has figures, hides its plumbing cells and links to
another page of the book, as every page outside the chapters does; no raw LaTeX is left in the
text once MathJax has run (the DOM as headless Chromium renders it).

The pages are those `make book` built from the chapters it executed under `make test`, or a book built from
the committed reference notebooks under `make test-fast` (`built_site` in conftest.py); each page is rendered once by Chromium. Failures name the page and the property.
"""

import re
from functools import cache
from pathlib import PurePosixPath
from urllib.parse import urlsplit

import pytest
import yaml
from bs4 import BeautifulSoup

from posteval import book
from posteval.lab import toc_pages
from posteval.pages import toc_chapter_pages

TOC = yaml.safe_load((book.ROOT / "_toc.yml").read_text())
# every page, sub-pages (sections) of a chapter included, in reading order
PAGES = [PurePosixPath(p).name for p in toc_pages(TOC)]
CHAPTERS = [p for p in PAGES if p[:2].isdigit()]  # every page of a chapter, sub-pages included
#: each chapter's pages (the chapter's page first), by the chapter's name
CHAPTER_PAGES = {s.stem: toc_chapter_pages(TOC, s.stem) for s in book.chapter_sources()}
BIBLIOGRAPHY = "references"
# Pages other than the chapters and the bibliography must link into the book too.
PROSE_PAGES = [p for p in PAGES if p not in CHAPTERS and p != BIBLIOGRAPHY]

# Elements whose text is not prose: typeset math, code, scripts.
NOT_PROSE = ["mjx-container", "script", "style", "pre", "code", "textarea", "svg", "mjx-assistive-mml"]
# TeX that MathJax would have consumed: a control word, $$, \( \) \[ \], or a braced sub/superscript.
RAW_LATEX = re.compile(r"\\[A-Za-z]+|\$\$|\\[()\[\]]|[_^]\{")
HIDDEN_TAGS = ("tag_hide-input", "tag_remove-input")


def _article(html: str):
    soup = BeautifulSoup(html, "html.parser")
    article = soup.find("article")
    if article is None:
        raise ValueError("no <article> element: not a page of the built book")
    return article


def _has_caption(img) -> bool:
    figure = img.find_parent("figure")
    caption = figure.find("figcaption") if figure is not None else None
    return caption is not None and bool(caption.get_text(strip=True))


def _linked_pages(article, page: str) -> set[str]:
    """Other pages of the book (by name) that the article links to, citations excluded."""
    pages = set()
    for a in article.find_all("a", href=True):
        href = urlsplit(a["href"])
        if href.scheme or href.netloc or not href.path.endswith(".html"):
            continue
        target = PurePosixPath(href.path).stem
        if target not in (page, BIBLIOGRAPHY):
            pages.add(target)
    return pages


def prose_text(article, *, skip=(".highlight", ".cell_input")) -> str:
    """The article's text outside code, scripts and typeset math (NOT_PROSE), on one line;
    elements matching the CSS selectors ``skip`` are left out too."""
    article = BeautifulSoup(str(article), "html.parser")
    for name in NOT_PROSE:
        for element in article.find_all(name):
            element.decompose()
    for element in article.select(", ".join(skip)):
        element.decompose()
    return " ".join(article.get_text(" ").split())


def hits(pattern: re.Pattern, text: str, context: int = 30) -> list[str]:
    """Each match of ``pattern`` in ``text`` with ``context`` characters either side."""
    return [text[max(m.start() - context, 0):m.end() + context] for m in pattern.finditer(text)]


def raw_latex(article) -> list[str]:
    """Raw TeX left in the prose of an article, each hit with a little context."""
    return hits(RAW_LATEX, prose_text(article))


def page_report(html: str, page: str) -> dict:
    """What a reader meets on one rendered page: images, captions, hidden cells, links, raw TeX."""
    article = _article(html)
    images = article.find_all("img")
    return {
        "images": len(images),
        "uncaptioned_images": [img.get("src", "?")[:60] for img in images if not _has_caption(img)],
        "captioned_figures": sum(bool(f.find("img")) and bool(f.find("figcaption")) for f in article.find_all("figure")),
        "hidden_cells": sum(any(t in (c.get("class") or []) for t in HIDDEN_TAGS)
                            for c in article.find_all("div", class_="cell")),
        "linked_pages": sorted(_linked_pages(article, page)),
        "raw_latex": raw_latex(article),
    }


@pytest.fixture(scope="module")
def report(built_site, chromium):
    """page name -> page_report of the page as Chromium renders it (MathJax run)."""

    @cache
    def of(page: str) -> dict:
        path = built_site / "book" / f"{page}.html"
        assert path.exists(), f"{path.name} was not built"
        proc = chromium("--dump-dom", path.as_uri())
        assert "<article" in proc.stdout, f"Chromium rendered nothing for {page}: {proc.stderr[-500:]}"
        return page_report(proc.stdout, page)

    return of


@pytest.mark.parametrize("page", CHAPTERS)
def test_every_image_is_a_captioned_figure(report, page):
    r = report(page)
    assert r["captioned_figures"] >= r["images"] and not r["uncaptioned_images"], (
        f"{page}: {r['images']} images but {r['captioned_figures']} captioned figures; "
        f"without a caption: {r['uncaptioned_images']}")


@pytest.mark.parametrize("chapter", CHAPTER_PAGES)
def test_every_chapter_has_figures_and_hides_its_plumbing(report, chapter):
    pages = CHAPTER_PAGES[chapter]
    assert sum(report(p)["images"] for p in pages) > 0, f"{chapter}: no figure on any of its pages {pages}"
    assert sum(report(p)["hidden_cells"] for p in pages) >= 1, f"{chapter}: no cell tagged hide-input or remove-input"


@pytest.mark.parametrize("page", PROSE_PAGES)
def test_page_links_another_page_of_the_book(report, page):
    assert report(page)["linked_pages"], f"{page}: no link to another page of the book (citations aside)"


@pytest.mark.parametrize("chapter", CHAPTER_PAGES)
def test_chapter_links_another_page_of_the_book(report, chapter):
    """A chapter's pages together link outside the chapter (a section's page may link none)."""
    pages = CHAPTER_PAGES[chapter]
    outside = set().union(*(report(p)["linked_pages"] for p in pages)) - set(pages)
    assert outside, f"{chapter}: no link from its pages {pages} to another page of the book (citations aside)"


@pytest.mark.parametrize("page", PAGES)
def test_no_raw_latex_after_mathjax(report, page):
    hits = report(page)["raw_latex"]
    assert not hits, f"{page}: raw LaTeX in the rendered text: {hits[:5]}"


BAD_PAGE = """<html><body><nav><a href="other.html">nav</a></nav><article>
<p>The bound is \\operatorname{sd} \\le \\frac{1}{2} and $$x$$.</p>
<p>Typeset: <mjx-container>\\frac{a}{b}</mjx-container></p>
<img src="plain.png">
<figure><img src="ok.png"><figcaption>A caption.</figcaption></figure>
<div class="cell tag_parameters"><pre>seed = 0  # \\frac in code is fine</pre></div>
<a class="reference internal" href="references.html#id1">Author, 2026</a>
<a href="#section">same page</a> <a href="https://example.org/x.html">outside</a>
</article></body></html>"""

GOOD_PAGE = """<html><body><article>
<p>The bound <mjx-container>\\operatorname{sd}</mjx-container> holds.</p>
<figure><img src="ok.png"><figcaption>The takeaway.</figcaption></figure>
<div class="cell tag_hide-input"><details class="hide above-input"><pre>import numpy</pre></details></div>
<a class="reference internal" href="02_other.html">chapter 2</a>
</article></body></html>"""


def test_the_check_flags_a_page_that_breaks_every_rule():
    r = page_report(BAD_PAGE, "01_page")
    assert r["images"] == 2 and r["captioned_figures"] == 1 and r["uncaptioned_images"] == ["plain.png"]
    assert r["hidden_cells"] == 0
    assert r["linked_pages"] == [], "navigation, citations, anchors and external links do not count"
    assert len(r["raw_latex"]) == 5 and "\\operatorname" in r["raw_latex"][0]
    assert all("\\frac{a}" not in hit and "code" not in hit for hit in r["raw_latex"])


def test_the_check_passes_a_page_that_keeps_them():
    r = page_report(GOOD_PAGE, "01_page")
    assert r["uncaptioned_images"] == [] and r["captioned_figures"] == r["images"] == 1
    assert r["hidden_cells"] == 1 and r["linked_pages"] == ["02_other"] and r["raw_latex"] == []


def test_a_page_without_an_article_is_refused():
    with pytest.raises(ValueError, match="article"):
        page_report("<html><body><p>no book page</p></body></html>", "x")
