"""Spectrum fidelity: a binned two-sample chi-square between reconstructed and true values,
with an asymptotic p-value and an exact per-event exchange p-value."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from .._deprecation import deprecated_attribute, renamed_keywords
from ._validation import finite_array, positive_int, seed_value
from .intervals import chi2_pvalue, monte_carlo_pvalue
from .uncertainty import bootstrap_weights


#: the most bins of an integer ``bins`` (more would be a typo, and would allocate their edges first)
MAX_BINS = 10**6


def _edges(p: np.ndarray, t: np.ndarray, bins, value_range) -> np.ndarray:
    """Bin edges: explicit, equal-width on `value_range`, or quantiles of the pooled sample."""
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if not 2 <= bins <= MAX_BINS:
            raise ValueError(f"bins: need between 2 and {MAX_BINS} bins, got {bins}")
        if value_range is not None:
            try:
                if any(isinstance(v, (bool, np.bool_, str)) for v in value_range):
                    raise TypeError
                lo, hi = (float(v) for v in value_range)
            except (TypeError, ValueError):
                raise ValueError(f"value_range: expected (lo, hi), two real numbers, got {value_range!r}") from None
            if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
                raise ValueError(f"value_range: need finite lo < hi, got {value_range}")
            return np.linspace(lo, hi, int(bins) + 1)
        if np.ptp(t) == 0:
            raise ValueError(
                f"truth: constant (all {t[0]:g}), quantile bins are degenerate; pass explicit bin edges"
            )
        edges = np.unique(np.quantile(np.concatenate([p, t]), np.linspace(0.0, 1.0, int(bins) + 1)))
        if edges.size < 3:
            raise ValueError("samples and truth: fewer than two distinct quantile bins; pass explicit bin edges")
        return edges
    if value_range is not None:
        raise ValueError("value_range: only meaningful with an integer number of bins")
    edges = finite_array(bins, "bins", (1,))
    if edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError("bins: edges must be strictly increasing with at least two entries")
    return edges


def _bin_index(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value: 0 = underflow (< edges[0]), 1..k = the k bins (the last one closed on the
    right, as numpy.histogram), k + 1 = overflow (> edges[-1])."""
    idx = np.searchsorted(edges, x, side="right")
    idx[x == edges[-1]] = edges.size - 1
    return idx


def _binned(samples, truth, bins, value_range):
    p = finite_array(samples, "samples", (1,))
    t = finite_array(truth, "truth", (1,))
    edges = _edges(p, t, bins, value_range)
    bp, bt = _bin_index(p, edges), _bin_index(t, edges)
    inside = ((bp > 0) & (bp < edges.size)).any() or ((bt > 0) & (bt < edges.size)).any()
    if not inside:
        raise ValueError(
            f"bins/value_range: no samples or truth inside [{edges[0]:g}, {edges[-1]:g}]"
        )
    return p, t, edges, bp, bt


