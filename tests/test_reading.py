"""The built book reads as a book at 1,280 px (issue 28), checked on the pages of the built book
(`built_site` in conftest.py: under `make test` the HTML and PDF `make book` made from the chapters it executed;
under `make test-fast` a book built from the reference notebooks):

* one number format in the prose: no "nan", "NaN", "inf", claim keys ("claim.rmse...") or
  e-notation ("2.0e-02") outside code and math;
* nothing raw or cut in the rendered text (issue 47): no number with more than 6 significant digits, no
  integer of 10,000 or more without a thousands separator, no "seed(s)", no "87 rows × 3 columns" and no
  table row of "…" (pandas cut the table); no commit hash outside a collapsed "About this run" box;
* in headless Chromium at a 1,280 px window: every table fits the text column, at most 8 code
  cells shown per chapter page, each at most 30 lines, no code block cut at the right; the same
  run keeps every page's height and, under `make test`, a screenshot of each chapter's opening
  (1,280 x 2,000 px) in ``_build/test-artifacts/`` (``page_heights.json``, ``<page>-opening.png``);
* figures numbered by chapter ("Figure 2.3"), front and back matter without a chapter number;
* every page links its source and downloads its notebook, its MyST source and the book's PDF (a
  page of a chapter: the chapter's source chapters/NN_name.md and its whole executed notebook, and the line
  `make lab CHAPTER=NN`, which opens that chapter in JupyterLab);
* every link between pages of the book lands on a page and an anchor that exist;
* the PDF (``make pdf``: ``_ext/book_pdf.py``) has every chapter's title and every figure number.

Each rule is also checked on a small synthetic page that keeps it and one that breaks it.
Failures name the page and what breaks the rule.
"""

import html as html_lib
import importlib.util
import json
import os
import re
import subprocess
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from bs4 import BeautifulSoup
from tests.conftest import built_book_mode
from tests.test_html import hits, prose_text

from posteval import book
from posteval.lab import toc_pages

TOC = yaml.safe_load((book.ROOT / "_toc.yml").read_text())
CONFIG = yaml.safe_load((book.ROOT / "_config.yml").read_text())["sphinx"]["config"]
#: every page (a doc name, e.g. "book/02_synthetic_bimodal"), sub-pages included, in reading order
DOCS = toc_pages(TOC)
#: the chapters (the part "Chapters" of _toc.yml), each with its sub-pages, numbered 1, 2, ...
CHAPTER_PART = CONFIG["chapter_numbering_caption"]
CHAPTERS = {i + 1: toc_pages({"parts": [{"chapters": [entry]}]})
            for part in TOC["parts"] if part.get("caption") == CHAPTER_PART
            for i, entry in enumerate(part["chapters"])}
CHAPTER_OF = {doc: n for n, docs in CHAPTERS.items() for doc in docs}
CHAPTER_DOCS = [doc for docs in CHAPTERS.values() for doc in docs]
PDF_NAME = CONFIG["source_links_pdf"]

ARTIFACTS = book.ROOT / "_build" / "test-artifacts"
WIDTH, OPENING = 1280, 2000
MAX_CODE_CELLS, MAX_CODE_LINES = 8, 30


def _id(doc: str) -> str:
    return PurePosixPath(doc).name


def _article(path: Path):
    return BeautifulSoup(path.read_text(), "html.parser").find("article")


# ---------------------------------------------------------------------------------------------
# 1. One number format in the prose

#: what the book's number format never prints in prose: NaN, infinity, a claim's key, e-notation
PROSE_PROBLEMS = re.compile(
    r"(?<![\w.\\])(?:nan|NaN|NAN)(?!\w)"                    # nan, NaN (not "Nan" the name)
    r"|(?<![\w.\\])[-+−]?inf(?!\w)"                          # inf, -inf (not "Inf." of a journal)
    r"|(?<![\w-])claim\.[A-Za-z_][\w.]*\w"                  # claim.rmse.mlp (not "the claim.")
    r"|(?<![\w.])\d+(?:\.\d+)?[eE][-+−]?\d+(?!\w|\.\d)")   # 2.0e-02, 1e-14, 0.0e+00


def prose_problems(page_html: str) -> list[str]:
    """Each place the prose of a built page (outside code and math) breaks the number format."""
    article = BeautifulSoup(page_html, "html.parser").find("article")
    if article is None:
        raise ValueError("no <article> element: not a page of the built book")
    return hits(PROSE_PROBLEMS, prose_text(article, skip=(".highlight", ".cell_input", ".math")))


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_prose_has_one_number_format(built_site, doc):
    found = prose_problems((built_site / f"{doc}.html").read_text())
    assert not found, f"{_id(doc)}: {len(found)} places in the prose: {found[:12]}"


BAD_PROSE = """<article><p>The ratio is nan, the record says NaN and the bound is inf (or -inf).</p>
<p>It settles claim.rmse.mlp_mse_above_flow_mean; p = 2.0e-02 and 1e-14 and 0.0e+00.</p>
<table><tr><td>NaN</td><td>1.0841e-14</td></tr></table></article>"""
GOOD_PROSE = """<article><p>That is the paper's claim. Nan Jiang's information, Inf. Theory, 1.2 × 10⁻⁵,
40,000 and 32.8 [31.9, 33.7]; "–" where a value is missing; the e-mail of 3 experts.</p>
<div class="cell_input"><pre>x = np.nan; y = -np.inf; claims["claim.rmse"] = 2.0e-02</pre></div>
<p>In code: <code>nan</code>, math: <span class="math notranslate">\\(\\infty, 10^{-14}\\)</span>
<mjx-container>inf</mjx-container></p></article>"""


