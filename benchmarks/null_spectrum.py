"""Null simulation of the spectrum chi-square: how often a correct model is rejected.

Two nulls, n events, 20 bins, `repeats` repeats:
* independent: prediction and truth are independent draws of N(0, 1);
* same events: z ~ N(0, 1), x = z + N(0, s^2), the prediction one draw of the exact posterior
  z' ~ p(z | x) (truth and draw exchangeable given x, histograms positively correlated).

Prints mean chi2/ndf, the fraction of p < 0.05 and the KS p-value of uniformity, for the previous
`chi2_spectrum` (ndf = bins, truth-quantile bins; git revision given by --before, optional) and
for `spectrum_test` (asymptotic and exchange p-values).

    python benchmarks/null_spectrum.py [--before e31af41]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile

import numpy as np
from scipy import stats
from tqdm.auto import tqdm

from posteval import metrics


def draws(kind: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if kind == "independent":
        return rng.normal(size=n), rng.normal(size=n)
    noise = 1.0
    z = rng.normal(size=n)
    x = z + noise * rng.normal(size=n)
    post_mean, post_sd = x / (1 + noise**2), np.sqrt(noise**2 / (1 + noise**2))
    return post_mean + post_sd * rng.normal(size=n), z


def old_module(rev: str):
    src = subprocess.run(["git", "show", f"{rev}:lib/posteval/metrics/__init__.py"], capture_output=True, text=True, check=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("old_metrics", f.name)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--bins", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=400)
    ap.add_argument("--n-perm", type=int, default=200)
    ap.add_argument("--before", default=None, help="git revision with the previous chi2_spectrum")
    args = ap.parse_args()
    old = old_module(args.before) if args.before else None
    print(f"n = {args.n}, {args.bins} bins, {args.repeats} repeats, {args.n_perm} exchanges per test")
    for kind in ("independent", "same events (exact-posterior draw)"):
        rng = np.random.default_rng(1)
        rows = {"before: ndf = bins": [], "after: asymptotic": [], "after: exchange": []}
        for r in tqdm(range(args.repeats), desc=kind, leave=False):
            pred, truth = draws(kind.split()[0], args.n, rng)
            if old is not None:
                c, k = old.chi2_spectrum(pred, truth, bins=args.bins)
                rows["before: ndf = bins"].append((c / k, stats.chi2.sf(c, k)))
            t = metrics.spectrum_test(pred, truth, bins=args.bins, n_resamples=args.n_perm, seed=r)
            rows["after: asymptotic"].append((t.chi2_ndf, t.pvalue))
            rows["after: exchange"].append((t.chi2_ndf, t.pvalue_exchange))
        print(f"\n{kind}")
        for name, vals in rows.items():
            if not vals:
                continue
            a = np.array(vals)
            ks = stats.kstest(a[:, 1], "uniform").pvalue if "exchange" not in name else float("nan")
            print(f"  {name:22s} mean chi2/ndf {a[:, 0].mean():.3f}  P(p < 0.05) {np.mean(a[:, 1] < 0.05):.3f}"
                  + (f"  KS p {ks:.3g}" if np.isfinite(ks) else "  (discrete p-values: KS not applicable)"))


if __name__ == "__main__":
    sys.exit(main())
