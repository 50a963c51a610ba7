"""Chapter-3 targets in physics coordinates: the bridge between `EventArrays` and the coordinate
systems of :mod:`posteval.physics.coordinates` (design D) and
:mod:`posteval.physics.joint_coordinates` (design FH).

A sampler of the model contract (a flow, a CFM) is trained on six numbers per event,

    u = (log m^2, tau, psi) of nu (with l+), then of nubar (with l-)      (LeptonFrameTargets), or
    u = (theta, s, r_x, r_y, y_nu, y_nubar)                                (JointFrameTargets),

standardised with the training split's means and widths, ``s = (u - mean) / sd``, instead of the
Cartesian (px, py, pz) of the two neutrinos (the nu2flows convention). Its samples are mapped back
to Cartesian momenta in GeV with the event's own leptons and MET (after the training split's
:class:`~posteval.physics.coordinates.Guards`), so every metric sees the same kind of numbers for
every model. A density over ``s`` stays an exact density over the Cartesian momenta p:

    log p(p) = log q(s) - sum_j log sd_j - log |det dp/du|,

with the closed-form log-determinant of each system's ``log_abs_det_jacobian``.

Reference: designs D and FH of ``shared/notes/neutrino_coordinates.md`` (the W mass as a
coordinate; the joint-feasible region, MET closure and the W masses as coordinates);
M. Leigh et al., Phys. Rev. D 109 (2024) 092002 for the Cartesian convention it departs from.

Example
-------
>>> from posteval.data.ttbar_features import build_event_arrays
>>> rng = np.random.default_rng(0); n = 50
>>> arr = build_event_arrays(rng.uniform(20, 80, (n, 2)), rng.normal(0, 1, (n, 2)), rng.uniform(-3, 3, (n, 2)),
...     np.full((n, 2), 100.0), np.tile([1.0, -1.0], (n, 1)), np.zeros((n, 2)), rng.uniform(20, 80, (n, 2)),
...     np.zeros((n, 2)), np.zeros((n, 2)), np.full((n, 2), 90.0), np.ones((n, 2)), np.ones((n, 2), bool),
...     rng.normal(0, 30, (n, 2)), rng.normal(0, 40, (n, 2, 3)))
>>> frame = LeptonFrameTargets.fit(arr)
>>> s = frame.to_standard(arr)
>>> bool(np.allclose(frame.to_physical(s, arr), arr.targets, atol=1e-3))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..physics import joint_coordinates as joint
from ..physics.coordinates import Guards, from_lepton_frame, log_abs_det_jacobian, to_lepton_frame
from .ttbar_features import N_MOMENTUM, EventArrays

__all__ = ["LeptonFrameTargets", "JointFrameTargets", "lepton_momenta", "missing_pt"]

_CHARGE = N_MOMENTUM  # column of the lepton charge in EventArrays.leptons


def _arrays(arrays) -> EventArrays:
    if not isinstance(arrays, EventArrays):
        raise ValueError(f"arrays must be EventArrays (unstandardised), got {type(arrays).__name__}")
    return arrays


def lepton_momenta(arrays: EventArrays) -> np.ndarray:
    """(l+, l-) momenta (px, py, pz) in GeV, shape (n, 2, 3), from the unstandardised leptons."""
    lep = _arrays(arrays).leptons.astype(np.float64)
    charge = lep[..., _CHARGE]
    if not np.all(np.sort(charge, axis=1) == [-1.0, 1.0]):
        raise ValueError("leptons: every event needs one positive and one negative lepton (charges +1, -1)")
    order = np.argsort(-charge, axis=1)  # l+ first
    return np.take_along_axis(lep[..., :3], order[..., None], axis=1)


def missing_pt(arrays: EventArrays) -> np.ndarray:
    """MET (x, y) in GeV, shape (n, 2)."""
    return _arrays(arrays).global_feats[:, :2].astype(np.float64)


@dataclass(frozen=True)
class _CoordinateTargets:
    """Standardised neutrino coordinates (6 per event), fitted on the training split: the part every
    coordinate system shares. A subclass says how its six coordinates are computed from the true
    neutrinos (:meth:`_coords`), mapped back (:meth:`_momenta`), guarded and differentiated.

    ``mean`` and ``sd`` (6,) standardise the coordinates; ``guards`` are the training ranges applied
    before the inverse.
    """

    mean: np.ndarray
    sd: np.ndarray
    guards: object

    @classmethod
    def coordinates(cls, arrays: EventArrays) -> np.ndarray:
        """The six coordinates (n, 6) of the true neutrinos of ``arrays``."""
        nu = _arrays(arrays).targets.astype(np.float64).reshape(-1, 2, 3)
        return cls._coords(nu, lepton_momenta(arrays), missing_pt(arrays))

    @classmethod
    def fit(cls, train: EventArrays, widen: float = 0.05):
        """Means, widths and guards of the training split's coordinates."""
        u = cls.coordinates(train)
        sd = u.std(axis=0)
        if np.any(sd == 0):
            raise ValueError("train: a coordinate has zero spread; too few events to standardise")
        return cls(u.mean(axis=0), sd, cls._guards(u, lepton_momenta(train), missing_pt(train), widen))

    def to_standard(self, arrays: EventArrays) -> np.ndarray:
        """The standardised coordinates (n, 6) of the true neutrinos: the training targets."""
        return ((self.coordinates(arrays) - self.mean) / self.sd).astype(np.float32)

    def _unstandardise(self, standard, n: int) -> np.ndarray:
        s = np.asarray(standard, dtype=np.float64)
        if s.ndim not in (2, 3) or s.shape[0] != n or s.shape[-1] != 6:
            raise ValueError(f"standard: expected (n, 6) or (n, m, 6) with n = {n} events, got {s.shape}")
        if not np.isfinite(s).all():
            raise ValueError("standard: contains NaN or infinite values")
        return s * self.sd + self.mean

    def outside(self, standard, arrays: EventArrays) -> np.ndarray:
        """Whether each sample (n, [m]) lies outside the training guards (it is clipped on the way back)."""
        return self._outside(self._unstandardise(standard, len(arrays)), lepton_momenta(arrays), missing_pt(arrays))

    def to_physical(self, standard, arrays: EventArrays) -> np.ndarray:
        """Standardised coordinates (n, [m,] 6) -> Cartesian (px, py, pz) of nu, nubar in GeV, same shape."""
        u = self._unstandardise(standard, len(arrays))
        lep, met = lepton_momenta(arrays), missing_pt(arrays)
        p = self._momenta(self._apply(u, lep, met), lep, met)
        return p.reshape(*p.shape[:-2], 6)

    def log_abs_det(self, standard, arrays: EventArrays) -> np.ndarray:
        """log |det dp/ds| per event (sample), shape (n,) or (n, m): subtract it from log q(s) to get
        the Cartesian log-density log p(p) (unguarded coordinates)."""
        u = self._unstandardise(standard, len(arrays))
        return self._log_det(u, lepton_momenta(arrays), missing_pt(arrays)) + np.log(self.sd).sum()


