"""The synthetic bimodal inverse problem and its exact posterior (the referee of chapter 2).

Forward model::

    z ~ N(0, 1),   x = z**2 + eps,   eps ~ N(0, sigma**2).

Observing x, the posterior

    p(z | x) ∝ N(z; 0, 1) N(x; z**2, sigma**2)

is symmetric in z with two modes near ±sqrt(x), so E[z | x] = 0 and median[z | x] = 0:
the squared- and absolute-error optimal point estimates both collapse to zero.

`ExactPosterior` evaluates this posterior on a fine uniform grid per event (vectorised over
events) and gives its density, CDF, quantiles, inverse-CDF samples, mean, median and the
exact CRPS. It is the Bayes limit of the problem: no model has a lower expected CRPS.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["DEFAULT_SIGMA", "sample_bimodal", "model_tensors", "ExactPosterior"]

DEFAULT_SIGMA = 0.1


def _check_sigma(sigma) -> float:
    if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real) or not np.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
    return float(sigma)


def _check_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_vector(values, name: str, n: int | None = None) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} has {arr.size} entries, expected one per event ({n})")
    return arr


def sample_bimodal(n: int, *, sigma: float = DEFAULT_SIGMA, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Draw `n` events (z, x) of the forward model.

    Parameters
    ----------
    n : int
        Number of events.
    sigma : float
        Standard deviation of the measurement noise eps.
    seed : int or numpy.random.Generator

    Returns
    -------
    z, x : arrays (n,)
        The hidden truth and the observation.
    """
    n = _check_int(n, "n")
    sigma = _check_sigma(sigma)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    z = rng.standard_normal(n)
    x = z**2 + sigma * rng.standard_normal(n)
    return z, x


def model_tensors(splits, *, reference: str = "train", device="cpu") -> tuple[dict, dict]:
    """Model inputs of the benchmark per split: the context and the target as float32 ``(n, 1)`` tensors.

    Parameters
    ----------
    splits : mapping of name -> (z, x)
        Hidden values and observations of each split, as `sample_bimodal` returns them.
    reference : str
        The split whose mean and standard deviation of x standardise every context.
    device : str or torch.device

    Returns
    -------
    context, target : dict of name -> torch.Tensor
        ``(x - mean) / sd`` and z of each split.
    """
    import torch

    if reference not in splits:
        raise ValueError(f"reference: no split named {reference!r} (have {list(splits)})")
    x_ref = _check_vector(splits[reference][1], f"x of {reference}")
    loc, scale = x_ref.mean(), x_ref.std()

    def column(a):
        return torch.as_tensor(np.asarray(a), dtype=torch.float32, device=device)[:, None]

    context, target = {}, {}
    for name, (z, x) in splits.items():
        x = _check_vector(x, f"x of {name}")
        target[name], context[name] = column(_check_vector(z, f"z of {name}", len(x))), column((x - loc) / scale)
    return context, target


def _log_unnormalised(z: np.ndarray, x: np.ndarray, sigma: float) -> np.ndarray:
    """log N(z; 0, 1) + log N(x; z^2, sigma^2) up to a constant; x broadcast against z."""
    return -0.5 * z**2 - 0.5 * ((x - z**2) / sigma) ** 2


