"""Baselines that use no event information."""

from __future__ import annotations

import numpy as np

__all__ = ["prior_samples"]


def prior_samples(train_targets, n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, m, d)`` samples of the prior: m training targets per event (all components of one
    training event together), drawn with replacement independently of the event."""
    targets = np.asarray(train_targets, dtype=float)
    if targets.ndim != 2 or len(targets) == 0:
        raise ValueError(f"train_targets must have shape (N >= 1, d), got {targets.shape}")
    for name, v in (("n", n), ("m", m)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    return targets[rng.integers(0, len(targets), (n, m))]
