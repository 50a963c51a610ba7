"""The protocol table: pointwise errors, CRPS, spectrum test and coverage of several models,
optionally with bootstrap intervals over events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from ._validation import DEFAULT_LEVELS, finite_array, levels_array, samples_truth
from .coverage import conformal_scores, conformal_thresholds, pit
from .scores import crps
from .spectrum import spectrum_test
from .uncertainty import _ci, bootstrap_means, percentile_interval

INTERVAL_METRICS = ("rmse", "mae", "crps", "coverage_error_raw", "coverage_error_conformal")


def _level_codes(score: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """For each event the first (sorted) level whose threshold covers its score (len = none):
    the coverage at level l is then the fraction of codes <= l."""
    return np.searchsorted(thresholds, score, side="left")


def _coverage_error_from_codes(hist: np.ndarray, levels_sorted: np.ndarray) -> np.ndarray:
    """Coverage error from histograms (..., L + 1) of level codes."""
    cov = np.cumsum(hist, axis=-1)[..., :-1] / hist.sum(axis=-1, keepdims=True)
    return np.abs(cov - levels_sorted).max(axis=-1)


def protocol_report(
    name_to_samples: Mapping[str, np.ndarray],
    truth,
    *,
    dim_names: Sequence[str] | None = None,
    levels=DEFAULT_LEVELS,
    bins=20,
    point_from: str = "sample",
    calibration: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    crps_estimator: str = "nrg",
    n_perm: int = 0,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    replicates: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The protocol table: one row per model and dimension.

    Parameters
    ----------
    name_to_samples : {model name: samples (n, m[, d]) or point predictions (n[, d])}
    truth : (n,) or (n, d)
    dim_names : names of the d dimensions (default ``dim0``, ...)
    levels : nominal coverages of the coverage errors
    bins : spectrum binning (see :func:`~posteval.metrics.spectrum.chi2_spectrum`)
    point_from : "sample" or "mean"
        How a generative model's RMSE/MAE and spectrum are formed: from the first sample per
        event ("one reconstruction", the default: it has the model's spectrum, and the exchange
        p-value is exact for it) or from the mean of its samples.
    calibration : {model name: (cal_pred, cal_truth)}, optional
        Calibration data (points or samples, like the model's predictions) for split-conformal
        coverage; models without it get NaN in ``coverage_error_conformal``.
    crps_estimator : "nrg", "fair" or "pwm" for samplers. A point prediction is a point mass,
        whose CRPS is exactly the absolute error whatever the estimator.
    n_perm : exchanges for the spectrum's ``chi2_pvalue_exchange`` (0: NaN, the cheap default)
    ci : None, or a level such as 0.95: adds ``<metric>_lo`` and ``<metric>_hi`` for rmse, mae,
        crps and both coverage errors, percentile intervals from a paired bootstrap over test
        events (``n_boot`` resamples, ``seed``; the calibration set is held fixed). Event-sampling
        variance only; training variance needs several seeds. A coverage error is a maximum of
        absolute deviations, biased upward under resampling: for a calibrated model its interval
        can lie above the estimate; judge calibration against
        :func:`~posteval.metrics.coverage.coverage_noise_floor`. The spectrum carries p-values instead
        of an interval.
    seed : seeds the bootstrap, the spectrum exchanges and the conformal tie-breaking
    replicates : with ``ci``, also return the bootstrap replicates ``{metric: (n_boot, rows)}`` of
        the interval metrics (rows in table order, the same resampled events for every row), e.g.
        to combine several training seeds (:func:`~posteval.metrics.seeds.seed_replicate_interval`)

    Returns
    -------
    DataFrame with columns model, dimension, rmse, mae, crps, chi2, ndf, chi2_ndf, chi2_pvalue,
    chi2_pvalue_exchange, coverage_error_raw (central sample-quantile intervals of samplers; NaN
    for point estimators), coverage_error_conformal, kind ("samples" or "point"), then the
    interval columns when ``ci`` is given. Raw and conformal coverage errors answer different
    questions (is the sampler calibrated / how far is the conformalised interval from nominal,
    which split conformal guarantees on average) and are not to be ranked together.
    """
    if not name_to_samples:
        raise ValueError("name_to_samples: no models given")
    if point_from not in ("sample", "mean"):
        raise ValueError(f"point_from: expected 'sample' or 'mean', got {point_from!r}")
    if ci is not None:
        ci = _ci(ci)
    t = finite_array(truth, "truth", (1, 2))
    t2 = t[:, None] if t.ndim == 1 else t
    n, d = t2.shape
    if dim_names is None:
        dim_names = [f"dim{j}" for j in range(d)]
    if len(dim_names) != d:
        raise ValueError(f"dim_names: {len(dim_names)} names for {d} dimensions")
    lv = levels_array(levels)
    order = np.argsort(lv)
    lv_sorted = lv[order]
    n_lv = lv.size
    rows, dense, codes = [], [], []  # per-event values for the bootstrap
    for name, pred in name_to_samples.items():
        arr = np.asarray(pred, dtype=float)
        is_samples = arr.ndim == t.ndim + 1
        s = arr if is_samples else arr[:, None] if t.ndim == 1 else arr[:, None, :]
        s, _, _ = samples_truth(s, t, (f"name_to_samples[{name!r}]", "truth"))
        point = s[:, 0, :] if point_from == "sample" else s.mean(axis=1)
        crps_e = crps(s, t2, estimator=crps_estimator) if is_samples else np.abs(point - t2)
        raw_codes = np.full((n, d), -1)
        if is_samples:
            raw_codes = _level_codes(np.abs(2.0 * pit(s, t2) - 1.0), lv_sorted)
        conf_codes = np.full((n, d), -1)
        if calibration is not None and name in calibration:
            cal_p, cal_t = calibration[name]
            cal_score, test_score, *_ = conformal_scores(cal_p, cal_t, arr, t, seed=seed)
            q = conformal_thresholds(cal_score.reshape(len(cal_score), -1), lv_sorted)
            conf_codes = np.stack([_level_codes(test_score[:, j], q[:, j]) for j in range(d)], axis=1)
        for j in range(d):
            spec = spectrum_test(point[:, j], t2[:, j], bins=bins, n_perm=n_perm, seed=seed + j)
            err = point[:, j] - t2[:, j]
            row = {
                "model": name,
                "dimension": dim_names[j],
                "rmse": float(np.sqrt(np.mean(err**2))),
                "mae": float(np.mean(np.abs(err))),
                "crps": float(np.mean(crps_e[:, j])),
                "chi2": spec.chi2,
                "ndf": spec.ndf,
                "chi2_ndf": spec.chi2_ndf,
                "chi2_pvalue": spec.pvalue,
                "chi2_pvalue_exchange": spec.pvalue_exchange,
            }
            for key, c in (("coverage_error_raw", raw_codes[:, j]), ("coverage_error_conformal", conf_codes[:, j])):
                row[key] = float(_coverage_error_from_codes(np.bincount(c, minlength=n_lv + 1), lv_sorted)) if c[0] >= 0 else np.nan
            row["kind"] = "samples" if is_samples else "point"
            rows.append(row)
            dense.append(np.stack([err**2, np.abs(err), crps_e[:, j]], axis=1))
            codes.append((raw_codes[:, j], conf_codes[:, j]))
    table = pd.DataFrame(rows)
    if replicates and ci is None:
        raise ValueError("replicates: needs ci (the bootstrap that makes them)")
    if ci is not None:
        table, reps = _with_intervals(table, dense, codes, lv_sorted, ci, n_boot, seed)
        if replicates:
            return table, reps
    return table


