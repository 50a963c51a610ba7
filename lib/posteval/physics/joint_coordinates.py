"""Neutrino coordinates that know the W mass *and* MET: the joint-feasible region as a coordinate.

Design FH of ``shared/notes/neutrino_coordinates.md``, a bijection between the Cartesian momenta of
both neutrinos (6 numbers) and six coordinates, given the event's leptons l+ and l- (massless) and
its missing transverse momentum MET. Notation: p = pT(nu), q = pT(nubar) (transverse vectors),
M = 80.4 GeV, and per side the transverse mass m_T^2 = 2 (|l_T| |p| - l_T . p).

1. **The joint-feasible region.** R = {p : m_T(l+, p) <= M} ∩ {p : m_T(l-, MET - p) <= M}, the
   intersection of two parabolic (convex) regions of the nu transverse plane:
   ``|p| - u+ . p <= a+`` with u+ = l+_T / |l+_T| and a+ = M^2 / (2 |l+_T|), and the same for MET - p
   and l-. A centre c inside R (or the least violating point when R is empty) is found per event.
2. **Polar coordinates about c**, scaled to the region: theta is the direction of p - c measured from
   u+, and ``s = log(rho / rho_max(theta))`` with rho = |p - c| and rho_max the distance from c to
   the region's edge along theta (a smooth minimum of the two parabolas' exits and a cap of
   ``CAP`` = 250 GeV, where a parabola opens without end). s = 0 is (close to) the region's edge, so
   joint feasibility is the half-line s < 0 for every event.
3. **MET closure as a coordinate**: ``r = MET - p - q``, the residual of both neutrinos' transverse
   momenta (its spread is the detector's MET resolution).
4. **Each longitudinal momentum through the W mass**: with the pseudorapidities eta,
   ``v = 2 sqrt(|l_T| |p|) sinh((eta_nu - eta_l) / 2)`` gives exactly ``m^2(l nu) = m_T^2 + v^2``
   (sign(v) = sign of eta_nu - eta_l); ``w = v / N(m_T)`` with
   ``N = sqrt(B softplus((M^2 - m_T^2) / B) + F^2)`` puts the W peak near w = +-1 for every m_T
   (B = 100 GeV^2, F = 5 GeV), and
   ``y = w + tanh((w - c_W) / h) + tanh((w + c_W) / h)`` stretches the W window, c_W = v_W / N the
   peak (v_W^2 = B softplus((M^2 - m_T^2) / B)) and h(m_T) the window's half-width in w at that m_T
   (floored at ``H_MIN``), so that the window is about equally wide in y for every m_T.

Coordinates, per event: ``(theta, s, r_x, r_y, y_nu, y_nubar)``. The map is block triangular, so
the density change is closed form:

    log |det d(p, q, pz_nu, pz_nubar) / d(theta, s, r, y_nu, y_nubar)|
        = 2 log rho + sum over sides of log |dpz / dy|,
    dpz/dy = pT cosh(eta_nu) / sqrt(|l_T| pT + v^2 / 4) * N / (dy/dw),

(d(p)/d(theta, s) has determinant rho^2 whatever rho_max(theta) is, since s only scales rho).
A density over these coordinates is an exact Cartesian density: ``log p(nu) = log q(u) -
log_abs_det_jacobian(u, ...)``. theta wraps (the density is exact up to that wrap).

Example
-------
>>> rng = np.random.default_rng(1)
>>> lep = rng.normal(0, 40, (4, 2, 3)); met = rng.normal(0, 40, (4, 2)); nu = rng.normal(0, 40, (4, 2, 3))
>>> u = to_joint(nu, lep, met)
>>> u.shape  # one row of JOINT_NAMES per event, where the lepton frame has (2, 3) per event
(4, 6)
>>> bool(np.allclose(from_joint(u, lep, met), nu))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coordinates import _check, wrap_angle

__all__ = ["JOINT_NAMES", "W_MASS", "CAP", "to_joint", "from_joint", "log_abs_det_jacobian", "region_centre",
           "JointGuards"]

#: the six coordinates, in order
JOINT_NAMES = ("theta", "s", "r_x", "r_y", "y_nu", "y_nubar")
W_MASS = 80.4  # GeV: the region's edge and the stretch's peak
WINDOW = 10.0  # GeV: the half-width of the W window the stretch widens
CAP = 250.0  # GeV: the largest rho_max (a parabola opens without end along its lepton)
SOFTPLUS_SCALE = 100.0  # GeV^2: B in N(m_T)
FLOOR = 5.0  # GeV: F in N(m_T)
H_MIN = 0.05  # the narrowest stretch in w
SHARPNESS = 4.0  # the power of the smooth minimum of the exits


def _softplus(x):
    return np.logaddexp(0.0, x)


@dataclass(frozen=True)
class _Event:
    """Per-event geometry, broadcast over samples: transverse lepton directions and sizes, MET, c."""

    l_t: np.ndarray  # (n, [1,] 2): |l_T| of l+, l-
    u: np.ndarray  # (n, [1,] 2, 2): l_T / |l_T|
    eta_l: np.ndarray  # (n, [1,] 2)
    met: np.ndarray  # (n, [1,] 2)
    centre: np.ndarray  # (n, [1,] 2)


def _violation(p, u, a, met):
    """(|p| - u+.p - a+) / a+ and the same for MET - p with l-: <= 0 inside each parabola."""
    q = met - p
    h_plus = (np.linalg.norm(p, axis=-1) - (u[..., 0, :] * p).sum(-1)) / a[..., 0] - 1
    h_minus = (np.linalg.norm(q, axis=-1) - (u[..., 1, :] * q).sum(-1)) / a[..., 1] - 1
    return h_plus, h_minus


def region_centre(leptons, met, *, step: float = 10.0, extent: float = 400.0) -> np.ndarray:
    """A point (n, 2) deep inside each event's joint-feasible region (the least violating point if the
    region is empty): the minimiser of max(h+, h-) (each parabola's violation, relative to its
    a = M^2 / (2 |l_T|)) on a grid of ``step`` GeV over +-``extent`` GeV, refined on a 5x finer grid.

    >>> lep = np.array([[[40.0, 0, 0], [-40.0, 0, 0]]]); met = np.array([[0.0, 30.0]])
    >>> c = region_centre(lep, met); h = _violation(c, _directions(lep)[1], _a(lep), met)
    >>> bool(max(h[0][0], h[1][0]) < 0)
    True
    """
    lep = _check("leptons", leptons, (2, 3))
    mt = _check("met", met, (2,))
    _, u = _directions(lep)
    a = _a(lep)
    best = np.zeros((len(lep), 2))
    chunk = max(1, 2_000_000 // int((2 * extent / step + 1) ** 2))  # events per chunk of the grid
    for width, spacing in ((extent, step), (2 * step, step / 5)):
        offsets = np.arange(-width, width + spacing / 2, spacing)
        gx, gy = np.meshgrid(offsets, offsets, indexing="ij")
        grid = np.stack([gx.ravel(), gy.ravel()], axis=-1)[None]
        for i in range(0, len(lep), chunk):
            rows = slice(i, i + chunk)
            pts = best[rows, None, :] + grid  # (chunk, G, 2)
            hp, hm = _violation(pts, u[rows, None], a[rows, None], mt[rows, None])
            best[rows] = pts[np.arange(len(pts)), np.maximum(hp, hm).argmin(axis=1)]
    return best


def _directions(lep):
    l_t = np.linalg.norm(lep[..., :2], axis=-1)
    if np.any(l_t == 0):
        raise ValueError("leptons: a lepton with zero transverse momentum has no transverse direction")
    return l_t, lep[..., :2] / l_t[..., None]


def _a(lep):
    return W_MASS ** 2 / (2 * np.linalg.norm(lep[..., :2], axis=-1))


def _event(leptons, met, n_axes: int) -> _Event:
    lep = _check("leptons", leptons, (2, 3))
    mt = _check("met", met, (2,))
    if lep.shape[0] != mt.shape[0]:
        raise ValueError(f"leptons {lep.shape} and met {mt.shape} need the same events")
    l_t, u = _directions(lep)
    eta_l = np.arcsinh(lep[..., 2] / l_t)
    centre = region_centre(lep, mt)
    e = (slice(None),) + (None,) * (n_axes - 2)  # broadcast over samples
    return _Event(l_t[e], u[e], eta_l[e], mt[e], centre[e])


def _exit(c, e, u, a):
    """Distance along the ray c + rho e (rho > 0) to the edge of {x : |x| - u.x <= a}; inf if none
    (c outside the region, or the ray runs along the parabola's open end)."""
    ue = (u * e).sum(-1)
    uc = (u * c).sum(-1)
    big_a = 1 - ue ** 2
    b = (c * e).sum(-1) - (a + uc) * ue
    cc = (c * c).sum(-1) - (a + uc) ** 2
    inside = (cc < 0) & (a + uc > 0)
    denom = b + np.sqrt(np.maximum(b * b - big_a * cc, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(inside & (denom > 1e-12), -cc / denom, np.inf)
    return rho


def _rho_max(ev: _Event, theta):
    """Smooth minimum of the two parabolas' exits along theta and CAP, shape of theta."""
    u_plus = ev.u[..., 0, :]
    phi0 = np.arctan2(u_plus[..., 1], u_plus[..., 0])
    ang = theta + phi0
    e = np.stack([np.cos(ang), np.sin(ang)], axis=-1)
    a = W_MASS ** 2 / (2 * ev.l_t)
    rho_plus = _exit(ev.centre, e, ev.u[..., 0, :], a[..., 0])
    rho_minus = _exit(ev.met - ev.centre, -e, ev.u[..., 1, :], a[..., 1])
    k = SHARPNESS
    total = (rho_plus / CAP) ** -k + (rho_minus / CAP) ** -k + 1.0
    return CAP * total ** (-1 / k), e


def _normaliser(m_t2):
    """N(m_T) and the W peak c_W in w, and the stretch half-width h, for m_T^2 (any shape)."""
    v_w2 = SOFTPLUS_SCALE * _softplus((W_MASS ** 2 - m_t2) / SOFTPLUS_SCALE)
    n = np.sqrt(v_w2 + FLOOR ** 2)
    lo2 = np.maximum((W_MASS - WINDOW) ** 2 - m_t2, 0.0)
    hi2 = SOFTPLUS_SCALE * _softplus(((W_MASS + WINDOW) ** 2 - m_t2) / SOFTPLUS_SCALE)
    h = np.maximum((np.sqrt(hi2) - np.sqrt(lo2)) / (2 * n), H_MIN)
    return n, np.sqrt(v_w2) / n, h


def _stretch(w, c_w, h):
    return w + np.tanh((w - c_w) / h) + np.tanh((w + c_w) / h)


def _stretch_slope(w, c_w, h):
    return 1 + (1 / np.cosh((w - c_w) / h) ** 2 + 1 / np.cosh((w + c_w) / h) ** 2) / h


def _unstretch(y, c_w, h, iterations: int = 60):
    """The w with _stretch(w) = y (monotone, |y - w| <= 2): bisection on [y - 2, y + 2]."""
    lo, hi = y - 2.0, y + 2.0
    for _ in range(iterations):
        mid = (lo + hi) / 2
        below = _stretch(mid, c_w, h) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def _side_terms(pt_vec, pz, l_t, u, eta_l):
    """Per side: pT, m_T^2, sqrt(|l_T| pT), eta_nu and v."""
    pt = np.linalg.norm(pt_vec, axis=-1)
    m_t2 = 2 * (l_t * pt - l_t * (u * pt_vec).sum(-1))
    root = np.sqrt(l_t * pt)
    eta = np.arcsinh(pz / pt)
    return pt, np.maximum(m_t2, 0.0), root, eta, 2 * root * np.sinh((eta - eta_l) / 2)


def to_joint(neutrinos, leptons, met) -> np.ndarray:
    """Cartesian (nu, nubar) momenta (n, [m,] 2, 3) -> coordinates (n, [m,] 6) in the order of
    :data:`JOINT_NAMES`, given the (l+, l-) momenta (n, 2, 3) and MET (n, 2)."""
    nu = _check("neutrinos", neutrinos, (2, 3))
    ev = _event(leptons, met, nu.ndim - 1)
    if nu.shape[0] != ev.met.shape[0]:
        raise ValueError(f"neutrinos {nu.shape} and leptons need the same events")
    p, q = nu[..., 0, :2], nu[..., 1, :2]
    d = p - ev.centre
    rho = np.linalg.norm(d, axis=-1)
    if np.any(rho == 0):
        raise ValueError("neutrinos: pT(nu) exactly at the region's centre has no direction theta")
    u_plus = ev.u[..., 0, :]
    theta = wrap_angle(np.arctan2(d[..., 1], d[..., 0]) - np.arctan2(u_plus[..., 1], u_plus[..., 0]))
    rho_max, _ = _rho_max(ev, theta)
    r = ev.met - p - q
    if np.any(np.linalg.norm(p, axis=-1) == 0) or np.any(np.linalg.norm(q, axis=-1) == 0):
        raise ValueError("neutrinos: a neutrino with zero transverse momentum has no pseudorapidity")
    ys = []
    for side, vec in ((0, p), (1, q)):
        pt, m_t2, _, _, v = _side_terms(vec, nu[..., side, 2], ev.l_t[..., side], ev.u[..., side, :],
                                        ev.eta_l[..., side])
        n, c_w, h = _normaliser(m_t2)
        ys.append(_stretch(v / n, c_w, h))
    return np.stack([theta, np.log(rho / rho_max), r[..., 0], r[..., 1], *ys], axis=-1)


def _inverse(coords, leptons, met):
    u = _check("coords", coords, (6,))
    ev = _event(leptons, met, u.ndim)
    if u.shape[0] != ev.met.shape[0]:
        raise ValueError(f"coords {u.shape} and leptons need the same events")
    theta, s, r = u[..., 0], u[..., 1], u[..., 2:4]
    rho_max, e = _rho_max(ev, theta)
    with np.errstate(over="ignore"):
        rho = rho_max * np.exp(s)
    p = ev.centre + rho[..., None] * e
    q = ev.met - p - r
    out, log_dz = [], []
    for side, vec in ((0, p), (1, q)):
        l_t, eta_l = ev.l_t[..., side], ev.eta_l[..., side]
        pt = np.linalg.norm(vec, axis=-1)
        m_t2 = np.maximum(2 * (l_t * pt - l_t * (ev.u[..., side, :] * vec).sum(-1)), 0.0)
        n, c_w, h = _normaliser(m_t2)
        w = _unstretch(u[..., 4 + side], c_w, h)
        v = w * n
        root = np.sqrt(l_t * pt)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            eta = eta_l + 2 * np.arcsinh(v / (2 * root))
            pz = pt * np.sinh(eta)
            log_dz.append(np.log(pt) + np.log(np.cosh(eta)) - 0.5 * np.log(root ** 2 + v ** 2 / 4) + np.log(n)
                          - np.log(_stretch_slope(w, c_w, h)))
        out.append(np.concatenate([vec, pz[..., None]], axis=-1))
    nu = np.stack(out, axis=-2)
    return nu, 2 * np.log(rho) + log_dz[0] + log_dz[1]


def from_joint(coords, leptons, met) -> np.ndarray:
    """Coordinates (n, [m,] 6) -> Cartesian (nu, nubar) momenta (n, [m,] 2, 3) (any real theta)."""
    nu, _ = _inverse(coords, leptons, met)
    if not np.isfinite(nu).all():
        raise ValueError("coords: the inverse overflowed or met a neutrino with zero pT (s or y far outside "
                         "any physical range); clip them with JointGuards from the training split first")
    return nu


def log_abs_det_jacobian(coords, leptons, met) -> np.ndarray:
    """log |det d(nu)/d(coords)| per event (sample), shape (n,) or (n, m): subtract it from the
    coordinates' log-density to get the Cartesian one (module docstring)."""
    return _inverse(coords, leptons, met)[1]


def _pseudorapidity_gaps(coords, leptons, met):
    """|eta_nu - eta_l| per side (n, [m,] 2) of the neutrinos the coordinates give."""
    nu = from_joint(coords, leptons, met)
    lep = _check("leptons", leptons, (2, 3))
    l_t = np.linalg.norm(lep[..., :2], axis=-1)
    eta_l = np.arcsinh(lep[..., 2] / l_t)
    if nu.ndim == 4:
        eta_l = eta_l[:, None]
    return np.abs(np.arcsinh(nu[..., 2] / np.linalg.norm(nu[..., :2], axis=-1)) - eta_l)


@dataclass(frozen=True)
class JointGuards:
    """Training ranges of (s, r_x, r_y, y_nu, y_nubar) and of each neutrino's pseudorapidity gap to its
    lepton |eta_nu - eta_l|, widened by ``widen`` x the range on each side. :meth:`apply` clips the
    coordinates into their ranges, then each y so that the gap stays within its training range
    (a y inside its own range still gives a diverging p_z when the transverse momentum is small: the
    same bound on v = 2 sqrt(|l_T| pT) sinh(gap / 2) is then a bound on y); theta wraps.

    >>> rng = np.random.default_rng(0)
    >>> lep = rng.normal(0, 40, (50, 2, 3)); met = rng.normal(0, 40, (50, 2)); nu = rng.normal(0, 40, (50, 2, 3))
    >>> g = JointGuards.from_training(to_joint(nu, lep, met), lep, met)
    >>> far = to_joint(nu, lep, met); far[:, 4] = 300.0
    >>> farther = far.copy(); farther[:, 4] = 3000.0
    >>> bool(g.outside(far, lep, met).all())
    True
    >>> np.allclose(from_joint(g.apply(far, lep, met), lep, met), from_joint(g.apply(farther, lep, met), lep, met))
    True
    """

    lo: np.ndarray  # (5,)
    hi: np.ndarray
    gap_max: np.ndarray  # (2,): per side, the largest |eta_nu - eta_l|

    @classmethod
    def from_training(cls, coords, leptons, met, widen: float = 0.05) -> JointGuards:
        """Guards from the training split's coordinates (n, [m,] 6), leptons (n, 2, 3) and MET (n, 2)."""
        u = _check("coords", coords, (6,))
        if not widen >= 0:
            raise ValueError(f"widen: expected a number >= 0, got {widen!r}")
        flat = u.reshape(-1, 6)[:, 1:]
        lo, hi = flat.min(axis=0), flat.max(axis=0)
        gaps = _pseudorapidity_gaps(u, leptons, met).reshape(-1, 2)
        return cls(lo - widen * (hi - lo), hi + widen * (hi - lo), gaps.max(axis=0) * (1 + widen))

    def apply(self, coords, leptons, met) -> np.ndarray:
        """Coordinates clipped into the guarded ranges, each y within its pseudorapidity-gap bound."""
        u = _check("coords", coords, (6,)).copy()
        u[..., 1:] = np.clip(u[..., 1:], self.lo, self.hi)
        u[..., 0] = wrap_angle(u[..., 0])
        ev = _event(leptons, met, u.ndim)
        rho_max, e = _rho_max(ev, u[..., 0])
        p = ev.centre + (rho_max * np.exp(u[..., 1]))[..., None] * e
        for side, vec in ((0, p), (1, ev.met - p - u[..., 2:4])):
            l_t = ev.l_t[..., side]
            pt = np.linalg.norm(vec, axis=-1)
            m_t2 = np.maximum(2 * (l_t * pt - l_t * (ev.u[..., side, :] * vec).sum(-1)), 0.0)
            n, c_w, h = _normaliser(m_t2)
            w_max = 2 * np.sqrt(l_t * pt) * np.sinh(self.gap_max[side] / 2) / n
            y_max = _stretch(w_max, c_w, h)
            u[..., 4 + side] = np.clip(u[..., 4 + side], -y_max, y_max)
        return u

    def outside(self, coords, leptons, met) -> np.ndarray:
        """Whether each event's (sample's) coordinates lie outside the guarded region, shape (n,) or (n, m)."""
        u = _check("coords", coords, (6,))
        return (u != self.apply(u, leptons, met))[..., 1:].any(axis=-1)
