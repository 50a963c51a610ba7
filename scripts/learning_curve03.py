"""Issue 63: does the paper's flow become physical with data? Chapter 3's Cartesian flow (nu2flows'
coordinates) and its flow matching (CFM), trained on nested subsets of ever more training events, each
scored on one fixed set of test events by the chapter's physics checks (W windows, top window, MET closure,
transverse-mass excess: `posteval.physics.consistency.consistency_scores`) and the CRPS of the six neutrino
components; and a known-answer flow: the same flow whose event token also carries the true neutrinos (its
posterior is a point at the truth, so a flow that can learn an on-shell conditional puts its draws in the
W window as often as the truth is there).

Not a chapter cell: a kept record with provenance (`results/full/03_learning_curve.json`), made in the
background on the CPU (hours at the largest size) or on a GPU (`--device cuda`). The models, encoder, heads
and training settings are the ci profile's (`params/ci/03_top_quark.yaml`); the epoch cap is raised
(`--epochs`) so that every model stops on its validation loss, and each row says how it stopped. Each size's
models are kept in `--parts` as they finish (written atomically), so an interrupted run resumes there.

Usage (repository root; the Makefile's kernel settings, `make` exports them):
    .venv/bin/python scripts/learning_curve03.py --parts /work/lc03      # 1,800,000 events, 7,000 to 500,000
    .venv/bin/python scripts/learning_curve03.py --n-generated 4000 --sizes 300 600 --epochs 1 \\
        --test-events 200 --val-events 200 --m 8 --out /tmp/lc.json      # a smoke run, a minute
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import numpy as np
import torch

from posteval import metrics
from posteval.book import load_parameters, seed_everything
from posteval.data.ttbar_features import (Standardizer, arrays_from_events, matched_observables, split_indices,
                                          subset_events, to_tensors)
from posteval.metrics.intervals import event_interval
from posteval.models import TrainingSettings, draw_samples
from posteval.models.event_models import build_event_model
from posteval.models.training import train_models
from posteval.physics.consistency import CONSISTENCY_METRICS, consistency_scores
from posteval.physics.kinematics import truth_matched_bjets
from posteval.physics.ttbar import load_or_generate, read_events

KINDS = ("flow", "cfm")
KNOWN = "flow_known_answer"
TRANSFORM = {"w_window.nu": "logit", "w_window.nubar": "logit", "top_window": "logit", "met_closure": "log",
             "mt_excess": "logit", "crps": "identity"}


def arguments(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-generated", type=int, default=1_800_000,
                   help="generated events (mode shower; about 29 %% are selected)")
    p.add_argument("--sizes", type=int, nargs="+", default=[7_000, 30_000, 120_000, 500_000],
                   help="training events of each point (nested subsets; 7,000 is about the ci training split)")
    p.add_argument("--test-events", type=int, default=2_400, help="test events (the ci test split's size)")
    p.add_argument("--val-events", type=int, default=10_000, help="validation events (early stopping)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=400, help="the epoch cap (a safety net: models stop on patience)")
    p.add_argument("--m", type=int, default=64, help="draws per test event (the ci profile's m_samples)")
    p.add_argument("--workers", type=int, default=2, help="training processes side by side")
    p.add_argument("--device", default="cpu")
    p.add_argument("--parts", default="/tmp/learning03", help="where finished sizes are kept (resume)")
    p.add_argument("--out", default="results/full/03_learning_curve.json")
    a = p.parse_args(argv)
    if min(a.sizes) < 1 or a.test_events < 1 or a.val_events < 1 or a.m < 2 or a.epochs < 1:
        p.error("sizes, --test-events, --val-events and --epochs must be positive and --m at least 2")
    if sorted(set(a.sizes)) != a.sizes:
        p.error(f"--sizes must increase: {a.sizes}")
    return a


def data(a, P) -> dict:
    """The events, split once: the test and validation splits of fixed size, the rest for training."""
    path = load_or_generate(a.n_generated, seed=a.seed, mode=P["generation_mode"], n_workers=a.workers,
                            progress=True)
    events = read_events(path)
    arrays = arrays_from_events(events, max_jets=P["max_jets"])
    n = len(arrays)
    spare = n - a.test_events - a.val_events
    if spare < max(a.sizes):
        raise SystemExit(f"{n} selected events leave {spare} for training, fewer than the largest size "
                         f"{max(a.sizes)}: raise --n-generated")
    split = split_indices(n, {"train": spare / n, "val": a.val_events / n, "test": a.test_events / n}, seed=a.seed)
    parts = {k: arrays.subset(idx) for k, idx in split.items()}
    scaler = Standardizer.fit(parts["train"])  # once, on the whole training split: every size the same scale
    tensors = {k: to_tensors(scaler.transform(v)) for k, v in parts.items()}
    test = subset_events(events, split["test"])
    bjets, _ = truth_matched_bjets(test["jet_p4"], test["jet_truth_index"])
    _, matched = matched_observables(test, test["neutrino_momenta"])
    return {"n_selected": n, "parts": parts, "tensors": tensors, "scaler": scaler, "test": test, "bjets": bjets,
            "matched": matched, "truth": parts["test"].targets.astype(np.float64)}


def known_answer(t: tuple) -> tuple:
    """The event tensors with the standardised true neutrinos appended to the global token."""
    g, *rest, y = t
    return (torch.cat([g, y], dim=-1), *rest, y)


def scores(D: dict, nu: np.ndarray) -> dict[str, np.ndarray]:
    """Per test event: the physics checks' scores and the CRPS over the six components of draws (n, m, 6)."""
    n = len(D["truth"])
    out = consistency_scores(D["test"]["lep_p4"], D["bjets"], nu.reshape(n, -1, 2, 3), D["test"]["met"],
                             matched=D["matched"])
    out["crps"] = np.mean([metrics.crps_ensemble(nu[..., j], D["truth"][:, j]) for j in range(6)], axis=0)
    return out


