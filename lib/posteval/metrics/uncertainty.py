"""Event-sampling uncertainty: a paired bootstrap over events for per-event metrics, and the
paired comparison of two models on the same events.

Only the variance from the finite set of test events is estimated here. The variance from
training (another seed gives another model) is not: it needs several trained models. The
helpers take per-event arrays so that a caller can stack per-event scores of several training
seeds as columns and resample events for all of them at once (:func:`bootstrap_means`), then
combine the replicates across seeds as it sees fit.

Intervals and p-values are computed in :mod:`~posteval.metrics.intervals` (and words decided in
:mod:`~posteval.metrics.verdicts`): :func:`percentile_interval` and :func:`bootstrap_pvalue` are
re-exported from there under their old names, and :func:`compare` reads its interval and p-value
from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from .._deprecation import deprecated_attribute, renamed_keywords
from ._validation import (finite_array, level_value, point_pair, positive_int, power_of_two_scale, rescaled,
                          samples_truth, seed_value)
from .intervals import bootstrap_pvalue, percentile_interval  # re-exported: their home before issue 41
from .scores import crps_ensemble, energy_score_ensemble


@renamed_keywords(n_boot="n_resamples")
def bootstrap_weights(n_events: int, *, n_resamples: int = 1000, seed: int = 0, chunk: int = 50) -> Iterator[np.ndarray]:
    """Event multiplicities of `n_resamples` bootstrap resamples of n_events, in chunks (r, n_events).

    Row b counts how often each event is drawn in resample b (draws with replacement, total
    n_events): (w_b1..w_bn) ~ Multinomial(n, (1/n, .., 1/n)). The same seed gives the same resamples, so
    two calls pair events across models.

    Reference: Efron (1979), "Bootstrap methods: another look at the jackknife", *Ann. Statist.* 7, 1;
    Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6.

    Example
    -------
    >>> chunks = list(bootstrap_weights(4, n_resamples=3))
    >>> len(chunks), chunks[0].shape, chunks[0].sum(axis=1).tolist()
    (1, (3, 4), [4.0, 4.0, 4.0])
    """
    n = positive_int(n_events, "n_events")
    b = positive_int(n_resamples, "n_resamples", minimum=2)
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
        bad = int(mat.data.size - np.count_nonzero(np.isfinite(mat.data)))
        if bad:
            raise ValueError(f"{name}: contains {bad} NaN or infinite values (sparse matrix)")
        if mat.shape[0] < 2**24 and np.all(mat.data == np.round(mat.data)) and np.abs(mat.data).max(initial=0) <= 1:
            mat = mat.astype(np.float32)  # 0/1 indicators: float32 sums of bootstrap counts are exact
        return mat, False
    arr = finite_array(values, name, (1, 2))
    return (arr[:, None], True) if arr.ndim == 1 else (arr, False)


@renamed_keywords(n_boot="n_resamples")
def bootstrap_means(values: ArrayLike | sparse.spmatrix | sparse.sparray | Sequence[ArrayLike | sparse.spmatrix],
                    *, n_resamples: int = 1000, seed: int = 0) -> np.ndarray | list[np.ndarray]:
    """Column means of `values` over bootstrap resamples of its rows (events), paired across columns:
    mean*_bk = (1/n) sum_i w_bi v_ik with the multiplicities w_bi of :func:`bootstrap_weights`.

    Parameters
    ----------
    values : (n,) or (n, k) per-event values (a dense array or a scipy sparse matrix, e.g. one-hot
        bin indicators); columns may be different metrics, models or training seeds. A list of
        such arrays (same n) is resampled with the same events for all of them.
    n_resamples, seed : number of resamples and their seed

    Returns
    -------
    (n_resamples,) or (n_resamples, k) resampled means (a list of them for a list input); every column uses
    the same resampled events.

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (bootstrap
    replicates); Efron (1979), *Ann. Statist.* 7, 1.

    Example: the three resamples of :func:`bootstrap_weights` above, multiplicities (0, 1, 2, 1),
    (3, 1, 0, 0) and (1, 0, 1, 2). A list (or tuple) is read as several arrays resampled alike:

    >>> bootstrap_means(np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0]]), n_resamples=3).tolist()
    [[3.0, 30.0], [1.25, 12.5], [3.0, 30.0]]
    >>> [b.tolist() for b in bootstrap_means([np.arange(1.0, 5.0), np.ones(4)], n_resamples=3)]
    [[3.0, 1.25, 3.0], [1.0, 1.0, 1.0]]
    """
    many = isinstance(values, (list, tuple))
    if many and not values:
        raise ValueError("values: an empty list; expected an array (n,) or (n, k), or a list of such arrays")
    blocks = [_as_matrix(v, f"values[{i}]" if many else "values") for i, v in enumerate(values if many else [values])]
    n = blocks[0][0].shape[0]
    if any(mat.shape[0] != n for mat, _ in blocks):
        raise ValueError(f"values: every array needs the same number of events, got {[m.shape[0] for m, _ in blocks]}")
    out = [[] for _ in blocks]
    for w in bootstrap_weights(n, n_resamples=n_resamples, seed=seed):
        for acc, (mat, _) in zip(out, blocks):
            if sparse.issparse(mat):
                acc.append(np.asarray((mat.T @ w.T.astype(mat.dtype)).T, dtype=float) / n)
            else:
                acc.append(w @ mat / n)
    res = [np.concatenate(acc, axis=0) for acc in out]
    res = [r[:, 0] if one_col else r for r, (_, one_col) in zip(res, blocks)]
    return res if many else res[0]


# ---------------------------------------------------------------------------------------------
# per-event metrics and paired comparison
# ---------------------------------------------------------------------------------------------
METRICS = ("crps", "mae", "rmse", "energy_score")


def event_scores(pred: ArrayLike, truth: ArrayLike, *, metric: str = "crps", estimator: str = "nrg",
                 name: str = "pred") -> tuple[np.ndarray, Callable[[ArrayLike], np.ndarray]]:
    """Per-event values whose mean, passed through the returned function, is the metric:
    metric = finish(mean_i v_i), e.g. v_i = CRPS(F_i, y_i) and finish the identity, or v_i = (pred_i - y_i)^2
    and finish the square root for the RMSE.

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
    (values (n,) or (n, d), finish) with metric = finish(values.mean(axis=0)). The values are in the
    data's units (squared units for "rmse") at every scale; where they would leave the float64
    range (e.g. squared errors of data near 1e154 or 1e-300) a ValueError says so.

    Reference: Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102, eq. 21 (CRPS) and eq. 22
    (energy score); the RMSE and MAE as in Hastie, Tibshirani and Friedman (2009), *The Elements of
    Statistical Learning*, 2nd ed., section 2.4.

    Example
    -------
    >>> values, finish = event_scores([1.0, 3.0], [0.0, 0.0], metric="rmse")
    >>> values.tolist(), round(float(finish(values.mean(axis=0))), 4)
    ([1.0, 9.0], 2.2361)
    >>> values, finish = event_scores([[0.0, 2.0], [1.0, 1.0]], [1.0, 0.0])   # CRPS of two samples
    >>> values.tolist(), float(finish(values.mean(axis=0)))
    ([0.5, 1.0], 0.75)
    """
    t = finite_array(truth, "truth", (1, 2))
    p = finite_array(pred, name, (t.ndim, t.ndim + 1))
    k = power_of_two_scale(p, t)
    values, finish = _scaled_event_scores(p, t, metric, estimator, name, k)
    if k == 1.0:
        return values, finish
    # the values in the data's units (squared units for the RMSE), or an error where they leave the range
    unit = values
    for _ in range(2 if metric == "rmse" else 1):
        unit = rescaled(unit, k, f"{name} and truth: per-event {metric} values")
    tiny = np.finfo(float).tiny
    if np.any((values != 0) & (np.abs(unit) < tiny)):
        raise ValueError(f"{name} and truth: per-event {metric} values underflow the float64 range at this scale "
                         f"(largest |value| {max(float(np.max(np.abs(p))), float(np.max(np.abs(t)))):.3g}); "
                         f"rescale the data, or use the metric's own function ({metric}) which scales internally")
    if metric == "rmse":
        return unit, np.sqrt
    return unit, lambda v: np.asarray(v, dtype=float)


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
        return energy_score_ensemble(p, t, estimator=estimator), back
    if is_samples and metric == "crps":
        return crps_ensemble(p, t, estimator=estimator), back
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
    n_resamples: int

    n_boot = deprecated_attribute("n_resamples", "n_boot")  # the field's name before 0.3.0


@renamed_keywords(ci="level", n_boot="n_resamples")
def compare(a: ArrayLike, b: ArrayLike, truth: ArrayLike, *, metric: str = "crps", estimator: str = "nrg",
            level: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Comparison:
    """Paired comparison of two models' metric on the same events: diff = metric(a) - metric(b), and the
    same difference on each bootstrap resample of the events (one resample for both models).

    Parameters
    ----------
    a, b : predictions of the two models (samples or points, as :func:`event_scores`)
    truth : (n,) or (n, d): per-dimension results for (n, d) except the energy score
    metric, estimator : as :func:`event_scores`
    level, n_resamples, seed : interval level, bootstrap resamples (the same events for a and b) and seed

    Returns
    -------
    Comparison with ``diff`` = metric(a) - metric(b), its percentile interval ``lo``/``hi`` and the
    two-sided bootstrap ``pvalue`` of "no difference". This is event-sampling variance only:
    training variance (another seed, another model) needs several trained models.

    Reference: forecasts compared by their paired score differences, Diebold and Mariano (1995),
    *J. Bus. Econ. Statist.* 13, 253; Efron and Tibshirani (1993), *An Introduction to the Bootstrap*,
    ch. 13 (percentile interval) and ch. 16 (tests).

    Example: draws about the truth with sd 1 against sd 2 (CRPS, lower is better):

    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(size=500)
    >>> a = truth[:, None] + rng.normal(size=(500, 16)); b = truth[:, None] + 2 * rng.normal(size=(500, 16))
    >>> res = compare(a, b, truth, n_resamples=200)
    >>> round(res.diff, 3), res.hi < 0, round(res.pvalue, 3)
    (-0.258, True, 0.01)
    """
    level = level_value(level)
    t = finite_array(truth, "truth", (1, 2))
    pa = finite_array(a, "a", (t.ndim, t.ndim + 1))
    pb = finite_array(b, "b", (t.ndim, t.ndim + 1))
    scale = power_of_two_scale(pa, pb, t)  # one scale: both models' values are resampled side by side
    va, fin = _scaled_event_scores(pa, t, metric, estimator, "a", scale)
    vb, _ = _scaled_event_scores(pb, t, metric, estimator, "b", scale)
    k = 1 if va.ndim == 1 else va.shape[1]
    both = np.concatenate([va.reshape(len(va), k), vb.reshape(len(vb), k)], axis=1)
    reps = bootstrap_means(both, n_resamples=n_resamples, seed=seed)
    rep_diff = fin(reps[:, :k]) - fin(reps[:, k:])
    diff = fin(both[:, :k].mean(axis=0)) - fin(both[:, k:].mean(axis=0))
    lo, hi = percentile_interval(rep_diff, level)
    pvalue = bootstrap_pvalue(rep_diff)
    squeeze = (lambda x: float(np.asarray(x).ravel()[0])) if k == 1 else (lambda x: np.asarray(x))
    return Comparison(squeeze(diff), squeeze(lo), squeeze(hi), squeeze(pvalue), metric, int(n_resamples))
