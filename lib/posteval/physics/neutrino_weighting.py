"""Neutrino weighting: the classical dileptonic ttbar neutrino reconstruction, in numpy.

For an assumed neutrino pseudorapidity eta, the W-mass constraint (l + nu)^2 = mW^2 and the
top-mass constraint (l + b + nu)^2 = mt^2 are two equations linear in (nu_x, nu_y) once
pT(nu) is fixed, so (nu_x, nu_y) = pT u + v, and nu_x^2 + nu_y^2 = pT^2 is a quadratic in pT
with up to two roots (:func:`solve_neutrino`). The scan runs over eta(nu) and eta(nubar) on a
grid, with top and W masses drawn along the grid from their Breit-Wigner line shapes (widened
by the detector resolution), over both roots, and over the lepton-b assignments of the
candidate b-jets. Each (nu, nubar) solution pair gets the weight

    w = exp(-|pT(nu) + pT(nubar) - MET|^2 / (2 sigma_MET^2)) * p(eta) * p(eta_bar)

with a Gaussian pseudorapidity prior p(eta). The result per event is this weighted set of
solutions: its best point, its weighted mean, m draws from it, and its k heaviest members.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtri

from . import fourvectors as fv
from .kinematics import reconstruct_ttbar, truth_matched_bjets
from posteval.progress import tqdm

# Assignments (jet for b with l+, jet for bbar with l-) among three candidate jets.
_PAIRS = np.array([(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)])


@dataclass(frozen=True)
class WeightingConfig:
    """Settings of the neutrino weighting.

    Attributes
    ----------
    eta_grid : tuple of float
        Neutrino pseudorapidities scanned for nu and for nubar.
    eta_prior_sigma : float
        Width of the Gaussian prior on each neutrino's eta (None: flat). Default: the spread
        of true neutrino eta in our selected shower sample (see :func:`calibrate`).
    top_mass, w_mass : float
        GeV; the generator's top mass (172.5) and Pythia's W mass (80.385).
    top_width, w_width : float
        GeV; Breit-Wigner widths of the masses imposed across the eta grid (Pythia 8.317 with
        m_t = 172.5: 1.34 and 2.09; see :func:`_mass_scan`). 0 imposes the pole masses.
    top_mass_sigma, w_mass_sigma : float
        GeV; Gaussian detector resolution added to the imposed masses (0 for truth inputs;
        :func:`calibrate` measures it).
    mass_seed : int
        Seed of the order of the stratified masses along the grid.
    met_sigma : float
        GeV, per-component MET resolution in the weight (detector level: see :func:`calibrate`).
    max_met_chi2 : float
        Solution pairs with |pT(nu) + pT(nubar) - MET|^2 / sigma_MET^2 above this are discarded
        (16: a 4-sigma disagreement); an event whose pairs are all discarded has no solution.
    bjet_response : float
        Mean pT(jet) / pT(b quark) of b-jets; jets are divided by it before solving (1 for
        parton-level inputs).
    jacobian : bool
        Multiply each solution's weight by :func:`solution_jacobian`, so that the prior is a
        density over the neutrino momenta rather than over (eta, m_top, m_w) (default False:
        the classical weights).
    chunk_events : int
        Events per vectorised block (memory about chunk * 6 * (2 * len(eta_grid))^2 * 12 bytes).
    """

    eta_grid: tuple = field(default_factory=lambda: tuple(float(x) for x in np.linspace(-4.0, 4.0, 41)))
    eta_prior_sigma: float | None = 1.4
    top_mass: float = 172.5
    w_mass: float = 80.385
    top_width: float = 1.34
    w_width: float = 2.09
    top_mass_sigma: float = 0.0
    w_mass_sigma: float = 0.0
    mass_seed: int = 0
    met_sigma: float = 15.0
    max_met_chi2: float = 16.0
    bjet_response: float = 1.0
    jacobian: bool = False
    chunk_events: int = 64


@dataclass
class WeightingResult:
    """Neutrino-weighting output for n events (momenta (px, py, pz) in GeV, nu then nubar).

    Attributes
    ----------
    has_solution : (n,) bool
        At least one solution pair with non-zero weight.
    n_solutions : (n,) int
        Valid (nu, nubar) solution pairs scanned.
    best, mean : (n, 2, 3)
        Highest-weight solution and weighted mean solution.
    best_jets : (n, 2) int
        Jet indices (into the input jets) assigned to b and bbar in the best solution.
    top_solutions, top_weights, top_jets : (n, k, 2, 3), (n, k), (n, k, 2)
        The k heaviest solutions, their weights normalised to sum 1 per event, and their jets.
    kept_weight : (n,)
        Fraction of the event's total weight carried by those k solutions.
    samples, sample_jets : (n, m, 2, 3), (n, m, 2)
        m draws (with replacement) from all solutions in proportion to their weights, and
        their jets (m = the ``m_samples`` argument, possibly 0).
    Events without a solution hold the fallback everywhere: nu_T = nubar_T = MET / 2, pz = 0,
    the leading candidate jets, weight 1 on the first of k copies.
    """

    has_solution: np.ndarray
    n_solutions: np.ndarray
    best: np.ndarray
    mean: np.ndarray
    best_jets: np.ndarray
    top_solutions: np.ndarray
    top_weights: np.ndarray
    top_jets: np.ndarray
    kept_weight: np.ndarray
    samples: np.ndarray
    sample_jets: np.ndarray


def _linear_solution(lepton_p4, b_p4, eta, m_top, m_w) -> dict:
    """The pieces of :func:`solve_neutrino`: nu_T = pT u + v, the quadratic in pT and its roots."""
    lep = np.asarray(lepton_p4, dtype=np.float64)
    b = np.asarray(b_p4, dtype=np.float64)
    if lep.shape[-1:] != (4,) or b.shape[-1:] != (4,):
        raise ValueError(f"lepton_p4 and b_p4 must end in 4 components, got {lep.shape}, {b.shape}")
    eta = np.asarray(eta, dtype=np.float64)
    ch, sh = np.cosh(eta), np.sinh(eta)
    lb = lep + b
    m2_l = lep[..., 3] ** 2 - np.sum(lep[..., :3] ** 2, axis=-1)
    m2_lb = lb[..., 3] ** 2 - np.sum(lb[..., :3] ** 2, axis=-1)
    c1 = 0.5 * (np.asarray(m_w, dtype=np.float64) ** 2 - m2_l)
    c2 = 0.5 * (np.asarray(m_top, dtype=np.float64) ** 2 - m2_lb)
    a1 = lep[..., 3] * ch - lep[..., 2] * sh
    a2 = lb[..., 3] * ch - lb[..., 2] * sh
    det = lep[..., 0] * lb[..., 1] - lep[..., 1] * lb[..., 0]
    safe = np.where(np.abs(det) > 1e-9, det, 1.0)
    # (x, y) = M^-1 (a pT - c) with M = [[l_x, l_y], [lb_x, lb_y]]
    ux = (lb[..., 1] * a1 - lep[..., 1] * a2) / safe
    uy = (-lb[..., 0] * a1 + lep[..., 0] * a2) / safe
    vx = -(lb[..., 1] * c1 - lep[..., 1] * c2) / safe
    vy = -(-lb[..., 0] * c1 + lep[..., 0] * c2) / safe
    qa = ux**2 + uy**2 - 1.0
    qb = 2.0 * (ux * vx + uy * vy)
    qc = vx**2 + vy**2
    disc = qb**2 - 4.0 * qa * qc
    sq = np.sqrt(np.maximum(disc, 0.0))
    linear = np.abs(qa) < 1e-12
    qa_safe = np.where(linear, 1.0, qa)
    roots = np.stack([(-qb + sq) / (2 * qa_safe), (-qb - sq) / (2 * qa_safe)], axis=-1)
    lin_root = -qc / np.where(np.abs(qb) > 0, qb, 1.0)
    roots = np.where(linear[..., None], lin_root[..., None], roots)
    valid = (disc >= 0)[..., None] & (roots > 0) & (np.abs(det) > 1e-9)[..., None] & np.isfinite(roots)
    return dict(lep=lep, lb=lb, ch=ch, sh=sh, safe=safe, ux=ux, uy=uy, vx=vx, vy=vy,
                pt=np.where(valid, roots, 0.0), valid=valid)


def solve_neutrino(lepton_p4, b_p4, eta, m_top, m_w) -> tuple[np.ndarray, np.ndarray]:
    """Neutrino momenta that satisfy the W and top mass constraints at a given pseudorapidity.

    Parameters
    ----------
    lepton_p4, b_p4 : array_like, shape (..., 4)
        Charged lepton and b four-vectors (px, py, pz, E), GeV.
    eta : array_like
        Neutrino pseudorapidity (broadcast against the others).
    m_top, m_w : array_like
        Masses imposed on (l + b + nu) and (l + nu), GeV.

    Returns
    -------
    nu : ndarray, shape (..., 2, 3)
        (px, py, pz) for the two roots of the quadratic (zeros where invalid).
    valid : ndarray of bool, shape (..., 2)
        Root is real with pT > 0.
    """
    q = _linear_solution(lepton_p4, b_p4, eta, m_top, m_w)
    pt_nu, valid = q["pt"], q["valid"]
    nu = np.stack([pt_nu * q["ux"][..., None] + q["vx"][..., None], pt_nu * q["uy"][..., None] + q["vy"][..., None],
                   pt_nu * q["sh"][..., None]], axis=-1)
    return np.where(valid[..., None], nu, 0.0), valid


def solution_jacobian(lepton_p4, b_p4, eta, m_top, m_w) -> np.ndarray:
    """|det d(px, py, pz) / d(eta, m_top, m_w)| of each root of :func:`solve_neutrino`, GeV.

    The density of the scanned solutions in momentum space is the density of the scan in
    (eta, m_top, m_w) divided by this factor; weights multiplied by it describe a posterior whose
    prior (the eta prior times the mass line shapes) is a density over the neutrino momentum.
    It diverges where the two roots merge (zero discriminant). Shape (..., 2), 0 where invalid.
    """
    q = _linear_solution(lepton_p4, b_p4, eta, m_top, m_w)
    lep, lb, safe, sh, ch = q["lep"], q["lb"], q["safe"], q["sh"], q["ch"]
    ux, uy, vx, vy = (q[k][..., None] for k in ("ux", "uy", "vx", "vy"))
    pt = q["pt"]
    nx, ny = pt * ux + vx, pt * uy + vy
    # derivatives of u (eta only) and v (masses only), with c1 = (mW^2 - ml^2)/2, c2 = (mt^2 - mlb^2)/2
    da1 = lep[..., 3] * sh - lep[..., 2] * ch
    da2 = lb[..., 3] * sh - lb[..., 2] * ch
    dux = ((lb[..., 1] * da1 - lep[..., 1] * da2) / safe)[..., None]
    duy = ((-lb[..., 0] * da1 + lep[..., 0] * da2) / safe)[..., None]
    m_w = np.asarray(m_w, dtype=np.float64)
    m_top = np.asarray(m_top, dtype=np.float64)
    zero = np.zeros_like(nx)
    # partial derivatives at fixed pT, columns (eta, m_top, m_w): dc1/dm_w = m_w, dc2/dm_top = m_top
    dvx_dmw = (-lb[..., 1] / safe * m_w)[..., None] + zero
    dvy_dmw = (lb[..., 0] / safe * m_w)[..., None] + zero
    dvx_dmt = (lep[..., 1] / safe * m_top)[..., None] + zero
    dvy_dmt = (-lep[..., 0] / safe * m_top)[..., None] + zero
    partial_x = np.stack([pt * dux, dvx_dmt, dvx_dmw], axis=-1)
    partial_y = np.stack([pt * duy, dvy_dmt, dvy_dmw], axis=-1)
    partial_z = np.stack([pt * ch[..., None] + zero, zero, zero], axis=-1)
    # pT follows the constraint F = nx^2 + ny^2 - pT^2 = 0: dpT = -(dF/dtheta) / (dF/dpT)
    dF_dtheta = 2 * (nx[..., None] * partial_x + ny[..., None] * partial_y)
    dF_dpt = 2 * (nx * ux + ny * uy - pt)
    ok = q["valid"] & (np.abs(dF_dpt) > 1e-12)
    dpt = -dF_dtheta / np.where(ok, dF_dpt, 1.0)[..., None]
    jac = np.stack([partial_x + ux[..., None] * dpt, partial_y + uy[..., None] * dpt,
                    partial_z + (sh[..., None] + zero)[..., None] * dpt], axis=-2)
    return np.where(ok, np.abs(np.linalg.det(jac)), 0.0)


def candidate_assignments(jet_p4, jet_btag, jet_mask) -> tuple[np.ndarray, np.ndarray]:
    """Lepton-b assignments to try: (n, 6, 2) jet indices (b, bbar) and (n, 6) validity.

    Candidates are the b-tagged jets by decreasing pT, then untagged ones, three at most.
    Two or more tags: pairs of tagged jets; one tag: the tagged jet with either of the two
    leading untagged jets; no tag: the two leading jets. Both orders of each pair.
    """
    jets = np.asarray(jet_p4, dtype=np.float64)
    tag = np.asarray(jet_btag) > 0
    mask = np.asarray(jet_mask, dtype=bool)
    score = np.where(mask, fv.pt(jets) + 1e6 * (tag & mask), -np.inf)
    n_cand = min(3, jets.shape[1])
    order = np.argsort(-score, axis=1, kind="stable")[:, :n_cand]
    if n_cand < 3:
        order = np.concatenate([order, np.zeros((len(jets), 3 - n_cand), dtype=order.dtype)], axis=1)
    exists = np.take_along_axis(mask, order, axis=1) & (np.arange(3) < n_cand)
    n_tags = (tag & mask).sum(axis=1)
    pairs = order[:, _PAIRS]  # (n, 6, 2)
    ok = exists[:, _PAIRS].all(axis=2)
    rank_ok = np.where(n_tags[:, None] >= 2, _PAIRS.max(axis=1)[None] < np.minimum(n_tags, 3)[:, None],
                       np.where(n_tags[:, None] == 1, (_PAIRS == 0).any(axis=1)[None],
                                (_PAIRS.max(axis=1) < 2)[None]))
    return pairs, ok & rank_ok


def _validate_inputs(leptons_p4, jet_p4, jet_btag, jet_mask, met):
    lep = np.asarray(leptons_p4, dtype=np.float64)
    jets = np.asarray(jet_p4, dtype=np.float64)
    met = np.asarray(met, dtype=np.float64)
    n = len(lep)
    if lep.shape != (n, 2, 4):
        raise ValueError(f"leptons_p4 must have shape (n, 2, 4), got {lep.shape}")
    if n == 0:
        raise ValueError("leptons_p4 is empty: no events")
    if jets.ndim != 3 or jets.shape[0] != n or jets.shape[2] != 4 or jets.shape[1] < 2:
        raise ValueError(f"jet_p4 must have shape ({n}, J>=2, 4), got {jets.shape}")
    if np.shape(jet_btag) != jets.shape[:2] or np.shape(jet_mask) != jets.shape[:2]:
        raise ValueError(f"jet_btag and jet_mask must have shape {jets.shape[:2]}")
    if met.shape != (n, 2):
        raise ValueError(f"met must have shape ({n}, 2), got {met.shape}")
    for name, a in (("leptons_p4", lep), ("jet_p4", jets), ("met", met)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} contains NaN or inf")
    return lep, jets, np.asarray(jet_btag), np.asarray(jet_mask, dtype=bool), met


def _mass_scan(cfg: WeightingConfig) -> np.ndarray:
    """(2, G, 2): top and W mass per eta grid point, for the nu side and the nubar side.

    Each mass is a stratified draw from a Voigt profile: the Breit-Wigner quantile at
    (i + 1/2) / G (half-width Gamma / 2) plus the Gaussian quantile at (j + 1/2) / G
    (``*_mass_sigma``), with i and j in orders fixed by ``mass_seed`` (different per mass, side
    and term), so the eta scan also integrates over the masses at no extra cost.
    """

    g = len(cfg.eta_grid)
    u = (np.arange(g) + 0.5) / g
    bw, gauss = np.tan(np.pi * (u - 0.5)), ndtri(u)
    rng = np.random.default_rng(cfg.mass_seed)
    out = np.empty((2, g, 2))
    for side in (0, 1):
        for k, (mass, width, sigma) in enumerate(((cfg.top_mass, cfg.top_width, cfg.top_mass_sigma),
                                                  (cfg.w_mass, cfg.w_width, cfg.w_mass_sigma))):
            out[side, :, k] = mass + 0.5 * width * bw[rng.permutation(g)] + sigma * gauss[rng.permutation(g)]
    return np.maximum(out, 1.0)


def _draw(w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Per row of weights ``w`` (b, L), the indices whose cumulative share first exceeds ``u`` (b, m)."""
    b, length = w.shape
    cdf = np.cumsum(w, axis=1, dtype=np.float64)
    cdf /= np.maximum(cdf[:, -1:], 1e-300)
    rows = np.arange(b)[:, None]
    # Offset each row by its index so that one searchsorted serves all rows.
    flat = np.searchsorted((cdf + rows).ravel(), (u + rows).ravel(), side="right").reshape(u.shape)
    return np.clip(flat - rows * length, 0, length - 1)