def test_the_number_check_flags_every_artefact():
    found = prose_problems(BAD_PROSE)
    words = ["nan", "NaN", "inf", "-inf", "claim.rmse.mlp_mse_above_flow_mean", "2.0e-02", "1e-14", "0.0e+00",
             "NaN", "1.0841e-14"]
    assert len(found) == len(words) and all(word in hit for word, hit in zip(words, found)), found


def test_the_number_check_passes_the_book_format():
    assert prose_problems(GOOD_PROSE) == []


# ---------------------------------------------------------------------------------------------
# 1b. Nothing raw or cut on a page (issue 47): long numbers, bare large integers, "(s)", cut tables

#: a number as the prose writes it: digits with thousands separators, a decimal part; not part of a word,
#: a version ("2.13.0"), a path or an identifier ("H200", "#3", "10.1103/...")
NUMBER = re.compile(r"(?<![\w.,/:#])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w/]|[.,]\d)")
#: "seed(s)", "worker(s)": a plural the page did not decide
UNDECIDED_PLURAL = re.compile(r"\w\(s\)")
#: pandas' footer of a truncated table ("87 rows × 3 columns")
TRUNCATED = re.compile(r"\d[\d,]* rows × \d[\d,]* columns")
ELLIPSIS_CELLS = {"…", "..."}
MAX_SIGNIFICANT, MAX_BARE = 6, 10_000


def _significant(text: str) -> int:
    """Significant digits of "0.80000000000000016" (17) or "1,234,567" (7); an integer's trailing
    zeros are not significant ("1,000,000": 1), a decimal's are ("0.500": 3)."""
    digits = text.replace(",", "")
    whole, _, decimals = digits.partition(".")
    return len((whole + decimals).lstrip("0")) if decimals else len(whole.strip("0"))


def raw_text_problems(page_html: str) -> list[str]:
    """Each place a built page shows a number raw, a "(s)" or a cut table: a number with more than
    6 significant digits, a bare integer of at least 10,000 without a thousands separator, an
    undecided plural "(s)", pandas' "N rows × M columns", a table row of "…" only or a table cell that
    pandas cut ("the flow (NSF..." : a chapter that left ``display.max_colwidth`` at 50).

    The rendered text is read outside code and math (prose, tables, captions, outputs); the
    bibliography's entries and the text of links out of the book are left out: an arXiv id
    ("1808.04730"), a DOI, a volume or a page range is the source's own number, not the book's."""
    article = BeautifulSoup(page_html, "html.parser").find("article")
    if article is None:
        raise ValueError("no <article> element: not a page of the built book")
    rows = [[c.get_text(strip=True) for c in row.find_all(["td", "th"])] for row in article.find_all("tr")]
    cut = [f"a row of {' | '.join(cells)}" for cells in rows if set(cells) - {""} and set(cells) - {""} <= ELLIPSIS_CELLS]
    # pandas cuts a long cell to its first 47 characters and "..." (display.max_colwidth 50)
    cut += [f"a cell cut to {c[-30:]}" for cells in rows for c in cells if len(c) > 3 and c.endswith("...")]
    text = prose_text(article, skip=(".highlight", ".cell_input", ".math", ".citation", "a.reference.external"))
    numbers = [m for m in NUMBER.finditer(text)
               if _significant(m.group()) > MAX_SIGNIFICANT
               or ("," not in m.group() and "." not in m.group() and int(m.group()) >= MAX_BARE)]
    around = [text[max(m.start() - 30, 0):m.end() + 30] for m in numbers]
    return around + hits(UNDECIDED_PLURAL, text) + hits(TRUNCATED, text) + cut


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_nothing_on_a_page_is_raw_or_cut(built_site, doc):
    found = raw_text_problems((built_site / f"{doc}.html").read_text())
    assert not found, f"{_id(doc)}: {len(found)} raw numbers, plurals or cut tables: {found[:12]}"


BAD_RAW = """<article><p>Its worst is 0.80000000000000016 [0.80000000000000004, 0.80000000000000016]; 7139 events
of 12345 and 1,234,567 pairs; 3 seed(s) on 2 worker(s).</p>
<table><tr><th>n</th><td>40000</td></tr><tr><th>...</th><td>...</td></tr><tr><th></th><td>…</td><td>…</td></tr>
<tr><td>not testable</td><td>the flow (NSF) is not physically consistent (4...</td></tr></table>
<p>87 rows × 3 columns</p></article>"""
GOOD_RAW = """<article><p>Its worst is 0.800 [0.800, 0.800]; 7,139 events of 12,345, 1,000,000 generated, 0.12345
in 2026 (2026-12-04), torch 2.13.0 on an H200 with 143,771 MiB; 3 seeds, 1.08 × 10⁻¹⁴.</p>
<table><tr><th>n</th><td>40,000</td></tr><tr><td>… and 3 more</td><td>5</td></tr></table>
<div class="cell_input"><pre>n = 1000000; x = 0.80000000000000016  # seed(s)</pre></div>
<p><span class="math notranslate">\\(10^{12345678}\\)</span> <a class="reference external"
href="https://arxiv.org/abs/1808.04730">arXiv:1808.04730</a>, doi 10.1103/PhysRevD.12345.</p>
<div class="citation"><p>A. Author, Phys. Rev. D 104 (2021) 112005, arXiv:1808.04730.</p></div></article>"""


