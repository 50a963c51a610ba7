"""Dileptonic ttbar samples: generate (cached, parallel, resumable) and read.

``load_or_generate`` returns the path of an HDF5 event file (layout in
:mod:`posteval.physics.event_file`); ``read_events`` turns it into numpy arrays; ``clean_cache``
removes what interrupted runs left behind.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np

from ..parallel import add_cluster_arguments, client_from_arguments, for_each_completed, integer_at_least
from .cache_files import idle_chunk_folders, locked, remove_leftovers, remove_temp_files, remove_tree
from .chunks import ChunkJob, plan_chunks, run_chunk
from .config import MODES, DetectorConfig, GenerationConfig, default_batch_events, default_chunk_events
from .event_file import (FORMAT, FORMAT_VERSION, concatenate_atomic, read_attrs, schema_arrays,
                         stored_hash_matches, write_atomic)
from .event_reader import read_event_file
from .generator import PYTHIA_VERSION
from posteval.progress import tqdm

CACHE_ENV = "POINTWISE_CACHE"


def default_cache_dir(environ=None) -> Path:
    """``$POINTWISE_CACHE`` if set (the book's Makefile sets it to the checkout's ``data_cache/``), else the
    user's cache folder (XDG Base Directory: ``$XDG_CACHE_HOME/posteval/events``, by default
    ``~/.cache/posteval/events``): never a folder beside the installed package.

    >>> default_cache_dir({"POINTWISE_CACHE": "/data/ev"}).as_posix()
    '/data/ev'
    >>> default_cache_dir({"XDG_CACHE_HOME": "/tmp/c"}).as_posix()
    '/tmp/c/posteval/events'
    """
    environ = os.environ if environ is None else environ
    if environ.get(CACHE_ENV):
        return Path(environ[CACHE_ENV])
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "posteval" / "events"


def _cache_folder(cache_dir) -> Path:
    if cache_dir is None:
        return default_cache_dir()
    if not isinstance(cache_dir, (str, os.PathLike)) or not os.fspath(cache_dir):
        raise ValueError(f"cache_dir must be a non-empty path (None for the default), got {cache_dir!r}")
    return Path(cache_dir)


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


def _stale_reason(path: Path, expected: dict) -> str | None:
    """Why the cached file ``path`` cannot be reused (None if it can).

    It can when it exists, is readable, has the ``expected`` root attributes (format and its
    version, Pythia version, config, seed, event counts) and its content hash matches.
    """
    if not path.exists():
        return "missing"
    try:
        attrs = read_attrs(path)
    except ValueError:
        return "not a readable HDF5 file"
    for key, value in expected.items():
        if attrs.get(key) != value:
            return f"{key} differs" if key == "config" else f"{key} is {attrs.get(key)!r}, not {value!r}"
    return None if stored_hash_matches(path) else "its contents do not match its content hash"


def _chunk_path(chunk_dir: Path, job: ChunkJob) -> Path:
    return chunk_dir / f"chunk_{job.index:05d}_n{job.n_events}.h5"


def write_chunk_file(job: ChunkJob, events: dict[str, np.ndarray], chunk_dir: str | os.PathLike) -> Path:
    """Write the events of ``job`` (from :func:`posteval.physics.chunks.run_chunk`) atomically to ``chunk_dir``."""
    attrs = _file_attrs(job, job.seed, job.n_events, job.config, int(events["n_generated"]),
                        int(events["n_truth_failed"]))
    return write_atomic(_chunk_path(Path(chunk_dir), job), schema_arrays(events), attrs)


def _expected(seed: int, config: GenerationConfig, **counts) -> dict:
    """Root attributes a cached file of this run must have to be reused."""
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "pythia_version": PYTHIA_VERSION,
            "config": config.to_json(), "seed": int(seed), **counts}


def _chunk_expected(job: ChunkJob) -> dict:
    return _expected(job.seed, job.config, chunk_index=job.index, n_generated=job.n_events)


def load_or_generate(n_events: int, seed: int = 0, mode: str = "shower", n_workers: int = 1,
                     cache_dir: str | os.PathLike | None = None, *,
                     config: GenerationConfig | None = None, progress: bool = True, client=None) -> Path:
    """Path of an HDF5 file with the selected events of ``n_events`` generated ttbar events.

    A cached file with the same ``n_events``, ``seed``, config, Pythia version and format
    version (and an intact content hash) is reused; another one is generated again, saying why
    on stderr. Otherwise the run is split into chunks (:func:`posteval.physics.chunks.plan_chunks`),
    generated by ``n_workers`` local processes or on the Dask cluster of ``client``
    (:mod:`posteval.parallel`); this process writes each chunk atomically to ``<cache>/<name>.chunks/``
    as it completes; chunks left by an interrupted run are reused; finally the chunks are
    concatenated atomically into ``<cache>/<name>.h5`` and their folder is removed. The file
    depends on ``seed`` and the config only, not on the workers or the order chunks finish in.

    Runs of one file are serialised by a lock file ``<cache>/<name>.lock`` (a second process
    waits, then reuses the first one's file). Temporary files of dead runs and the chunk folders
    of finished runs found in the cache are removed; :func:`clean_cache` also removes the chunks
    kept for resuming unfinished runs.

    Parameters
    ----------
    n_events : int
        Events to generate (the file keeps those passing the selection; its attribute
        ``n_generated`` records this number).
    seed : int
        Master seed (>= 0); chunk seeds derive from it.
    mode : {"shower", "full", "parton"}
        Generator mode, see :class:`posteval.physics.config.GenerationConfig`.
    n_workers : int
        Local processes, one Pythia each (ignored with ``client``).
    cache_dir : path, optional
        Folder of the cache; default :func:`default_cache_dir`.
    config : GenerationConfig, optional
        Full configuration; its ``mode`` must equal ``mode``. Default :func:`make_config`.
    progress : bool
        Show a tqdm bar over completed chunks.
    client : dask.distributed.Client, optional
        Generate the chunks on this Dask cluster (see :func:`posteval.parallel.dask_client`).
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
    cache = _cache_folder(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    name = f"ttbar_{mode}_n{int(n_events)}_s{int(seed)}_{config.digest()}"
    final = cache / f"{name}.h5"
    chunk_dir = cache / f"{name}.chunks"
    expected = _expected(seed, config, n_events_requested=int(n_events), n_generated=int(n_events))
    if _stale_reason(final, expected) is None:
        return final

    with locked(cache / f"{name}.lock", progress=progress):
        remove_leftovers(cache)
        reason = _stale_reason(final, expected)  # another process may have made it while this one waited
        if reason is None:
            remove_tree(chunk_dir)
            return final
        if reason != "missing":  # a stale or corrupted file: an existing final file means a finished run
            tqdm.write(f"{final}: {reason}; generating it again", file=sys.stderr)
            final.unlink()
        remove_temp_files(cache, name)  # with the lock held, every temporary file of this run is stale
        chunk_dir.mkdir(exist_ok=True)
        jobs = plan_chunks(int(n_events), int(seed), config)
        todo = [j for j in jobs if _stale_reason(_chunk_path(chunk_dir, j), _chunk_expected(j)) is not None]
        for_each_completed(run_chunk, todo, lambda i, events: write_chunk_file(todo[i], events, chunk_dir),
                           workers=int(n_workers), client=client, desc=f"ttbar {mode}", unit="chunk",
                           progress=progress, initial=len(jobs) - len(todo))
        parts = [_chunk_path(chunk_dir, j) for j in jobs]
        failed = sum(int(read_attrs(p)["n_truth_failed"]) for p in parts)
        concatenate_atomic(final, parts, _file_attrs(None, seed, n_events, config, n_events, failed))
        remove_tree(chunk_dir)
    return final


def clean_cache(cache_dir: str | os.PathLike | None = None) -> list[Path]:
    """Remove the temporary files of dead runs and the chunk folders of every run not in progress.

    Unlike the clean-up :func:`load_or_generate` does, this also drops the chunks kept for
    resuming an unfinished run (up to a few hundred MB each). Returns the removed paths.
    """
    cache = _cache_folder(cache_dir)
    if not cache.is_dir():
        return []
    removed = remove_leftovers(cache)
    for chunk_dir in idle_chunk_folders(cache):
        remove_tree(chunk_dir)
        removed.append(chunk_dir)
    return removed


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

    attrs = read_attrs(path)
    if "config" not in attrs:
        raise ValueError(f"path {str(path)!r} has no recorded config (not generated by posteval.physics)")
    raw = json.loads(attrs["config"])
    det = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.pop("detector").items()}
    return dataclasses.replace(GenerationConfig(**raw), detector=DetectorConfig(**det))


def main(argv=None) -> Path:
    """Command line: ``python -m posteval.physics.ttbar --events N [--seed S] [--mode M] [--scheduler ADDR]``.

    A bad argument, a full disk or an unreachable scheduler is one line on stderr (exit code 2).
    """
    p = argparse.ArgumentParser(description="Generate (or find in the cache) a dileptonic ttbar event file.")
    p.add_argument("--events", type=integer_at_least(1), required=True, help="events to generate")
    p.add_argument("--seed", type=integer_at_least(0), default=0)
    p.add_argument("--mode", choices=MODES, default="shower")
    p.add_argument("--cache-dir", help="default $POINTWISE_CACHE, else $XDG_CACHE_HOME/posteval/events")
    p.add_argument("--workers", type=integer_at_least(1), default=1, help="local processes (without a Dask option)")
    add_cluster_arguments(p)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    try:
        with client_from_arguments(args) as client:
            path = load_or_generate(args.events, args.seed, args.mode, args.workers, args.cache_dir,
                                    progress=not args.no_progress, client=client)
    except (OSError, ValueError) as err:
        p.exit(2, f"error: {err}\n")
    print(path)
    return path


if __name__ == "__main__":
    main()