def _block_solutions(lep, cand, ok, cfg) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per side (nu, then nubar): the solutions (b, A, S, 3) of every assignment of ``cand`` (b, A, 2, 4) over
    the eta and mass scan, and their weights before the MET term (b, A, S) in float32 (a valid solution of an
    allowed assignment, times the eta prior, times the Jacobian when ``cfg.jacobian``)."""
    eta = np.asarray(cfg.eta_grid, dtype=np.float64)
    masses = _mass_scan(cfg)
    b, n_a = ok.shape
    prior = np.ones_like(eta) if cfg.eta_prior_sigma is None else np.exp(-0.5 * (eta / cfg.eta_prior_sigma) ** 2)
    sols = []
    for side in (0, 1):
        nu, valid = solve_neutrino(lep[:, None, side, None, :], cand[:, :, side, None, :],
                                   eta, masses[side, :, 0], masses[side, :, 1])
        s = nu.shape[2] * 2
        p = valid * prior[:, None] * ok[:, :, None, None]
        if cfg.jacobian:
            p = p * solution_jacobian(lep[:, None, side, None, :], cand[:, :, side, None, :],
                                      eta, masses[side, :, 0], masses[side, :, 1])
        p = p.reshape(b, n_a, s).astype(np.float32)
        sols.append((nu.reshape(b, n_a, s, 3), p))
    return sols


def _met_weights(nu1, p1, nu2, p2, met, cfg) -> np.ndarray:
    """(b, A * S * S) float32 weight of every (assignment, nu solution, nubar solution): the two solutions'
    weights times exp(-chi2 / 2) of the MET agreement, 0 where chi2 > ``cfg.max_met_chi2``."""
    # chi2 of the MET agreement, |r_i + t_j|^2 / sigma^2 with r = nu_T - MET and t = nubar_T.
    r = ((nu1[..., :2] - met[:, None, None, :]) / cfg.met_sigma).astype(np.float32)
    t = (nu2[..., :2] / cfg.met_sigma).astype(np.float32)
    chi2 = np.matmul(r, np.swapaxes(t, -1, -2))
    chi2 *= 2.0
    chi2 += np.sum(r**2, -1)[..., :, None]
    chi2 += np.sum(t**2, -1)[..., None, :]
    np.minimum(chi2, np.float32(2 * cfg.max_met_chi2), out=chi2)
    w = np.exp(np.float32(-0.5) * chi2)
    w *= p1[..., :, None]
    w *= p2[..., None, :]
    w *= chi2 <= cfg.max_met_chi2
    return w.reshape(len(nu1), -1)


def _gather(index, nu1, nu2, pairs) -> tuple[np.ndarray, np.ndarray]:
    """The (nu, nubar) solutions and the jet pairs at flat indices ``index`` (b,) or (b, m) of the weights."""
    b, s = nu1.shape[0], nu1.shape[2]
    a, rest = np.divmod(index, s * s)
    i, j = np.divmod(rest, s)
    rows = np.arange(b)[:, None] if index.ndim == 2 else np.arange(b)
    sol = np.stack([nu1[rows, a, i], nu2[rows, a, j]], axis=-2)
    return sol, pairs[rows, a]


def _top_k(w: np.ndarray, k_top: int) -> np.ndarray:
    """Per row of ``w``, the indices of its ``k_top`` largest weights, heaviest first."""
    k = min(k_top, w.shape[1])
    if k == 1:
        return np.argmax(w, axis=1)[:, None]
    idx = np.argpartition(-w, k - 1, axis=1)[:, :k]
    return np.take_along_axis(idx, np.argsort(-np.take_along_axis(w, idx, axis=1), axis=1, kind="stable"), axis=1)


def _draw_two_stages(wt: np.ndarray, marginal_nu: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Flat indices (b, m) drawn from the weights ``wt`` (b, A, S, S) with the uniforms ``u`` (b, m, 2):
    (assignment, nu solution) from the marginal, then the nubar solution."""
    b, _, s, _ = wt.shape
    m = u.shape[1]
    first = _draw(marginal_nu.reshape(b, -1), u[..., 0])
    a, i = np.divmod(first, s)
    rows = wt[np.arange(b)[:, None], a, i]  # (b, m, S)
    j = _draw(rows.reshape(b * m, s), u[..., 1].reshape(b * m, 1)).reshape(b, m)
    return a * s * s + i * s + j


