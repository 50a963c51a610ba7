"""The book's runner and the one call a chapter uses to report a number.

In a chapter::

    from lib.book import record, seed_everything
    seed_everything(0)
    record("crps.flow", 0.4312)          # glued for the prose as {glue:text}`crps.flow:.3f`

From a shell::

    python -m lib.book run               # every chapter, profile ci, into book/
    python -m lib.book run 02 --profile full
    python -m lib.book reference 02      # re-execute chapters/02_*.md into its paired .ipynb

``run`` executes ``chapters/NN_name.md`` with papermill (parameters from
``params/<profile>/NN_name.yaml``) into ``book/NN_name.ipynb`` and writes
``book/results/NN_name.json``: every recorded number plus profile, device, torch version,
seconds and git commit. Outputs are written to a temporary file and renamed, so an
interrupted run never leaves a half-written notebook or JSON behind.
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
BOOK = ROOT / "book"
PARAMS = ROOT / "params"
RESULTS = BOOK / "results"
PROFILES = ("ci", "full")
RECORD_FILE_ENV = "BOOK_RECORD_FILE"
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")

_recorded: dict[str, object] = {}


# ---------------------------------------------------------------------------------------------
# inside a chapter
# ---------------------------------------------------------------------------------------------
def _plain(value):
    """A JSON-friendly Python scalar for a number, bool or string (numpy scalars included)."""
    if isinstance(value, (bool, str)):
        return value
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise ValueError(f"value: record() takes a number, bool or string, got {type(value).__name__}")


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _json_value(v):
    return None if isinstance(v, float) and not math.isfinite(v) else v


def record(name: str, value, *, display: bool = False):
    """Report one number of the chapter: glue it for the prose and store it for the results JSON.

    Parameters
    ----------
    name : flat dotted key such as ``crps.flow`` (letters, digits, ``_ . -``)
    value : a number, bool or string (numpy scalars accepted)
    display : also show the value as the cell's output

    Returns the value as a plain Python scalar.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name: {name!r} is not a flat key of letters, digits, '_', '.', '-'")
    value = _plain(value)
    _recorded[name] = value
    try:
        from myst_nb import glue
    except ImportError:  # outside the book toolchain the number is still recorded
        pass
    else:
        glue(name, value, display=display)
    target = os.environ.get(RECORD_FILE_ENV)
    if target:
        atomic_write_text(Path(target), json.dumps({k: _json_value(v) for k, v in _recorded.items()}, indent=1))
    return value


def recorded() -> dict[str, object]:
    """A copy of every number recorded in this process so far."""
    return dict(_recorded)


def seed_everything(seed: int, *, threads: int | None = None) -> None:
    """Seed Python, numpy and torch, and make torch deterministic (optionally fix its threads)."""
    if not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed: expected a non-negative integer, got {seed!r}")
    random.seed(seed)
    import numpy as np

    np.random.seed(seed)
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    if threads is not None:
        torch.set_num_threads(threads)


def device_name() -> str:
    """``cuda:<name>`` when a CUDA device is visible, else ``cpu``."""
    try:
        import torch
    except ImportError:
        return "cpu"
    return f"cuda:{torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else "cpu"


# ---------------------------------------------------------------------------------------------
# the runner
# ---------------------------------------------------------------------------------------------
def chapter_sources() -> list[Path]:
    """All chapter sources ``chapters/NN_name.md``, in order."""
    return sorted(p for p in CHAPTERS.glob("[0-9][0-9]_*.md"))


def resolve_chapter(spec: str) -> Path:
    """The chapter source for a stem (``02_synthetic_bimodal``) or its number (``02`` or ``2``)."""
    sources = chapter_sources()
    for p in sources:
        if spec in (p.stem, p.name):
            return p
    if spec.isdigit():
        hits = [p for p in sources if p.stem.split("_", 1)[0] == f"{int(spec):02d}"]
        if len(hits) == 1:
            return hits[0]
    names = ", ".join(p.stem for p in sources) or "none"
    raise ValueError(f"chapter: no chapter matches {spec!r} (have: {names})")


def load_parameters(stem: str, profile: str) -> dict:
    """Papermill parameters of one chapter and profile (empty when the profile has no file)."""
    if profile not in PROFILES:
        raise ValueError(f"profile: expected one of {PROFILES}, got {profile!r}")
    path = PARAMS / profile / f"{stem}.yaml"
    if not path.exists():
        return {}
    import yaml

    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of parameter names to values")
    return data


def git_commit() -> str:
    """The current commit, with ``-dirty`` when tracked files are modified; ``unknown`` outside git."""
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("-dirty" if dirty else "")


def _ipc_kernels():
    """Kernel-manager config for one local kernel over IPC sockets (not TCP: no plain-text warning).

    Its connection file gets a unique name in Jupyter's runtime folder, so that the sockets,
    named after it, have an absolute path there (not one relative to the working directory).
    """
    import uuid

    from jupyter_core.paths import jupyter_runtime_dir
    from traitlets.config import Config

    runtime = Path(jupyter_runtime_dir())
    runtime.mkdir(parents=True, exist_ok=True)
    return Config({"KernelManager": {"transport": "ipc", "connection_file": str(runtime / f"kernel-{uuid.uuid4()}.json")}})


