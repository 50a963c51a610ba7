"""Chapter-3 targets in constraint coordinates: the bridge between an event dict
(:func:`posteval.physics.ttbar.read_events`) and a model of q(c | event, pairing) (the
`flow_constraint` model, :class:`posteval.models.constraint_flow.EventConstraintFlow`).

Per event and candidate lepton-b pairing a (<= 6, neutrino weighting's candidates), from the true
neutrinos:

* c_a, the six constraint variables (:mod:`posteval.physics.dilepton`), standardised with the
  training split's means and widths over every candidate pairing, s_a = (c_a - mean) / sd;
* the pairing's features f_a = (m(l+ b_a), m(l- bbar_a), log pT(b_a), log pT(bbar_a)),
  standardised the same way;
* the log-density terms that carry q(s | event, a) to a density over the neutrinos,

      extra_a = log |det dc/d(nu, nubar)|_a - sum_j log sd_j - log n_roots(c_a),

  with n_roots the number of real roots at c_a (a sampler takes one of them uniformly);
* whether a is a candidate at all.

The model's density over the Cartesian momenta is then
log p(nu, nubar | event) = logsumexp_a [log pi(a | event) + log q(s_a | event, a) + extra_a]
(up to the feasible fraction Z(event) of q's mass: the sampler redraws infeasible c).

Reference: ``shared/notes/constraint_coordinates.md`` (the density of a constraint model in
Cartesian space).

Example
-------
>>> from posteval.physics.constraint_sampling import toy_events
>>> ev = toy_events(40, np.random.default_rng(0))
>>> t = ConstraintTargets.fit(ev)
>>> s, f, ok, extra = t.training_arrays(ev)
>>> s.shape, f.shape, ok.shape, extra.shape
((40, 6, 6), (40, 6, 4), (40, 6), (40, 6))
>>> bool(np.allclose(t.to_constraints(s)[ok], t.constraints(ev)[0][ok]))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..physics import dilepton
from ..physics.constraint_sampling import candidate_pairings, pairing_constraints, root_features

__all__ = ["ConstraintTargets", "pairing_features"]


def pairing_features(events) -> tuple[np.ndarray, np.ndarray]:
    """(m(l+ b_a), m(l- bbar_a), log pT(b_a), log pT(bbar_a)) per candidate pairing, (n, 6, 4),
    unstandardised (GeV, log GeV), and the candidates' validity (n, 6)."""
    jets, ok = candidate_pairings(events)
    lep = np.asarray(events["lep_p4"], dtype=np.float64)[:, None]
    lb = lep + jets
    m_lb = np.sqrt(np.maximum(lb[..., 3] ** 2 - np.sum(lb[..., :3] ** 2, axis=-1), 0.0))
    pt = np.hypot(jets[..., 0], jets[..., 1])
    f = np.concatenate([m_lb, np.log(np.maximum(pt, 1e-3))], axis=-1)
    return np.where(ok[..., None], f, 0.0), ok


@dataclass(frozen=True)
class ConstraintTargets:
    """Means and widths of c and of the pairing features over the training split's candidates."""

    c_mean: np.ndarray
    c_sd: np.ndarray
    f_mean: np.ndarray
    f_sd: np.ndarray
    r_mean: np.ndarray | None = None
    r_sd: np.ndarray | None = None

    @staticmethod
    def constraints(events):
        """(c (n, 6, 6), log|det J| (n, 6), n_roots (n, 6)) of the true neutrinos per pairing."""
        return pairing_constraints(events)

    @classmethod
    def fit(cls, train_events) -> ConstraintTargets:
        c, _, n_roots = pairing_constraints(train_events)
        f, ok = pairing_features(train_events)
        use = ok & (n_roots > 0)
        if use.sum() < 2:
            raise ValueError("train_events: fewer than two candidate pairings with a real solution")
        c_sd, f_sd = c[use].std(axis=0), f[use].std(axis=0)
        if np.any(c_sd == 0) or np.any(f_sd == 0):
            raise ValueError("train_events: a constraint variable or pairing feature has zero spread")
        rf, rvalid, _ = _roots_of_truth(train_events, c)
        r = rf[rvalid & use[..., None]]
        r_sd = r.std(axis=0)
        return cls(c[use].mean(axis=0), c_sd, f[use].mean(axis=0), f_sd, r.mean(axis=0), np.where(r_sd > 0, r_sd, 1.0))

    def features(self, events) -> tuple[np.ndarray, np.ndarray]:
        """Standardised pairing features (n, 6, 4) float32 (0 where not a candidate), validity (n, 6)."""
        f, ok = pairing_features(events)
        return np.where(ok[..., None], (f - self.f_mean) / self.f_sd, 0.0).astype(np.float32), ok

    def training_arrays(self, events):
        """(s (n, 6, 6), features (n, 6, 4), usable (n, 6) bool, extra (n, 6)) for the loss; s and
        extra are 0 where the pairing is not usable (not a candidate, or no real root at c_a)."""
        c, logdet, n_roots = pairing_constraints(events)
        f, ok = self.features(events)
        use = ok & (n_roots > 0) & np.isfinite(logdet)
        if not use.any(axis=1).all():
            raise ValueError("events: an event has no usable pairing (no candidate with a real root)")
        s = np.where(use[..., None], (c - self.c_mean) / self.c_sd, 0.0)
        extra = logdet - np.log(self.c_sd).sum() - np.log(np.maximum(n_roots, 1))
        return s.astype(np.float32), f, use, np.where(use, extra, 0.0).astype(np.float32)

    def roots(self, raw_features: np.ndarray) -> np.ndarray:
        """Standardised root features (float32) from :func:`~posteval.physics.constraint_sampling.root_features`."""
        if self.r_mean is None:
            raise ValueError("these targets were made without root statistics (fit them with ConstraintTargets.fit)")
        return ((raw_features - self.r_mean) / self.r_sd).astype(np.float32)

    def root_arrays(self, events):
        """For a root scorer: standardised features of the roots at each pairing's true c (n, 6, 4, 8),
        which slots are real roots (n, 6, 4), and the slot of the true neutrinos (n, 6; the closest root)."""
        c, _, _ = pairing_constraints(events)
        rf, rvalid, true_root = _roots_of_truth(events, c)
        return np.where(rvalid[..., None], self.roots(rf), 0.0).astype(np.float32), rvalid, true_root

    def to_constraints(self, standard) -> np.ndarray:
        """Standardised (..., 6) -> c in GeV."""
        return np.asarray(standard, dtype=np.float64) * self.c_sd + self.c_mean


def _roots_of_truth(events, c):
    """Raw root features (n, 6, 4, 8), real slots (n, 6, 4) and the true root's slot (n, 6) at c (n, 6, 6)."""
    jets, _ = candidate_pairings(events)
    lep = np.asarray(events["lep_p4"], dtype=np.float64)[:, None]
    met = np.asarray(events["met"], dtype=np.float64)[:, None]
    nu = np.asarray(events["neutrino_momenta"], dtype=np.float64)
    roots, valid = dilepton.solve_dilepton(c, lep, jets, met)
    dist = np.where(valid, np.abs(roots - nu[:, None, None]).max(axis=(-2, -1)), np.inf)
    return root_features(roots, lep, jets), valid, np.argmin(dist, axis=-1)
