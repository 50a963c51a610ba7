"""Pythia 8 set-up for pp -> ttbar -> (b l nu)(b l nu) at 13 TeV, and batches as flat arrays."""

from __future__ import annotations

from posteval._extras import require

require("posteval.physics.generator", "awkward", extra="physics")

from dataclasses import dataclass

import awkward as ak
import numpy as np

from .config import GenerationConfig

PYTHIA_VERSION = "8.317"
SEED_MAX = 900_000_000  # Pythia accepts Random:seed in 1..900_000_000

_COMMON = [
    "Beams:idA = 2212",
    "Beams:idB = 2212",
    "Beams:eCM = 13000.",
    "Top:gg2ttbar = on",
    "Top:qqbar2ttbar = on",
    "6:onMode = off",
    "6:onIfMatch = 5 24",
    "24:onMode = off",
    "Next:numberCount = 0",
    "Next:numberShowEvent = 0",
    "Print:quiet = on",
    "Random:setSeed = on",
]

_MODE_SETTINGS = {
    "parton": [
        "PartonLevel:ISR = off",
        "PartonLevel:FSR = off",
        "PartonLevel:MPI = off",
        "PartonLevel:Remnants = off",
        "Check:event = off",
        "HadronLevel:all = off",
    ],
    "shower": ["PartonLevel:MPI = off", "HadronLevel:all = off"],
    "full": [],
}


def pythia_settings(config: GenerationConfig, pythia_seed: int) -> list[str]:
    """The Pythia ``readString`` lines for ``config`` with random seed ``pythia_seed``."""
    if not 1 <= int(pythia_seed) <= SEED_MAX:
        raise ValueError(f"pythia_seed must be in 1..{SEED_MAX}, got {pythia_seed}")
    w_decays = "11 13 15" if config.include_taus else "11 13"
    lines = list(_COMMON) + [
        f"6:m0 = {float(config.top_mass)!r}",
        f"24:onIfAny = {w_decays}",
        f"Random:seed = {int(pythia_seed)}",
    ]
    if config.include_taus and config.mode == "parton":
        raise ValueError("include_taus needs tau decays: use mode 'shower' or 'full'")
    if config.include_taus and config.mode == "shower":
        # Hadronisation stays off, decays (of the taus; there are no hadrons) on.
        return lines + ["PartonLevel:MPI = off", "HadronLevel:Hadronize = off"]
    return lines + _MODE_SETTINGS[config.mode]


def make_pythia(config: GenerationConfig, pythia_seed: int):
    """An initialised ``pythia8mc.Pythia`` for ``config`` and ``pythia_seed``."""
    import pythia8mc

    pythia = pythia8mc.Pythia("", False)
    for line in pythia_settings(config, pythia_seed):
        if not pythia.readString(line):
            raise RuntimeError(f"Pythia rejected the setting {line!r}")
    if not pythia.init():
        raise RuntimeError("Pythia initialisation failed")
    version = f"{pythia.parm('Pythia:versionNumber'):.3f}"
    if version != PYTHIA_VERSION:
        raise RuntimeError(f"pythia8mc {PYTHIA_VERSION} is required (events depend on it), got {version}")
    return pythia


@dataclass
class FlatRecord:
    """A batch of Pythia event records as flat per-particle arrays.

    ``start[i]`` is the flat index of particle 0 of event ``i`` (``start[-1]`` = total), so
    particle ``j`` of event ``i`` is row ``start[i] + j``; ``event`` is the event of each row.
    ``p4`` holds (px, py, pz, E) in GeV.
    """

    pid: np.ndarray
    status: np.ndarray
    mother1: np.ndarray
    daughter1: np.ndarray
    p4: np.ndarray
    event: np.ndarray
    start: np.ndarray

    @property
    def n_events(self) -> int:
        """Number of events in the batch."""
        return len(self.start) - 1

    def global_index(self, local: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Flat index of in-event index ``local`` for the particles ``rows`` (all by default)."""
        events = self.event if rows is None else self.event[rows]
        return self.start[events] + local


def flatten_batch(batch) -> FlatRecord:
    """Turn a ``Pythia.nextBatch`` awkward array into a :class:`FlatRecord`."""
    prt = batch.prt
    counts = ak.to_numpy(ak.num(prt, axis=1)).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(counts)])

    def flat(x, dtype):
        return np.ascontiguousarray(ak.to_numpy(ak.flatten(x)), dtype=dtype)

    p = prt.p
    p4 = np.stack([flat(p.px, np.float64), flat(p.py, np.float64), flat(p.pz, np.float64),
                   flat(p.e, np.float64)], axis=1)
    return FlatRecord(
        pid=flat(prt.id, np.int64),
        status=flat(prt.status, np.int64),
        mother1=flat(prt.mother1, np.int64),
        daughter1=flat(prt.daughter1, np.int64),
        p4=p4,
        event=np.repeat(np.arange(len(counts)), counts),
        start=start,
    )


def generate_batches(config: GenerationConfig, pythia_seed: int, n_events: int):
    """Yield :class:`FlatRecord` batches (``config.batch_events`` each) totalling ``n_events``.

    Events Pythia fails to generate are skipped (``nextBatch`` error mode ``"skip"``) and
    replaced by further events, so the total is always ``n_events``.
    """
    pythia = make_pythia(config, pythia_seed)
    done, empty = 0, 0
    while done < n_events:
        batch = pythia.nextBatch(min(int(config.batch_events), n_events - done))
        if len(batch) == 0:
            empty += 1
            if empty == 3:
                raise RuntimeError("Pythia failed to generate events three times in a row")
            continue
        empty = 0
        done += len(batch)
        yield flatten_batch(batch)
