"""The chapters in JupyterLab, for real, as a reader meets them.

A Jupyter server on the loopback interface with the repository's jupyter-config/ (as `make lab`
starts it) serves each chapter's MyST source as a notebook through the book's contents manager
(posteval.lab): glued numbers, figures and tables shown as in the HTML book, references and
citations as their text. Checked here: the view of every chapter against its source and against
the HTML book built from the same reference notebooks (figure numbers, citation labels, the text
of references to other pages); saving an unedited chapter rewrites both files byte for byte, an
edit keeps the directives; the file browser lists each chapter once; a kernel started by the
server runs chapter 1 up to its first figure (each chapter is executed once, by make book); and
headless Chromium, driven over the DevTools protocol, scrolls through each chapter's notebook view
and sees every figure's image, every glued table, no unknown directive and no unresolved reference (screenshots of one figure per chapter in
_build/test-artifacts/). Chapters 2-4 are opened and rendered from their stored outputs, never run.
"""

import asyncio
import base64
import copy
import itertools
import json
import os
import queue
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from functools import cache
from pathlib import Path

import jupytext
import pytest
import websocket  # websocket-client, a dependency of jupyter_server
from bs4 import BeautifulSoup
from jupyter_client import BlockingKernelClient

from posteval import book, lab, pages

CHAPTER = "chapters/01_total_variance.md"
SOURCES = book.chapter_sources()
IDS = [s.stem for s in SOURCES]
ARTIFACTS = book.ROOT / "_build" / "test-artifacts"


def html_chapter(built_site: Path, source: Path):
    """The articles of all HTML pages of a chapter (its page and its sections' pages, posteval.pages)
    as one document, in reading order, and the names of those pages."""
    import yaml

    names = pages.toc_chapter_pages(yaml.safe_load((book.ROOT / "_toc.yml").read_text()), source.stem)
    articles = [str(BeautifulSoup((built_site / "book" / f"{name}.html").read_text(), "html.parser").find("article"))
                for name in names]
    return BeautifulSoup("".join(articles), "html.parser"), names


