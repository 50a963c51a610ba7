"""Conditions x seeds of the proxy-rubric miniature, in one or more worker processes.

Command line (the full profile, about an hour on two CPU cores)::

    python -m posteval.rubric.sweep --params params/full/04_proxy_rubric.yaml \\
        --out results/full/04_proxy_rubric.json --workers 2

With ``--fidelity`` it runs no RL: each seed's setup is built and its verifiers' fidelity to an
edited rubric measured (:func:`fidelity_record`; claim (c) measured directly)::

    python -m posteval.rubric.sweep --fidelity --seeds $(seq 0 39) \\
        --out results/full/04_proxy_rubric_fidelity.json --workers 2

On a Dask cluster, add ``--scheduler tcp://HOST:PORT`` (or ``--dask-workers N`` for a local one);
the jobs (one per seed, then one per (seed, condition)) run through :mod:`posteval.parallel`.
Each worker uses one torch thread. Results do not depend on the number of workers: every setup and
every condition is seeded on its own.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

from ..runtime import atomic_write_text
from ..parallel import add_cluster_arguments, client_from_arguments, map_jobs
from .provenance import sweep_provenance, sweep_seconds
from .experiment import CONDITIONS, RubricConfig, Setup, build_setup, run_condition, setup_fidelity

#: Chapter parameters that are not part of the sweep (ignored by :func:`split_params`).
CHAPTER_ONLY = ("workers", "bridge_steps", "bridge_sft_epochs", "reuse_full_results", "full_results",
                "power_results", "mixed_results", "follow_results", "fidelity_results",
                "aggregation_results", "progress",
                "profile")


def split_params(params: dict) -> tuple[RubricConfig, list[int], list[str]]:
    """Config, seeds and conditions from a flat parameter mapping (a profile's yaml)."""
    if not isinstance(params, dict):
        raise ValueError(f"params must be a mapping, got {type(params).__name__}")
    names = {f.name for f in fields(RubricConfig)}
    rest = set(params) - names - {"seeds", "conditions"} - set(CHAPTER_ONLY)
    if rest:
        raise ValueError(f"params has unknown keys: {sorted(rest)}")
    config = RubricConfig.from_dict({k: v for k, v in params.items() if k in names})
    seeds = check_seeds(params.get("seeds", [0]))
    conditions = check_conditions(params.get("conditions", list(CONDITIONS)))
    return config, seeds, conditions


def check_seeds(seeds) -> list[int]:
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of non-negative ints, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct, got {seeds!r}")
    return [int(s) for s in seeds]


def check_conditions(conditions) -> list[str]:
    conditions = list(conditions)
    bad = [c for c in conditions if c not in CONDITIONS]
    if not conditions or bad:
        raise ValueError(f"conditions must be a non-empty list of {sorted(CONDITIONS)}, got unknown {bad!r}")
    return conditions


def _setup_task(job: tuple[RubricConfig, int]) -> Setup:
    torch.set_num_threads(1)
    return build_setup(*job)


def _fidelity_task(job: tuple[RubricConfig, int]) -> dict:
    torch.set_num_threads(1)
    setup = build_setup(*job)
    return {"fidelity": setup_fidelity(setup).to_dict(orient="records"), "cold_start": setup.cold_start,
            "seconds": setup.seconds}


def _condition_task(job: tuple[Setup, str]) -> dict:
    torch.set_num_threads(1)
    res = run_condition(*job)
    res.pop("policy")
    return res


@dataclass
class SweepResult:
    """Outputs of :func:`run_sweep`."""

    config: RubricConfig
    seeds: list
    conditions: list
    final: pd.DataFrame  # one row per (seed, condition): test metrics at the last step
    history: pd.DataFrame  # one row per (seed, condition, step)
    sensitivity: pd.DataFrame  # one row per (seed, judge)
    cold_start: pd.DataFrame  # one row per seed
    seconds: dict
    setups: dict | None = None  # seed -> Setup (not serialised)

    def summary(self) -> dict:
        """JSON-ready summary: mean, sample std and per-seed values of every final metric."""
        metrics = [c for c in self.final.columns if c not in ("seed", "condition")]
        final = {m: {cond: _stats(g.sort_values("seed")[m]) for cond, g in self.final.groupby("condition", sort=False)}
                 for m in metrics}
        sens_cols = ["oracle", "random", "generic", "empty", "sensitivity", "sensitivity_random"]
        sens = {col: {j: _stats(g.sort_values("seed")[col]) for j, g in self.sensitivity.groupby("judge", sort=False)}
                for col in sens_cols}
        cold = {m: _stats(self.cold_start.sort_values("seed")[m])
                for m in self.cold_start.columns if m != "seed"}
        hist = self.history.replace({np.nan: None}).to_dict(orient="records")
        return {"config": self.config.to_dict(), "seeds": self.seeds, "conditions": self.conditions,
                "final": final, "sensitivity": sens, "cold_start": cold, "history": hist,
                "seconds": self.seconds}


def _stats(values: pd.Series) -> dict:
    v = np.asarray(values, dtype=float)
    return {"mean": float(np.nanmean(v)) if np.isfinite(v).any() else None,
            "std": float(np.nanstd(v, ddof=1)) if np.isfinite(v).sum() > 1 else None,
            "values": [None if not np.isfinite(x) else float(x) for x in v]}


def _where(workers, client, progress) -> dict:
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    return {"workers": int(workers), "client": client, "progress": progress}


def build_setups(config: RubricConfig, seeds, *, workers: int = 1, client=None, progress: bool = True) -> dict:
    """``{seed: Setup}``: the world, data, cold start, proxies and judges of every seed (first part of
    :func:`run_sweep`; the same ``workers`` / ``client`` arguments)."""
    if not isinstance(config, RubricConfig):
        raise ValueError(f"config must be a RubricConfig, got {type(config).__name__}")
    seeds = check_seeds(seeds)
    where = _where(workers, client, progress)
    return dict(zip(seeds, map_jobs(_setup_task, [(config, s) for s in seeds], desc="setups", **where)))


def run_conditions(setups: dict, conditions, *, workers: int = 1, client=None, progress: bool = True) -> dict:
    """``{(seed, condition): result}``: every condition on every setup (second part of :func:`run_sweep`).

    Results of several calls (e.g. one per group of conditions) join with ``{**first, **second}``."""
    conditions = check_conditions(conditions)
    return run_pairs(setups, [(s, c) for s in setups for c in conditions], workers=workers, client=client,
                     progress=progress)


def run_pairs(setups: dict, pairs, *, workers: int = 1, client=None, progress: bool = True) -> dict:
    """``{(seed, condition): result}`` of the given ``(seed, condition)`` pairs only, e.g. a sweep's
    seeds x conditions in groups of ``2 * workers`` (two full rounds of the workers each). A pair's
    result depends on its setup and condition only, not on the other pairs of the call.

    >>> run_pairs({0: setup}, [(0, "no_proxy")])  # doctest: +SKIP
    """
    pairs = [tuple(p) for p in pairs]
    if not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError(f"pairs must be a non-empty list of (seed, condition), got {pairs!r}")
    missing = sorted({s for s, _ in pairs if s not in setups}, key=str)
    if missing:
        raise ValueError(f"pairs name seeds without a setup: {missing} (setups: {list(setups)})")
    check_conditions([c for _, c in pairs])
    if len(set(pairs)) != len(pairs):
        raise ValueError(f"pairs must be distinct, got {pairs!r}")
    results = map_jobs(_condition_task, [(setups[s], c) for s, c in pairs], desc="conditions",
                       **_where(workers, client, progress))
    return dict(zip(pairs, results))


def sweep_result(config: RubricConfig, setups: dict, runs: dict, seconds: float) -> SweepResult:
    """The :class:`SweepResult` of ``runs`` (from :func:`run_conditions`) on ``setups``; ``seconds``: wall time."""
    seeds = list(setups)
    conditions = list(dict.fromkeys(c for _, c in runs))
    missing = [(s, c) for s in seeds for c in conditions if (s, c) not in runs]
    if missing:
        raise ValueError(f"runs: missing (seed, condition) {missing}")
    finals, hists = [], []
    for s in seeds:
        for c in conditions:
            r = runs[(s, c)]
            finals.append({"seed": s, "condition": c, **r["final"], "seconds": r["seconds"], "steps": r["steps"],
                           "n_rl": r["n_rl"]})
            h = r["history"].copy()
            h.insert(0, "condition", c)
            h.insert(0, "seed", s)
            hists.append(h)
    sens = pd.concat([setups[s].sensitivity for s in seeds], ignore_index=True)
    cold = pd.DataFrame([{"seed": s, **setups[s].cold_start} for s in seeds])
    secs = {"total": float(seconds), "setup": {str(s): setups[s].seconds for s in seeds}}
    return SweepResult(config=config, seeds=seeds, conditions=conditions, final=pd.DataFrame(finals),
                       history=pd.concat(hists, ignore_index=True), sensitivity=sens, cold_start=cold,
                       seconds=secs, setups=setups)


def run_sweep(config: RubricConfig, conditions, seeds, *, workers: int = 1, client=None,
              progress: bool = True) -> SweepResult:
    """Build one setup per seed, then run every condition on it.

    Parameters
    ----------
    workers : number of processes; 1 runs in this process (and sets torch to one thread).
    client : a ``dask.distributed.Client``: run the jobs on its cluster instead (``workers`` ignored).
    """
    conditions = check_conditions(conditions)
    t0 = time.perf_counter()
    setups = build_setups(config, seeds, workers=workers, client=client, progress=progress)
    runs = run_conditions(setups, conditions, workers=workers, client=client, progress=progress)
    return sweep_result(config, setups, runs, time.perf_counter() - t0)


def fidelity_record(config: RubricConfig, seeds, *, workers: int = 1, client=None, progress: bool = True) -> dict:
    """The verifiers' fidelity to an edited rubric on every seed's setup, without RL (JSON-ready).

    Each seed's setup is built as :func:`build_setups` builds it (the same world, proxies and held-out
    pairs as a sweep of that seed) and read by :func:`~posteval.rubric.experiment.setup_fidelity`.
    Returns ``{"kind": "verifier_fidelity", "config", "seeds", "fidelity": [one row per seed and
    verifier], "cold_start": {metric: stats over seeds}, "seconds"}``; the cold start's metrics let a
    reader check that the setups are a sweep's (:func:`posteval.rubric.report.fidelity_frame`).
    """
    if not isinstance(config, RubricConfig):
        raise ValueError(f"config must be a RubricConfig, got {type(config).__name__}")
    seeds = check_seeds(seeds)
    t0 = time.perf_counter()
    parts = map_jobs(_fidelity_task, [(config, s) for s in seeds], desc="verifier fidelity (setups)",
                     **_where(workers, client, progress))
    cold = pd.DataFrame([{"seed": s, **p["cold_start"]} for s, p in zip(seeds, parts)])
    return {"kind": "verifier_fidelity", "config": config.to_dict(), "seeds": seeds,
            "fidelity": [row for p in parts for row in p["fidelity"]],
            "cold_start": {m: _stats(cold[m]) for m in cold.columns if m != "seed"},
            "seconds": {"total": time.perf_counter() - t0,
                        "setup": {str(s): p["seconds"] for s, p in zip(seeds, parts)}}}


def write_json(obj: dict, path) -> Path:
    """Write JSON atomically (temp file in the same folder, then a rename)."""
    path = Path(path)
    atomic_write_text(path, json.dumps(obj, indent=1, sort_keys=False))
    return path


def thin_history(summary: dict) -> dict:
    """The summary with only the evaluated steps kept in ``history`` (a smaller file, same test metrics)."""
    out = dict(summary)
    out["history"] = [r for r in summary["history"] if r.get("test_verdict_acc") is not None]
    return out


def merge_summaries(base: dict, extra: dict) -> dict:
    """Add the conditions of ``extra`` to ``base`` (same config and seeds; shared judges must agree).

    Conditions present in both are taken from ``extra``.
    """
    for key in ("config", "seeds"):
        if base.get(key) != extra.get(key):
            raise ValueError(f"extra: its {key} differs from the base summary's; cannot merge")
    sb, se = base["sensitivity"]["sensitivity"], extra["sensitivity"]["sensitivity"]
    for judge in set(sb) & set(se):
        if not np.allclose(sb[judge]["values"], se[judge]["values"]):
            raise ValueError(f"extra: judge {judge!r} differs from the base summary's (setups not reproduced)")
    new = list(extra["conditions"])
    out = dict(base)
    out["conditions"] = [c for c in base["conditions"] if c not in new] + new
    out["final"] = {m: {**{c: v for c, v in base["final"].get(m, {}).items() if c not in new},
                        **extra["final"].get(m, {})} for m in set(base["final"]) | set(extra["final"])}
    sens = {col: {**base["sensitivity"][col], **extra["sensitivity"].get(col, {})} for col in base["sensitivity"]}
    out["sensitivity"] = sens
    out["history"] = [r for r in base["history"] if r["condition"] not in new] + list(extra["history"])
    out["seconds"] = {"base": base.get("seconds"), "extra": extra.get("seconds")}
    out["provenance"] = {"base": base.get("provenance"), "extra": extra.get("provenance")}
    return out


def combine_seeds(summaries, conditions=None) -> dict:
    """One summary over the seeds of several (same config, disjoint seeds), restricted to ``conditions``.

    Each part is a summary written by :func:`main` (or a record of many seeds); per-seed values are
    concatenated in seed order and their mean and std recomputed. A seed present in two parts, a part
    whose config differs from the first's, or a condition missing from a part is an error. The parts'
    ``provenance`` is kept as a list (one entry per part, in the order given), ``seconds`` as the total
    and the parts' own.
    """
    parts = list(summaries)
    if not parts:
        raise ValueError("summaries must be a non-empty list of sweep summaries")
    config = parts[0]["config"]
    conditions = list(conditions) if conditions is not None else list(parts[0]["conditions"])
    seeds = []
    for i, part in enumerate(parts):
        if part["config"] != config:
            raise ValueError(f"summaries[{i}]: its config differs from the first summary's")
        missing = [c for c in conditions if c not in part["conditions"]]
        if missing:
            raise ValueError(f"summaries[{i}]: conditions {missing} were not run")
        seeds += list(part["seeds"])
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"summaries share seeds: {sorted(s for s in set(seeds) if seeds.count(s) > 1)}")
    order = np.argsort(seeds, kind="stable")

    def stacked(get) -> dict:
        values = []
        for part in parts:
            values += list(get(part)["values"])
        return _stats(pd.Series([np.nan if values[i] is None else values[i] for i in order], dtype=float))

    metrics = sorted(set.intersection(*(set(p["final"]) for p in parts)))
    final = {m: {c: stacked(lambda p, m=m, c=c: p["final"][m][c]) for c in conditions} for m in metrics}
    sens = {col: {j: stacked(lambda p, col=col, j=j: p["sensitivity"][col][j])
                  for j in set.intersection(*(set(p["sensitivity"][col]) for p in parts))}
            for col in parts[0]["sensitivity"]}
    cold = {m: stacked(lambda p, m=m: p["cold_start"][m])
            for m in set.intersection(*(set(p["cold_start"]) for p in parts))}
    history = [r for p in parts for r in p["history"] if r["condition"] in conditions]
    return {"config": config, "seeds": [seeds[i] for i in order], "conditions": conditions, "final": final,
            "sensitivity": sens, "cold_start": cold, "history": history,
            "seconds": {"total": sum(sweep_seconds(p["seconds"]) for p in parts),
                        "parts": [p["seconds"] for p in parts]}, "params_file": parts[0].get("params_file"),
            "provenance": [p.get("provenance") for p in parts]}


