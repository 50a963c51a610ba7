"""W, top and ttbar systems from leptons, b-jets and (predicted or sampled) neutrinos.

Pair convention (as in :func:`posteval.physics.ttbar.read_events`): index 0 is the W+ / top side
(l+, nu, b), index 1 the W- / tbar side (l-, nubar, bbar). Neutrinos are massless.
"""

from __future__ import annotations

from posteval._extras import require

require("posteval.physics.kinematics", "vector", extra="physics")

import numpy as np
import vector


def _check(name: str, a, last: tuple, ndims: tuple) -> np.ndarray:
    """``a`` as float64, if its shape is (n, *last) or (n, m, *last) as ``ndims`` allows."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim not in ndims or a.shape[-len(last):] != last:
        allowed = " or ".join(str(("n",) + ("m",) * (d - 1 - len(last)) + last) for d in ndims)
        raise ValueError(f"{name} must have shape {allowed}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def _lorentz(p4: np.ndarray):
    return vector.array({"px": p4[..., 0], "py": p4[..., 1], "pz": p4[..., 2], "E": p4[..., 3]})


def neutrino_p4(neutrinos: np.ndarray) -> np.ndarray:
    """(..., 4) massless four-vectors from (..., 3) momenta (px, py, pz)."""
    nu = np.asarray(neutrinos, dtype=np.float64)
    return np.concatenate([nu, np.linalg.norm(nu, axis=-1, keepdims=True)], axis=-1)


def reconstruct_ttbar(leptons_p4, bjets_p4, neutrinos) -> dict[str, np.ndarray]:
    """W, top and ttbar observables for events or for samples of neutrinos per event.

    Parameters
    ----------
    leptons_p4 : array_like, shape (n, 2, 4)
        (l+, l-) four-vectors (px, py, pz, E) in GeV.
    bjets_p4 : array_like, shape (n, 2, 4) or (n, m, 2, 4)
        (b, bbar) jets; per event, or per sample (e.g. the neutrino-weighting pairing).
    neutrinos : array_like, shape (n, 2, 3) or (n, m, 2, 3)
        (nu, nubar) momenta (px, py, pz) in GeV; with m samples per event the event's leptons
        (and b-jets, if given per event) are used for every sample.

    Returns
    -------
    dict
        With P = (n,) or (n, m): ``w_p4``, ``top_p4`` P + (2, 4); ``ttbar_p4`` P + (4,);
        ``m_ttbar``, ``pt_ttbar`` P; ``m_lnub`` (top masses), ``m_lnu`` (W masses), ``pt_top``,
        ``nu_pz``, ``nu_e`` P + (2,).
    """
    nu = _check("neutrinos", neutrinos, (2, 3), (3, 4))
    lep = _check("leptons_p4", leptons_p4, (2, 4), (3,))
    bj = _check("bjets_p4", bjets_p4, (2, 4), (3, 4))
    n = len(nu)
    if len(lep) != n or len(bj) != n:
        raise ValueError(f"leptons_p4, bjets_p4 and neutrinos must have the same number of events, "
                         f"got {len(lep)}, {len(bj)}, {n}")
    if bj.ndim == 4 and (nu.ndim != 4 or bj.shape[1] != nu.shape[1]):
        raise ValueError(f"bjets_p4 per sample {bj.shape} needs neutrinos of shape "
                         f"(n, {bj.shape[1]}, 2, 3), got {nu.shape}")
    if nu.ndim == 4:
        lep = lep[:, None]
        if bj.ndim == 3:
            bj = bj[:, None]
    nu4 = neutrino_p4(nu)
    lep_v, bj_v, nu_v = _lorentz(lep), _lorentz(bj), _lorentz(nu4)
    w = lep_v + nu_v
    top = w + bj_v
    ttbar = top[..., 0] + top[..., 1]

    def as_p4(v):
        return np.stack([np.asarray(v.px), np.asarray(v.py), np.asarray(v.pz), np.asarray(v.E)], axis=-1)

    return {
        "w_p4": as_p4(w),
        "top_p4": as_p4(top),
        "ttbar_p4": as_p4(ttbar),
        "m_ttbar": np.asarray(ttbar.mass),
        "pt_ttbar": np.asarray(ttbar.pt),
        "m_lnub": np.asarray(top.mass),
        "m_lnu": np.asarray(w.mass),
        "pt_top": np.asarray(top.pt),
        "nu_pz": nu4[..., 2],
        "nu_e": nu4[..., 3],
    }


def truth_matched_bjets(jet_p4, jet_truth_index) -> tuple[np.ndarray, np.ndarray]:
    """(b, bbar) jets chosen by the truth match, shape (n, 2, 4), and a both-matched mask (n,).

    Events with a missing match get zeros for that jet and ``False`` in the mask.
    """
    jets = np.asarray(jet_p4, dtype=np.float64)
    idx = np.asarray(jet_truth_index)
    if jets.ndim != 3 or jets.shape[-1] != 4 or idx.shape != jets.shape[:2]:
        raise ValueError(f"jet_p4 must be (n, J, 4) and jet_truth_index (n, J), got {jets.shape}, {idx.shape}")
    out = np.zeros((len(jets), 2, 4))
    found = np.zeros((len(jets), 2), dtype=bool)
    for k in (0, 1):
        hit = idx == k
        found[:, k] = hit.any(axis=1)
        out[:, k] = np.where(found[:, k, None], jets[np.arange(len(jets)), np.argmax(hit, axis=1)], 0.0)
    return out, found.all(axis=1)


def met_resolution(events: dict) -> float:
    """Half the 16-84 % range of MET minus the neutrinos' summed transverse momentum, pooled over
    the x and y components [GeV]: the detector's resolution on what the neutrinos carry away."""
    met = _check("met", events["met"], (2,), (2,))
    nu = _check("neutrino_momenta", events["neutrino_momenta"], (2, 3), (3,))
    if len(met) != len(nu) or len(met) < 2:
        raise ValueError(f"met ({len(met)}) and neutrino_momenta ({len(nu)}) must hold the same >= 2 events")
    lo, hi = np.quantile(met - nu[:, :, :2].sum(axis=1), [0.16, 0.84])
    return float(hi - lo) / 2


def in_mass_window(masses, mass: float, window: float) -> np.ndarray:
    """Per event, the fraction of the given invariant masses (``(n,)`` or ``(n, k)``, GeV) within
    ``window`` of ``mass``: e.g. both W candidates of an event against the W mass."""
    m = np.asarray(masses, dtype=float)
    if m.ndim not in (1, 2) or m.shape[0] == 0:
        raise ValueError(f"masses must have shape (n,) or (n, k), got {m.shape}")
    if not np.isfinite(m).all():
        raise ValueError("masses contain NaN or inf")
    if not window > 0:
        raise ValueError(f"window must be positive, got {window!r}")
    inside = np.abs(m - mass) < window
    return inside.astype(float) if m.ndim == 1 else inside.mean(axis=1)