def _text(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@cache
def chapter_facts(source: Path) -> dict:
    """What a chapter's source and reference notebook hold: glued figures (label -> PNG width), tables."""
    markdown = [c.source for c in jupytext.read(source).cells if c.cell_type == "markdown"]
    text = "\n".join(markdown)
    outputs = lab.glued_outputs(json.loads(source.with_suffix(".ipynb").read_text()))
    widths = {}
    for match in lab.GLUE_FIGURE.finditer(text):
        name = next(m["value"] for m in map(lab.OPTION.match, text[match.end() + 1:].split("\n")) if m and m["name"] == "name")
        png = base64.b64decode("".join(outputs[match["key"]]["image/png"].split())[:64])
        widths[name.strip()] = int.from_bytes(png[16:20], "big")
    return {
        "figures": len(re.findall(r"\{glue:figure\}", text)),  # every directive, whatever its form
        "widths": widths,
        "blocks": len(re.findall(r"^[ \t]*(?:`{3,}|:{3,})\{glue\}", text, re.M)),
        "values": sum(len(lab.GLUE_ROLE.findall(t)) for t in markdown),
        "n_code": sum(c.cell_type == "code" for c in jupytext.read(source).cells),
        "n_markdown": len(markdown),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, url, token, runtime):
        self.url, self.token, self.runtime = url, token, runtime

    def api(self, path, method="GET", body=None):
        req = urllib.request.Request(f"{self.url}/api/{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read() or b"null")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab")
    runtime = Path(tempfile.mkdtemp(prefix="lab-rt-"))  # short: kernels' IPC socket paths have a length limit
    token, port = secrets.token_hex(16), _free_port()
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(book.ROOT / "jupyter-config"), JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_RUNTIME_DIR=str(runtime), JUPYTER_DATA_DIR=str(tmp / "data"), IPYTHONDIR=str(tmp / "ipython"),
               PYTHONPATH=os.pathsep.join(p for p in (str(book.ROOT / "lib"), os.environ.get("PYTHONPATH")) if p))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={book.ROOT}",
           f"--FileCheckpoints.checkpoint_dir={tmp / 'checkpoints'}"]  # absolute: nothing written into the checkout
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    srv = Server(f"http://127.0.0.1:{port}", token, runtime)
    deadline = time.monotonic() + 90
    while True:
        try:
            srv.api("status")
            break
        except (urllib.error.URLError, ConnectionError):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"Jupyter server did not start:\n{(tmp / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
    yield srv
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
    shutil.rmtree(runtime, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# the book view, as the contents manager builds it
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def index():
    return lab.BookIndex.load(book.ROOT)


def book_view(source: Path) -> dict:
    """The reference notebook of a chapter as the contents manager shows it."""
    nb = json.loads(source.with_suffix(".ipynb").read_text())
    lab.show_book_view(nb, source)
    return nb


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_the_view_shows_every_glued_value_figure_table_and_reference_and_saving_restores_it(source, index):
    nb = json.loads(source.with_suffix(".ipynb").read_text())
    original = [_text(c) for c in nb["cells"]]
    facts = chapter_facts(source)
    assert facts["figures"] > 0 and facts["values"] > 0
    counts = lab.show_book_view(nb, source)
    assert counts["values"] == facts["values"], "a {glue:text} key has no glued value in the reference notebook"
    assert counts["figures"] == facts["figures"] == len(facts["widths"]), "a {glue:figure} is not shown"
    assert counts["blocks"] == facts["blocks"], "a {glue} table is not shown"
    doc = index.doc_of(source)
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        shown = lab.SHOWN_BLOCK.sub("", _text(cell))  # the comments of a shown block hold its directive
        assert "{glue" not in shown, shown[:300]
        for match in lab.BOOK_ROLE.finditer(shown):  # what is left must be a reference jupyterlab-myst resolves
            target = lab.EXPLICIT.match(match["content"])
            target = target["target"] if target else match["content"]
            found = index.targets.get(target)
            assert match["role"] in ("numref", "ref") and found is not None and found.doc == doc, (
                f"{source.name}: {match.group(0)} is neither shown as text nor a reference inside the chapter")
        for name in re.findall(r"attachment:(\S+?)[)\s]", shown):
            assert name in cell.get("attachments", {}), f"attachment {name} missing"
    lab.restore_sources(nb)
    assert [_text(c) for c in nb["cells"]] == original, "saving would change the source"
    assert not any("attachments" in c for c in nb["cells"])


def test_figures_of_a_notebook_outside_the_book_are_numbered_in_its_own_order():
    source = SOURCES[1]
    nb = json.loads(source.with_suffix(".ipynb").read_text())
    assert lab.show_glue_figures(nb) == chapter_facts(source)["figures"]
    numbers = re.findall(r":enumerator: (\d+)", "\n".join(_text(c) for c in nb["cells"]))
    assert numbers == [str(i) for i in range(1, len(numbers) + 1)]


def _plain(text: str) -> str:
    """Text without math delimiters and extra spaces (the HTML keeps \\( \\), the view $)."""
    return " ".join(re.sub(r"\\\(|\\\)|\$", "", text).replace("\xa0", " ").split())


def _shown_text(match) -> str:
    """The text a reader sees for a shown role ``{abbr}`TEXT (ROLE CONTENT)```, as plain text."""
    return _plain(match.group(0)[len("{abbr}`"):match.start("role") - match.start() - len(" (")])


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_numbers_citations_and_references_are_those_of_the_html_book(source, built_site, index):
    article, names = html_chapter(built_site, source)
    html_figures = {f["id"]: " ".join(f.select_one(".caption-number").get_text().split())
                    for f in article.find_all("figure") if f.get("id") and f.select_one(".caption-number")}
    doc = index.doc_of(source)
    lab_figures = {label: index.figure_format % t.number for label, t in index.targets.items()
                   if t.kind == "figure" and t.doc == doc}
    assert lab_figures == html_figures
    view = "\n".join(_text(c) for c in book_view(source)["cells"] if c["cell_type"] == "markdown")
    shown = [(m["role"], _shown_text(m)) for m in lab.SHOWN_BOOK_ROLE.finditer(view)]
    html_cites = [_plain(e.get_text()) for e in article.select("span.bibtex-citation")]
    assert html_cites and [t for role, t in shown if role.startswith("cite")] == html_cites
    # links to other chapters and pages of the book (citations and the bibliography aside), in the order of
    # the text; a link between two pages of the chapter is one inside the notebook (jupyterlab-myst's)
    html_refs = [_plain(a.get_text()) for a in article.select("a.reference.internal[href]")
                 if not a["href"].startswith("#") and not a["href"].startswith("references.html")
                 and a["href"].split("#")[0].removesuffix(".html") not in names
                 and not a.find_parent(class_="bibtex-citation")]
    lab_refs = sorted([(m.start(), _shown_text(m)) for m in lab.SHOWN_BOOK_ROLE.finditer(view) if not m["role"].startswith("cite")]
                      + [(m.start(), _plain(m["text"])) for m in lab.SHOWN_LINK.finditer(view)])
    assert html_refs and [t for _, t in lab_refs] == html_refs


def _book_copy(tmp_path: Path) -> Path:
    """The files the contents manager reads for the chapters, in a scratch root (nothing written to the checkout)."""
    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    (root / "chapters").mkdir()
    for name in ("_toc.yml", "_config.yml"):
        shutil.copy2(book.ROOT / name, root / name)
    shutil.copytree(book.ROOT / "_ext", root / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    for f in [*(book.ROOT / "book").glob("*.md"), book.ROOT / "book" / "references.bib"]:
        shutil.copy2(f, root / "book" / f.name)
    for f in [book.CHAPTERS / "jupytext.toml", *SOURCES, *(s.with_suffix(".ipynb") for s in SOURCES)]:
        shutil.copy2(f, root / "chapters" / f.name)
    return root


@pytest.fixture(scope="module")
def scratch_book(tmp_path_factory):
    return _book_copy(tmp_path_factory.mktemp("scratch-book"))


def _open_and_save(root: Path, path: str, edit=None):
    """Open a notebook through the book's contents manager, edit it, save it; (opened, reopened) models."""
    manager = lab.BookContentsManager(root_dir=str(root))

    async def run():
        model = await manager.get(path, content=True)
        opened = copy.deepcopy(model)  # saving restores the sources in place
        if edit is not None:
            edit(model["content"])
        await manager.save({"type": "notebook", "format": "json", "content": model["content"]}, path)
        return opened, await manager.get(path, content=True)

    return asyncio.run(run())


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_saving_an_unedited_chapter_rewrites_both_files_byte_for_byte(source, scratch_book):
    md, ipynb = scratch_book / "chapters" / source.name, scratch_book / "chapters" / f"{source.stem}.ipynb"
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (md, ipynb)}
    time.sleep(0.01)
    model, _ = _open_and_save(scratch_book, f"chapters/{source.name}")
    shown = [name for c in model["content"]["cells"] for name in c.get("attachments") or {}]
    assert len(shown) == chapter_facts(source)["figures"]
    for path, (data, mtime) in before.items():
        assert path.stat().st_mtime_ns > mtime, f"{path.name} was not written"
        assert path.read_bytes() == data, f"{path.name} changed on saving an unedited chapter"


def test_an_edited_caption_and_a_new_figure_survive_save_and_reopen(tmp_path):
    root = _book_copy(tmp_path)
    source = SOURCES[0]
    nb = json.loads(source.with_suffix(".ipynb").read_text())
    outputs = {out["metadata"]["scrapbook"]["name"]: out for c in nb["cells"] for out in c.get("outputs", [])
               if (out.get("metadata") or {}).get("scrapbook")}
    other_png = outputs["fig.bias"]["data"][lab.RECORD_PREFIX + "image/png"]

    def edit(content):  # change a caption, and re-run the cell that glues fig.spectra (it now glues another PNG)
        cell = next(c for c in content["cells"] if "attachments" in c and "fig.spectra" + lab.ATTACHMENT_SUFFIX in c["attachments"])
        assert cell["source"].startswith("```{figure} attachment:fig.spectra.glue.png\n:enumerator: 1.1\n"), cell["source"][:80]
        cell["source"] = cell["source"].replace("Lower panel: ratio to the truth.", "Lower panel: the ratio.")
        bias = next(c for c in content["cells"] if "fig.bias" + lab.ATTACHMENT_SUFFIX in (c.get("attachments") or {}))
        assert ":enumerator: 1.2\n" in bias["source"]
        bias["source"] = bias["source"].replace(":enumerator: 1.2\n", "")  # a reader deletes the number line
        for c in content["cells"]:
            for out in c.get("outputs", []):
                if (out.get("metadata") or {}).get("scrapbook", {}).get("name") == "fig.spectra":
                    out["data"][lab.RECORD_PREFIX + "image/png"] = other_png

    _, reopened = _open_and_save(root, f"chapters/{source.name}", edit)
    text = (root / "chapters" / source.name).read_text()
    assert "```{glue:figure} fig.spectra\n:name: fig-01-spectra\n" in text
    assert "Lower panel: the ratio." in text and "attachment:" not in text and "{abbr}" not in text
    assert text.replace("Lower panel: the ratio.", "Lower panel: ratio to the truth.") == source.read_text()
    cell = next(c for c in reopened["content"]["cells"] if "fig.spectra" + lab.ATTACHMENT_SUFFIX in (c.get("attachments") or {}))
    shown = cell["attachments"]["fig.spectra" + lab.ATTACHMENT_SUFFIX]["image/png"]
    assert shown == "".join("".join(other_png).split()), "the reopened chapter does not show the re-run figure"


@pytest.fixture(scope="module")
def chapter_model(server):
    return server.api(f"contents/{CHAPTER}?type=notebook&content=1")


def test_chapter_opens_as_a_notebook_with_its_numbers_in_the_prose(chapter_model):
    assert chapter_model["type"] == "notebook"
    source = jupytext.read(book.ROOT / CHAPTER)
    cells = chapter_model["content"]["cells"]
    assert [c["cell_type"] for c in cells] == [c.cell_type for c in source.cells]
    assert [c["source"] for c in cells if c["cell_type"] == "code"] == [c.source for c in source.cells if c.cell_type == "code"]
    prose = "\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
    assert "{glue:text}" not in prose, "a glued number is not shown"
    values = lab.glued_values(json.loads((book.ROOT / CHAPTER).with_suffix(".ipynb").read_text()))
    assert f"{{abbr}}`{lab.format_glued(values['noise_value'], '')} (glue noise_value)`" in prose
    restored = json.loads(json.dumps(chapter_model["content"]))
    lab.restore_sources(restored)
    assert [c["source"] for c in restored["cells"]] == [c.source for c in source.cells], "saving would change the source"


def test_kernel_started_by_the_server_runs_the_chapter_up_to_its_first_figure(server, chapter_model):
    # make test executes each chapter once (make book); here the server's kernel runs chapter 1 as a reader's
    # "run all" begins: parameters, imports, setup, the first computation, numbers recorded and the first figure
    # drawn and glued (the rest of the chapter is papermill's, in make book)
    session = server.api("sessions", "POST", {"path": CHAPTER, "type": "notebook", "name": "", "kernel": {"name": "python3"}})
    client = BlockingKernelClient()
    client.load_connection_file(str(server.runtime / f"kernel-{session['kernel']['id']}.json"))
    client.start_channels()
    stderr = []

    def hook(msg):
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stderr":
            stderr.append(msg["content"]["text"])

    try:
        # The kernel is up when it answers on shell; IOPub (a subscription) is connected only once one of
        # its status messages arrives: outputs published before that are lost, so ask until one does.
        deadline = time.monotonic() + 120
        while True:
            client.kernel_info()
            try:
                client.get_shell_msg(timeout=5)
                client.get_iopub_msg(timeout=2)
                break
            except queue.Empty:
                assert time.monotonic() < deadline, "the kernel's IOPub channel never connected"
        while True:  # drain the status messages of the handshake
            try:
                client.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                break
        code = [c["source"] for c in chapter_model["content"]["cells"] if c["cell_type"] == "code"]
        first_figure = next(i for i, source in enumerate(code) if re.search(r'glue\("fig\.', source))
        for i, source in enumerate(code[:first_figure + 1]):
            reply = client.execute_interactive(source, timeout=600, output_hook=hook)
            content = reply["content"]
            assert content["status"] == "ok", f"code cell {i}: {content.get('ename')}: {content.get('evalue')}"
        shown = []
        reply = client.execute_interactive("from posteval.book import recorded; print(len(recorded()))", timeout=60,
                                           output_hook=lambda m: shown.append(m["content"].get("text", ""))
                                           if m["msg_type"] == "stream" else hook(m))
        assert reply["content"]["status"] == "ok" and int("".join(shown).strip()) > 0, shown
    finally:
        client.stop_channels()
    assert not [t for t in stderr if "Warning" in t], stderr



def test_file_browser_lists_each_chapter_once(server):
    names = [m["name"] for m in server.api("contents/chapters?content=1")["content"]]
    assert sorted(n for n in names if n[:2].isdigit()) == sorted(s.name for s in SOURCES), names
    model = server.api(f"contents/{SOURCES[0].with_suffix('.ipynb').relative_to(book.ROOT)}?type=notebook&content=1")
    assert model["type"] == "notebook", "the reference notebook no longer opens from its path"


# ---------------------------------------------------------------------------------------------
# JupyterLab in headless Chromium, driven over the DevTools protocol
# ---------------------------------------------------------------------------------------------
class Browser:
    """Headless Chromium with a DevTools connection to its page (on 127.0.0.1): navigate, run JS, screenshot."""

    def __init__(self, profile: Path, width=1400, height=3000):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        assert exe, "Debian chromium is not installed (make test installs it)"
        profile.mkdir(parents=True, exist_ok=True)
        port_file = profile / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--window-size={width},{height}",
             f"--user-data-dir={profile}", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            assert self.proc.poll() is None and time.monotonic() < deadline, "Chromium did not start"
            time.sleep(0.2)
        port = int(port_file.read_text().split()[0])
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
                    page = next(t for t in json.load(resp) if t["type"] == "page")
                break
            except (OSError, StopIteration):
                assert time.monotonic() < deadline, "Chromium shows no page"
                time.sleep(0.2)
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=120, suppress_origin=True)
        self.ids = itertools.count(1)

    def send(self, method, **params):
        i = next(self.ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == i:
                assert "error" not in msg, f"{method}: {msg['error']}"
                return msg["result"]

    def js(self, expression):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, f"JavaScript failed: {result['exceptionDetails']}"
        return result["result"].get("value")

    def wait_for(self, expression, what, timeout=120):
        deadline = time.monotonic() + timeout
        while not (value := self.js(expression)):
            assert time.monotonic() < deadline, f"JupyterLab: timed out waiting for {what}"
            time.sleep(0.5)
        return value

    def screenshot(self, path: Path, clip=None):
        params = {"format": "png"}
        if clip:
            params.update(clip={**clip, "scale": 1}, captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", **params)["data"]))

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium-cdp"))
    b.send("Page.enable")
    yield b
    b.close()


NOTEBOOK = "document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook')"
SCROLLER = "document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')"
# What the reader sees at one scroll position: figures whose image is decoded and on screen, glued
# tables, error boxes and unresolved references of jupyterlab-myst, links into /files/ (dead in the lab).
PROBE = """(() => {
  const nb = %s, out = {figures: {}, tables: [], problems: [], dead: [], glued: 0};
  const onScreen = r => r.height > 50 && r.bottom > 0 && r.top < innerHeight;
  for (const f of nb.querySelectorAll('.jp-MarkdownCell figure[id]')) {
    const img = f.querySelector('img'), cap = f.querySelector('figcaption');
    if (img && img.complete && img.naturalWidth > 0 && onScreen(img.getBoundingClientRect()))
      out.figures[f.id] = {width: img.naturalWidth, caption: cap ? cap.textContent.replace(/\\s+/g, ' ') : ''};
  }
  for (const t of nb.querySelectorAll('.jp-MarkdownCell .posteval-glue')) if (t.querySelector('table')) out.tables.push(t.title);
  for (const e of nb.querySelectorAll('.jp-MarkdownCell .myst [title]'))
    if (/not found|unknown|error/i.test(e.title)) out.problems.push(e.title + ': ' + e.textContent.slice(0, 80));
  for (const e of nb.querySelectorAll('.jp-MarkdownCell .myst')) {
    for (const m of e.textContent.matchAll(/.{0,40}Unknown (Directive|Role).{0,40}/g)) out.problems.push(m[0]);
  }
  for (const a of nb.querySelectorAll('.jp-MarkdownCell .myst a[href]'))
    if (a.getAttribute('href').includes('/files/')) out.dead.push(a.textContent + ' -> ' + a.getAttribute('href').split('?')[0]);
  out.glued = nb.querySelectorAll('.jp-MarkdownCell abbr[aria-label^="glue "]').length;
  out.equationNumbers = nb.querySelectorAll('.jp-MarkdownCell .myst a[title="Link to this Equation"]').length;
  return out;
})()""" % NOTEBOOK


def scroll_through(browser, step=0.8):
    """Scroll the notebook view from top to bottom; what PROBE saw anywhere on the way (a window 3,000 px
    tall takes a third of the stops, and of the pauses, of a 1,000 px one: 98 s instead of 159 s for the four chapters)."""
    seen = {"figures": {}, "tables": set(), "problems": set(), "dead": set(), "glued": 0, "equation_numbers": 0,
            "positions": 0}
    browser.js(f"{SCROLLER}.scrollTop = 0")
    while True:
        time.sleep(0.4)
        probe = browser.js(PROBE)
        seen["figures"].update(probe["figures"])
        seen["tables"].update(probe["tables"])
        seen["problems"].update(probe["problems"])
        seen["dead"].update(probe["dead"])
        seen["glued"] = max(seen["glued"], probe["glued"])
        seen["equation_numbers"] = max(seen["equation_numbers"], probe["equationNumbers"])
        seen["positions"] += 1
        top, height, total = browser.js(f"(s => [s.scrollTop, s.clientHeight, s.scrollHeight])({SCROLLER})")
        if top + height >= total - 2:
            return seen
        browser.js(f"{SCROLLER}.scrollTop = {top + int(height * step)}")


@pytest.fixture(scope="module")
def html_equation_numbers(built_site):
    """chapter stem -> how many equation numbers its HTML pages show."""
    return {s.stem: len(html_chapter(built_site, s)[0].select(".eqno")) for s in SOURCES}


@pytest.fixture(scope="module")
def html_figure_numbers(built_site):
    """figure label -> "Figure N" as the HTML book captions it."""
    numbers = {}
    for source in SOURCES:
        for f in html_chapter(built_site, source)[0].find_all("figure"):
            if f.get("id") and f.select_one(".caption-number"):
                numbers[f["id"]] = " ".join(f.select_one(".caption-number").get_text().split())
    return numbers


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_jupyterlab_shows_every_figure_table_and_reference_of_the_chapter(source, server, browser, html_figure_numbers,
                                                                         html_equation_numbers):
    facts = chapter_facts(source)
    path = source.relative_to(book.ROOT).as_posix()
    browser.send("Page.navigate", url=f"{server.url}/lab/tree/{path}?reset&token={server.token}")
    browser.wait_for(f"(nb => nb && nb.querySelectorAll('.jp-Cell').length == {facts['n_code'] + facts['n_markdown']})({NOTEBOOK})",
                     "the chapter open as a notebook")
    # every markdown cell rendered by jupyterlab-myst (the first may render as the page's title block)
    browser.wait_for(f"{NOTEBOOK}.querySelectorAll('.jp-MarkdownCell .myst').length >= {facts['n_markdown'] - 1}",
                     "jupyterlab-myst to render every markdown cell")
    assert browser.js(f"{NOTEBOOK}.querySelectorAll('.jp-CodeCell').length") == facts["n_code"]
    assert browser.js(f"{NOTEBOOK}.querySelectorAll('.katex').length") > 0, "math not typeset"
    stem = source.stem[:2]
    if source == SOURCES[0]:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        browser.screenshot(ARTIFACTS / f"jupyterlab_ch{stem}.png")
    seen = scroll_through(browser)
    assert seen["positions"] > 3, "the notebook view did not scroll"
    assert not seen["problems"], f"{source.name}: {sorted(seen['problems'])}"
    assert not seen["dead"], f"{source.name}: links that lead nowhere in JupyterLab: {sorted(seen['dead'])}"
    assert seen["glued"] > 0, "no glued number shown in the prose"
    assert len(seen["figures"]) == facts["figures"], (
        f"{source.name}: {facts['figures']} figures in the source, images of {sorted(seen['figures'])} seen")
    for label, figure in seen["figures"].items():
        assert figure["width"] == facts["widths"][label], f"{label}: not the stored PNG"
        assert figure["caption"].replace("\xa0", " ").startswith(html_figure_numbers[label] + ":"), (
            f"{label}: caption {figure['caption'][:40]!r}, the HTML book has {html_figure_numbers[label]!r}")
    assert len(seen["tables"]) == facts["blocks"], f"{source.name}: glued tables seen: {sorted(seen['tables'])}"
    assert seen["equation_numbers"] == html_equation_numbers[source.stem], "equation numbers the HTML book does not show"
    # one figure per chapter, as the reader sees it
    first = next(iter(facts["widths"]))
    browser.js(f"document.getElementById('{first}').scrollIntoView({{block: 'center'}})")
    time.sleep(1)
    # the figure with its caption, which may run to the right edge of the rendered cell
    rect = browser.js(f"""(f => {{ const r = f.getBoundingClientRect(), c = f.closest('.myst').getBoundingClientRect();
        return {{x: Math.max(r.x - 8, 0), y: Math.max(r.y - 8, 0), width: Math.max(r.right, c.right) - r.x + 16,
                height: r.height + 16}}; }})(document.getElementById('{first}'))""")
    assert rect["width"] > 200 and rect["height"] > 100, rect
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"jupyterlab_ch{stem}_figure.png"
    shot.unlink(missing_ok=True)
    browser.screenshot(shot, clip=rect)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert abs(pixels.shape[1] - rect["width"]) <= 2 and pixels[..., :3].std() > 0.05, "the figure's screenshot is blank"
