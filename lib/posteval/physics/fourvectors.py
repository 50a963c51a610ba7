"""Plain numpy conversions of four-vectors stored as (..., 4) arrays of (px, py, pz, E) in GeV."""

from __future__ import annotations

import numpy as np


def pt(p4: np.ndarray) -> np.ndarray:
    """Transverse momentum of (..., >=2) momenta."""
    return np.hypot(p4[..., 0], p4[..., 1])


def phi(p4: np.ndarray) -> np.ndarray:
    """Azimuth in (-pi, pi]."""
    return np.arctan2(p4[..., 1], p4[..., 0])


def eta(p4: np.ndarray) -> np.ndarray:
    """Pseudorapidity; +-inf along the beam axis (pT = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.arcsinh(p4[..., 2] / pt(p4))


def mass(p4: np.ndarray) -> np.ndarray:
    """Invariant mass, with negative m^2 (rounding) clipped to 0."""
    m2 = p4[..., 3] ** 2 - np.sum(p4[..., :3] ** 2, axis=-1)
    return np.sqrt(np.maximum(m2, 0.0))


def from_pt_eta_phi_e(pt_, eta_, phi_, e) -> np.ndarray:
    """(..., 4) array (px, py, pz, E) from pT, eta, phi and energy."""
    return np.stack([pt_ * np.cos(phi_), pt_ * np.sin(phi_), pt_ * np.sinh(eta_), e], axis=-1)


def from_pt_eta_phi_m(pt_, eta_, phi_, m) -> np.ndarray:
    """(..., 4) array (px, py, pz, E) from pT, eta, phi and mass."""
    pz = pt_ * np.sinh(eta_)
    e = np.sqrt(pt_**2 + pz**2 + np.asarray(m) ** 2)
    return np.stack([pt_ * np.cos(phi_), pt_ * np.sin(phi_), pz, e], axis=-1)


def delta_r(eta1, phi1, eta2, phi2) -> np.ndarray:
    """Angular distance sqrt(d_eta^2 + d_phi^2) with d_phi wrapped to (-pi, pi]."""
    dphi = np.mod(np.asarray(phi1) - phi2 + np.pi, 2 * np.pi) - np.pi
    return np.hypot(np.asarray(eta1) - eta2, dphi)
