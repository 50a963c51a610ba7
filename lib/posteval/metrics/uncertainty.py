"""Event-sampling uncertainty: a paired bootstrap over events for per-event metrics, and the
paired comparison of two models on the same events.

Only the variance from the finite set of test events is estimated here. The variance from
training (another seed gives another model) is not: it needs several trained models. The
helpers take per-event arrays so that a caller can stack per-event scores of several training
seeds as columns and resample events for all of them at once (:func:`bootstrap_means`), then
combine the replicates across seeds as it sees fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ._validation import (finite_array, level_value, point_pair, positive_int, power_of_two_scale, replicate_array,
                          rescaled, samples_truth, seed_value)
from .scores import crps, energy_score


def _ci(ci: float) -> float:
    return level_value(ci, "ci")


def bootstrap_weights(n_events: int, *, n_boot: int = 1000, seed: int = 0, chunk: int = 50) -> Iterator[np.ndarray]:
    """Event multiplicities of `n_boot` bootstrap resamples of n_events, in chunks (r, n_events).

    Row b counts how often each event is drawn in resample b (draws with replacement, total
    n_events). The same seed gives the same resamples, so two calls pair events across models.
    """
    n = positive_int(n_events, "n_events")
    b = positive_int(n_boot, "n_boot", minimum=2)
    rng = np.random.default_rng(seed_value(seed))
    for start in range(0, b, chunk):
        r = min(chunk, b - start)
        idx = rng.integers(0, n, size=(r, n)) + (np.arange(r) * n)[:, None]
        yield np.bincount(idx.ravel(), minlength=r * n).reshape(r, n).astype(float)


def _as_matrix(values, name: str):
    """(matrix (n, k) dense or CSR, whether it was 1-D)."""
    if sparse.issparse(values):
        mat = sparse.csr_matrix(values, dtype=float)
        if mat.shape[0] == 0:
            raise ValueError(f"{name}: empty")
        if mat.shape[0] < 2**24 and np.all(mat.data == np.round(mat.data)) and np.abs(mat.data).max(initial=0) <= 1:
            mat = mat.astype(np.float32)  # 0/1 indicators: float32 sums of bootstrap counts are exact
        return mat, False
    arr = finite_array(values, name, (1, 2))
    return (arr[:, None], True) if arr.ndim == 1 else (arr, False)


def bootstrap_means(values, *, n_boot: int = 1000, seed: int = 0):
    """Column means of `values` over bootstrap resamples of its rows (events), paired across columns.

    Parameters
    ----------
    values : (n,) or (n, k) per-event values (a dense array or a scipy sparse matrix, e.g. one-hot
        bin indicators); columns may be different metrics, models or training seeds. A list of
        such arrays (same n) is resampled with the same events for all of them.
    n_boot, seed : number of resamples and their seed

    Returns
    -------
    (n_boot,) or (n_boot, k) resampled means (a list of them for a list input); every column uses
    the same resampled events.
    """
    many = isinstance(values, (list, tuple))
    blocks = [_as_matrix(v, f"values[{i}]" if many else "values") for i, v in enumerate(values if many else [values])]
    n = blocks[0][0].shape[0]
    if any(mat.shape[0] != n for mat, _ in blocks):
        raise ValueError(f"values: every array needs the same number of events, got {[m.shape[0] for m, _ in blocks]}")
    out = [[] for _ in blocks]
    for w in bootstrap_weights(n, n_boot=n_boot, seed=seed):
        for acc, (mat, _) in zip(out, blocks):
            if sparse.issparse(mat):
                acc.append(np.asarray((mat.T @ w.T.astype(mat.dtype)).T, dtype=float) / n)
            else:
                acc.append(w @ mat / n)
    res = [np.concatenate(acc, axis=0) for acc in out]
    res = [r[:, 0] if one_col else r for r, (_, one_col) in zip(res, blocks)]
    return res if many else res[0]


def _percentile(rep: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    a = (1 - ci) / 2
    lo, hi = np.quantile(rep, [a, 1 - a], axis=0)
    return lo, hi


def percentile_interval(replicates, ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed percentile interval of bootstrap replicates along axis 0 (at least 2, finite)."""
    return _percentile(replicate_array(replicates), _ci(ci))


