"""Calibration: PIT, raw coverage of central sample intervals, split-conformal coverage, the
coverage error and its noise floor, coverage in bins of a covariate, and the event-bootstrap
replicates of coverage errors (for :func:`posteval.metrics.intervals.replicate_interval`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ._validation import (DEFAULT_LEVELS, finite_array, level_value, levels_array, point_pair, positive_int, real_array,
                          samples_truth)
from .uncertainty import bootstrap_means


def pit(samples, truth) -> np.ndarray:
    """Probability integral transform: the empirical CDF of the samples at the truth.

    Ties are split (a sample equal to the truth counts one half), so a point mass at the
    truth gives 0.5. Shape (n,) or (n, d).
    """
    s, t, one_d = samples_truth(samples, truth)
    below = np.mean(s < t[:, None, :], axis=1)
    equal = np.mean(s == t[:, None, :], axis=1)
    out = below + 0.5 * equal
    return out[:, 0] if one_d else out


def coverage_curve(samples, truth, levels=DEFAULT_LEVELS) -> np.ndarray:
    """Empirical coverage of the central sample-quantile interval at each nominal level.

    The truth lies in the central interval of level a when |2 PIT - 1| <= a. Returns an array
    (n_levels,) for 1-D input or (n_levels, d). A calibrated sampler lies on the diagonal up to
    binomial noise and the discreteness of m samples (see :func:`coverage_noise_floor`), an
    over-confident one below it, an over-dispersed one above it.
    """
    lv = levels_array(levels)
    score = np.abs(2.0 * pit(samples, truth) - 1.0)
    return np.stack([np.mean(score <= a, axis=0) for a in lv])


def coverage_error(coverage, levels=DEFAULT_LEVELS) -> np.ndarray | float:
    """Maximum |coverage - nominal| over the levels (per dimension for 2-D coverage).

    coverage : (n_levels,) or (n_levels, d), each entry a fraction in [0, 1].
    """
    lv = levels_array(levels)
    cov = finite_array(coverage, "coverage", (1, 2))
    if cov.shape[0] != lv.size:
        raise ValueError(f"coverage: first axis {cov.shape[0]} must match {lv.size} levels")
    if np.any((cov < 0) | (cov > 1)):
        raise ValueError(f"coverage: fractions must lie in [0, 1], got {cov.min()}..{cov.max()}")
    dev = np.abs(cov - (lv if cov.ndim == 1 else lv[:, None]))
    out = dev.max(axis=0)
    return float(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------------------------------------
# split conformal
# ---------------------------------------------------------------------------------------------
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


def _sample_scores(s: np.ndarray, t: np.ndarray, scale: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Nested-interval score of samples (n, m, d) at truths (n, d), ties broken at random.

    Inside the sample range it is |2 u - 1| with the randomised PIT u = (#{x < y} + V) / (m + 1),
    V ~ Uniform(0, #{x = y} + 1): for a truth exchangeable with the samples u is exactly uniform,
    so the score has no ties. Outside the range it is 1 + the distance beyond the range in units
    of the range (of `scale` for a point mass), so a truth outside all samples is never "covered"
    by a threshold of 1.
    """
    m = s.shape[1]
    below = np.sum(s < t[:, None, :], axis=1)
    equal = np.sum(s == t[:, None, :], axis=1)
    u = (below + rng.random(below.shape) * (equal + 1)) / (m + 1)
    lo, hi, unit = _sample_ranges(s, scale)
    outside = np.maximum(lo - t, 0.0) + np.maximum(t - hi, 0.0)
    return np.where(outside > 0, 1.0 + outside / unit, np.abs(2.0 * u - 1.0))


def _conformal_inputs(pred, truth, names) -> tuple[np.ndarray | None, np.ndarray, bool]:
    """Validated (samples (n, m, d) or None for points, truth (n, d) or |residuals| (n, d), 1-D flag)."""
    t = finite_array(truth, names[1], (1, 2))
    p = real_array(pred, names[0])
    if p.ndim == t.ndim + 1:
        s, t2, one_d = samples_truth(p, t, names)
        return s, t2, one_d
    pp, tt = point_pair(p, t, names)
    return None, (np.abs(pp - tt)[:, None] if tt.ndim == 1 else np.abs(pp - tt)), tt.ndim == 1


