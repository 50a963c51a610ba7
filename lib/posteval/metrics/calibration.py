"""Calibration that can say "too narrow": signed coverage with a verdict, TARP expected coverage
for d-dimensional posteriors, rank histograms with a simultaneous ECDF band, and spread-skill.

Signed coverage (:func:`signed_coverage`). For levels a_1..a_L and a sampler with m draws per
event, an *exact* sampler's central sample interval holds the truth with probability
p_m(a) = #{k in 0..m : |2k/m - 1| <= a} / (m + 1) (its rank among the draws is uniform on 0..m),
which is not a itself: m draws cannot reach the diagonal. The per-event score

    e_i = mean_l ( mean_j 1[|2 PIT_ij - 1| <= a_l] - p_m(a_l) )      (j: the d dimensions)

has mean 0 for an exact sampler, is negative when the intervals are too narrow and positive when
too wide; the deviation D is its mean over events (and seeds). Its interval is the seed-and-event
rule of :func:`~posteval.metrics.intervals.event_interval`. Verdict words, in this order:
``calibrated`` (an equivalence: |D| plus the interval's half-width within the margin, with at
least ``min_seeds`` seeds; a deviation that small is called calibrated even when its sign is
resolved, since an exact sampler of the design deviates as much), ``under-covers`` (interval
below 0), ``over-covers`` (above 0), else ``not resolved``. The margin is derived from the noise floor of an exact sampler of the same
design (n events, m draws, S seeds): the 99 % quantile, over simulated exact samplers, of
|D| + half-width, so that an exact sampler is called calibrated in 99 % of repeats and nothing
looser passes.

TARP (:func:`tarp_coverage`, Lemos et al. 2023). Dimensions are standardised by the truths'
mean and standard deviation; for each event a reference point r_i is drawn uniformly in the box
spanned by the standardised truths; the credibility f_i = mean_j 1[||x_ij - r_i|| < ||y_i - r_i||]
and the expected coverage ECP(alpha) = mean_i 1[f_i < alpha]. A calibrated posterior has
ECP(alpha) = alpha. It tests the joint distribution (it sees correlations between dimensions),
but a prior that ignores the data passes it too: report it beside CRPS.

Rank histograms (:func:`rank_histogram`, Talts et al. 2018; Säilynoja, Bürkner and Vehtari
2022). The truth's rank among the m draws (ties broken at random) per dimension, and for the
energy pre-rank (Thorarinsdottir, Scheuerer and Heinz 2016) of the augmented ensemble
{y, x_1..x_m}: rho(z) = sum_w ||z - w||, the rank of rho(y). Uniform on 0..m for a calibrated
sampler; the simultaneous band of the ECDF of the ranks (probability ci that an exact sampler's
ECDF stays inside at every grid point, by simulation) gives the test.

Spread-skill (:func:`spread_skill`, Fortin et al. 2014). The ensemble variance s_i^2 (ddof = 1,
over the draws, summed over dimensions) against the squared error of the ensemble mean; for a
calibrated ensemble E[(xbar - y)^2] = (1 + 1/m) E[s^2], so the ratio
SSR = sqrt((1 + 1/m) mean_i s_i^2 / mean_i (xbar_i - y_i)^2) is 1; below 1 the ensemble is
under-dispersed (over-confident). Binned by spread, it says whether the predicted uncertainty
tracks the actual error.

References: T. Lemos, A. Coogan et al., "Sampling-based accuracy testing of posterior
estimators for general inference", ICML 2023; S. Talts et al., "Validating Bayesian inference
algorithms with simulation-based calibration", arXiv:1804.06788; T. Säilynoja, P.-C. Bürkner,
A. Vehtari, "Graphical test for discrete uniformity and its applications in goodness-of-fit
evaluation and multiple sample comparison", Stat. Comput. 32 (2022) 32; T. L. Thorarinsdottir,
M. Scheuerer, C. Heinz, "Assessing the calibration of high-dimensional ensemble forecasts using
rank histograms", J. Comput. Graph. Stat. 25 (2016) 105; V. Fortin et al., "Why should ensemble
spread match the RMSE of the ensemble mean?", J. Hydrometeor. 15 (2014) 1708.

Example
-------
>>> rng = np.random.default_rng(0)
>>> mu = rng.normal(size=(2000, 2)); truth = mu + rng.normal(size=(2000, 2))
>>> draws = mu[:, None, :] + 0.8 * rng.normal(size=(2000, 64, 2))   # 20 % too narrow
>>> signed_coverage([draws], truth, min_seeds=1).verdict
'under-covers'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ._validation import DEFAULT_LEVELS, levels_array, positive_int, samples_truth, seed_value
from .coverage import pit
from .intervals import MIN_SEEDS_EQUIVALENCE, event_interval
from .uncertainty import _ci, _percentile, bootstrap_means

__all__ = ["exact_coverage", "SignedCoverage", "signed_coverage", "coverage_deviation_scores", "calibration_margin",
           "TarpCoverage",
           "signed_coverage_from_inside", "tarp_coverage", "tarp_noise_floor", "tarp_frame", "tarp_references",
           "tarp_credibility", "tarp_indicators", "tarp_summary", "RankHistogram", "rank_histogram", "SpreadSkill", "spread_skill", "spread_terms", "spread_summary",
           "narrowing_deviation"]


def exact_coverage(m: int, levels=DEFAULT_LEVELS) -> np.ndarray:
    """p_m(a): the central-interval coverage of an exact sampler with m draws at each level."""
    m = positive_int(m, "m")
    lv = levels_array(levels)
    score = np.abs(2.0 * np.arange(m + 1) / m - 1.0)
    return (score[None, :] <= lv[:, None]).mean(axis=1)


def _hits(samples, truth) -> tuple[np.ndarray, int]:
    """(|2 PIT - 1| per event and dimension (n, d), m)."""
    s, t, _ = samples_truth(samples, truth)
    return np.abs(2.0 * pit(s, t) - 1.0), s.shape[1]


def narrowing_deviation(scale: float, m: int, levels=DEFAULT_LEVELS, *, n_sim: int = 100_000,
                        seed: int = 0) -> tuple[float, float]:
    """The signed deviation D of a normal sampler whose width is ``scale`` times the truth's (m
    draws per event, one dimension), by simulation of ``n_sim`` events: (D, per-event sd of the
    scores e_i). ``scale`` < 1 is too narrow (D < 0).

    With it, :func:`posteval.metrics.intervals.events_to_resolve` says how many events resolve such a narrowing.

    >>> d, sd = narrowing_deviation(0.97, 64, n_sim=20_000)
    >>> bool(d < 0 < sd)
    True
    """
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(f"scale: expected a positive number, got {scale!r}")
    n = positive_int(n_sim, "n_sim", minimum=2)
    rng = np.random.default_rng(seed_value(seed))
    truth = rng.normal(size=n)
    draws = rng.normal(scale=float(scale), size=(n, positive_int(m, "m")))
    e = coverage_deviation_scores([draws], truth, levels)[:, 0]
    return float(e.mean()), float(e.std(ddof=1))


@dataclass(frozen=True)
class SignedCoverage:
    """Signed coverage deviation D (see the module docstring), its interval and verdict."""

    deviation: float
    lo: float
    hi: float
    per_level: np.ndarray  # (L,) coverage - p_m(a), mean over seeds
    per_level_lo: np.ndarray
    per_level_hi: np.ndarray
    levels: np.ndarray
    margin: float
    n_seeds: int
    n_events: int
    m: int
    verdict: str


def _margin_key(n: int, m: int, s: int, levels: np.ndarray, ci: float) -> tuple:
    return (n, m, s, tuple(np.round(levels, 12)), round(ci, 12))


_MARGINS: dict[tuple, float] = {}


def calibration_margin(n_events: int, m: int, n_seeds: int = 1, levels=DEFAULT_LEVELS, *, ci: float = 0.95,
                       quantile: float = 0.99, repeats: int = 400, seed: int = 0) -> float:
    """Equivalence margin of :func:`signed_coverage` for a design: the ``quantile`` over
    ``repeats`` simulated exact samplers of |D| + half-width of its interval.

    An exact sampler's truth has one posterior PIT u_i per event, shared by the seeds (same test
    events); each seed's rank of the truth among its m draws is Binomial(m, u_i), the PIT ties
    split as :func:`~posteval.metrics.coverage.pit` splits them (a rank k gives PIT k / m).
    """
    n, m, s = positive_int(n_events, "n_events"), positive_int(m, "m"), positive_int(n_seeds, "n_seeds")
    lv = levels_array(levels)
    ci = _ci(ci)
    key = _margin_key(n, m, s, lv, ci) + (quantile, repeats, seed)
    if key in _MARGINS:
        return _MARGINS[key]
    rng = np.random.default_rng(seed_value(seed))
    p = exact_coverage(m, lv)
    out = np.empty(repeats)
    if s == 1:  # one seed: the truth's rank is uniform on 0..m, so a rank histogram says it all
        score = np.abs(2.0 * np.arange(m + 1) / m - 1.0)
        e = (score[:, None] <= lv[None, :]).mean(axis=1) - p.mean()  # e(k) for each rank k
        counts = rng.multinomial(n, np.full(m + 1, 1.0 / (m + 1)), size=repeats)
        mean = counts @ e / n
        var = (counts @ e**2 / n - mean**2) * n / (n - 1)
        half = stats.norm.ppf(0.5 + ci / 2) * np.sqrt(np.maximum(var, 0.0) / n)
        _MARGINS[key] = float(np.quantile(np.abs(mean) + half, quantile))
        return _MARGINS[key]
    for r in range(repeats):
        u = rng.random(n)
        ranks = rng.binomial(m, u, size=(s, n))
        score = np.abs(2.0 * ranks / m - 1.0)
        e = (score[:, :, None] <= lv[None, None, :]).mean(axis=2) - p.mean()
        mean, lo, hi = event_interval(e.T, level=ci)
        out[r] = abs(mean) + (hi - lo) / 2
    _MARGINS[key] = float(np.quantile(out, quantile))
    return _MARGINS[key]


def signed_coverage(samples_per_seed: Sequence[np.ndarray], truth, levels=DEFAULT_LEVELS, *, ci: float = 0.95,
                    min_seeds: int = MIN_SEEDS_EQUIVALENCE, margin: float | None = None) -> SignedCoverage:
    """Signed coverage of a sampler over S training seeds on shared test events.

    Parameters
    ----------
    samples_per_seed : S arrays of draws (n, m) or (n, m, d), one per seed (one for a fixed model)
    truth : (n,) or (n, d)
    levels, ci : nominal levels; interval level
    min_seeds : fewest seeds for the word "calibrated" (an equivalence needs the seed variance
        measured; a direction can be resolved with any number). 1 for samples of a fixed model.
    margin : equivalence margin; default :func:`calibration_margin` of the design

    Returns
    -------
    SignedCoverage; ``verdict`` in "calibrated", "under-covers", "over-covers", "not resolved".
    """
    lv = levels_array(levels)
    inside, m = _inside(samples_per_seed, truth, lv)
    return signed_coverage_from_inside(inside, m, lv, ci=ci, min_seeds=min_seeds, margin=margin)


def _inside(samples_per_seed, truth, lv: np.ndarray) -> tuple[np.ndarray, int]:
    """(inside (S, n, L): per seed and event the fraction of dimensions whose central interval holds
    the truth at each level, m)."""
    if isinstance(samples_per_seed, np.ndarray) or not len(samples_per_seed):
        raise ValueError("samples_per_seed: expected a non-empty list of sample arrays, one per seed")
    hits = [_hits(s_, truth) for s_ in samples_per_seed]
    ms = {m for _, m in hits}
    if len(ms) != 1:
        raise ValueError(f"samples_per_seed: every seed needs the same m, got {sorted(ms)}")
    return np.stack([(h[:, :, None] <= lv[None, None, :]).mean(axis=1) for h, _ in hits]), ms.pop()


def coverage_deviation_scores(samples_per_seed: Sequence[np.ndarray], truth, levels=DEFAULT_LEVELS) -> np.ndarray:
    """The per-event scores e_i of :func:`signed_coverage` as ``(events, seeds)`` (one column per
    seed): their mean is the signed deviation D, and
    :func:`~posteval.metrics.intervals.event_interval` of them is its interval, so that a claims
    table (:class:`~posteval.metrics.intervals.Measurements`) can decide "calibrated".

    >>> rng = np.random.default_rng(0)
    >>> coverage_deviation_scores([rng.normal(size=(50, 8))], rng.normal(size=50)).shape
    (50, 1)
    """
    lv = levels_array(levels)
    inside, m = _inside(samples_per_seed, truth, lv)
    return (inside.mean(axis=2) - exact_coverage(m, lv).mean()).T


def signed_coverage_from_inside(inside, m: int, levels=DEFAULT_LEVELS, *, ci: float = 0.95,
                                min_seeds: int = MIN_SEEDS_EQUIVALENCE, margin: float | None = None) -> SignedCoverage:
    """:func:`signed_coverage` from ``inside`` (S, n, L): per seed and event the fraction of the
    dimensions whose central interval at each level holds the truth (e.g. chunk by chunk)."""
    lv = levels_array(levels)
    ci = _ci(ci)
    inside = np.asarray(inside, dtype=float)
    if inside.ndim != 3 or inside.shape[2] != lv.size:
        raise ValueError(f"inside: expected (seeds, events, {lv.size} levels), got {inside.shape}")
    p = exact_coverage(m, lv)
    s_, n = inside.shape[:2]
    e = inside.mean(axis=2) - p.mean()
    mean, lo, hi = event_interval(e.T, level=ci)
    per = [event_interval((inside[:, :, k] - p[k]).T, level=ci) for k in range(lv.size)]
    delta = calibration_margin(n, m, s_, lv, ci=ci) if margin is None else float(margin)
    if s_ >= positive_int(min_seeds, "min_seeds") and abs(mean) + (hi - lo) / 2 <= delta:
        word = "calibrated"  # within the design's resolution, even if a tiny sign is resolved
    elif hi < 0:
        word = "under-covers"
    elif lo > 0:
        word = "over-covers"
    else:
        word = "not resolved"
    return SignedCoverage(float(mean), float(lo), float(hi), np.array([v.estimate for v in per]),
                          np.array([v.lo for v in per]), np.array([v.hi for v in per]), lv, delta, s_, n, m, word)


# ---------------------------------------------------------------------------------------------
# TARP
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TarpCoverage:
    """TARP credibility per event, the expected-coverage curve with its bootstrap band, and the
    TARP error max_alpha |ECP(alpha) - alpha| with its interval."""

    credibility: np.ndarray  # (n,)
    alpha: np.ndarray
    ecp: np.ndarray
    ecp_lo: np.ndarray
    ecp_hi: np.ndarray
    error: float
    error_lo: float
    error_hi: float
    noise_floor: float  # 95 % quantile of an exact sampler's TARP error at the same n, m and grid

    @property
    def verdict(self) -> str:
        """"calibrated" (error within the noise floor), "miscalibrated" (the interval's lower end
        above it) or "not resolved"."""
        if self.error <= self.noise_floor:
            return "calibrated"
        return "miscalibrated" if self.error_lo > self.noise_floor else "not resolved"


def tarp_noise_floor(n_events: int, m: int, alpha, *, repeats: int = 400, quantile: float = 0.95,
                     seed: int = 0) -> float:
    """``quantile`` of the TARP error of an exact sampler: its credibility is k / m with the
    truth's rank k uniform on 0..m (the m + 1 distances to the reference are exchangeable)."""
    n, m = positive_int(n_events, "n_events"), positive_int(m, "m")
    grid = np.asarray(alpha, dtype=float)
    rng = np.random.default_rng(seed_value(seed))
    counts = rng.multinomial(n, np.full(m + 1, 1.0 / (m + 1)), size=repeats)  # histogram of k
    below = (np.arange(m + 1)[:, None] / m < grid[None, :]).astype(float)  # (m + 1, grid): k / m < alpha
    ecp = counts @ below / n
    return float(np.quantile(np.abs(ecp - grid).max(axis=1), quantile))


