"""Calibration that can say "too narrow": signed coverage with a verdict, TARP expected coverage
for d-dimensional posteriors, rank histograms with a simultaneous ECDF band, and spread-skill.

Signed coverage (:func:`signed_coverage`). For levels a_1..a_L and a sampler with m draws per
event, an *exact* sampler's central sample interval holds the truth with probability
p_m(a) = #{k in 0..m : |2k/m - 1| <= a} / (m + 1) (its rank among the draws is uniform on 0..m),
which is not a itself: m draws cannot reach the diagonal. The per-event score

    e_i = mean_l ( mean_j 1[|2 PIT_ij - 1| <= a_l] - p_m(a_l) )      (j: the d dimensions)

has mean 0 for an exact sampler, is negative when the intervals are too narrow and positive when
too wide; the deviation D is its mean over events (and seeds). Its interval is the seed-and-event
rule of :func:`~posteval.metrics.intervals.event_interval`. The word comes from the package's one
decision rule (:mod:`~posteval.metrics.verdicts`: :func:`~posteval.metrics.verdicts.word_pvalues`
with direction 0, signed, and :func:`~posteval.metrics.verdicts.decide`; a single claim is its own
family): ``calibrated`` when two one-sided tests put |D| below the fixed margin
:data:`COVERAGE_MARGIN` (the interval inside (-margin, margin)), else ``under-covers`` when the
interval lies below 0, ``over-covers`` when above 0, else ``not resolved`` (with a ``reason`` when
the interval is wider than the margin, so that "calibrated" was out of reach). The margin is a
property of what a user needs, not of the sample: 0.02, two percentage points of coverage on
average over the levels. How often each word is said against the true D, at the chapters' designs,
is the operating characteristic of ``scripts/operating_characteristic.py``
(``book/figures/operating_characteristic.png``). :func:`calibration_margin` (an exact sampler's
noise floor) describes what a design can resolve; it is not the verdict's margin.

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
sampler; the simultaneous band of the ECDF of the ranks (probability ``level`` that an exact sampler's
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
>>> signed_coverage([draws], truth).verdict
'under-covers'
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._deprecation import renamed_keywords
from ._validation import (DEFAULT_LEVELS, finite_array, level_value, levels_array, order_free_draws, positive_int,
                          power_of_two_scale, samples_truth, seed_value)
from .claims import CALIBRATION_WORDS
from .coverage import pit
from .intervals import (binomial_band, binomial_tail_pvalue, event_interval, monte_carlo_pvalue, normal_half_width,
                        percentile_bounds)
from .uncertainty import bootstrap_means
from .verdicts import NOT_RESOLVED, against_noise_floor, decide, holm_words, word_pvalues

__all__ = ["COVERAGE_MARGIN", "MIN_EVENTS_COVERAGE", "MIN_DRAWS_COVERAGE", "exact_coverage", "SignedCoverage", "signed_coverage", "coverage_deviation_scores", "calibration_margin",
           "TarpCoverage",
           "signed_coverage_from_inside", "tarp_coverage", "tarp_noise_floor", "tarp_frame", "tarp_references",
           "tarp_credibility", "tarp_indicators", "tarp_summary", "tarp_error_replicates", "RankHistogram", "rank_histogram",
           "SpreadSkill", "spread_skill", "spread_terms", "spread_summary", "spread_skill_replicates",
           "narrowing_deviation", "recalibration_temperature"]


COVERAGE_MARGIN = 0.02
"""The margin of the word "calibrated", in the units of the signed deviation D (coverage minus an
exact sampler's, a fraction, averaged over the levels): a sampler is called calibrated when its
central intervals hold the truth within 2 percentage points of an exact sampler's rate, on average
over the levels (e.g. its 90 % intervals hold 88-92 % of truths where an exact sampler's hold 90 %).

Why 0.02. It is what a user of the intervals can tell apart, not the sample's noise: a coverage
table is read to about two percentage points, and for a Gaussian posterior |D| = 0.02 is a sampler
whose width is about 6 % off (width x 0.94 gives D = -0.02, x 1.064 gives +0.02, by
:func:`narrowing_deviation` at m = 100); a sampler closer than that states its uncertainty as well
as its width can be known from a few thousand test events. It is fixed: it does not shrink with
the design (the old margin, the exact sampler's 99 % noise floor, did, and amounted to "not
rejected at 1 %"). A design whose interval is wider than the margin cannot say "calibrated" at all
(:attr:`SignedCoverage.reason`); the operating characteristic of the chapters' designs is in
``book/figures/operating_characteristic.png`` (``scripts/operating_characteristic.py``)."""

MIN_DRAWS_COVERAGE = 2
"""Fewest draws per event: with one draw the central sample interval of every level below 1 is
empty (a single point), so the coverage of an exact sampler p_1(a) is 0, every event's score is 0
and D is 0 with a zero-width interval whatever the sampler: it would be "calibrated" 100 units off."""

MIN_EVENTS_COVERAGE = 100
"""Fewest test events for a signed coverage verdict. D is the mean of per-event scores bounded in
[-1, 1], and its interval is the normal (Wald) interval of that mean: a central-limit
approximation. Its worst case here is m = 2 draws, where the score takes two values (2/3 with
probability 1/3, -1/3 with 2/3): the Wald interval of a Bernoulli(1/3) proportion, which holds its
level to about a percentage point once n p (1 - p) exceeds about 20, n >= 100 (Brown, Cai and
DasGupta 2001, *Statist. Sci.* 16, 101). With fewer events an exact sampler's scores can all be
equal (probability (2/3)^n at m = 2), which gives a zero-width interval and a certain, wrong word.
Measured (400,000 exact samplers, one seed, the normal interval at 95 %): at n = 100 the words
"under-covers" / "over-covers" are said in 2.8 % / 1.7 % of test sets at m = 2 and 2.6 % / 2.6 %
at m = 64 (nominal 2.5 % each); at n = 30 in 3.5 % / 1.8 % (m = 2) and 3.0 % / 3.0 % (m = 64)."""

def exact_coverage(m: int, levels: ArrayLike = DEFAULT_LEVELS) -> np.ndarray:
    """p_m(a): the central-interval coverage of an exact sampler with m draws at each level, shape (L,):

        p_m(a) = #{k in 0..m : |2k/m - 1| <= a} / (m + 1),

    since the truth's rank k among m draws of its own posterior is uniform on 0..m.

    Reference: Talts et al. (2018), "Validating Bayesian inference algorithms with simulation-based
    calibration", arXiv:1804.06788, Theorem 1 (the rank is uniform); Hamill (2001), *Mon. Wea. Rev.* 129,
    550 (rank histograms).

    Example: m = 4 draws, ranks k = 0..4 give |2k/m - 1| = 1, 0.5, 0, 0.5, 1:

    >>> exact_coverage(4, [0.4, 0.5]).tolist()
    [0.2, 0.6]
    """
    m = positive_int(m, "m")
    lv = levels_array(levels)
    score = np.abs(2.0 * np.arange(m + 1) / m - 1.0)
    return (score[None, :] <= lv[:, None]).mean(axis=1)


def _hits(samples, truth) -> tuple[np.ndarray, int]:
    """(|2 PIT - 1| per event and dimension (n, d), m)."""
    s, t, _ = samples_truth(samples, truth)
    return np.abs(2.0 * pit(s, t) - 1.0), s.shape[1]


@renamed_keywords(n_sim="n_resamples")
def narrowing_deviation(scale: float, m: int, levels: ArrayLike = DEFAULT_LEVELS, *, n_resamples: int = 100_000,
                        seed: int = 0) -> tuple[float, float]:
    """The signed deviation D of a normal sampler whose width is ``scale`` times the truth's (m
    draws per event, one dimension), by simulation of ``n_resamples`` events (SciPy's name for a simulation count): (D, per-event sd of the
    scores e_i). ``scale`` < 1 is too narrow (D < 0).

    With y_i ~ N(0, 1) and x_ij ~ N(0, scale^2), D = mean_i e_i with the scores e_i of
    :func:`coverage_deviation_scores`. With it, :func:`posteval.metrics.intervals.events_to_resolve`
    says how many events resolve such a narrowing.

    Reference: an under-dispersed forecast has a U-shaped PIT histogram and under-covering central
    intervals (Gneiting, Balabdaoui and Raftery 2007, "Probabilistic forecasts, calibration and
    sharpness", *J. R. Statist. Soc. B* 69, 243).

    Example
    -------
    >>> d, sd = narrowing_deviation(0.97, 64, n_resamples=20_000)
    >>> bool(d < 0 < sd)
    True
    """
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(f"scale: expected a positive number, got {scale!r}")
    n = positive_int(n_resamples, "n_resamples", minimum=2)
    rng = np.random.default_rng(seed_value(seed))
    truth = rng.normal(size=n)
    draws = rng.normal(scale=float(scale), size=(n, positive_int(m, "m")))
    e = coverage_deviation_scores([draws], truth, levels)[:, 0]
    return float(e.mean()), float(e.std(ddof=1))


def recalibration_temperature(temperatures: Sequence[float], deviations: Sequence[float], *,
                              bounds: tuple[float, float] = (0.5, 2.0)) -> float:
    """The width (temperature) T* at which a sampler's signed coverage deviation D(T) crosses zero,
    from D measured at two temperatures t0 < t1 on a calibration split (the split of split-conformal
    recalibration, held out from training and from the test events): the secant root

        T* = t0 - D(t0) (t1 - t0) / (D(t1) - D(t0)).

    D grows with the width (wider draws cover more), so D(t1) > D(t0) is required; T* must lie inside
    ``bounds``, where the straight line is a fair stand-in for D(T) near t0 and t1 (else ValueError:
    measure at temperatures nearer the root). The recalibrated sampler draws at T*; its coverage on
    the test events is what tells whether the recalibration worked, since D(T*) = 0 holds on the
    calibration split only up to the split's noise and the line's curvature.

    Reference: temperature scaling fitted on a held-out split (Guo, Pleiss, Sun and Weinberger (2017),
    "On calibration of modern neural networks", ICML, Section 4.2); the temperature of a flow's base
    distribution (Kingma and Dhariwal (2018), "Glow", NeurIPS, Section 5); split calibration as in
    split-conformal prediction (Angelopoulos and Bates (2021), arXiv:2107.07511, Section 1).

    Example: a sampler 10 % too narrow at T = 1 (D < 0) and 15 % too wide at T = 1.25 (D > 0) crosses
    zero near T = 1.1:

    >>> d0 = narrowing_deviation(0.9, 64, n_resamples=20_000)[0]
    >>> d1 = narrowing_deviation(0.9 * 1.25, 64, n_resamples=20_000)[0]
    >>> round(recalibration_temperature([1.0, 1.25], [d0, d1]), 1)
    1.1
    """
    t, d = np.asarray(temperatures, dtype=float), np.asarray(deviations, dtype=float)
    if t.shape != (2,) or d.shape != (2,):
        raise ValueError(f"temperatures and deviations: two of each, got shapes {t.shape} and {d.shape}")
    if not (np.all(np.isfinite(t)) and np.all(t > 0) and t[0] < t[1]):
        raise ValueError(f"temperatures: two finite positive numbers t0 < t1, got {t.tolist()}")
    if not np.all(np.isfinite(d)) or np.any(np.abs(d) > 1):
        raise ValueError(f"deviations: signed coverage deviations (finite, in [-1, 1]), got {d.tolist()}")
    lo, hi = bounds
    if not 0 < lo < hi < np.inf:
        raise ValueError(f"bounds: 0 < lo < hi, got {bounds!r}")
    if not d[1] > d[0]:
        raise ValueError(f"deviations: D must grow with the temperature (wider draws cover more), got D({t[0]:g}) = "
                         f"{d[0]:.4f} and D({t[1]:g}) = {d[1]:.4f}")
    root = float(t[0] - d[0] * (t[1] - t[0]) / (d[1] - d[0]))
    if not lo <= root <= hi:
        raise ValueError(f"the secant through D({t[0]:g}) = {d[0]:.4f} and D({t[1]:g}) = {d[1]:.4f} crosses zero at "
                         f"T = {root:.3f}, outside bounds {bounds}: measure D at temperatures nearer the root")
    return root


@dataclass(frozen=True)
class SignedCoverage:
    """Signed coverage deviation D (see the module docstring), its interval and verdict; ``margin`` is
    the verdict's margin (:data:`COVERAGE_MARGIN` unless given), ``reason`` why the word is "not
    resolved" when the design could not reach "calibrated" ("" otherwise)."""

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
    reason: str = ""


def _margin_key(n: int, m: int, s: int, levels: np.ndarray, level: float) -> tuple:
    return (n, m, s, tuple(np.round(levels, 12)), round(level, 12))


_MARGINS: dict[tuple, float] = {}


@renamed_keywords(ci="level", repeats="n_resamples")
def calibration_margin(n_events: int, m: int, n_seeds: int = 1, levels: ArrayLike = DEFAULT_LEVELS, *,
                       level: float = 0.95, quantile: float = 0.99, n_resamples: int = 400, seed: int = 0) -> float:
    """The noise floor of :func:`signed_coverage` for a design (n events, m draws, S seeds): the
    ``quantile`` over ``n_resamples`` simulated exact samplers of |D| + half-width of its interval,

        delta = Q_quantile( |D_r| + (hi_r - lo_r) / 2 ),   r = 1..repeats.

    It describes the design's resolution (how far from 0 an exact sampler's interval reaches; it
    shrinks like 1 / sqrt(n)), as the chapters' texts use it. It is *not* the margin of the verdict
    "calibrated": that margin is the fixed :data:`COVERAGE_MARGIN`, what a user needs (an
    equivalence with a margin that shrinks with n would only say "not rejected"). A floor above
    :data:`COVERAGE_MARGIN` says that the design can rarely resolve "calibrated".

    An exact sampler's truth has one posterior PIT u_i per event, shared by the seeds (same test
    events); each seed's rank of the truth among its m draws is Binomial(m, u_i), the PIT ties
    split as :func:`~posteval.metrics.coverage.pit` splits them (a rank k gives PIT k / m).

    Reference: the interval's reach as the resolution of an equivalence test (Schuirmann 1987,
    *J. Pharmacokinet. Biopharm.* 15, 657: two one-sided tests resolve equivalence only for a
    margin beyond the half-width); the uniform rank of an exact sampler, Talts et al. (2018),
    arXiv:1804.06788, Theorem 1.

    Example: the margin shrinks with the number of events.

    >>> round(calibration_margin(1000, 64), 3)
    0.042
    >>> calibration_margin(4000, 64) < calibration_margin(1000, 64)
    True
    """
    n, m, s = positive_int(n_events, "n_events"), positive_int(m, "m"), positive_int(n_seeds, "n_seeds")
    lv = levels_array(levels)
    level = level_value(level)
    key = _margin_key(n, m, s, lv, level) + (quantile, n_resamples, seed)
    if key in _MARGINS:
        return _MARGINS[key]
    rng = np.random.default_rng(seed_value(seed))
    p = exact_coverage(m, lv)
    out = np.empty(n_resamples)
    if s == 1:  # one seed: the truth's rank is uniform on 0..m, so a rank histogram says it all
        score = np.abs(2.0 * np.arange(m + 1) / m - 1.0)
        e = (score[:, None] <= lv[None, :]).mean(axis=1) - p.mean()  # e(k) for each rank k
        counts = rng.multinomial(n, np.full(m + 1, 1.0 / (m + 1)), size=n_resamples)
        mean = counts @ e / n
        var = (counts @ e**2 / n - mean**2) * n / (n - 1)
        half = normal_half_width(var, n, level)
        _MARGINS[key] = float(np.quantile(np.abs(mean) + half, quantile))
        return _MARGINS[key]
    for r in range(n_resamples):
        u = rng.random(n)
        ranks = rng.binomial(m, u, size=(s, n))
        score = np.abs(2.0 * ranks / m - 1.0)
        e = (score[:, :, None] <= lv[None, None, :]).mean(axis=2) - p.mean()
        mean, lo, hi = event_interval(e.T, level=level)
        out[r] = abs(mean) + (hi - lo) / 2
    _MARGINS[key] = float(np.quantile(out, quantile))
    return _MARGINS[key]


_MIN_SEEDS_GONE = ("min_seeds no longer has an effect (since posteval 0.3.0; removed in 0.4.0): the Student-t "
                   "quantile over the seeds carries the uncertainty of the seed variance, so the one decision rule "
                   "holds its level with any number of seeds >= 2 (one seed: no seed variance), for 'calibrated' "
                   "as for 'under-covers' and 'over-covers'")


def _min_seeds_ignored(min_seeds) -> None:
    if min_seeds is not None:
        warnings.warn(_MIN_SEEDS_GONE, DeprecationWarning, stacklevel=4)  # the caller of the public function


@renamed_keywords(ci="level")
def signed_coverage(samples_per_seed: Sequence[ArrayLike], truth: ArrayLike, levels: ArrayLike = DEFAULT_LEVELS, *,
                    level: float = 0.95, margin: float | None = None,
                    min_seeds: int | None = None) -> SignedCoverage:
    """Signed coverage of a sampler over S training seeds on shared test events:

        e_i = mean_l ( mean_j 1[|2 PIT_ij - 1| <= a_l] - p_m(a_l) ),   D = mean over events (and seeds) of e_i,

    with p_m(a) of :func:`exact_coverage`, and its word by the one decision rule of
    :mod:`~posteval.metrics.verdicts` on the interval I of D (a single claim, its own family):

        p_w = word_pvalues(I, direction=0, margin=margin, signed=True)   ("yes": |D| < margin by two
              one-sided tests, "below": D < 0, "above": D > 0),
        word = decide(holm_words([p_w])[0], level=level)  ->  "calibrated", "under-covers",
              "over-covers" (:data:`~posteval.metrics.claims.CALIBRATION_WORDS`) or "not resolved".

    Parameters
    ----------
    samples_per_seed : S arrays of draws (n, m) or (n, m, d), one per seed (one for a fixed model);
        m >= :data:`MIN_DRAWS_COVERAGE`, n >= :data:`MIN_EVENTS_COVERAGE`, else ValueError before any
        work (one draw has no interval; with fewer events the normal interval does not hold its level)
    truth : (n,) or (n, d)
    levels, level : nominal levels; interval level
    margin : the margin of "calibrated" in units of D; default :data:`COVERAGE_MARGIN` (0.02)
    min_seeds : deprecated, no effect (a DeprecationWarning): the Student-t quantile over the seeds
        carries the seed variance's uncertainty, so the rule holds its level with any S

    Returns
    -------
    SignedCoverage; ``verdict`` in "calibrated", "under-covers", "over-covers", "not resolved";
    ``reason`` says why a "not resolved" could not be "calibrated" (the interval wider than the margin).

    Reference: probabilistic calibration (uniform PIT, nominal coverage of every central interval),
    Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69, 243; the equivalence verdict as the
    two one-sided tests of Schuirmann (1987), *J. Pharmacokinet. Biopharm.* 15, 657.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=(2000, 2)); truth = mu + rng.normal(size=(2000, 2))
    >>> good = mu[:, None, :] + rng.normal(size=(2000, 50, 2))
    >>> narrow = mu[:, None, :] + 0.5 * rng.normal(size=(2000, 50, 2))
    >>> signed_coverage([good], truth).verdict, signed_coverage([narrow], truth).verdict
    ('calibrated', 'under-covers')
    >>> res = signed_coverage([good[:200]], truth[:200])   # 200 events: the interval is wider than 0.02
    >>> res.verdict, res.reason[:23]
    ('not resolved', 'too few events or draws')
    """
    _min_seeds_ignored(min_seeds)
    shape = np.shape(samples_per_seed[0]) if isinstance(samples_per_seed, Sequence) and len(samples_per_seed) else ()
    if len(shape) >= 2 and (problem := _design_problem(shape[0], shape[1])):
        raise ValueError(problem)  # before any work
    lv = levels_array(levels)
    inside, m = _inside(samples_per_seed, truth, lv)
    return signed_coverage_from_inside(inside, m, lv, level=level, margin=margin)


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


def coverage_deviation_scores(samples_per_seed: Sequence[ArrayLike], truth: ArrayLike,
                              levels: ArrayLike = DEFAULT_LEVELS) -> np.ndarray:
    """The per-event scores e_i of :func:`signed_coverage` as ``(events, seeds)`` (one column per
    seed): their mean is the signed deviation D, and
    :func:`~posteval.metrics.intervals.event_interval` of them is its interval, so that a claims
    table (:class:`~posteval.metrics.intervals.Measurements`) can decide "calibrated".

        e_i = mean_l ( mean_j 1[|2 PIT_ij - 1| <= a_l] - p_m(a_l) )

    Reference: Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69, 243 (calibration as
    nominal coverage); p_m of :func:`exact_coverage` (Talts et al. 2018, Theorem 1).

    Example: draws 0, 1, 2, 3 and truth 1.5 (PIT 0.5, inside the level-0.5 interval; p_4(0.5) = 0.6):

    >>> coverage_deviation_scores([[[0.0, 1.0, 2.0, 3.0]]], [1.5], [0.5]).tolist()
    [[0.4]]
    >>> rng = np.random.default_rng(0)
    >>> coverage_deviation_scores([rng.normal(size=(50, 8))], rng.normal(size=50)).shape
    (50, 1)
    """
    lv = levels_array(levels)
    inside, m = _inside(samples_per_seed, truth, lv)
    return (inside.mean(axis=2) - exact_coverage(m, lv).mean()).T


@renamed_keywords(ci="level")
def signed_coverage_from_inside(inside: ArrayLike, m: int, levels: ArrayLike = DEFAULT_LEVELS, *, level: float = 0.95,
                                margin: float | None = None, min_seeds: int | None = None) -> SignedCoverage:
    """:func:`signed_coverage` from ``inside`` (S, n, L): per seed and event the fraction of the
    dimensions whose central interval at each level holds the truth (e.g. chunk by chunk):
    e_si = mean_l (inside_sil - p_m(a_l)), D = mean_si e_si, its interval I (:func:`event_interval`
    of e as (n, S)) and the word ``decide(holm_words([p_w])[0])`` (Holm over its three words) with
    ``p_w = word_pvalues(I, direction=0, margin=margin, signed=True)``.

    A design that cannot be decided, m < :data:`MIN_DRAWS_COVERAGE` draws or n <
    :data:`MIN_EVENTS_COVERAGE` events, is "not resolved" with the reason (the building block of a
    report keeps going; :func:`signed_coverage` raises ValueError instead). ``margin`` defaults to
    :data:`COVERAGE_MARGIN`; ``min_seeds`` is deprecated and has no effect.

    Reference: as :func:`signed_coverage` (Gneiting, Balabdaoui and Raftery 2007; Schuirmann 1987).

    Example: every interval holds the truth, m = 4 draws, p_4 = (0.2, 0.6) at levels (0.4, 0.5):

    >>> res = signed_coverage_from_inside(np.ones((1, 400, 2)), 4, [0.4, 0.5])
    >>> res.verdict, round(res.deviation, 3), res.margin
    ('over-covers', 0.6, 0.02)
    >>> res = signed_coverage_from_inside(np.ones((1, 400, 2)), 1, [0.4, 0.5])   # one draw: no interval
    >>> res.verdict, res.reason[:50]
    ('not resolved', 'm = 1 draw per event: signed coverage needs m >= 2')
    """
    _min_seeds_ignored(min_seeds)
    lv = levels_array(levels)
    level = level_value(level)
    m = positive_int(m, "m")
    delta = COVERAGE_MARGIN if margin is None else float(margin)
    if not (np.isfinite(delta) and delta > 0):
        raise ValueError(f"margin: expected a finite number > 0 (the margin of 'calibrated', in units of D), got {margin!r}")
    inside = np.asarray(inside, dtype=float)
    if inside.ndim != 3 or inside.shape[2] != lv.size:
        raise ValueError(f"inside: expected (seeds, events, {lv.size} levels), got {inside.shape}")
    s_, n = inside.shape[:2]
    p = exact_coverage(m, lv)
    iv = event_interval((inside.mean(axis=2) - p.mean()).T, level=level)
    per = [event_interval((inside[:, :, k] - p[k]).T, level=level) for k in range(lv.size)]
    word, reason = _calibration_word(iv, delta, level, n, m, s_)
    return SignedCoverage(iv.estimate, iv.lo, iv.hi, np.array([v.estimate for v in per]),
                          np.array([v.lo for v in per]), np.array([v.hi for v in per]), lv, delta, s_, n, m, word,
                          reason)


def _design_problem(n: int, m: int) -> str:
    """Why signed coverage cannot decide a design of n events and m draws per event ("" when it can)."""
    if m < MIN_DRAWS_COVERAGE:
        return (f"m = {m} draw per event: signed coverage needs m >= {MIN_DRAWS_COVERAGE} (one draw has no central "
                f"interval, so an exact sampler covers at no level below 1, every event's deviation is 0 and any "
                f"sampler would look calibrated)")
    if n < MIN_EVENTS_COVERAGE:
        return (f"n = {n} test events: signed coverage needs n >= {MIN_EVENTS_COVERAGE} (its interval is the normal "
                f"interval of a mean of scores bounded in [-1, 1]; with fewer events it does not hold its level, and "
                f"an exact sampler's scores can all be equal, a zero-width interval)")
    return ""


def _calibration_word(iv, delta: float, level: float, n: int, m: int, s_: int) -> tuple[str, str]:
    """(word, reason) of the interval ``iv`` of D by the one rule; "not resolved" with the design's
    problem as the reason for a design that cannot be decided."""
    problem = _design_problem(n, m)
    if problem:
        return NOT_RESOLVED, problem
    pw = word_pvalues(iv, direction=0, margin=delta, signed=True)
    word = CALIBRATION_WORDS.get(decide(holm_words([pw])[0], level=level), NOT_RESOLVED)
    half = (iv.hi - iv.lo) / 2
    if word == NOT_RESOLVED and half >= delta:
        return word, (f"too few events or draws: the interval's half-width {half:.3g} exceeds the margin {delta:.3g} "
                      f"(n = {n} events, m = {m} draws, S = {s_} seeds)")
    return word, ""


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
        """"miscalibrated" when the interval's lower end lies above the noise floor (an exact sampler's
        95 % quantile: the test of exactness rejects), else "not rejected". A test that does not reject
        is not evidence of calibration (that needs an interval inside a margin, as "calibrated" of
        :func:`signed_coverage`), so TARP never says "calibrated"."""
        return against_noise_floor(self.error_lo, self.noise_floor)


@renamed_keywords(repeats="n_resamples")
def tarp_noise_floor(n_events: int, m: int, alpha: ArrayLike, *, n_resamples: int = 400, quantile: float = 0.95,
                     seed: int = 0) -> float:
    """``quantile`` of the TARP error of an exact sampler: its credibility is k / m with the
    truth's rank k uniform on 0..m (the m + 1 distances to the reference are exchangeable), so

        floor = Q_quantile( max_alpha |(1/n) sum_k c_k 1[k/m < alpha] - alpha| ),  (c_0..c_m) ~ Multinomial(n, 1/(m+1)).

    Reference: the TARP expected coverage of Lemos, Coogan, Hezaveh and Perreault-Levasseur (2023),
    "Sampling-based accuracy testing of posterior estimators for general inference", ICML (PMLR 202);
    the uniform rank, Talts et al. (2018), arXiv:1804.06788, Theorem 1.

    Example
    -------
    >>> round(tarp_noise_floor(500, 50, np.linspace(0, 1, 21)), 3)
    0.058
    """
    n, m = positive_int(n_events, "n_events"), positive_int(m, "m")
    grid = np.asarray(alpha, dtype=float)
    rng = np.random.default_rng(seed_value(seed))
    counts = rng.multinomial(n, np.full(m + 1, 1.0 / (m + 1)), size=n_resamples)  # histogram of k
    below = (np.arange(m + 1)[:, None] / m < grid[None, :]).astype(float)  # (m + 1, grid): k / m < alpha
    ecp = counts @ below / n
    return float(np.quantile(np.abs(ecp - grid).max(axis=1), quantile))


@renamed_keywords(n_boot="n_resamples", ci="level")
def tarp_coverage(samples: ArrayLike, truth: ArrayLike, *, references: ArrayLike | None = None,
                  alpha: ArrayLike | None = None, standardise: bool = True, n_resamples: int = 1000, level: float = 0.95,
                  seed: int = 0) -> TarpCoverage:
    """TARP expected coverage of draws ``samples`` (n, m, d) against ``truth`` (n, d):

        f_i = mean_j 1[||x_ij - r_i|| < ||y_i - r_i||],   ECP(alpha) = mean_i 1[f_i < alpha],

    and the TARP error max_alpha |ECP(alpha) - alpha| (ECP(alpha) = alpha for a calibrated posterior).

    ``references`` (n, d) in the standardised coordinates, or None for points drawn uniformly in
    the box of the standardised truths (seeded); ``alpha`` the credibility grid (default 0, 0.05,
    .., 1); ``standardise``: divide each dimension, samples and truth alike, by the truths'
    standard deviation after subtracting their mean (so that no dimension dominates the
    distance). The band and the error's interval come from ``n_resamples`` bootstrap resamples of the
    events. Given the same (standardised) reference points and the tarp package's alpha grid,
    ECP equals ``tarp.get_tarp_coverage(..., references=refs)``'s ecp at every alpha < 1. At
    alpha = 1 they differ: ECP(1) here is mean_i 1[f_i < 1] (strict, as at every alpha; an event
    whose draws all lie closer to its reference than the truth has f_i = 1 and is not counted, so an
    exact sampler's ECP(1) is about m / (m + 1)), while the tarp package's histogram closes its last
    bin and gives ECP(1) = 1 always. The noise floor is simulated with the same strict rule
    (:func:`tarp_indicators`).

    Reference: Lemos, Coogan, Hezaveh and Perreault-Levasseur (2023), ICML (PMLR 202), the TARP expected
    coverage probability; the bootstrap band, Efron and Tibshirani (1993), *An Introduction to the
    Bootstrap*, ch. 13 (percentile intervals).

    Example: a posterior of the right width is not rejected, one half as wide is miscalibrated.

    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=(500, 2)); truth = mu + rng.normal(size=(500, 2))
    >>> good = mu[:, None, :] + rng.normal(size=(500, 50, 2))
    >>> narrow = mu[:, None, :] + 0.5 * rng.normal(size=(500, 50, 2))
    >>> tarp_coverage(good, truth, n_resamples=200).verdict, tarp_coverage(narrow, truth, n_resamples=200).verdict
    ('not rejected', 'miscalibrated')
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
    return tarp_summary(f, s.shape[1], alpha=alpha, n_resamples=n_resamples, level=level, seed=seed)


def tarp_frame(truth: ArrayLike, *, standardise: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(centre, scale) of the standardised coordinates: the truths' mean and sd per dimension,
    centre_k = mean_i y_ik, scale_k = sqrt(mean_i (y_ik - centre_k)^2) (1 where that is 0); z = (x - centre) / scale.
    ``standardise=False`` gives (0, 1).

    Reference: the frame in which the distances of TARP (Lemos et al. 2023, ICML) are measured here, so
    that no dimension dominates them.

    Example
    -------
    >>> [a.tolist() for a in tarp_frame(np.array([[0.0, 1.0], [2.0, 5.0]]))]
    [[1.0, 3.0], [1.0, 2.0]]
    """
    t = np.asarray(truth, dtype=float)
    if not standardise:
        return np.zeros(t.shape[1]), np.ones(t.shape[1])
    k = power_of_two_scale(t)  # exact: keeps the squares of values near 1e200 (or 1e-300) in range
    sd = k * (t / k).std(axis=0)
    return k * (t / k).mean(axis=0), np.where(sd > 0, sd, 1.0)


def tarp_references(truth: ArrayLike, centre: ArrayLike, scale: ArrayLike, *, seed: int = 0) -> np.ndarray:
    """One reference point per event, uniform in the box of the standardised truths (seeded):
    r_ik ~ Uniform(min_i z_ik, max_i z_ik) with z = (y - centre) / scale; shape (n, d).

    Reference: Lemos et al. (2023), ICML, TARP (a reference point drawn at random for each event).

    Example
    -------
    >>> truth = np.array([[0.0, 1.0], [2.0, 5.0], [1.0, 3.0]])
    >>> refs = tarp_references(truth, np.zeros(2), np.ones(2))
    >>> refs.shape, bool(((refs >= [0.0, 1.0]) & (refs <= [2.0, 5.0])).all())
    ((3, 2), True)
    """
    z = (np.asarray(truth, dtype=float) - centre) / scale
    lo, hi = z.min(axis=0), z.max(axis=0)
    return lo + (hi - lo) * np.random.default_rng(seed_value(seed)).random(z.shape)


def tarp_credibility(samples: np.ndarray, truth: np.ndarray, references: np.ndarray, centre: ArrayLike,
                     scale: ArrayLike) -> np.ndarray:
    """f_i = mean_j 1[||x_ij - r_i|| < ||y_i - r_i||] in standardised coordinates (n, m, d), (n, d); shape (n,).

    Reference: Lemos et al. (2023), ICML, TARP (the credibility level of the ball about r_i that reaches
    the truth).

    Example: draws at distances 0, 3, 4 and 1.41 from the reference, the truth at distance 2:

    >>> x = np.array([[[0.0, 0.0], [3.0, 0.0], [0.0, 4.0], [1.0, 1.0]]])
    >>> tarp_credibility(x, np.array([[2.0, 0.0]]), np.zeros((1, 2)), np.zeros(2), np.ones(2)).tolist()
    [0.5]
    """
    xs, ts = (samples - centre) / scale, (truth - centre) / scale
    d_samples = np.linalg.norm(xs - references[:, None, :], axis=2)
    d_truth = np.linalg.norm(ts - references, axis=1)
    return np.mean(d_samples < d_truth[:, None], axis=1)


TARP_ALPHA = np.linspace(0.0, 1.0, 21)


def tarp_indicators(credibility: ArrayLike, alpha: ArrayLike | None = None) -> np.ndarray:
    """(n, grid) indicators 1[f_i < alpha]: their column means are the expected coverage,
    ECP(alpha) = mean_i 1[f_i < alpha] (default grid 0, 0.05, .., 1).

    Reference: Lemos et al. (2023), ICML, TARP expected coverage probability.

    Example
    -------
    >>> ind = tarp_indicators([0.1, 0.5, 0.9], [0.25, 0.5, 0.75])
    >>> ind.tolist()
    [[1.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    >>> ind.mean(axis=0).round(3).tolist()
    [0.333, 0.333, 0.667]
    >>> tarp_indicators([0.5, 1.0], [1.0]).tolist()  # strict at alpha = 1 too (the tarp package counts f = 1 there)
    [[1.0], [0.0]]
    """
    grid = TARP_ALPHA if alpha is None else np.asarray(alpha, dtype=float)
    return (np.asarray(credibility, dtype=float)[:, None] < grid[None, :]).astype(float)


@renamed_keywords(n_boot="n_resamples", ci="level")
def tarp_summary(credibility: ArrayLike, m: int, *, alpha: ArrayLike | None = None, n_resamples: int = 1000,
                 level: float = 0.95, seed: int = 0, replicates: np.ndarray | None = None) -> TarpCoverage:
    """The :class:`TarpCoverage` of per-event credibilities (of samplers with m draws);
    ``replicates``: bootstrap means of :func:`tarp_indicators` already drawn (e.g. with the same
    resampled events as other statistics), else drawn here. ECP(alpha) = mean_i 1[f_i < alpha], error
    max_alpha |ECP(alpha) - alpha|, compared with :func:`tarp_noise_floor`.

    Reference: Lemos et al. (2023), ICML, TARP; percentile intervals of the bootstrap, Efron and
    Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13.

    Example: an exact sampler's credibilities k / 50 (k uniform on 0..50) are not rejected, their square roots are:

    >>> f = np.tile(np.arange(51) / 50, 20)
    >>> tarp_summary(f, 50, n_resamples=200).verdict, tarp_summary(np.sqrt(f), 50, n_resamples=200).verdict
    ('not rejected', 'miscalibrated')
    """
    f = np.asarray(credibility, dtype=float)
    level = level_value(level)
    grid = TARP_ALPHA if alpha is None else np.asarray(alpha, dtype=float)
    below = tarp_indicators(f, grid)
    reps = bootstrap_means(below, n_resamples=n_resamples, seed=seed) if replicates is None else replicates
    band_lo, band_hi = percentile_bounds(reps, level)
    error, error_reps = _tarp_error(below, reps, grid)
    e_lo, e_hi = percentile_bounds(error_reps, level)
    floor = tarp_noise_floor(len(f), m, grid, seed=seed)
    return TarpCoverage(f, grid, below.mean(axis=0), band_lo, band_hi, error, float(e_lo), float(e_hi), floor)


def _tarp_error(below: np.ndarray, reps: np.ndarray, grid: np.ndarray) -> tuple[float, np.ndarray]:
    """(max_alpha |ECP(alpha) - alpha|, the same on each bootstrap replicate of ECP (B, grid))."""
    return float(np.abs(below.mean(axis=0) - grid).max()), np.abs(reps - grid).max(axis=1)


def tarp_error_replicates(samples: ArrayLike, truth: ArrayLike, *, alpha: ArrayLike | None = None,
                          standardise: bool = True, n_resamples: int = 1000, seed: int = 0) -> tuple[float, np.ndarray]:
    """The TARP error of draws ``samples`` (n, m, d) against ``truth`` (n, d) and its value on
    ``n_resamples`` bootstrap resamples of the events, ``(value, replicates (n_resamples,))``:

        E = max_alpha |ECP(alpha) - alpha|,   ECP(alpha) = mean_i 1[f_i < alpha],
        E*_b = max_alpha |ECP*_b(alpha) - alpha|,

    with the credibilities f_i of :func:`tarp_credibility` in the frame of :func:`tarp_frame` and
    the reference points of :func:`tarp_references` (seeded by ``seed``), and ECP*_b the ECP on
    the events of resample b (:func:`~posteval.metrics.uncertainty.bootstrap_means` with the same
    ``seed``, so that the resamples are those of every other statistic with that seed). The pair is
    what :func:`~posteval.metrics.intervals.replicate_interval` and
    :class:`~posteval.metrics.intervals.Measurements` take per seed; :func:`tarp_coverage` gives
    the curve, the percentile band and the verdict.

    Reference: Lemos, Coogan, Hezaveh and Perreault-Levasseur (2023), "Sampling-based accuracy testing
    of posterior estimators for general inference", ICML (PMLR 202); bootstrap replicates, Efron and
    Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6.

    Example: a posterior half as wide as it should be has a larger error than one of the right width.

    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=(500, 2)); truth = mu + rng.normal(size=(500, 2))
    >>> good, reps = tarp_error_replicates(mu[:, None, :] + rng.normal(size=(500, 50, 2)), truth, n_resamples=200)
    >>> narrow, _ = tarp_error_replicates(mu[:, None, :] + 0.5 * rng.normal(size=(500, 50, 2)), truth, n_resamples=200)
    >>> reps.shape, bool(good < 0.1 < narrow)
    ((200,), True)
    """
    s, t, _ = samples_truth(samples, truth)
    grid = TARP_ALPHA if alpha is None else finite_array(alpha, "alpha", (1,))
    n_resamples, seed = positive_int(n_resamples, "n_resamples"), seed_value(seed)
    centre, scale = tarp_frame(t, standardise=standardise)
    refs = tarp_references(t, centre, scale, seed=seed)
    below = tarp_indicators(tarp_credibility(s, t, refs, centre, scale), grid)
    return _tarp_error(below, bootstrap_means(below, n_resamples=n_resamples, seed=seed), grid)


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


def _ecdf_band(n: int, m: int, level: float, rng, n_resamples: int = 1000) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Simultaneous band of the ECDF of n uniform ranks on 0..m at the grid k/(m+1), k = 1..m,
    by simulation (Säilynoja et al. 2022): returns (grid, lo, hi, simulated minima of the
    pointwise two-sided binomial tail probabilities)."""

    grid = np.arange(1, m + 1) / (m + 1)
    sim = rng.integers(0, m + 1, size=(n_resamples, n))
    counts = np.stack([(sim < k).sum(axis=1) for k in range(1, m + 1)], axis=1)  # (n_resamples, m)
    minima = binomial_tail_pvalue(counts, n, grid).min(axis=1)
    gamma = float(np.quantile(minima, 1 - level))
    lo, hi = binomial_band(n, grid, gamma)
    return grid, lo, hi, minima


@renamed_keywords(ci="level", sims="n_resamples")
def rank_histogram(samples: ArrayLike, truth: ArrayLike, *, dim_names: Sequence[str] | None = None, level: float = 0.95,
                   seed: int = 0, n_resamples: int = 1000) -> RankHistogram:
    """SBC-style ranks of the truth among the draws (n, m, d), per dimension and for the energy
    pre-rank over all dimensions, with the simultaneous ECDF test of their uniformity.

    Per dimension r_i = #{j : x_ij < y_i} + U, U uniform on 0..#{j : x_ij = y_i} (ties broken at random);
    for d > 1 also the rank of rho(y_i) among rho(x_i1)..rho(x_im), rho(z) = sum_w ||z - w|| over the
    augmented ensemble {y_i, x_i1..x_im} (scaled per dimension). An exact sampler's ranks are uniform on 0..m;
    the p-value is (1 + #{simulations whose smallest pointwise binomial tail probability of the ECDF is at
    most the observed one}) / (n_resamples + 1) (:func:`~posteval.metrics.intervals.monte_carlo_pvalue`).

    Reference: Talts et al. (2018), arXiv:1804.06788, Theorem 1 (uniform ranks); Hamill (2001),
    *Mon. Wea. Rev.* 129, 550 (rank histograms); Säilynoja, Bürkner and Vehtari (2022), *Stat. Comput.* 32,
    32 (simultaneous ECDF bands); pre-ranks of multivariate ensembles, Thorarinsdottir, Scheuerer and
    Heinz (2016), *J. Comput. Graph. Stat.* 25, 105.

    Example: draws half as wide as the posterior are rejected in every projection (p = 1 / (n_resamples + 1)):

    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=(200, 2)); truth = mu + rng.normal(size=(200, 2))
    >>> rh = rank_histogram(mu[:, None, :] + 0.5 * rng.normal(size=(200, 50, 2)), truth, n_resamples=200)
    >>> rh.ranks.columns.tolist(), rh.ranks.shape
    (['dim0', 'dim1', 'energy'], (200, 3))
    >>> {k: round(v, 3) for k, v in rh.pvalue.items()}
    {'dim0': 0.005, 'dim1': 0.005, 'energy': 0.005}
    """
    s, t, _ = samples_truth(samples, truth)
    level = level_value(level)
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
    grid, lo, hi, minima = _ecdf_band(n, m, level, rng, n_resamples)

    pvalues = {}
    for name, r in cols.items():
        counts = np.array([(r < k).sum() for k in range(1, m + 1)])
        pvalues[name] = monte_carlo_pvalue(np.sum(minima <= binomial_tail_pvalue(counts, n, grid).min()), len(minima))
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


@renamed_keywords(n_boot="n_resamples", ci="level")
def spread_skill(samples: ArrayLike, truth: ArrayLike, *, bins: int = 10, n_resamples: int = 1000, level: float = 0.95,
                 seed: int = 0) -> SpreadSkill:
    """Spread-skill ratio SSR = sqrt((1 + 1/m) mean s^2 / mean (xbar - y)^2) over all dimensions
    (1 for a calibrated ensemble, < 1 under-dispersed), its bootstrap interval over events, and
    the same two quantities in ``bins`` quantile bins of the spread.

    Reference: Fortin et al. (2014), "Why should ensemble spread match the RMSE of the ensemble mean?",
    *J. Hydrometeor.* 15, 1708 (the factor (1 + 1/m) for m members); percentile intervals, Efron and
    Tibshirani (1993), ch. 13.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=(500, 2)); truth = mu + rng.normal(size=(500, 2))
    >>> round(spread_skill(mu[:, None, :] + rng.normal(size=(500, 50, 2)), truth, n_resamples=200).ratio, 2)
    0.97
    >>> round(spread_skill(mu[:, None, :] + 0.5 * rng.normal(size=(500, 50, 2)), truth, n_resamples=200).ratio, 2)
    0.49
    """
    s, t, _ = samples_truth(samples, truth)
    var, err2 = spread_terms(order_free_draws(s), t)  # sums in an order that is not the input's
    return spread_summary(var, err2, bins=bins, n_resamples=n_resamples, level=level, seed=seed)


def spread_terms(samples: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per event: (1 + 1/m) s^2 (ensemble variance, ddof 1, summed over dimensions) and the
    squared error of the ensemble mean, for draws (n, m, d) and truth (n, d):
    ((1 + 1/m) sum_k sum_j (x_ijk - xbar_ik)^2 / (m - 1), sum_k (xbar_ik - y_ik)^2), each (n,).

    Reference: Fortin et al. (2014), *J. Hydrometeor.* 15, 1708 (for a calibrated ensemble the two have
    the same expectation).

    Example: draws 0 and 2, truth 2: s^2 = 2, (1 + 1/2) s^2 = 3, (xbar - y)^2 = 1.

    >>> [a.tolist() for a in spread_terms(np.array([[[0.0], [2.0]]]), np.array([[2.0]]))]
    [[3.0], [1.0]]
    """
    m = samples.shape[1]
    if m < 2:
        raise ValueError(f"samples: spread needs m >= 2 draws per event, got shape {samples.shape}")
    return samples.var(axis=1, ddof=1).sum(axis=1) * (1 + 1 / m), ((samples.mean(axis=1) - truth) ** 2).sum(axis=1)