def conformal_scores(cal_pred, cal_truth, test_pred, test_truth, *, seed: int = 0):
    """Nonconformity scores (n_cal, d) and (n_test, d) of split conformal, and the samples' context.

    Points: the absolute residual. Samples: the tie-broken nested-interval score of
    :func:`conformal_coverage_curve`. Returns (cal_score, test_score, test_samples or None,
    scale or None, one_d).
    """
    cal_samples, cal_x, one_d = _conformal_inputs(cal_pred, cal_truth, ("cal_pred", "cal_truth"))
    test_samples, test_x, _ = _conformal_inputs(test_pred, test_truth, ("test_pred", "test_truth"))
    if (cal_samples is None) != (test_samples is None):
        raise ValueError("cal_pred and test_pred: both must be points or both samples")
    if cal_x.shape[1] != test_x.shape[1]:
        raise ValueError(f"cal_pred and test_pred: dimension {cal_x.shape[1]} vs {test_x.shape[1]}")
    if cal_samples is None:  # points: _conformal_inputs returned the absolute residuals
        return cal_x, test_x, None, None, one_d
    rng = np.random.default_rng(seed)
    scale = _sample_scale(cal_samples)
    return (_sample_scores(cal_samples, cal_x, scale, rng), _sample_scores(test_samples, test_x, scale, rng),
            test_samples, scale, one_d)


def conformal_thresholds(cal_score: np.ndarray, levels) -> np.ndarray:
    """q_a per level and dimension (n_levels, d): the ceil((n_cal + 1) a)-th smallest calibration
    score (infinite where that rank exceeds n_cal)."""
    n_cal = cal_score.shape[0]
    srt = np.sort(cal_score, axis=0)
    out = []
    for a in levels:
        k = int(np.ceil((n_cal + 1) * a))
        out.append(srt[k - 1] if k <= n_cal else np.full(srt.shape[1], np.inf))
    return np.stack(out)


def conformal_coverage_curve(cal_pred, cal_truth, test_pred, test_truth, levels=DEFAULT_LEVELS, *, seed: int = 0):
    """Split-conformal coverage and mean interval width at each nominal level.

    Parameters
    ----------
    cal_pred, test_pred : point predictions (n,)/(n, d), or samples (n, m)/(n, m, d)
    cal_truth, test_truth : (n,)/(n, d)
    levels : nominal coverages in (0, 1)
    seed : seed of the random tie-breaking of sample scores

    Returns
    -------
    dict with ``coverage`` and ``width``, each (n_levels,) for 1-D targets or (n_levels, d).
    For point predictions the score is the absolute residual and the interval is
    pred +- q_a. For samples the score is |2 u - 1| inside the sample range, with u the PIT
    randomised over the truth's rank among the samples (ties broken at random: an
    exact-posterior sampler then reaches nominal coverage up to binomial noise at every level),
    and 1 + (distance beyond the range) / (range width) outside it, so that a threshold q_a > 1
    widens the sample range symmetrically by (q_a - 1) range widths on each side (an
    over-confident sampler is widened, never counted as covering a truth outside its samples).
    Where all of an event's samples coincide, the unit outside is the median sample range of the
    calibration events. Widths are in the target's units (for q_a <= 1 the central
    sample-quantile interval of level q_a, which the randomised interval matches on average).
    q_a is the ceil((n_cal + 1) a)-th smallest calibration score, which guarantees coverage
    >= a on exchangeable data (infinite when that rank exceeds n_cal).
    """
    lv = levels_array(levels)
    cal_score, test_score, test_samples, scale, one_d = conformal_scores(
        cal_pred, cal_truth, test_pred, test_truth, seed=seed
    )
    q = conformal_thresholds(cal_score, lv)
    cov = np.stack([np.mean(test_score <= q[i][None, :], axis=0) for i in range(lv.size)])
    if test_samples is None:
        wid = 2.0 * q
    else:
        lo_all, hi_all, unit = _sample_ranges(test_samples, scale)
        wid = np.empty_like(q)
        for i in range(lv.size):
            for j in range(test_samples.shape[2]):
                if q[i, j] <= 1.0:
                    lo, hi = np.quantile(test_samples[:, :, j], [0.5 - q[i, j] / 2, 0.5 + q[i, j] / 2], axis=1)
                    wid[i, j] = np.mean(hi - lo)
                else:
                    wid[i, j] = np.mean(hi_all[:, j] - lo_all[:, j] + 2.0 * (q[i, j] - 1.0) * unit[:, j])
    if one_d:
        cov, wid = cov[:, 0], wid[:, 0]
    return {"coverage": cov, "width": wid}


