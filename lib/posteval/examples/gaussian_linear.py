"""The Gaussian linear inverse problem x = z + eps, z ~ N(0, 1), eps ~ N(0, s^2).

Its posterior is Gaussian: z | x ~ N(x / (1 + s^2), s^2 / (1 + s^2)), so every term of the
law of total variance is known in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GaussianLinear:
    """x = z + eps with z ~ N(0, 1) and eps ~ N(0, noise^2)."""

    noise: float = 0.5

    def __post_init__(self):
        if not (np.isfinite(self.noise) and self.noise > 0):
            raise ValueError(f"noise: must be a positive finite number, got {self.noise}")

    def sample(self, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(z, x), each of shape (n,)."""
        if int(n) < 1:
            raise ValueError(f"n: need at least one event, got {n}")
        rng = np.random.default_rng(seed)
        z = rng.standard_normal(int(n))
        return z, z + self.noise * rng.standard_normal(int(n))

    def posterior_mean(self, x) -> np.ndarray:
        """E[z | x]."""
        return np.asarray(x, dtype=float) / (1.0 + self.noise**2)

    @property
    def posterior_var(self) -> float:
        """Var[z | x], the same for every x."""
        return self.noise**2 / (1.0 + self.noise**2)

    @property
    def spectrum_var(self) -> float:
        """Var[E[z | x]] = Var[z] - E[Var[z | x]] = 1 / (1 + s^2)."""
        return 1.0 / (1.0 + self.noise**2)

    def posterior_samples(self, x, m: int, seed: int = 0) -> np.ndarray:
        """m exact posterior samples per event, shape (n, m)."""
        x = np.asarray(x, dtype=float)
        rng = np.random.default_rng(seed)
        return self.posterior_mean(x)[:, None] + np.sqrt(self.posterior_var) * rng.standard_normal((x.size, int(m)))