def bootstrap_pvalue(replicates, null: float = 0.0) -> np.ndarray | float:
    """Two-sided bootstrap p-value of `null` for a statistic with these replicates (axis 0):
    2 min(#{rep <= null} + 1, #{rep >= null} + 1) / (n_boot + 1), capped at 1. It is below
    1 - ci exactly when `null` lies outside the percentile interval (up to the +1). The
    replicates must be at least 2 and finite."""
    rep = replicate_array(replicates)
    null = float(null)
    if not np.isfinite(null):
        raise ValueError(f"null: expected a finite number, got {null!r}")
    b = rep.shape[0]
    low = (np.sum(rep <= null, axis=0) + 1) / (b + 1)
    high = (np.sum(rep >= null, axis=0) + 1) / (b + 1)
    out = np.minimum(1.0, 2.0 * np.minimum(low, high))
    return float(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------------------------------------
# per-event metrics and paired comparison
# ---------------------------------------------------------------------------------------------
METRICS = ("crps", "mae", "rmse", "energy_score")


def event_scores(pred, truth, *, metric: str = "crps", estimator: str = "nrg",
                 name: str = "pred") -> tuple[np.ndarray, Callable]:
    """Per-event values whose mean, passed through the returned function, is the metric.

    Parameters
    ----------
    pred : samples (n, m[, d]) or point predictions (n[, d]) (a point prediction is a point
        mass: its CRPS and energy score are the absolute error / Euclidean distance)
    truth : (n,) or (n, d)
    metric : "crps", "mae", "rmse" (per-event squared error, then the square root of the mean) or
        "energy_score" (joint over the d dimensions)
    estimator : CRPS / energy-score estimator for samples (see :mod:`posteval.metrics.scores`)

    Returns
    -------
    (values (n,) or (n, d), finish) with metric = finish(values.mean(axis=0)).
    """
    t = finite_array(truth, "truth", (1, 2))
    p = finite_array(pred, name, (t.ndim, t.ndim + 1))
    return _scaled_event_scores(p, t, metric, estimator, name, power_of_two_scale(p, t))


def _scaled_event_scores(p, t, metric, estimator, name, k):
    """event_scores of data divided by the exact power of two ``k`` (which keeps squares and
    sums of huge or tiny data in range); the returned finish multiplies ``k`` back."""
    if metric not in METRICS:
        raise ValueError(f"metric: expected one of {METRICS}, got {metric!r}")
    is_samples = p.ndim == t.ndim + 1
    p, t = p / k, t / k
    back = lambda v: rescaled(np.asarray(v, dtype=float), k, metric)  # noqa: E731
    if metric == "energy_score":
        if not is_samples:
            samples_truth(p[:, None], t, (name, "truth"))
            return np.linalg.norm((p - t).reshape(len(t), -1), axis=1), back
        return energy_score(p, t, estimator=estimator), back
    if is_samples and metric == "crps":
        return crps(p, t, estimator=estimator), back
    if is_samples:
        raise ValueError(f"{name}: {metric} needs point predictions (n[, d]), got samples {p.shape}")
    pp, tt = point_pair(p, t, (name, "truth"))
    if metric == "rmse":
        return (pp - tt) ** 2, lambda v: rescaled(np.sqrt(np.asarray(v, dtype=float)), k, metric)
    return np.abs(pp - tt), back  # mae, and crps of a point mass


@dataclass(frozen=True)
class Comparison:
    """Difference metric(a) - metric(b) on the same events, with its bootstrap interval and p-value."""

    diff: float | np.ndarray
    lo: float | np.ndarray
    hi: float | np.ndarray
    pvalue: float | np.ndarray
    metric: str
    n_boot: int


def compare(a, b, truth, *, metric: str = "crps", estimator: str = "nrg", ci: float = 0.95,
            n_boot: int = 1000, seed: int = 0) -> Comparison:
    """Paired comparison of two models' metric on the same events.

    Parameters
    ----------
    a, b : predictions of the two models (samples or points, as :func:`event_scores`)
    truth : (n,) or (n, d): per-dimension results for (n, d) except the energy score
    metric, estimator : as :func:`event_scores`
    ci, n_boot, seed : interval level, bootstrap resamples (the same events for a and b) and seed

    Returns
    -------
    Comparison with ``diff`` = metric(a) - metric(b), its percentile interval ``lo``/``hi`` and the
    two-sided bootstrap ``pvalue`` of "no difference". This is event-sampling variance only:
    training variance (another seed, another model) needs several trained models.
    """
    ci = _ci(ci)
    t = finite_array(truth, "truth", (1, 2))
    pa = finite_array(a, "a", (t.ndim, t.ndim + 1))
    pb = finite_array(b, "b", (t.ndim, t.ndim + 1))
    scale = power_of_two_scale(pa, pb, t)  # one scale: both models' values are resampled side by side
    va, fin = _scaled_event_scores(pa, t, metric, estimator, "a", scale)
    vb, _ = _scaled_event_scores(pb, t, metric, estimator, "b", scale)
    k = 1 if va.ndim == 1 else va.shape[1]
    both = np.concatenate([va.reshape(len(va), k), vb.reshape(len(vb), k)], axis=1)
    reps = bootstrap_means(both, n_boot=n_boot, seed=seed)
    rep_diff = fin(reps[:, :k]) - fin(reps[:, k:])
    diff = fin(both[:, :k].mean(axis=0)) - fin(both[:, k:].mean(axis=0))
    lo, hi = percentile_interval(rep_diff, ci)
    pvalue = bootstrap_pvalue(rep_diff)
    squeeze = (lambda x: float(np.asarray(x).ravel()[0])) if k == 1 else (lambda x: np.asarray(x))
    return Comparison(squeeze(diff), squeeze(lo), squeeze(hi), squeeze(pvalue), metric, int(n_boot))
