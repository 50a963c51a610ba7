r"""The prior as a baseline: a sampler that uses no event information (numpy only).

For events :math:`i = 1..n` it draws :math:`m` training targets with replacement,
:math:`\hat z_{ij} = z_{K_{ij}}`, :math:`K_{ij} \sim \mathrm{Uniform}\{1..N\}`, independently of the
event: the marginal of the truth, which any reconstruction must beat on per-event accuracy (CRPS)
while matching it on the population spectrum (Gneiting and Raftery 2007, eq. 21: the CRPS of a
forecast that ignores the event is that of climatology).

>>> import numpy as np
>>> train = np.arange(6.0).reshape(3, 2)
>>> draws = prior_samples(train, 4, 5, np.random.default_rng(0))
>>> draws.shape, bool(np.isin(draws[..., 0], train[:, 0]).all())
((4, 5, 2), True)
"""

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
