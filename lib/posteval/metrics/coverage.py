"""Calibration: PIT, raw coverage of central sample intervals, split-conformal coverage, the
coverage error and its noise floor, coverage in bins of a covariate, and the event-bootstrap
replicates of coverage errors (for :func:`posteval.metrics.intervals.replicate_interval`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._deprecation import renamed_keywords
from ._validation import (DEFAULT_LEVELS, finite_array, level_value, levels_array, point_pair, positive_int, real_array,
                          samples_truth)
from .intervals import binomial_band
from .uncertainty import bootstrap_means


def pit(samples: ArrayLike, truth: ArrayLike) -> np.ndarray:
    """Probability integral transform: the empirical CDF of the samples at the truth,

        PIT_i = (1/m) #{j : x_ij < y_i} + (1/(2m)) #{j : x_ij = y_i}.

    Ties are split (a sample equal to the truth counts one half), so a point mass at the
    truth gives 0.5. Shape (n,) or (n, d).

    Reference: Dawid (1984), "Statistical theory: the prequential approach", *J. R. Statist. Soc. A* 147, 278;
    Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69, 243 (a calibrated forecast has
    uniform PIT).

    Example: truth 1.5 among 0..3; truth 1.0 with one sample below and one equal:

    >>> pit([[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]], [1.5, 1.0]).tolist()
    [0.5, 0.375]
    """
    s, t, one_d = samples_truth(samples, truth)
    below = np.mean(s < t[:, None, :], axis=1)
    equal = np.mean(s == t[:, None, :], axis=1)
    out = below + 0.5 * equal
    return out[:, 0] if one_d else out


def coverage_curve(samples: ArrayLike, truth: ArrayLike, levels: ArrayLike = DEFAULT_LEVELS) -> np.ndarray:
    """Empirical coverage of the central sample-quantile interval at each nominal level,

        C(a) = (1/n) sum_i 1[|2 PIT_i - 1| <= a].

    The truth lies in the central interval of level a when |2 PIT - 1| <= a. Returns an array
    (n_levels,) for 1-D input or (n_levels, d). A calibrated sampler lies on the diagonal up to
    binomial noise and the discreteness of m samples (see :func:`coverage_noise_floor`), an
    over-confident one below it, an over-dispersed one above it.

    Reference: Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69, 243 (probabilistic
    calibration: uniform PIT, hence nominal coverage of every central interval).

    Example: one truth at the centre of its samples (PIT 0.5), one beyond them (PIT 1):

    >>> coverage_curve([[0.0, 1.0, 2.0, 3.0]] * 2, [1.5, 5.0], [0.5, 0.9]).tolist()
    [0.5, 0.5]
    """
    lv = levels_array(levels)
    score = np.abs(2.0 * pit(samples, truth) - 1.0)
    return np.stack([np.mean(score <= a, axis=0) for a in lv])


def coverage_error(coverage: ArrayLike, levels: ArrayLike = DEFAULT_LEVELS) -> np.ndarray | float:
    """Maximum |coverage - nominal| over the levels (per dimension for 2-D coverage),
    max_l |C(a_l) - a_l|.

    coverage : (n_levels,) or (n_levels, d), each entry a fraction in [0, 1].

    Reference: the largest gap of the calibration (reliability) curve from the diagonal; Kuleshov, Fenner
    and Ermon (2018), "Accurate uncertainties for deep learning using calibrated regression", ICML, average
    the squared gaps instead.

    Example
    -------
    >>> round(coverage_error([0.4, 0.9], [0.5, 0.9]), 3)
    0.1
    >>> np.round(coverage_error([[0.4, 0.5], [0.9, 0.7]], [0.5, 0.9]), 3).tolist()
    [0.1, 0.2]
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