def test_the_raw_text_check_flags_every_artefact():
    found = raw_text_problems(BAD_RAW)
    words = ["0.80000000000000016 [", "[0.80000000000000004", "0.80000000000000016]", "of 12345", "1,234,567",
             "n 40000", "seed(s)", "worker(s)", "87 rows × 3 columns", "a row of ... | ...", "a row of  | … | …",
             "consistent (4..."]
    assert len(found) == len(words) and all(word in hit for word, hit in zip(words, found)), found


def test_the_raw_text_check_passes_the_book_format():
    assert raw_text_problems(GOOD_RAW) == []


#: a commit hash: 7 to 40 hexadecimal characters with at least one digit and one letter
COMMIT = re.compile(r"(?<![\w./#-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")
#: the collapsed box a chapter keeps a run's provenance in (commit, device, versions, seconds)
ABOUT_THIS_RUN = "About this run"
#: pages whose subject is provenance: running_at_scale reports what one recorded run on the borrowed GPU
#: measured, and names the commit that ran it as a reader re-running it needs it (`full03.sh --commit SHA`)
PROVENANCE_PAGES = {"book/running_at_scale"}


def plumbing_problems(page_html: str) -> list[str]:
    """Each commit hash in a built page's text outside code and math and outside its collapsed
    "About this run" boxes (a dropdown whose title starts with those words): provenance lives there
    and in the results JSON, not in the prose, the tables or the captions."""
    soup = BeautifulSoup(page_html, "html.parser")
    article = soup.find("article")
    if article is None:
        raise ValueError("no <article> element: not a page of the built book")
    for box in article.find_all("details"):
        title = box.find("summary")
        if title is not None and title.get_text(" ", strip=True).startswith(ABOUT_THIS_RUN):
            box.decompose()
    return hits(COMMIT, prose_text(article, skip=(".highlight", ".cell_input", ".math")))


@pytest.mark.parametrize("doc", [d for d in DOCS if d not in PROVENANCE_PAGES], ids=_id)
def test_no_commit_hash_outside_the_provenance_box(built_site, doc):
    found = plumbing_problems((built_site / f"{doc}.html").read_text())
    assert not found, f"{_id(doc)}: {len(found)} commit hashes outside an 'About this run' box: {found[:8]}"


BAD_PLUMBING = """<article><p>The margin was set 6488b25 (2026-12-01); written by commits 3bc0bd0, 0de32a9
(uncommitted changes); commit 229cd34c0f on cuda.</p><table><tr><td>set</td><td>97fd75b (2026-12-01)</td></tr>
</table><details class="sd-dropdown"><summary><span>Solution</span></summary><p>run by c46e57ff19</p></details>
</article>"""
GOOD_PLUMBING = """<article><p>The margin was set on 2026-12-01, before the data; 1234567 events, the
decade of a facade, 0.3bc0bd0, sha256 in <code>3bc0bd0</code>.</p>
<div class="cell_input"><pre>commit = "229cd34c0f"</pre></div>
<details class="sd-dropdown"><summary><span class="sd-summary-text">About this run</span></summary>
<p>Commit 229cd34c0f on cuda:NVIDIA H200, torch 2.11.0, 8 min.</p></details></article>"""


def test_the_plumbing_check_flags_every_commit_hash():
    found = plumbing_problems(BAD_PLUMBING)
    hashes = ["6488b25", "3bc0bd0", "0de32a9", "229cd34c0f", "97fd75b", "c46e57ff19"]
    assert len(found) == len(hashes) and all(h in hit for h, hit in zip(hashes, found)), found


def test_the_plumbing_check_passes_the_provenance_box():
    assert plumbing_problems(GOOD_PLUMBING) == []


# ---------------------------------------------------------------------------------------------
# 2. Tables, code and page heights in headless Chromium at 1,280 px