@renamed_keywords(n_boot="n_resamples", ci="level")
def spread_summary(var: ArrayLike, err2: ArrayLike, *, bins: int = 10, n_resamples: int = 1000, level: float = 0.95,
                   seed: int = 0, replicates: np.ndarray | None = None) -> SpreadSkill:
    """The :class:`SpreadSkill` of per-event :func:`spread_terms`; ``replicates``: bootstrap means
    (n_resamples, 2) of the two terms already drawn, else drawn here. SSR = sqrt(mean_i var_i / mean_i err2_i);
    per quantile bin of ``var``: spread sqrt(mean var), rmse sqrt(mean err2) and the number of events.

    Reference: Fortin et al. (2014), *J. Hydrometeor.* 15, 1708; Efron and Tibshirani (1993), ch. 13.

    Example
    -------
    >>> res = spread_summary([1.0, 1.0, 4.0, 4.0], [1.0, 1.0, 4.0, 4.0], bins=2, n_resamples=50)
    >>> res.ratio, res.bins.to_dict("list")
    (1.0, {'spread': [1.0, 2.0], 'rmse': [1.0, 2.0], 'events': [2, 2]})
    """
    var, err2 = np.asarray(var, dtype=float), np.asarray(err2, dtype=float)
    k = positive_int(bins, "bins")
    ratio, ratio_reps = _spread_ratio(var, err2, n_resamples, seed, replicates)
    lo, hi = percentile_bounds(ratio_reps, level_value(level))
    edges = np.quantile(var, np.linspace(0, 1, k + 1))
    which = np.clip(np.searchsorted(edges, var, side="right") - 1, 0, k - 1)
    rows = [{"spread": float(np.sqrt(var[which == b].mean())), "rmse": float(np.sqrt(err2[which == b].mean())),
             "events": int((which == b).sum())} for b in range(k) if np.any(which == b)]
    return SpreadSkill(ratio, float(lo), float(hi), pd.DataFrame(rows))


