"""Samplers through the constraint variables: draw c = (m(l+ nu), m(l+ nu b), m(l- nubar),
m(l- nubar bbar), r_x, r_y) and a lepton-b pairing, and map each draw to (nu, nubar) with the
analytic dilepton solution (:mod:`posteval.physics.dilepton`). Every sample then satisfies the W
and top mass relations and closes MET up to the spread of c, by construction.

* :func:`constraint_floor_samples`: c from the training marginal, pairing and root uniform.
  Nothing is learned: the floor a constraint model must clear (as the event-blind prior is the
  floor for CRPS), and the reason its physics checks prove nothing on their own.
* :func:`constraint_is_samples`: constraint importance sampling, the classical baseline beside
  neutrino weighting. Proposals as the floor's (every real root kept); each root weighted by

      w = pi(nu, nubar) / |det dc / d(nu, nubar)|,

  a stated Gaussian prior pi on the six neutrino momenta (fitted on the training split) over the
  density with which the proposal lands on that root. The target is then
  p(nu, nubar | event) ∝ pi(nu, nubar) q_c(c(nu, nubar)), summed over the candidate pairings: the
  prior on the momenta times the training law of the constraint variables.
* :func:`sample_through_constraints`: the loop both share with a learned q(c | event, pairing):
  proposals from a callable, infeasible draws redrawn for a number of rounds, an event with no
  feasible draw in all rounds filled from a stated fallback sampler and counted.

Reference: ``shared/notes/constraint_coordinates.md`` (the measurement); J. Sonnenschein, Phys.
Rev. D 73 (2006) 054015 (the solution); for importance resampling, D. B. Rubin (1988), "Using the
SIR algorithm to simulate posterior distributions", Bayesian Statistics 3, 395-402.

Example
-------
>>> rng = np.random.default_rng(0)
>>> ev = toy_events(200, rng)
>>> marginal = ConstraintMarginal.fit(ev)
>>> out = constraint_floor_samples(ev, marginal, m=8, seed=1, fallback=lambda k, g: np.zeros((k, 8, 2, 3)))
>>> out.samples.shape, 0 < out.acceptance <= 1, out.fallback.shape
((200, 8, 2, 3), True, (200,))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import dilepton
from .kinematics import truth_matched_bjets
from .neutrino_weighting import candidate_assignments

__all__ = ["ConstraintMarginal", "GaussianNeutrinoPrior", "ConstraintSamples", "candidate_pairings",
           "pairing_constraints", "root_features", "N_ROOT_FEATURES", "sample_through_constraints", "constraint_floor_samples",
           "constraint_is_samples", "toy_events"]


def _events(events) -> dict:
    need = ("lep_p4", "jet_p4", "jet_btag", "jet_mask", "met")
    if not isinstance(events, dict) or any(k not in events for k in need):
        raise ValueError(f"events must be a read_events dict with {need}")
    return events


def candidate_pairings(events) -> tuple[np.ndarray, np.ndarray]:
    """(b, bbar) jets of each candidate pairing, (n, 6, 2, 4) GeV as stored, and validity (n, 6):
    the candidates of neutrino weighting (:func:`~posteval.physics.neutrino_weighting.candidate_assignments`)."""
    ev = _events(events)
    jets = np.asarray(ev["jet_p4"], dtype=np.float64)
    pairs, ok = candidate_assignments(jets, ev["jet_btag"], ev["jet_mask"])
    rows = np.arange(len(jets))[:, None, None]
    return jets[rows, pairs], ok


def pairing_constraints(events) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the true neutrinos of ``events``: c under every candidate pairing (n, 6, 6), the
    log |det dc/d(nu, nubar)| of each (n, 6), and the number of real roots at that c (n, 6; 0 where
    the pairing is not a candidate). Training targets of a model that treats the pairing as a latent."""
    ev = _events(events)
    jets, ok = candidate_pairings(ev)
    nu = np.asarray(ev["neutrino_momenta"], dtype=np.float64)[:, None]
    lep = np.asarray(ev["lep_p4"], dtype=np.float64)[:, None]
    met = np.asarray(ev["met"], dtype=np.float64)[:, None]
    c = dilepton.constraint_variables(nu, lep, jets, met)
    logdet = dilepton.log_abs_det_jacobian(nu, lep, jets)
    _, valid = dilepton.solve_dilepton(c, lep, jets, met)
    n_roots = np.where(ok, valid.sum(axis=-1), 0)
    return c, np.where(ok, logdet, 0.0), n_roots


