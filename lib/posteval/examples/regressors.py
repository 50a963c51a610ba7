"""Closed-form least-squares regressors of z on a scalar x, used to show that the spectrum
of an MSE-trained estimator converges to that of E[z | x] (not to that of z) as data grow."""

from __future__ import annotations

import numpy as np


def _xz(x, z) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    z = np.asarray(z, dtype=float)
    if x.ndim != 1 or x.shape != z.shape or x.size == 0:
        raise ValueError(f"x and z: need equal non-empty 1-D arrays, got {x.shape} and {z.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(z))):
        raise ValueError("x and z: contain NaN or infinite values")
    return x, z


def fit_polynomial(x, z, degree: int = 3):
    """Least-squares polynomial of the given degree; returns a predict(x) function."""
    x, z = _xz(x, z)
    if degree < 0 or degree >= x.size:
        raise ValueError(f"degree: need 0 <= degree < n = {x.size}, got {degree}")
    coef = np.polynomial.polynomial.polyfit(x, z, degree)
    return lambda xq: np.polynomial.polynomial.polyval(np.asarray(xq, dtype=float), coef)


def fit_binned_mean(x, z, n_bins: int | None = None):
    """Nonparametric regression: the mean of z in quantile bins of x (about sqrt(n) of them,
    at least 5 events each), interpolated linearly between bin centres; returns predict(x)."""
    x, z = _xz(x, z)
    if n_bins is None:
        n_bins = max(1, min(int(np.sqrt(x.size)), x.size // 5))
    if n_bins < 1:
        raise ValueError(f"n_bins: need at least one bin, got {n_bins}")
    edges = np.quantile(x, np.linspace(0, 1, n_bins + 1))
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins)
    keep = counts > 0
    centres = (np.bincount(idx, weights=x, minlength=n_bins)[keep]) / counts[keep]
    means = (np.bincount(idx, weights=z, minlength=n_bins)[keep]) / counts[keep]
    return lambda xq: np.interp(np.asarray(xq, dtype=float), centres, means)
