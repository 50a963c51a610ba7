"""Benchmark of posteval.physics.dilepton and the samplers through the constraint variables.

Run from the repository root:  PYTHONPATH=lib .venv/bin/python benchmarks/bench_dilepton.py [--quick] [--events 2380]

Prints, in one run: solves per CPU-second of ``solve_dilepton`` at the chapter's size (2,380 test events
x 64 draws of c from the training marginal, batched as one call and in chunks of 256 events), its
acceptance (draws with a real root) and root counts; one solve per event at the true c with how often
the true neutrinos are a root; ``log_abs_det_jacobian`` per CPU-second; and events per CPU-second of
``constraint_floor_samples`` (m = 64) and ``constraint_is_samples`` (256 proposals, m = 64).

The events are ``constraint_sampling.toy_events`` (exact kinematics, random momenta; no Pythia), so the
acceptance is the toy's, not the chapter's; the cost per solve does not depend on the sample. Reference:
0.9-1.7 x 10^5 solves per CPU-second on one core (shared/notes/constraint_coordinates.md). Timings are
process CPU time (time.process_time), best of ``--repeat``; set OMP_NUM_THREADS=1 for one core. About
a minute at the default size on one busy core (the floor sampler is half of it), 3 s with --quick.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from posteval.physics import dilepton
from posteval.physics.constraint_sampling import (ConstraintMarginal, GaussianNeutrinoPrior, constraint_floor_samples,
                                                  constraint_is_samples, toy_events)


def timed(fn, repeat: int = 1):
    """(result of the last call, best wall seconds, best process CPU seconds) of fn() over ``repeat`` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return out, min(walls), min(cpus)


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def _inputs(ev):
    return ev["lep_p4"], ev["jet_p4"], ev["met"]


def bench_solve(test, marginal, draws: int, repeat: int, seed: int) -> None:
    lep, bj, met = _inputs(test)
    n = len(lep)
    c = marginal.draw((n, draws), np.random.default_rng(seed))
    solves = n * draws

    def one_call():
        return dilepton.solve_dilepton(c, lep[:, None], bj[:, None], met[:, None])

    def chunked(size=256):
        return [dilepton.solve_dilepton(c[s:s + size], lep[s:s + size, None], bj[s:s + size, None],
                                        met[s:s + size, None]) for s in range(0, n, size)]

    (roots, valid), w1, c1 = timed(one_call, repeat)
    _, w2, c2 = timed(chunked, repeat)
    counts = np.bincount(valid.sum(axis=-1).ravel(), minlength=5)
    print(f"[solve_dilepton, {n} events x {draws} draws of c from the training marginal = {solves} solves]  ({load()})")
    print(f"  one call:             {solves / c1:9.0f} solves/CPU-s  {solves / w1:9.0f} solves/s wall"
          f"  ({c1:.2f} CPU-s; reference 0.9-1.7e5 solves/CPU-s)")
    print(f"  chunks of 256 events: {solves / c2:9.0f} solves/CPU-s  {solves / w2:9.0f} solves/s wall"
          f"  ({c2:.2f} CPU-s)")
    print(f"  acceptance (draws with a real root): {valid.any(axis=-1).mean():.3f};  root counts 0/1/2/3/4: "
          + " ".join(f"{x / counts.sum():.3f}" for x in counts))
    logdet_args = (roots[valid], np.broadcast_to(lep[:, None, None], valid.shape + (2, 4))[valid],
                   np.broadcast_to(bj[:, None, None], valid.shape + (2, 4))[valid])
    _, w3, c3 = timed(lambda: dilepton.log_abs_det_jacobian(*logdet_args), repeat)
    print(f"  log_abs_det_jacobian on its {len(logdet_args[0])} roots: {len(logdet_args[0]) / c3:9.0f} roots/CPU-s")


def bench_truth(test, repeat: int) -> None:
    lep, bj, met = _inputs(test)
    nu = test["neutrino_momenta"]
    c = dilepton.constraint_variables(nu, lep, bj, met)
    (roots, valid), wall, cpu = timed(lambda: dilepton.solve_dilepton(c, lep, bj, met), repeat)
    err = np.where(valid, np.abs(roots - nu[:, None]).max(axis=(2, 3)), np.inf).min(axis=1)
    counts = valid.sum(axis=1)
    print(f"[solve_dilepton at the true c, {len(c)} events, one solve each]")
    print(f"  {len(c) / cpu:9.0f} solves/CPU-s;  true neutrinos a root (1e-4 GeV): {np.mean(err < 1e-4):.4f};"
          f"  even root counts: {np.mean(counts % 2 == 0):.4f};  4 roots: {np.mean(counts == 4):.3f}")


def bench_samplers(test, marginal, prior, m: int, proposals: int, seed: int) -> None:
    n = len(test["met"])

    def fallback(count, rng):
        return np.zeros((count, m, 2, 3))

    floor, wf, cf = timed(lambda: constraint_floor_samples(test, marginal, m, seed, fallback=fallback))
    imp, wi, ci = timed(lambda: constraint_is_samples(test, marginal, prior, m, seed, proposals=proposals,
                                                      fallback=fallback))
    print(f"[samplers, {n} events, m = {m}]  ({load()})")
    label = f"constraint_is_samples, {proposals} proposals:"
    print(f"  {'constraint_floor_samples:':<{len(label)}} {n / cf:7.0f} events/CPU-s  ({cf:.2f} CPU-s, {wf:.2f} s wall)"
          f"  acceptance {floor.acceptance:.3f}, fallback {floor.fallback.mean():.3f}")
    print(f"  {label} {n / ci:7.0f} events/CPU-s  ({ci:.2f} CPU-s, {wi:.2f} s wall)"
          f"  {n * proposals / ci:9.0f} solves/CPU-s, fallback {imp.fallback.mean():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2380, help="test events (the chapter's test split: 2,380)")
    parser.add_argument("--draws", type=int, default=64, help="draws of c per event")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings")
    parser.add_argument("--quick", action="store_true", help="a tenth of the events, 16 draws, one timing")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    n, draws, repeat = args.events, args.draws, args.repeat
    if args.quick:
        n, draws, repeat = max(n // 10, 20), 16, 1
    print(f"posteval.physics.dilepton benchmark, {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} CPUs,"
          f" OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    rng = np.random.default_rng(args.seed)
    train, test = toy_events(n, rng), toy_events(n, rng)
    marginal, prior = ConstraintMarginal.fit(train), GaussianNeutrinoPrior.fit(train)
    dilepton.solve_dilepton(marginal.values[:8], train["lep_p4"][:8], train["jet_p4"][:8], train["met"][:8])  # warm
    bench_solve(test, marginal, draws, repeat, args.seed)
    bench_truth(test, repeat)
    bench_samplers(test, marginal, prior, m=draws, proposals=4 * draws, seed=args.seed)


if __name__ == "__main__":
    main()
