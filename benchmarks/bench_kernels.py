"""CPU-seconds of the book's portable kernels against the AVX2 kernels it ran before, side by side in one run.

Run from the repository root:  .venv/bin/python benchmarks/bench_kernels.py [--epochs 2] [--repeat 3]

Two settings (``SETTINGS``), alternating in fresh processes (torch, MKL, oneDNN and numpy read them at
their first use) so that a change in the machine's load falls on both:

* ``portable``: :data:`posteval.runtime.PORTABLE_KERNELS` (ATen's baseline kernels, oneDNN off, MKL's
  COMPATIBLE branch, numpy's baseline kernels), the book's since 2026-12-07;
* ``avx2``: ATen's AVX2 kernels, oneDNN on at AVX2, numpy's own SIMD (the book's from 2026-12-06 to
  2026-12-07, not portable across CPU vendors as measured).

Each process trains the four event models of chapter 3 (its ci encoder and heads,
``params/ci/03_top_quark.yaml``) for ``--epochs`` epochs on 24,000 standard-normal events of chapter 3's
input shapes (the cost of these operations does not depend on the values), then scores 64 draws of 6
targets for 20,000 events as the protocol does (CRPS, energy score, coverage, spectrum: numpy). Prints,
per model and for the scoring, the fewest CPU-seconds over the repeats (user + sys, one thread) and the
ratio avx2 / portable (< 1: the AVX2 kernels are cheaper).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from posteval.runtime import PORTABLE_KERNELS  # noqa: E402

KINDS = ("transformer_mse", "transformer_mmd", "flow", "cfm")
SETTINGS = {"portable": dict(PORTABLE_KERNELS),
            "avx2": {**PORTABLE_KERNELS, "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                     "NPY_DISABLE_CPU_FEATURES": "", "POSTEVAL_ONEDNN_ON": "1"}}

CHILD = r"""
import json, os, sys, time
import numpy as np
import torch, yaml
from posteval.runtime import seed_everything
from posteval.models import TrainingSettings, train_model
from posteval.models.event_models import build_event_model
from posteval.metrics import evaluate_models
epochs = int(sys.argv[1])
p = yaml.safe_load(open("params/ci/03_top_quark.yaml"))
seed_everything(0, threads=1)
torch.backends.mkldnn.enabled = bool(os.environ.get("POSTEVAL_ONEDNN_ON"))
g = torch.Generator().manual_seed(0)
def batch(n):
    return (torch.randn(n, 4, generator=g), torch.randn(n, 2, 6, generator=g), torch.randn(n, 6, 5, generator=g),
            torch.rand(n, 6, generator=g) < 0.7, torch.randn(n, 6, generator=g))
train, val = batch(24000), batch(4000)
dims = (4, 6, 5)
settings = TrainingSettings(**{**p["training"], "epochs": epochs, "patience": epochs + 1})
out = {"capability": torch.backends.cpu.get_cpu_capability()}
for kind in ("transformer_mse", "transformer_mmd", "flow", "cfm"):
    t0 = time.process_time()
    train_model(lambda: build_event_model(kind, dims, p["encoder"], p["heads"][kind]), train, val, settings,
                seed=1, disable=True)
    out[kind] = time.process_time() - t0
rng = np.random.default_rng(0)
truth = rng.normal(size=(20000, 6))
samples = {"a": truth[:, None] + rng.normal(size=(20000, 64, 6)), "b": rng.normal(size=(20000, 64, 6)) * 1.2}
t0 = time.process_time()
evaluate_models(samples, truth, n_resamples=200, seed=0)
out["scoring (numpy)"] = time.process_time() - t0
print(json.dumps(out))
"""
ITEMS = (*KINDS, "scoring (numpy)")


def run(setting: str, epochs: int) -> dict:
    """One fresh process under ``setting``: its CPU-seconds per model and for the scoring."""
    env = {**os.environ, **SETTINGS[setting], "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "lib")}
    done = subprocess.run([sys.executable, "-c", CHILD, str(epochs)], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"the {setting} process failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    best = {c: {k: float("inf") for k in ITEMS} for c in SETTINGS}
    started = time.perf_counter()
    for _ in range(args.repeat):
        for c in SETTINGS:
            got = run(c, args.epochs)
            for k in ITEMS:
                best[c][k] = min(best[c][k], got[k])
    print(f"training {args.epochs} epochs and scoring, fewest CPU-s of {args.repeat} fresh processes per setting "
          f"(load average {os.getloadavg()[0]:.2f}; {time.perf_counter() - started:.0f} s in all)")
    print(f"  {'item':18s} {'portable':>9s} {'avx2':>9s} {'avx2/portable':>14s}")
    for k in (*ITEMS, "training, all four", "all"):
        pick = KINDS if k == "training, all four" else ITEMS if k == "all" else (k,)
        d, a = (sum(best[c][i] for i in pick) for c in ("portable", "avx2"))
        print(f"  {k:18s} {d:9.2f} {a:9.2f} {a / d:14.2f}")


if __name__ == "__main__":
    main()