def summary(per_event: dict[str, np.ndarray]) -> dict[str, list[float]]:
    """Each metric's mean over the test events with its 95 % event interval: [estimate, lo, hi]."""
    out = {}
    for k, how in TRANSFORM.items():
        x = np.asarray(per_event[k], dtype=float)  # the top window's over the events with both b-jets matched
        iv = event_interval(x, transform=how if how != "logit" or 0 < x.mean() < 1 else "identity")
        out[k] = [float(iv.estimate), float(iv.lo), float(iv.hi)]
    return out


def one_size(a, P, D, size: int, rows: np.ndarray, with_known: bool) -> dict:
    """Train the Cartesian flow and the CFM (and, with ``with_known``, the known-answer flow) on ``rows``,
    side by side, and score their draws."""
    dims = tuple(t.shape[-1] for t in D["tensors"]["train"][:3])
    settings = TrainingSettings(**{**P["training"], "epochs": a.epochs}, lr_schedule=None)
    jobs = [(partial(build_event_model, kind, dims, P["encoder"], P["heads"][kind]), a.seed + i)
            for i, kind in enumerate(KINDS)]
    names = list(KINDS)
    out = {}
    t0 = time.perf_counter()
    trained = train_models(jobs, D["tensors"]["train"], D["tensors"]["val"], settings, train_rows=[rows] * len(jobs),
                           threads=1, workers=a.workers, device=a.device, progress=False)
    if with_known:
        k_dims = (dims[0] + 6, *dims[1:])
        k_job = [(partial(build_event_model, "flow", k_dims, P["encoder"], P["heads"]["flow"]), a.seed)]
        trained += train_models(k_job, known_answer(D["tensors"]["train"]), known_answer(D["tensors"]["val"]),
                                settings, train_rows=[rows], threads=1, workers=1, device=a.device, progress=False)
        names.append(KNOWN)
    seconds = time.perf_counter() - t0
    for name, (model, history) in zip(names, trained):
        context = D["tensors"]["test"][:4] if name != KNOWN else known_answer(D["tensors"]["test"])[:4]
        raw = draw_samples(model, context, a.m, batch_size=P["sample_batch"], seed=a.seed, device=a.device)
        out[name] = {**summary(scores(D, D["scaler"].targets_to_physical(raw))),
                     "epochs": history.epochs, "best_epoch": history.best_epoch, "stop_reason": history.stop_reason,
                     "train_seconds": round(history.seconds, 1)}
    out["wall_seconds"] = round(seconds, 1)
    return out


def provenance(a, D) -> dict:
    git = lambda *c: subprocess.run(["git", *c], capture_output=True, text=True).stdout.strip()
    return {"what": "chapter 3's Cartesian flow and CFM (ci architecture and training settings) against the number "
                    "of training events (nested subsets), scored on one set of test events; the known-answer flow "
                    "also reads the true neutrinos",
            "commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
            "kernels": {k: os.environ.get(k, "") for k in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA",
                                                          "NPY_DISABLE_CPU_FEATURES")},
            "n_generated": a.n_generated, "n_selected": D["n_selected"], "n_train_split": len(D["parts"]["train"]),
            "n_val": a.val_events, "n_test": a.test_events, "m_samples": a.m, "seed": a.seed, "epoch_cap": a.epochs,
            "device": a.device, "checks": list(CONSISTENCY_METRICS)}


def write_atomically(path: Path, text: str | bytes) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_bytes(text if isinstance(text, bytes) else text.encode())
    tmp.replace(path)


def main(argv=None) -> None:
    a = arguments(argv)
    P = load_parameters("03_top_quark", "ci")
    seed_everything(a.seed, threads=1)
    D = data(a, P)
    order = np.random.default_rng([a.seed, len(D["parts"]["train"])]).permutation(len(D["parts"]["train"]))
    parts_dir = Path(a.parts)
    parts_dir.mkdir(parents=True, exist_ok=True)
    record = {"meta": provenance(a, D), "truth": summary(scores(D, D["truth"][:, None, :].repeat(2, axis=1)))}
    for size in a.sizes:
        part = parts_dir / f"size{size}_seed{a.seed}_n{a.n_generated}.pkl"
        if part.exists():
            result = pickle.loads(part.read_bytes())
        else:
            result = one_size(a, P, D, size, order[:size], with_known=size == a.sizes[0])
            write_atomically(part, pickle.dumps(result))
        record[str(size)] = result
        print(size, {k: (v["w_window.nu"][0], v["crps"][0], v["stop_reason"]) for k, v in result.items()
                     if isinstance(v, dict)}, flush=True)
        write_atomically(Path(a.out), json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
