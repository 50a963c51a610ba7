"""Per-event scores: pointwise errors, the CRPS (ensemble estimators and the normal closed form)
and the energy score of multivariate ensembles.

Names follow scoringrules, ``<score>_<input kind>`` (see the "Names" section of :mod:`posteval.metrics`):
:func:`crps_ensemble` and :func:`energy_score_ensemble` take samples, :func:`crps_normal` a normal
(mu, sigma), and :func:`energy_score_reconstruction` and :func:`scores_reconstruction` a reconstruction,
samples or point predictions (a point is a point mass). The names before 0.3.0 (``crps``, ``energy_score``,
``joint_energy_score``, ``per_event_scores``) are deprecated aliases, removed in 0.4.0.

Ensemble estimators follow scoringrules' names and definitions (argument order here is
``(samples, truth)``). For m samples x_1..x_m of a predictive distribution F and truth y:

* ``nrg``: E|X - y| - 1/(2 m^2) sum_ij |x_i - x_j|, the CRPS of the empirical distribution of
  the samples; biased high by E|X - X'| / (2m) as an estimate of CRPS(F, y).
* ``fair``: E|X - y| - 1/(2 m (m - 1)) sum_ij |x_i - x_j|, unbiased for CRPS(F, y).
* ``pwm``: the probability-weighted-moment form E|X - y| + beta_0 - 2 beta_1 of the sorted
  samples; algebraically equal to ``fair`` (different rounding).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .._deprecation import deprecated_alias
from ._validation import (finite_array, order_free_draws, point_pair, positive_int, power_of_two_scale, real_array, rescaled,
                          samples_truth, seed_value)

CRPS_ESTIMATORS = ("nrg", "fair", "pwm")
ENERGY_ESTIMATORS = ("nrg", "fair")


def rmse(pred: ArrayLike, truth: ArrayLike) -> np.ndarray | float:
    r"""Root-mean-square error per dimension, :math:`\sqrt{\tfrac1n \sum_i (\hat z_i - z_i)^2}`: a float for
    (n,), an array (d,) for (n, d). Minimised by the posterior mean E[z|x] (Hastie, Tibshirani and Friedman
    2009, *The Elements of Statistical Learning*, 2nd ed., eq. 2.13).

    >>> rmse([1.0, 2.0], [0.0, 0.0])
    1.5811388300841898
    """
    p, t = point_pair(pred, truth)
    scale = power_of_two_scale(p, t)
    out = rescaled(np.sqrt(np.mean((p / scale - t / scale) ** 2, axis=0)), scale, "rmse")
    return float(out) if out.ndim == 0 else out


def mae(pred: ArrayLike, truth: ArrayLike) -> np.ndarray | float:
    r"""Mean absolute error per dimension, :math:`\tfrac1n \sum_i |\hat z_i - z_i|`: a float for (n,), an
    array (d,) for (n, d). Minimised by the posterior median (Hastie et al. 2009, section 2.4).

    >>> mae([[1.0, 0.0], [3.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]).tolist()
    [2.0, 1.0]
    """
    p, t = point_pair(pred, truth)
    scale = power_of_two_scale(p, t)
    out = rescaled(np.mean(np.abs(p / scale - t / scale), axis=0), scale, "mae")
    return float(out) if out.ndim == 0 else out


def _estimator(estimator: str, allowed: tuple[str, ...], m: int) -> str:
    if estimator not in allowed:
        raise ValueError(f"estimator: expected one of {allowed}, got {estimator!r}")
    if estimator != "nrg" and m < 2:
        raise ValueError(f"estimator: {estimator!r} needs m >= 2 samples per event, got m = {m}")
    return estimator


def _ensemble_inputs(samples, truth, estimator: str, allowed: tuple[str, ...]):
    """Validated samples (n, m, d) and truth (n, d), both divided by a power-of-two scale.

    Returns ``(s, t, one_d, m, scale)``; the score computed on ``s, t`` is multiplied back by
    ``scale`` (exact in binary floating point), which keeps huge values from overflowing.
    """
    s, t, one_d = samples_truth(samples, truth)
    m = s.shape[1]
    _estimator(estimator, allowed, m)
    scale = power_of_two_scale(s, t)
    if scale != 1.0:
        s, t = s / scale, t / scale
    return s, t, one_d, m, scale


def _half_pair_sum(sorted_samples: np.ndarray) -> np.ndarray:
    """1/2 sum_ij |x_i - x_j| along axis 1 of sorted samples: sum_i (2i - m - 1) x_(i)."""
    m = sorted_samples.shape[1]
    weights = (2.0 * np.arange(1, m + 1) - m - 1.0)[None, :, None]
    return np.sum(weights * sorted_samples, axis=1)


def crps_ensemble(samples: ArrayLike, truth: ArrayLike, *, estimator: str = "nrg") -> np.ndarray:
    """Per-event, per-dimension CRPS of an ensemble (see the module docstring for the estimators).

    Parameters
    ----------
    samples : array (n, m) or (n, m, d)
        m samples per event (m = 1 scores a point estimate with ``nrg``: the CRPS is |x - y|).
    truth : array (n,) or (n, d)
    estimator : "nrg" (default), "fair" or "pwm"
        Equal to ``scoringrules.crps_ensemble(truth, samples, m_axis=1, estimator=...)``.

    Returns
    -------
    array (n,) or (n, d). Cost O(m log m) per event (sorted closed forms).

    Reference: Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102, eq. 21,
    CRPS(F, y) = E|X - y| - 1/2 E|X - X'|; the ensemble estimators as in Ferro (2014) and scoringrules.

    Example
    -------
    >>> crps_ensemble([[0.0, 2.0]], [1.0]).tolist()  # E|X - y| = 1, 1/(2 m^2) sum_ij |x_i - x_j| = 0.5
    [0.5]
    >>> crps_ensemble([[0.0, 2.0]], [1.0], estimator="fair").tolist()  # the pair sum over m (m - 1)
    [0.0]
    """
    s, t, one_d, m, scale = _ensemble_inputs(samples, truth, estimator, CRPS_ESTIMATORS)
    xs = np.moveaxis(s, 1, 2).copy()  # (n, d, m), samples contiguous
    xs.sort(axis=-1)
    term1 = np.abs(xs - t[:, :, None]).mean(axis=-1)
    if estimator == "pwm":
        beta0 = np.sum(xs, axis=-1) / m
        beta1 = xs @ np.arange(m, dtype=float) / (m * (m - 1.0))
        out = term1 + beta0 - 2.0 * beta1
    else:
        norm = m**2 if estimator == "nrg" else m * (m - 1)
        out = term1 - xs @ (2.0 * np.arange(1, m + 1) - m - 1.0) / norm
    out = rescaled(out, scale, "crps")
    return out[:, 0] if one_d else out


def mean_abs_difference(samples: ArrayLike) -> np.ndarray:
    """Per event (and dimension): the unbiased estimate of E|X - X'| from m >= 2 samples,
    sum_{i != j} |x_i - x_j| / (m (m - 1)). The ``nrg`` CRPS exceeds the ``fair`` one by this / (2m).

    samples : (n, m) or (n, m, d); returns (n,) or (n, d).

    Reference: Gneiting and Raftery (2007), eq. 21 (the second term of the CRPS is 1/2 E|X - X'|).

    >>> mean_abs_difference([[0.0, 2.0, 4.0]]).tolist()  # pairs 2, 4, 2, each counted twice, over 3 x 2
    [2.6666666666666665]
    """
    arr = finite_array(samples, "samples", (2, 3))
    s = arr[:, :, None] if arr.ndim == 2 else arr
    m = s.shape[1]
    if m < 2:
        raise ValueError(f"samples: need m >= 2 samples per event, got shape {arr.shape}")
    scale = power_of_two_scale(s)
    out = rescaled(2.0 * _half_pair_sum(np.sort(s / scale, axis=1)) / (m * (m - 1)), scale, "mean_abs_difference")
    return out[:, 0] if arr.ndim == 2 else out


def _pair_norm_sum(x: np.ndarray, chunk_bytes: float = 6.4e7) -> np.ndarray:
    """sum_ij ||x_i - x_j|| per event for x (n, m, d), computed in chunks of events."""
    n, m, d = x.shape
    out = np.empty(n)
    step = max(1, int(chunk_bytes // (8 * m * m)))
    buf = np.empty((step, m, m))
    acc = np.empty((step, m, m))
    for start in range(0, n, step):
        xc = x[start : start + step]
        k = xc.shape[0]
        a, b = acc[:k], buf[:k]
        np.subtract(xc[:, :, None, 0], xc[:, None, :, 0], out=a)
        np.multiply(a, a, out=a)
        for j in range(1, d):
            np.subtract(xc[:, :, None, j], xc[:, None, :, j], out=b)
            np.multiply(b, b, out=b)
            np.add(a, b, out=a)
        np.sqrt(a, out=a)
        out[start : start + k] = a.reshape(k, -1).sum(axis=1)
    return out


def _shifted_energy(x: np.ndarray, y: np.ndarray, n_shifts: int, chunk: int = 2048) -> np.ndarray:
    """Per event: mean_i ||x_i - y|| - 1/2 mean over i and k = 1..K of ||x_i - x_{(i + k) mod m}||,
    for x (n, m, d) in the order of :func:`~._validation.order_free_draws` (so that the pairs are
    seeded random pairs of distinct draws), y (n, d), in chunks of events laid out (d, events, m) so that each term is a
    few contiguous array operations."""
    n, m, d = x.shape
    out = np.empty(n)
    for start in range(0, n, chunk):
        xt = np.ascontiguousarray(x[start : start + chunk].transpose(2, 0, 1))
        c = xt.shape[1]
        yt = y[start : start + c].T
        buf, sq = np.empty((c, m)), np.empty((c, m))
        sq.fill(0.0)
        for j in range(d):
            np.subtract(xt[j], yt[j][:, None], out=buf)
            np.multiply(buf, buf, out=buf)
            np.add(sq, buf, out=sq)
        term1 = np.sqrt(sq, out=sq).mean(axis=1)
        acc = np.zeros(c)
        for k in range(1, n_shifts + 1):
            sq.fill(0.0)
            for j in range(d):
                np.subtract(xt[j], np.roll(xt[j], -k, axis=1), out=buf)
                np.multiply(buf, buf, out=buf)
                np.add(sq, buf, out=sq)
            acc += np.sqrt(sq, out=sq).sum(axis=1)
        out[start : start + c] = term1 - 0.5 * acc / (m * n_shifts)
    return out


def energy_score_ensemble(samples: ArrayLike, truth: ArrayLike, *, estimator: str = "nrg", n_shifts: int | None = None,
                          seed: int = 0) -> np.ndarray:
    """Per-event energy score of a multivariate ensemble: E||X - y|| - 1/2 E||X - X'||.

    Parameters
    ----------
    samples : array (n, m, d)  (or (n, m) for d = 1, where it equals the CRPS)
    truth : array (n, d)  (or (n,))
    estimator : "nrg" (1/m^2 normalisation of the pair sum) or "fair" (1/(m (m - 1)), unbiased)
        Equal to ``scoringrules.energy_score(truth, samples, m_axis=-2, v_axis=-1, estimator=...)``.
    n_shifts : None (all pairs), or K with ``estimator="fair"``: E||X - X'|| estimated from the
        m K pairs (x_i, x_{(i+k) mod m}), k = 1..K < m, of the draws put in a seeded random order
        (:func:`~._validation.order_free_draws`: sorted, then permuted by ``seed`` and the event's
        index), ``1/(m K) sum_i sum_k ||x_i - x_{i+k}||``: random pairs of distinct draws, whatever
        order the draws come in. Every such pair has expectation E||X - X'||, so
        the score is unbiased for the same energy score as "fair", at cost O(m K d) instead of
        O(m^2 d); K = m - 1 is "fair" exactly. Its extra variance is that of a mean of m K pair
        distances, small beside the event-to-event variance of the first term.
    seed : integer >= 0, the random pairs of ``n_shifts`` (unused with all pairs)

    The result does not depend on the order of the draws within an event (they are put in the
    order above first; with all pairs the result is then identical to the last bit).

    Returns
    -------
    array (n,). Cost O(m^2 d) per event (O(m K d) with ``n_shifts``), in chunks of bounded memory.

    Reference: Gneiting and Raftery (2007), eq. 22 (the energy score with beta = 1).

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> s, y = rng.normal(size=(100, 64, 3)), rng.normal(size=(100, 3))
    >>> fair = energy_score_ensemble(s, y, estimator="fair")
    >>> bool(abs(energy_score_ensemble(s, y, estimator="fair", n_shifts=63) - fair).max() < 1e-12)
    True
    >>> shifted = energy_score_ensemble(s, y, estimator="fair", n_shifts=8)
    >>> bool(np.array_equal(shifted, energy_score_ensemble(s[:, ::-1], y, estimator="fair", n_shifts=8)))  # order-free
    True
    """
    s, t, _, m, scale = _ensemble_inputs(samples, truth, estimator, ENERGY_ESTIMATORS)
    return rescaled(_energy_scaled(s, t, estimator, n_shifts, seed_value(seed), 0), scale, "energy_score")


def _energy_scaled(s: np.ndarray, t: np.ndarray, estimator: str, n_shifts: int | None, seed: int,
                   first_event: int, ordered: bool = False) -> np.ndarray:
    """The energy score of validated, scaled draws (n, m, d) of the events first_event.. (the
    index that seeds each event's random pairs, so that chunks agree with one call); ``ordered``:
    the draws are already in the order of ``order_free_draws(s, seed, first_event)``."""
    m = s.shape[1]
    if n_shifts is not None:
        if estimator != "fair":
            raise ValueError(f"n_shifts: needs estimator='fair' (pairs of distinct samples), got {estimator!r}")
        k = positive_int(n_shifts, "n_shifts")
        if k >= m:
            raise ValueError(f"n_shifts: expected 1 <= n_shifts <= m - 1 = {m - 1}, got {n_shifts!r}")
    if not ordered:
        s = order_free_draws(s, seed, first_event)
    if n_shifts is not None:
        out = _shifted_energy(s, t, k)
    else:
        term1 = np.mean(np.sqrt(np.sum((s - t[:, None, :]) ** 2, axis=2)), axis=1)
        norm = m**2 if estimator == "nrg" else m * (m - 1)
        out = term1 - 0.5 * _pair_norm_sum(s) / norm
    return out


def crps_normal(mu: ArrayLike, sigma: ArrayLike, truth: ArrayLike) -> np.ndarray:
    """Closed-form CRPS of N(mu, sigma^2) at the truth (elementwise, broadcasting).

    sigma * (w (2 Phi(w) - 1) + 2 phi(w) - 1/sqrt(pi)) with w = (truth - mu) / sigma
    (Gneiting, Raftery, Westveld and Goldman 2005, *Mon. Wea. Rev.* 133, eq. 5; scoringrules' ``crps_normal``).

    >>> round(float(crps_normal(0.0, 1.0, 0.0)[0]), 6)  # (2 phi(0) - 1/sqrt(pi)) = (sqrt(2) - 1) / sqrt(pi)
    0.233695
    """
    mu = finite_array(np.atleast_1d(real_array(mu, "mu")), "mu", (1, 2, 3))
    sigma = finite_array(np.atleast_1d(real_array(sigma, "sigma")), "sigma", (1, 2, 3))
    y = finite_array(np.atleast_1d(real_array(truth, "truth")), "truth", (1, 2, 3))
    if np.any(sigma <= 0):
        raise ValueError("sigma: must be positive")
    try:
        mu, sigma, y = np.broadcast_arrays(mu, sigma, y)
    except ValueError:
        raise ValueError(f"mu, sigma and truth: shapes {mu.shape}, {sigma.shape}, {y.shape} do not broadcast") from None
    scale = power_of_two_scale(mu, sigma, y)  # exact: keeps y - mu and (y - mu) / sigma in range
    mu, sigma, y = mu / scale, sigma / scale, y / scale
    with np.errstate(over="ignore"):
        w = (y - mu) / sigma
    far = ~np.isfinite(w) | (np.abs(w) > 1e8)  # there 2 Phi(w) - 1 = sign(w), phi(w) = 0 in float64
    wn = np.where(far, 0.0, w)
    near = sigma * (wn * (2 * stats.norm.cdf(wn) - 1) + 2 * stats.norm.pdf(wn) - 1 / np.sqrt(np.pi))
    out = np.where(far, np.abs(y - mu) - sigma / np.sqrt(np.pi), near)
    return rescaled(out, scale, "crps_normal")


def one_per_event(values: ArrayLike) -> np.ndarray:
    """One reconstruction per event: the first sample of ``(n, m, d)`` samples, or ``(n, d)``
    point predictions as they are (one sample of a sampler is a draw from its posterior: for a calibrated
    sampler it is distributed as the truth, Gneiting, Balabdaoui and Raftery 2007, *J. R. Statist. Soc. B* 69).

    >>> one_per_event(np.arange(12.0).reshape(2, 3, 2)).tolist()
    [[0.0, 1.0], [6.0, 7.0]]
    """
    values = finite_array(values, "values", (2, 3))
    return values[:, 0] if values.ndim == 3 else values


def scores_reconstruction(pred: ArrayLike, truth: ArrayLike) -> dict[str, np.ndarray]:
    """Per-event scores of a reconstruction of ``truth`` ``(n, d)``, each the mean over the d components.

    ``pred`` is ``(n, d)`` point predictions or ``(n, m, d)`` samples. Returns ``{"sq": squared
    error, "mae": absolute error, "crps": CRPS}``: the errors are those of one reconstruction per
    event (:func:`one_per_event`); the CRPS is the fair ensemble estimator for samples and the
    absolute error for a point prediction (the CRPS of a point mass; Gneiting and Raftery 2007, eq. 21
    with X = x̂ almost surely). Named ``scores_reconstruction`` after the scheme ``<score>_<input kind>``: it
    returns several scores of one input kind, the reconstruction (samples or points).

    >>> {k: v.tolist() for k, v in scores_reconstruction([[1.0, 3.0]], [[0.0, 0.0]]).items()}
    {'sq': [5.0], 'mae': [2.0], 'crps': [2.0]}
    """
    truth = finite_array(truth, "truth", (2,))
    pred = finite_array(pred, "pred", (2, 3))
    if pred.shape[0] != truth.shape[0] or pred.shape[-1] != truth.shape[1]:
        raise ValueError(f"pred: expected shape (n, d) or (n, m, d) matching truth (n, d) = {truth.shape}, "
                         f"got {pred.shape}")
    k = power_of_two_scale(pred, truth)  # exact; keeps the squares of huge or tiny values in range
    one, t = one_per_event(pred) / k, truth / k
    crps_ = np.abs(one - t) if pred.ndim == 2 else crps_ensemble(pred / k, t, estimator="fair")
    return {"sq": rescaled(((one - t) ** 2).mean(axis=1), k * k, "sq"),
            "mae": rescaled(np.abs(one - t).mean(axis=1), k, "mae"), "crps": rescaled(crps_.mean(axis=1), k, "crps")}


def energy_score_reconstruction(pred: ArrayLike, truth: ArrayLike) -> np.ndarray:
    """Per-event energy score of ``(n, m, d)`` samples (fair estimator) or of ``(n, d)`` point
    predictions, for which it is the Euclidean distance to ``truth`` ``(n, d)`` (a point mass; Gneiting
    and Raftery 2007, eq. 22).

    >>> energy_score_reconstruction([[3.0, 4.0]], [[0.0, 0.0]]).tolist()
    [5.0]
    """
    pred = finite_array(pred, "pred", (2, 3))
    truth = finite_array(truth, "truth", (2,))
    if pred.ndim == 2:
        if pred.shape != truth.shape:
            raise ValueError(f"pred {pred.shape} and truth {truth.shape} must have the same shape")
        return np.linalg.norm(pred - truth, axis=-1)
    return energy_score_ensemble(pred, truth, estimator="fair")


#: the bandwidths (in the data's units) of :func:`mmd_squared_ensemble`'s kernel: a sum of Gaussians that
#: sees structure from a tenth to twice a unit (the chapters pass data in prior-sd units)
MMD_BANDWIDTHS = (0.1, 0.5, 2.0)


def _kernel_mean(a: np.ndarray, b: np.ndarray, bandwidths: tuple[float, ...], same: bool) -> np.ndarray:
    """Per event the mean of k(a_i, b_j) over pairs (i != j when ``same``), k a sum of Gaussians."""
    d2 = np.sum((a[:, :, None, :] - b[:, None, :, :]) ** 2, axis=-1)
    k = sum(np.exp(-0.5 * d2 / h**2) for h in bandwidths)
    if not same:
        return k.mean(axis=(1, 2))
    m = a.shape[1]
    return (k.sum(axis=(1, 2)) - len(bandwidths) * m) / (m * (m - 1))


def mmd_squared_ensemble(samples: ArrayLike, reference: ArrayLike, *,
                         bandwidths: tuple[float, ...] = MMD_BANDWIDTHS) -> np.ndarray:
    """Per-event squared maximum mean discrepancy between a model's draws and reference draws of the
    same event's posterior, the unbiased estimator (Gretton et al. 2012, *J. Mach. Learn. Res.* 13, 723,
    eq. 3):

        MMD^2_i = mean_{j != j'} k(x_ij, x_ij') + mean_{l != l'} k(r_il, r_il') - 2 mean_{j,l} k(x_ij, r_il),

    with k(a, b) = sum_h exp(-||a - b||^2 / (2 h^2)) over ``bandwidths`` h. A point prediction ``(n, d)``
    (or m = 1) is a point mass: its first term is k(x, x) = len(bandwidths). The posterior-mismatch
    metric of the invertible-network benchmarks (Ardizzone et al. 2019, ICLR; Kruse et al. 2021, their
    Err_post), here with a stated kernel; 0 when the model's posterior is the reference's, in expectation.

    Parameters
    ----------
    samples : (n, m, d) draws or (n, d) point predictions
    reference : (n, r, d) draws of the reference posterior, r >= 2
    bandwidths : positive kernel widths, in the data's units

    Returns
    -------
    array (n,); unbiased, so an event's value can be below 0 by noise. Cost O((m + r)^2 d) per event.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(200, 50, 2))
    >>> same = mmd_squared_ensemble(rng.normal(size=(200, 50, 2)), ref)
    >>> point = mmd_squared_ensemble(np.zeros((200, 2)), ref)  # the posterior's mean as a point
    >>> bool(abs(same.mean()) < 0.01 < point.mean())
    True
    """
    r_ = finite_array(reference, "reference", (3,))
    if r_.shape[1] < 2:
        raise ValueError(f"reference: need r >= 2 draws per event, got shape {r_.shape}")
    s = finite_array(samples, "samples", (2, 3))
    s = s[:, None, :] if s.ndim == 2 else s
    if s.shape[0] != r_.shape[0] or s.shape[2] != r_.shape[2]:
        raise ValueError(f"samples and reference: samples {s.shape} must be (n, m, d) or (n, d) for reference "
                         f"(n, r, d) = {r_.shape}")
    hs = tuple(bandwidths) if isinstance(bandwidths, (tuple, list)) else ()
    if not hs or any(isinstance(h, bool) or not isinstance(h, (int, float)) or not 0 < h < np.inf for h in hs):
        raise ValueError(f"bandwidths: expected a non-empty tuple of positive numbers, got {bandwidths!r}")
    out = np.empty(len(s))
    step = max(1, int(2e7 // max(1, (s.shape[1] + r_.shape[1]) ** 2 * s.shape[2])))
    for i in range(0, len(s), step):
        a, b = s[i:i + step], r_[i:i + step]
        own = np.full(len(a), float(len(hs))) if a.shape[1] == 1 else _kernel_mean(a, a, hs, True)
        out[i:i + step] = own + _kernel_mean(b, b, hs, True) - 2 * _kernel_mean(a, b, hs, False)
    return out


# the names before 0.3.0, deprecated (issue 40): removed in 0.4.0
crps = deprecated_alias(crps_ensemble, "crps")
energy_score = deprecated_alias(energy_score_ensemble, "energy_score")
joint_energy_score = deprecated_alias(energy_score_reconstruction, "joint_energy_score")
per_event_scores = deprecated_alias(scores_reconstruction, "per_event_scores")
