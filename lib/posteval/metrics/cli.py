"""The protocol for your own model, from the shell: ``python -m posteval.metrics report`` (or the
console script ``protocol-report``), answering "which model is better, and is it calibrated?".

Example::

    protocol-report --samples flow=flow.npz:samples --samples regressor=reg.npy \\
        --truth test.h5:targets/truth \\
        --calibration regressor=cal.parquet:pred,cal.parquet:truth \\
        --dims pt,eta --level 0.95 --out report/

Shapes (events always on the first axis): the truth is ``(n,)`` or ``(n, d)``; a sampler gives
``(n, m)`` (with a 1-D truth) or ``(n, m, d)`` samples, m draws per event; a point predictor
gives ``(n,)`` or ``(n, d)``. An ``(n, 1)`` array beside a 1-D truth can be read either way and
needs ``--kind NAME=points`` or ``--kind NAME=samples``. A unit axis on either side is the same
problem: samples ``(n, m, 1)`` beside a truth ``(n,)``, and ``(n, m)`` or ``(n,)`` beside ``(n, 1)``.

Writes into ``--out`` (each file complete or absent: they are written to a temporary folder first
and moved into place): ``protocol.csv`` (the table of
:func:`posteval.metrics.protocol_report`, with bootstrap intervals), ``protocol.json`` (the table,
the verdicts, the calibration table, the energy score, the summary sentences, notes and the
provenance: library version, command line, date, each input's sha256, the estimators),
``protocol.md`` (the same, as Markdown), ``protocol_<j>_<dimension>.png`` (the version, command
line and date in its PNG text fields) and ``report.html``; ``protocol.csv``'s provenance is that
of the ``protocol.json`` beside it. A file that cannot be used
gives a one-line error naming the file and key, exit code 2.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import plotting
from ..plotting.palette import user_colours
from . import report_page
from ._validation import DEFAULT_LEVELS
from .array_files import InputFileError, open_array, sha256_of, split_spec
from .protocol import (CHUNK_BYTES, ENERGY_SHIFTS, GLOSSARY, MAX_GB, METRIC_WORDS, POINT_RULE,  # noqa: F401  (the CLI's names)
                       Inputs, ProtocolResult, Settings, _version, evaluate_inputs, model_kind, score_models, sentences,
                       unit_axis_view)
from .protocol import provenance as _provenance
from .report_page import format_number

PROG = "python -m posteval.metrics"
#: the files a report writes, besides one protocol_<j>_<dimension>.png per dimension
REPORT_FILES = ("protocol.csv", "protocol.json", "protocol.md", "report.html")


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------
def _named(spec: str, option: str) -> tuple[str, str]:
    name, sep, rest = spec.partition("=")
    if not sep or not name.strip() or not rest:
        raise InputFileError(f"{option} {spec}: expected NAME=FILE[:KEY]")
    if any(ch in name for ch in "\n\r\t") or name != name.strip():
        raise InputFileError(f"{option} {spec!r}: a model name may not hold tabs, newlines or surrounding spaces")
    return name, rest


def _kinds(specs: list[str] | None) -> dict[str, str]:
    out = {}
    for spec in specs or []:
        name, sep, kind = spec.partition("=")
        if not sep or kind not in ("points", "samples"):
            raise InputFileError(f"--kind {spec}: expected NAME=points or NAME=samples")
        out[name] = kind
    return out


def load_inputs(samples: list[str], truth_spec: str, calibration: list[str] | None, dims: str | None,
                kinds: list[str] | None = None) -> Inputs:
    """Open and check every input (models stay on disk, read later chunk by chunk).

    ``samples`` are ``NAME=FILE[:KEY]``, ``calibration`` ``NAME=PRED_FILE[:KEY],TRUTH_FILE[:KEY]``,
    ``dims`` comma-separated names, ``kinds`` ``NAME=points|samples`` (the command's options).
    Files are read as :func:`~posteval.metrics.array_files.open_array` says: the NumPy ``.npy``
    format (NEP 1, 2007), ``.npz``, HDF5 or Parquet. Raises :class:`InputFileError`.

    >>> np.save("truth.npy", np.arange(4.0)); np.save("flow.npy", np.zeros((4, 3)))
    >>> inputs = load_inputs(["flow=flow.npy"], "truth.npy", None, "pt")
    >>> inputs.models["flow"][1], inputs.dim_names, inputs.truth.shape
    ('samples', ['pt'], (4,))
    """
    truth_src = open_array(truth_spec)
    if truth_src.ndim not in (1, 2):
        raise InputFileError(f"{truth_src.where}: truth must be (n,) or (n, d), got shape {truth_src.shape}")
    truth = truth_src.read()
    declared = _kinds(kinds)
    inputs = Inputs(truth, truth_src.where, {})
    inputs.sources["truth"] = {"spec": truth_spec, "shape": list(truth.shape)}
    for spec in samples:
        name, file_spec = _named(spec, "--samples")
        if name in inputs.models:
            raise InputFileError(f"--samples {spec}: model name {name!r} given twice")
        src = open_array(file_spec)
        given = list(src.shape)
        src = src.reshaped(unit_axis_view(src.shape, truth.shape))
        kind = model_kind(src.shape, src.where, truth.shape, truth_src.where, declared.get(name), name)
        inputs.models[name] = (src, kind)
        inputs.sources[name] = {"spec": file_spec, "shape": given, "kind": kind}
    unknown = sorted(set(declared) - set(inputs.models))
    if unknown:
        raise InputFileError(f"--kind: no model {', '.join(map(repr, unknown))} among --samples")
    for spec in calibration or []:
        name, rest = _named(spec, "--calibration")
        pred_spec, sep, cal_truth_spec = rest.partition(",")
        if not sep:
            raise InputFileError(f"--calibration {spec}: expected NAME=PRED_FILE[:KEY],TRUTH_FILE[:KEY]")
        if name not in inputs.models:
            raise InputFileError(f"--calibration {spec}: no model {name!r} among --samples")
        if inputs.models[name][1] != "points":
            raise InputFileError(f"--calibration {spec}: {name!r} is a sampler; calibration data is for point predictors")
        cal_truth_src = open_array(cal_truth_spec)
        if cal_truth_src.ndim != truth.ndim or cal_truth_src.shape[1:] != truth.shape[1:]:
            raise InputFileError(f"{cal_truth_src.where}: shape {cal_truth_src.shape} does not match truth "
                                 f"{truth_src.where} of shape {truth.shape}")
        cal_pred_src = open_array(pred_spec)
        kind = model_kind(cal_pred_src.shape, cal_pred_src.where, cal_truth_src.shape, cal_truth_src.where, "points", name)
        if kind != "points":
            raise InputFileError(f"{cal_pred_src.where}: calibration predictions must be points")
        pred = cal_pred_src.read()
        inputs.calibration[name] = (pred.reshape(cal_truth_src.shape), cal_truth_src.read())
        inputs.sources[name]["calibration"] = {"predictions": pred_spec, "truth": cal_truth_spec,
                                               "n": int(cal_truth_src.shape[0])}
    d = 1 if truth.ndim == 1 else truth.shape[1]
    names = [s.strip() for s in dims.split(",")] if dims else [f"dim{j}" for j in range(d)]
    if len(names) != d or not all(names):
        raise InputFileError(f"--dims {dims}: {len(names)} names for the {d} dimensions of truth {truth_src.where}")
    if len(set(names)) != len(names):
        raise InputFileError(f"--dims {dims}: names must be unique")
    inputs.dim_names = names
    return inputs


# ---------------------------------------------------------------------------------------------
# tables, files
# ---------------------------------------------------------------------------------------------
def md_cell(v: object) -> str:
    """A Markdown table cell: numbers formatted, text with ``|`` escaped and no line breaks.

    Numbers as :func:`~posteval.metrics.report_page.format_number` writes them (integers
    without decimals); in text a backslash and a pipe are escaped, as a cell of a table of the
    GitHub Flavored Markdown Spec, version 0.29-gfm (2019), sec. 4.10 (tables extension), needs.

    >>> print(md_cell(0.519412), md_cell(3), md_cell("a|b"), md_cell("two\\nlines"))
    0.5194 3 a\\|b two lines
    """
    if isinstance(v, (float, np.floating, int, np.integer)) and not isinstance(v, bool):
        return format_number(v, integer=isinstance(v, (int, np.integer)))
    return str(v).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table, numbers to 4 significant digits.

    A header row, a delimiter row and one row per record, each cell as :func:`md_cell` writes it
    (GitHub Flavored Markdown Spec, version 0.29-gfm (2019), sec. 4.10, tables extension).

    >>> print(markdown_table(pd.DataFrame({"model": ["flow", "reg"], "crps": [0.519412, 0.6]})), end="")
    | model | crps |
    |---|---|
    | flow | 0.5194 |
    | reg | 0.6000 |
    """
    head = "| " + " | ".join(md_cell(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(md_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows]) + "\n"


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells cannot start a spreadsheet formula (a leading = + - @ gets a ').

    For ``protocol.csv``, a CSV file as RFC 4180 (2005) specifies (written by pandas); numbers
    are left as they are.

    >>> csv_safe(pd.DataFrame({"model": ["=1+1", "flow"], "crps": [0.5, -0.25]})).to_dict("list")
    {'model': ["'=1+1", 'flow'], 'crps': [0.5, -0.25]}
    """
    out = frame.copy()
    for col in out.columns:
        if any(isinstance(v, str) for v in out[col]):
            out[col] = [f"'{v}" if isinstance(v, str) and v[:1] in "=+-@" else v for v in out[col]]
    return out


def _records(frame) -> list[dict]:
    """JSON records with NaN as null, every float to 15 significant digits (pandas' default, 10 decimals,
    writes a p-value of 2e-16 as 0)."""
    return json.loads(frame.to_json(orient="records", double_precision=15))


def input_digests(inputs: Inputs) -> Future[dict[str, str]]:
    """A started thread's future of {file path: sha256} of every input file (hashing releases the
    GIL, so it runs beside the scoring).

    Each digest is SHA-256 (FIPS 180-4, NIST, 2015) of the file's bytes, in hexadecimal
    (:func:`~posteval.metrics.array_files.sha256_of`).

    >>> np.save("truth.npy", np.arange(4.0)); np.save("flow.npy", np.zeros((4, 3)))
    >>> digests = input_digests(load_inputs(["flow=flow.npy"], "truth.npy", None, None)).result()
    >>> sorted(digests), len(digests["flow.npy"])
    (['flow.npy', 'truth.npy'], 64)
    """

    paths = []
    for info in inputs.sources.values():
        paths.append(split_spec(info["spec"])[0])
        cal = info.get("calibration")
        if cal:
            paths += [split_spec(cal[k])[0] for k in ("predictions", "truth")]
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(lambda: {str(p): sha256_of(p) for p in dict.fromkeys(paths)})
    pool.shutdown(wait=False)
    return future


def provenance(argv: list[str], inputs: Inputs, args: argparse.Namespace, digests: dict[str, str]) -> dict[str, object]:
    """Version, command line, date, inputs (with sha256) and the estimators of one report: those of
    :func:`~posteval.metrics.protocol.provenance` with the command line and each file's digest.

    The date is UTC in the RFC 3339 (2002) form of ISO 8601 (``2025-01-31T12:00:00+00:00``); the
    digests are SHA-256 (FIPS 180-4, 2015); the command line is quoted as a POSIX shell reads it.

    >>> np.save("truth.npy", np.arange(4.0)); np.save("flow.npy", np.zeros((4, 3)))
    >>> argv = ["report", "--samples", "flow=flow.npy", "--truth", "truth.npy", "--out", "rep"]
    >>> inputs = load_inputs(["flow=flow.npy"], "truth.npy", None, None)
    >>> args, digests = build_parser().parse_args(argv), input_digests(inputs).result()
    >>> prov = provenance(["protocol-report", *argv[1:]], inputs, args, digests)
    >>> prov["command"], prov["inputs"]["flow"]["kind"], prov["crps_estimator"], prov["ci"]
    ('protocol-report --samples flow=flow.npy --truth truth.npy --out rep', 'samples', 'nrg', 0.95)
    """
    files = {}
    for name, info in inputs.sources.items():
        path, key = split_spec(info["spec"])
        files[name] = {**info, "file": str(path), "key": key, "sha256": digests[str(path)]}
        cal = info.get("calibration")
        if cal:
            files[name]["calibration"] = {**cal, **{f"{k}_sha256": digests[str(split_spec(cal[k])[0])]
                                                     for k in ("predictions", "truth")}}
    prov = _provenance(inputs, _settings(args))
    return {"posteval_version": prov.pop("posteval_version"), "command": shlex.join(argv), **prov, "inputs": files}


def _settings(args: argparse.Namespace) -> Settings:
    return Settings(args.level, args.n_resamples, args.seed, args.crps_estimator, args.spectrum_resamples, args.bins)


def _staging(out: Path) -> Path:
    """A fresh staging folder beside ``out`` (made now, before any scoring): a folder that cannot be
    written, or an ``--out`` that is a file, is an error naming ``--out``."""
    if out.exists() and not out.is_dir():
        raise InputFileError(f"--out {out}: exists and is not a folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as exc:
        raise InputFileError(f"--out {out}: cannot write the report there ({exc.strerror or exc})") from None


def _stale(out: Path, written: set[str]) -> list[Path]:
    """Files of an earlier report in ``out`` that this report did not write (e.g. the figure of a
    dimension the new truth lacks): the fixed names and ``protocol_<j>_<dimension>.png``."""
    if not out.is_dir():
        return []
    return [f for f in out.iterdir() if f.name not in written and f.is_file()
            and (f.name in REPORT_FILES or (f.name.startswith("protocol_") and f.name.endswith(".png")))]


def write_report(inputs: Inputs, args: argparse.Namespace, out: Path, argv: list[str], *,
                 progress: bool = True) -> tuple[dict[str, Path], ProtocolResult]:
    """Score, decide, draw and write every report file into ``out``; returns (files, result).

    The result is :func:`~posteval.metrics.protocol.evaluate_inputs`' (what ``evaluate_models``
    returns in Python: bottom line, warnings, tables, verdicts, sentences), with the CLI's
    provenance. ``out`` is checked (a staging folder made beside it) before any scoring; files of
    an earlier report in ``out`` that this one does not write are removed. The files: ``protocol.csv`` (RFC 4180, 2005),
    ``protocol.json`` (RFC 8259, 2017: NaN written as null), ``protocol.md`` (GitHub Flavored
    Markdown 0.29-gfm, 2019), one PNG per dimension (W3C PNG Specification, 2003) and
    ``report.html`` (:func:`~posteval.metrics.report_page.html_page`).

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=40)
    >>> np.save("truth.npy", x + rng.normal(size=40)); np.save("flow.npy", x[:, None] + rng.normal(size=(40, 8)))
    >>> argv = ["report", "--samples", "flow=flow.npy", "--truth", "truth.npy", "--n-resamples", "100", "--out", "rep"]
    >>> args = build_parser().parse_args(argv)
    >>> files, result = write_report(load_inputs(args.samples, args.truth, None, None), args, args.out,
    ...                              [PROG, *argv], progress=False)
    >>> sorted(files)
    ['protocol.csv', 'protocol.json', 'protocol.md', 'protocol_0_dim0.png', 'report.html']
    >>> json.loads(files["protocol.json"].read_text())["bottom_line"] == result.bottom_line
    True
    """
    matplotlib.use("Agg")  # files only, never a window
    tmp = _staging(out)
    try:
        digests = input_digests(inputs)
        result = evaluate_inputs(inputs, _settings(args), max_gb=args.max_gb, progress=progress)
        result.provenance = prov = provenance(argv, inputs, args, digests.result())
        table = result.table
        table.pipe(csv_safe).to_csv(tmp / "protocol.csv", index=False)
        (tmp / "protocol.json").write_text(json.dumps(payload(result), indent=1, allow_nan=False) + "\n")
        (tmp / "protocol.md").write_text(_markdown(result))
        figures = _figures(inputs, result.values, np.sort(DEFAULT_LEVELS), tmp, prov)
        sections = _sections(args, result.leads, result.calibration, result.joint_calibration, table)
        page = report_page.html_page(title="Evaluation protocol report", summary=result.sentences, sections=sections,
                                     figures=[(cap, p.read_bytes()) for cap, p in figures], provenance=prov,
                                     notes=result.notes, bottom_line=result.opening, glossary=result.glossary)
        (tmp / "report.html").write_text(page)
        out.mkdir(exist_ok=True)
        files = {}
        for f in sorted(tmp.iterdir()):
            os.replace(f, out / f.name)
            files[f.name] = out / f.name
        for f in _stale(out, set(files)):
            f.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return files, result


def payload(result: ProtocolResult) -> dict[str, object]:
    """The content of ``protocol.json``: the bottom line and its warnings first, then the sentences,
    the tables (records, NaN as null, RFC 8259), the checks, the notes, the glossary and the provenance.

    Reference: T. Bray (ed.) (2017), "The JavaScript Object Notation (JSON) Data Interchange Format",
    RFC 8259, Section 6 (no NaN or infinity in JSON numbers, hence null).

    >>> import pandas as pd
    >>> empty = pd.DataFrame()
    >>> r = ProtocolResult("Trust flow.", [], [], empty, empty, empty, empty, empty, [], {}, {}, {})
    >>> list(payload(r))[:3]
    ['bottom_line', 'warnings', 'summary']
    """
    return {"bottom_line": result.bottom_line, "warnings": result.warnings, "summary": result.sentences,
            "protocol": _records(result.table), "leads": _records(result.leads),
            "calibration": _records(result.calibration), "joint_calibration": _records(result.joint_calibration),
            "checks": _records(result.checks), "notes": result.notes, "glossary": result.glossary,
            "provenance": result.provenance}


def _markdown(result: ProtocolResult) -> str:
    """The text of ``protocol.md``: the bottom line first, the glossary before the provenance."""
    joint = result.joint_calibration
    md = ["# Evaluation protocol report", "", *[f"**{md_cell(w)}**\n" for w in result.warnings],
          md_cell(result.bottom_line), "", *[f"- {md_cell(s)}" for s in result.sentences], "",
          "## Leads", "", markdown_table(result.leads), "## Calibration", "", markdown_table(result.calibration),
          "## Joint calibration", "", markdown_table(joint) if len(joint) else "(no sampler)\n",
          "## Protocol table", "", markdown_table(result.table), "## Notes", "", *[f"- {n}" for n in result.notes], "",
          "## Glossary", "", *[f"- **{k}**: {v}" for k, v in result.glossary.items()], "",
          "## Provenance", "", "```json", json.dumps(result.provenance, indent=1), "```", ""]
    return "\n".join(md)


def _figures(inputs: Inputs, values, levels: np.ndarray, tmp: Path, prov: dict) -> list[tuple[str, Path]]:
    """One protocol figure per dimension, written as PNG into ``tmp``: (caption, path) each."""
    samplers = {n: v for n, v in values.items() if v.kind == "samples"}
    plotting.set_theme()
    colours = user_colours(list(values))
    figures, n = [], inputs.truth.shape[0]
    t2 = inputs.truth[:, None] if inputs.truth.ndim == 1 else inputs.truth
    m_set = {v.m for v in samplers.values()}
    m_samples = next(iter(m_set)) if len(m_set) == 1 else None  # one m for every panel (pop() gave only the first)
    for j, dim in enumerate(inputs.dim_names):
        curves = {}
        for name, v in values.items():
            for codes, label in ((v.raw_codes, name), (v.conformal_codes, f"{name} (conformal)")):
                if codes is not None:
                    curves[label] = np.cumsum(np.bincount(codes[:, j], minlength=levels.size + 1))[:-1] / n
        safe = _mathtext_safe
        fig = plotting.protocol_panels(t2[:, j], {safe(k): v.point[:, j] for k, v in values.items()},
                                       {safe(k): float(v.crps[:, j].mean()) for k, v in values.items()},
                                       {safe(k): c for k, c in curves.items()}, levels=levels,
                                       quantity=safe(dim), m_samples=m_samples,
                                       colours={safe(k): c for k, c in colours.items()})
        path = tmp / f"protocol_{j}_{''.join(c if c.isalnum() or c in '-_' else '_' for c in dim)}.png"
        fig.savefig(path, dpi=110, metadata={"Software": f"posteval {prov['posteval_version']}",
                                             "Description": f"{prov['command']} ({prov['date']})"})
        plt.close(fig)
        figures.append((f"The protocol on {dim}: spectrum of one value per event against the truth, mean CRPS, "
                        f"coverage minus nominal with the band of an exact sampler.", path))
    return figures


def _sections(args: argparse.Namespace, leads, calib, joint, table) -> list:
    """The HTML page's sections (title, table, how to read it), the empty ones left out."""
    sections = [("Leads: is the best model's lead resolved?", leads,
                 f"Difference = best − other (lower is better), its {args.level:g} interval ± z × the standard "
                 f"error from {args.n_resamples} paired bootstrap resamples of the test events; each lead is a claim "
                 f"of the claims table, p and verdict by its rule, Holm-adjusted over all {len(leads)} leads."),
                ("Calibration of the samplers", calib,
                 "Coverage deviation = mean over the levels of coverage − that of an exact sampler with the same "
                 "draws, its interval over events, and the margin within which an exact sampler of the same "
                 "events and draws falls in 99 % of simulations (calibrated: |deviation| + half-width ≤ margin; "
                 "under-covers: intervals too narrow; over-covers: too wide). Beside it the raw coverage error "
                 "(maximum |coverage − nominal|) and the 95 % quantile of an exact sampler's."),
                ("Joint calibration over all dimensions", joint,
                 "TARP error = max |expected coverage − credibility| of the regions around random reference "
                 "points (it sees correlations between dimensions), against the 95 % quantile of an exact "
                 "sampler's; spread-skill ratio = sqrt((1 + 1/m) mean ensemble variance / mean squared error of "
                 "the ensemble mean), 1 when the spread tracks the error, below 1 when over-confident. A model "
                 "that ignores the data can pass both: read them beside the CRPS."),
                ("Protocol table", table, "One row per model and dimension; intervals from the paired bootstrap.")]
    sections = [sec for sec in sections if len(sec[1])]
    return sections


