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
needs ``--kind NAME=points`` or ``--kind NAME=samples``.

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
import datetime
import json
import math
import os
import platform
import shlex
import shutil
import sys
import tempfile
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import __version__, plotting
from ..plotting.palette import user_colours
from ..progress import tqdm
from . import ranking, report_page
from ._validation import DEFAULT_LEVELS
from .array_files import ArraySource, InputFileError, open_array, sha256_of, split_spec
from .calibration import tarp_frame, tarp_references
from .report import EventValues, concat_event_values, event_values, protocol_table
from .report_page import format_interval, format_number

PROG = "python -m posteval.metrics"
CHUNK_BYTES = 64 * 2**20  # float64 bytes of one chunk of a sampler's events
ENERGY_SHIFTS = 8
POINT_RULE = ("a sampler's RMSE, MAE and spectrum use its first sample of each event (one reconstruction, which "
              "has the sampler's spectrum); a point prediction is a point mass: its CRPS is its absolute error and "
              "its energy score its Euclidean error")
METRIC_WORDS = {"crps": "CRPS", "energy_score": "energy score", "rmse": "RMSE", "mae": "MAE"}


def _version() -> str:
    return __version__


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------
@dataclass
class Inputs:
    """Everything the report reads, checked: truth in memory, the models as chunked sources."""

    truth: np.ndarray
    truth_where: str
    models: dict[str, tuple[ArraySource, str]]  # name -> (source, "samples" | "points")
    calibration: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    dim_names: list[str] = field(default_factory=list)
    sources: dict[str, dict] = field(default_factory=dict)


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