class ExactPosterior:
    """The exact posterior p(z | x) of each event, on a uniform grid per event.

    Parameters
    ----------
    x : array (n,)
        Observations.
    sigma : float
        Measurement noise of the forward model.
    grid_size : int
        Grid points per event (odd, so that z = 0 is a node).
    tail : float
        The grid of event i spans |z| <= b_i with b_i^2 = max(x_i, 0) + tail * sigma: the
        likelihood beyond it is below exp(-tail^2 / 2) of its maximum (tail = 10: e^-50).

    Attributes
    ----------
    x : (n,) observations; half_width : (n,) the b_i; step : (n,) grid spacing
    grid : (n, G) nodes; pdf : (n, G) normalised density; cdf : (n, G) CDF at the nodes
    log_norm : (n,) log of the normaliser of the unnormalised log density

    Notes
    -----
    The density is integrated with the trapezoid rule; between nodes the CDF is taken as
    linear, and every quantity (quantiles, samples, CRPS) uses that same piecewise-linear
    CDF, so they are mutually consistent. With the defaults the modes of width
    sigma / (2 sqrt(x)) hold at least three nodes per standard deviation for x < 16.
    """

    def __init__(self, x, *, sigma: float = DEFAULT_SIGMA, grid_size: int = 2001, tail: float = 10.0):
        self.x = _check_vector(x, "x")
        self.sigma = _check_sigma(sigma)
        grid_size = _check_int(grid_size, "grid_size", minimum=3)
        if grid_size % 2 == 0:
            raise ValueError(f"grid_size must be odd (z = 0 a grid node), got {grid_size}")
        if isinstance(tail, bool) or not isinstance(tail, numbers.Real) or not tail >= 3:
            raise ValueError(f"tail must be a number >= 3, got {tail!r}")
        self.half_width = np.sqrt(np.maximum(self.x, 0.0) + tail * self.sigma)
        self.step = 2.0 * self.half_width / (grid_size - 1)
        self._unit = np.linspace(-1.0, 1.0, grid_size)
        logp = _log_unnormalised(self.grid, self.x[:, None], self.sigma)
        peak = logp.max(axis=1, keepdims=True)
        dens = np.exp(logp - peak)
        cells = 0.5 * (dens[:, 1:] + dens[:, :-1]) * self.step[:, None]
        area = cells.sum(axis=1)
        self.log_norm = peak[:, 0] + np.log(area)
        self.pdf = dens / area[:, None]
        cdf = np.concatenate([np.zeros((len(self.x), 1)), np.cumsum(cells, axis=1)], axis=1)
        self.cdf = cdf / area[:, None]

    @property
    def grid(self) -> np.ndarray:
        """Grid nodes, shape (n, G) (computed on demand: the grid is uniform per event)."""
        return self._unit[None, :] * self.half_width[:, None]

    @property
    def n(self) -> int:
        """Number of events."""
        return self.x.size

    # -- point summaries -------------------------------------------------------------------
    def mean(self) -> np.ndarray:
        """E[z | x] per event (zero up to rounding, by symmetry)."""
        moment = self.pdf @ self._unit - 0.5 * (self.pdf[:, -1] - self.pdf[:, 0])  # trapezoid, unit grid
        return moment * self.half_width * self.step

    def median(self) -> np.ndarray:
        """The posterior median per event (zero up to rounding, by symmetry).

        The posterior density is positive everywhere (Gaussian noise), so the CDF crosses 1/2 at one
        point and the median is unique; when the modes are well apart the CDF is nearly flat at 1/2
        over the gap between them, so the expected absolute error changes little across the gap. The
        midpoint of the two quantiles just below and above 1/2 is returned (robust to that flatness).
        """
        eps = 1e-9
        return 0.5 * (self.quantile(0.5 - eps) + self.quantile(0.5 + eps))

    # -- density and CDF at given points --------------------------------------------------
    def log_prob(self, z) -> np.ndarray:
        """log p(z_i | x_i) for one value per event, shape (n,)."""
        z = _check_vector(z, "z", self.n)
        return _log_unnormalised(z, self.x, self.sigma) - self.log_norm

    def cdf_at(self, z) -> np.ndarray:
        """F_i(z_i) for one value per event (piecewise-linear CDF), shape (n,)."""
        z = _check_vector(z, "z", self.n)
        k, frac = self._cell(z)
        rows = np.arange(self.n)
        inside = self.cdf[rows, k] + frac * (self.cdf[rows, k + 1] - self.cdf[rows, k])
        return np.where(z < -self.half_width, 0.0, np.where(z >= self.half_width, 1.0, inside))

    def _cell(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grid cell index k (node k <= z < node k+1, clipped) and position in it, in [0, 1]."""
        pos = (z + self.half_width) / self.step
        k = np.clip(np.floor(pos).astype(np.int64), 0, self._unit.size - 2)
        frac = np.clip(pos - k, 0.0, 1.0)
        return k, frac

    # -- quantiles and sampling -------------------------------------------------------------
    def quantile(self, q) -> np.ndarray:
        """Quantiles of each event's posterior.

        Parameters
        ----------
        q : float, or array (k,) of levels in (0, 1), or array (n, k) of per-event levels

        Returns
        -------
        array (n,) for a scalar `q`, else (n, k)
        """
        q_arr = np.asarray(q, dtype=float)
        scalar = q_arr.ndim == 0
        if q_arr.ndim > 2 or (q_arr.ndim == 2 and q_arr.shape[0] != self.n):
            raise ValueError(f"q must be a scalar, (k,) or ({self.n}, k), got shape {q_arr.shape}")
        if q_arr.size == 0 or not np.all(np.isfinite(q_arr)) or np.any((q_arr <= 0) | (q_arr >= 1)):
            raise ValueError("q must hold finite levels strictly inside (0, 1)")
        levels = np.broadcast_to(q_arr.reshape(1, -1) if q_arr.ndim < 2 else q_arr, (self.n, q_arr.size if q_arr.ndim < 2 else q_arr.shape[1]))
        out = self._inverse_cdf(levels)
        return out[:, 0] if scalar else out

    def _inverse_cdf(self, u: np.ndarray) -> np.ndarray:
        """Invert the piecewise-linear CDF row by row; `u` (n, k) in (0, 1)."""
        n, g = self.cdf.shape
        offset = 2.0 * np.arange(n)[:, None]  # rows kept apart: cdf values lie in [0, 1]
        flat = (self.cdf + offset).ravel()
        idx = np.searchsorted(flat, (u + offset).ravel(), side="left").reshape(u.shape)
        idx = np.clip(idx - offset.astype(np.int64) // 2 * g, 1, g - 1)
        rows = np.arange(n)[:, None]
        lo, hi = self.cdf[rows, idx - 1], self.cdf[rows, idx]
        frac = np.clip((u - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0, 1.0)
        return (self._unit[idx - 1] + 2.0 * frac / (self._unit.size - 1)) * self.half_width[:, None]

    def sample(self, m: int, seed=0) -> np.ndarray:
        """`m` exact posterior samples per event by inverse CDF, shape (n, m).

        Parameters
        ----------
        m : int
        seed : int or numpy.random.Generator
        """
        m = _check_int(m, "m")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        u = rng.random((self.n, m))
        u = np.clip(u, 1e-15, 1.0 - 1e-15)
        return self._inverse_cdf(u)

    # -- scoring ----------------------------------------------------------------------------
    def crps(self, y) -> np.ndarray:
        """Exact CRPS of each event's posterior at the truth y_i, shape (n,).

        CRPS(F, y) = ∫ (F(t) - 1{t >= y})^2 dt, integrated in closed form for the
        piecewise-linear CDF (exact per grid cell), plus |y| - b beyond the grid.
        """
        y = _check_vector(y, "y", self.n)
        block = max(1, (1 << 21) // self.cdf.shape[1])  # bounds the temporaries' memory
        return np.concatenate([self._crps_rows(slice(i, i + block), y[i : i + block]) for i in range(0, self.n, block)])

    def _crps_rows(self, rows_slice: slice, y: np.ndarray) -> np.ndarray:
        """Exact CRPS for the events of `rows_slice` (see `crps`)."""
        F, step, b = self.cdf[rows_slice], self.step[rows_slice], self.half_width[rows_slice]
        n, h = F.shape[0], step[:, None]
        F0, F1 = F[:, :-1], F[:, 1:]
        G0, G1 = 1.0 - F0, 1.0 - F1
        left = np.concatenate([np.zeros((n, 1)), np.cumsum(h * (F0**2 + F0 * F1 + F1**2) / 3, axis=1)], axis=1)
        right_cells = h * (G0**2 + G0 * G1 + G1**2) / 3
        right = np.concatenate([np.cumsum(right_cells[:, ::-1], axis=1)[:, ::-1], np.zeros((n, 1))], axis=1)
        pos = (np.clip(y, -b, b) + b) / step
        k = np.clip(np.floor(pos).astype(np.int64), 0, F.shape[1] - 2)
        d = np.clip(pos - k, 0.0, 1.0) * step  # from node k to y
        e = step - d  # from y to node k + 1
        rows = np.arange(n)
        f0, f1 = F[rows, k], F[rows, k + 1]
        slope = (f1 - f0) / step
        fy = f0 + slope * d
        gy = 1.0 - fy
        part_left = f0**2 * d + f0 * slope * d**2 + slope**2 * d**3 / 3
        part_right = gy**2 * e - gy * slope * e**2 + slope**2 * e**3 / 3
        inside = left[rows, k] + part_left + part_right + right[rows, k + 1]
        return inside + np.maximum(np.abs(y) - b, 0.0)
