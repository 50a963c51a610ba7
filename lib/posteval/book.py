"""The book's runner and the one call a chapter uses to report a number.

In a chapter::

    from posteval.book import record, seed_everything
    seed_everything(0)
    record("crps.flow", 0.4312)          # glued as the text "0.431", shown by {glue:text}`crps.flow`
    record_interval("crps.flow", (0.4312, 0.41, 0.45))  # crps.flow, crps_lo.flow, crps_hi.flow, crps_ci.flow

From a shell::

    python -m posteval.book run               # every chapter, profile ci, into book/
    python -m posteval.book run 02 --profile full
    python -m posteval.book reference 02      # re-execute chapters/02_*.md into its paired .ipynb

``run`` checks the parameters of ``params/<profile>/NN_name.yaml`` and of ``--set`` against the
chapter's ``parameters`` cell and the ranges of :mod:`posteval.parameters` (an unknown name, a
value of the wrong type or outside its range, a repeated YAML key, an attempt to change
``profile`` are one-line errors, exit code 2, before anything runs), executes
``chapters/NN_name.md`` with papermill into ``book/executed/NN_name.ipynb`` (the whole executed
chapter), writes ``book/results/NN_name.json``: every recorded number, and under the one key
``meta`` the profile, device, torch version, seconds, git commit and parameters; then writes the
chapter's HTML pages ``book/NN_name*.ipynb`` from the executed notebook (:mod:`posteval.pages`:
the chapter's page and one per section where ``_toc.yml`` lists sections). Outputs are written to
a temporary file and renamed, so an interrupted run never leaves a half-written notebook or JSON
behind. Importing this module does not import torch; a chapter that never imports torch
(chapter 1) runs without it.

Layers: this module and ``record()`` sit on top of the package, imported by the chapters only; the
utilities it re-exports (:func:`seed_everything`, :func:`atomic_write_text`, :func:`git_commit`, ...)
live in :mod:`posteval.runtime`, which the domain code imports instead (``tests/test_layers.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import difflib
import functools
import json
import logging
import math
import numbers
import os
import re
import resource
import sys
import tempfile
import time
import uuid
from importlib import metadata
from pathlib import Path

import yaml

from . import numformat, pages
from ._extras import require
from .parameters import PROFILES, parameter_problem
from .paths import CHAPTERS, ROOT, chapter_sources, resolve_chapter
from .progress import tqdm
# the utilities below the domain code, re-exported for the chapters (`from posteval.book import seed_everything`)
from .runtime import (PORTABLE_KERNELS, atomic_write_text, device_name, git_commit, portable_environment,
                      portable_kernels, seed_everything)

BOOK = ROOT / "book"
PARAMS = ROOT / "params"
RESULTS = BOOK / "results"
RECORD_FILE_ENV = "BOOK_RECORD_FILE"
META = "meta"  # the one key of a results JSON that is not a recorded number
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


def _json_value(v):
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _check_name(name) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name: {name!r} is not a flat key of letters, digits, '_', '.', '-'")
    if name == META:
        raise ValueError(f"name: {META!r} is reserved for the run's metadata in the results JSON")


def _store(name: str, value, text: str, display: bool):
    """Keep the value for the results JSON and glue its text for the prose."""
    _recorded[name] = value
    try:
        from myst_nb import glue
    except ImportError:  # outside the book toolchain the number is still recorded
        pass
    else:
        glue(name, text, display=display)
    target = os.environ.get(RECORD_FILE_ENV)
    if target:
        atomic_write_text(Path(target), json.dumps({k: _json_value(v) for k, v in _recorded.items()}, indent=1))
    return value


def record(name: str, value, *, display: bool = False, digits: int = 3):
    """Report one number of the chapter: glue it for the prose and store it for the results JSON.

    The results JSON keeps the value itself; the prose gets its text in the book's one number
    format (:func:`posteval.numformat.number`: ``digits`` significant figures, integers whole with
    thousands separators, no "-0", "–" for a missing value), shown by `` {glue:text}`name` `` with
    no format spec of its own. Strings (verdict words) and booleans are glued as they are.

    Parameters
    ----------
    name : flat dotted key such as ``crps.flow`` (letters, digits, ``_ . -``)
    value : a number, bool or string (numpy scalars accepted)
    display : also show the text as the cell's output
    digits : significant figures of the glued text of a number

    Returns the value as a plain Python scalar.
    """
    _check_name(name)
    value = _plain(value)
    text = value if isinstance(value, (str, bool)) else numformat.number(value, digits)
    return _store(name, value, text, display)


def _interval_names(name: str) -> tuple[str, str, str, str]:
    head, dot, tail = name.partition(".")
    return tuple(f"{head}{suffix}{dot}{tail}" for suffix in ("", "_lo", "_hi", "_ci"))


def record_interval(name: str, interval, *, digits: int = 3):
    """Report an estimate with its interval: four keys, the numbers in one shared format.

    ``name`` = ``<metric>.<model>`` records ``<metric>.<model>`` (the estimate),
    ``<metric>_lo.<model>`` and ``<metric>_hi.<model>`` (the bounds), glued with the decimals of
    :func:`posteval.numformat.interval_decimals` (set by the interval's width), and
    ``<metric>_ci.<model>``, the text "estimate [lo, hi]" for the prose and tables.

    Parameters
    ----------
    name : flat dotted key; the suffixes go after its first component
    interval : an object with ``estimate``, ``lo``, ``hi`` (e.g.
        :class:`posteval.metrics.intervals.Interval`) or a sequence (estimate, lo, hi)
    digits : significant figures when the interval has no width

    Returns the estimate as a float.

    >>> record_interval("crps.flow", (32.84, 31.93, 33.71))
    32.84
    >>> recorded()["crps_ci.flow"]
    '32.8 [31.9, 33.7]'
    """
    _check_name(name)
    if all(hasattr(interval, k) for k in ("estimate", "lo", "hi")):
        values = (interval.estimate, interval.lo, interval.hi)
    else:
        try:
            values = tuple(interval)
        except TypeError:
            raise ValueError(f"interval: expected (estimate, lo, hi) or an Interval, got {type(interval).__name__}")
        if len(values) != 3:
            raise ValueError(f"interval: expected (estimate, lo, hi), got {len(values)} values")
    est, lo, hi = (float(_plain(v)) for v in values)
    if numformat.is_missing(lo) == numformat.is_missing(hi) and not numformat.is_missing(lo) and lo > hi:
        raise ValueError(f"interval: lo {lo} > hi {hi} for {name}")
    decimals = numformat.interval_decimals(lo, hi)
    names = _interval_names(name)
    for key, v in zip(names, (est, lo, hi)):
        text = numformat.number(v, digits) if decimals is None else numformat.with_decimals(v, decimals)
        _store(key, v, text, False)
    text = numformat.interval(est, lo, hi, digits)
    _store(names[3], text, text, False)
    return est


def recorded() -> dict[str, object]:
    """A copy of every number recorded in this process so far."""
    return dict(_recorded)


# ---------------------------------------------------------------------------------------------
# the runner
# ---------------------------------------------------------------------------------------------
@functools.cache
def _unique_key_loader():
    """A PyYAML ``SafeLoader`` that refuses a mapping with a repeated key (PyYAML keeps the last)."""

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int, float, bool)):
                    continue  # an unhashable key: the base class names it
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    return UniqueKeyLoader


def read_yaml(text: str, where: str):
    """The value of the YAML document ``text``; ``ValueError`` starting with ``where`` if it is not valid.

    Unlike ``yaml.safe_load``, a mapping that repeats a key is an error (naming the key and its line).
    """

    try:
        return yaml.load(text, Loader=_unique_key_loader())
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise ValueError(f"{where}: not valid YAML: {err.problem}{at}") from None
    except yaml.YAMLError as err:
        raise ValueError(f"{where}: not valid YAML: {str(err).splitlines()[0]}") from None


def load_parameters(stem: str, profile: str) -> dict:
    """Papermill parameters of one chapter and profile (empty when the profile has no file).

    ``ValueError`` naming the file if it cannot be read, is not UTF-8, not valid YAML, repeats a
    key, is not a mapping, or sets ``profile`` to another profile than its folder's.
    """
    if profile not in PROFILES:
        raise ValueError(f"profile: expected one of {PROFILES}, got {profile!r}")
    path = PARAMS / profile / f"{stem}.yaml"
    if not path.exists():
        return {}
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise ValueError(f"{path}: cannot be read ({err.strerror})") from None
    data = read_yaml(text, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of parameter names to values, got {type(data).__name__}")
    if data.get("profile", profile) != profile:
        raise ValueError(f"{path}: profile: {data['profile']!r} differs from the profile of its folder, {profile!r}")
    return data


def chapter_defaults(source: Path) -> dict:
    """The defaults of a chapter's ``parameters`` cell (the code cell tagged ``parameters``)."""
    import jupytext

    cells = [c for c in jupytext.read(source).cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{Path(source).name}: expected one cell tagged 'parameters', found {len(cells)}")
    defaults: dict = {}
    exec(compile(cells[0].source, f"{Path(source).name}:parameters", "exec"), {}, defaults)
    return {k: v for k, v in defaults.items() if not k.startswith("_")}


def _type_error(where: str, default, value) -> str | None:
    """Why ``value`` cannot replace ``default`` (None when it can), recursing into mappings and lists."""
    if default is None:
        return None
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(default, bool) and isinstance(value, bool)
    elif isinstance(default, numbers.Integral):
        ok = isinstance(value, numbers.Integral)
    elif isinstance(default, numbers.Real):
        ok = isinstance(value, numbers.Real)
    elif isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, dict):
        if not isinstance(value, dict):
            return f"{where}: expected a mapping like the default {default!r}, got {value!r}"
        for key, v in value.items():
            if key not in default:
                return f"{where}: unknown key {key!r}{_suggest(key, default)} (known: {sorted(default)})"
            problem = _type_error(f"{where}.{key}", default[key], v)
            if problem:
                return problem
        return None
    elif isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            return f"{where}: expected a list like the default {default!r}, got {value!r}"
        for i, v in enumerate(value):
            if default:
                problem = _type_error(f"{where}[{i}]", default[min(i, len(default) - 1)], v)
                if problem:
                    return problem
        return None
    else:
        ok = isinstance(value, type(default))
    if ok:
        return None
    return f"{where}: expected {type(default).__name__} like the default {default!r}, got {type(value).__name__} {value!r}"


def _suggest(name: str, known) -> str:
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_parameters(source: Path, params: dict) -> dict:
    """Validate profile parameters against the chapter's ``parameters`` cell; returns them.

    Raises
    ------
    ValueError
        Naming the file's first unknown parameter (a typo such as ``n_event``), or the first
        value whose type differs from the default's (``n_events: "5"`` for an int; an int is
        accepted for a float; a default of None accepts anything).
    """
    defaults = chapter_defaults(source)
    where = Path(source).stem
    for name, value in params.items():
        if name not in defaults:
            raise ValueError(f"{where}: unknown parameter {name!r}{_suggest(name, defaults)}; "
                             f"the parameters cell defines {sorted(defaults)}")
        problem = _type_error(f"{where}: parameter {name}", defaults[name], value)
        if problem:
            raise ValueError(problem)
    return params


def resolve_parameters(source: Path, profile: str, overrides: dict | None = None) -> tuple[dict, dict]:
    """The parameters one chapter runs with at ``profile``, checked, and what ``overrides`` replaced.

    The profile's file with ``overrides`` applied (see :func:`apply_overrides`), plus ``profile``
    itself when the chapter has that parameter (so the page names the profile that set its
    sizes); checked against the chapter's ``parameters`` cell (:func:`check_parameters`) and,
    together with the defaults it leaves, against the ranges of :mod:`posteval.parameters`.

    Raises
    ------
    ValueError
        One line naming the file, the parameter and the problem.
    """
    source = Path(source)
    params, changed = apply_overrides(load_parameters(source.stem, profile), overrides or {})
    defaults = chapter_defaults(source)
    if "profile" in defaults:
        params["profile"] = profile
    check_parameters(source, params)
    problem = parameter_problem(source.stem, {**defaults, **params})
    if problem:
        raise ValueError(problem)
    return params, changed


class _ValidatedParameters(logging.Filter):
    """Drops papermill's warnings about a parameters cell whose parameters the runner has checked.

    papermill reads a parameters cell line by line with a pattern: it warns "Unable to parse
    line" on a line with several ``=`` (``encoder = dict(width=32, ...)``), then "Passed unknown
    parameter" for the names it missed. The runner executed the cell to check every parameter.
    """

    UNKNOWN = "Passed unknown parameter: "
    UNPARSED = "Unable to parse line "
    LOGGERS = ("papermill", "papermill.translators")  # a logger's filters do not see its children's records

    def __init__(self, names):
        super().__init__()
        self.names = set(names)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith(self.UNKNOWN):
            return message[len(self.UNKNOWN):] not in self.names
        return not message.startswith(self.UNPARSED)

    @contextlib.contextmanager
    def installed(self):
        """Filter papermill's loggers during the ``with`` block."""
        for name in self.LOGGERS:
            logging.getLogger(name).addFilter(self)
        try:
            yield
        finally:
            for name in self.LOGGERS:
                logging.getLogger(name).removeFilter(self)


def _ipc_kernels():
    """Kernel-manager config for one local kernel over IPC sockets (not TCP: no plain-text warning).

    Its connection file gets a unique name in Jupyter's runtime folder, so that the sockets,
    named after it, have an absolute path there (not one relative to the working directory).
    """

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


def parse_overrides(items: list[str]) -> dict:
    """``KEY=VALUE`` strings (VALUE read as YAML; ``a.b=1`` sets key b inside mapping a) as a dict.

    ``profile`` cannot be set: ``--profile`` chooses it, with the sizes that go with it.
    """
    out: dict = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE")
        if key.split(".")[0] == "profile":
            raise ValueError(f"--set {item!r}: the profile is chosen with --profile (ci or full), not overridden")
        out[key] = read_yaml(text, f"--set {item!r}")
    return out


def apply_overrides(params: dict, overrides: dict) -> tuple[dict, dict]:
    """The parameters with ``overrides`` applied, and what each override replaced.

    The second value maps every overridden key to ``{"profile": old, "used": new}``, so that a
    record shows which sizes of its profile were changed. A key the profile's file does not set
    is taken from nothing (``profile: None``); a dotted key must name an existing mapping.
    """

    params = copy.deepcopy(params)
    changed: dict = {}
    for key, value in overrides.items():
        *path, leaf = key.split(".")
        node = params
        for part in path:
            if not isinstance(node.get(part), dict):
                raise ValueError(f"--set {key}: {part!r} is not a mapping of the parameters")
            node = node[part]
        changed[key] = {"profile": copy.deepcopy(node.get(leaf)), "used": value}
        node[leaf] = value
    return params, changed


#: A chapter's time limit at each profile, in seconds: papermill stops a cell that runs longer (a chapter
#: whose work is one cell is then stopped as a whole). At ci a chapter should finish in a third of it on a
#: loaded 2-core machine; the full profile's chapters are bounded by their own sizes and nets.
TIMEOUT_S = {"ci": 3600, "full": None}
#: At the ci profile every process of a chapter computes on one thread: the chapters parallelise by
#: processes (training workers), and on a small machine a second OpenMP or BLAS thread per process mostly
#: waits for a busy core, costing CPU-seconds without saving time. A value already in the environment wins.
CI_THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: At the ci profile glibc's allocator keeps the memory a chapter's process frees for its next arrays: no
#: block from its own mmap (threshold 1 GiB, not the default 128 KiB to 32 MiB) and no trimming of the heap
#: below 4 GiB, with 64 MiB of headroom per growth. By default every large array freed goes back to the
#: kernel and the next one faults its pages in again, zeroed: chapter 2 took 14.8 million page faults and
#: 22 s of system time, 1.3 s with these (the same numbers to the last digit; 2026-12-06). A process keeps
#: its peak heap until it ends. A value already in the environment wins.
CI_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 32),
             "MALLOC_TOP_PAD_": str(1 << 26)}