#: injected at the end of a copy of the page: once MathJax and the fonts are done, it writes the
#: measurements as JSON into <pre id="reading-measurements"> (read back from --dump-dom)
MEASURE = r"""
(async () => {
  const out = document.createElement("pre");
  out.id = "reading-measurements";
  try {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
    if (document.fonts) await document.fonts.ready;
    const art = document.querySelector("article.bd-article") || document.querySelector("article");
    const style = getComputedStyle(art);
    const column = art.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    // rendered: laid out, visible, not inside a closed <details> (a hide-input cell's code)
    const shown = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"
                        && !el.closest("details:not([open])");
    const headings = [...art.querySelectorAll("h1, h2, h3")];
    const section = el => {
      let h = null;
      for (const c of headings) if (c.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) h = c;
      return h ? h.textContent.replace(/#$/, "").trim().slice(0, 60) : "";
    };
    const label = t => {
      const caption = t.querySelector("caption");
      const head = [...t.querySelectorAll("th")].map(c => c.textContent.trim()).filter(Boolean).slice(0, 4);
      return (caption ? caption.textContent.trim() : head.join(" | ") || t.textContent.trim()).slice(0, 80);
    };
    const tables = [...art.querySelectorAll("table")].filter(t => shown(t) && !t.parentElement.closest("table"))
      .map(t => ({label: label(t), section: section(t), container: Math.round(column),
                  // its laid-out width, or what its cells need where it scrolls inside itself
                  width: Math.round(Math.max(t.getBoundingClientRect().width, t.scrollWidth))}));
    const cells = [...art.querySelectorAll("div.cell")].map(c => {
      const pre = c.querySelector(".cell_input pre");
      return pre && shown(pre) ? {section: section(c), lines: pre.textContent.replace(/\s+$/, "").split("\n").length,
                                  first: pre.textContent.trim().split("\n")[0].slice(0, 60)} : null;
    }).filter(Boolean);
    const cut = [...art.querySelectorAll("pre")].filter(p => shown(p) && p.scrollWidth > p.clientWidth + 1)
      .map(p => ({section: section(p), over: p.scrollWidth - p.clientWidth,
                  kind: p.closest(".cell_input") ? "code" : p.closest(".cell_output") ? "output" : "code block",
                  line: p.textContent.split("\n").reduce((a, b) => b.length > a.length ? b : a, "").slice(0, 100)}));
    // how many characters of code fit on a line of a code block
    let fit = null;
    const pre = art.querySelector("pre");
    if (pre) {
      const probe = document.createElement("span");
      probe.textContent = "x".repeat(100);
      pre.appendChild(probe);
      const cs = getComputedStyle(pre);
      fit = Math.floor((pre.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight))
                       / (probe.getBoundingClientRect().width / 100));
      probe.remove();
    }
    out.textContent = JSON.stringify({column: Math.round(column), height: document.documentElement.scrollHeight,
                                      tables, cells, cut, chars_per_code_line: fit});
  } catch (e) {
    out.textContent = JSON.stringify({error: String(e)});
  }
  document.body.appendChild(out);
})();
"""
RESULT = re.compile(r'<pre id="reading-measurements"[^>]*>(.*?)</pre>', re.S)


def measure(chromium, page: Path, scratch: Path, profile_dir: Path | None = None) -> dict:
    """The page as Chromium lays it out in a 1,280 px window: text column, tables, shown code, height.

    A copy of the page with the measuring script (its links resolved against the page's folder)
    is rendered with --dump-dom."""
    text = page.read_text()
    base = f'<base href="{page.parent.as_uri()}/">'
    text = text.replace("<head>", "<head>" + base, 1) if "<head>" in text else base + text
    text = text.replace("</body>", f"<script>{MEASURE}</script></body>", 1)
    copy = scratch / f"measure-{page.name}"
    copy.write_text(text)
    proc = chromium(f"--window-size={WIDTH},{OPENING}", "--dump-dom", copy.as_uri(), profile_dir=profile_dir)
    found = RESULT.search(proc.stdout)
    assert found, f"{page.name}: no measurements from Chromium: {proc.stderr[-500:]}"
    result = json.loads(html_lib.unescape(found.group(1)))
    assert "error" not in result, f"{page.name}: the measuring script failed: {result['error']}"
    return result


def reading_problems(m: dict, *, chapter: bool) -> dict[str, list[str]]:
    """What breaks the reading rules in one page's measurements, rule by rule."""
    wide = [f"{t['section']!r}: {t['label']!r} {t['width']} px > {t['container']} px"
            for t in m["tables"] if t["width"] > t["container"] + 1]
    cells = m["cells"] if chapter else []
    many = [f"{len(cells)} code cells shown ({sum(c['lines'] for c in cells)} lines)"] if len(cells) > MAX_CODE_CELLS else []
    long = [f"{c['section']!r}: {c['lines']} lines, {c['first']!r}" for c in cells if c["lines"] > MAX_CODE_LINES]
    cut = [f"{c['section']!r}: {c['over']} px cut off {c['kind']} {c['line']!r}"
           for c in m["cut"]]
    return {"tables": wide, "code_cells": many, "long_cells": long, "cut": cut}


@pytest.fixture(scope="module")
def measured(request, built_site, chromium, tmp_path_factory):
    """doc -> measurements at 1,280 px; writes the chapters' opening screenshots and page_heights.json."""
    scratch = tmp_path_factory.mktemp("reading")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def one(doc: str) -> dict:
        page = built_site / f"{doc}.html"
        assert page.exists(), f"{page.name} was not built"
        return measure(chromium, page, scratch, profile_dir=scratch / f"profile-{_id(doc)}")

    def shot(doc: str) -> None:
        chromium(f"--window-size={WIDTH},{OPENING}", f"--screenshot={ARTIFACTS / f'{_id(doc)}-opening.png'}",
                 (built_site / f"{doc}.html").as_uri(), profile_dir=scratch / f"profile-shot-{_id(doc)}")

    # one Chromium per page, a few side by side (each waits partly on its own rendering); the screenshots
    # are kept for a person reviewing what `make book` built, so only under `make test` (--built-book)
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = dict(zip(DOCS, pool.map(one, DOCS)))
        if built_book_mode(request.config):
            list(pool.map(shot, CHAPTER_DOCS))
    heights = {doc: results[doc]["height"] for doc in DOCS}
    (ARTIFACTS / "page_heights.json").write_text(json.dumps(heights, indent=1) + "\n")
    inventory = {_id(doc): page_inventory((built_site / f"{doc}.html").read_text(), results[doc]) for doc in DOCS}
    (ARTIFACTS / "page_inventory.json").write_text(json.dumps(inventory, indent=1, ensure_ascii=False) + "\n")
    return results.__getitem__