def tarp_coverage(samples, truth, *, references=None, alpha=None, standardise: bool = True, n_boot: int = 1000,
                  ci: float = 0.95, seed: int = 0) -> TarpCoverage:
    """TARP expected coverage of draws ``samples`` (n, m, d) against ``truth`` (n, d).

    ``references`` (n, d) in the standardised coordinates, or None for points drawn uniformly in
    the box of the standardised truths (seeded); ``alpha`` the credibility grid (default 0, 0.05,
    .., 1); ``standardise``: divide each dimension, samples and truth alike, by the truths'
    standard deviation after subtracting their mean (so that no dimension dominates the
    distance). The band and the error's interval come from ``n_boot`` bootstrap resamples of the
    events. Given the same (standardised) reference points and the tarp package's alpha grid,
    ECP equals ``tarp.get_tarp_coverage(..., references=refs)``'s ecp.
    """
    s, t, _ = samples_truth(samples, truth)
    centre, scale = tarp_frame(t, standardise=standardise)
    if references is None:
        refs = tarp_references(t, centre, scale, seed=seed)
    else:
        refs = np.asarray(references, dtype=float)
        if refs.shape != t.shape or not np.isfinite(refs).all():
            raise ValueError(f"references: expected finite (n, d) = {t.shape}, got {refs.shape}")
    f = tarp_credibility(s, t, refs, centre, scale)
    return tarp_summary(f, s.shape[1], alpha=alpha, n_boot=n_boot, ci=ci, seed=seed)


