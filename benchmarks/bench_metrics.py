"""Benchmark of posteval.metrics against scoringrules, and of the bootstrapped protocol table.

Run from the repository root:  .venv/bin/python benchmarks/bench_metrics.py [--scale 1.0]

Prints, in one run, wall times and the ratio scoringrules / ours (> 1: ours is faster) for
* each CRPS estimator (nrg, fair, pwm) on n x 256 samples x 6 dims. scoringrules' numpy "nrg"
  and "fair" build the (m, m) pair matrix per event (O(m^2) memory: about 29 GiB at n = 1e4), so
  they are timed on `--n-pairs` events; "nrg" is also timed against scoringrules' "qd", the
  same estimator in O(m log m), on the full n;
* the energy score (nrg, fair), O(m^2 d) in both, on `--n-pairs` events (and ours alone on
  `--n-energy` events);
* the numba backend of scoringrules too when numba is installed;
* protocol_report on n events x 6 dims x 5 models (3 samplers with 64 samples, 2 point
  estimators, all with calibration data) with ci=0.95 and 1000 bootstrap resamples.
The load average is printed beside the numbers: on a shared machine they are upper bounds.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np
import scoringrules as sr

from posteval import metrics  # noqa: E402


def best_of(fn, repeat: int = 2) -> tuple[object, float]:
    """(result, fastest wall seconds of `repeat` calls)."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, min(times)


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def row(label: str, n: int, ours: float, theirs: float, agree: float) -> None:
    print(f"  {label:34s} n={n:>7d}  ours {ours:8.3f} s  scoringrules {theirs:8.3f} s  ratio {theirs / ours:6.2f}"
          f"  max |diff| {agree:.1e}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the event counts")
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--d", type=int, default=6)
    ap.add_argument("--n-pairs", type=int, default=200, help="events for scoringrules' O(m^2)-memory estimators")
    ap.add_argument("--n-energy", type=int, default=10_000, help="events for our energy score alone")
    args = ap.parse_args()
    n = int(100_000 * args.scale)
    n_pairs, n_energy = max(10, int(args.n_pairs * args.scale)), max(10, int(args.n_energy * args.scale))
    m, d = args.m, args.d
    rng = np.random.default_rng(0)
    samples = rng.normal(size=(n, m, d))
    truth = rng.normal(size=(n, d))
    fct = np.moveaxis(samples, 1, -1)  # scoringrules: ensemble on the last axis for the CRPS
    backends = ["numpy"] + (["numba"] if importlib.util.find_spec("numba") else [])
    print(f"posteval.metrics vs scoringrules {sr.__version__} ({', '.join(backends)}); m = {m}, d = {d}; {load()}")
    print("(numba not installed: numpy backend only)" if len(backends) == 1 else "")
    for backend in backends:
        print(f"CRPS, backend {backend}")
        for est, theirs_est, size in [("nrg", "nrg", n_pairs), ("nrg", "qd", n), ("fair", "fair", n_pairs), ("pwm", "pwm", n)]:
            s, t, f = samples[:size], truth[:size], fct[:size]
            ours, t_ours = best_of(lambda: metrics.crps_ensemble(s, t, estimator=est))
            ref, t_ref = best_of(lambda: sr.crps_ensemble(t, f, estimator=theirs_est, backend=backend))
            row(f"crps {est} vs {theirs_est}", size, t_ours, t_ref, float(np.max(np.abs(ours - ref))))
        print(f"energy score, backend {backend}")
        for est in ("nrg", "fair"):
            s, t = samples[:n_pairs], truth[:n_pairs]
            ours, t_ours = best_of(lambda: metrics.energy_score_ensemble(s, t, estimator=est))
            ref, t_ref = best_of(lambda: sr.es_ensemble(t, s, m_axis=-2, v_axis=-1, estimator=est, backend=backend))
            row(f"energy_score {est}", n_pairs, t_ours, t_ref, float(np.max(np.abs(ours - ref))))
    _, t_es = best_of(lambda: metrics.energy_score_ensemble(samples[:n_energy], truth[:n_energy]), repeat=1)
    print(f"  ours alone: energy_score nrg on {n_energy} events: {t_es:.2f} s ({t_es / n_energy * n:.0f} s scaled to n={n})")
    del samples, fct

    m_rep, n_cal = 64, n // 5
    models, calibration = {}, {}
    cal_truth = rng.normal(size=(n_cal, d))
    for k, width in enumerate((1.0, 0.8, 1.2)):
        models[f"sampler{k}"] = width * rng.normal(size=(n, m_rep, d)).astype(float)
        calibration[f"sampler{k}"] = (width * rng.normal(size=(n_cal, m_rep, d)), cal_truth)
    for k, shift in enumerate((0.0, 0.1)):
        models[f"point{k}"] = np.full((n, d), shift)
        calibration[f"point{k}"] = (np.full((n_cal, d), shift), cal_truth)
    print(f"protocol_report: {n} events x {d} dims x {len(models)} models (3 samplers m = {m_rep}, 2 points), "
          f"calibration {n_cal} events; {load()}")
    _, t_plain = best_of(lambda: metrics.protocol_report(models, truth, calibration=calibration), repeat=1)
    _, t_ci = best_of(lambda: metrics.protocol_report(models, truth, calibration=calibration, level=0.95, n_resamples=1000),
                      repeat=1)
    print(f"  without intervals {t_plain:.1f} s; ci=0.95 with 1000 bootstrap resamples {t_ci:.1f} s (goal < 60 s); {load()}")


if __name__ == "__main__":
    main()