def model_kind(shape: tuple[int, ...], where: str, truth_shape: tuple[int, ...], truth_where: str,
               declared: str | None, name: str) -> str:
    """"samples" or "points" for an array of ``shape`` beside the truth, by the shape rules of the
    module docstring; an array that fits neither, or fits both without ``declared``, is an error.

    Samples (n, m[, d]) are an ensemble forecast scored by CRPS(F, y) = E|X - y| - 1/2 E|X - X'|;
    points (n[, d]) a point mass, whose CRPS is |x - y| (Gneiting and Raftery (2007), *J. Amer.
    Statist. Assoc.* 102, eq. 21). Raises :class:`InputFileError`.

    >>> model_kind((40, 8), "flow.npy", (40,), "truth.npy", None, "flow")
    'samples'
    >>> model_kind((40, 1), "reg.npy", (40,), "truth.npy", "points", "reg")  # (n, 1) reads both ways
    'points'
    """
    n = truth_shape[0]
    if shape[0] != n:
        swapped = [i for i, s in enumerate(shape) if s == n and i > 0]
        hint = f"; axis {swapped[0]} has {n}: events must be the first axis (transposed?)" if swapped else ""
        raise InputFileError(f"{where}: {shape[0]} events on the first axis, truth {truth_where} has {n}{hint}")
    one_d = len(truth_shape) == 1
    if one_d:
        fits = {1: "points", 2: "samples"}
    else:
        fits = {2: "points", 3: "samples"}
        if shape[-1] != truth_shape[1]:
            raise InputFileError(f"{where}: {shape[-1]} dimensions on the last axis, truth {truth_where} has {truth_shape[1]}")
    if len(shape) not in fits:
        expected = "(n,) points or (n, m) samples" if one_d else "(n, d) points or (n, m, d) samples"
        raise InputFileError(f"{where}: shape {shape} does not fit truth {truth_where} of shape {truth_shape}: "
                             f"expected {expected}")
    kind = fits[len(shape)]
    if one_d and len(shape) == 2 and shape[1] == 1:
        if declared is None:
            raise InputFileError(f"{where}: shape {shape} beside the 1-D truth {truth_where} reads two ways: point "
                                 f"predictions (n,) or a sampler with m = 1 sample per event; say which with "
                                 f"--kind {name}=points or --kind {name}=samples")
        return declared
    if declared is not None and declared != kind:
        raise InputFileError(f"{where}: --kind {name}={declared}, but shape {shape} beside truth {truth_where} of "
                             f"shape {truth_shape} is {kind}")
    return kind


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
        kind = model_kind(src.shape, src.where, truth.shape, truth_src.where, declared.get(name), name)
        inputs.models[name] = (src, kind)
        inputs.sources[name] = {"spec": file_spec, "shape": list(src.shape), "kind": kind}
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
# scoring, chunk by chunk
# ---------------------------------------------------------------------------------------------
def _workers() -> int:
    """Threads that score chunks side by side (numpy releases the GIL): the usable cores, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def score_models(inputs: Inputs, *, crps_estimator: str, seed: int, energy: bool,
                 progress: bool = True) -> dict[str, EventValues]:
    """{model: EventValues}: samplers read and scored in chunks of about 64 MiB, a few chunks at a
    time in threads (at most ``2 x workers`` chunks in memory), joined in order.

    Per event (:func:`~posteval.metrics.report.event_values`): CRPS = E|X - y| - 1/2 E|X - X'|,
    the coverage codes of |2 PIT - 1|, with ``energy`` the energy score E||X - y|| - 1/2 E||X - X'||
    (all pairs, or :data:`ENERGY_SHIFTS` cyclic shifts when m > ENERGY_SHIFTS + 1), and for
    samplers the TARP credibility and spread-skill terms. References: Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102, eqs. 21-22;
    Lemos et al. (2023), ICML (TARP); Fortin et al. (2014), *J. Hydrometeor.* 15 (spread-skill).

    >>> np.save("truth.npy", np.array([0.0, 1.0])); np.save("flow.npy", np.array([[0.0, 2.0], [1.0, 1.0]]))
    >>> values = score_models(load_inputs(["flow=flow.npy"], "truth.npy", None, None), crps_estimator="nrg",
    ...                       seed=0, energy=False, progress=False)
    >>> values["flow"].crps.tolist()  # 1 - 2 / 4 and 0
    [[0.5], [0.0]]
    """


    t2 = inputs.truth[:, None] if inputs.truth.ndim == 1 else inputs.truth
    centre, scale = tarp_frame(t2)
    refs = tarp_references(t2, centre, scale, seed=seed)
    values, workers = {}, _workers()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for name, (src, kind) in inputs.models.items():
            if kind == "points":
                pred = src.read().reshape(inputs.truth.shape)
                values[name] = event_values(pred, inputs.truth, name=name, crps_estimator=crps_estimator, energy=energy,
                                            calibration=inputs.calibration.get(name), seed=seed)
                continue
            rows = max(1, CHUNK_BYTES // (8 * math.prod(src.shape[1:])))
            shifts = _shifts(src.shape[1]) if energy else None
            parts, pending, start = [], deque(), 0
            bar = tqdm(total=src.shape[0], desc=f"scoring {name}", unit="event", disable=not progress, leave=False)
            for chunk in src.chunks(rows):
                stop = start + len(chunk)
                pending.append(pool.submit(event_values, chunk, inputs.truth[start:stop], name=name,
                                           crps_estimator=crps_estimator, energy=energy, energy_shifts=shifts,
                                           tarp=(centre, scale, refs[start:stop]), spread=True))
                start = stop
                while len(pending) >= 2 * workers:
                    parts.append(pending.popleft().result())
                    bar.update(parts[-1].n)
            while pending:
                parts.append(pending.popleft().result())
                bar.update(parts[-1].n)
            bar.close()
            values[name] = concat_event_values(parts)
    return values


def _shifts(m: int) -> int | None:
    """Cyclic pair shifts of the energy score's second term: all pairs when m is small."""
    return None if m - 1 <= ENERGY_SHIFTS else ENERGY_SHIFTS


