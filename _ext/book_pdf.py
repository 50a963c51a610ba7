"""The whole book as one PDF, from the built HTML, offline: ``make pdf``.

Every page of ``_toc.yml`` (root first, then depth first, as the HTML book orders them) is printed
by headless Chromium (``--print-to-pdf``, the theme's print style: no sidebars; MathJax typeset
from the vendored copy, the page's own figures) and the pages are merged by pypdf into one file
with an outline entry per page. Links to files on this machine (``file://``) are dropped from the
PDF (they would name this machine's paths); links to the web stay. The PDF is then copied to the
root of the HTML output, where every page's download menu links it (``_ext/source_links.py``).

    python _ext/book_pdf.py [--html _build/html] [--out _build/pdf/pointwise-metrics-mislead.pdf]
"""

import argparse
import shutil
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# the file every page's download menu links (_config.yml: source_links_pdf)
NAME = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["source_links_pdf"]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=20000", "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw"]
PRINTERS = max(1, min(4, os.cpu_count() or 1))  # Chromium processes printing pages side by side


def pages(toc_file: Path = ROOT / "_toc.yml") -> list[str]:
    """The book's pages in reading order (``book/intro``, ``book/notation``, ...)."""
    from posteval.lab import toc_pages

    return toc_pages(yaml.safe_load(Path(toc_file).read_text()))


def chromium_executable() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        raise SystemExit("book_pdf: Debian chromium is not installed (`make chromium` installs it)")
    return exe


def print_page(html: Path, pdf: Path, *, exe: str, profile: Path) -> None:
    """One HTML page to one PDF; an error names the page. Relative paths are taken from the current folder."""
    html, pdf, profile = Path(html).resolve(), Path(pdf).resolve(), Path(profile).resolve()
    proc = subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", f"--print-to-pdf={pdf}", html.as_uri()],
                          capture_output=True, text=True, timeout=180)
    if not pdf.is_file() or pdf.stat().st_size == 0:
        raise RuntimeError(f"book_pdf: Chromium printed nothing for {html}: {proc.stderr[-800:]}")


def _title(html: Path) -> str:
    from html.parser import HTMLParser

    class Title(HTMLParser):
        def __init__(self):
            super().__init__()
            self.inside, self.text = False, ""

        def handle_starttag(self, tag, attrs):
            self.inside = self.inside or tag == "title"

        def handle_endtag(self, tag):
            if tag == "title":
                self.inside = False

        def handle_data(self, data):
            if self.inside:
                self.text += data

    parser = Title()
    parser.feed(html.read_text())
    return " ".join(parser.text.rsplit(" — ", 1)[0].split()) or html.stem


def _drop_local_links(page) -> None:
    """Remove link annotations that point at files of this machine."""
    annots = page.get("/Annots")
    if annots is None:
        return
    keep = []
    for ref in annots.get_object():
        annot = ref.get_object()
        action = annot.get("/A")
        uri = action.get_object().get("/URI") if action is not None else None
        if uri is not None and str(uri).startswith("file:"):
            continue
        keep.append(ref)
    from pypdf.generic import ArrayObject, NameObject

    page[NameObject("/Annots")] = ArrayObject(keep)


def build(html_dir: Path, out: Path, *, toc_file: Path = ROOT / "_toc.yml", config: Path = ROOT / "_config.yml",
          copy_into_html: bool = True) -> Path:
    """Print every page of the book in ``html_dir`` and merge them into ``out``; returns ``out``."""
    from pypdf import PdfReader, PdfWriter

    html_dir, out = Path(html_dir).resolve(), Path(out).resolve()  # `make pdf` passes _build/html
    docs = pages(toc_file)
    missing = [d for d in docs if not (html_dir / f"{d}.html").is_file()]
    if missing:
        raise SystemExit(f"book_pdf: pages not built in {html_dir}: {missing} (run `make html` first)")
    exe = chromium_executable()
    writer = PdfWriter()
    with tempfile.TemporaryDirectory(prefix="book-pdf-") as tmp:
        tmp = Path(tmp)
        parts = [tmp / f"{i:03d}.pdf" for i in range(len(docs))]
        # the pages print side by side, one Chromium each with its own profile (a profile is locked by its
        # browser); they are merged in the book's order
        with ThreadPoolExecutor(max_workers=PRINTERS) as pool:
            list(pool.map(lambda i: print_page(html_dir / f"{docs[i]}.html", parts[i], exe=exe,
                                               profile=tmp / f"profile-{i}"), range(len(docs))))
        for doc, part in zip(docs, parts):
            first = len(writer.pages)
            for page in PdfReader(part).pages:
                _drop_local_links(page)
                writer.add_page(page)
            writer.add_outline_item(title=_title(html_dir / f"{doc}.html"), page_number=first)
    meta = yaml.safe_load(Path(config).read_text()) if Path(config).is_file() else {}
    writer.add_metadata({"/Title": str(meta.get("title", "")), "/Author": str(meta.get("author", ""))})
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        writer.write(f)
    if copy_into_html:
        shutil.copyfile(out, html_dir / out.name)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "pdf" / NAME)
    args = parser.parse_args(argv)
    out = build(args.html, args.out)
    print(f"{out} ({out.stat().st_size / 1e6:.1f} MB), copied to {args.html / out.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