def _relative_papermill_paths(nb_path: Path, out_path: Path, source: Path) -> None:
    """Replace the absolute paths papermill stores in a notebook's metadata by repository-relative ones."""
    nb = json.loads(nb_path.read_text())
    meta = nb.get("metadata", {}).get("papermill", {})
    for key, path in (("input_path", source), ("output_path", out_path)):
        if meta.get(key):
            meta[key] = os.path.relpath(path, ROOT)
    atomic_write_text(nb_path, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def run_chapter(source: Path, profile: str = "ci", out_dir: Path = BOOK, kernel_name: str = "python3") -> dict:
    """Execute one chapter with papermill into ``out_dir`` and write its results JSON.

    Returns the results dictionary (recorded numbers plus run metadata).
    """
    import jupytext
    import papermill
    import torch

    source = Path(source)
    stem = source.stem
    params = load_parameters(stem, profile)
    out_dir = Path(out_dir)
    results_dir = out_dir / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    record_file = results_dir / f".{stem}.records.json"
    record_file.unlink(missing_ok=True)
    out_nb = out_dir / f"{stem}.ipynb"
    tmp_nb = out_dir / f".{stem}.tmp.ipynb"
    old_env = os.environ.get(RECORD_FILE_ENV)
    os.environ[RECORD_FILE_ENV] = str(record_file)
    start = time.perf_counter()
    try:
        papermill.execute_notebook(
            jupytext.read(source),
            str(tmp_nb),
            parameters=params,
            cwd=str(source.parent),
            kernel_name=kernel_name,
            progress_bar=False,
            log_output=False,
            config=_ipc_kernels(),
        )
        _relative_papermill_paths(tmp_nb, out_nb, source)
    except BaseException:
        tmp_nb.unlink(missing_ok=True)
        record_file.unlink(missing_ok=True)
        raise
    finally:
        if old_env is None:
            os.environ.pop(RECORD_FILE_ENV, None)
        else:
            os.environ[RECORD_FILE_ENV] = old_env
    seconds = time.perf_counter() - start
    os.replace(tmp_nb, out_nb)
    numbers_ = json.loads(record_file.read_text()) if record_file.exists() else {}
    record_file.unlink(missing_ok=True)
    results = dict(numbers_)
    results.update(
        {
            "profile": profile,
            "device": device_name(),
            "torch_version": torch.__version__,
            "seconds": round(seconds, 1),
            "git_commit": git_commit(),
            "parameters": params,
        }
    )
    atomic_write_text(results_dir / f"{stem}.json", json.dumps(results, indent=1, sort_keys=True))
    return results


def make_reference(source: Path, timeout: int = 1800) -> Path:
    """Execute a chapter at its default (CI) sizes into its paired ``chapters/NN_name.ipynb``."""
    import jupytext
    from nbclient import NotebookClient

    source = Path(source)
    nb = jupytext.read(source)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(source.parent)}},
                   config=_ipc_kernels()).execute()
    out = source.with_suffix(".ipynb")
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.stem}.", suffix=".tmp.ipynb")
    os.close(fd)
    try:
        jupytext.write(nb, tmp, fmt="ipynb")
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    os.utime(source)  # the .md stays the source of truth for jupytext's pairing
    return out


def default_profile() -> str:
    """``full`` when a CUDA device is visible, else ``ci``."""
    return "full" if device_name().startswith("cuda") else "ci"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lib.book", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="execute chapters with papermill into book/")
    p_run.add_argument("chapters", nargs="*", help="stems or numbers; none means all")
    p_run.add_argument("--profile", choices=(*PROFILES, "auto"), default="ci")
    p_ref = sub.add_parser("reference", help="re-execute chapters into their paired chapters/*.ipynb")
    p_ref.add_argument("chapters", nargs="*", help="stems or numbers; none means all")
    args = parser.parse_args(argv)

    from tqdm.auto import tqdm

    sources = [resolve_chapter(c) for c in args.chapters] if args.chapters else chapter_sources()
    if not sources:
        print("no chapters found under chapters/", file=sys.stderr)
        return 1
    total = time.perf_counter()
    if args.command == "run":
        profile = default_profile() if args.profile == "auto" else args.profile
        bar = tqdm(sources, desc=f"chapters ({profile})", unit="chapter")
        for src in bar:
            bar.set_postfix_str(src.stem)
            res = run_chapter(src, profile)
            tqdm.write(f"{src.stem}: {res['seconds']:.1f} s, {len(res) - 6} numbers -> book/results/{src.stem}.json")
    else:
        for src in tqdm(sources, desc="reference notebooks", unit="chapter"):
            t0 = time.perf_counter()
            out = make_reference(src)
            tqdm.write(f"{src.stem}: {time.perf_counter() - t0:.1f} s -> {out.relative_to(ROOT)}")
    print(f"total {time.perf_counter() - total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
