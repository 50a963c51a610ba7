"""Cost of the report CLI against the API call it wraps, side by side in one run.

Run from the repository root:  .venv/bin/python benchmarks/bench_report_cli.py [--n 100000]

Writes toy inputs (``--models`` samplers of ``n x m x d`` float64 samples as ``.npy`` files and
the truth), then runs, each in a fresh process so that peak memory is its own:

* **API**: ``np.load`` of every file, then ``posteval.metrics.protocol_report(..., level, n_resamples)``
  (the table alone, no figures, no files);
* **CLI**: ``python -m posteval.metrics report`` on the same files with the same ``--level`` and
  ``--n-resamples`` (reading, the table, verdicts, the energy score, figures, report files).

Prints wall time and peak resident memory (``ru_maxrss`` of the child) of each, and the ratios
CLI / API time and peak memory / input size. ``--level 0`` leaves the intervals out (for a CLI that
has no ``--level``). The load average is printed beside the numbers: on a shared machine the times
are upper bounds, the ratios less so (both run under the same load, one after the other).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

API = """
import sys, numpy as np
from posteval import metrics
files, truth, level, n_resamples = sys.argv[1:-3], sys.argv[-3], float(sys.argv[-2]), int(sys.argv[-1])
models = {f"model{i}": np.load(f) for i, f in enumerate(files)}
table = metrics.protocol_report(models, np.load(truth), level=level or None, n_resamples=n_resamples)
print(len(table))
"""


def run_child(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one child process (its own, from ``wait4``)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd[:4])} ...: exit {proc.returncode}\n{err.read()[-2000:].decode()}")
    return wall, usage.ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="events")
    ap.add_argument("--m", type=int, default=256, help="samples per event")
    ap.add_argument("--d", type=int, default=3, help="dimensions")
    ap.add_argument("--models", type=int, default=3, help="samplers")
    ap.add_argument("--level", type=float, default=0.95, help="interval level (0: no intervals)")
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        truth = rng.normal(size=(args.n, args.d))
        np.save(tmp / "truth.npy", truth)
        files = []
        for i in range(args.models):
            f = tmp / f"model{i}.npy"
            np.save(f, truth[:, None, :] * 0.5 + rng.normal(scale=0.9 + 0.05 * i, size=(args.n, args.m, args.d)))
            files.append(str(f))
        input_bytes = sum(os.path.getsize(f) for f in files) + os.path.getsize(tmp / "truth.npy")
        ci = ["--level", str(args.level), "--n-resamples", str(args.n_resamples)] if args.level else []
        cli = [sys.executable, "-m", "posteval.metrics", "report", "--truth", str(tmp / "truth.npy"),
               "--out", str(tmp / "report"), *ci]
        for i, f in enumerate(files):
            cli += ["--samples", f"model{i}={f}"]
        api_wall, api_peak = run_child([sys.executable, "-c", API, *files, str(tmp / "truth.npy"), str(args.level),
                                        str(args.n_resamples)])
        cli_wall, cli_peak = run_child(cli)
    gib = 2**30
    print(f"input: {args.models} samplers x {args.n:,} events x {args.m} samples x {args.d} dims "
          f"= {input_bytes / gib:.2f} GiB; level={args.level or 'none'}, n_resamples={args.n_resamples}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'':8} {'wall s':>8} {'peak GiB':>9} {'peak / input':>13}")
    print(f"{'API':8} {api_wall:8.1f} {api_peak / gib:9.2f} {api_peak / input_bytes:13.2f}")
    print(f"{'CLI':8} {cli_wall:8.1f} {cli_peak / gib:9.2f} {cli_peak / input_bytes:13.2f}")
    print(f"CLI / API time: {cli_wall / api_wall:.2f}")


if __name__ == "__main__":
    main()
