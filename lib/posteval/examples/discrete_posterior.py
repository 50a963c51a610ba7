"""Finite inverse problems: a few observations x, a few values of z, a table p(z | x).

Exact arithmetic on such tables tests claims about point estimators' spectra without any
sampling noise, e.g. whether the posterior median (the MAE-optimal estimator) narrows the
marginal the way the posterior mean (the MSE-optimal one) must.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DiscreteProblem:
    """p(x) over observations and p(z | x) over the values ``z_values``.

    Parameters
    ----------
    z_values : (k,) distinct values z can take, increasing
    p_x : (j,) probabilities of the observations
    p_z_given_x : (j, k) rows are posteriors p(z | x)
    """

    z_values: np.ndarray
    p_x: np.ndarray
    p_z_given_x: np.ndarray

    def __post_init__(self):
        z = np.asarray(self.z_values, dtype=float)
        px = np.asarray(self.p_x, dtype=float)
        pz = np.asarray(self.p_z_given_x, dtype=float)
        if z.ndim != 1 or z.size < 2 or np.any(np.diff(z) <= 0):
            raise ValueError("z_values: need at least two strictly increasing values")
        if px.ndim != 1 or np.any(px < 0) or not np.isclose(px.sum(), 1.0):
            raise ValueError("p_x: must be a probability vector")
        if pz.shape != (px.size, z.size) or np.any(pz < 0) or not np.allclose(pz.sum(axis=1), 1.0):
            raise ValueError(f"p_z_given_x: must be ({px.size}, {z.size}) with rows summing to 1")
        object.__setattr__(self, "z_values", z)
        object.__setattr__(self, "p_x", px)
        object.__setattr__(self, "p_z_given_x", pz)

    @property
    def p_z(self) -> np.ndarray:
        """The marginal of z."""
        return self.p_x @ self.p_z_given_x

    def posterior_mean(self) -> np.ndarray:
        """E[z | x] for each observation, shape (j,)."""
        return self.p_z_given_x @ self.z_values

    def posterior_median(self) -> np.ndarray:
        """The lower posterior median for each observation: min{z : P(Z <= z | x) >= 1/2}."""
        cdf = np.cumsum(self.p_z_given_x, axis=1)
        return self.z_values[np.argmax(cdf >= 0.5 - 1e-12, axis=1)]

    def median_is_unique(self) -> np.ndarray:
        """Whether each posterior median is unique (no z with CDF exactly 1/2)."""
        cdf = np.cumsum(self.p_z_given_x, axis=1)[:, :-1]
        return ~np.any(np.isclose(cdf, 0.5), axis=1)

    def var_z(self) -> float:
        """Var[z] of the true marginal."""
        p = self.p_z
        mean = p @ self.z_values
        return float(p @ (self.z_values - mean) ** 2)

    def spectrum_var(self, estimate: np.ndarray) -> float:
        """Variance of a point estimator's outputs (one value per observation) over p(x)."""
        est = np.asarray(estimate, dtype=float)
        if est.shape != self.p_x.shape:
            raise ValueError(f"estimate: need one value per observation {self.p_x.shape}, got {est.shape}")
        mean = self.p_x @ est
        return float(self.p_x @ (est - mean) ** 2)

    def expected_posterior_var(self) -> float:
        """E[Var[z | x]]."""
        mean = self.posterior_mean()
        var = np.sum(self.p_z_given_x * (self.z_values[None, :] - mean[:, None]) ** 2, axis=1)
        return float(self.p_x @ var)

    def sample(self, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(observation index, z) for n events."""
        if int(n) < 1:
            raise ValueError(f"n: need at least one event, got {n}")
        rng = np.random.default_rng(seed)
        xi = rng.choice(self.p_x.size, size=int(n), p=self.p_x)
        u = rng.random(int(n))
        cdf = np.cumsum(self.p_z_given_x[xi], axis=1)
        zi = np.minimum((u[:, None] > cdf).sum(axis=1), self.z_values.size - 1)
        return xi, self.z_values[zi]


def random_problems(n_problems: int, n_obs: int = 2, z_values=(-1.0, 0.0, 1.0), seed: int = 0, concentration: float = 1.0):
    """Random problems: uniform p(x), Dirichlet(concentration) posteriors; a list of DiscreteProblem."""
    if int(n_problems) < 1:
        raise ValueError(f"n_problems: need at least one, got {n_problems}")
    rng = np.random.default_rng(seed)
    z = np.asarray(z_values, dtype=float)
    px = np.full(n_obs, 1.0 / n_obs)
    return [DiscreteProblem(z, px, rng.dirichlet(np.full(z.size, concentration), size=n_obs)) for _ in range(int(n_problems))]
