"""Chapter-3 figure helpers: one reconstruction per event, and the events whose samples split in two."""

from __future__ import annotations

import numpy as np

__all__ = ["one_per_event", "two_group_separation"]


def one_per_event(values) -> np.ndarray:
    """One reconstruction per event: the first sample of ``(n, m, d)`` samples, or ``(n, d)`` predictions as they are."""
    values = np.asarray(values)
    if values.ndim not in (2, 3):
        raise ValueError(f"values must have shape (n, d) or (n, m, d), got {values.shape}")
    return values[:, 0] if values.ndim == 3 else values


def two_group_separation(x) -> np.ndarray:
    """Per row of ``(n, m)`` samples: the largest between-group share of the variance over all splits
    of the sorted samples into a lower and an upper group (1 = two spikes, 0 = all equal).
    """
    x = np.sort(np.asarray(x, dtype=np.float64), axis=1)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"x must have shape (n, m) with m >= 2, got {x.shape}")
    m = x.shape[1]
    k = np.arange(1, m)
    csum = np.cumsum(x, axis=1)[:, :-1]
    mean_lo, mean_hi = csum / k, (x.sum(1, keepdims=True) - csum) / (m - k)
    between = k * (m - k) / m**2 * (mean_hi - mean_lo) ** 2
    return between.max(axis=1) / np.maximum(x.var(axis=1), 1e-12)
