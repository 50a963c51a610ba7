"""The three-part evaluation protocol: pointwise errors, CRPS, spectrum chi-square, coverage.

Shapes used throughout:

* point predictions and truths: ``(n,)`` or ``(n, d)``;
* samples of a generative model: ``(n, m)`` (one dimension) or ``(n, m, d)``.

Every function validates its input and raises :class:`ValueError` naming the argument
(NaN/inf, empty arrays, mismatched shapes, ``m < 1``, levels outside (0, 1)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

DEFAULT_LEVELS = np.round(np.arange(0.05, 1.0, 0.05), 2)

__all__ = [
    "DEFAULT_LEVELS",
    "rmse",
    "mae",
    "crps",
    "chi2_spectrum",
    "pit",
    "coverage_curve",
    "conformal_coverage_curve",
    "coverage_error",
    "protocol_report",
]


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------
def _finite_array(x, name: str, ndims: tuple[int, ...]) -> np.ndarray:
    """`x` as a float array with one of the allowed ranks, non-empty and finite."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: cannot be converted to a float array ({exc})") from None
    if arr.ndim not in ndims:
        raise ValueError(f"{name}: expected {' or '.join(f'{k}-D' for k in ndims)} array, got shape {arr.shape}")
    if arr.size == 0 or arr.shape[0] == 0:
        raise ValueError(f"{name}: empty array (shape {arr.shape})")
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name}: contains {bad} NaN or infinite values")
    return arr


def _point_pair(pred, truth, names=("pred", "truth")) -> tuple[np.ndarray, np.ndarray]:
    """Validated (pred, truth) of equal shape (n,) or (n, d)."""
    p = _finite_array(pred, names[0], (1, 2))
    t = _finite_array(truth, names[1], (1, 2))
    if p.shape != t.shape:
        raise ValueError(f"{names[0]} and {names[1]}: shapes differ, {p.shape} vs {t.shape}")
    return p, t