def tarp_frame(truth: np.ndarray, *, standardise: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(centre, scale) of the standardised coordinates: the truths' mean and sd per dimension."""
    t = np.asarray(truth, dtype=float)
    if not standardise:
        return np.zeros(t.shape[1]), np.ones(t.shape[1])
    sd = t.std(axis=0)
    return t.mean(axis=0), np.where(sd > 0, sd, 1.0)


def tarp_references(truth: np.ndarray, centre, scale, *, seed: int = 0) -> np.ndarray:
    """One reference point per event, uniform in the box of the standardised truths (seeded)."""
    z = (np.asarray(truth, dtype=float) - centre) / scale
    lo, hi = z.min(axis=0), z.max(axis=0)
    return lo + (hi - lo) * np.random.default_rng(seed_value(seed)).random(z.shape)


def tarp_credibility(samples: np.ndarray, truth: np.ndarray, references: np.ndarray, centre, scale) -> np.ndarray:
    """f_i = mean_j 1[||x_ij - r_i|| < ||y_i - r_i||] in standardised coordinates (n, m, d), (n, d)."""
    xs, ts = (samples - centre) / scale, (truth - centre) / scale
    d_samples = np.linalg.norm(xs - references[:, None, :], axis=2)
    d_truth = np.linalg.norm(ts - references, axis=1)
    return np.mean(d_samples < d_truth[:, None], axis=1)


TARP_ALPHA = np.linspace(0.0, 1.0, 21)


def tarp_indicators(credibility, alpha=None) -> np.ndarray:
    """(n, grid) indicators 1[f_i < alpha]: their column means are the expected coverage."""
    grid = TARP_ALPHA if alpha is None else np.asarray(alpha, dtype=float)
    return (np.asarray(credibility, dtype=float)[:, None] < grid[None, :]).astype(float)


def tarp_summary(credibility, m: int, *, alpha=None, n_boot: int = 1000, ci: float = 0.95, seed: int = 0,
                 replicates: np.ndarray | None = None) -> TarpCoverage:
    """The :class:`TarpCoverage` of per-event credibilities (of samplers with m draws);
    ``replicates``: bootstrap means of :func:`tarp_indicators` already drawn (e.g. with the same
    resampled events as other statistics), else drawn here."""
    f = np.asarray(credibility, dtype=float)
    ci = _ci(ci)
    grid = TARP_ALPHA if alpha is None else np.asarray(alpha, dtype=float)
    below = tarp_indicators(f, grid)
    ecp = below.mean(axis=0)
    reps = bootstrap_means(below, n_boot=n_boot, seed=seed) if replicates is None else replicates
    band_lo, band_hi = _percentile(reps, ci)
    e_lo, e_hi = _percentile(np.abs(reps - grid).max(axis=1), ci)
    floor = tarp_noise_floor(len(f), m, grid, seed=seed)
    return TarpCoverage(f, grid, ecp, band_lo, band_hi, float(np.abs(ecp - grid).max()), float(e_lo), float(e_hi), floor)


# ---------------------------------------------------------------------------------------------
# rank histograms
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RankHistogram:
    """Ranks of the truth (0..m) per event for each projection, and the simultaneous ECDF test."""

    ranks: pd.DataFrame  # columns: dimension names and "energy"
    m: int
    pvalue: dict  # {projection: p-value of the simultaneous ECDF test}
    band: tuple[np.ndarray, np.ndarray, np.ndarray]  # (grid, lo, hi) of the ECDF of fractional ranks


def _ranks_with_ties(below: np.ndarray, equal: np.ndarray, rng) -> np.ndarray:
    """Rank of the truth: #draws below plus a uniform share of the ties."""
    return below + np.floor(rng.random(below.shape) * (equal + 1)).astype(int)


def _ecdf_band(n: int, m: int, ci: float, rng, sims: int = 1000) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Simultaneous band of the ECDF of n uniform ranks on 0..m at the grid k/(m+1), k = 1..m,
    by simulation (Säilynoja et al. 2022): returns (grid, lo, hi, simulated minima of the
    pointwise two-sided binomial tail probabilities)."""

    grid = np.arange(1, m + 1) / (m + 1)
    sim = rng.integers(0, m + 1, size=(sims, n))
    counts = np.stack([(sim < k).sum(axis=1) for k in range(1, m + 1)], axis=1)  # (sims, m)
    tail = 2 * np.minimum(stats.binom.cdf(counts, n, grid), stats.binom.sf(counts - 1, n, grid))
    minima = np.minimum(tail.min(axis=1), 1.0)
    gamma = float(np.quantile(minima, 1 - ci))
    lo = stats.binom.ppf(gamma / 2, n, grid) / n
    hi = stats.binom.ppf(1 - gamma / 2, n, grid) / n
    return grid, lo, hi, minima


def rank_histogram(samples, truth, *, dim_names: Sequence[str] | None = None, ci: float = 0.95, seed: int = 0,
                   sims: int = 1000) -> RankHistogram:
    """SBC-style ranks of the truth among the draws (n, m, d), per dimension and for the energy
    pre-rank over all dimensions, with the simultaneous ECDF test of their uniformity."""
    s, t, _ = samples_truth(samples, truth)
    ci = _ci(ci)
    rng = np.random.default_rng(seed_value(seed))
    n, m, d = s.shape
    names = list(dim_names) if dim_names is not None else [f"dim{j}" for j in range(d)]
    if len(names) != d:
        raise ValueError(f"dim_names: {len(names)} names for {d} dimensions")
    cols = {}
    for j, name in enumerate(names):
        below = (s[:, :, j] < t[:, None, j]).sum(axis=1)
        equal = (s[:, :, j] == t[:, None, j]).sum(axis=1)
        cols[name] = _ranks_with_ties(below, equal, rng)
    if d > 1:
        aug = np.concatenate([t[:, None, :], s], axis=1)  # (n, m + 1, d), the truth first
        scale = aug.reshape(-1, d).std(axis=0)
        aug = aug / np.where(scale > 0, scale, 1.0)
        rho = np.stack([np.linalg.norm(aug - aug[:, k : k + 1, :], axis=2).sum(axis=1) for k in range(m + 1)], axis=1)
        below = (rho[:, 1:] < rho[:, :1]).sum(axis=1)
        equal = (rho[:, 1:] == rho[:, :1]).sum(axis=1)
        cols["energy"] = _ranks_with_ties(below, equal, rng)
    grid, lo, hi, minima = _ecdf_band(n, m, ci, rng, sims)

    pvalues = {}
    for name, r in cols.items():
        counts = np.array([(r < k).sum() for k in range(1, m + 1)])
        tail = 2 * np.minimum(stats.binom.cdf(counts, n, grid), stats.binom.sf(counts - 1, n, grid))
        pvalues[name] = float((np.sum(minima <= min(tail.min(), 1.0)) + 1) / (len(minima) + 1))
    return RankHistogram(pd.DataFrame(cols), m, pvalues, (grid, lo, hi))


# ---------------------------------------------------------------------------------------------
# spread-skill
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SpreadSkill:
    """Spread-skill ratio with its interval, and the binned spread against the binned RMSE."""

    ratio: float
    lo: float
    hi: float
    bins: pd.DataFrame  # columns: spread (root mean ensemble variance x (1 + 1/m)), rmse, events


def spread_skill(samples, truth, *, bins: int = 10, n_boot: int = 1000, ci: float = 0.95, seed: int = 0) -> SpreadSkill:
    """Spread-skill ratio SSR = sqrt((1 + 1/m) mean s^2 / mean (xbar - y)^2) over all dimensions
    (1 for a calibrated ensemble, < 1 under-dispersed), its bootstrap interval over events, and
    the same two quantities in ``bins`` quantile bins of the spread."""
    s, t, _ = samples_truth(samples, truth)
    var, err2 = spread_terms(s, t)
    return spread_summary(var, err2, bins=bins, n_boot=n_boot, ci=ci, seed=seed)


def spread_terms(samples: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per event: (1 + 1/m) s^2 (ensemble variance, ddof 1, summed over dimensions) and the
    squared error of the ensemble mean, for draws (n, m, d) and truth (n, d)."""
    m = samples.shape[1]
    if m < 2:
        raise ValueError(f"samples: spread needs m >= 2 draws per event, got shape {samples.shape}")
    return samples.var(axis=1, ddof=1).sum(axis=1) * (1 + 1 / m), ((samples.mean(axis=1) - truth) ** 2).sum(axis=1)


def spread_summary(var, err2, *, bins: int = 10, n_boot: int = 1000, ci: float = 0.95, seed: int = 0,
                   replicates: np.ndarray | None = None) -> SpreadSkill:
    """The :class:`SpreadSkill` of per-event :func:`spread_terms`; ``replicates``: bootstrap means
    (n_boot, 2) of the two terms already drawn, else drawn here."""
    var, err2 = np.asarray(var, dtype=float), np.asarray(err2, dtype=float)
    k = positive_int(bins, "bins")
    reps = bootstrap_means(np.stack([var, err2], axis=1), n_boot=n_boot, seed=seed) if replicates is None else replicates
    lo, hi = _percentile(np.sqrt(reps[:, 0] / reps[:, 1]), _ci(ci))
    edges = np.quantile(var, np.linspace(0, 1, k + 1))
    which = np.clip(np.searchsorted(edges, var, side="right") - 1, 0, k - 1)
    rows = [{"spread": float(np.sqrt(var[which == b].mean())), "rmse": float(np.sqrt(err2[which == b].mean())),
             "events": int((which == b).sum())} for b in range(k) if np.any(which == b)]
    return SpreadSkill(float(np.sqrt(var.mean() / err2.mean())), float(lo), float(hi), pd.DataFrame(rows))
