"""Toy ATLAS-like detector: anti-kt jets, energy/momentum smearing, b-tagging, MET, selection.

All parameters come from :class:`posteval.physics.config.DetectorConfig`. Input is a batch of
event records (:class:`posteval.physics.generator.FlatRecord`) and its truth
(:func:`posteval.physics.truth.extract_truth`).
"""

from __future__ import annotations

from posteval._extras import require

require("posteval.physics.detector", "awkward", extra="physics")

import awkward as ak
import numpy as np

from . import fourvectors as fv
from .config import DetectorConfig
from .generator import FlatRecord

_NEUTRINOS = (12, 14, 16)
_JET_DEFINITIONS: dict = {}


def _region(abs_eta: np.ndarray, edges) -> np.ndarray:
    """Index of the |eta| region (``edges`` are upper edges; beyond the last: the last)."""
    return np.minimum(np.searchsorted(np.asarray(edges), abs_eta, side="left"), len(edges) - 1)


def jet_energy_resolution(energy: np.ndarray, abs_eta: np.ndarray, cfg: DetectorConfig) -> np.ndarray:
    """sigma(E) in GeV of the HCal formula of the Delphes ATLAS card, per jet."""
    r = _region(abs_eta, cfg.hcal_eta_edges)
    c, s, n = (np.asarray(x)[r] for x in (cfg.hcal_constant, cfg.hcal_stochastic, cfg.hcal_noise))
    return np.sqrt((c * energy) ** 2 + s**2 * energy + n**2)


def lepton_pt_resolution(pt: np.ndarray, abs_eta: np.ndarray, is_muon: np.ndarray,
                         cfg: DetectorConfig) -> np.ndarray:
    """Relative sigma(pT)/pT of muons (track) and electrons (track combined with the ECal)."""
    r = _region(abs_eta, cfg.lepton_eta_edges)
    muon = np.hypot(np.asarray(cfg.muon_constant)[r], np.asarray(cfg.muon_slope)[r] * pt)
    track = np.hypot(np.asarray(cfg.electron_constant)[r], np.asarray(cfg.electron_slope)[r] * pt)
    energy = np.maximum(pt * np.cosh(abs_eta), 1e-6)
    ecal = np.sqrt(cfg.ecal_constant**2 + cfg.ecal_stochastic**2 / energy)
    with np.errstate(divide="ignore"):
        electron = 1.0 / np.sqrt(1.0 / track**2 + 1.0 / ecal**2)
    return np.where(is_muon, muon, electron)


def btag_efficiency(pt: np.ndarray, flavour: np.ndarray, cfg: DetectorConfig) -> np.ndarray:
    """Tag probability for jets of truth ``flavour`` (5 = b, 4 = c, else light)."""
    ab, bb, cb = cfg.btag_b
    ac, bc, cc = cfg.btag_c
    al, bl = cfg.btag_light
    eff_b = ab * np.tanh(bb * pt) * 30.0 / (1.0 + cb * pt)
    eff_c = ac * np.tanh(bc * pt) / (1.0 + cc * pt)
    eff_l = al + bl * pt
    return np.clip(np.where(flavour == 5, eff_b, np.where(flavour == 4, eff_c, eff_l)), 0.0, 1.0)


def cluster_jets(rec: FlatRecord, visible: np.ndarray, cfg: DetectorConfig):
    """Anti-kt jets of the ``visible`` rows; returns (jet p4 (k, 4), event of each jet (k,))."""
    import fastjet

    rows = np.flatnonzero(visible)
    counts = np.bincount(rec.event[rows], minlength=rec.n_events)
    p = rec.p4[rows]
    particles = ak.unflatten(
        ak.zip({"px": p[:, 0], "py": p[:, 1], "pz": p[:, 2], "E": p[:, 3]}, with_name="Momentum4D"),
        counts,
    )
    key = float(cfg.jet_radius)
    if key not in _JET_DEFINITIONS:
        _JET_DEFINITIONS[key] = fastjet.JetDefinition(fastjet.antikt_algorithm, key)
    jets = fastjet.ClusterSequence(particles, _JET_DEFINITIONS[key]).inclusive_jets(
        min_pt=cfg.jet_cluster_min_pt)
    n_per_event = ak.to_numpy(ak.num(jets, axis=1))
    flat = ak.flatten(jets)
    p4 = np.stack([ak.to_numpy(flat[k]).astype(np.float64) for k in ("px", "py", "pz", "E")], axis=1)
    return p4, np.repeat(np.arange(rec.n_events), n_per_event)


