"""Dileptonic ttbar samples: generate (cached, parallel, resumable) and read.

``load_or_generate`` returns the path of an HDF5 event file (layout in
:mod:`lib.physics.event_file`); ``read_events`` turns it into numpy arrays.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
from lib.progress import tqdm

from .chunks import ChunkJob, plan_chunks, run_chunk
from .config import MODES, GenerationConfig, default_batch_events, default_chunk_events
from .event_file import (FORMAT, FORMAT_VERSION, concatenate_atomic, read_attrs, schema_arrays,
                         stored_hash_matches, write_atomic)
from .event_reader import read_event_file
from .generator import PYTHIA_VERSION

REPO_ROOT = Path(__file__).resolve().parents[2]


def default_cache_dir() -> Path:
    """``$POINTWISE_CACHE`` if set, else ``<repo root>/data_cache``."""
    env = os.environ.get("POINTWISE_CACHE")
    return Path(env) if env else REPO_ROOT / "data_cache"


def make_config(mode: str = "shower", **overrides) -> GenerationConfig:
    """:class:`GenerationConfig` for ``mode`` with chunk and batch sizes suited to it."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    kwargs = {"chunk_events": default_chunk_events(mode), "batch_events": default_batch_events(mode)}
    kwargs.update(overrides)
    return GenerationConfig(mode=mode, **kwargs)


def _file_attrs(job: ChunkJob | None, seed: int, n_requested: int, config: GenerationConfig,
                n_generated: int, n_failed: int) -> dict:
    attrs = {"format": FORMAT, "format_version": FORMAT_VERSION, "config": config.to_json(),
             "seed": int(seed), "n_events_requested": int(n_requested), "n_generated": int(n_generated),
             "n_truth_failed": int(n_failed), "pythia_version": PYTHIA_VERSION}
    if job is not None:
        attrs["chunk_index"] = int(job.index)
    return attrs


def _is_valid(path: Path, expected: dict) -> bool:
    """True if ``path`` exists, has the ``expected`` attributes and an intact content hash."""
    if not path.exists():
        return False
    try:
        attrs = read_attrs(path)
    except ValueError:
        return False
    if any(attrs.get(k) != v for k, v in expected.items()):
        return False
    return stored_hash_matches(path)


def _chunk_path(chunk_dir: Path, job: ChunkJob) -> Path:
    return chunk_dir / f"chunk_{job.index:05d}_n{job.n_events}.h5"


def generate_chunk_file(job: ChunkJob, chunk_dir: str | os.PathLike) -> tuple[int, int]:
    """Run ``job`` and write its event file atomically; returns (index, events generated)."""
    events = run_chunk(job)
    attrs = _file_attrs(job, job.seed, job.n_events, job.config, int(events["n_generated"]),
                        int(events["n_truth_failed"]))
    write_atomic(_chunk_path(Path(chunk_dir), job), schema_arrays(events), attrs)
    return job.index, job.n_events


def _chunk_expected(job: ChunkJob) -> dict:
    return {"format": FORMAT, "config": job.config.to_json(), "seed": job.seed,
            "chunk_index": job.index, "n_generated": job.n_events}


