"""posteval.metrics.uncertainty: bootstrap intervals, paired comparisons, bootstrap means."""

import numpy as np
import pytest

from posteval import metrics


# ---------------------------------------------------------------------------------------------
# uncertainty: bootstrap interval coverage and paired comparison
# ---------------------------------------------------------------------------------------------
def test_bootstrap_interval_covers_the_true_mean_95_percent(rng):
    trials, n = 400, 300
    hits = 0
    for r in range(trials):
        values = rng.gamma(4.0, size=n)  # mean 4
        lo, hi = metrics.percentile_interval(metrics.bootstrap_means(values, n_resamples=400, seed=r), 0.95)
        hits += lo <= 4.0 <= hi
    assert abs(hits / trials - 0.95) < 3 * np.sqrt(0.95 * 0.05 / trials)


def test_compare_is_paired_and_detects_a_worse_model(rng):
    n = 2000
    truth = rng.normal(size=n)
    good = rng.normal(size=(n, 16))
    worse = 1.3 * rng.normal(size=(n, 16))
    out = metrics.compare(good, worse, truth, metric="crps", estimator="fair", n_resamples=300, seed=1)
    expected = metrics.crps_ensemble(good, truth, estimator="fair").mean() - metrics.crps_ensemble(worse, truth, estimator="fair").mean()
    assert out.diff == pytest.approx(expected)
    assert out.lo < out.diff < out.hi < 0 and out.pvalue < 0.05
    same = metrics.compare(good, good, truth, n_resamples=100)
    assert same.diff == 0 and same.pvalue == 1.0
    rm = metrics.compare(np.zeros((n, 2)), np.ones((n, 2)), np.stack([truth, truth], 1), metric="rmse", n_resamples=100)
    np.testing.assert_allclose(rm.diff, metrics.rmse(np.zeros(n), truth) - metrics.rmse(np.ones(n), truth))


def test_compare_interval_coverage_under_the_null(rng):
    """Two equally good samplers: the 90 % interval of their CRPS difference covers 0 in ~90 % of test sets."""
    trials, n = 200, 300
    hits = 0
    for r in range(trials):
        truth = rng.normal(size=n)
        out = metrics.compare(rng.normal(size=(n, 8)), rng.normal(size=(n, 8)), truth, estimator="fair",
                              level=0.9, n_resamples=300, seed=r)
        hits += out.lo <= 0 <= out.hi
    assert abs(hits / trials - 0.9) < 3 * np.sqrt(0.9 * 0.1 / trials)


def test_bootstrap_means_pairs_blocks_and_sparse_indicators(rng):
    from scipy import sparse

    values = rng.normal(size=(300, 2))
    codes = rng.integers(0, 4, size=300)
    onehot = np.eye(4)[codes]
    dense, sp = metrics.bootstrap_means([values, sparse.csr_matrix(onehot)], n_resamples=50, seed=7)
    np.testing.assert_array_equal(dense, metrics.bootstrap_means(values, n_resamples=50, seed=7))
    np.testing.assert_allclose(sp, metrics.bootstrap_means(onehot, n_resamples=50, seed=7), rtol=1e-15)
    np.testing.assert_allclose(sp.sum(axis=1), 1.0)