def pad_leading(values: np.ndarray, event: np.ndarray, key: np.ndarray, n_events: int, size: int):
    """Per event, the ``size`` rows of ``values`` with the largest ``key``, zero-padded.

    Returns (padded (n_events, size, ...), mask (n_events, size), count per event before
    truncation).
    """
    order = np.lexsort((-key, event))
    ev = event[order]
    counts = np.bincount(ev, minlength=n_events)
    first = np.concatenate([[0], np.cumsum(counts)])[:-1]
    rank = np.arange(len(ev)) - first[ev]
    keep = rank < size
    out = np.zeros((n_events, size) + values.shape[1:], dtype=values.dtype)
    mask = np.zeros((n_events, size), dtype=bool)
    out[ev[keep], rank[keep]] = values[order][keep]
    mask[ev[keep], rank[keep]] = True
    return out, mask, counts


def _quark_label(rec: FlatRecord, jet_eta, jet_phi, mask, pdg: int, cfg: DetectorConfig):
    """(n, J) bool: jet within ``flavour_match_dr`` of a quark of |id| ``pdg``."""
    rows = np.flatnonzero(np.abs(rec.pid) == pdg)
    rows = rows[fv.pt(rec.p4[rows]) > cfg.flavour_quark_min_pt]
    label = np.zeros(mask.shape, dtype=bool)
    if len(rows):
        ev = rec.event[rows]
        q = rec.p4[rows]
        close = fv.delta_r(jet_eta[ev], jet_phi[ev], fv.eta(q)[:, None], fv.phi(q)[:, None])
        np.logical_or.at(label, ev, (close < cfg.flavour_match_dr) & mask[ev])
    return label


def match_b_quarks(jet_eta, jet_phi, mask, b_p4: np.ndarray, max_dr: float) -> np.ndarray:
    """(n, J) int: 0 for the jet nearest the b, 1 for the one nearest the bbar, else -1.

    A quark is matched to its nearest valid jet within ``max_dr``; if both quarks pick the same
    jet, the closer one keeps it.
    """
    n, size = mask.shape
    dr = fv.delta_r(jet_eta[:, None, :], jet_phi[:, None, :],
                    fv.eta(b_p4)[:, :, None], fv.phi(b_p4)[:, :, None])  # (n, 2, J)
    dr = np.where(mask[:, None, :], dr, np.inf)
    nearest = np.argmin(dr, axis=2)
    best = np.take_along_axis(dr, nearest[..., None], axis=2)[..., 0]
    ok = best < max_dr
    same = ok.all(axis=1) & (nearest[:, 0] == nearest[:, 1])
    ok[same, 0] &= best[same, 0] <= best[same, 1]
    ok[same, 1] &= best[same, 1] < best[same, 0]
    out = np.full((n, size), -1, dtype=np.int64)
    for k in (0, 1):
        out[np.flatnonzero(ok[:, k]), nearest[ok[:, k], k]] = k
    return out