def load_summary(path) -> dict | None:
    """The summary written by :func:`main`, or None when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return None
    with open(path) as fh:
        return json.load(fh)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", default="params/full/04_proxy_rubric.yaml", help="profile yaml")
    p.add_argument("--out", default="results/full/04_proxy_rubric.json", help="output JSON")
    p.add_argument("--workers", type=int, default=2, help="local processes (without a Dask option)")
    add_cluster_arguments(p)
    p.add_argument("--conditions", nargs="+", help="run only these conditions (default: the params file's)")
    p.add_argument("--seeds", nargs="+", type=int, help="run only these seeds (default: the params file's)")
    p.add_argument("--merge", help="add the results to this existing summary JSON (written to --out)")
    p.add_argument("--combine", nargs="+", metavar="SUMMARY",
                   help="run nothing: write to --out the seeds of these summaries combined (--conditions: only those)")
    p.add_argument("--fidelity", action="store_true",
                   help="run no RL: write the verifiers' fidelity of every seed's setup (fidelity_record)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.fidelity and (args.merge or args.combine or args.conditions):
        raise ValueError("--fidelity runs no condition: it takes no --merge, --combine or --conditions")
    if args.combine:
        parts = [load_summary(f) for f in args.combine]
        if any(part is None for part in parts):
            raise ValueError(f"--combine: missing {[f for f, part in zip(args.combine, parts) if part is None]}")
        summary = combine_seeds(parts, check_conditions(args.conditions) if args.conditions else None)
        write_json(summary, args.out)
        print(f"wrote {args.out} ({len(summary['seeds'])} seeds x {len(summary['conditions'])} conditions)")
        return summary
    with open(args.params) as fh:
        params = yaml.safe_load(fh) or {}
    config, seeds, conditions = split_params(params)
    if args.conditions:
        conditions = check_conditions(args.conditions)
    if args.seeds:
        seeds = check_seeds(args.seeds)
    base = None
    if args.merge:
        base = load_summary(args.merge)
        if base is None:
            raise ValueError(f"--merge: {args.merge} does not exist")
    command = "python -m posteval.rubric.sweep " + " ".join(argv or sys.argv[1:])
    if args.fidelity:
        with client_from_arguments(args) as client:
            out = fidelity_record(config, seeds, workers=args.workers, client=client, progress=not args.no_progress)
        out["params_file"] = str(args.params)
        out["provenance"] = sweep_provenance(workers=args.workers, wall_seconds=out["seconds"]["total"],
                                             command=command)
        write_json(out, args.out)
        print(f"wrote {args.out} (verifier fidelity, {len(seeds)} seeds, {out['seconds']['total']:.0f} s)")
        return out
    with client_from_arguments(args) as client:
        res = run_sweep(config, conditions, seeds, workers=args.workers, client=client,
                        progress=not args.no_progress)
    summary = res.summary()
    summary["params_file"] = str(args.params)
    summary["provenance"] = sweep_provenance(workers=args.workers, wall_seconds=res.seconds["total"],
                                             command=command)
    if base is not None:
        summary = merge_summaries(base, summary)
    write_json(thin_history(summary), args.out)
    print(f"wrote {args.out} ({len(seeds)} seeds x {len(conditions)} conditions, {res.seconds['total']:.0f} s)")
    return summary


if __name__ == "__main__":
    main()
