"""The 4-DOF robot arm of inverse kinematics (chapter 5): its simulator and an exact reference posterior.

The arm of Ardizzone et al. (2019), "Analyzing Inverse Problems with Invertible Neural Networks", ICLR
(arXiv:1808.04730), Section 4.2, benchmarked by Kruse, Ardizzone, Rother and Köthe (2021), "Benchmarking
Invertible Architectures on Inverse Problems" (arXiv:2101.10763): a rail of height x1 and three segments
of lengths l = (0.5, 0.5, 1.0) at the joint angles x2, x3, x4, each relative to the one before. The end
point y = (h, v) is

    h = sum_i l_i cos(x2 + ... + x_{i+1}),      v = x1 + sum_i l_i sin(x2 + ... + x_{i+1}),

with the prior x ~ N(0, diag(0.25^2, 0.5^2, 0.5^2, 0.5^2)). The published benchmark observes y exactly;
here y is observed with Gaussian noise of standard deviation ``noise`` in each coordinate, which makes the
posterior p(x | y) ∝ p(x) N(y; f(x), noise^2 I) a proper density (a thickened two-dimensional family of
poses in four dimensions) and rejection sampling from the prior exact (:func:`posterior_by_rejection`).

Example
-------
>>> x, y = sample_arm(3, noise=0.05, seed=0)
>>> x.shape, y.shape
((3, 4), (3, 2))
>>> end_point(np.zeros((1, 4)))  # straight arm along h: 0.5 + 0.5 + 1.0
array([[2., 0.]])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

__all__ = ["SEGMENTS", "PRIOR_SD", "DEFAULT_NOISE", "end_point", "joint_positions", "sample_prior", "sample_arm",
           "ReferencePosterior", "posterior_by_rejection", "arm_posterior", "resimulation_error"]

#: lengths of the three segments (Ardizzone et al. 2019, Section 4.2)
SEGMENTS = (0.5, 0.5, 1.0)
#: prior standard deviations of (rail height, angle 1, angle 2, angle 3); angles in radians
PRIOR_SD = (0.25, 0.5, 0.5, 0.5)
#: the book's end-point noise (a departure from the noise-free published benchmark, see the module)
DEFAULT_NOISE = 0.05
#: proposals per round of the rejection sampler, at most (memory: 2^16 x 4 floats per event)
_ROUND = 2**16


def _poses(x, name: str = "x") -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim < 1 or a.shape[-1] != 4:
        raise ValueError(f"{name}: expected poses (..., 4) = (rail height, three angles), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: poses must be finite")
    return a


def _noise(noise) -> float:
    if isinstance(noise, bool) or not isinstance(noise, (int, float, np.floating)) or not 0 < noise < np.inf:
        raise ValueError(f"noise: expected a positive finite standard deviation, got {noise!r}")
    return float(noise)


def _noise_vector(noise, dy: int) -> np.ndarray:
    """One standard deviation per observed coordinate (a number: the same for all)."""
    if np.ndim(noise) == 0:
        return np.full(dy, _noise(noise))
    sd = np.asarray(noise, dtype=float)
    if sd.shape != (dy,) or not np.all((sd > 0) & np.isfinite(sd)):
        raise ValueError(f"noise: expected a positive sd or {dy} of them (one per coordinate of y), got {noise!r}")
    return sd


def _count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def joint_positions(x) -> np.ndarray:
    """The arm's four points, the rail base (0, x1), the two joints and the end point: ``(..., 4, 2)``.

    Point k (k = 1, 2, 3) is (0, x1) + sum_{i <= k} l_i (cos φ_i, sin φ_i) with φ_i = x2 + ... + x_{i+1}.

    >>> joint_positions(np.array([0.1, 0.0, 0.0, 0.0]))[-1]  # straight: end point at (2, 0.1)
    array([2. , 0.1])
    """
    a = _poses(x)
    phi = np.cumsum(a[..., 1:], axis=-1)
    steps = np.stack([np.asarray(SEGMENTS) * np.cos(phi), np.asarray(SEGMENTS) * np.sin(phi)], axis=-1)
    base = np.stack([np.zeros_like(a[..., 0]), a[..., 0]], axis=-1)[..., None, :]
    return np.concatenate([base, base + np.cumsum(steps, axis=-2)], axis=-2)


def end_point(x) -> np.ndarray:
    """The forward model f: poses ``(..., 4)`` to end points ``(..., 2)`` = (h, v), see the module formula.

    >>> end_point(np.array([[0.0, np.pi / 2, 0.0, 0.0]]))  # the arm straight up from the rail
    array([[1.2246468e-16, 2.0000000e+00]])
    """
    a = _poses(x)
    phi = np.cumsum(a[..., 1:], axis=-1)
    seg = np.asarray(SEGMENTS)
    return np.stack([(seg * np.cos(phi)).sum(-1), a[..., 0] + (seg * np.sin(phi)).sum(-1)], axis=-1)


def sample_prior(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` poses from the prior N(0, diag(PRIOR_SD^2)), drawn with ``rng``: ``(n, 4)``.

    >>> sample_prior(2, np.random.default_rng(0)).shape
    (2, 4)
    """
    return rng.normal(size=(_count(n, "n"), 4)) * np.asarray(PRIOR_SD)