def page_inventory(page_html: str, measured_page: dict) -> dict:
    """What a reader meets on one page: words of prose (outside code, outputs, glued outputs, tables and
    math), figures, and each code cell shown (its section, line count and first line), for a person
    weighing the pages."""
    article = BeautifulSoup(page_html, "html.parser").find("article")
    if article is None:
        raise ValueError("no <article> element: not a page of the built book")
    # outputs placed by a {glue} directive sit in div.output outside any cell: not prose either
    words = len(prose_text(article, skip=(".highlight", ".cell_input", ".cell_output", ".output", ".math",
                                          "table")).split())
    cells = measured_page["cells"]
    figures = len(article.find_all("figure")) + sum(img.find_parent("figure") is None for img in article.find_all("img"))
    return {"prose_words": words, "figures": figures,
            "code_cells_shown": len(cells), "code_lines_shown": sum(c["lines"] for c in cells), "code_cells": cells}


def test_the_page_inventory_counts_prose_figures_and_shown_code():
    page = ("<article><p>Two words.</p><div class='cell_output'><p>not prose</p></div>"
            "<div class='output text_html'><table><tr><td>a glued table</td></tr></table></div>"
            "<figure><img src='a.png'></figure><img src='b.png'><span class='math'>x = 1</span></article>")
    got = page_inventory(page, {"cells": [{"section": "1", "lines": 3, "first": "x = 1"}]})
    assert (got["prose_words"], got["code_cells_shown"], got["code_lines_shown"]) == (2, 1, 3)
    assert got["figures"] == 2  # a captioned figure (its <img> inside) and an output image without a caption


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_tables_fit_the_text_column(measured, doc):
    wide = reading_problems(measured(doc), chapter=False)["tables"]
    assert not wide, f"{_id(doc)}: {len(wide)} tables wider than the text column: {wide}"


@pytest.mark.parametrize("doc", CHAPTER_DOCS, ids=_id)
def test_few_short_code_cells_are_shown(measured, doc):
    p = reading_problems(measured(doc), chapter=True)
    assert not p["code_cells"] and not p["long_cells"], (
        f"{_id(doc)}: {p['code_cells'] or 'code cells shown: fine'}; "
        f"over {MAX_CODE_LINES} lines: {p['long_cells']}")


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_no_code_block_is_cut_at_the_right(measured, doc):
    m = measured(doc)
    cut = reading_problems(m, chapter=False)["cut"]
    assert not cut, (f"{_id(doc)}: {len(cut)} code blocks wider than their box "
                     f"({m['chars_per_code_line']} characters fit on a line): {cut[:8]}")


def test_openings_and_page_heights_are_kept(request, measured):
    heights = json.loads((ARTIFACTS / "page_heights.json").read_text())
    assert set(heights) == set(DOCS) and all(h > 0 for h in heights.values())
    if not built_book_mode(request.config):
        return  # the openings are screenshots of what `make book` built (make test)
    for doc in CHAPTER_DOCS:
        shot = ARTIFACTS / f"{_id(doc)}-opening.png"
        assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot of {_id(doc)}'s opening"


def _page(body: str) -> str:
    return f"""<html><head><style>body {{ margin: 0; font-family: sans-serif; }}
article {{ width: 700px; padding: 0 20px; }} pre {{ overflow: auto; font-family: monospace; }}
table {{ border-collapse: collapse; }}</style></head><body><article class="bd-article">{body}</article></body></html>"""


def _cell(lines: int, *, hidden: bool = False, width: int = 20) -> str:
    code = "\n".join("x" * width for _ in range(lines))
    pre = f'<div class="highlight"><pre>{code}</pre></div>'
    inner = f'<details class="hide above-input"><summary>Show code</summary>{pre}</details>' if hidden else pre
    return f'<div class="cell docutils container"><div class="cell_input docutils container">{inner}</div></div>'


BAD_READING = _page(
    "<h2>2.1 Wide</h2><table><tr><th>model</th><th>CRPS</th></tr>"
    "<tr><td>flow</td><td style='white-space: nowrap'>" + "32.8 [31.9, 33.7] " * 12 + "</td></tr></table>"
    + "".join(_cell(3) for _ in range(8)) + _cell(31) + _cell(1, width=200))
GOOD_READING = _page(
    "<h2>2.1 Fits</h2><table><tr><th>model</th><th>CRPS</th></tr><tr><td>flow</td><td>32.8 [31.9, 33.7]</td></tr></table>"
    + "".join(_cell(30) for _ in range(8)) + _cell(200, hidden=True, width=300)
    + '<details class="hide below-input"><summary>Show output</summary><pre>' + "y" * 300 + "</pre></details>")


def test_the_reading_check_flags_a_page_that_breaks_every_rule(chromium, tmp_path):
    (tmp_path / "bad.html").write_text(BAD_READING)
    m = measure(chromium, tmp_path / "bad.html", tmp_path)
    p = reading_problems(m, chapter=True)
    assert len(p["tables"]) == 1 and "'2.1 Wide'" in p["tables"][0] and "model | CRPS" in p["tables"][0]
    assert p["code_cells"] == ["10 code cells shown (56 lines)"]
    assert len(p["long_cells"]) == 1 and "31 lines" in p["long_cells"][0]
    assert len(p["cut"]) == 1 and "code 'xxxx" in p["cut"][0]
    assert m["height"] > 0 and 60 < m["chars_per_code_line"] < 120