def dress_and_isolate(rec: FlatRecord, visible: np.ndarray, lep_p4: np.ndarray, has: np.ndarray,
                      cfg: DetectorConfig) -> tuple[np.ndarray, np.ndarray]:
    """Dress the two leptons with nearby photons and measure their isolation.

    Visible photons within ``dress_dr`` of a lepton are added to the nearest one and removed
    from ``visible`` (in place). Returns the dressed four-vectors (n, 2, 4) and the scalar pT
    sum (n, 2) of the other visible particles above ``isolation_min_pt`` within
    ``isolation_dr`` of each lepton.
    """
    n = rec.n_events
    rows = np.flatnonzero(visible)
    ev = rec.event[rows]
    p = rec.p4[rows]
    p_pt, p_eta, p_phi = fv.pt(p), fv.eta(p), fv.phi(p)
    safe = np.where(has[..., None], lep_p4, 1.0)
    dr = np.where(has[ev], fv.delta_r(p_eta[:, None], p_phi[:, None], fv.eta(safe)[ev], fv.phi(safe)[ev]), np.inf)
    nearest = np.argmin(dr, axis=1)
    dressing = (rec.pid[rows] == 22) & (dr.min(axis=1) < cfg.dress_dr)
    dressed = lep_p4.copy()
    np.add.at(dressed, (ev[dressing], nearest[dressing]), p[dressing])
    visible[rows[dressing]] = False
    cone = (dr < cfg.isolation_dr) & ~dressing[:, None] & (p_pt > cfg.isolation_min_pt)[:, None]
    iso = np.zeros((n, 2))
    for k in (0, 1):
        iso[:, k] = np.bincount(ev, p_pt * cone[:, k], n)
    return dressed, iso