# ---------------------------------------------------------------------------------------------
# noise floor and conditional coverage
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NoiseFloor:
    """Coverage errors of a perfectly calibrated sampler (see :func:`coverage_noise_floor`)."""

    errors: np.ndarray  # (repeats, n_dims)
    q50: float  # median of the mean over dimensions
    q95: float  # 95 % quantile of the mean over dimensions
    q95_max: float  # 95 % quantile of the worst dimension


def _exact_sampler_inside(m: int, levels: np.ndarray) -> np.ndarray:
    """(levels, m + 1): whether the truth at rank k among m exchangeable samples lies inside the
    central level-a interval, |2k/m - 1| <= a."""
    score = np.abs(2.0 * np.arange(m + 1) / m - 1.0)
    return (score[None, :] <= levels[:, None]).astype(float)


def coverage_noise_floor(n_events: int, m_samples: int, levels=DEFAULT_LEVELS, *, n_dims: int = 1,
                         repeats: int = 200, seed: int = 0) -> NoiseFloor:
    """Distribution of the raw coverage error of a perfectly calibrated m-sample sampler.

    The truth's rank among m exchangeable samples is uniform on 0..m, so its PIT is rank / m and
    the coverage curve of n_events is a function of the rank histogram, drawn here `repeats`
    times (independent dimensions). It includes both the binomial noise of n_events and the
    discreteness of m samples (a calibrated sampler cannot reach the diagonal exactly). A
    measured coverage error below ``q95`` is "calibrated within noise".
    """
    n = positive_int(n_events, "n_events")
    m = positive_int(m_samples, "m_samples")
    d = positive_int(n_dims, "n_dims")
    r = positive_int(repeats, "repeats", minimum=2)
    lv = levels_array(levels)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(m + 1, 1.0 / (m + 1)), size=(r, d))  # rank histogram
    inside = _exact_sampler_inside(m, lv)
    cov = np.einsum("lk,rdk->rdl", inside, counts) / n
    errors = np.abs(cov - lv).max(axis=2)
    mean = errors.mean(axis=1)
    return NoiseFloor(errors, float(np.quantile(mean, 0.5)), float(np.quantile(mean, 0.95)),
                      float(np.quantile(errors.max(axis=1), 0.95)))