def test_the_reading_check_passes_a_page_that_keeps_them(chromium, tmp_path):
    (tmp_path / "good.html").write_text(GOOD_READING)
    m = measure(chromium, tmp_path / "good.html", tmp_path)
    assert reading_problems(m, chapter=True) == {"tables": [], "code_cells": [], "long_cells": [], "cut": []}
    assert len(m["cells"]) == 8, "a hide-input cell's code is not shown"


# ---------------------------------------------------------------------------------------------
# 3. Figures numbered by chapter

FIGURE_NUMBER = re.compile(r"\b(?:Figure|Table|Listing)\s(\d+(?:\.\d+)*)\b")


def numbering_problems(articles: dict[str, object], chapter_of: dict[str, int]) -> list[str]:
    """Caption numbers that are not "Figure c.k" (k = 1, 2, ... through chapter c's pages) in the
    chapters, or that carry a chapter number outside them; references to numbers no caption has."""
    problems, captions, counters = [], set(), {}
    for doc, article in articles.items():
        chapter = chapter_of.get(doc)
        for span in article.select(".caption-number"):
            text = " ".join(span.get_text().split())
            kind, _, number = text.partition(" ")
            captions.add(f"{kind} {number}")
            key = (chapter, kind)
            counters[key] = counters.get(key, 0) + 1
            expected = f"{counters[key]}" if chapter is None else f"{chapter}.{counters[key]}"
            if number != expected:
                problems.append(f"{PurePosixPath(doc).name}: caption {text!r}, expected {kind} {expected}")
    for doc, article in articles.items():
        for a in article.select("a.reference"):
            for m in FIGURE_NUMBER.finditer(a.get_text(" ")):
                if m.group(0) not in captions:
                    problems.append(f"{PurePosixPath(doc).name}: reference {m.group(0)!r} to no caption")
    return problems


def test_figures_are_numbered_by_chapter(built_site):
    articles = {doc: _article(built_site / f"{doc}.html") for doc in DOCS}
    assert numbering_problems(articles, CHAPTER_OF) == []
    for n, docs in CHAPTERS.items():
        numbers = [s.get_text() for doc in docs for s in articles[doc].select("figure .caption-number")]
        assert numbers and all(x.split()[1].startswith(f"{n}.") for x in numbers), f"chapter {n}: {numbers[:3]}"


#: an alt text that is a file name or path, not words for a reader who cannot see the image
FILE_LIKE = re.compile(r"(?:^|/)[\w.-]+\.(?:png|jpe?g|svg|gif)$|^\.{0,2}/", re.I)


def alt_text_problems(article) -> list[str]:
    """Each captioned figure of a page whose image has no alt text in words: missing, a file path, or under
    five words (what the figure shows is a sentence, not a label)."""
    problems = []
    for fig in article.find_all("figure"):
        number = fig.select_one(".caption-number")
        label = number.get_text(" ", strip=True) if number else "a figure"
        for img in fig.find_all("img"):
            alt = (img.get("alt") or "").strip()
            if not alt or FILE_LIKE.search(alt) or len(alt.split()) < 5:
                problems.append(f"{label}: alt text {alt!r}")
    return problems


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_every_figure_says_what_it_shows(built_site, doc):
    found = alt_text_problems(_article(built_site / f"{doc}.html"))
    assert not found, f"{_id(doc)}: {found}"


def test_the_alt_text_check_flags_paths_and_labels():
    page = BeautifulSoup("""<article>
<figure><img src="a.png" alt="../_images/a.png"><figcaption><span class="caption-number">Figure 1.1 </span>x</figcaption></figure>
<figure><img src="b.png" alt="spectra"><figcaption><span class="caption-number">Figure 1.2 </span>x</figcaption></figure>
<figure><img src="c.png"><figcaption>x</figcaption></figure>
<figure><img src="d.png" alt="Histograms of the truth and of the posterior mean."></figure>
<img src="e.png" alt="e.png"></article>""", "html.parser").find("article")
    assert alt_text_problems(page) == ["Figure 1.1: alt text '../_images/a.png'", "Figure 1.2: alt text 'spectra'",
                                       "a figure: alt text ''"]


def test_the_numbering_check_flags_book_wide_numbers():
    def art(body):
        return BeautifulSoup(f"<article>{body}</article>", "html.parser").article

    fig = '<figure><figcaption><span class="caption-number">Figure {} </span>A caption.</figcaption></figure>'
    good = {"intro": art(fig.format("1")), "ch1": art(fig.format("1.1") + fig.format("1.2")),
            "ch2": art(fig.format("2.1") + '<a class="reference internal" href="#"><span>Figure 1.2</span></a>')}
    chapter_of = {"ch1": 1, "ch2": 2}
    assert numbering_problems(good, chapter_of) == []
    bad = {"ch1": art(fig.format("1") + fig.format("2")), "ch2": art(fig.format("3") + '<a class="reference">Figure 7</a>')}
    assert numbering_problems(bad, chapter_of) == [
        "ch1: caption 'Figure 1', expected Figure 1.1", "ch1: caption 'Figure 2', expected Figure 1.2",
        "ch2: caption 'Figure 3', expected Figure 2.1", "ch2: reference 'Figure 7' to no caption"]


