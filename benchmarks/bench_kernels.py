"""CPU-seconds of training chapter 3's event models under torch's baseline (``default``) and AVX2 ATen
kernels, side by side in one run (why the book's portable kernels are ``ATEN_CPU_CAPABILITY=avx2``).

Run from the repository root:  .venv/bin/python benchmarks/bench_kernels.py [--epochs 2] [--repeat 3]

Each (kernel class, repeat) trains the four event models of chapter 3 (its ci encoder and heads,
``params/ci/03_top_quark.yaml``) for ``--epochs`` epochs on 24,000 standard-normal events of chapter 3's
input shapes (2 leptons x 6, 6 jets x 5, a 4-d global token; the cost of these operations does not depend
on the values) in a fresh process, since torch reads ATEN_CPU_CAPABILITY at its first operation. MKL stays
on its COMPATIBLE branch and oneDNN on AVX2 in both (posteval.runtime.PORTABLE_KERNELS). Prints, per
model, the fewest CPU-seconds (user + sys of the process, one torch thread) over the repeats and the ratio
avx2 / default (< 1: AVX2 is cheaper); the kernel classes alternate so that a change in the machine's load
falls on both.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from posteval.runtime import PORTABLE_KERNELS

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("transformer_mse", "transformer_mmd", "flow", "cfm")
CLASSES = ("default", "avx2")

CHILD = r"""
import json, sys, time
import torch, yaml
from posteval.runtime import seed_everything
from posteval.models import TrainingSettings, train_model
from posteval.models.event_models import build_event_model
epochs = int(sys.argv[1])
p = yaml.safe_load(open("params/ci/03_top_quark.yaml"))
seed_everything(0, threads=1)
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
print(json.dumps(out))
"""


def run(capability: str, epochs: int) -> dict:
    """One fresh process training the four models under ``capability``: its CPU-seconds per model."""
    env = {**os.environ, **PORTABLE_KERNELS, "ATEN_CPU_CAPABILITY": capability, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT / "lib")}
    done = subprocess.run([sys.executable, "-c", CHILD, str(epochs)], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    best = {c: {k: float("inf") for k in KINDS} for c in CLASSES}
    started = time.perf_counter()
    for _ in range(args.repeat):
        for c in CLASSES:
            got = run(c, args.epochs)
            if got["capability"].lower() != c:
                sys.exit(f"asked for ATen {c}, torch ran {got['capability']} (does this CPU have AVX2?)")
            for k in KINDS:
                best[c][k] = min(best[c][k], got[k])
    print(f"training {args.epochs} epochs, fewest CPU-s of {args.repeat} fresh processes per kernel class "
          f"(load average {os.getloadavg()[0]:.2f}; {time.perf_counter() - started:.0f} s in all)")
    print(f"  {'model':18s} {'default':>9s} {'avx2':>9s} {'avx2/default':>13s}")
    for k in (*KINDS, "all four"):
        d = sum(best["default"].values()) if k == "all four" else best["default"][k]
        a = sum(best["avx2"].values()) if k == "all four" else best["avx2"][k]
        print(f"  {k:18s} {d:9.2f} {a:9.2f} {a / d:13.2f}")


if __name__ == "__main__":
    main()
