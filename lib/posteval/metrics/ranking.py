"""Which model is best on each metric, whether its lead is resolved, and whether each sampler is
calibrated: the verdicts of the protocol report, from its paired bootstrap over test events.

Leads. For a metric and dimension let b be the model with the lowest estimate. For every other
model o the difference D = metric(b) - metric(o) <= 0 has bootstrap replicates D*_r (the same
resampled events for every model, :func:`~posteval.metrics.report.protocol_report` with
``replicates=True``). Its interval is the percentile interval of D*, its two-sided p-value
p = 2 Phi(-|D| / se) with se the standard deviation of D* (a normal approximation, which unlike
the rank p-value of the replicates resolves p-values below 2 / (n_boot + 1)), and the p-values of
all leads in one report are adjusted by Holm's step-down method (Holm 1979), so that the chance
of any false "yes" among them is at most 1 - ci. The verdict is "yes" when the interval lies
below zero and the Holm-adjusted p is below 1 - ci, else "not resolved".

Calibration. A sampler's raw coverage error on n events with m samples is compared with the
noise floor of an exact sampler of the same n and m (:func:`~posteval.metrics.coverage.coverage_noise_floor`,
its 95 % quantile q95): "calibrated" when the error is at most q95 (indistinguishable from an
exact sampler), "under-covers" (intervals too narrow) or "over-covers" (too wide) when the lower
end of its interval lies above q95, the direction being the sign of coverage - nominal at the
level of the largest deviation; "not resolved" otherwise.

Reference: S. Holm, "A simple sequentially rejective multiple test procedure",
Scand. J. Statist. 6 (1979) 65-70.

Example
-------
>>> holm([0.01, 0.04, 0.03])
array([0.03, 0.06, 0.06])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .coverage import coverage_noise_floor
from .uncertainty import _ci, percentile_interval
from .verdicts import verdict

LOWER_IS_BETTER = ("crps", "energy_score", "rmse", "mae")


def holm(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values: p_(i) -> max_{j <= i} min(1, (k - j + 1) p_(j)), in input order."""
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"pvalues: expected a 1-D array, got shape {p.shape}")
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise ValueError("pvalues: expected finite values in [0, 1]")
    k = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((k - np.arange(k)) * p[order]))
    out = np.empty(k)
    out[order] = adjusted
    return out


def _normal_pvalue(diff: float, reps: np.ndarray) -> float:
    se = float(np.std(reps, ddof=1))
    if se == 0.0:
        return 1.0 if diff == 0.0 else 0.0
    return float(2.0 * stats.norm.sf(abs(diff) / se))


def leads(table: pd.DataFrame, replicates: Mapping[str, np.ndarray], *, ci: float = 0.95,
          metrics: Sequence[str] = LOWER_IS_BETTER) -> pd.DataFrame:
    """One row per (metric, dimension, other model): the best model's lead over it.

    ``table`` and ``replicates`` as returned by ``protocol_report(..., ci=ci, replicates=True)``.
    The energy score, one value per model over all dimensions, is compared once (dimension "all").
    Columns: metric, dimension, best, other, difference (best - other), difference_lo, difference_hi,
    p, p_holm, verdict.
    """
    ci = _ci(ci)
    rows = []
    for metric in metrics:
        if metric not in table or metric not in replicates:
            continue
        groups = [("all", table.drop_duplicates("model"))] if metric == "energy_score" else list(table.groupby("dimension", sort=False))
        for dim, group in groups:
            idx = group.index.to_numpy()
            est = group[metric].to_numpy(dtype=float)
            if len(idx) < 2 or not np.all(np.isfinite(est)):
                continue
            b = int(np.argmin(est))
            for o in range(len(idx)):
                if o == b:
                    continue
                rep = replicates[metric][:, idx[b]] - replicates[metric][:, idx[o]]
                diff = float(est[b] - est[o])
                lo, hi = (float(v) for v in percentile_interval(rep, ci))
                rows.append({"metric": metric, "dimension": dim, "best": group["model"].iloc[b],
                             "other": group["model"].iloc[o], "difference": diff, "difference_lo": lo, "difference_hi": hi,
                             "p": _normal_pvalue(diff, rep)})
    out = pd.DataFrame(rows, columns=["metric", "dimension", "best", "other", "difference", "difference_lo",
                                     "difference_hi", "p"])
    out["p_holm"] = holm(out["p"].to_numpy()) if len(out) else []
    alpha = 1.0 - ci
    out["verdict"] = [
        "yes" if verdict(r.difference_lo, r.difference_hi, direction=-1) == "yes" and r.p_holm < alpha else "not resolved"
        for r in out.itertuples()
    ]
    return out


def coverage_deviation_at_worst(codes: np.ndarray, levels_sorted: np.ndarray) -> float:
    """coverage - nominal at the level where |coverage - nominal| is largest (codes of one dimension)."""
    hist = np.bincount(codes, minlength=levels_sorted.size + 1)
    dev = np.cumsum(hist)[:-1] / hist.sum() - levels_sorted
    return float(dev[np.argmax(np.abs(dev))])


def calibration(table: pd.DataFrame, codes: Mapping[str, np.ndarray], m_samples: Mapping[str, int],
                levels_sorted: np.ndarray, *, seed: int = 0) -> pd.DataFrame:
    """One row per sampler and dimension: its raw coverage error (and interval when the table has
    one), the noise floor q95 of an exact sampler with the same n and m, the signed deviation at
    the worst level, and the verdict ("calibrated", "under-covers", "over-covers", "not resolved").

    ``codes`` {model: raw level codes (n, d)}; ``m_samples`` {model: m}.
    """
    rows = []
    floors: dict[tuple[int, int], float] = {}
    dims = list(dict.fromkeys(table["dimension"]))
    for model, c in codes.items():
        n, m = c.shape[0], int(m_samples[model])
        if (n, m) not in floors:
            floors[(n, m)] = coverage_noise_floor(n, m, levels_sorted, seed=seed).q95
        floor = floors[(n, m)]
        for j, dim in enumerate(dims):
            row = table[(table["model"] == model) & (table["dimension"] == dim)].iloc[0]
            err = float(row["coverage_error_raw"])
            lo = float(row["coverage_error_raw_lo"]) if "coverage_error_raw_lo" in row else np.nan
            hi = float(row["coverage_error_raw_hi"]) if "coverage_error_raw_hi" in row else np.nan
            dev = coverage_deviation_at_worst(c[:, j], levels_sorted)
            if err <= floor:
                word = "calibrated"
            elif np.isfinite(lo) and lo > floor:
                word = "under-covers" if dev < 0 else "over-covers"
            else:
                word = "not resolved"
            rows.append({"model": model, "dimension": dim, "m": m, "coverage_error_raw": err,
                         "coverage_error_raw_lo": lo, "coverage_error_raw_hi": hi, "noise_floor_q95": floor,
                         "deviation_at_worst_level": dev, "verdict": word})
    return pd.DataFrame(rows, columns=["model", "dimension", "m", "coverage_error_raw", "coverage_error_raw_lo",
                                       "coverage_error_raw_hi", "noise_floor_q95", "deviation_at_worst_level", "verdict"])