# ---------------------------------------------------------------------------------------------
# 5. Sources and downloads on every page


#: sphinx-thebe's per-page Binder configuration (its template's repository when the book names none)
THEBE_CONFIG = re.compile(r"text/x-thebe-config|binderOptions|mybinder\.org", re.I)


def source_link_problems(site: Path, doc: str) -> list[str]:
    """What is missing from a page's source links (the block, a target file, a download menu entry), and a
    Binder configuration the page should not carry: the book has no Binder image (`_ext/no_thebe.py`)."""
    page = site / f"{doc}.html"
    text = page.read_text()
    if thebe := THEBE_CONFIG.search(text):
        return [f"a Binder (thebe) configuration: {thebe.group(0)}"]
    soup = BeautifulSoup(text, "html.parser")
    block = soup.select_one("article .source-links")
    if block is None:
        return ["no source links at the end of the article"]
    problems = []
    for kind in ("md", "ipynb", "pdf"):
        links = block.select(f"a.source-link-{kind}")
        if not any(a.has_attr("download") for a in links):
            problems.append(f"no download of the {kind}")
        for a in links:
            href = urlsplit(a["href"])
            if href.scheme or href.netloc:
                problems.append(f"{kind}: not a relative link: {a['href']}")
                continue
            target = (page.parent / unquote(href.path)).resolve()
            if kind == "pdf":
                if target != (site / PDF_NAME).resolve():
                    problems.append(f"pdf: links {a['href']}, not the book's {PDF_NAME}")
            elif not target.is_file():
                problems.append(f"{kind}: {a['href']} is not in the built site")
    menu = {a.get_text(strip=True) for a in soup.select(".dropdown-download-buttons a")}
    if not {".ipynb", ".md", ".pdf"} <= menu:
        problems.append(f"the download menu offers {sorted(menu)}")
    return problems


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_every_page_links_its_source_and_downloads(built_site, executed_chapters, doc):
    assert source_link_problems(built_site, doc) == [], _id(doc)
    if doc in CHAPTER_OF:
        chapter = _id(CHAPTERS[CHAPTER_OF[doc]][0])  # a sub-page links its chapter's files
        links = BeautifulSoup((built_site / f"{doc}.html").read_text(), "html.parser").select_one("article .source-links")
        md, ipynb = links.select_one("a.source-link-md"), links.select_one("a.source-link-ipynb[download]")
        assert md.get_text() == f"chapters/{chapter}.md"
        assert (built_site / f"{doc}.html").parent.joinpath(md["href"]).read_bytes() == (
            book.ROOT / "chapters" / f"{chapter}.md").read_bytes(), "the linked .md is not the chapter's source"
        assert ipynb.get_text() == ".ipynb" and (built_site / f"{doc}.html").parent.joinpath(ipynb["href"]).read_bytes() == (
            executed_chapters / f"{chapter}.ipynb").read_bytes(), "the .ipynb offered is not the whole executed chapter"
        run = links.select_one("p.source-links-run")
        assert run is not None and f"make lab CHAPTER={chapter[:2]}" in run.get_text() and (
            f"python -m posteval.book run {chapter[:2]}" in run.get_text()), f"{_id(doc)}: no line on opening it in JupyterLab"


@pytest.mark.parametrize("chapter", sorted({_id(docs[0]) for docs in CHAPTERS.values()}))
def test_make_lab_opens_the_chapter_a_page_names(chapter):
    """The line each chapter page shows, `make lab CHAPTER=NN`, starts JupyterLab on that chapter's source."""
    # not the environment of an enclosing `make test` (MAKEFLAGS, MAKELEVEL: make would print its directories)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    dry = subprocess.run(["make", "--no-print-directory", "-n", "lab", f"CHAPTER={chapter[:2]}"], cwd=book.ROOT,
                         capture_output=True, text=True, env=env)
    assert dry.returncode == 0 and dry.stdout.rstrip().endswith(f"chapters/{chapter}.md"), dry.stdout[-300:] + dry.stderr


def test_the_source_link_check_flags_a_page_without_them(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "x.html").write_text("<html><body><article><p>text</p></article></body></html>")
    assert source_link_problems(tmp_path, "book/x") == ["no source links at the end of the article"]
    (tmp_path / "book" / "x.html").write_text('<html><body><article><script type="text/x-thebe-config">'
                                               '{binderOptions: {repo: "binder-examples/x"}}</script></article></body></html>')
    assert source_link_problems(tmp_path, "book/x") == ["a Binder (thebe) configuration: text/x-thebe-config"]
    (tmp_path / "book" / "x.md").write_text("# x\n")
    (tmp_path / "book" / "x.html").write_text(
        '<html><body><div class="dropdown-download-buttons"><a>.ipynb</a><a>.md</a><a>.pdf</a></div><article>'
        '<div class="source-links"><a class="source-link-md" href="x.md" download>.md</a>'
        '<a class="source-link-ipynb" href="x.ipynb" download>.ipynb</a>'
        f'<a class="source-link-pdf" href="../{PDF_NAME}" download>PDF</a></div></article></body></html>')
    assert source_link_problems(tmp_path, "book/x") == ["ipynb: x.ipynb is not in the built site"]


# ---------------------------------------------------------------------------------------------
# 6. Links between pages