def _chi2_from_counts(hp: np.ndarray, ht: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sample homogeneity chi-square of count rows (..., k) and its ndf (non-empty bins - 1)."""
    n_p = hp.sum(axis=-1, keepdims=True).astype(float)
    n_t = ht.sum(axis=-1, keepdims=True).astype(float)
    tot = hp + ht
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(tot > 0, (n_t * hp - n_p * ht) ** 2 / np.where(tot > 0, tot, 1.0), 0.0)
    chi2 = terms.sum(axis=-1) / (n_p[..., 0] * n_t[..., 0])
    return chi2, np.count_nonzero(tot, axis=-1) - 1


@renamed_keywords(pred_values="samples", true_values="truth")
def chi2_spectrum(samples: ArrayLike, truth: ArrayLike, bins: int | ArrayLike = 20,
                  value_range: tuple[float, float] | None = None) -> tuple[float, int]:
    """Binned two-sample chi-square between a reconstructed and the true marginal distribution.

    Parameters
    ----------
    samples, truth : 1-D arrays: the model's draws (one per event, or pooled) and the truths
        Reconstructed and true values of one quantity; the sample sizes N_P and N_T may differ.
    bins : int or 1-D array of edges
        An int means that many quantile bins of the pooled sample (pred and truth together, so
        the binning is symmetric in the two); an array gives the edges directly.
    value_range : (lo, hi), optional
        With an int `bins`, equal-width bins on this range instead of quantile bins.

    Values outside explicit edges or `value_range` are counted in an underflow and an overflow
    bin (never dropped). Raises ValueError for degenerate binning: a constant truth with
    quantile bins, no value inside the range, fewer than two non-empty bins.

    Returns
    -------
    (chi2, ndf)
        chi2 = 1/(N_P N_T) sum_b (N_T P_b - N_P T_b)^2 / (P_b + T_b), the homogeneity test of the
        2 x k table (``scipy.stats.chi2_contingency`` without continuity correction, ROOT
        ``TH1::Chi2Test`` "UU"; for N_P = N_T it is sum_b (P_b - T_b)^2 / (P_b + T_b)), summed over
        bins non-empty in either sample; ndf = (number of those bins) - 1. chi2 ~ chi-square(ndf)
        for *independent* samples of one distribution; for reconstructions of the same events see
        :func:`spectrum_test`.

    Reference: Pearson (1900), *Phil. Mag.* 50, the homogeneity form of the 2 x k table; Gagunashvili (2010),
    *Nucl. Instrum. Meth. A* 614, eq. 1 (unweighted histograms).

    Example: three bins (below 0.5, 0.5 to 1.5, above 1.5) holding (2, 2, 2) and (1, 2, 3) events:

    >>> chi2_spectrum([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 2, 2], bins=np.array([0.5, 1.5]))
    (0.5333333333333333, 2)
    """
    stat = spectrum_test(samples, truth, bins=bins, value_range=value_range, n_resamples=0)
    return stat.chi2, stat.ndf


@dataclass(frozen=True)
class SpectrumTest:
    """Result of :func:`spectrum_test`."""

    chi2: float
    ndf: int
    pvalue: float
    pvalue_exchange: float
    n_resamples: int

    n_perm = deprecated_attribute("n_resamples", "n_perm")  # the field's name before 0.3.0

    @property
    def chi2_ndf(self) -> float:
        return self.chi2 / self.ndf


@renamed_keywords(pred_values="samples", true_values="truth", n_perm="n_resamples")
def spectrum_test(samples: ArrayLike, truth: ArrayLike, *, bins: int | ArrayLike = 20,
                  value_range: tuple[float, float] | None = None, n_resamples: int = 1000,
                  seed: int = 0) -> SpectrumTest:
    """Two-sample test of a reconstructed spectrum against the true one.

    Parameters
    ----------
    samples, truth : 1-D arrays, the model's draws and the truths (same length, one draw per event, when
        ``n_resamples > 0``)
        For a sampler pass ONE draw per event (e.g. the first sample); the exchange p-value is
        exact only then.
    bins, value_range : as :func:`chi2_spectrum` (pooled quantile bins are invariant under the
        exchange, so the permutation distribution is exact with them too).
    n_resamples : random exchanges for ``pvalue_exchange`` (0 skips it: NaN)
    seed : seed of the exchanges

    Returns
    -------
    SpectrumTest with
        ``chi2``, ``ndf``: as :func:`chi2_spectrum`;
        ``pvalue``: chi-square(ndf) survival at chi2 (:func:`~posteval.metrics.intervals.chi2_pvalue`), valid for independent samples (for
        histograms of the same events it is conservative: they fluctuate together);
        ``pvalue_exchange``: (1 + #{chi2* >= chi2}) / (1 + n_resamples)
        (:func:`~posteval.metrics.intervals.monte_carlo_pvalue`), where chi2* is recomputed after
        swapping truth and prediction within each event independently with probability 1/2.
        When the prediction is a draw from the posterior given the event's observation, truth and
        draw are exchangeable and this p-value is exact (uniform under that null).

    Reference: the statistic of :func:`chi2_spectrum`; the exchange p-value is a Monte Carlo permutation
    test (Phipson and Smyth 2010, *Stat. Appl. Genet. Mol. Biol.* 9, the (1 + b) / (1 + m) form).

    Example: a spectrum 1.5 times too wide is rejected; an independent draw of the same law is not.

    >>> rng = np.random.default_rng(0)
    >>> truth, wide, same = rng.normal(size=2000), 1.5 * rng.normal(size=2000), rng.normal(size=2000)
    >>> spectrum_test(wide, truth, n_resamples=200).pvalue_exchange < 0.05
    True
    >>> spectrum_test(same, truth, n_resamples=200).pvalue_exchange > 0.05
    True
    """
    n_resamples = positive_int(n_resamples, "n_resamples", minimum=0)
    seed = seed_value(seed)
    p, t, edges, bp, bt = _binned(samples, truth, bins, value_range)
    k = edges.size + 1  # underflow, k - 2 bins, overflow
    hp, ht = np.bincount(bp, minlength=k), np.bincount(bt, minlength=k)
    chi2, ndf = _chi2_from_counts(hp, ht)
    if ndf < 1:
        raise ValueError("samples and truth: fewer than two non-empty bins, no spectrum to compare")
    pvalue = chi2_pvalue(chi2, ndf)
    p_exchange = float("nan")
    if n_resamples > 0:
        if p.size != t.size:
            raise ValueError(
                f"samples and truth: the exchange test needs one prediction per event, got {p.size} vs {t.size}"
            )
        p_exchange = _exchange_pvalue(bp, bt, hp, ht, float(chi2), k, n_resamples, seed)
    return SpectrumTest(float(chi2), int(ndf), pvalue, p_exchange, n_resamples)


def _exchange_pvalue(bp, bt, hp, ht, chi2, k, n_resamples, seed, chunk: int = 64) -> float:
    """Per-event random swaps of (pred, truth) bins; only events in different bins matter."""
    rng = np.random.default_rng(seed)
    differ = bp != bt
    fp, ft = bp[differ], bt[differ]
    exceed = 0
    for start in range(0, n_resamples, chunk):
        r = min(chunk, n_resamples - start)
        swap = rng.random((r, fp.size)) < 0.5
        rows = np.arange(r)[:, None] * k
        # swapping moves one count from fp to ft in the prediction histogram (and back in the truth's)
        moved_from = np.bincount((rows + fp[None, :])[swap], minlength=r * k).reshape(r, k)
        moved_to = np.bincount((rows + ft[None, :])[swap], minlength=r * k).reshape(r, k)
        hp_star = hp[None, :] - moved_from + moved_to
        ht_star = ht[None, :] + moved_from - moved_to
        stat, _ = _chi2_from_counts(hp_star, ht_star)
        exceed += int(np.count_nonzero(stat >= chi2 * (1 - 1e-12)))
    return monte_carlo_pvalue(exceed, n_resamples)


@renamed_keywords(pred_values="samples", true_values="truth", n_boot="n_resamples")
def chi2_spectrum_replicates(samples: ArrayLike, truth: ArrayLike, *, bins: int | ArrayLike = 20,
                             value_range: tuple[float, float] | None = None, n_resamples: int = 1000,
                             seed: int = 0) -> np.ndarray:
    """chi2/ndf of the spectrum on ``n_resamples`` bootstrap resamples of the events (pairs kept).

    The bins are those of the full sample (as :func:`chi2_spectrum` builds them) and stay fixed;
    the resamples are those of :func:`~posteval.metrics.uncertainty.bootstrap_weights` with the same
    ``seed``, hence paired with :func:`~posteval.metrics.uncertainty.bootstrap_means` and
    ``protocol_report(..., level=, seed=)`` replicates on the same events. For the spread of chi2/ndf
    (e.g. over seeds and events, :func:`~posteval.metrics.intervals.replicate_interval`); a resample
    repeats events, so the replicates lie above chi2/ndf for a good reconstruction: use them for
    the spread, not the centre.

    Returns
    -------
    (n_resamples,) chi2/ndf of each resample

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (the bootstrap estimate
    of a statistic's spread), applied to the statistic of :func:`chi2_spectrum`.

    >>> rng = np.random.default_rng(0)
    >>> reps = chi2_spectrum_replicates(1.5 * rng.normal(size=2000), rng.normal(size=2000), n_resamples=50)
    >>> reps.shape, bool((reps > 1).all())  # a spectrum 1.5 times too wide: chi2/ndf far above 1 in every resample
    ((50,), True)
    """

    p, t, edges, bp, bt = _binned(samples, truth, bins, value_range)
    k = edges.size + 1
    n = p.size
    if t.size != n:
        raise ValueError(f"samples and truth: resampling events needs one prediction per event, got {n} vs {t.size}")
    out = []
    for w in bootstrap_weights(n, n_resamples=n_resamples, seed=seed):
        hp = np.stack([np.bincount(bp, weights=row, minlength=k) for row in w])
        ht = np.stack([np.bincount(bt, weights=row, minlength=k) for row in w])
        chi2, ndf = _chi2_from_counts(hp, ht)
        out.append(chi2 / np.maximum(ndf, 1))
    return np.concatenate(out)
