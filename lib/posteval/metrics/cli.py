"""The protocol for your own model, from the shell: ``python -m posteval.metrics report``.

Example::

    python -m posteval.metrics report \\
        --samples flow=flow.npz:samples --samples regressor=reg.npy \\
        --truth test.h5:targets/truth \\
        --calibration regressor=cal.parquet:pred,cal.parquet:truth \\
        --dims pt,eta --out report/

Writes into ``--out``: ``protocol.csv``, ``protocol.json``, ``protocol.md`` (the table of
:func:`posteval.metrics.protocol_report`), ``protocol_<dimension>.png`` (the protocol figure of
:func:`posteval.plotting.protocol_figure`, one per dimension) and ``report.html`` (one page holding
both). A file that cannot be used gives a one-line error naming the file and key, exit code 2.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import sys
from pathlib import Path

import numpy as np

from .array_files import InputFileError, read_array

PROG = "python -m posteval.metrics"


def _named(spec: str, option: str) -> tuple[str, str]:
    name, sep, rest = spec.partition("=")
    if not sep or not name or not rest:
        raise InputFileError(f"{option} {spec}: expected NAME=FILE[:KEY]")
    return name, rest


def _check_against_truth(arr: np.ndarray, where: str, truth: np.ndarray, truth_where: str, *, samples_allowed: bool):
    n = truth.shape[0]
    ranks = (truth.ndim, truth.ndim + 1) if samples_allowed else (truth.ndim,)
    expected = " or ".join({1: "(n,)", 2: "(n, m)" if truth.ndim == 1 and samples_allowed else "(n, d)", 3: "(n, m, d)"}[r] for r in ranks)
    if arr.ndim not in ranks:
        raise InputFileError(f"{where}: shape {arr.shape} does not fit truth {truth_where} of shape {truth.shape}: expected {expected}")
    if arr.shape[0] != n:
        raise InputFileError(f"{where}: {arr.shape[0]} events, truth {truth_where} has {n}")
    if truth.ndim == 2 and arr.shape[-1] != truth.shape[1]:
        raise InputFileError(f"{where}: {arr.shape[-1]} dimensions, truth {truth_where} has {truth.shape[1]}")


def load_inputs(samples: list[str], truth_spec: str, calibration: list[str] | None, dims: str | None):
    """Read and check every input; returns (name_to_samples, truth, calibration, dim_names, sources)."""
    truth, truth_where = read_array(truth_spec)
    if truth.ndim not in (1, 2):
        raise InputFileError(f"{truth_where}: truth must be (n,) or (n, d), got shape {truth.shape}")
    sources = {"truth": {"file": truth_where, "shape": list(truth.shape)}}
    name_to_samples = {}
    for spec in samples:
        name, file_spec = _named(spec, "--samples")
        if name in name_to_samples:
            raise InputFileError(f"--samples {spec}: model name {name!r} given twice")
        arr, where = read_array(file_spec)
        _check_against_truth(arr, where, truth, truth_where, samples_allowed=True)
        name_to_samples[name] = arr
        sources[name] = {"file": where, "shape": list(arr.shape)}
    cal = {}
    for spec in calibration or []:
        name, rest = _named(spec, "--calibration")
        pred_spec, sep, cal_truth_spec = rest.partition(",")
        if not sep:
            raise InputFileError(f"--calibration {spec}: expected NAME=PRED_FILE[:KEY],TRUTH_FILE[:KEY]")
        if name not in name_to_samples:
            raise InputFileError(f"--calibration {spec}: no model {name!r} among --samples")
        if name_to_samples[name].ndim != truth.ndim:
            raise InputFileError(f"--calibration {spec}: {name!r} has samples; calibration data is for point predictors")
        cal_truth, cal_truth_where = read_array(cal_truth_spec)
        if cal_truth.ndim != truth.ndim or cal_truth.shape[1:] != truth.shape[1:]:
            raise InputFileError(f"{cal_truth_where}: shape {cal_truth.shape} does not match truth {truth_where} of shape {truth.shape}")
        cal_pred, cal_pred_where = read_array(pred_spec)
        _check_against_truth(cal_pred, cal_pred_where, cal_truth, cal_truth_where, samples_allowed=False)
        cal[name] = (cal_pred, cal_truth)
        sources[name]["calibration"] = {"predictions": cal_pred_where, "truth": cal_truth_where, "n": int(cal_truth.shape[0])}
    d = 1 if truth.ndim == 1 else truth.shape[1]
    dim_names = [s.strip() for s in dims.split(",")] if dims else [f"dim{j}" for j in range(d)]
    if len(dim_names) != d or not all(dim_names):
        raise InputFileError(f"--dims {dims}: {len(dim_names)} names for the {d} dimensions of truth {truth_where}")
    return name_to_samples, truth, cal or None, dim_names, sources


def markdown_table(frame) -> str:
    """A GitHub-flavoured Markdown table, numbers to 4 significant digits."""

    def cell(v):
        if isinstance(v, (float, np.floating)):
            return "nan" if not np.isfinite(v) else f"{v:.4g}"
        return str(v)

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows]) + "\n"


def _html_page(table, figures: list[Path], sources: dict) -> str:
    imgs = "\n".join(
        f'<figure><img alt="protocol figure, {html.escape(p.stem)}" src="data:image/png;base64,'
        f'{base64.b64encode(p.read_bytes()).decode()}"><figcaption>{html.escape(p.name)}</figcaption></figure>'
        for p in figures
    )
    inputs = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(json.dumps(v))}</li>" for k, v in sources.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Evaluation protocol report</title>
<style>body{{font-family:sans-serif;max-width:1300px;margin:1em auto;padding:0 1em}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .6em;text-align:right}}
img{{max-width:100%}}</style></head><body>
<h1>Evaluation protocol report</h1>
<p>Per model and dimension: pointwise errors (RMSE, MAE), per-event accuracy of the predictive
distribution (CRPS, lower is better), the spectrum chi-square of one reconstruction per event
against the truth (chi2/ndf near 1 when the spectrum is right) and the coverage error of the
central intervals (0 for a calibrated model). A model can win on RMSE and lose on every other column.</p>
<h2>Table</h2>
{table.to_html(index=False, float_format=lambda v: f"{v:.4g}", na_rep="nan")}
<h2>Figures</h2>
{imgs}
<h2>Inputs</h2><ul>{inputs}</ul>
</body></html>
"""


