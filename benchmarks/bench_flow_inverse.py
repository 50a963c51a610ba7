"""CPU-seconds of sampling a flow the size of chapter 3's constraint flow (6 features, 4 spline transforms,
hidden [64, 64], 8 bins; ``params/ci/03_top_quark.yaml``) by zuko's own inverse and by the book's
(:func:`posteval.models.flow.autoregressive_inverse`, the same x bit for bit), side by side in one run.

Run from the repository root:  .venv/bin/python benchmarks/bench_flow_inverse.py [--rows 65536] [--repeat 3]

Each repeat inverts the same ``--rows`` standard-normal draws (one chapter-3 sampling batch: 1,024 events x
64 proposals) through both, alternating which goes first, on one torch thread with the book's portable
kernels; prints the fewest CPU-seconds (process time) of each over the repeats, their ratio (< 1: the
book's is cheaper) and whether the two gave the same tensor.
"""

from __future__ import annotations

import argparse
import time

import torch

from posteval.models.flow import ConditionalFlow
from posteval.runtime import seed_everything


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=65536)
    parser.add_argument("--context", type=int, default=48, help="context features (the encoder's and the pairing's)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    seed_everything(0, threads=1)
    flow = ConditionalFlow(6, args.context, transforms=4, hidden=(64, 64), bins=8, bound=5.0)
    with torch.no_grad():
        for p in flow.parameters():  # away from the initialisation's near-identity splines, as a trained flow
            p.add_(0.3 * torch.randn_like(p))
        c, z = torch.randn(args.rows, args.context), torch.randn(1, args.rows, 6)
        ways = {"zuko": lambda: flow.flow(c).transform.inv(z), "book": lambda: flow.inverse(z, c)}
        best, out = {k: float("inf") for k in ways}, {}
        for r in range(args.repeat):
            for name in (list(ways) if r % 2 == 0 else list(ways)[::-1]):
                t0 = time.process_time()
                out[name] = ways[name]()
                best[name] = min(best[name], time.process_time() - t0)
    print(f"{args.rows:,} rows, fewest CPU-s of {args.repeat}: zuko {best['zuko']:.2f}, book {best['book']:.2f}, "
          f"ratio book / zuko {best['book'] / best['zuko']:.2f}; the same x: {torch.equal(out['zuko'], out['book'])}")


if __name__ == "__main__":
    main()