def load_or_generate(n_events: int, seed: int = 0, mode: str = "shower", n_workers: int = 1,
                     cache_dir: str | os.PathLike | None = None, *,
                     config: GenerationConfig | None = None, progress: bool = True) -> Path:
    """Path of an HDF5 file with the selected events of ``n_events`` generated ttbar events.

    A cached file with the same ``n_events``, ``seed`` and config (and an intact content hash)
    is reused. Otherwise the run is split into chunks (:func:`lib.physics.chunks.plan_chunks`)
    that ``n_workers`` processes generate, each chunk written atomically to
    ``<cache>/<name>.chunks/``; chunks left by an interrupted run are reused; finally the chunks
    are concatenated atomically into ``<cache>/<name>.h5`` and deleted. The events depend on
    ``seed`` and the config only, not on ``n_workers``.

    Parameters
    ----------
    n_events : int
        Events to generate (the file keeps those passing the selection; its attribute
        ``n_generated`` records this number).
    seed : int
        Master seed (>= 0); chunk seeds derive from it.
    mode : {"shower", "full", "parton"}
        Generator mode, see :class:`lib.physics.config.GenerationConfig`.
    n_workers : int
        Processes, one Pythia each.
    cache_dir : path, optional
        Folder of the cache; default ``$POINTWISE_CACHE`` or ``<repo root>/data_cache``.
    config : GenerationConfig, optional
        Full configuration; its ``mode`` must equal ``mode``. Default :func:`make_config`.
    progress : bool
        Show a tqdm bar over generated events.
    """
    if isinstance(n_events, bool) or not isinstance(n_events, (int, np.integer)) or n_events < 1:
        raise ValueError(f"n_events must be a positive integer, got {n_events!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)) or n_workers < 1:
        raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}")
    config = make_config(mode) if config is None else config
    if config.mode != mode:
        raise ValueError(f"config.mode {config.mode!r} differs from mode {mode!r}")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    name = f"ttbar_{mode}_n{int(n_events)}_s{int(seed)}_{config.digest()}"
    final = cache / f"{name}.h5"
    expected = {"format": FORMAT, "config": config.to_json(), "seed": int(seed),
                "n_events_requested": int(n_events), "n_generated": int(n_events)}
    if _is_valid(final, expected):
        return final

    chunk_dir = cache / f"{name}.chunks"
    chunk_dir.mkdir(exist_ok=True)
    jobs = plan_chunks(int(n_events), int(seed), config)
    todo = [j for j in jobs if not _is_valid(_chunk_path(chunk_dir, j), _chunk_expected(j))]
    bar = tqdm(total=int(n_events), unit="ev", desc=f"ttbar {mode}", disable=not progress)
    bar.update(int(n_events) - sum(j.n_events for j in todo))
    if n_workers == 1 or len(todo) <= 1:
        for job in todo:
            bar.update(generate_chunk_file(job, chunk_dir)[1])
    else:
        # Fresh interpreters (spawn): no fork of a parent that may hold torch or BLAS threads.
        # A worker that cannot start raises BrokenProcessPool instead of hanging.
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(int(n_workers), len(todo)), mp_context=ctx) as pool:
            futures = [pool.submit(generate_chunk_file, job, chunk_dir) for job in todo]
            try:
                for future in as_completed(futures):
                    bar.update(future.result()[1])
            except BrokenProcessPool as err:
                raise RuntimeError("a generation worker died; with n_workers > 1 the main module must be "
                                   "importable (a script, a notebook), not stdin; finished chunks are kept, "
                                   "so a rerun resumes") from err
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    bar.close()

    parts = [_chunk_path(chunk_dir, j) for j in jobs]
    failed = sum(int(read_attrs(p)["n_truth_failed"]) for p in parts)
    concatenate_atomic(final, parts, _file_attrs(None, seed, n_events, config, n_events, failed))
    for p in parts:
        p.unlink()
    try:
        chunk_dir.rmdir()
    except OSError:
        pass
    return final


def read_events(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Events of an event file (ours or a published nu2flows ``delphes`` file) as numpy arrays.

    Pairs are ordered (l+, l-), (nu, nubar), (t, tbar), (W+, W-), (b, bbar): index 0 is
    always the W+ / top side, so lepton 0 pairs with neutrino 0. Momenta in GeV; four-vectors
    are (px, py, pz, E). J = the file's jet slots (10 in ours).

    Detector level (all files):

    * ``lep_pt, lep_eta, lep_phi, lep_energy, lep_charge`` (n, 2) float32; ``lep_flavour``
      (n, 2) float32, 0 = e, 1 = mu; ``lep_p4`` (n, 2, 4) float32.
    * ``jet_pt, jet_eta, jet_phi, jet_energy, jet_btag`` (n, J) float32, zero-padded, leading
      pT first; ``jet_mask`` (n, J) bool (True = real jet); ``jet_p4`` (n, J, 4) float32.
    * ``n_jets``, ``n_bjets`` (n,) int64; ``met`` (n, 2) float32 (x, y).
    * ``jet_truth_index`` (n, J) int64: 0 = jet matched to the b, 1 = to the bbar, -1 other
      (all -1 if the file lacks ``jets_indices``).

    Truth:

    * ``neutrino_momenta`` (n, 2, 3) float64 (px, py, pz of nu then nubar); ``nu_p4``
      (n, 2, 4) float64 (all files).
    * Our files only: ``top_p4``, ``w_p4``, ``b_p4`` (b quark from the top decay),
      ``lep_truth_p4`` (W leptons after QED radiation, undressed), ``lep_born_p4`` (before QED
      radiation; a tau when W -> tau nu) (n, 2, 4) float64; ``lep_truth_pdgid``,
      ``lep_born_pdgid``, ``nu_pdgid`` (n, 2) int64; ``jet_flavour`` (n, J) int64 (5 b, 4 c, 0
      light).
    * ``n_generated``: 0-d int64, events generated to obtain the file (-1 if unknown).

    Raises
    ------
    ValueError
        If ``path`` is not an HDF5 file with a valid ``delphes`` group.
    """
    return read_event_file(path)


def generation_config_of(path: str | os.PathLike) -> GenerationConfig:
    """The :class:`GenerationConfig` recorded in one of our event files."""
    import json

    from .config import DetectorConfig

    attrs = read_attrs(path)
    if "config" not in attrs:
        raise ValueError(f"path {str(path)!r} has no recorded config (not generated by lib.physics)")
    raw = json.loads(attrs["config"])
    det = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.pop("detector").items()}
    return dataclasses.replace(GenerationConfig(**raw), detector=DetectorConfig(**det))