def _children_cpu_seconds() -> float:
    """User + system CPU-seconds of this process's finished children (a chapter's kernel and, once it
    has waited for them, the kernel's own workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def _kernel_environment(profile: str, record_file: Path | None):
    """The environment a chapter's kernel starts with: :data:`PORTABLE_KERNELS` (numpy reads its setting
    when the kernel imports it), where ``record()`` writes (if anywhere), and at ci :data:`CI_THREADS` and
    :data:`CI_MALLOC`; restored afterwards."""
    wanted = portable_environment({k: os.environ[k] for k in PORTABLE_KERNELS if k in os.environ})
    if record_file is not None:
        wanted[RECORD_FILE_ENV] = str(record_file)
    if profile == "ci":
        wanted.update({k: os.environ.get(k, v) for k, v in {**CI_THREADS, **CI_MALLOC}.items()})
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_chapter(source: Path, profile: str = "ci", out_dir: Path = BOOK, kernel_name: str = "python3",
                overrides: dict | None = None, progress: bool = False) -> dict:
    """Execute one chapter with papermill into ``out_dir/executed/`` (the whole chapter), write its
    results JSON into ``out_dir/results/`` and its HTML pages into ``out_dir`` (:func:`posteval.pages.write_pages`).

    ``overrides`` (from ``parse_overrides``) change single parameters of the profile; the record's
    metadata lists them under ``overrides`` with the values they replaced. ``progress`` shows papermill's bar
    of the chapter's cells (cells done / total) on stderr.
    Returns the results dictionary: the recorded numbers, and the run's metadata under `META`.
    Raises ValueError before executing anything when the parameters do not fit the chapter, and
    after writing the notebook and JSON when ``_toc.yml`` lists other pages than the chapter makes.
    """

    import jupytext
    import papermill

    source = Path(source)
    stem = source.stem
    params, changed = resolve_parameters(source, profile, overrides)
    out_dir = Path(out_dir)
    results_dir = out_dir / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    record_file = results_dir / f".{stem}.records.json"
    record_file.unlink(missing_ok=True)
    out_nb = out_dir / pages.EXECUTED.name / f"{stem}.ipynb"
    out_nb.parent.mkdir(parents=True, exist_ok=True)
    tmp_nb = out_nb.parent / f".{stem}.tmp.ipynb"
    start, cpu_start = time.perf_counter(), _children_cpu_seconds()
    try:
        with _kernel_environment(profile, record_file), _ValidatedParameters(params).installed():
            threads = os.environ.get("OMP_NUM_THREADS", "default")  # OpenMP threads per process of the chapter
            papermill.execute_notebook(
                jupytext.read(source),
                str(tmp_nb),
                parameters=params,
                cwd=str(source.parent),
                kernel_name=kernel_name,
                progress_bar=progress,
                execution_timeout=TIMEOUT_S.get(profile),
                log_output=False,
                config=_ipc_kernels(),
            )
        _relative_papermill_paths(tmp_nb, out_nb, source)
    except BaseException:
        tmp_nb.unlink(missing_ok=True)
        record_file.unlink(missing_ok=True)
        raise
    seconds, cpu_seconds = time.perf_counter() - start, _children_cpu_seconds() - cpu_start
    os.replace(tmp_nb, out_nb)
    numbers_ = json.loads(record_file.read_text()) if record_file.exists() else {}
    record_file.unlink(missing_ok=True)
    results = dict(numbers_)
    results[META] = {
        "profile": profile,
        "device": device_name(),
        "torch_version": metadata.version("torch"),
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
        "threads": threads,
        "git_commit": git_commit(),
        "parameters": params,
    }
    if changed:
        results[META]["overrides"] = changed
    atomic_write_text(results_dir / f"{stem}.json", json.dumps(results, indent=1, sort_keys=True))
    pages.write_pages(out_nb, out_dir)
    return results


def make_reference(source: Path, timeout: int = 1800) -> Path:
    """Execute a chapter at its default (CI) sizes into its paired ``chapters/NN_name.ipynb``."""
    import jupytext
    from nbclient import NotebookClient

    source = Path(source)
    nb = jupytext.read(source)
    with _kernel_environment("ci", None):  # as `run --profile ci` executes it
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


SECONDS_FILE = ROOT / "results" / "ci_seconds.json"  # each chapter's seconds in its last reference run


def estimated_seconds(stem: str, profile: str, results_dir: Path = RESULTS, kept: Path = SECONDS_FILE) -> float | None:
    """How long a chapter is expected to run: its last run here at the same profile (``book/results/NN.json``),
    else, at ci, its last reference run (``results/ci_seconds.json``), else at full the kept record
    ``results/full/NN.json``; ``None`` when nothing was recorded."""
    candidates = [results_dir / f"{stem}.json", ROOT / "results" / "full" / f"{stem}.json"]
    for path in candidates:
        try:
            meta = json.loads(path.read_text())[META]
        except (OSError, ValueError, KeyError):
            continue
        if meta.get("profile") == profile and meta.get("seconds"):
            return float(meta["seconds"])
    if profile == "ci":
        try:
            return float(json.loads(kept.read_text())["seconds"][stem])
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return None


def keep_reference_seconds(seconds: dict[str, float], kept: Path = SECONDS_FILE) -> None:
    """Store each chapter's seconds of a reference run in ``results/ci_seconds.json`` (the estimates of a fresh clone)."""
    try:
        data = json.loads(kept.read_text())
    except (OSError, ValueError):
        data = {}
    data.setdefault("seconds", {}).update({k: round(v, 1) for k, v in seconds.items()})
    data["what"] = ("seconds of each chapter's last reference run (python -m posteval.book reference), "
                    "the runner's estimate where this machine has run the chapter at ci never")
    data["machine"] = f"{os.cpu_count()} CPUs, {device_name()}"
    atomic_write_text(kept, json.dumps(data, indent=1, sort_keys=True) + "\n")