def conformal_scores(cal_pred: ArrayLike, cal_truth: ArrayLike, test_pred: ArrayLike, test_truth: ArrayLike, *,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, bool]:
    """Nonconformity scores (n_cal, d) and (n_test, d) of split conformal, and the samples' context.

    Points: the absolute residual s_i = |pred_i - y_i|. Samples: the tie-broken nested-interval score of
    :func:`conformal_coverage_curve`. Returns (cal_score, test_score, test_samples or None,
    scale or None, one_d).

    Reference: split conformal prediction, Lei, G'Sell, Rinaldo, Tibshirani and Wasserman (2018),
    *J. Amer. Statist. Assoc.* 113, 1094; nested prediction sets as scores, Gupta, Kuchibhotla and
    Ramdas (2022), *Pattern Recognit.* 127.

    Example
    -------
    >>> cal, test, samples, scale, one_d = conformal_scores([1.0, 2.0, 3.0], [1.5, 2.0, 2.0], [0.0], [1.0])
    >>> cal.tolist(), test.tolist(), samples, one_d
    ([[0.5], [0.0], [1.0]], [[1.0]], None, True)
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


def conformal_thresholds(cal_score: np.ndarray, levels: Iterable[float]) -> np.ndarray:
    """q_a per level and dimension (n_levels, d): the ceil((n_cal + 1) a)-th smallest calibration
    score (infinite where that rank exceeds n_cal), q_a = s_(ceil((n_cal + 1) a)).

    Reference: Lei et al. (2018), *J. Amer. Statist. Assoc.* 113, 1094, split conformal (coverage >= a on
    exchangeable data); Vovk, Gammerman and Shafer (2005), *Algorithmic Learning in a Random World*.

    Example: n_cal = 4, so level 0.5 takes the 3rd smallest score and level 0.9 the 5th (none):

    >>> conformal_thresholds(np.array([[0.1], [0.4], [0.2], [0.3]]), [0.5, 0.9]).tolist()
    [[0.3], [inf]]
    """
    n_cal = cal_score.shape[0]
    srt = np.sort(cal_score, axis=0)
    out = []
    for a in levels:
        k = int(np.ceil((n_cal + 1) * a))
        out.append(srt[k - 1] if k <= n_cal else np.full(srt.shape[1], np.inf))
    return np.stack(out)


def conformal_coverage_curve(cal_pred: ArrayLike, cal_truth: ArrayLike, test_pred: ArrayLike, test_truth: ArrayLike,
                             levels: ArrayLike = DEFAULT_LEVELS, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Split-conformal coverage and mean interval width at each nominal level,
    coverage(a) = (1/n_test) sum_i 1[s_i <= q_a] with q_a of :func:`conformal_thresholds`.

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

    Reference: Lei et al. (2018), *J. Amer. Statist. Assoc.* 113, 1094 (split conformal); Gupta,
    Kuchibhotla and Ramdas (2022), *Pattern Recognit.* 127 (nested sets).

    Example: point predictions with unit-variance noise (intervals pred +- q_a):

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=400); y = x + rng.normal(size=400)
    >>> out = conformal_coverage_curve(x[:200], y[:200], x[200:], y[200:], [0.5, 0.9])
    >>> out["coverage"].round(3).tolist(), out["width"].round(3).tolist()
    ([0.525, 0.885], [1.442, 3.131])
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


@renamed_keywords(repeats="n_resamples")
def coverage_noise_floor(n_events: int, m_samples: int, levels: ArrayLike = DEFAULT_LEVELS, *, n_dims: int = 1,
                         n_resamples: int = 200, seed: int = 0) -> NoiseFloor:
    """Distribution of the raw coverage error of a perfectly calibrated m-sample sampler,
    max_l |(1/n) sum_k c_k 1[|2k/m - 1| <= a_l] - a_l| with (c_0..c_m) ~ Multinomial(n, 1/(m + 1)).

    The truth's rank among m exchangeable samples is uniform on 0..m, so its PIT is rank / m and
    the coverage curve of n_events is a function of the rank histogram, drawn here ``n_resamples``
    times (independent dimensions). It includes both the binomial noise of n_events and the
    discreteness of m samples (a calibrated sampler cannot reach the diagonal exactly). A
    measured coverage error below ``q95`` is "calibrated within noise".

    Reference: the uniform rank of an exact sampler, Talts et al. (2018), arXiv:1804.06788, Theorem 1;
    Hamill (2001), *Mon. Wea. Rev.* 129, 550.

    Example
    -------
    >>> nf = coverage_noise_floor(1000, 32)
    >>> nf.errors.shape, round(nf.q95, 3)
    ((200, 1), 0.067)
    """
    n = positive_int(n_events, "n_events")
    m = positive_int(m_samples, "m_samples")
    d = positive_int(n_dims, "n_dims")
    r = positive_int(n_resamples, "n_resamples", minimum=2)
    lv = levels_array(levels)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(m + 1, 1.0 / (m + 1)), size=(r, d))  # rank histogram
    inside = _exact_sampler_inside(m, lv)
    cov = np.einsum("lk,rdk->rdl", inside, counts) / n
    errors = np.abs(cov - lv).max(axis=2)
    mean = errors.mean(axis=1)
    return NoiseFloor(errors, float(np.quantile(mean, 0.5)), float(np.quantile(mean, 0.95)),
                      float(np.quantile(errors.max(axis=1), 0.95)))


@renamed_keywords(ci="level")
def coverage_band(n_events: int, levels: ArrayLike = DEFAULT_LEVELS, *, m_samples: int | None = None,
                  level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Central `level` range of coverage minus nominal for a perfectly calibrated forecast.

    On each of n_events the truth falls inside the level-a interval with probability p(a): a
    itself for a continuous interval (``m_samples=None``), or, for the central interval of m
    exchangeable samples, #{k in 0..m : |2k/m - 1| <= a} / (m + 1) (the truth's rank is uniform
    on 0..m, as in :func:`coverage_noise_floor`). The covered count is Binomial(n_events, p(a)).

    Returns (lo, hi), each (n_levels,): its equal-tailed `level` quantiles divided by n_events,
    minus a. A calibrated model's curve of coverage minus nominal scatters inside this band.

    Reference: pointwise binomial bands of uniform ranks, Säilynoja, Bürkner and Vehtari (2022),
    *Stat. Comput.* 32, 32; the uniform rank, Talts et al. (2018), arXiv:1804.06788, Theorem 1.

    Example
    -------
    >>> [a.round(3).tolist() for a in coverage_band(100, [0.5, 0.9])]
    [[-0.1, -0.06], [0.1, 0.05]]
    """
    n = positive_int(n_events, "n_events")
    lv = levels_array(levels)
    level = level_value(level, "level")
    if m_samples is None:
        p = lv
    else:
        p = _exact_sampler_inside(positive_int(m_samples, "m_samples"), lv).mean(axis=1)
    lo, hi = binomial_band(n, p, 1.0 - level)
    return lo - lv, hi - lv


