"""The analytic dilepton solution: the six constraint variables of a dileptonic ttbar event and the
map from them back to the two neutrinos, in numpy, batched over events and draws.

The *constraint variables* of an event with leptons (l+, l-), b-jets (b, bbar), missing transverse
momentum MET and massless neutrinos (nu, nubar) are

    c = (m(l+ nu), m(l+ nu b), m(l- nubar), m(l- nubar bbar), r_x, r_y),   r = MET - pT(nu) - pT(nubar).

Given c, the neutrinos follow from a quartic (Sonnenschein 2006). Per side, with x the neutrino's
transverse momentum, c1 = (m_W^2 - m_l^2) / 2, c2 = (m_t^2 - m_lb^2) / 2 (lb = l + b) and
D = l_z E_lb - E_l lb_z, the two mass constraints are linear in (p_z, E):

    E   = [-lb_z (c1 + l_T.x) + l_z (c2 + lb_T.x)] / D,
    p_z = [ E_l (c2 + lb_T.x) - E_lb (c1 + l_T.x)] / D,

and E^2 = |x|^2 + p_z^2 is an ellipse [x, 1]^T Q [x, 1] = 0 (Q symmetric 3x3). With N = -Q[:2, :2]
= L L^T, centre x0 = N^-1 Q[:2, 2] and kappa = Q_22 + x0^T N x0 (> 0 where the masses admit a real
neutrino), x(t) = x0 + sqrt(kappa) L^-T (cos t, sin t). The antineutrino's transverse momentum is
T - x, T = MET - r; putting x(t) into side 2's ellipse gives g(t) = v^T G v, v = (cos t, sin t, 1),
G = (K W)^T Q2 (K W) (W the parametrisation, K the reflection x -> T - x), a quartic in u = tan(t/2)

    a4 = G00 - 2 G02 + G22, a3 = 4 (G12 - G01), a2 = -2 G00 + 4 G11 + 2 G22, a1 = 4 (G01 + G12),
    a0 = G00 + 2 G02 + G22,

with 0, 2 or 4 real roots, found as the eigenvalues of its companion matrix and polished by Newton
steps on t. Every real root is one (nu, nubar) with exactly these constraint variables.

Away from the folds where two roots merge the map is a bijection per root, with (closed form)

    |det dc / d(nu, nubar)| = |n1_x n2_y - n1_y n2_x| / (m(l+ nu) m(l+ nu b) m(l- nubar) m(l- nubar bbar)),

n_i = (E_l nû - l) x (E_lb nû - lb) for each side (nû the neutrino's unit vector): the normal of the
side's two mass constraints, whose transverse part vanishes where two roots merge.

References: J. Sonnenschein, Phys. Rev. D 73 (2006) 054015 (the analytic solution);
B. A. Betchart, R. Demina and A. Harel, Nucl. Instrum. Meth. A 736 (2014) 169 (the ellipse form);
``shared/notes/constraint_coordinates.md`` (the measurement that motivates sampling c).

Example
-------
>>> rng = np.random.default_rng(0)
>>> lep = np.array([[30., 10., 20., 0.], [-25., 5., -40., 0.]]); lep[:, 3] = np.linalg.norm(lep[:, :3], axis=1)
>>> b = np.array([[40., -30., 10., 0.], [-20., -35., 60., 0.]]); b[:, 3] = np.sqrt((b[:, :3]**2).sum(1) + 4.8**2)
>>> nu = np.array([[20., 25., -30.], [-15., -20., 50.]])
>>> c = constraint_variables(nu, lep, b, nu[:, :2].sum(0) + [3., -2.])
>>> roots, ok = solve_dilepton(c, lep, b, nu[:, :2].sum(0) + [3., -2.])
>>> roots.shape, int(ok.sum()) in (2, 4)
((4, 2, 3), True)
>>> bool(np.abs(roots[ok] - nu).max(axis=(1, 2)).min() < 1e-6)   # the true neutrinos are a root
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["constraint_variables", "solve_dilepton", "log_abs_det_jacobian", "N_CONSTRAINTS", "MAX_ROOTS"]

N_CONSTRAINTS = 6
MAX_ROOTS = 4
_NEWTON_STEPS = 12


def _as(name: str, a, last: tuple) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.shape[-len(last):] != last:
        raise ValueError(f"{name} must end in shape {last}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def _massless(nu: np.ndarray) -> np.ndarray:
    return np.concatenate([nu, np.linalg.norm(nu, axis=-1, keepdims=True)], axis=-1)


def _mass(p4: np.ndarray) -> np.ndarray:
    return np.sqrt(np.maximum(p4[..., 3] ** 2 - np.sum(p4[..., :3] ** 2, axis=-1), 0.0))


def constraint_variables(neutrinos, leptons_p4, bjets_p4, met) -> np.ndarray:
    """The six constraint variables c (..., 6) of (nu, nubar) given the event (see the module).

    Parameters
    ----------
    neutrinos : array_like, shape (..., 2, 3)
        (nu, nubar) momenta (px, py, pz), GeV, massless.
    leptons_p4, bjets_p4 : array_like, shape (..., 2, 4)
        (l+, l-) and (b, bbar) four-vectors (px, py, pz, E), GeV; broadcast against ``neutrinos``.
    met : array_like, shape (..., 2)
        Missing transverse momentum (x, y), GeV.

    Returns
    -------
    ndarray (..., 6): (m(l+ nu), m(l+ nu b), m(l- nubar), m(l- nubar bbar), r_x, r_y), GeV.
    """
    nu = _as("neutrinos", neutrinos, (2, 3))
    lep, bj = _as("leptons_p4", leptons_p4, (2, 4)), _as("bjets_p4", bjets_p4, (2, 4))
    met = _as("met", met, (2,))
    nu4 = _massless(nu)
    w = lep + nu4
    m_w, m_t = _mass(w), _mass(w + bj)
    r = met - nu[..., 0, :2] - nu[..., 1, :2]
    shape = np.broadcast_shapes(m_w.shape, m_t.shape, r.shape)
    m_w, m_t, r = (np.broadcast_to(a, shape) for a in (m_w, m_t, r))
    return np.stack([m_w[..., 0], m_t[..., 0], m_w[..., 1], m_t[..., 1], r[..., 0], r[..., 1]], axis=-1)


def _side(lep, lb, m_w, m_t):
    """E = e0 + e.x and p_z = z0 + z.x of one side, and its ellipse matrix Q (..., 3, 3)."""
    m2_l = lep[..., 3] ** 2 - np.sum(lep[..., :3] ** 2, axis=-1)
    m2_lb = lb[..., 3] ** 2 - np.sum(lb[..., :3] ** 2, axis=-1)
    c1, c2 = 0.5 * (m_w**2 - m2_l), 0.5 * (m_t**2 - m2_lb)
    d = lep[..., 2] * lb[..., 3] - lep[..., 3] * lb[..., 2]
    ok = np.abs(d) > 1e-9
    d = np.where(ok, d, 1.0)
    e0 = (-lb[..., 2] * c1 + lep[..., 2] * c2) / d
    e = (-lb[..., 2, None] * lep[..., :2] + lep[..., 2, None] * lb[..., :2]) / d[..., None]
    z0 = (lep[..., 3] * c2 - lb[..., 3] * c1) / d
    z = (lep[..., 3, None] * lb[..., :2] - lb[..., 3, None] * lep[..., :2]) / d[..., None]
    q = np.empty(d.shape + (3, 3))
    q[..., :2, :2] = e[..., :, None] * e[..., None, :] - z[..., :, None] * z[..., None, :] - np.eye(2)
    q[..., :2, 2] = q[..., 2, :2] = e0[..., None] * e - z0[..., None] * z
    q[..., 2, 2] = e0**2 - z0**2
    return (e0, e, z0, z), q, ok


def _ellipse(q):
    """W (..., 3, 3) with [x, 1] = W (cos t, sin t, 1) on the ellipse of Q, and whether it is real."""
    n = -q[..., :2, :2]
    det = n[..., 0, 0] * n[..., 1, 1] - n[..., 0, 1] ** 2
    ok = (n[..., 0, 0] > 0) & (det > 0)
    n = np.where(ok[..., None, None], n, np.eye(2))
    x0 = np.linalg.solve(n, q[..., :2, 2:3])[..., 0]
    kappa = q[..., 2, 2] + np.einsum("...i,...ij,...j->...", x0, n, x0)
    ok &= kappa > 0
    chol = np.linalg.cholesky(n)
    a = np.sqrt(np.where(ok, kappa, 1.0))[..., None, None] * np.linalg.inv(np.swapaxes(chol, -1, -2))
    w = np.zeros(q.shape)
    w[..., :2, :2], w[..., :2, 2], w[..., 2, 2] = a, x0, 1.0
    return w, ok


def _quartic_roots(a):
    """Real roots u of sum_k a_k u^k (a (..., 5) from a0 to a4) as (..., 4) with NaN for the others
    (the eigenvalues of the companion matrix, real part; polished later)."""
    lead = a[..., 4]
    scale = np.max(np.abs(a), axis=-1)
    good = np.abs(lead) > 1e-12 * np.where(scale > 0, scale, 1.0)
    lead = np.where(good, lead, 1.0)
    comp = np.zeros(a.shape[:-1] + (4, 4))
    comp[..., 1:, :3] = np.eye(3)
    comp[..., :, 3] = -a[..., :4] / lead[..., None]
    lam = np.linalg.eigvals(comp)
    return np.where(good[..., None], lam.real, np.nan), np.abs(lam.imag)


def _g(gm, t):
    """g(t) = v^T G v and g'(t), v = (cos t, sin t, 1)."""
    c, s = np.cos(t), np.sin(t)
    v = np.stack([c, s, np.ones_like(t)], axis=-1)
    dv = np.stack([-s, c, np.zeros_like(t)], axis=-1)
    gv = np.einsum("...ij,...j->...i", gm, v)
    return np.sum(v * gv, axis=-1), 2 * np.sum(dv * gv, axis=-1)