def _weigh_block(lep, jets, pairs, ok, met, cfg, k_top, u):
    """Solutions and weights for one block of events; see :func:`weigh_solutions`."""
    n_a = int(max(ok.sum(axis=1).max(), 1))
    # Valid assignments first, keep as many as the block needs.
    order = np.argsort(~ok, axis=1, kind="stable")[:, :n_a]
    pairs = np.take_along_axis(pairs, order[..., None], axis=1)
    ok = np.take_along_axis(ok, order, axis=1)
    b = len(lep)
    cand = jets[np.arange(b)[:, None, None], pairs] / cfg.bjet_response  # (b, A, 2, 4)
    (nu1, p1), (nu2, p2) = _block_solutions(lep, cand, ok, cfg)
    w = _met_weights(nu1, p1, nu2, p2, met, cfg)
    s = nu1.shape[2]
    n_valid = np.count_nonzero(w, axis=1)
    has = n_valid > 0

    def gather(index):
        return _gather(index, nu1, nu2, pairs)

    best_sol, best_jets = gather(np.argmax(w, axis=1))
    wt = w.reshape(b, n_a, s, s)
    total = np.maximum(w.sum(axis=1, dtype=np.float64), 1e-300)
    marginal_nu = wt.sum(axis=3, dtype=np.float64)  # (b, A, S): summed over the nubar solutions
    mean = np.stack([np.einsum("bai,baic->bc", marginal_nu, nu1),
                     np.einsum("baj,bajc->bc", wt.sum(axis=2, dtype=np.float64), nu2)], axis=1) / total[:, None, None]
    idx = _top_k(w, k_top)
    top_sol, top_jets = gather(idx)
    top_w = np.take_along_axis(w, idx, axis=1).astype(np.float64)
    kept = top_w.sum(axis=1) / total
    top_w = top_w / np.maximum(top_w.sum(axis=1, keepdims=True), 1e-300)
    if u.shape[1]:
        drawn_sol, drawn_jets = gather(_draw_two_stages(wt, marginal_nu, u))
    else:
        drawn_sol, drawn_jets = np.zeros((b, 0, 2, 3)), np.zeros((b, 0, 2), dtype=pairs.dtype)
    return has, n_valid, best_sol, mean, best_jets, top_sol, top_w, top_jets, kept, drawn_sol, drawn_jets


