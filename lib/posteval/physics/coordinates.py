"""Neutrino coordinates that know the W mass: bijections between Cartesian neutrino momenta and
lepton-frame coordinates, given the event's leptons and missing transverse momentum.

For one neutrino with momentum p (GeV) and its lepton's momentum l (massless), the lepton-frame
coordinates (design D of ``shared/notes/neutrino_coordinates.md``) are

    u1 = log m^2,   m^2 = 2 (|l| |p| - l . p) = 4 |l| |p| sin^2(theta / 2)     (the W mass squared)
    u2 = tau = 2 log tan(theta / 2)                                            (opening angle theta)
    u3 = psi in (-pi, pi]                                                      (azimuth about l)

with theta the angle between p and l and psi the azimuth of p about the lepton axis, measured
from the direction of the missing transverse momentum projected perpendicular to that axis (where
the neutrino's azimuth peaks, so that the cut at +-pi runs through sparse space). The inverse is

    theta = 2 atan(exp(tau / 2)),   |p| = m^2 / (4 |l| sin^2(theta / 2)),
    p = |p| (cos theta e_l + sin theta (cos psi e_1 + sin psi e_2)),

and the volume element gives the exact density change ``log |det dp/du| = 3 log |p| + 2 log sin
theta - log 2`` (dp^3 = |p|^2 sin theta d|p| dtheta dpsi, d|p|/du1 = |p| at fixed theta, dtheta/dtau
= sin(theta) / 2). A density q(u) in these coordinates is the Cartesian density
``log p(p) = log q(u) - log |det dp/du|``: a flow trained on u keeps an exact Cartesian
``log_prob``. tau sends the collinear singularity (theta -> 0, where |p| diverges at fixed m) to
-infinity; :class:`Guards` set from the training split clip tau and log m^2 to their training
range (widened) before the inverse, so that a sample far outside it cannot produce a neutrino of
unbounded momentum. psi wraps: :func:`wrap_angle` maps any real psi back into (-pi, pi].

A W-mass-like coordinate alone proves nothing (a prior drawn in these coordinates, blind to the
event, fills the W window too): read it beside CRPS and MET closure
(:mod:`posteval.physics.consistency`).

Example
-------
>>> rng = np.random.default_rng(0)
>>> lep = rng.normal(0, 40, (5, 2, 3)); met = rng.normal(0, 40, (5, 2)); nu = rng.normal(0, 40, (5, 2, 3))
>>> u = to_lepton_frame(nu, lep, met)
>>> bool(np.allclose(from_lepton_frame(u, lep, met), nu))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["COORDINATE_NAMES", "to_lepton_frame", "from_lepton_frame", "log_abs_det_jacobian", "wrap_angle",
           "Guards"]

#: per neutrino (nu, then nubar): the lepton-frame coordinates
COORDINATE_NAMES = ("nu_log_m2", "nu_tau", "nu_psi", "nubar_log_m2", "nubar_tau", "nubar_psi")


def wrap_angle(psi):
    """Angles mapped into (-pi, pi].

    >>> float(wrap_angle(3 * np.pi / 2)) == float(-np.pi / 2)
    True
    """
    psi = np.asarray(psi, dtype=float)
    out = np.mod(psi + np.pi, 2 * np.pi) - np.pi
    return np.where(out == -np.pi, np.pi, out)


def _check(name: str, a, last: tuple) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim < 2 or a.shape[-len(last):] != last:
        raise ValueError(f"{name}: expected shape (n, ..., {', '.join(map(str, last))}), got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


def _frame(leptons, met, shape):
    """Orthonormal frame (e_l, e_1, e_2) per event and side, broadcast to ``shape`` (..., 2, 3)."""
    lep = _check("leptons", leptons, (2, 3))
    mt = _check("met", met, (2,))
    if lep.shape[0] != shape[0] or mt.shape[0] != shape[0]:
        raise ValueError(f"leptons {lep.shape}, met {mt.shape} and the neutrinos {shape} need the same events")
    norm = np.linalg.norm(lep, axis=-1, keepdims=True)
    if np.any(norm == 0):
        raise ValueError("leptons: a lepton with zero momentum has no direction")
    e_l = lep / norm
    m3 = np.concatenate([mt, np.zeros(mt.shape[:-1] + (1,))], axis=-1)[:, None, :]  # (n, 1, 3)
    perp = m3 - (m3 * e_l).sum(-1, keepdims=True) * e_l
    small = np.linalg.norm(perp, axis=-1, keepdims=True) < 1e-9 * (1 + np.linalg.norm(m3, axis=-1, keepdims=True))
    # MET (anti)parallel to the lepton, or zero: any fixed perpendicular direction (the beam's projection)
    beam = np.array([0.0, 0.0, 1.0]) - e_l[..., 2:3] * e_l
    beam = np.where(np.linalg.norm(beam, axis=-1, keepdims=True) < 1e-9, np.array([1.0, 0.0, 0.0]) - e_l[..., :1] * e_l,
                    beam)
    perp = np.where(small, beam, perp)
    e_1 = perp / np.linalg.norm(perp, axis=-1, keepdims=True)
    e_2 = np.cross(e_l, e_1)
    expand = (slice(None),) + (None,) * (len(shape) - 3)
    return (norm[expand].squeeze(-1), e_l[expand], e_1[expand], e_2[expand])


def to_lepton_frame(neutrinos, leptons, met) -> np.ndarray:
    """Cartesian (nu, nubar) momenta (n, [m,] 2, 3) -> lepton-frame coordinates of the same shape
    (last axis: log m^2, tau, psi), given the (l+, l-) momenta (n, 2, 3) and MET (n, 2)."""
    nu = _check("neutrinos", neutrinos, (2, 3))
    length, e_l, e_1, e_2 = _frame(leptons, met, nu.shape)
    r = np.linalg.norm(nu, axis=-1)
    if np.any(r == 0):
        raise ValueError("neutrinos: a neutrino with zero momentum has no lepton-frame coordinates")
    c = np.clip((nu * e_l).sum(-1) / r, -1.0, 1.0)
    x1, x2 = (nu * e_1).sum(-1), (nu * e_2).sum(-1)
    half = np.arctan2(np.hypot(x1, x2), r * c) / 2  # theta / 2, in [0, pi / 2]
    s = np.sin(half)
    if np.any(s == 0) or np.any(np.cos(half) == 0):
        raise ValueError("neutrinos: exactly (anti)collinear with its lepton: tau is infinite")
    log_m2 = np.log(4.0 * length * r) + 2 * np.log(s)
    tau = 2 * (np.log(s) - np.log(np.cos(half)))
    psi = np.arctan2(x2, x1)
    return np.stack([log_m2, tau, psi], axis=-1)


def from_lepton_frame(coords, leptons, met) -> np.ndarray:
    """Lepton-frame coordinates (n, [m,] 2, 3) -> Cartesian momenta of the same shape (any real psi)."""
    u = _check("coords", coords, (2, 3))
    length, e_l, e_1, e_2 = _frame(leptons, met, u.shape)
    log_m2, tau, psi = u[..., 0], u[..., 1], u[..., 2]
    half = np.arctan(np.exp(tau / 2))
    theta = 2 * half
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        r = np.exp(log_m2 - np.log(4.0 * length) - 2 * np.log(np.sin(half)))
    direction = (np.cos(theta)[..., None] * e_l
                 + np.sin(theta)[..., None] * (np.cos(psi)[..., None] * e_1 + np.sin(psi)[..., None] * e_2))
    with np.errstate(over="ignore", invalid="ignore"):
        out = r[..., None] * direction
    if not np.isfinite(out).all():
        raise ValueError("coords: the inverse overflowed (tau or log m^2 far outside any physical range); clip "
                         "them with Guards from the training split first")
    return out


def log_abs_det_jacobian(coords, leptons) -> np.ndarray:
    """log |det dp/du| summed over both neutrinos, shape (n,) or (n, m), for coordinates (n, [m,] 2, 3)
    and the (l+, l-) momenta (n, 2, 3): ``3 log |p| + 2 log sin(theta) - log 2`` per neutrino.

    The Cartesian density is ``log p(p) = log q(u) - log_abs_det_jacobian(u, leptons)``.

    >>> lep = np.array([[[30.0, 0, 0], [0, 30.0, 0]]]); nu = np.array([[[0, 20.0, 5.0], [10.0, 0, 3.0]]])
    >>> u = to_lepton_frame(nu, lep, np.array([[10.0, 20.0]]))
    >>> log_abs_det_jacobian(u, lep).shape
    (1,)
    """
    u = _check("coords", coords, (2, 3))
    half = np.arctan(np.exp(u[..., 1] / 2))
    return (3 * _log_p(u, leptons) + 2 * np.log(np.sin(2 * half)) - np.log(2.0)).sum(axis=-1)


@dataclass(frozen=True)
class Guards:
    """Training ranges of (log m^2, tau) per neutrino and of log |p|, widened by ``widen`` x the
    range on each side (on these log scales a small widening is already a large factor in
    momentum). :meth:`apply` clips (log m^2, tau) into their ranges, then raises tau (and, where even
    theta = pi is not enough, lowers log m^2) so that |p| = m^2 / (4 |l| sin^2(theta/2)) stays within
    the training range of |p|: each coordinate inside its own range does not keep the combination
    (a large m^2 with a collinear angle) physical. psi is wrapped, never clipped.

    >>> lep = np.array([[[30.0, 0, 0], [0, 30.0, 0]]] * 4); met = np.zeros((4, 2)) + 5.0
    >>> nu = np.array([[[0, 20.0, 5.0], [10.0, 0, 3.0]]] * 4) * np.arange(1, 5)[:, None, None]
    >>> g = Guards.from_training(to_lepton_frame(nu, lep, met), lep)
    >>> far = to_lepton_frame(nu, lep, met); far[..., 1] = -50.0
    >>> bool(np.linalg.norm(from_lepton_frame(g.apply(far, lep), lep, met), axis=-1).max() < 200)
    True
    """

    lo: np.ndarray  # (2, 2): per neutrino, (log m^2, tau)
    hi: np.ndarray
    log_p_max: np.ndarray  # (2,): per neutrino, the largest log |p|

    @classmethod
    def from_training(cls, coords, leptons, widen: float = 0.05) -> Guards:
        """Guards from the training split's coordinates (n, [m,] 2, 3) and its (l+, l-) momenta (n, 2, 3)."""
        u = _check("coords", coords, (2, 3))
        if not widen >= 0:
            raise ValueError(f"widen: expected a number >= 0, got {widen!r}")
        log_p = _log_p(u, leptons).reshape(-1, 2)
        flat = u.reshape(-1, 2, 3)
        lo, hi = flat[..., :2].min(axis=0), flat[..., :2].max(axis=0)
        span = hi - lo
        return cls(lo - widen * span, hi + widen * span, log_p.max(axis=0) + widen * np.ptp(log_p, axis=0))

    def apply(self, coords, leptons) -> np.ndarray:
        """Coordinates with (log m^2, tau) clipped into the guarded ranges, |p| capped, psi wrapped."""
        u = _check("coords", coords, (2, 3)).copy()
        u[..., :2] = np.clip(u[..., :2], self.lo, self.hi)
        u[..., 2] = wrap_angle(u[..., 2])
        lep = _check("leptons", leptons, (2, 3))
        log_4l = np.log(4.0 * np.linalg.norm(lep, axis=-1))
        if u.ndim == 4:
            log_4l = log_4l[:, None]
        u[..., 0] = np.minimum(u[..., 0], log_4l + self.log_p_max)  # theta = pi: |p| = m^2 / (4 |l|)
        log_s2_min = u[..., 0] - log_4l - self.log_p_max  # <= 0: sin^2(theta / 2) must reach it
        s_min = np.sqrt(np.exp(np.minimum(log_s2_min, 0.0)))
        tau_min = 2 * np.log(np.tan(np.arcsin(np.clip(s_min, 1e-300, 1 - 1e-16))))
        u[..., 1] = np.maximum(u[..., 1], tau_min)
        return u

    def outside(self, coords, leptons) -> np.ndarray:
        """Whether each event's (sample's) coordinates lie outside the guarded region, shape (n,) or (n, m)."""
        u = _check("coords", coords, (2, 3))
        box = ((u[..., :2] < self.lo) | (u[..., :2] > self.hi)).any(axis=-1)
        return (box | (_log_p(u, leptons) > self.log_p_max)).any(axis=-1)


def _log_p(u: np.ndarray, leptons) -> np.ndarray:
    """log |p| per neutrino from its coordinates and its lepton: shape (n, [m,] 2)."""
    lep = _check("leptons", leptons, (2, 3))
    length = np.linalg.norm(lep, axis=-1)
    if u.ndim == 4:
        length = length[:, None]
    half = np.arctan(np.exp(u[..., 1] / 2))
    return u[..., 0] - np.log(4.0 * length) - 2 * np.log(np.sin(half))