def write_report(name_to_samples, truth, calibration, dim_names, sources, out: Path):
    """Compute the protocol table and figures, write every report file into `out`; returns (files, table)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from posteval import metrics, plotting

    table = metrics.protocol_report(name_to_samples, truth, dim_names=dim_names, calibration=calibration)
    out.mkdir(parents=True, exist_ok=True)
    files = {"csv": out / "protocol.csv", "json": out / "protocol.json", "markdown": out / "protocol.md"}
    table.to_csv(files["csv"], index=False)
    files["json"].write_text(table.to_json(orient="records", indent=1) + "\n")
    files["markdown"].write_text(markdown_table(table))
    plotting.set_theme()
    figures = []
    for j, dim in enumerate(dim_names):
        fig = plotting.protocol_figure(name_to_samples, truth, dimension=j, quantity=dim, calibration=calibration)
        path = out / f"protocol_{''.join(c if c.isalnum() or c in '-_' else '_' for c in dim)}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        figures.append(path)
        files[f"figure {dim}"] = path
    files["html"] = out / "report.html"
    files["html"].write_text(_html_page(table, figures, sources))
    return files, table


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="The evaluation protocol of the book on your own model's samples.")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="protocol table, figure and HTML report from sample files",
                         description=__doc__.split("\n\n")[0])
    rep.add_argument("--samples", action="append", required=True, metavar="NAME=FILE[:KEY]",
                     help="one model: samples (n, m[, d]) or point predictions (n[, d]); repeat per model")
    rep.add_argument("--truth", required=True, metavar="FILE[:KEY]", help="true values (n,) or (n, d)")
    rep.add_argument("--calibration", action="append", metavar="NAME=PRED_FILE[:KEY],TRUTH_FILE[:KEY]",
                     help="calibration predictions and truths of a point predictor (split-conformal coverage)")
    rep.add_argument("--dims", metavar="NAME,NAME,...", help="names of the d dimensions (default dim0, dim1, ...)")
    rep.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder for the report files")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m posteval.metrics``; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        inputs = load_inputs(args.samples, args.truth, args.calibration, args.dims)
        files, table = write_report(*inputs, args.out)
    except ValueError as exc:  # InputFileError, or protocol_report's own validation
        print(f"{PROG} report: error: {exc}", file=sys.stderr)
        return 2
    print(markdown_table(table), end="")
    for what, path in files.items():
        print(f"{what}: {path}")
    return 0


def report_main() -> int:
    """Entry point of the ``protocol-report`` console script (the ``report`` command)."""
    return main(["report", *sys.argv[1:]])
