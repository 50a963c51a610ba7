"""posteval.metrics.spectrum: the binned chi^2 of a spectrum, its degrees of freedom and both p-values."""

import numpy as np
import pytest
from scipy import stats

from posteval import metrics
from posteval.metrics import bootstrap_weights, chi2_spectrum, chi2_spectrum_replicates


def test_chi2_identical_histograms_is_zero(rng):
    v = rng.normal(size=1000)
    chi2, ndf = metrics.chi2_spectrum(v, v, bins=15)
    assert chi2 == 0.0 and ndf == 14


def test_chi2_same_distribution_is_about_one_per_dof(rng):
    vals = [metrics.chi2_spectrum(rng.normal(size=5000), rng.normal(size=5000), bins=20) for _ in range(40)]
    per_dof = np.mean([c / n for c, n in vals])
    assert 0.75 < per_dof < 1.25
    narrow, ndf = metrics.chi2_spectrum(0.5 * rng.normal(size=5000), rng.normal(size=5000), bins=20)
    assert narrow / ndf > 20


def test_chi2_empty_bins_are_skipped():
    chi2, ndf = metrics.chi2_spectrum(np.array([0.5, 0.5, 2.5]), np.array([0.5, 0.5, 2.5]), bins=np.array([0.0, 1.0, 2.0, 3.0]))
    assert ndf == 1 and chi2 == 0.0
    chi2, ndf = metrics.chi2_spectrum(np.array([0.5, 1.5]), np.array([0.5, 0.5]), bins=np.array([0.0, 1.0, 2.0]))
    # bin 1: pred 1 vs true 2 -> (1 - 2)^2 / 3; bin 2: pred 1 vs true 0 -> 1 / 1; ndf = 2 bins - 1
    assert ndf == 1 and chi2 == pytest.approx(1 / 3 + 1)


# ---------------------------------------------------------------------------------------------
# spectrum: statistic, degrees of freedom, both nulls
# ---------------------------------------------------------------------------------------------
def test_chi2_spectrum_is_the_contingency_test_with_under_and_overflow(rng):
    pred, truth = rng.normal(0.1, 1.2, size=700), rng.normal(size=1000)
    edges = np.linspace(-2, 2, 11)
    chi2, ndf = metrics.chi2_spectrum(pred, truth, bins=edges)
    outer = np.concatenate([[-np.inf], edges, [np.inf]])
    table = np.array([np.histogram(pred, outer)[0], np.histogram(truth, outer)[0]])
    ref = stats.chi2_contingency(table, correction=False)
    assert chi2 == pytest.approx(ref.statistic, rel=1e-12) and ndf == ref.dof == 11


def test_out_of_range_predictions_are_counted_not_dropped(rng):
    truth = rng.normal(size=4000)
    good = truth[rng.permutation(4000)]
    moved = good.copy()
    moved[:2000] = 1000.0
    edges = np.linspace(-3, 3, 21)
    chi2_good, _ = metrics.chi2_spectrum(good, truth, bins=edges)
    chi2_moved, ndf = metrics.chi2_spectrum(moved, truth, bins=edges)
    assert chi2_moved > 100 * max(chi2_good, 1.0) and ndf == 21  # 20 bins + overflow (+ underflow) - 1
    chi2_range, _ = metrics.chi2_spectrum(moved, truth, bins=20, value_range=(-3, 3))
    assert chi2_range == pytest.approx(chi2_moved)


def _exact_posterior_draw(rng, n):
    z = rng.normal(size=n)
    x = z + rng.normal(size=n)
    return x / 2 + np.sqrt(0.5) * rng.normal(size=n), z


def test_asymptotic_pvalue_uniform_for_independent_samples(rng):
    p = [metrics.spectrum_test(rng.normal(size=2000), rng.normal(size=1500), bins=10, n_resamples=0).pvalue for _ in range(300)]
    assert stats.kstest(p, "uniform").pvalue > 0.01


def test_exchange_pvalue_uniform_for_exact_posterior_draws_where_asymptotic_is_conservative(rng):
    exchange, asymptotic = [], []
    for r in range(250):
        draw, z = _exact_posterior_draw(rng, 2000)
        t = metrics.spectrum_test(draw, z, bins=10, n_resamples=99, seed=r)
        exchange.append(t.pvalue_exchange)
        asymptotic.append(t.pvalue)
    assert stats.kstest(exchange, "uniform").pvalue > 0.01
    assert stats.kstest(asymptotic, "uniform").pvalue < 0.01 and np.mean(asymptotic) > 0.5


def test_exchange_pvalue_rejects_a_narrow_sampler(rng):
    draw, z = _exact_posterior_draw(rng, 5000)
    test = metrics.spectrum_test(0.9 * draw, z, n_resamples=200, seed=1)
    assert test.pvalue_exchange == pytest.approx(1 / 201)
    assert (test.chi2, test.ndf) == metrics.chi2_spectrum(0.9 * draw, z)


# ---------------------------------------------------------------------------------------------
# rule-2 inputs: replicates of chi^2 and coverage errors
# ---------------------------------------------------------------------------------------------
def test_chi2_replicates_are_the_chi2_of_the_resampled_events():
    rng = np.random.default_rng(3)
    t = rng.normal(size=300)
    p = t + rng.normal(0, 0.5, 300)
    reps = chi2_spectrum_replicates(p, t, bins=10, n_resamples=4, seed=7)
    edges = np.quantile(np.concatenate([p, t]), np.linspace(0, 1, 11))
    for w, rep in zip(next(bootstrap_weights(300, n_resamples=4, seed=7)), reps):
        idx = np.repeat(np.arange(300), w.astype(int))
        chi2, ndf = chi2_spectrum(p[idx], t[idx], bins=edges)
        assert rep == pytest.approx(chi2 / ndf)
    with pytest.raises(ValueError, match="one prediction per event"):
        chi2_spectrum_replicates(p[:10], t, bins=10)


def test_spectrum_pvalues_are_the_interval_modules(rng):
    """Both p-values come from posteval.metrics.intervals (issue 41), equal to their formulas."""
    from posteval.metrics.intervals import chi2_pvalue, monte_carlo_pvalue

    truth, pred = rng.normal(size=800), 1.1 * rng.normal(size=800)
    res = metrics.spectrum_test(pred, truth, bins=12, n_resamples=199, seed=3)
    assert res.pvalue == chi2_pvalue(res.chi2, res.ndf) == float(stats.chi2.sf(res.chi2, res.ndf))
    k = round(res.pvalue_exchange * 200) - 1  # the count of exchanges at least as extreme
    assert res.pvalue_exchange == monte_carlo_pvalue(k, 199) == (1 + k) / (1 + 199)
    assert 1 / 200 <= res.pvalue_exchange <= 1
