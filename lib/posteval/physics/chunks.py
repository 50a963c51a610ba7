"""The unit of work: one chunk of generated events, a pure function of (seed, chunk index, config).

:func:`run_chunk` has no side effects and no state shared between calls, so the list of
:class:`ChunkJob` from :func:`plan_chunks` can be mapped by any executor unchanged;
:func:`posteval.physics.ttbar.load_or_generate` maps it through :mod:`posteval.parallel` (local processes
or a Dask cluster).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import GenerationConfig
from .detector import simulate_detector
from .generator import SEED_MAX, generate_batches
from .truth import extract_truth

TRUTH_KEYS = ("top_p4", "w_p4", "b_p4", "lep_born_p4", "lep_final_p4", "nu_p4",
              "lep_born_pdgid", "lep_final_pdgid", "nu_pdgid")
RECO_KEYS = ("lep_p4", "lep_flavour", "jet_p4", "jet_mask", "jet_btag", "jet_flavour",
             "jet_truth_index", "n_jets", "n_bjets", "met")


@dataclass(frozen=True)
class ChunkJob:
    """Chunk ``index`` of a run with master ``seed``: ``n_events`` generated events."""

    seed: int
    index: int
    n_events: int
    config: GenerationConfig


def chunk_seeds(seed: int, index: int) -> tuple[int, np.random.SeedSequence]:
    """Pythia seed (1..900,000,000) and numpy seed sequence of chunk ``index`` of run ``seed``."""
    if int(seed) < 0 or int(index) < 0:
        raise ValueError(f"seed and chunk index must be non-negative, got {seed}, {index}")
    pythia_seed = int(np.random.SeedSequence([int(seed), int(index), 0]).generate_state(1)[0]) % SEED_MAX + 1
    return pythia_seed, np.random.SeedSequence([int(seed), int(index), 1])


def plan_chunks(n_events: int, seed: int, config: GenerationConfig) -> list[ChunkJob]:
    """Split ``n_events`` into chunks of ``config.chunk_events`` (the last one smaller)."""
    if int(n_events) < 1:
        raise ValueError(f"n_events must be a positive integer, got {n_events}")
    size = int(config.chunk_events)
    n_chunks = -(-int(n_events) // size)
    return [ChunkJob(int(seed), i, min(size, int(n_events) - i * size), config) for i in range(n_chunks)]


def run_chunk(job: ChunkJob) -> dict[str, np.ndarray]:
    """Generate, extract truth, simulate the detector and keep the selected events of ``job``.

    Returns
    -------
    dict
        The arrays of :data:`TRUTH_KEYS` and :data:`RECO_KEYS` for the selected events, plus
        ``n_generated`` and ``n_truth_failed`` (0-d int64: events generated, and events without
        exactly one of each truth object, which are never selected).
    """
    pythia_seed, seq = chunk_seeds(job.seed, job.index)
    rng = np.random.default_rng(seq)
    parts: dict[str, list] = {k: [] for k in TRUTH_KEYS + RECO_KEYS}
    failed = 0
    for rec in generate_batches(job.config, pythia_seed, job.n_events):
        truth = extract_truth(rec)
        reco = simulate_detector(rec, truth, job.config.detector, rng)
        sel = reco["selected"]
        failed += int((~truth["ok"]).sum())
        for k in TRUTH_KEYS:
            parts[k].append(truth[k][sel])
        for k in RECO_KEYS:
            parts[k].append(reco[k][sel])
    out = {k: np.concatenate(v) for k, v in parts.items()}
    out["n_generated"] = np.int64(job.n_events)
    out["n_truth_failed"] = np.int64(failed)
    return out