def _mathtext_safe(text: str) -> str:
    """A label matplotlib draws literally (a ``$`` would start mathtext)."""
    return text.replace("$", r"\$")


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def _level(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a level in (0, 1), got {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"expected a level in (0, 1), got {text!r}")
    return v


def _count(minimum: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return v

    return parse


def _gib(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of GiB >= 0 (0: no limit), got {text!r}")
    return v or None


class _DeprecatedOption(argparse.Action):
    """An option renamed in 0.3.0: stores its value under the new option's name and warns on stderr."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: warning: {option_string} is deprecated since posteval 0.3.0 and will be removed in "
              f"0.4.0; use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def build_parser(report_prog: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``python -m posteval.metrics report`` (its options and defaults).

    Options follow the utility conventions of POSIX.1-2017 (IEEE Std 1003.1-2017, ch. 12) with
    GNU-style long options (``--name value``); a usage error exits with status 2.

    >>> args = build_parser().parse_args(["report", "--samples", "flow=flow.npy", "--truth", "truth.npy",
    ...                                   "--out", "rep"])
    >>> args.samples, args.level, args.n_resamples, args.crps_estimator, args.bins, args.spectrum_resamples
    (['flow=flow.npy'], 0.95, 1000, 'nrg', 20, 0)

    The options of 0.2.0 ``--ci``, ``--n-boot`` and ``--n-perm`` still work, hidden from ``--help``, and
    print a deprecation warning (removed in 0.4.0). ``report_prog`` names the report command in its
    usage and errors (``protocol-report`` for the console script; default ``python -m posteval.metrics report``).
    """
    parser = argparse.ArgumentParser(prog=PROG, description="The evaluation protocol of the book on your own model's samples.")
    parser.add_argument("--version", action="version", version=f"posteval {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="protocol table, verdicts, figures and HTML report from sample files",
                         **({"prog": report_prog} if report_prog else {}),
                         description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n")[3],
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("--version", action="version", version=f"posteval {_version()}")
    rep.add_argument("--samples", action="append", required=True, metavar="NAME=FILE[:KEY]",
                     help="one model: samples (n, m[, d]) or point predictions (n[, d]), events first; FILE is .npy, .npz "
                          "(KEY: the array), HDF5 (KEY: the dataset) or Parquet (KEY: a column); repeat per model")
    rep.add_argument("--truth", required=True, metavar="FILE[:KEY]", help="true values (n,) or (n, d), in the same formats")
    rep.add_argument("--kind", action="append", metavar="NAME=points|samples",
                     help="how to read model NAME when its shape allows both, e.g. (n, 1) beside a 1-D truth")
    rep.add_argument("--calibration", action="append", metavar="NAME=PRED_FILE[:KEY],TRUTH_FILE[:KEY]",
                     help="calibration predictions and truths of a point predictor (split-conformal coverage)")
    rep.add_argument("--dims", metavar="NAME,NAME,...", help="names of the d dimensions (default dim0, dim1, ...)")
    rep.add_argument("--level", type=_level, default=0.95, metavar="LEVEL", help="interval level (default 0.95)")
    rep.add_argument("--n-resamples", type=_count(100), default=1000, metavar="N",
                     help="paired bootstrap resamples of the events (1000)")
    rep.add_argument("--seed", type=_count(0), default=0, help="seed of the bootstrap, exchanges and tie-breaking (0)")
    rep.add_argument("--crps-estimator", choices=("nrg", "fair", "pwm"), default="nrg",
                     help="CRPS estimator of the samplers (nrg: 1/m^2 pair sum, the default; fair: 1/(m(m-1)); pwm = "
                          "fair); the energy score (d > 1) is the fair estimator")
    rep.add_argument("--spectrum-resamples", type=_count(0), default=0, metavar="N",
                     help="label exchanges for the spectrum's exchange p-value (0: not computed, the default)")
    # the options of 0.2.0, hidden and deprecated (issue 40): removed in 0.4.0
    for old, new, dest, kind in (("--ci", "--level", "level", _level),
                                 ("--n-boot", "--n-resamples", "n_resamples", _count(100)),
                                 ("--n-perm", "--spectrum-resamples", "spectrum_resamples", _count(0))):
        rep.add_argument(old, dest=dest, type=kind, action=_DeprecatedOption, new=new, default=argparse.SUPPRESS,
                         help=argparse.SUPPRESS)
    rep.add_argument("--bins", type=_count(2), default=20, help="spectrum bins (20)")
    rep.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder for the report files")
    rep.add_argument("--max-gb", type=_gib, default=MAX_GB, metavar="GIB",
                     help=f"the most GiB of values (float64) to score, estimated from the shapes before any reading; "
                          f"a larger input is refused (default {MAX_GB:g}; 0 for no limit)")
    rep.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def main(argv: list[str] | None = None, *, prog: str | None = None) -> int:
    """Entry point of ``python -m posteval.metrics``; returns the exit code.

    Checks every argument and input, and the output folder, before any scoring; writes the report
    (:func:`write_report`: CRPS of Gneiting and Raftery (2007), calibration after Gneiting,
    Balabdaoui and Raftery (2007), leads with Holm (1979)); prints the bottom line (with its
    warnings), the summary sentences and the files written, and returns 0; an unusable input
    prints a one-line error to stderr and returns 2. ``prog`` names the report command in
    messages (``protocol-report`` for the console script).

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=40)
    >>> np.save("truth.npy", x + rng.normal(size=40)); np.save("reg.npy", x)
    >>> np.save("flow.npy", x[:, None] + rng.normal(size=(40, 8)))
    >>> main(["report", "--quiet", "--samples", "flow=flow.npy", "--samples", "reg=reg.npy",
    ...       "--truth", "truth.npy", "--n-resamples", "100", "--out", "rep"])
    Trust flow: it passes the spectrum check ...
    report.html: rep...report.html
    0
    >>> main(["report", "--samples", "flow=missing.npy", "--truth", "truth.npy", "--out", "rep"])
    2
    """
    argv = sys.argv[1:] if argv is None else argv
    name = prog or f"{PROG} report"
    args = build_parser(prog).parse_args(argv)
    try:
        for arg in argv:
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:
                raise InputFileError(f"argument {arg!r}: not valid UTF-8 (the report writes names and the command "
                                     f"line into UTF-8 files); rename the file or model") from None
        inputs = load_inputs(args.samples, args.truth, args.calibration, args.dims, args.kind)
        files, result = write_report(inputs, args, args.out, [prog, *argv[1:]] if prog else [PROG, *argv],
                                     progress=not args.quiet)
    except (ValueError, OSError) as exc:  # InputFileError, the protocol's own validation, a full disk
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    for s in [*result.opening, *result.sentences]:
        print(s)
    print("Terms (CRPS, spectrum, resolved, margin, ...): the glossary at the end of report.html and protocol.md.")
    for fname, path in files.items():
        print(f"{fname}: {path}")
    return 0


def report_main() -> int:
    """Entry point of the ``protocol-report`` console script (the ``report`` command).

    ``main(["report", *sys.argv[1:]], prog="protocol-report")``: the report of :func:`main` (CRPS of
    Gneiting and Raftery (2007), calibration after Gneiting, Balabdaoui and Raftery (2007)), its
    usage and errors naming ``protocol-report``; returns the exit code.

    >>> import sys
    >>> saved, sys.argv = sys.argv, ["protocol-report", "--samples", "a=missing.npy", "--truth", "missing.npy",
    ...                               "--out", "rep"]
    >>> try:
    ...     report_main()  # a one-line error on stderr
    ... finally:
    ...     sys.argv = saved
    2
    """
    return main(["report", *sys.argv[1:]], prog="protocol-report")