def default_profile() -> str:
    """``full`` when a CUDA device is visible, else ``ci``."""
    return "full" if device_name().startswith("cuda") else "ci"


def _run_chapters(sources: list[Path], profile: str, overrides: dict) -> None:
    """Execute ``sources`` at ``profile`` with a bar over their estimated seconds (the ``run`` command)."""
    estimates = {src.stem: estimated_seconds(src.stem, profile) for src in sources}
    known = [v for v in estimates.values() if v]
    fallback = sum(known) / len(known) if known else 60.0
    # the book's bar counts estimated seconds (each chapter's last run): its rate is this machine's pace
    # against those runs, and its time left the remaining chapters' estimates at that pace
    bar = tqdm(total=round(sum(v or fallback for v in estimates.values())), desc=f"book ({profile})",
               unit="s est", position=0)
    for src in sources:
        expected = estimates[src.stem]
        tqdm.write(f"{src.stem}: started; last run {expected:.0f} s" if expected else f"{src.stem}: started; no earlier run")
        bar.set_postfix_str(src.stem)
        res = run_chapter(src, profile, overrides=overrides, progress=True)
        bar.update(round(expected or fallback))
        n_numbers = len([k for k in res if k != META])
        tqdm.write(f"{src.stem}: {res[META]['seconds']:.1f} s ({res[META]['cpu_seconds']:.0f} CPU-s), {n_numbers} numbers "
                   f"-> book/results/{src.stem}.json")
    bar.close()