# ---------------------------------------------------------------------------------------------
# sentences, tables, files
# ---------------------------------------------------------------------------------------------
def sentences(leads: pd.DataFrame, calib: pd.DataFrame, joint: pd.DataFrame, dim_names: list[str]) -> list[str]:
    """The report's answers, one sentence per metric and dimension, then one per sampler.

    ``leads``, ``calib`` and ``joint`` are the tables of :func:`~posteval.metrics.ranking.leads`
    and :func:`~posteval.metrics.ranking.calibration_verdicts`. A lead is the difference
    D = metric(best) - metric(other) with its interval D -+ z sd(D*) from the paired bootstrap, "resolved"
    when its word is "yes": the claims table's rule (:func:`~posteval.metrics.claims.evaluate_claims`,
    every lead of the report one family, Holm-adjusted); a sampler's verdict compares
    its coverage deviation with an exact sampler's margin. References: Holm (1979), *Scand. J.
    Statist.* 6; Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13;
    Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69 (calibration).

    >>> leads = pd.DataFrame({"metric": ["crps"], "dimension": ["dim0"], "best": ["flow"], "other": ["reg"],
    ...                       "difference": [-0.06], "difference_lo": [-0.1], "difference_hi": [-0.02],
    ...                       "verdict": ["yes"]})
    >>> no_sampler = pd.DataFrame(columns=["model", "verdict", "dimension"])
    >>> sentences(leads, no_sampler, pd.DataFrame(), ["dim0"])
    ['flow has the lowest CRPS; its lead is resolved over reg (difference −0.06000 [−0.1000, −0.02000]).']
    """
    out = []
    for (metric, dim), group in leads.groupby(["metric", "dimension"], sort=False):
        best = group["best"].iloc[0]
        where = " over all dimensions" if dim == "all" else f" on {dim}" if len(dim_names) > 1 else ""
        said = []
        for word, rows in (("resolved", group[group["verdict"] == "yes"]), ("not resolved", group[group["verdict"] != "yes"])):
            if len(rows):
                said.append(f"{word} over " + ", ".join(
                    f"{r.other} (difference {format_interval(r.difference, r.difference_lo, r.difference_hi)})" for r in rows.itertuples()))
        out.append(f"{best} has the lowest {METRIC_WORDS[metric]}{where}; its lead is " + "; ".join(said) + ".")
    words = {"calibrated": "is calibrated", "under-covers": "under-covers (its intervals are too narrow)",
             "over-covers": "over-covers (its intervals are too wide)",
             "not resolved": "is not resolved as calibrated or miscalibrated"}
    for (model, word), rows in calib.groupby(["model", "verdict"], sort=False):
        dims = list(rows["dimension"])
        where = f" on {_and(dims)}" if len(dim_names) > 1 else ""
        devs = ", ".join(format_interval(r.coverage_deviation, r.coverage_deviation_lo, r.coverage_deviation_hi)
                         for r in rows.itertuples())
        out.append(f"{model} {words[word]}{where}: coverage deviation{'s' if len(rows) > 1 else ''} {devs} "
                   f"(coverage − that of an exact sampler with the same {rows['m'].iloc[0]} draws), margin "
                   f"{format_number(rows['margin'].iloc[0])}.")
    for r in joint.to_dict("records"):
        parts = []
        if "tarp_verdict" in r and len(dim_names) > 1:
            tarp_word = {"not rejected": "not beyond", "miscalibrated": "beyond"}
            parts.append(f"its TARP error {format_interval(r['tarp_error'], r['tarp_error_lo'], r['tarp_error_hi'])} "
                         f"is {tarp_word[r['tarp_verdict']]} an exact sampler's noise floor "
                         f"{format_number(r['tarp_noise_floor'])}")
        if "spread_skill" in r and np.isfinite(r["spread_skill"]):
            parts.append(f"its spread-skill ratio is "
                         f"{format_interval(r['spread_skill'], r['spread_skill_lo'], r['spread_skill_hi'])} (1 when "
                         f"the spread tracks the error)")
        if parts:
            out.append(f"Over all dimensions {r['model']}: " + "; ".join(parts) + ".")
    return out


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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
    """JSON records with NaN as null."""
    return json.loads(frame.to_json(orient="records"))


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
    """Version, command line, date, inputs (with sha256) and the estimators of one report.

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
    return {
        "posteval_version": _version(),
        "command": shlex.join(argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "inputs": files,
        "crps_estimator": args.crps_estimator,
        "energy_score": (f"fair (unbiased) estimator; E||X - X'|| from the m x {ENERGY_SHIFTS} cyclic pairs "
                         f"(x_i, x_(i+k)), k = 1..{ENERGY_SHIFTS}, for m > {ENERGY_SHIFTS + 1}, all pairs otherwise; "
                         f"a point prediction's (and a single draw's) is its Euclidean error")
        if inputs.truth.ndim == 2 else "not computed: one dimension (it equals the CRPS)",
        "point_value_rule": POINT_RULE,
        # the keys of 0.2.0 kept (readers of protocol.json); the options are --level, --n-resamples, --spectrum-resamples
        "ci": args.level, "n_boot": args.n_resamples, "seed": args.seed, "bins": args.bins,
        "n_perm": args.spectrum_resamples,
        "multiplicity": "Holm over all leads of the report (one family of the claims table's rule)",
    }


def write_report(inputs: Inputs, args: argparse.Namespace, out: Path, argv: list[str], *,
                 progress: bool = True) -> tuple[dict[str, Path], list[str]]:
    """Score, decide, draw and write every report file into ``out``; returns (files, summary).

    The numbers are those of :func:`~posteval.metrics.report.protocol_table` (CRPS, Gneiting and
    Raftery (2007), eq. 21; coverage, Gneiting, Balabdaoui and Raftery (2007); paired bootstrap
    percentile intervals, Efron and Tibshirani (1993), ch. 13) and the verdicts those of
    :mod:`~posteval.metrics.ranking` (Holm (1979)). The files: ``protocol.csv`` (RFC 4180, 2005),
    ``protocol.json`` (RFC 8259, 2017: NaN written as null), ``protocol.md`` (GitHub Flavored
    Markdown 0.29-gfm, 2019), one PNG per dimension (W3C PNG Specification, 2003) and
    ``report.html`` (:func:`~posteval.metrics.report_page.html_page`).

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=40)
    >>> np.save("truth.npy", x + rng.normal(size=40)); np.save("flow.npy", x[:, None] + rng.normal(size=(40, 8)))
    >>> argv = ["report", "--samples", "flow=flow.npy", "--truth", "truth.npy", "--n-resamples", "100", "--out", "rep"]
    >>> args = build_parser().parse_args(argv)
    >>> files, summary = write_report(load_inputs(args.samples, args.truth, None, None), args, args.out,
    ...                               [PROG, *argv], progress=False)
    >>> sorted(files)
    ['protocol.csv', 'protocol.json', 'protocol.md', 'protocol_0_dim0.png', 'report.html']
    >>> json.loads(files["protocol.json"].read_text())["protocol"][0]["model"]
    'flow'
    """
    matplotlib.use("Agg")  # files only, never a window
    energy = inputs.truth.ndim == 2
    digests = input_digests(inputs)
    values = score_models(inputs, crps_estimator=args.crps_estimator, seed=args.seed, energy=energy, progress=progress)
    table, reps = protocol_table(values, inputs.truth, dim_names=inputs.dim_names, bins=args.bins,
                                 spectrum_resamples=args.spectrum_resamples, level=args.level,
                                 n_resamples=args.n_resamples, seed=args.seed, replicates=True)
    levels = np.sort(DEFAULT_LEVELS)
    notes = []
    if args.spectrum_resamples == 0:
        table = table.drop(columns=["chi2_pvalue_exchange"])
        notes.append("chi2_pvalue_exchange is not computed (--spectrum-resamples 0): give --spectrum-resamples 1000 for the exchange "
                     "p-value of the spectrum; chi2_pvalue is the asymptotic chi-square p-value.")
    if not inputs.calibration:
        table = table.drop(columns=[c for c in table.columns if c.startswith("coverage_error_conformal")])
        notes.append("coverage_error_conformal is not computed: no --calibration data was given.")
    if any(k == "points" for _, k in inputs.models.values()):
        notes.append("A point predictor has no raw coverage error (–): it has no predictive distribution; give "
                     "--calibration data for its split-conformal coverage.")
    leads = ranking.leads(table, reps, level=args.level)
    samplers = {n: v for n, v in values.items() if v.kind == "samples"}
    calib, joint = ranking.calibration_verdicts(table, samplers, levels, level=args.level,
                                                n_resamples=args.n_resamples, seed=args.seed)
    if len(values) == 1:
        notes.append("One model: there is no lead to resolve.")
    if not samplers:
        notes.append("No sampler: there is no raw coverage to judge.")
    summary = sentences(leads, calib, joint, inputs.dim_names)
    prov = provenance(argv, inputs, args, digests.result())

    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and not out.is_dir():
        raise InputFileError(f"--out {out}: exists and is not a folder")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        table.pipe(csv_safe).to_csv(tmp / "protocol.csv", index=False)
        payload = {"summary": summary, "protocol": _records(table), "leads": _records(leads),
                   "calibration": _records(calib), "joint_calibration": _records(joint), "notes": notes,
                   "provenance": prov}
        (tmp / "protocol.json").write_text(json.dumps(payload, indent=1, allow_nan=False) + "\n")
        (tmp / "protocol.md").write_text(_markdown(summary, leads, calib, joint, table, notes, prov))
        figures = _figures(inputs, values, levels, tmp, prov)
        sections = _sections(args, leads, calib, joint, table)
        page = report_page.html_page(title="Evaluation protocol report", summary=summary, sections=sections,
                                     figures=[(cap, p.read_bytes()) for cap, p in figures], provenance=prov, notes=notes)
        (tmp / "report.html").write_text(page)
        out.mkdir(exist_ok=True)
        files = {}
        for f in sorted(tmp.iterdir()):
            os.replace(f, out / f.name)
            files[f.name] = out / f.name
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return files, summary


def _markdown(summary, leads, calib, joint, table, notes, prov) -> str:
    """The text of ``protocol.md``."""
    md = ["# Evaluation protocol report", "", *[f"- {md_cell(s)}" for s in summary], "",
          "## Leads", "", markdown_table(leads), "## Calibration", "", markdown_table(calib),
          "## Joint calibration", "", markdown_table(joint) if len(joint) else "(no sampler)\n",
          "## Protocol table", "", markdown_table(table), "## Notes", "", *[f"- {n}" for n in notes], "",
          "## Provenance", "", "```json", json.dumps(prov, indent=1), "```", ""]
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


class _DeprecatedOption(argparse.Action):
    """An option renamed in 0.3.0: stores its value under the new option's name and warns on stderr."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: warning: {option_string} is deprecated since posteval 0.3.0 and will be removed in "
              f"0.4.0; use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m posteval.metrics report`` (its options and defaults).

    Options follow the utility conventions of POSIX.1-2017 (IEEE Std 1003.1-2017, ch. 12) with
    GNU-style long options (``--name value``); a usage error exits with status 2.

    >>> args = build_parser().parse_args(["report", "--samples", "flow=flow.npy", "--truth", "truth.npy",
    ...                                   "--out", "rep"])
    >>> args.samples, args.level, args.n_resamples, args.crps_estimator, args.bins, args.spectrum_resamples
    (['flow=flow.npy'], 0.95, 1000, 'nrg', 20, 0)

    The options of 0.2.0 ``--ci``, ``--n-boot`` and ``--n-perm`` still work, hidden from ``--help``, and
    print a deprecation warning (removed in 0.4.0).
    """
    parser = argparse.ArgumentParser(prog=PROG, description="The evaluation protocol of the book on your own model's samples.")
    parser.add_argument("--version", action="version", version=f"posteval {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="protocol table, verdicts, figures and HTML report from sample files",
                         description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n")[3],
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("--version", action="version", version=f"posteval {_version()}")
    rep.add_argument("--samples", action="append", required=True, metavar="NAME=FILE[:KEY]",
                     help="one model: samples (n, m[, d]) or point predictions (n[, d]), events first; repeat per model")
    rep.add_argument("--truth", required=True, metavar="FILE[:KEY]", help="true values (n,) or (n, d)")
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
                     help="CRPS estimator of the samplers (nrg: 1/m^2 pair sum; fair: 1/(m(m-1)); pwm = fair)")
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
    rep.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m posteval.metrics``; returns the exit code.

    Reads the inputs, writes the report (:func:`write_report`: CRPS of Gneiting and Raftery
    (2007), calibration after Gneiting, Balabdaoui and Raftery (2007), leads with Holm (1979)),
    prints the summary sentences and the files written, and returns 0; an unusable input
    prints a one-line error to stderr and returns 2.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=40)
    >>> np.save("truth.npy", x + rng.normal(size=40)); np.save("reg.npy", x)
    >>> np.save("flow.npy", x[:, None] + rng.normal(size=(40, 8)))
    >>> main(["report", "--quiet", "--samples", "flow=flow.npy", "--samples", "reg=reg.npy",
    ...       "--truth", "truth.npy", "--n-resamples", "100", "--out", "rep"])
    flow has the lowest CRPS; its lead is ...
    report.html: rep...report.html
    0
    >>> main(["report", "--samples", "flow=missing.npy", "--truth", "truth.npy", "--out", "rep"])
    2
    """
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    try:
        inputs = load_inputs(args.samples, args.truth, args.calibration, args.dims, args.kind)
        files, summary = write_report(inputs, args, args.out, [PROG, *argv], progress=not args.quiet)
    except (ValueError, OSError) as exc:  # InputFileError, the protocol's own validation, a full disk
        print(f"{PROG} report: error: {exc}", file=sys.stderr)
        return 2
    for s in summary:
        print(s)
    for name, path in files.items():
        print(f"{name}: {path}")
    return 0


def report_main() -> int:
    """Entry point of the ``protocol-report`` console script (the ``report`` command).

    ``main(["report", *sys.argv[1:]])``: the report of :func:`main` (CRPS of Gneiting and Raftery
    (2007), calibration after Gneiting, Balabdaoui and Raftery (2007)); returns the exit code.

    >>> import sys
    >>> saved, sys.argv = sys.argv, ["protocol-report", "--samples", "a=missing.npy", "--truth", "missing.npy",
    ...                               "--out", "rep"]
    >>> try:
    ...     report_main()  # a one-line error on stderr
    ... finally:
    ...     sys.argv = saved
    2
    """
    return main(["report", *sys.argv[1:]])