def _soft_term(rec: FlatRecord, visible: np.ndarray, raw_p4: np.ndarray, jet_event: np.ndarray, cfg: DetectorConfig,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(soft_xy, soft_noise)`` (n, 2): the visible momentum not clustered into jets above the clustering
    threshold, and its resolution noise (``soft_term_resolution * sqrt(soft sum E_T)``)."""
    n = rec.n_events
    vis_rows = np.flatnonzero(visible)
    vis_ev = rec.event[vis_rows]
    soft_xy = np.stack([np.bincount(vis_ev, rec.p4[vis_rows, k], n) - np.bincount(jet_event, raw_p4[:, k], n)
                        for k in (0, 1)], axis=1)
    soft_sumet = np.maximum(np.bincount(vis_ev, fv.pt(rec.p4[vis_rows]), n)
                            - np.bincount(jet_event, fv.pt(raw_p4), n), 0.0)
    soft_noise = rng.standard_normal((n, 2)) * (cfg.soft_term_resolution * np.sqrt(soft_sumet))[:, None]
    return soft_xy, soft_noise


def _stored_jets(rec: FlatRecord, jet_p4: np.ndarray, jet_event: np.ndarray, cfg: DetectorConfig,
                 rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """``(jets, mask, jet_eta, jet_phi, flavour, btag)`` of the leading ``max_jets`` selected jets of each
    event (zero-padded), with their quark flavour label and b-tag (drawn from the tagging efficiency)."""
    j_pt = fv.pt(jet_p4)
    good = (j_pt > cfg.jet_min_pt) & (np.abs(fv.eta(jet_p4)) < cfg.jet_max_abs_eta)
    jets, mask, _ = pad_leading(jet_p4[good], jet_event[good], j_pt[good], rec.n_events, cfg.max_jets)
    with np.errstate(invalid="ignore", divide="ignore"):
        jet_eta = np.where(mask, fv.eta(jets), 0.0)
    jet_phi = fv.phi(jets)
    is_b = _quark_label(rec, jet_eta, jet_phi, mask, 5, cfg)
    is_c = _quark_label(rec, jet_eta, jet_phi, mask, 4, cfg)
    flavour = np.where(is_b, 5, np.where(is_c, 4, 0))
    eff = btag_efficiency(fv.pt(jets), flavour, cfg) * (np.abs(jet_eta) < cfg.btag_max_abs_eta)
    btag = (rng.random(mask.shape) < eff) & mask
    return jets, mask, jet_eta, jet_phi, flavour, btag


def _smeared_leptons(dressed_lep: np.ndarray, lep_iso: np.ndarray, has: np.ndarray, pdgid: np.ndarray,
                     cfg: DetectorConfig, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lep_p4, is_muon, lep_ok)``: the dressed W leptons smeared by their pT resolution, which are muons,
    and which pass the pT, eta and isolation cuts."""
    n = len(dressed_lep)
    lep_abs_eta = np.where(has, np.abs(fv.eta(np.where(has[..., None], dressed_lep, 1.0))), np.inf)
    is_muon = np.abs(pdgid) == 13
    sigma = lepton_pt_resolution(fv.pt(dressed_lep), np.minimum(lep_abs_eta, 10.0), is_muon, cfg)
    lep_factor = np.maximum(1.0 + rng.standard_normal((n, 2)) * sigma, 1e-3)
    lep_p4 = np.where(has[..., None], dressed_lep * lep_factor[..., None], 0.0)
    lep_pt = fv.pt(lep_p4)
    max_iso = np.where(is_muon, cfg.muon_isolation_max, cfg.electron_isolation_max)
    isolated = lep_iso < max_iso * lep_pt
    lep_ok = has & (lep_pt > cfg.lepton_min_pt) & (lep_abs_eta < cfg.lepton_max_abs_eta) & isolated
    return lep_p4, is_muon, lep_ok


def simulate_detector(rec: FlatRecord, truth: dict, cfg: DetectorConfig,
                      rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Detector-level objects and the selection flag of every event of a batch.

    Returns
    -------
    dict
        ``lep_p4`` (n, 2, 4) dressed and smeared l+, l-; ``lep_flavour`` (n, 2) 0 = e, 1 = mu;
        ``jet_p4`` (n, J, 4) leading selected jets, zero-padded; ``jet_mask``, ``jet_btag``
        (n, J) bool; ``jet_flavour`` (n, J) 5/4/0; ``jet_truth_index`` (n, J) 0 = b, 1 = bbar,
        -1 other; ``n_jets``, ``n_bjets`` (n,); ``met`` (n, 2) x, y; ``selected`` (n,) bool.
    """
    n = rec.n_events
    abs_id = np.abs(rec.pid)
    p_eta = fv.eta(rec.p4)
    visible = (rec.status > 0) & ~np.isin(abs_id, _NEUTRINOS) & (np.abs(p_eta) < cfg.visible_max_abs_eta)
    lep_rows = truth["lep_final_row"]
    visible[lep_rows[lep_rows >= 0]] = False
    has = lep_rows >= 0
    dressed_lep, lep_iso = dress_and_isolate(rec, visible, truth["lep_final_p4"], has, cfg)

    raw_p4, jet_event = cluster_jets(rec, visible, cfg)
    raw_eta = np.abs(fv.eta(raw_p4))
    factor = 1.0 + rng.standard_normal(len(raw_p4)) * jet_energy_resolution(raw_p4[:, 3], raw_eta, cfg) / raw_p4[:, 3]
    jet_p4 = raw_p4 * np.maximum(factor, 1e-3)[:, None]
    # The random numbers are drawn in this order: jet energies, soft term, b-tags, lepton momenta.
    soft_xy, soft_noise = _soft_term(rec, visible, raw_p4, jet_event, cfg, rng)
    jets, mask, jet_eta, jet_phi, flavour, btag = _stored_jets(rec, jet_p4, jet_event, cfg, rng)
    # Leptons (the two W leptons after QED radiation, dressed), isolation, then MET.
    lep_p4, is_muon, lep_ok = _smeared_leptons(dressed_lep, lep_iso, has, truth["lep_final_pdgid"], cfg, rng)

    jets_xy = np.stack([np.bincount(jet_event, jet_p4[:, k], n) for k in (0, 1)], axis=1)
    met = -(jets_xy + lep_p4[..., :2].sum(axis=1) + soft_xy + soft_noise)

    n_jets = mask.sum(axis=1)
    n_bjets = btag.sum(axis=1)
    selected = (truth["ok"] & (lep_ok.sum(axis=1) == cfg.min_leptons) & (n_jets >= cfg.min_jets)
                & (n_bjets >= cfg.min_btags))
    return {
        "lep_p4": lep_p4,
        "lep_flavour": is_muon.astype(np.int64),
        "jet_p4": jets,
        "jet_mask": mask,
        "jet_btag": btag,
        "jet_flavour": flavour,
        "jet_truth_index": match_b_quarks(jet_eta, jet_phi, mask, truth["b_p4"], cfg.flavour_match_dr),
        "n_jets": n_jets,
        "n_bjets": n_bjets,
        "met": met,
        "selected": selected,
    }