class LeptonFrameTargets(_CoordinateTargets):
    """Design D: (log m^2, tau, psi) of nu about l+, then of nubar about l-
    (:mod:`posteval.physics.coordinates`); its guards are :class:`~posteval.physics.coordinates.Guards`."""

    @staticmethod
    def _coords(nu, lep, met):
        return to_lepton_frame(nu, lep, met).reshape(len(nu), 6)

    @staticmethod
    def _momenta(u, lep, met):
        return from_lepton_frame(u, lep, met)

    @staticmethod
    def _guards(u, lep, met, widen):
        return Guards.from_training(u.reshape(-1, 2, 3), lep, widen=widen)

    def _apply(self, u, lep, met):
        return self.guards.apply(u.reshape(*u.shape[:-1], 2, 3), lep)

    def _outside(self, u, lep, met):
        return self.guards.outside(u.reshape(*u.shape[:-1], 2, 3), lep)

    @staticmethod
    def _log_det(u, lep, met):
        return log_abs_det_jacobian(u.reshape(*u.shape[:-1], 2, 3), lep)


class JointFrameTargets(_CoordinateTargets):
    """Design FH: the joint-feasible region of both W constraints, MET closure and each W mass as
    coordinates (:mod:`posteval.physics.joint_coordinates`); guards
    :class:`~posteval.physics.joint_coordinates.JointGuards`."""

    @staticmethod
    def _coords(nu, lep, met):
        return joint.to_joint(nu, lep, met)

    @staticmethod
    def _momenta(u, lep, met):
        return joint.from_joint(u, lep, met)

    @staticmethod
    def _guards(u, lep, met, widen):
        return joint.JointGuards.from_training(u, lep, met, widen=widen)

    def _apply(self, u, lep, met):
        return self.guards.apply(u, lep, met)

    def _outside(self, u, lep, met):
        return self.guards.outside(u, lep, met)

    @staticmethod
    def _log_det(u, lep, met):
        return joint.log_abs_det_jacobian(u, lep, met)