N_ROOT_FEATURES = 8


def root_features(roots, leptons_p4, bjets_p4) -> np.ndarray:
    """Features of each root slot (..., 4, 8) for a root scorer: the six neutrino momenta / 100 GeV,
    log m(ttbar) and log |det dc/d(nu, nubar)| (0 in empty slots: mask them). ``roots`` (..., 4, 2, 3);
    ``leptons_p4`` and ``bjets_p4`` (..., 2, 4), broadcast against ``roots[..., 0, :, :]``."""
    nu = np.asarray(roots, dtype=np.float64)
    lep = np.asarray(leptons_p4, dtype=np.float64)[..., None, :, :]
    bj = np.asarray(bjets_p4, dtype=np.float64)[..., None, :, :]
    nu4 = np.concatenate([nu, np.linalg.norm(nu, axis=-1, keepdims=True)], axis=-1)
    tt = (lep + bj + nu4).sum(axis=-2)
    m_tt = np.sqrt(np.maximum(tt[..., 3] ** 2 - np.sum(tt[..., :3] ** 2, axis=-1), 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        logdet = dilepton.log_abs_det_jacobian(nu, np.broadcast_to(lep, nu4.shape[:-2] + (2, 4)),
                                               np.broadcast_to(bj, nu4.shape[:-2] + (2, 4)))
    f = np.concatenate([nu.reshape(*nu.shape[:-2], 6) / 100.0, np.log(m_tt)[..., None],
                        np.where(np.isfinite(logdet), logdet, 0.0)[..., None]], axis=-1)
    return np.where(np.isfinite(f), f, 0.0)


@dataclass(frozen=True)
class ConstraintMarginal:
    """The training law of c: the constraint variables of the training events' true neutrinos with
    their truth-matched b-jets (events with both b-jets matched), drawn jointly with replacement."""

    values: np.ndarray

    @classmethod
    def fit(cls, train_events) -> ConstraintMarginal:
        ev = _events(train_events)
        bj, matched = truth_matched_bjets(ev["jet_p4"], ev["jet_truth_index"])
        c = dilepton.constraint_variables(ev["neutrino_momenta"], ev["lep_p4"], bj, ev["met"])[matched]
        if len(c) < 2:
            raise ValueError(f"train_events: {len(c)} events with both b-jets matched; need at least 2")
        return cls(c)

    def draw(self, shape: tuple, rng: np.random.Generator) -> np.ndarray:
        """Draws of c, shape (*shape, 6)."""
        return self.values[rng.integers(0, len(self.values), shape)]


@dataclass(frozen=True)
class GaussianNeutrinoPrior:
    """A Gaussian on the six neutrino momenta (nu then nubar, px, py, pz), fitted on training truth."""

    mean: np.ndarray
    cov: np.ndarray

    @classmethod
    def fit(cls, train_events) -> GaussianNeutrinoPrior:
        nu = np.asarray(_events(train_events)["neutrino_momenta"], dtype=np.float64).reshape(-1, 6)
        if len(nu) < 7:
            raise ValueError(f"train_events: {len(nu)} events; need at least 7 to fit a 6-D covariance")
        return cls(nu.mean(axis=0), np.cov(nu, rowvar=False))

    def log_pdf(self, neutrinos) -> np.ndarray:
        """log pi (...,) of (..., 2, 3) momenta."""
        x = np.asarray(neutrinos, dtype=np.float64).reshape(*np.shape(neutrinos)[:-2], 6) - self.mean
        chol = np.linalg.cholesky(self.cov)
        z = np.linalg.solve(chol, x.reshape(-1, 6).T).T.reshape(x.shape)
        return -0.5 * np.sum(z**2, axis=-1) - np.log(np.diag(chol)).sum() - 3 * np.log(2 * np.pi)


@dataclass(frozen=True)
class ConstraintSamples:
    """Samples (n, m, 2, 3) GeV; ``acceptance`` the fraction of proposals with a real solution;
    ``fallback`` (n,) the events filled from the fallback sampler (no feasible proposal)."""

    samples: np.ndarray
    acceptance: float
    fallback: np.ndarray


def _check_m(m) -> int:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    return int(m)


def _check_rounds(rounds) -> int:
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    return rounds


def _kinematics(events):
    """(candidate jets (n, 6, 2, 4), candidates (n, 6), leptons (n, 2, 4), MET (n, 2)) of checked events."""
    ev = _events(events)
    jets, ok = candidate_pairings(ev)
    return jets, ok, np.asarray(ev["lep_p4"], dtype=np.float64), np.asarray(ev["met"], dtype=np.float64)


def _uniform_pairing(ok: np.ndarray, k: int, rng) -> np.ndarray:
    """(len(ok), k) pairing indices drawn uniformly among each event's valid candidates."""
    if not ok.any(axis=1).all():
        raise ValueError("an event has no candidate pairing (fewer than two jets)")
    u = rng.random((len(ok), k, 1))
    cum = np.cumsum(ok, axis=1)[:, None, :] / ok.sum(axis=1)[:, None, None]
    return np.minimum((u > cum).sum(axis=-1), ok.shape[1] - 1)


def _pick_root(valid: np.ndarray, rng) -> np.ndarray:
    """One root slot per row, uniform among the valid ones (arbitrary where none is)."""
    u = rng.random(valid.shape[:-1] + (1,))
    n = valid.sum(axis=-1, keepdims=True)
    cum = np.cumsum(valid, axis=-1) / np.maximum(n, 1)
    return np.minimum((u > cum).sum(axis=-1), valid.shape[-1] - 1)


def sample_through_constraints(events, propose: Callable, m: int, seed: int, *, fallback: Callable,
                               rounds: int = 8, choose_root: Callable | None = None) -> ConstraintSamples:
    """m samples per event by proposing (pairing, c), solving, and keeping one uniform real root.

    ``propose(rows, k, rng) -> (pairing (len(rows), k) int, c (len(rows), k, 6))`` proposes k draws
    for the events ``rows``. The first round proposes k = m per event; an event still short of m
    feasible draws gets, in each later round, as many as its own acceptance so far says it needs:
    k_i = 1.25 (m - found_i) / a_i with a_i = (accepted_i + 1) / (proposed_i + 2), rounded up to a power
    of two of at least 8 and at most m (events with the same k are proposed for together), for at most
    ``rounds`` rounds: never more than m a round, as many fewer as an event close to its m needs. Every feasible draw of an event is a draw of the same distribution, however many were
    proposed, so the number proposed changes the cost, not what is sampled. An event with at least one
    feasible draw but fewer than m fills
    its m by resampling its own feasible draws uniformly; an event with none is filled by
    ``fallback(count, rng) -> (count, m, 2, 3)`` and flagged. ``choose_root(rows, pairing, roots, valid,
    rng) -> (len(rows), k)`` picks the root slot of each proposal (default: uniform among the real ones).
    """
    m, rounds = _check_m(m), _check_rounds(rounds)
    jets, ok, lep, met = _kinematics(events)
    rng = np.random.default_rng(seed)
    n = len(lep)
    found = [[] for _ in range(n)]
    counts = np.zeros(n, dtype=int)
    tried = np.zeros(n, dtype=int)
    for r_ in range(rounds):
        short = np.flatnonzero(counts < m)
        if short.size == 0:
            break
        ks = np.full(short.size, m) if r_ == 0 else _proposals_needed(m, counts[short], tried[short])
        for k in np.unique(ks):
            rows = short[ks == k]
            pair, c = propose(rows, int(k), rng)
            bj = jets[rows[:, None], pair]
            roots, valid = dilepton.solve_dilepton(c, lep[rows, None], bj, met[rows, None])
            pick = _pick_root(valid, rng) if choose_root is None else choose_root(rows, pair, roots, valid, rng)
            chosen = np.take_along_axis(roots, pick[..., None, None, None], axis=2)[:, :, 0]
            feasible = valid.any(axis=-1)
            tried[rows] += feasible.shape[1]
            for i, r in enumerate(rows):
                good = chosen[i][feasible[i]]
                if len(good):
                    found[r].append(good)
                    counts[r] += len(good)
    out = np.empty((n, m, 2, 3))
    none = counts == 0
    for r in np.flatnonzero(~none):
        draws = np.concatenate(found[r])
        out[r] = draws[:m] if len(draws) >= m else draws[rng.integers(0, len(draws), m)]
    if none.any():
        out[none] = fallback(int(none.sum()), rng)
    accepted = sum(len(d) for f in found for d in f)
    return ConstraintSamples(out, accepted / max(int(tried.sum()), 1), none)


def _proposals_needed(m: int, found: np.ndarray, tried: np.ndarray) -> np.ndarray:
    """Proposals for the next round of events that found ``found`` < m feasible draws in ``tried``:
    1.25 (m - found) / a with a = (found + 1) / (tried + 2), rounded up to a power of two of at least 8,
    at most m."""
    rate = (found + 1) / (tried + 2)
    want = np.ceil(1.25 * (m - found) / rate)
    k = 2 ** np.ceil(np.log2(np.maximum(want, 8)))
    return np.minimum(k, m).astype(int)


def constraint_floor_samples(events, marginal: ConstraintMarginal, m: int, seed: int = 0, *,
                             fallback: Callable, rounds: int = 8) -> ConstraintSamples:
    """The untrained constraint sampler: c from ``marginal``, pairing uniform among the candidates,
    root uniform among the real ones (see :func:`sample_through_constraints`)."""
    _, ok = candidate_pairings(events)

    def propose(rows, k, rng):
        return _uniform_pairing(ok[rows], k, rng), marginal.draw((len(rows), k), rng)

    return sample_through_constraints(events, propose, m, seed, fallback=fallback, rounds=rounds)


def constraint_is_samples(events, marginal: ConstraintMarginal, prior: GaussianNeutrinoPrior, m: int,
                          seed: int = 0, *, proposals: int = 256, rounds: int = 4, fallback: Callable,
                          chunk: int = 256) -> ConstraintSamples:
    """Constraint importance sampling: ``proposals`` draws of (pairing, c) per event as the floor's,
    every real root weighted by pi(nu, nubar) / |det dc/d(nu, nubar)|, m draws with replacement in
    proportion to the weights (importance resampling). An event with no real root gets ``proposals``
    new draws, for at most ``rounds`` passes in all; one with none after them gets ``fallback``
    (flagged). ``acceptance`` is that of the first pass."""
    m, proposals, rounds = _check_m(m), _check_m(proposals), _check_rounds(rounds)
    jets, ok, lep, met = _kinematics(events)
    rng = np.random.default_rng(seed)
    n = len(lep)
    out = np.empty((n, m, 2, 3))
    none = np.ones(n, dtype=bool)
    proposed = accepted = 0
    for r in range(rounds):
        todo = np.flatnonzero(none)
        for start in range(0, len(todo), chunk):
            rows = todo[start:start + chunk]
            pair = _uniform_pairing(ok[rows], proposals, rng)
            c = marginal.draw((len(rows), proposals), rng)
            bj = jets[rows[:, None], pair]
            roots, valid = dilepton.solve_dilepton(c, lep[rows, None], bj, met[rows, None])
            if r == 0:
                proposed += valid.shape[0] * valid.shape[1]
                accepted += int(valid.any(axis=-1).sum())
            bj4 = np.broadcast_to(bj[:, :, None], roots.shape[:3] + (2, 4))
            with np.errstate(divide="ignore", invalid="ignore"):
                logw = prior.log_pdf(roots) - dilepton.log_abs_det_jacobian(roots, lep[rows, None, None], bj4)
            logw = np.where(valid & np.isfinite(logw), logw, -np.inf).reshape(len(rows), -1)
            flat = roots.reshape(len(rows), -1, 2, 3)
            for i, row in enumerate(rows):
                lw = logw[i]
                if not np.isfinite(lw).any():
                    continue
                w = np.exp(lw - lw.max())
                out[row] = flat[i][rng.choice(len(w), size=m, p=w / w.sum())]
                none[row] = False
        if not none.any():
            break
    if none.any():
        out[none] = fallback(int(none.sum()), rng)
    return ConstraintSamples(out, accepted / max(proposed, 1), none)


def toy_events(n: int, rng: np.random.Generator) -> dict:
    """A small read_events-like dict with exact kinematics (for examples and tests): leptons, two
    b-jets (truth-matched, b-tagged), neutrinos drawn so that m(l nu) ~ 80.4 and MET = pT(nu + nubar)
    plus 5 GeV noise per component. Not a physics sample."""

    def p4(p, mass):
        return np.concatenate([p, np.sqrt((p**2).sum(-1, keepdims=True) + mass**2)], -1)

    lep = p4(rng.normal(0, 40, (n, 2, 3)), 0.105)
    jets = p4(rng.normal(0, 60, (n, 2, 3)), 4.8)
    nu = rng.normal(0, 40, (n, 2, 3))
    return {"lep_p4": lep, "jet_p4": jets, "jet_btag": np.ones((n, 2)), "jet_mask": np.ones((n, 2), bool),
            "jet_truth_index": np.tile([0, 1], (n, 1)), "neutrino_momenta": nu,
            "met": nu[:, :, :2].sum(axis=1) + rng.normal(0, 5, (n, 2))}