def local_coverage(covered: ArrayLike | pd.DataFrame, covariate: ArrayLike, *, bins: int = 8) -> pd.DataFrame:
    """Coverage conditional on a covariate: the fraction of covered events in quantile bins,
    C_b = mean_{i in bin b} covered_i.

    Parameters
    ----------
    covered : (n,) booleans (is the truth inside the event's interval) or (n, k) for k models
        (a DataFrame keeps its column names)
    covariate : (n,) values defining the bins (e.g. the observation x)
    bins : number of quantile bins of the covariate

    Returns
    -------
    DataFrame indexed by the bin centre (as a string with 2 decimals), one column per model.

    Reference: local (conditional) coverage diagnostics, Zhao, Dalmasso, Izbicki and Lee (2021),
    "Diagnostics for conditional density models and Bayesian inference algorithms", UAI.

    Example
    -------
    >>> cov = pd.DataFrame({"flow": [True, False, True, True], "mdn": [True, True, False, False]})
    >>> local_coverage(cov, [1.0, 2.0, 3.0, 4.0], bins=2).to_dict("list")
    {'flow': [0.5, 1.0], 'mdn': [1.0, 0.0]}
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


def central_interval_hits(samples: ArrayLike, truth: ArrayLike, level: float) -> np.ndarray:
    """Whether each truth lies inside its central sample interval of nominal ``level``: ``|2 PIT - 1| <= level``.

    Reference: Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69, 243 (central prediction
    intervals and the PIT).

    Example
    -------
    >>> central_interval_hits([[0.0, 1.0, 2.0, 3.0]] * 2, [1.5, 5.0], 0.5).tolist()
    [True, False]
    """
    if not 0 < level < 1:
        raise ValueError(f"level: expected a value in (0, 1), got {level!r}")
    return np.abs(2 * pit(samples, truth) - 1) <= level


def conformal_interval_hits(cal_pred: ArrayLike, cal_truth: ArrayLike, pred: ArrayLike, truth: ArrayLike,
                            level: float) -> np.ndarray:
    """Whether each truth lies inside the split-conformal interval ``pred +- q_level`` of point predictions:
    |pred_i - y_i| <= q_level (:func:`conformal_thresholds` of the calibration residuals).

    Reference: Lei et al. (2018), *J. Amer. Statist. Assoc.* 113, 1094 (split conformal).

    Example: calibration residuals 0.1..0.4 give q_0.5 = 0.3 (the 3rd smallest of 4):

    >>> conformal_interval_hits([0.0] * 4, [0.1, -0.2, 0.3, -0.4], [0.0, 0.0], [0.25, 0.5], 0.5).tolist()
    [True, False]
    """
    if not 0 < level < 1:
        raise ValueError(f"level: expected a value in (0, 1), got {level!r}")
    cal_score, test_score, samples, _, one_d = conformal_scores(cal_pred, cal_truth, pred, truth)
    if samples is not None:
        raise ValueError("pred: expected point predictions (n,) or (n, d), got samples")
    hits = test_score <= conformal_thresholds(cal_score, [level])[0]
    return hits[:, 0] if one_d else hits


@renamed_keywords(n_boot="n_resamples")
def local_coverage_error_replicates(covered: Sequence[ArrayLike], covariate: ArrayLike, *, nominal: float,
                                    bins: int = 8, n_resamples: int = 1000,
                                    seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Worst ``|coverage - nominal|`` over quantile bins of a covariate, per replicate and per event resample:
    max_b |C_b - nominal| with C_b of :func:`local_coverage` (bin ratios of the resampled sums).

    Parameters
    ----------
    covered : one (n,) boolean array per replicate (truth inside that replicate's interval)
    covariate : (n,) values whose quantile bins are compared (e.g. the observation)
    nominal : the intervals' nominal coverage
    Returns
    -------
    (values (S,), replicates (B, S)) for :func:`~posteval.metrics.intervals.replicate_interval`.

    Reference: Zhao et al. (2021), UAI (local coverage); the bootstrap over events, Efron and
    Tibshirani (1993), *An Introduction to the Bootstrap*.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> covered = [rng.random(300) < 0.9, rng.random(300) < 0.8]
    >>> values, reps = local_coverage_error_replicates(covered, rng.normal(size=300), nominal=0.9, bins=3,
    ...                                                n_resamples=100)
    >>> values.round(3).tolist(), reps.shape
    ([0.06, 0.11], (100, 2))
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
    boot = bootstrap_means([np.concatenate(per_bin, axis=1), in_bin], n_resamples=n_resamples, seed=seed)
    coverage = boot[0].reshape(n_resamples, len(hits), in_bin.shape[1]) / boot[1][:, None, :]
    return values, np.abs(coverage - nominal).max(axis=2)


@renamed_keywords(n_boot="n_resamples")
def coverage_error_replicates(samples: Sequence[ArrayLike], truth: ArrayLike, levels: ArrayLike = DEFAULT_LEVELS, *,
                              n_resamples: int = 1000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Raw coverage error (worst level, mean over dimensions) of samplers, and on event resamples:
    mean_k max_l |C_k(a_l) - a_l| with C of :func:`coverage_curve`.

    Parameters
    ----------
    samples : one (n, m) or (n, m, d) array per sampler, all for the same ``truth`` (n,) or (n, d)
    levels : nominal levels of the central intervals (as :func:`~posteval.metrics.coverage.coverage_curve`)
    Returns
    -------
    (values (k,), replicates (n_resamples, k)) for k samplers; every sampler is scored on the same
    resampled events, so differences between samplers are paired. ``values`` equals
    ``coverage_error(coverage_curve(s, truth, levels))`` averaged over dimensions.

    Reference: Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69, 243 (calibration);
    the bootstrap over events, Efron and Tibshirani (1993), *An Introduction to the Bootstrap*.

    Example: 8 and 32 draws per event, both too narrow:

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=400); y = x + rng.normal(size=400); s = x[:, None] + 0.5 * rng.normal(size=(400, 32))
    >>> values, reps = coverage_error_replicates([s[:, :8], s], y, [0.5, 0.9], n_resamples=100)
    >>> values.round(3).tolist(), reps.shape
    ([0.398, 0.325], (100, 2))
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
    boot = bootstrap_means(hits, n_resamples=n_resamples, seed=seed)
    reps = [np.abs(b.reshape(n_resamples, lv.size, d) - lv[None, :, None]).max(axis=1).mean(axis=1) for b in boot]
    return values, np.stack(reps, axis=1)