def coverage_band(n_events: int, levels=DEFAULT_LEVELS, *, m_samples: int | None = None,
                  ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Central `ci` range of coverage minus nominal for a perfectly calibrated forecast.

    On each of n_events the truth falls inside the level-a interval with probability p(a): a
    itself for a continuous interval (``m_samples=None``), or, for the central interval of m
    exchangeable samples, #{k in 0..m : |2k/m - 1| <= a} / (m + 1) (the truth's rank is uniform
    on 0..m, as in :func:`coverage_noise_floor`). The covered count is Binomial(n_events, p(a)).

    Returns (lo, hi), each (n_levels,): its equal-tailed `ci` quantiles divided by n_events,
    minus a. A calibrated model's curve of coverage minus nominal scatters inside this band.
    """
    n = positive_int(n_events, "n_events")
    lv = levels_array(levels)
    ci = level_value(ci, "ci")
    if m_samples is None:
        p = lv
    else:
        p = _exact_sampler_inside(positive_int(m_samples, "m_samples"), lv).mean(axis=1)
    tail = (1.0 - ci) / 2.0
    lo = stats.binom.ppf(tail, n, p) / n - lv
    hi = stats.binom.ppf(1.0 - tail, n, p) / n - lv
    return lo, hi


def local_coverage(covered, covariate, *, bins: int = 8) -> pd.DataFrame:
    """Coverage conditional on a covariate: the fraction of covered events in quantile bins.

    Parameters
    ----------
    covered : (n,) booleans (is the truth inside the event's interval) or (n, k) for k models
        (a DataFrame keeps its column names)
    covariate : (n,) values defining the bins (e.g. the observation x)
    bins : number of quantile bins of the covariate

    Returns
    -------
    DataFrame indexed by the bin centre (as a string with 2 decimals), one column per model.
    """
    x = finite_array(covariate, "covariate", (1,))
    bins = positive_int(bins, "bins")
    frame = covered.copy() if isinstance(covered, pd.DataFrame) else pd.DataFrame(np.asarray(covered))
    if len(frame) != x.size:
        raise ValueError(f"covered and covariate: {len(frame)} vs {x.size} events")
    if not all(pd.api.types.is_bool_dtype(frame[c]) for c in frame.columns):
        raise ValueError("covered: expected booleans (truth inside the interval or not)")
    if np.unique(x).size < bins:
        raise ValueError(f"covariate: fewer than {bins} distinct values for {bins} quantile bins")
    binned = pd.qcut(x, bins)
    out = frame.groupby(binned, observed=True).mean()
    out.index = [f"{iv.mid:.2f}" for iv in out.index]
    return out


def central_interval_hits(samples, truth, level: float) -> np.ndarray:
    """Whether each truth lies inside its central sample interval of nominal ``level``: ``|2 PIT - 1| <= level``."""
    if not 0 < level < 1:
        raise ValueError(f"level: expected a value in (0, 1), got {level!r}")
    return np.abs(2 * pit(samples, truth) - 1) <= level


def conformal_interval_hits(cal_pred, cal_truth, pred, truth, level: float) -> np.ndarray:
    """Whether each truth lies inside the split-conformal interval ``pred +- q_level`` of point predictions."""
    if not 0 < level < 1:
        raise ValueError(f"level: expected a value in (0, 1), got {level!r}")
    cal_score, test_score, samples, _, one_d = conformal_scores(cal_pred, cal_truth, pred, truth)
    if samples is not None:
        raise ValueError("pred: expected point predictions (n,) or (n, d), got samples")
    hits = test_score <= conformal_thresholds(cal_score, [level])[0]
    return hits[:, 0] if one_d else hits


def local_coverage_error_replicates(covered: Sequence[np.ndarray], covariate, *, nominal: float, bins: int = 8,
                                    n_boot: int = 1000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Worst ``|coverage - nominal|`` over quantile bins of a covariate, per replicate and per event resample.

    Parameters
    ----------
    covered : one (n,) boolean array per replicate (truth inside that replicate's interval)
    covariate : (n,) values whose quantile bins are compared (e.g. the observation)
    nominal : the intervals' nominal coverage
    Returns
    -------
    (values (S,), replicates (B, S)) for :func:`~posteval.metrics.intervals.replicate_interval`.
    """
    hits = [np.asarray(c) for c in covered]
    x = np.asarray(covariate, dtype=float)
    if not hits or any(h.dtype != bool or h.shape != x.shape for h in hits):
        raise ValueError(f"covered: expected one boolean array of shape {x.shape} per replicate")
    if not 0 < nominal < 1:
        raise ValueError(f"nominal: expected a level in (0, 1), got {nominal!r}")
    in_bin = pd.get_dummies(pd.qcut(x, bins)).to_numpy(float)  # (n, bins) one-hot quantile bin
    per_bin = [h[:, None] * in_bin for h in hits]
    values = np.array([np.abs(p.sum(0) / in_bin.sum(0) - nominal).max() for p in per_bin])
    boot = bootstrap_means([np.concatenate(per_bin, axis=1), in_bin], n_boot=n_boot, seed=seed)
    coverage = boot[0].reshape(n_boot, len(hits), in_bin.shape[1]) / boot[1][:, None, :]
    return values, np.abs(coverage - nominal).max(axis=2)


def coverage_error_replicates(samples: Sequence[np.ndarray], truth, levels=DEFAULT_LEVELS, *, n_boot: int = 1000,
                              seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Raw coverage error (worst level, mean over dimensions) of samplers, and on event resamples.

    Parameters
    ----------
    samples : one (n, m) or (n, m, d) array per sampler, all for the same ``truth`` (n,) or (n, d)
    levels : nominal levels of the central intervals (as :func:`~posteval.metrics.coverage.coverage_curve`)
    Returns
    -------
    (values (k,), replicates (n_boot, k)) for k samplers; every sampler is scored on the same
    resampled events, so differences between samplers are paired. ``values`` equals
    ``coverage_error(coverage_curve(s, truth, levels))`` averaged over dimensions.
    """
    lv = levels_array(levels)
    if isinstance(samples, np.ndarray) or not len(samples):
        raise ValueError("samples: expected a non-empty list of sample arrays (one per sampler)")
    hits = []
    for s in samples:
        score = np.abs(2.0 * pit(s, truth) - 1.0)
        score = score.reshape(len(score), -1)  # (n, d)
        hits.append((score[:, None, :] <= lv[None, :, None]).reshape(len(score), -1).astype(float))
    d = hits[0].shape[1] // lv.size
    values = np.array([np.abs(h.mean(0).reshape(lv.size, d) - lv[:, None]).max(axis=0).mean() for h in hits])
    boot = bootstrap_means(hits, n_boot=n_boot, seed=seed)
    reps = [np.abs(b.reshape(n_boot, lv.size, d) - lv[None, :, None]).max(axis=1).mean(axis=1) for b in boot]
    return values, np.stack(reps, axis=1)