def solve_dilepton(constraints, leptons_p4, bjets_p4, met, *, atol: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Every (nu, nubar) with the given constraint variables: the analytic dilepton solution.

    Parameters
    ----------
    constraints : array_like, shape (..., 6)
        c = (m(l+ nu), m(l+ nu b), m(l- nubar), m(l- nubar bbar), r_x, r_y), GeV.
    leptons_p4, bjets_p4 : array_like, shape (..., 2, 4)
        (l+, l-) and (b, bbar) four-vectors, GeV (broadcast against ``constraints``).
    met : array_like, shape (..., 2)
        Missing transverse momentum, GeV.
    atol : float
        GeV. A root is kept where the four masses of its (nu, nubar) reproduce the given ones within
        ``atol`` after the Newton steps (near a fold, where two roots merge, Newton converges slowly).

    Returns
    -------
    roots : ndarray, shape (..., 4, 2, 3)
        (nu, nubar) momenta per root slot, zeros in empty slots.
    valid : ndarray of bool, shape (..., 4)
        Which slots hold a real, distinct solution with positive neutrino energies: 0, 2 or 4 per
        case (rarely 1 or 3 at a fold where two roots merge); an all-False row means no solution.
    """
    c = _as("constraints", constraints, (N_CONSTRAINTS,))
    lep, bj = _as("leptons_p4", leptons_p4, (2, 4)), _as("bjets_p4", bjets_p4, (2, 4))
    met = _as("met", met, (2,))
    if not (atol > 0):
        raise ValueError(f"atol must be positive, got {atol!r}")
    shape = np.broadcast_shapes(c.shape[:-1], lep.shape[:-2], bj.shape[:-2], met.shape[:-1])
    c = np.broadcast_to(c, shape + (6,))
    lep, bj = np.broadcast_to(lep, shape + (2, 4)), np.broadcast_to(bj, shape + (2, 4))
    met = np.broadcast_to(met, shape + (2,))
    lb = lep + bj
    lin1, q1, ok1 = _side(lep[..., 0, :], lb[..., 0, :], c[..., 0], c[..., 1])
    lin2, q2, ok2 = _side(lep[..., 1, :], lb[..., 1, :], c[..., 2], c[..., 3])
    w1, real1 = _ellipse(q1)
    _, real2 = _ellipse(q2)
    t_vec = met - c[..., 4:6]
    k = np.zeros(shape + (3, 3))
    k[..., 0, 0] = k[..., 1, 1] = -1.0
    k[..., :2, 2], k[..., 2, 2] = t_vec, 1.0
    kw = k @ w1
    gm = np.swapaxes(kw, -1, -2) @ q2 @ kw
    g00, g11, g22 = gm[..., 0, 0], gm[..., 1, 1], gm[..., 2, 2]
    g01, g02, g12 = gm[..., 0, 1], gm[..., 0, 2], gm[..., 1, 2]
    coeffs = np.stack([g00 + 2 * g02 + g22, 4 * (g01 + g12), -2 * g00 + 4 * g11 + 2 * g22,
                       4 * (g12 - g01), g00 - 2 * g02 + g22], axis=-1)
    u, _ = _quartic_roots(coeffs)
    t = 2 * np.arctan(np.nan_to_num(u, nan=0.0))
    for _ in range(_NEWTON_STEPS):
        gv, dg = _g(gm[..., None, :, :], t)
        t = t - np.where(np.abs(dg) > 0, gv / np.where(dg != 0, dg, 1.0), 0.0)
    valid = np.isfinite(u) & (ok1 & ok2 & real1 & real2)[..., None]
    # positions of the roots
    v = np.stack([np.cos(t), np.sin(t), np.ones_like(t)], axis=-1)
    x = np.einsum("...ij,...rj->...ri", w1, v)[..., :2]
    xbar = t_vec[..., None, :] - x
    roots = np.empty(shape + (MAX_ROOTS, 2, 3))
    energies = []
    for side, (e0, e, z0, z), pt in ((0, lin1, x), (1, lin2, xbar)):
        roots[..., side, :2] = pt
        roots[..., side, 2] = z0[..., None] + np.einsum("...i,...ri->...r", z, pt)
        energies.append(e0[..., None] + np.einsum("...i,...ri->...r", e, pt))
    valid &= (energies[0] > 0) & (energies[1] > 0)
    back = constraint_variables(roots, lep[..., None, :, :], bj[..., None, :, :], met[..., None, :])
    valid &= np.all(np.abs(back[..., :4] - c[..., None, :4]) < atol, axis=-1)
    # duplicates: the same root found twice (a double root, or two eigenvalues polished onto one)
    tw = np.mod(t, 2 * np.pi)
    for i in range(1, MAX_ROOTS):
        for j in range(i):
            gap = np.abs(tw[..., i] - tw[..., j])
            same = np.minimum(gap, 2 * np.pi - gap) < 1e-6
            valid[..., i] &= ~(same & valid[..., j])
    return np.where(valid[..., None, None], roots, 0.0), valid


def log_abs_det_jacobian(neutrinos, leptons_p4, bjets_p4) -> np.ndarray:
    """log |det dc / d(nu, nubar)| (...,) of the constraint variables at (nu, nubar), closed form.

    A density p_c over c maps to the density p(nu, nubar) = p_c(c) |det dc/d(nu, nubar)| of one
    root's (nu, nubar); -inf where two roots merge (the fold).

    Parameters
    ----------
    neutrinos : array_like, shape (..., 2, 3)
    leptons_p4, bjets_p4 : array_like, shape (..., 2, 4)
    """
    nu = _as("neutrinos", neutrinos, (2, 3))
    lep, bj = _as("leptons_p4", leptons_p4, (2, 4)), _as("bjets_p4", bjets_p4, (2, 4))
    norm = np.linalg.norm(nu, axis=-1, keepdims=True)
    unit = nu / np.where(norm > 0, norm, 1.0)
    lb = lep + bj
    a = lep[..., 3:4] * unit - lep[..., :3]
    b = lb[..., 3:4] * unit - lb[..., :3]
    n = np.cross(a, b)
    num = np.abs(n[..., 0, 0] * n[..., 1, 1] - n[..., 0, 1] * n[..., 1, 0])
    nu4 = _massless(nu)
    masses = _mass(lep + nu4).prod(axis=-1) * _mass(lb + nu4).prod(axis=-1)
    with np.errstate(divide="ignore"):
        return np.log(num) - np.log(masses)