def link_problems(site: Path, doc: str) -> list[str]:
    """Links of a page's article to a page of the built site that is missing, or to an anchor the
    target page does not have (a {numref}, {ref} or {doc} across the pages of a chapter)."""
    page = site / f"{doc}.html"
    problems = []
    for a in _article(page).select("a.reference.internal[href]"):
        href = urlsplit(a["href"])
        if href.scheme or href.netloc or not (href.path.endswith(".html") or not href.path):
            continue
        target = (page.parent / unquote(href.path)).resolve() if href.path else page
        if not target.is_file():
            problems.append(f"{a['href']}: no such page")
        elif href.fragment and not _anchors(target) & {unquote(href.fragment)}:
            problems.append(f"{a['href']}: no anchor {href.fragment!r} in {target.name}")
    return problems


@cache
def _anchors(page: Path) -> frozenset:
    return frozenset(e["id"] for e in BeautifulSoup(page.read_text(), "html.parser").select("[id]"))


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_links_between_pages_land(built_site, doc):
    found = link_problems(built_site, doc)
    assert not found, f"{_id(doc)}: {len(found)} links that go nowhere: {found[:8]}"


def test_the_link_check_flags_a_missing_page_and_anchor(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "b.html").write_text('<html><body><article><h1 id="there">B</h1></article></body></html>')
    (tmp_path / "book" / "a.html").write_text(
        '<html><body><article><a class="reference internal" href="b.html#there">ok</a>'
        '<a class="reference internal" href="b.html#gone">anchor</a><a class="reference internal" href="c.html">page</a>'
        '<a class="reference internal" href="#there">here</a></article></body></html>')
    assert link_problems(tmp_path, "book/a") == ["b.html#gone: no anchor 'gone' in b.html", "c.html: no such page",
                                                 "#there: no anchor 'there' in a.html"]


# ---------------------------------------------------------------------------------------------
# 4. The PDF of the whole book


def _book_pdf():
    spec = importlib.util.spec_from_file_location("book_pdf", book.ROOT / "_ext" / "book_pdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pdf(request, built_site, tmp_path_factory):
    """The book's PDF: (text of every page, outline titles, link targets). Under --built-book (`make test`) the
    one `make pdf` made from `make book`'s HTML; otherwise made from the reference-built site as `make pdf` makes it."""
    from pypdf import PdfReader

    if built_book_mode(request.config):
        out = book.ROOT / "_build" / "pdf" / PDF_NAME
        assert out.exists(), f"make pdf did not leave {out.relative_to(book.ROOT)}"
    else:
        out = _book_pdf().build(built_site, tmp_path_factory.mktemp("pdf") / PDF_NAME)
    assert (built_site / PDF_NAME).read_bytes() == out.read_bytes(), "the PDF is not copied into the HTML output"
    reader = PdfReader(out)
    links = [str(a.get_object()["/A"].get("/URI", "")) for page in reader.pages for a in page.get("/Annots", [])
             if "/A" in a.get_object()]
    return [" ".join(p.extract_text().split()) for p in reader.pages], [o.title for o in reader.outline], links


def test_the_pdf_has_every_chapter_and_figure(built_site, pdf):
    pages, outline, links = pdf
    text = " ".join(pages)
    assert len(outline) == len(DOCS), f"outline {outline}"
    for n, docs in CHAPTERS.items():
        title = " ".join(_article(built_site / f"{docs[0]}.html").find("h1").get_text(" ").replace("#", "").split())
        assert title in outline, f"chapter {n}: {title!r} not in the PDF's outline"
        # the title as printed (pypdf may split a line of the title where it wraps)
        # (NFKC: Chromium prints "fi" as the ligature "ﬁ", which pypdf extracts as one character)
        assert re.sub(r"\W", "", title) in re.sub(r"\W", "", unicodedata.normalize("NFKC", text)), \
            f"chapter {n}'s title {title!r} not in the PDF"
    numbers = [" ".join(s.get_text().split()) for doc in DOCS
               for s in _article(built_site / f"{doc}.html").select("figure .caption-number")]
    missing = [n for n in numbers if n not in text]
    assert numbers and not missing, f"figure numbers of the HTML not in the PDF: {missing}"
    assert not [u for u in links if u.startswith("file:")], "links to this machine's files in the PDF"


def test_make_pdf_takes_the_relative_paths_of_the_makefile(tmp_path, monkeypatch):
    """`make pdf` passes `--html _build/html`: a relative page is printed from its absolute file URI
    (Path.as_uri() refuses a relative path), and a missing page is named, not a ValueError."""
    log = tmp_path / "args.txt"
    fake = tmp_path / "chromium"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "' + str(log) + '"\n'
                    'for a in "$@"; do case "$a" in --print-to-pdf=*) printf "%%PDF" > "${a#--print-to-pdf=}";; esac; done\n')
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "_build" / "html").mkdir(parents=True)
    (tmp_path / "_build" / "html" / "index.html").write_text("<html><title>t</title></html>")
    module = _book_pdf()
    module.print_page(Path("_build/html/index.html"), Path("page.pdf"), exe=str(fake), profile=Path("profile"))
    args = log.read_text().split()
    assert (tmp_path / "_build" / "html" / "index.html").as_uri() in args
    assert f"--print-to-pdf={tmp_path / 'page.pdf'}" in args
    with pytest.raises(SystemExit, match="pages not built in"):
        module.main(["--html", "_build/html", "--out", "_build/pdf/book.pdf"])