def sample_arm(n: int, *, noise: float = DEFAULT_NOISE, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` events (x, y): poses from the prior and their end points with Gaussian noise of sd ``noise``.

    Returns x ``(n, 4)`` and y = f(x) + ε ``(n, 2)``, ε ~ N(0, noise^2 I); the same seed, the same events.

    >>> x, y = sample_arm(1000, noise=0.05, seed=1)
    >>> bool(abs(np.std(y - end_point(x)) - 0.05) < 0.005)
    True
    """
    sd = _noise(noise)
    rng = np.random.default_rng(seed)
    x = sample_prior(n, rng)
    return x, end_point(x) + sd * rng.normal(size=(len(x), 2))


@dataclass(frozen=True)
class ReferencePosterior:
    """Draws of an exact posterior per observation, with what the rejection cap cost.

    samples : (n, m, dim) accepted draws; an event that fell short of m holds its accepted draws first and
        NaN after them
    accepted : (n,) draws accepted per event (at most m)
    proposals : (n,) prior draws proposed per event
    """

    samples: np.ndarray
    accepted: np.ndarray
    proposals: np.ndarray

    @property
    def complete(self) -> np.ndarray:
        """Events with all m draws: the events an evaluation against this reference may use."""
        return self.accepted == self.samples.shape[1]

    @property
    def shortfall_fraction(self) -> float:
        """The fraction of events that reached the proposal cap with fewer than m accepted draws."""
        return float(np.mean(~self.complete))


def _one_event(y, m: int, forward, propose, noise: np.ndarray, cap: int, rng) -> tuple[np.ndarray, int, int]:
    """Rejection for one observation: rounds of prior proposals, each kept with probability
    exp(-sum_k (y_k - f_k(x))^2 / (2 noise_k^2)), until m are kept or ``cap`` proposals were made."""
    kept, found, used, rate = [], 0, 0, None
    while found < m and used < cap:
        want = 4096 if rate is None else int(np.ceil(1.25 * (m - found) / max(rate, 1.0 / cap)))
        k = int(min(max(want, 1024), _ROUND, cap - used))
        x = propose(k, rng)
        miss = np.sum(((forward(x) - y) / noise) ** 2, axis=-1)
        keep = rng.random(k) < np.exp(-0.5 * miss)
        kept.append(x[keep][: m - found])
        found += int(keep.sum())
        used += k
        rate = found / used
    draws = np.concatenate(kept, axis=0)[:m]
    return draws, len(draws), used


def posterior_by_rejection(y, m: int, *, forward: Callable[[np.ndarray], np.ndarray],
                           propose: Callable[[int, np.random.Generator], np.ndarray], noise, seed: int = 0,
                           max_proposals: int = 2_000_000, complete: Callable | None = None,
                           progress: bool = False) -> ReferencePosterior:
    """m exact draws of p(x | y) ∝ p(x) N(y; f(x), diag(noise^2)) per observation, by rejection from the prior.

    A prior draw x is accepted with probability exp(-sum_k (y_k - f_k(x))^2 / (2 noise_k^2)) ≤ 1, the
    likelihood over its maximum; an accepted draw then has the density p(x) N(y; f(x), diag(noise^2)) / Z, the
    posterior, exactly (von Neumann 1951; the ABC view with a Gaussian kernel of the noise's own width:
    Wilkinson 2013, "Approximate Bayesian computation (ABC) gives exact results under the assumption of model
    error", *Stat. Appl. Genet. Mol. Biol.* 12, 129). Each event draws from its own generator, seeded by
    (seed, its index), so no event's draws depend on the others or on their order. An event stops at
    ``max_proposals`` proposals: if it has fewer than m draws by then, the shortfall is counted
    (:attr:`ReferencePosterior.shortfall_fraction`) and its missing draws are NaN, never filled in.

    Why this size: the forward model, the prior, the noise and the cap are the problem's own parts; a
    problem with a conditionally Gaussian coordinate passes ``complete`` to draw it exactly after the rest.

    Parameters
    ----------
    y : (n, dy) observations
    m : draws per event
    forward : f, maps proposals (k, dim) to (k, dy)
    propose : draws (k, dim) from the prior with the given generator
    noise : the observation noise's standard deviation, one number or one per coordinate of y
    seed : the seed of the events' generators
    max_proposals : the cap of proposals per event
    complete : None, or ``complete(draws, y_i, rng) -> draws'`` applied to each event's accepted draws with
        its generator (e.g. to add a coordinate drawn from its exact conditional)
    progress : a tqdm bar over the events

    Example: a Gaussian prior N(0, 1) seen through y = x + ε, ε ~ N(0, 0.5^2), has the posterior
    N(0.8 y, 0.2); the sampler reproduces it.

    >>> ref = posterior_by_rejection(np.array([[1.0]]), 4000, forward=lambda x: x,
    ...                              propose=lambda k, rng: rng.normal(size=(k, 1)), noise=0.5, seed=0)
    >>> round(float(ref.samples.mean()), 1), round(float(ref.samples.var()), 1), ref.shortfall_fraction
    (0.8, 0.2, 0.0)
    """
    obs = np.asarray(y, dtype=float)
    if obs.ndim != 2 or len(obs) == 0 or not np.all(np.isfinite(obs)):
        raise ValueError(f"y: expected finite observations (n, dy) with n >= 1, got shape {obs.shape}")
    m, cap, sd = _count(m, "m"), _count(max_proposals, "max_proposals"), _noise_vector(noise, obs.shape[1])
    if cap < m:
        raise ValueError(f"max_proposals: must be at least m = {m}, got {cap}")
    if not callable(forward) or not callable(propose) or not (complete is None or callable(complete)):
        raise ValueError("forward, propose and complete: expected callables f(x), propose(k, rng), complete(...)")
    out = []
    accepted, proposals = np.zeros(len(obs), int), np.zeros(len(obs), int)
    for i in _progress(range(len(obs)), progress):
        rng = np.random.default_rng([int(seed), i])
        draws, accepted[i], proposals[i] = _one_event(obs[i], m, forward, propose, sd, cap, rng)
        out.append(draws if complete is None else complete(draws, obs[i], rng))
    samples = np.full((len(obs), m, out[0].shape[-1]), np.nan)
    for i, draws in enumerate(out):
        samples[i, : len(draws)] = draws
    return ReferencePosterior(samples, accepted, proposals)


def _progress(items, show: bool):
    if not show:
        return items
    return tqdm(items, desc="exact posterior", unit="event")


def _angles_end_point(angles: np.ndarray) -> np.ndarray:
    """(h, sum_i l_i sin φ_i) of joint angles (k, 3): the end point without the rail height."""
    return end_point(np.concatenate([np.zeros((len(angles), 1)), angles], axis=1))


def _prior_angles(k: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(k, 3)) * np.asarray(PRIOR_SD[1:])


def arm_posterior(y, m: int, *, noise: float = DEFAULT_NOISE, seed: int = 0, max_proposals: int = 2_000_000,
                  progress: bool = False) -> ReferencePosterior:
    """The arm's exact posterior draws per observed end point ``(n, m, 4)``, by :func:`posterior_by_rejection`
    over the three angles with the rail height x1 integrated out, then x1 from its exact conditional.

    v = x1 + s(angles) + ε with x1 ~ N(0, τ^2), τ = PRIOR_SD[0], so given the angles, v is N(s, τ^2 + σ^2):
    the angles are drawn by rejection with the noise (σ, sqrt(τ^2 + σ^2)) on (h, v), and then
    x1 | angles, y ~ N(τ^2 (v - s) / (τ^2 + σ^2), τ^2 σ^2 / (τ^2 + σ^2)). The pair has the joint posterior
    exactly, and about sqrt(τ^2 + σ^2) / σ times fewer proposals are rejected than from the full prior (5 at
    σ = 0.05). Reference: integrating a Gaussian coordinate out before sampling, Casella and Robert (1996),
    "Rao-Blackwellisation of sampling schemes", *Biometrika* 83, 81.

    >>> x, y = sample_arm(2, seed=0)
    >>> ref = arm_posterior(y, 50, seed=1)
    >>> ref.samples.shape, bool(np.all(np.abs(end_point(ref.samples) - y[:, None]).max() < 0.5))
    ((2, 50, 4), True)
    """
    sd, tau2 = _noise(noise), PRIOR_SD[0] ** 2
    gain, var = tau2 / (tau2 + sd**2), tau2 * sd**2 / (tau2 + sd**2)

    def rail_height(angles, obs, rng):
        mean = gain * (obs[1] - _angles_end_point(angles)[:, 1])
        return np.concatenate([(mean + np.sqrt(var) * rng.normal(size=len(angles)))[:, None], angles], axis=1)

    return posterior_by_rejection(y, m, forward=_angles_end_point, propose=_prior_angles,
                                  noise=(sd, np.sqrt(tau2 + sd**2)), seed=seed, max_proposals=max_proposals,
                                  complete=rail_height, progress=progress)


def resimulation_error(x_hat, y) -> np.ndarray:
    """Per event the mean squared distance of the re-simulated end points from the observation:
    (1/m) sum_j ||f(x̂_j) - y||^2 for draws x̂ ``(n, m, 4)``, or ||f(x̂) - y||^2 for points ``(n, 4)``.

    The re-simulation error of Kruse et al. (2021) (their Err_resim, averaged over observations); an exact
    posterior draw has about 2 noise^2 here (the observation's own noise, in two coordinates).

    >>> x, y = sample_arm(4000, noise=0.05, seed=0)
    >>> round(float(resimulation_error(x, y).mean() / (2 * 0.05**2)), 1)  # the true pose: the noise alone
    1.0
    """
    obs = np.asarray(y, dtype=float)
    pts = _poses(x_hat, "x_hat")
    if obs.ndim != 2 or obs.shape[1] != 2 or pts.shape[0] != obs.shape[0] or pts.ndim not in (2, 3):
        raise ValueError(f"x_hat and y: expected poses (n, [m,] 4) and end points (n, 2), got {pts.shape} and {obs.shape}")
    miss = np.sum((end_point(pts) - (obs if pts.ndim == 2 else obs[:, None])) ** 2, axis=-1)
    return miss if pts.ndim == 2 else miss.mean(axis=1)
