"""The chapters in JupyterLab, for real: a Jupyter server on the loopback interface with the
repository's jupyter-config/ (as `make lab` starts it) serves chapter 1's MyST source as a
notebook, a kernel started by the server runs its code cells without error, and headless
Chromium shows JupyterLab with the chapter open as rendered notebook cells (screenshot kept in
_build/test-artifacts/)."""

import html
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
from pathlib import Path

import jupytext
import pytest
from jupyter_client import BlockingKernelClient

from posteval import book, lab

CHAPTER = "chapters/01_total_variance.md"
ARTIFACTS = book.ROOT / "_build" / "test-artifacts"


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


@pytest.mark.parametrize("source", book.chapter_sources(), ids=[s.stem for s in book.chapter_sources()])
def test_every_glued_number_is_shown_and_saving_restores_the_roles(source):
    nb = json.loads(source.with_suffix(".ipynb").read_text())
    def text(c):
        return "".join(c["source"]) if isinstance(c["source"], list) else c["source"]

    original = [text(c) for c in nb["cells"]]
    roles = sum(len(lab.GLUE_ROLE.findall(text(c))) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert roles > 0
    assert lab.show_glue_values(nb) == roles, "a {glue:text} key has no glued value in the reference notebook"
    lab.restore_glue_roles(nb)
    assert [text(c) for c in nb["cells"]] == original


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
    assert f"{{abbr}}`{lab.format_glued(values['noise_value'], '.2f')} (glue noise_value:.2f)`" in prose
    restored = json.loads(json.dumps(chapter_model["content"]))
    lab.restore_glue_roles(restored)
    assert [c["source"] for c in restored["cells"]] == [c.source for c in source.cells], "saving would change the source"


def test_kernel_started_by_the_server_runs_the_chapter(server, chapter_model):
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
        for i, cell in enumerate(c for c in chapter_model["content"]["cells"] if c["cell_type"] == "code"):
            reply = client.execute_interactive(cell["source"], timeout=600, output_hook=hook)
            content = reply["content"]
            assert content["status"] == "ok", f"code cell {i}: {content.get('ename')}: {content.get('evalue')}"
    finally:
        client.stop_channels()
    assert not [t for t in stderr if "Warning" in t], stderr


CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--virtual-time-budget=30000", "--window-size=1400,2600",
]


def _chromium(profile, *args):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "Debian chromium is not installed (make test installs it)"
    return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=180)


def test_jupyterlab_shows_the_chapter_as_rendered_notebook_cells(server, tmp_path):
    page = f"{server.url}/lab/tree/{CHAPTER}?token={server.token}"
    dom = _chromium(tmp_path / "profile", "--dump-dom", page).stdout
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "jupyterlab_ch01.html").write_text(dom)
    source = jupytext.read(book.ROOT / CHAPTER)
    n_code = sum(c.cell_type == "code" for c in source.cells)
    n_markdown = sum(c.cell_type == "markdown" for c in source.cells)
    assert "jp-NotebookPanel" in dom, "JupyterLab did not open the chapter as a notebook"
    assert len(re.findall(r'class="lm-Widget jp-Cell jp-CodeCell', dom)) == n_code
    assert len(re.findall(r'class="lm-Widget jp-Cell jp-MarkdownCell', dom)) == n_markdown
    assert dom.count('class="lm-Widget myst"') >= n_markdown - 1, "markdown cells not rendered by jupyterlab-myst"
    assert 'class="katex"' in dom, "math not typeset"
    title = html.escape("glue noise_value:.2f", quote=True)
    values = lab.glued_values(json.loads((book.ROOT / CHAPTER).with_suffix(".ipynb").read_text()))
    assert re.search(rf'<abbr[^>]*aria-label="{re.escape(title)}"[^>]*>{re.escape(lab.format_glued(values["noise_value"], ".2f"))}</abbr>', dom), \
        "the glued number is not rendered in the prose"
    shot = ARTIFACTS / "jupyterlab_ch01.png"
    shot.unlink(missing_ok=True)
    _chromium(tmp_path / "profile", f"--screenshot={shot}", page)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (2600, 1400)
    assert pixels[..., :3].std() > 0.05, "the screenshot is blank"