def main(argv: list[str] | None = None) -> int:
    """The command line ``python -m posteval.book run|reference``; returns the exit code (2: a bad argument)."""
    parser = argparse.ArgumentParser(prog="python -m posteval.book", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="execute chapters with papermill into book/")
    p_run.add_argument("chapters", nargs="*", help="stems or numbers; none means all")
    p_run.add_argument("--profile", choices=(*PROFILES, "auto"), default="ci")
    p_run.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="change one parameter of the profile (YAML value; a.b=v for nested); "
                            "recorded under meta.overrides")
    p_ref = sub.add_parser("reference", help="re-execute chapters into their paired chapters/*.ipynb")
    p_ref.add_argument("chapters", nargs="*", help="stems or numbers; none means all")
    args = parser.parse_args(argv)
    try:  # the runner's own third-party modules: a one-line error naming the extra, not a traceback
        require("python -m posteval.book", "jupytext", "papermill", "nbclient", "nbconvert", "ipykernel", extra="book")
    except ModuleNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    try:
        sources = [resolve_chapter(c) for c in args.chapters] if args.chapters else chapter_sources()
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not sources:
        print("no chapters found under chapters/", file=sys.stderr)
        return 1
    total = time.perf_counter()
    if args.command == "run":
        profile = default_profile() if args.profile == "auto" else args.profile
        try:
            overrides = parse_overrides(args.overrides)
            for src in sources:  # every chapter's parameters are checked before the first one runs
                resolve_parameters(src, profile, overrides)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        _run_chapters(sources, profile, overrides)
    else:
        seconds = {}
        for src in tqdm(sources, desc="reference notebooks", unit="chapter"):
            t0 = time.perf_counter()
            out = make_reference(src)
            seconds[src.stem] = time.perf_counter() - t0
            tqdm.write(f"{src.stem}: {seconds[src.stem]:.1f} s -> {out.relative_to(ROOT)}")
        keep_reference_seconds(seconds)
    print(f"total {time.perf_counter() - total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