def _spread_ratio(var: np.ndarray, err2: np.ndarray, n_resamples: int, seed: int,
                  replicates: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """(SSR = sqrt(mean var / mean err2), SSR on each bootstrap resample of the events); ``replicates``:
    the bootstrap means (B, 2) of the two terms already drawn."""
    if replicates is None:
        replicates = bootstrap_means(np.stack([var, err2], axis=1), n_resamples=n_resamples, seed=seed)
    return float(np.sqrt(var.mean() / err2.mean())), np.sqrt(replicates[:, 0] / replicates[:, 1])


def spread_skill_replicates(samples: ArrayLike, truth: ArrayLike, *, n_resamples: int = 1000,
                            seed: int = 0) -> tuple[float, np.ndarray]:
    """The spread-skill ratio of draws ``samples`` (n, m, d) against ``truth`` (n, d) and its value
    on ``n_resamples`` bootstrap resamples of the events, ``(value, replicates (n_resamples,))``:

        SSR = sqrt( mean_i v_i / mean_i e_i ),   SSR*_b = sqrt( mean*_b v / mean*_b e ),

    with v_i = (1 + 1/m) s_i^2 and e_i = (xbar_i - y_i)^2 of :func:`spread_terms` (summed over the
    dimensions) and mean*_b the means on the events of resample b
    (:func:`~posteval.metrics.uncertainty.bootstrap_means` with ``seed``, the resamples of every
    other statistic with that seed). The pair is what
    :func:`~posteval.metrics.intervals.replicate_interval` and
    :class:`~posteval.metrics.intervals.Measurements` take per seed; :func:`spread_skill` gives the
    percentile interval and the binned curve.

    Reference: Fortin et al. (2014), "Why should ensemble spread match the RMSE of the ensemble mean?",
    *J. Hydrometeor.* 15, 1708 (the factor (1 + 1/m)); bootstrap replicates, Efron and Tibshirani
    (1993), *An Introduction to the Bootstrap*, ch. 6.

    Example: an ensemble of the right width has SSR near 1, one half as wide near 0.5.

    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=(500, 2)); truth = mu + rng.normal(size=(500, 2))
    >>> ratio, reps = spread_skill_replicates(mu[:, None, :] + rng.normal(size=(500, 50, 2)), truth, n_resamples=200)
    >>> round(ratio, 2), reps.shape
    (0.97, (200,))
    >>> round(spread_skill_replicates(mu[:, None, :] + 0.5 * rng.normal(size=(500, 50, 2)), truth)[0], 2)
    0.49
    """
    s, t, _ = samples_truth(samples, truth)
    n_resamples, seed = positive_int(n_resamples, "n_resamples"), seed_value(seed)
    var, err2 = spread_terms(order_free_draws(s), t)  # sums in an order that is not the input's
    return _spread_ratio(var, err2, n_resamples, seed)