def fallback_solution(met: np.ndarray) -> np.ndarray:
    """(n, 2, 3): nu_T = nubar_T = MET / 2 and pz = 0, the guess for events without a solution."""
    met = np.asarray(met, dtype=np.float64)
    half = np.concatenate([met / 2, np.zeros((len(met), 1))], axis=1)
    return np.stack([half, half], axis=1)


def weigh_solutions(leptons_p4, jet_p4, jet_btag, jet_mask, met, config: WeightingConfig | None = None,
                    *, k_top: int = 32, m_samples: int = 0, seed: int = 0,
                    progress: bool = False) -> WeightingResult:
    """Neutrino weighting for n events.

    Parameters
    ----------
    leptons_p4 : array_like, shape (n, 2, 4)
        (l+, l-) four-vectors, GeV.
    jet_p4 : array_like, shape (n, J, 4)
        Jets (or, at truth level, the b quarks) with ``jet_btag`` and ``jet_mask`` of shape (n, J).
    met : array_like, shape (n, 2)
        Missing transverse momentum (x, y), GeV.
    config : WeightingConfig, optional
        Settings (default :class:`WeightingConfig`).
    k_top : int
        Heaviest solutions kept per event.
    m_samples : int
        Draws per event from the full weighted solution set (``samples``, ``sample_jets``).
    seed : int
        Seed of those draws.
    progress : bool
        tqdm bar over event blocks.
    """
    cfg = WeightingConfig() if config is None else config
    if cfg.met_sigma <= 0 or cfg.bjet_response <= 0 or int(cfg.chunk_events) < 1:
        raise ValueError("config.met_sigma, config.bjet_response and config.chunk_events must be positive")
    if int(k_top) < 1:
        raise ValueError(f"k_top must be >= 1, got {k_top}")
    if int(m_samples) < 0:
        raise ValueError(f"m_samples must be >= 0, got {m_samples}")
    rng = np.random.default_rng(seed)
    lep, jets, tag, mask, met = _validate_inputs(leptons_p4, jet_p4, jet_btag, jet_mask, met)
    pairs, ok = candidate_assignments(jets, tag, mask)
    n = len(lep)
    parts = []
    for start in tqdm(range(0, n, int(cfg.chunk_events)), desc="neutrino weighting", disable=not progress):
        sl = slice(start, start + int(cfg.chunk_events))
        u = rng.random((len(lep[sl]), int(m_samples), 2))
        parts.append(_weigh_block(lep[sl], jets[sl], pairs[sl], ok[sl], met[sl], cfg, int(k_top), u))
    has, n_valid, best, mean, best_jets, top_sol, top_w, top_jets, kept, drawn, drawn_jets = (
        np.concatenate([p[i] for p in parts]) for i in range(11))
    k = top_sol.shape[1]
    fb = fallback_solution(met)
    best = np.where(has[:, None, None], best, fb)
    mean = np.where(has[:, None, None], mean, fb)
    best_jets = np.where(has[:, None], best_jets, pairs[:, 0])
    top_sol = np.where(has[:, None, None, None], top_sol, fb[:, None])
    top_w = np.where(has[:, None], top_w, np.eye(1, k)[0][None])
    top_jets = np.where(has[:, None, None], top_jets, pairs[:, :1])
    kept = np.where(has, kept, 1.0)
    drawn = np.where(has[:, None, None, None], drawn, fb[:, None])
    drawn_jets = np.where(has[:, None, None], drawn_jets, pairs[:, :1])
    return WeightingResult(has, n_valid, best, mean, best_jets, top_sol, top_w, top_jets, kept, drawn, drawn_jets)


