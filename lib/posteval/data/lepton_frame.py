"""Chapter-3 targets in lepton-frame coordinates: the bridge between `EventArrays` and
:mod:`posteval.physics.coordinates`.

A sampler of the model contract (a flow, a CFM) is trained on the six numbers

    u = (log m^2, tau, psi) of nu (with l+), then of nubar (with l-),

standardised with the training split's means and widths, ``s = (u - mean) / sd``, instead of the
Cartesian (px, py, pz) of the two neutrinos (the nu2flows convention). Its samples are mapped back
to Cartesian momenta in GeV with the event's own leptons and MET (after the training split's
:class:`~posteval.physics.coordinates.Guards`), so every metric sees the same kind of numbers for
every model. A density over ``s`` stays an exact density over the Cartesian momenta p:

    log p(p) = log q(s) - sum_j log sd_j - log |det dp/du|,

with the closed-form log-determinant of :func:`posteval.physics.coordinates.log_abs_det_jacobian`.

Reference: design D of ``shared/notes/neutrino_coordinates.md`` (the W mass as a coordinate);
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

from ..physics.coordinates import Guards, from_lepton_frame, log_abs_det_jacobian, to_lepton_frame
from .ttbar_features import N_MOMENTUM, EventArrays

__all__ = ["LeptonFrameTargets", "lepton_momenta", "missing_pt"]

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
class LeptonFrameTargets:
    """Standardised lepton-frame coordinates of the two neutrinos, fitted on the training split.

    ``mean`` and ``sd`` (6,) standardise the coordinates of ``COORDINATE_NAMES`` order; ``guards``
    are the training ranges applied before the inverse.
    """

    mean: np.ndarray
    sd: np.ndarray
    guards: Guards

    @staticmethod
    def coordinates(arrays: EventArrays) -> np.ndarray:
        """Lepton-frame coordinates (n, 2, 3) of the true neutrinos of ``arrays``."""
        nu = _arrays(arrays).targets.astype(np.float64).reshape(-1, 2, 3)
        return to_lepton_frame(nu, lepton_momenta(arrays), missing_pt(arrays))

    @classmethod
    def fit(cls, train: EventArrays, widen: float = 0.05) -> LeptonFrameTargets:
        """Means, widths and guards of the training split's coordinates."""
        u = cls.coordinates(train)
        flat = u.reshape(len(u), 6)
        sd = flat.std(axis=0)
        if np.any(sd == 0):
            raise ValueError("train: a coordinate has zero spread; too few events to standardise")
        return cls(flat.mean(axis=0), sd, Guards.from_training(u, lepton_momenta(train), widen=widen))

    def to_standard(self, arrays: EventArrays) -> np.ndarray:
        """The standardised coordinates (n, 6) of the true neutrinos: the training targets."""
        return ((self.coordinates(arrays).reshape(-1, 6) - self.mean) / self.sd).astype(np.float32)

    def _unstandardise(self, standard, n: int) -> np.ndarray:
        s = np.asarray(standard, dtype=np.float64)
        if s.ndim not in (2, 3) or s.shape[0] != n or s.shape[-1] != 6:
            raise ValueError(f"standard: expected (n, 6) or (n, m, 6) with n = {n} events, got {s.shape}")
        if not np.isfinite(s).all():
            raise ValueError("standard: contains NaN or infinite values")
        return (s * self.sd + self.mean).reshape(*s.shape[:-1], 2, 3)

    def outside(self, standard, arrays: EventArrays) -> np.ndarray:
        """Whether each sample (n, [m]) lies outside the training guards (it is clipped on the way back)."""
        u = self._unstandardise(standard, len(arrays))
        return self.guards.outside(u, lepton_momenta(arrays))

    def to_physical(self, standard, arrays: EventArrays) -> np.ndarray:
        """Standardised coordinates (n, [m,] 6) -> Cartesian (px, py, pz) of nu, nubar in GeV, same shape."""
        u = self._unstandardise(standard, len(arrays))
        lep = lepton_momenta(arrays)
        p = from_lepton_frame(self.guards.apply(u, lep), lep, missing_pt(arrays))
        return p.reshape(*p.shape[:-2], 6)

    def log_abs_det(self, standard, arrays: EventArrays) -> np.ndarray:
        """log |det dp/ds| per event (sample), shape (n,) or (n, m): subtract it from log q(s) to get
        the Cartesian log-density log p(p) (unguarded coordinates)."""
        u = self._unstandardise(standard, len(arrays))
        return log_abs_det_jacobian(u, lepton_momenta(arrays)) + np.log(self.sd).sum()
