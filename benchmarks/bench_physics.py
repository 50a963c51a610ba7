"""Benchmark of posteval.physics: generation throughput, parallel speed-up, neutrino weighting.

Run from the repository root:  .venv/bin/python benchmarks/bench_physics.py [--scale 1.0] [--dask]

Prints, in one run: end-to-end events/s/core (generation + truth + detector) and its ratio to
bare Pythia generation; the 2-worker speed-up of ``load_or_generate`` with the load average
beside it; and neutrino weighting's events/s, solution fraction and resolution against the
trivial guess (nu_T = nubar_T = MET / 2, pz = 0), at truth and at detector level.

``--dask`` instead compares the two paths of :mod:`posteval.parallel` side by side: local processes
and a local Dask cluster, 1 and 2 workers each (events/s, speed-up, identical files), and Dask's
overhead per chunk. About a minute on 2 idle cores at ``--scale 1``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from posteval.physics import chunks, ttbar  # noqa: E402
from posteval.physics.generator import make_pythia  # noqa: E402
from posteval.physics.neutrino_weighting import (calibrate, detector_level_inputs, fallback_solution,  # noqa: E402
                                            truth_level_inputs, weigh_solutions)


def timed(fn):
    """(result, wall seconds, process CPU seconds) of fn()."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def bench_generation(n: int, seed: int) -> None:
    config = ttbar.make_config("shower")

    def bare():
        pythia = make_pythia(config, 12345)
        for _ in range(n):
            pythia.next()

    def end_to_end():
        return chunks.run_chunk(chunks.ChunkJob(seed, 0, n, config))

    make_pythia(config, 1)  # imports and first initialisation outside the timing
    _, bw, bc = timed(bare)
    out, ew, ec = timed(end_to_end)
    print(f"[generation, mode=shower, {n} events, 1 process]  ({load()})")
    print(f"  bare Pythia (init + next()):          {n / bw:7.0f} ev/s wall  {n / bc:7.0f} ev/CPU-s")
    print(f"  end to end (gen + truth + detector):  {n / ew:7.0f} ev/s wall  {n / ec:7.0f} ev/CPU-s"
          f"   selected {len(out['met']) / n:.3f}")
    print(f"  ratio end-to-end / bare:              {bw / ew:7.3f} wall      {bc / ec:7.3f} CPU"
          f"   (goal >= 0.67; target >= 1400 ev/s/core)")
    n_full = max(n // 12, 50)
    out, fw, fc = timed(lambda: chunks.run_chunk(chunks.ChunkJob(seed, 0, n_full, ttbar.make_config("full"))))
    print(f"  full simulation (MPI + hadronisation), {n_full} events end to end: {n_full / fw:5.0f} ev/s wall"
          f"  {n_full / fc:5.0f} ev/CPU-s   selected {len(out['met']) / n_full:.3f}")


def children_cpu() -> float:
    """CPU seconds of terminated child processes (the worker pool, once closed)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_workers(n: int, seed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        before = load()
        _, w1, c1 = timed(lambda: ttbar.load_or_generate(n, seed, "shower", 1, Path(tmp) / "one", progress=False))
        mid = load()
        k0 = children_cpu()
        path, w2, c2 = timed(lambda: ttbar.load_or_generate(n, seed, "shower", 2, Path(tmp) / "two", progress=False))
        c2 += children_cpu() - k0
        after = load()
        same = (Path(tmp) / "one" / path.name).read_bytes() == path.read_bytes()
    print(f"[load_or_generate, mode=shower, {n} events, incl. writing the file]")
    print(f"  1 worker : {w1:6.1f} s wall  {n / w1:6.0f} ev/s   CPU {c1:6.1f} s  ({before})")
    print(f"  2 workers: {w2:6.1f} s wall  {n / w2:6.0f} ev/s   CPU {c2:6.1f} s (parent + pool)  ({mid})")
    print(f"  speed-up 2 vs 1 (wall): {w1 / w2:.2f}  (goal >= 1.7 on an idle 2-core machine; after: {after};"
          f" os.cpu_count() = {os.cpu_count()})")
    print(f"  idle-machine estimate 2 * CPU(1) / CPU(2) = {2 * c1 / c2:.2f}  (equal chunks per worker;"
          f" ignores memory-bandwidth sharing)")
    print(f"  files identical for 1 and 2 workers: {same}")


def _warm_up() -> None:
    make_pythia(ttbar.make_config("shower"), 1)


def _dask_run(n: int, seed: int, cache: Path, n_workers: int):
    """(path, wall s, summed chunk compute s) of load_or_generate on a fresh local Dask cluster."""
    from distributed import get_task_stream

    from posteval.parallel import dask_client

    with dask_client(n_workers=n_workers) as client:
        client.run(_warm_up)  # imports and a first Pythia init, as in this process
        with get_task_stream(client) as stream:
            path, wall, _ = timed(lambda: ttbar.load_or_generate(n, seed, "shower", cache_dir=cache, client=client,
                                                                 progress=False))
        compute = sum(ss["stop"] - ss["start"] for task in stream.data for ss in task["startstops"]
                      if ss["action"] == "compute")
    return path, wall, compute


def bench_dask(n: int, seed: int) -> None:
    n_chunks = len(chunks.plan_chunks(n, seed, ttbar.make_config("shower")))
    rows, paths = [], []
    with tempfile.TemporaryDirectory() as tmp:
        _warm_up()  # imports outside the timing
        for n_workers in (1, 2):
            before = load()
            path, wall, _ = timed(lambda: ttbar.load_or_generate(n, seed, "shower", n_workers,
                                                                 Path(tmp) / f"pool{n_workers}", progress=False))
            rows.append(("processes", n_workers, wall, before))
            paths.append(path)
        compute = {}
        for n_workers in (1, 2):
            before = load()
            path, wall, compute[n_workers] = _dask_run(n, seed, Path(tmp) / f"dask{n_workers}", n_workers)
            rows.append(("dask", n_workers, wall, before))
            paths.append(path)
        same = len({p.read_bytes() for p in paths}) == 1
    walls = {(r[0], r[1]): r[2] for r in rows}
    print(f"[posteval.parallel paths, load_or_generate, mode=shower, {n} events = {n_chunks} chunks, incl. the file]")
    print(f"  {'path':<10} {'workers':>7} {'wall s':>7} {'ev/s':>7} {'speed-up':>9}   load before the run")
    for path_name, n_workers, wall, before in rows:
        print(f"  {path_name:<10} {n_workers:>7} {wall:7.1f} {n / wall:7.0f} "
              f"{walls[(path_name, 1)] / wall:9.2f}   {before}")
    print(f"  goal: speed-up >= 1.7 with 2 workers on 2 idle cores (os.cpu_count() = {os.cpu_count()}; after: {load()})")
    per_chunk = compute[1] / n_chunks
    overhead = (walls[("dask", 1)] - compute[1]) / n_chunks
    print(f"  Dask, 1 worker: chunk compute {per_chunk:.3f} s (task stream); wall minus compute per chunk "
          f"{overhead * 1000:.0f} ms = {100 * overhead / per_chunk:.1f} % of a chunk (goal < 5 %; includes"
          f" the final concatenation)")
    print(f"  Dask 1 worker vs in-process (same work, per chunk): "
          f"{100 * (walls[('dask', 1)] / walls[('processes', 1)] - 1):+.1f} %")
    print(f"  files identical on all four runs: {same}")


def _resolution(name: str, est: np.ndarray, true: np.ndarray) -> str:
    err = est - true
    pz, px = err[..., 2].ravel(), err[..., :2].ravel()
    q = np.percentile(pz, [25, 75])
    return (f"  {name:<24} pz: MAE {np.mean(np.abs(pz)):6.1f}  RMS {np.sqrt(np.mean(pz**2)):6.1f}"
            f"  IQR/1.349 {(q[1] - q[0]) / 1.349:6.1f} | px,py: MAE {np.mean(np.abs(px)):5.1f}"
            f"  RMS {np.sqrt(np.mean(px**2)):6.1f} GeV")


def bench_weighting(n_generated: int, seed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        train = ttbar.read_events(ttbar.load_or_generate(n_generated, seed + 100, "shower", 1, tmp, progress=False))
        test = ttbar.read_events(ttbar.load_or_generate(n_generated, seed, "shower", 1, tmp, progress=False))
    true = test["neutrino_momenta"]
    n = len(true)
    cfg = calibrate(train)
    print(f"[neutrino weighting, {n} selected shower events; detector settings calibrated on {len(train['met'])}"
          f" other events]  ({load()})")
    print(f"  calibrated: b-jet response {cfg.bjet_response:.3f}, met_sigma {cfg.met_sigma:.1f} GeV, "
          f"eta prior {cfg.eta_prior_sigma:.2f}, m_top {cfg.top_mass:.1f} +- {cfg.top_mass_sigma:.1f}, "
          f"m_W {cfg.w_mass:.1f} +- {cfg.w_mass_sigma:.1f}; eta grid {len(cfg.eta_grid)} points")
    for level, inputs, config in (("truth", truth_level_inputs(test), None),
                                  ("detector", detector_level_inputs(test), cfg)):
        res, wall, cpu = timed(lambda: weigh_solutions(**inputs, config=config))
        has = res.has_solution
        print(f" {level} level: {n / wall:6.0f} ev/s wall ({n / cpu:6.0f} ev/CPU-s), solution fraction {has.mean():.3f},"
              f" weight kept by the 32 heaviest {np.mean(res.kept_weight[has]):.3f}")
        print(_resolution("trivial (MET/2, pz=0)", fallback_solution(inputs["met"]), true))
        print(_resolution("NW highest weight", res.best, true))
        print(_resolution("NW weighted mean", res.mean, true))
        print(_resolution("NW mean, solved events", res.mean[has], true[has]))
        print(_resolution("trivial, solved events", fallback_solution(inputs["met"])[has], true[has]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply all event counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dask", action="store_true", help="only the process-pool vs Dask comparison")
    args = parser.parse_args()
    s = args.scale
    print(f"posteval.physics benchmark, {time.strftime('%Y-%m-%d %H:%M:%S')} UTC, {os.cpu_count()} CPUs")
    if args.dask:
        bench_dask(int(20000 * s), args.seed)
        return
    bench_generation(int(6000 * s), args.seed)
    bench_workers(int(20000 * s), args.seed)
    bench_weighting(int(10000 * s), args.seed)


if __name__ == "__main__":
    main()