def _with_intervals(table, dense, codes, lv_sorted, ci, n_boot, seed) -> pd.DataFrame:
    """Adds <metric>_lo/_hi from one paired bootstrap of all rows' per-event values; returns the
    table and the replicates {metric: (n_boot, rows)}."""
    n_rows, n_lv = len(table), lv_sorted.size
    # level codes as one-hot columns: resampled histograms give resampled coverage curves
    n = len(codes[0][0])
    cols, blocks = [], []
    for kind in range(2):
        for r, pair in enumerate(codes):
            c = pair[kind]
            if c[0] >= 0:
                cols.append((kind, r))
                blocks.append(sparse.csr_matrix((np.ones(n), (np.arange(n), c)), shape=(n, n_lv + 1)))
    cov_reps = {k: np.full((n_boot, n_rows), np.nan) for k in ("coverage_error_raw", "coverage_error_conformal")}
    onehot = sparse.hstack(blocks) if blocks else sparse.csr_matrix((n, 1))
    means, hist = bootstrap_means([np.concatenate(dense, axis=1), onehot], n_boot=n_boot, seed=seed)
    means = means.reshape(n_boot, n_rows, 3)
    reps = {"rmse": np.sqrt(means[:, :, 0]), "mae": means[:, :, 1], "crps": means[:, :, 2]}
    if blocks:
        hist = hist.reshape(n_boot, len(cols), n_lv + 1)
        errors = _coverage_error_from_codes(hist, lv_sorted)
        for i, (kind, r) in enumerate(cols):
            cov_reps["coverage_error_raw" if kind == 0 else "coverage_error_conformal"][:, r] = errors[:, i]
    reps.update(cov_reps)
    out = table.copy()
    for key in ("rmse", "mae", "crps", "coverage_error_raw", "coverage_error_conformal"):
        with np.errstate(invalid="ignore"):
            lo, hi = percentile_interval(reps[key], ci)
        out[f"{key}_lo"], out[f"{key}_hi"] = lo, hi
    return out, reps