def _samples_truth(samples, truth, names=("samples", "truth")) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validated samples (n, m, d) and truth (n, d); the flag says the input was 1-D."""
    t = _finite_array(truth, names[1], (1, 2))
    one_d = t.ndim == 1
    s = _finite_array(samples, names[0], (2,) if one_d else (3,))
    if s.shape[1] < 1:
        raise ValueError(f"{names[0]}: need m >= 1 samples per event, got shape {s.shape}")
    if one_d:
        s, t = s[:, :, None], t[:, None]
    if s.shape[0] != t.shape[0] or s.shape[2] != t.shape[1]:
        raise ValueError(
            f"{names[0]} and {names[1]}: samples {s.shape} must be (n, m, d) for truth (n, d) = {t.shape}"
        )
    return s, t, one_d


def _levels(levels) -> np.ndarray:
    lv = _finite_array(levels, "levels", (1,))
    if np.any((lv <= 0) | (lv >= 1)):
        raise ValueError(f"levels: every nominal level must lie in (0, 1), got {lv.min()}..{lv.max()}")
    return lv


# ---------------------------------------------------------------------------------------------
# pointwise metrics
# ---------------------------------------------------------------------------------------------
def rmse(pred, truth) -> np.ndarray | float:
    """Root-mean-square error per dimension: a float for (n,), an array (d,) for (n, d)."""
    p, t = _point_pair(pred, truth)
    out = np.sqrt(np.mean((p - t) ** 2, axis=0))
    return float(out) if out.ndim == 0 else out


def mae(pred, truth) -> np.ndarray | float:
    """Mean absolute error per dimension: a float for (n,), an array (d,) for (n, d)."""
    p, t = _point_pair(pred, truth)
    out = np.mean(np.abs(p - t), axis=0)
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# CRPS
# ---------------------------------------------------------------------------------------------
def crps(samples, truth) -> np.ndarray:
    """Per-event, per-dimension CRPS of an ensemble: E|X - y| - 1/2 E|X - X'|.

    Parameters
    ----------
    samples : array (n, m) or (n, m, d)
        m samples per event (m = 1 scores a point estimate: the CRPS is then |x - y|).
    truth : array (n,) or (n, d)

    Returns
    -------
    array (n,) or (n, d)
        The ensemble ("energy form") estimator with the 1/m^2 normalisation of E|X - X'|, which
        is the CRPS of the empirical distribution of the samples. It costs O(m log m) per event:
        for sorted samples x_(1) <= ... <= x_(m), sum_ij |x_i - x_j| = 2 sum_i (2i - m - 1) x_(i).
    """
    s, t, one_d = _samples_truth(samples, truth)
    m = s.shape[1]
    term1 = np.mean(np.abs(s - t[:, None, :]), axis=1)
    xs = np.sort(s, axis=1)
    weights = (2.0 * np.arange(1, m + 1) - m - 1.0)[None, :, None]
    term2 = np.sum(weights * xs, axis=1) / m**2  # = 1/2 E|X - X'|
    out = term1 - term2
    return out[:, 0] if one_d else out


# ---------------------------------------------------------------------------------------------
# spectrum fidelity
# ---------------------------------------------------------------------------------------------
def chi2_spectrum(pred_values, true_values, bins=20, value_range=None) -> tuple[float, int]:
    """Binned chi-square between a reconstructed and the true marginal distribution.

    Parameters
    ----------
    pred_values, true_values : 1-D arrays
        Reconstructed and true values of one quantity (sample sizes may differ: the
        reconstructed histogram is scaled to the true one's total).
    bins : int or 1-D array of edges
        An int means that many quantile bins of the truth (equal true counts), the outer
        edges stretched to cover both samples; an array gives the edges directly.
    value_range : (lo, hi), optional
        With an int `bins`, use equal-width bins on this range instead of quantile bins.

    Returns
    -------
    (chi2, ndf)
        chi2 = sum_i (P_i - T_i)^2 / (var P_i + var T_i) with Poisson errors of both
        histograms (var P_i = s^2 P_raw_i for the scale s = N_true / N_pred). Bins empty in
        both histograms carry no information and are skipped; ndf is the number of bins used
        (the normalisation is fixed by the truth, so no degree of freedom is subtracted).
    """
    p = _finite_array(pred_values, "pred_values", (1,))
    t = _finite_array(true_values, "true_values", (1,))
    if isinstance(bins, (int, np.integer)):
        if bins < 1:
            raise ValueError(f"bins: need at least one bin, got {bins}")
        if value_range is not None:
            lo, hi = value_range
            if not hi > lo:
                raise ValueError(f"value_range: need lo < hi, got {value_range}")
            edges = np.linspace(lo, hi, int(bins) + 1)
        else:
            edges = np.quantile(t, np.linspace(0.0, 1.0, int(bins) + 1))
            edges[0] = min(edges[0], p.min())
            edges[-1] = max(edges[-1], p.max())
            edges = np.unique(edges)
            if edges.size < 2:
                edges = np.array([edges[0] - 0.5, edges[0] + 0.5])
    else:
        edges = _finite_array(bins, "bins", (1,))
        if edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError("bins: edges must be strictly increasing with at least two entries")
    # right-most edge inclusive for both histograms
    hp, _ = np.histogram(p, bins=edges)
    ht, _ = np.histogram(t, bins=edges)
    scale = ht.sum() / max(hp.sum(), 1)
    var = scale**2 * hp + ht
    used = var > 0
    chi2 = float(np.sum((scale * hp[used] - ht[used]) ** 2 / var[used]))
    return chi2, int(np.count_nonzero(used))


# ---------------------------------------------------------------------------------------------
# calibration
# ---------------------------------------------------------------------------------------------
def pit(samples, truth) -> np.ndarray:
    """Probability integral transform: the empirical CDF of the samples at the truth.

    Ties are split (a sample equal to the truth counts one half), so a point mass at the
    truth gives 0.5. Shape (n,) or (n, d).
    """
    s, t, one_d = _samples_truth(samples, truth)
    below = np.mean(s < t[:, None, :], axis=1)
    equal = np.mean(s == t[:, None, :], axis=1)
    out = below + 0.5 * equal
    return out[:, 0] if one_d else out


def coverage_curve(samples, truth, levels=DEFAULT_LEVELS) -> np.ndarray:
    """Empirical coverage of the central sample-quantile interval at each nominal level.

    The truth lies in the central interval of level a when |2 PIT - 1| <= a. Returns an array
    (n_levels,) for 1-D input or (n_levels, d). A calibrated sampler lies on the diagonal,
    an over-confident one below it, an over-dispersed one above it.
    """
    lv = _levels(levels)
    score = np.abs(2.0 * pit(samples, truth) - 1.0)
    return np.stack([np.mean(score <= a, axis=0) for a in lv])


def coverage_error(coverage, levels=DEFAULT_LEVELS) -> np.ndarray | float:
    """Maximum |coverage - nominal| over the levels (per dimension for 2-D coverage)."""
    lv = _levels(levels)
    cov = np.asarray(coverage, dtype=float)
    if cov.shape[0] != lv.size:
        raise ValueError(f"coverage: first axis {cov.shape[0]} must match {lv.size} levels")
    dev = np.abs(cov - (lv if cov.ndim == 1 else lv[:, None]))
    out = dev.max(axis=0)
    return float(out) if np.ndim(out) == 0 else out


def _sample_ranges(s: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per event and dimension: sample minimum, maximum and the unit of distance outside them
    (the sample range, or `scale` where all samples coincide)."""
    lo, hi = s.min(axis=1), s.max(axis=1)
    rng = hi - lo
    return lo, hi, np.where(rng > 0, rng, scale[None, :])


def _sample_scale(s: np.ndarray) -> np.ndarray:
    """Per dimension: the median positive sample range (1.0 where every event is a point mass)."""
    rng = s.max(axis=1) - s.min(axis=1)
    out = np.ones(s.shape[2])
    for j in range(s.shape[2]):
        pos = rng[:, j][rng[:, j] > 0]
        if pos.size:
            out[j] = np.median(pos)
    return out


def _sample_scores(s: np.ndarray, t: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Nested-interval score of samples (n, m, d) at truths (n, d).

    Inside the sample range it is |2 PIT - 1| (in [0, 1]); outside it is 1 + the distance beyond
    the range in units of the range (of `scale` for a point mass), so a truth outside all samples
    is never "covered" by a threshold of 1.
    """
    below = np.mean(s < t[:, None, :], axis=1) + 0.5 * np.mean(s == t[:, None, :], axis=1)
    lo, hi, unit = _sample_ranges(s, scale)
    outside = np.maximum(lo - t, 0.0) + np.maximum(t - hi, 0.0)
    return np.where(outside > 0, 1.0 + outside / unit, np.abs(2.0 * below - 1.0))


def _conformal_inputs(pred, truth, names) -> tuple[np.ndarray | None, np.ndarray, bool]:
    """Validated (samples (n, m, d) or None for points, predictions-or-samples, truth (n, d), 1-D flag)."""
    t = _finite_array(truth, names[1], (1, 2))
    p = np.asarray(pred, dtype=float)
    if p.ndim == t.ndim + 1:
        s, t2, one_d = _samples_truth(p, t, names)
        return s, t2, one_d
    pp, tt = _point_pair(p, t, names)
    return None, (np.abs(pp - tt)[:, None] if tt.ndim == 1 else np.abs(pp - tt)), tt.ndim == 1


def conformal_coverage_curve(cal_pred, cal_truth, test_pred, test_truth, levels=DEFAULT_LEVELS):
    """Split-conformal coverage and mean interval width at each nominal level.

    Parameters
    ----------
    cal_pred, test_pred : point predictions (n,)/(n, d), or samples (n, m)/(n, m, d)
    cal_truth, test_truth : (n,)/(n, d)
    levels : nominal coverages in (0, 1)

    Returns
    -------
    dict with ``coverage`` and ``width``, each (n_levels,) for 1-D targets or (n_levels, d).
    For point predictions the score is the absolute residual and the interval is
    pred +- q_a. For samples the score is |2 PIT - 1| inside the sample range, so that the
    interval is the central sample-quantile interval of level q_a, and 1 + (distance beyond
    the range) / (range width) outside it, so that a threshold q_a > 1 widens the sample range
    symmetrically by (q_a - 1) range widths on each side (an over-confident sampler is widened,
    never counted as covering a truth outside its samples). Where all of an event's samples
    coincide, the unit outside is the median sample range of the calibration events. Widths
    are in the target's units.
    q_a is the ceil((n_cal + 1) a)-th smallest calibration score, which guarantees coverage
    >= a on exchangeable data (infinite when that rank exceeds n_cal).
    """
    lv = _levels(levels)
    cal_samples, cal_x, one_d = _conformal_inputs(cal_pred, cal_truth, ("cal_pred", "cal_truth"))
    test_samples, test_x, _ = _conformal_inputs(test_pred, test_truth, ("test_pred", "test_truth"))
    if (cal_samples is None) != (test_samples is None):
        raise ValueError("cal_pred and test_pred: both must be points or both samples")
    if cal_x.shape[1] != test_x.shape[1]:
        raise ValueError(f"cal_pred and test_pred: dimension {cal_x.shape[1]} vs {test_x.shape[1]}")
    if cal_samples is None:  # points: _conformal_inputs returned the absolute residuals
        cal_score, test_score = cal_x, test_x
    else:
        scale = _sample_scale(cal_samples)
        cal_score = _sample_scores(cal_samples, cal_x, scale)
        test_score = _sample_scores(test_samples, test_x, scale)
    n_cal = cal_score.shape[0]
    srt = np.sort(cal_score, axis=0)
    coverage, width = [], []
    for a in lv:
        k = int(np.ceil((n_cal + 1) * a))
        q = srt[k - 1] if k <= n_cal else np.full(srt.shape[1], np.inf)
        coverage.append(np.mean(test_score <= q[None, :], axis=0))
        if test_samples is None:
            width.append(2.0 * q)
            continue
        lo_all, hi_all, unit = _sample_ranges(test_samples, scale)
        w = []
        for j in range(test_samples.shape[2]):
            if q[j] <= 1.0:
                lo, hi = np.quantile(test_samples[:, :, j], [0.5 - q[j] / 2, 0.5 + q[j] / 2], axis=1)
                w.append(np.mean(hi - lo))
            else:
                w.append(np.mean(hi_all[:, j] - lo_all[:, j] + 2.0 * (q[j] - 1.0) * unit[:, j]))
        width.append(np.array(w))
    cov, wid = np.stack(coverage), np.stack(width)
    if one_d:
        cov, wid = cov[:, 0], wid[:, 0]
    return {"coverage": cov, "width": wid}


# ---------------------------------------------------------------------------------------------
# the protocol table
# ---------------------------------------------------------------------------------------------
def protocol_report(
    name_to_samples: Mapping[str, np.ndarray],
    truth,
    *,
    dim_names: Sequence[str] | None = None,
    levels=DEFAULT_LEVELS,
    bins=20,
    point_from: str = "sample",
    calibration: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> pd.DataFrame:
    """The protocol table: one row per model and dimension.

    Parameters
    ----------
    name_to_samples : {model name: samples (n, m[, d]) or point predictions (n[, d])}
        A point predictor is passed as its predictions; it is scored by CRPS with m = 1.
    truth : (n,) or (n, d)
    dim_names : names of the d dimensions (default ``dim0``, ...)
    point_from : "sample" or "mean"
        How a generative model's RMSE/MAE and spectrum are formed: from the first sample per
        event ("one reconstruction", the default: it has the model's spectrum) or from the
        mean of its samples (the point estimate a regression would give).
    calibration : {model name: (cal_pred, cal_truth)}, optional
        Calibration data for split-conformal coverage of point predictors; without it a point
        predictor's coverage error is NaN (it has no intervals).

    Returns
    -------
    DataFrame with columns model, dimension, rmse, mae, crps, chi2, ndf, chi2_ndf,
    coverage_error, kind ("samples" or "point", and "conformal" when calibrated).
    """
    if not name_to_samples:
        raise ValueError("name_to_samples: no models given")
    if point_from not in ("sample", "mean"):
        raise ValueError(f"point_from: expected 'sample' or 'mean', got {point_from!r}")
    t = _finite_array(truth, "truth", (1, 2))
    t2 = t[:, None] if t.ndim == 1 else t
    d = t2.shape[1]
    if dim_names is None:
        dim_names = [f"dim{j}" for j in range(d)]
    if len(dim_names) != d:
        raise ValueError(f"dim_names: {len(dim_names)} names for {d} dimensions")
    rows = []
    for name, pred in name_to_samples.items():
        arr = np.asarray(pred, dtype=float)
        is_samples = arr.ndim == t.ndim + 1
        s = arr if is_samples else arr[:, None] if t.ndim == 1 else arr[:, None, :]
        s, _, _ = _samples_truth(s, t)
        point = s[:, 0, :] if point_from == "sample" else s.mean(axis=1)
        crps_v = crps(s, t2).mean(axis=0)
        kind = "samples" if is_samples else "point"
        cov_err = np.full(d, np.nan)
        if is_samples:
            cov_err = np.atleast_1d(coverage_error(coverage_curve(s, t2, levels), levels))
        elif calibration is not None and name in calibration:
            cal_p, cal_t = calibration[name]
            cc = conformal_coverage_curve(cal_p, cal_t, arr, t, levels)["coverage"]
            cov_err = np.atleast_1d(coverage_error(cc, levels))
            kind = "point, conformal"
        for j in range(d):
            chi2, ndf = chi2_spectrum(point[:, j], t2[:, j], bins=bins)
            rows.append(
                {
                    "model": name,
                    "dimension": dim_names[j],
                    "rmse": rmse(point[:, j], t2[:, j]),
                    "mae": mae(point[:, j], t2[:, j]),
                    "crps": float(crps_v[j]),
                    "chi2": chi2,
                    "ndf": ndf,
                    "chi2_ndf": chi2 / ndf,
                    "coverage_error": float(cov_err[j]),
                    "kind": kind,
                }
            )
    return pd.DataFrame(rows)
