"""Model inputs and targets for dileptonic ttbar neutrino reconstruction (nu2flows convention).

Per event (see ``shared/notes/paper_and_nu2flows.md`` §B.2):

* global token: MET (x, y) in GeV, number of jets, number of b-tagged jets;
* two leptons: (px, py, pz, log E, charge, flavour) with flavour 0 = e, 1 = mu;
* up to J jets, zero-padded: (px, py, pz, log E, b-tag), plus a bool mask (True = real jet);
* targets: (px, py, pz) of nu (from W+) then nubar (from W-), 6 numbers in GeV.

Momenta are standardised with the training split's statistics only (`Standardizer.fit`);
charge, flavour and b-tag flags stay as they are, and padded jets stay exactly zero.
The model batch is the tuple ``(global_feats, leptons, jets, jet_mask, targets)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

import numpy as np

from posteval._extras import require

require("posteval.data.ttbar_features", "torch", extra="models")

import torch  # noqa: E402

TARGET_NAMES = ("nu_px", "nu_py", "nu_pz", "nubar_px", "nubar_py", "nubar_pz")
N_MOMENTUM = 4  # px, py, pz, log E: the standardised leading columns of leptons and jets


def momentum_features(pt: np.ndarray, eta: np.ndarray, phi: np.ndarray, energy: np.ndarray) -> np.ndarray:
    """(px, py, pz, log E) from (pT, eta, phi, E); shape (..., 4). Zero entries stay zero."""
    pt, eta, phi, energy = (np.asarray(a, dtype=np.float64) for a in (pt, eta, phi, energy))
    if np.any(energy < 0):
        raise ValueError("energy must be >= 0")
    real = energy > 0
    out = np.stack([pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta),
                    np.log(np.where(real, energy, 1.0))], axis=-1)
    return np.where(real[..., None], out, 0.0)


@dataclass(frozen=True)
class EventArrays:
    """Unstandardised per-event arrays (numpy); see the module docstring for the columns."""

    global_feats: np.ndarray  # (n, 4)
    leptons: np.ndarray  # (n, 2, 6)
    jets: np.ndarray  # (n, J, 5)
    jet_mask: np.ndarray  # (n, J) bool
    targets: np.ndarray  # (n, 6)

    def __post_init__(self):
        n = len(self.global_feats)
        if n == 0:
            raise ValueError("global_feats is empty: no events")
        for f in fields(self):
            a = getattr(self, f.name)
            if not isinstance(a, np.ndarray) or len(a) != n:
                raise ValueError(f"{f.name} must be a numpy array with {n} events")
            if a.dtype != bool and not np.all(np.isfinite(a)):
                raise ValueError(f"{f.name} contains NaN or inf")
        if self.jet_mask.dtype != bool or self.jet_mask.shape != self.jets.shape[:2]:
            raise ValueError(f"jet_mask must be bool of shape {self.jets.shape[:2]}")
        if self.targets.shape[1:] != (6,):
            raise ValueError(f"targets must have shape (n, 6), got {self.targets.shape}")

    def __len__(self) -> int:
        return len(self.global_feats)

    def subset(self, index: np.ndarray) -> "EventArrays":
        """The events at ``index`` (integer or bool array)."""
        return EventArrays(**{f.name: getattr(self, f.name)[index] for f in fields(self)})


def build_event_arrays(lepton_pt, lepton_eta, lepton_phi, lepton_energy, lepton_charge, lepton_flavour,
                       jet_pt, jet_eta, jet_phi, jet_energy, jet_btag, jet_mask, met,
                       neutrino_momenta, n_jets=None, n_bjets=None) -> EventArrays:
    """Assemble `EventArrays` from per-object kinematics.

    Why this size: each parameter is one column of the events, one array per quantity as the event
    readers return them (`arrays_from_events` passes a `read_events` dict's columns; the tests and
    doctests build events column by column): a record holding them would be that dict again.

    Parameters
    ----------
    lepton_* : array_like, shape (n, 2)
        Lepton pT, eta, phi, energy (GeV), charge (+-1) and flavour (0 = e, 1 = mu).
    jet_* : array_like, shape (n, J)
        Zero-padded jet pT, eta, phi, energy (GeV) and b-tag flag (0/1).
    jet_mask : array_like of bool, shape (n, J)
        True for real jets.
    met : array_like, shape (n, 2)
        Missing transverse momentum (x, y) in GeV.
    neutrino_momenta : array_like, shape (n, 2, 3)
        (px, py, pz) of nu (from W+) then nubar, in GeV.
    n_jets, n_bjets : array_like, shape (n,), optional
        Jet and b-tag multiplicities for the global token (default: counted over the given
        jets; pass the full counts when the jets were truncated).
    """
    jet_mask = np.asarray(jet_mask, dtype=bool)
    met = np.asarray(met, dtype=np.float64)
    nu = np.asarray(neutrino_momenta, dtype=np.float64)
    n = len(met)
    if met.shape != (n, 2):
        raise ValueError(f"met must have shape (n, 2), got {met.shape}")
    if nu.shape != (n, 2, 3):
        raise ValueError(f"neutrino_momenta must have shape ({n}, 2, 3), got {nu.shape}")
    for name, a, shape in [("lepton_pt", lepton_pt, (n, 2)), ("jet_pt", jet_pt, jet_mask.shape)]:
        if np.shape(a) != shape:
            raise ValueError(f"{name} must have shape {shape}, got {np.shape(a)}")
    if jet_mask.shape[0] != n:
        raise ValueError(f"jet_mask must have {n} events, got {jet_mask.shape[0]}")
    leptons = np.concatenate([momentum_features(lepton_pt, lepton_eta, lepton_phi, lepton_energy),
                              np.asarray(lepton_charge, dtype=np.float64)[..., None],
                              np.asarray(lepton_flavour, dtype=np.float64)[..., None]], axis=-1)
    btag = np.asarray(jet_btag, dtype=np.float64) * jet_mask
    jets = np.concatenate([momentum_features(jet_pt, jet_eta, jet_phi, jet_energy), btag[..., None]], axis=-1)
    jets = jets * jet_mask[..., None]
    counts = [jet_mask.sum(1) if n_jets is None else np.asarray(n_jets, dtype=np.float64),
              btag.sum(1) if n_bjets is None else np.asarray(n_bjets, dtype=np.float64)]
    for name, c in zip(("n_jets", "n_bjets"), counts):
        if c.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), got {c.shape}")
    global_feats = np.concatenate([met, np.stack(counts, axis=1)], axis=1)
    return EventArrays(global_feats.astype(np.float32), leptons.astype(np.float32), jets.astype(np.float32),
                       jet_mask, nu.reshape(n, 6).astype(np.float32))


def arrays_from_events(events: Mapping[str, np.ndarray], max_jets: int | None = None) -> EventArrays:
    """`EventArrays` of a `posteval.physics.ttbar.read_events` dict, keeping the ``max_jets`` leading jets.

    The global token keeps the event's full jet and b-tag counts (``n_jets``, ``n_bjets``).
    """
    needed = ("lep_pt", "lep_eta", "lep_phi", "lep_energy", "lep_charge", "lep_flavour", "jet_pt", "jet_eta",
              "jet_phi", "jet_energy", "jet_btag", "jet_mask", "met", "neutrino_momenta", "n_jets", "n_bjets")
    missing = [k for k in needed if k not in events]
    if missing:
        raise ValueError(f"events lacks the keys {missing}")
    n_slots = events["jet_mask"].shape[1]
    if max_jets is None:
        max_jets = n_slots
    if not 1 <= int(max_jets) <= n_slots:
        raise ValueError(f"max_jets must be in [1, {n_slots}], got {max_jets}")
    jets = {k: np.asarray(events[k])[:, :int(max_jets)]
            for k in ("jet_pt", "jet_eta", "jet_phi", "jet_energy", "jet_btag", "jet_mask")}
    return build_event_arrays(*(events[k] for k in needed[:6]), *jets.values(), events["met"],
                              events["neutrino_momenta"], n_jets=events["n_jets"], n_bjets=events["n_bjets"])


def subset_events(events: Mapping[str, np.ndarray], index: np.ndarray) -> dict[str, np.ndarray]:
    """The events at ``index`` of a `read_events` dict (per-file scalars are kept as they are)."""
    return {k: (v[index] if np.ndim(v) > 0 else v) for k, v in events.items()}


def split_indices(n: int, fractions: Mapping[str, float], seed: int = 0) -> dict[str, np.ndarray]:
    """Disjoint random index sets, e.g. ``{"train": 0.6, "val": 0.1, "calib": 0.1, "test": 0.2}``.

    Fractions must be positive and sum to at most 1; each set is sorted.
    """
    if n < len(fractions):
        raise ValueError(f"n must be at least the number of splits, got {n}")
    values = np.array(list(fractions.values()), dtype=float)
    if values.size == 0 or np.any(values <= 0) or values.sum() > 1 + 1e-9:
        raise ValueError(f"fractions must be positive and sum to <= 1, got {dict(fractions)}")
    order = np.random.default_rng(seed).permutation(n)
    bounds = np.floor(np.cumsum(np.concatenate([[0.0], values])) * n).astype(int)
    return {name: np.sort(order[a:b]) for name, a, b in zip(fractions, bounds[:-1], bounds[1:])}


def _moments(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    std = a.std(0)
    return a.mean(0), np.where(std > 0, std, 1.0)


@dataclass(frozen=True)
class Standardizer:
    """Means and standard deviations of the momentum columns and targets of one split."""

    global_mean: np.ndarray
    global_std: np.ndarray
    lepton_mean: np.ndarray
    lepton_std: np.ndarray
    jet_mean: np.ndarray
    jet_std: np.ndarray
    target_mean: np.ndarray
    target_std: np.ndarray

    @classmethod
    def fit(cls, train: EventArrays) -> "Standardizer":
        """Statistics of ``train`` (jets: over real jets only)."""
        if not isinstance(train, EventArrays):
            raise ValueError(f"train must be EventArrays, got {type(train).__name__}")
        if not train.jet_mask.any():
            raise ValueError("train has no real jets: cannot standardise jets")
        return cls(*_moments(train.global_feats),
                   *_moments(train.leptons[..., :N_MOMENTUM].reshape(-1, N_MOMENTUM)),
                   *_moments(train.jets[train.jet_mask][:, :N_MOMENTUM]),
                   *_moments(train.targets))

    def transform(self, arrays: EventArrays) -> EventArrays:
        """Standardised copy of ``arrays``; padded jets stay zero."""
        leptons = arrays.leptons.copy()
        leptons[..., :N_MOMENTUM] = (leptons[..., :N_MOMENTUM] - self.lepton_mean) / self.lepton_std
        jets = arrays.jets.copy()
        jets[..., :N_MOMENTUM] = (jets[..., :N_MOMENTUM] - self.jet_mean) / self.jet_std
        jets *= arrays.jet_mask[..., None]
        return replace(arrays, global_feats=((arrays.global_feats - self.global_mean) / self.global_std
                                             ).astype(np.float32),
                       leptons=leptons.astype(np.float32), jets=jets.astype(np.float32),
                       targets=self.targets_to_standard(arrays.targets).astype(np.float32))

    def targets_to_standard(self, y: np.ndarray) -> np.ndarray:
        """Targets in GeV, shape (..., 6) -> standardised units."""
        return (np.asarray(y) - self.target_mean) / self.target_std

    def targets_to_physical(self, y: np.ndarray) -> np.ndarray:
        """Standardised targets, shape (..., 6) -> GeV."""
        y = np.asarray(y)
        if y.shape[-1] != 6:
            raise ValueError(f"y must have last dimension 6, got shape {y.shape}")
        return y * self.target_std + self.target_mean


def to_tensors(arrays: EventArrays, device: str | torch.device = "cpu") -> tuple[torch.Tensor, ...]:
    """The model batch ``(global_feats, leptons, jets, jet_mask, targets)`` as torch tensors."""
    return tuple(torch.as_tensor(getattr(arrays, f.name), device=device) for f in fields(arrays))


OBSERVABLE_NAMES = ("nu_pz", "nubar_pz", "m_ttbar", "top_pt", "tbar_pt", "m_lnub_top", "m_lnub_tbar",
                    "m_lnu_wplus", "m_lnu_wminus")


def _mass(p4: np.ndarray) -> np.ndarray:
    """Invariant mass of (..., 4) vectors (px, py, pz, E); m^2 < 0 from rounding gives 0."""
    return np.sqrt(np.maximum(p4[..., 3] ** 2 - np.sum(p4[..., :3] ** 2, axis=-1), 0.0))


def derived_observables(leptons_p4, bjets_p4, neutrinos) -> np.ndarray:
    """The observables of `OBSERVABLE_NAMES` (GeV) from leptons, b-jets and neutrinos.

    Parameters
    ----------
    leptons_p4 : array_like, shape (n, 2, 4)
        (l+, l-) four-vectors (px, py, pz, E).
    bjets_p4 : array_like, shape (n, 2, 4)
        (b, bbar) jets.
    neutrinos : array_like, shape (n, 2, 3) or (n, m, 2, 3), or (n, 6) / (n, m, 6)
        (nu, nubar) momenta, per event or m samples per event.

    Returns
    -------
    ndarray, shape (n, 9) or (n, m, 9)
        nu and nubar pz, m(ttbar), pT of top and tbar, m(l nu b) and m(l nu) on both sides,
        computed with `posteval.physics.kinematics.reconstruct_ttbar`.
    """
    from posteval.physics.kinematics import reconstruct_ttbar

    nu = np.asarray(neutrinos, dtype=np.float64)
    if nu.shape[-1] == 6:
        nu = nu.reshape(*nu.shape[:-1], 2, 3)
    rec = reconstruct_ttbar(leptons_p4, bjets_p4, nu)
    top, w = rec["top_p4"], rec["w_p4"]
    top_pt = np.hypot(top[..., 0], top[..., 1])
    cols = [rec["nu_pz"][..., 0], rec["nu_pz"][..., 1], _mass(rec["ttbar_p4"]), top_pt[..., 0], top_pt[..., 1],
            _mass(top[..., 0, :]), _mass(top[..., 1, :]), _mass(w[..., 0, :]), _mass(w[..., 1, :])]
    return np.stack(cols, axis=-1)


def matched_observables(events: Mapping[str, np.ndarray], neutrinos) -> tuple[np.ndarray, np.ndarray]:
    """`derived_observables` of the events whose two b-jets are truth-matched, and that mask.

    Parameters
    ----------
    events : mapping
        Event arrays with ``lep_p4`` (n, 2, 4), ``jet_p4`` (n, J, 4) and ``jet_truth_index`` (n, J).
    neutrinos : array_like, shape (n, 6), (n, 2, 3), (n, m, 6) or (n, m, 2, 3)
        Neutrino momenta (GeV) per event, or m samples per event.

    Returns
    -------
    observables : ndarray, shape (k, 9) or (k, m, 9)
        Only the k events with both b-jets matched, so that only the neutrinos differ between
        reconstructions of the same events.
    matched : ndarray of bool, shape (n,)
    """
    from posteval.physics.kinematics import truth_matched_bjets

    nus = np.asarray(neutrinos, dtype=np.float64)
    if len(nus) != len(events["lep_p4"]):
        raise ValueError(f"neutrinos has {len(nus)} events but events has {len(events['lep_p4'])}")
    bjets, matched = truth_matched_bjets(events["jet_p4"], events["jet_truth_index"])
    return derived_observables(events["lep_p4"][matched], bjets[matched], nus[matched]), matched