def sample_solutions(result: WeightingResult, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """m draws per event from the k heaviest solutions kept by :func:`weigh_solutions`.

    (For draws from the full weighted set use ``weigh_solutions(..., m_samples=m)``.)

    Returns
    -------
    samples : ndarray, shape (n, m, 2, 3)
        (px, py, pz) of nu and nubar per draw; events without a solution get m copies of the
        fallback (MET split in two, pz = 0).
    jets : ndarray of int, shape (n, m, 2)
        Jet indices used as b and bbar by each draw.
    has_solution : ndarray of bool, shape (n,)
    """
    if int(m) < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    w = result.top_weights
    pick = _draw(w, np.random.default_rng(seed).random((len(w), int(m))))
    rows = np.arange(len(w))[:, None]
    return result.top_solutions[rows, pick], result.top_jets[rows, pick], result.has_solution.copy()


def _robust_sigma(x: np.ndarray) -> float:
    q25, q75 = np.percentile(x, [25, 75])
    return float((q75 - q25) / 1.349)


def calibrate(events: dict, base: WeightingConfig | None = None, met_sigma_scale: float = 2.0) -> WeightingConfig:
    """Detector-level settings measured on a training sample (a :func:`read_events` dict of our files).

    Sets ``bjet_response`` (median pT(jet) / pT(b) of truth-matched b-jets), ``met_sigma``
    (``met_sigma_scale`` times the robust spread of MET - pT(nu + nubar) per component; the
    factor 2, chosen on a training sample, lets the weight absorb the eta-grid spacing and the
    mass scan), ``eta_prior_sigma`` (spread of the
    true neutrino eta), and ``top_mass`` / ``top_mass_sigma`` and ``w_mass`` / ``w_mass_sigma``
    (median and robust spread of m(l nu b) and m(l nu) built from detector leptons, corrected
    matched b-jets and the true neutrinos). Spreads are IQR / 1.349.
    """

    needed = ("jet_p4", "jet_truth_index", "b_p4", "met", "nu_p4", "lep_p4")
    missing = [k for k in needed if k not in events]
    if missing:
        raise ValueError(f"events lacks {missing}: calibration needs one of our files with truth")
    base = WeightingConfig() if base is None else base
    if met_sigma_scale <= 0:
        raise ValueError(f"met_sigma_scale must be positive, got {met_sigma_scale}")
    bjets, both = truth_matched_bjets(events["jet_p4"], events["jet_truth_index"])
    if both.sum() < 10:
        raise ValueError("events has fewer than 10 events with both b-jets matched: too few to calibrate")
    response = float(np.median(fv.pt(bjets[both]) / fv.pt(events["b_p4"][both])))
    nu = events["nu_p4"]
    met_res = np.asarray(events["met"], dtype=np.float64) - nu[..., :2].sum(axis=1)
    rec = reconstruct_ttbar(events["lep_p4"][both], bjets[both] / response, nu[both][..., :3])
    m_top, m_w = rec["m_lnub"].ravel(), rec["m_lnu"].ravel()
    return dataclasses.replace(
        base,
        bjet_response=response,
        met_sigma=float(met_sigma_scale) * _robust_sigma(met_res.ravel()),
        eta_prior_sigma=_robust_sigma(fv.eta(nu).ravel()),
        top_mass=float(np.median(m_top)), top_mass_sigma=_robust_sigma(m_top),
        w_mass=float(np.median(m_w)), w_mass_sigma=_robust_sigma(m_w),
    )


def truth_level_inputs(events: dict) -> dict[str, np.ndarray]:
    """Inputs with perfect resolution: W leptons after QED radiation, b quarks as the two
    (tagged) jets, MET = pT(nu + nubar). Keyword arguments for :func:`weigh_solutions`."""
    n = len(events["b_p4"])
    return {"leptons_p4": events["lep_truth_p4"], "jet_p4": events["b_p4"],
            "jet_btag": np.ones((n, 2)), "jet_mask": np.ones((n, 2), dtype=bool),
            "met": events["nu_p4"][..., :2].sum(axis=1)}


def detector_level_inputs(events: dict) -> dict[str, np.ndarray]:
    """Detector leptons, jets with b-tags and MET of a :func:`read_events` dict, as keyword
    arguments for :func:`weigh_solutions`."""
    return {"leptons_p4": events["lep_p4"], "jet_p4": events["jet_p4"], "jet_btag": events["jet_btag"],
            "jet_mask": events["jet_mask"], "met": events["met"]}


def neutrino_weighting_samples(events: dict, m: int, seed: int = 0, config: WeightingConfig | None = None,
                               *, progress: bool = False):
    """m neutrino-weighting draws per event of a :func:`read_events` dict (detector level).

    Returns
    -------
    samples : ndarray, shape (n, m, 2, 3)
        (px, py, pz) of nu and nubar, GeV, drawn with replacement from all the event's
        solutions in proportion to their weights (seeded by ``seed``).
    bjets_p4 : ndarray, shape (n, m, 2, 4)
        The jets (b, bbar) of each draw, as stored (not response-corrected), for
        :func:`posteval.physics.kinematics.reconstruct_ttbar`.
    has_solution : ndarray of bool, shape (n,)
        False where the event had no solution; its draws are then the fallback
        (nu_T = nubar_T = MET / 2, pz = 0) with the two leading candidate jets.
    """
    inputs = detector_level_inputs(events)
    if int(m) < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    result = weigh_solutions(**inputs, config=config, k_top=1, m_samples=m, seed=seed, progress=progress)
    jet_p4 = np.asarray(inputs["jet_p4"], dtype=np.float64)
    rows = np.arange(len(jet_p4))[:, None, None]
    return result.samples, jet_p4[rows, result.sample_jets], result.has_solution
