"""posteval.metrics.scores: RMSE, MAE, the CRPS and energy score against closed forms and scoringrules,
and the per-event scores of chapter 3 (seed stacking and paired comparisons: tests/metrics/test_intervals.py)."""

import numpy as np
import pytest
import scoringrules
from scipy import stats

from posteval import metrics


RNG = np.random.default_rng(3)


def test_per_event_scores_of_points_and_samples():
    truth = RNG.normal(size=(40, 3))
    point = truth + 1.0
    sc = metrics.scores_reconstruction(point, truth)
    np.testing.assert_allclose(sc["sq"], 1.0)
    np.testing.assert_allclose(sc["mae"], 1.0)
    np.testing.assert_allclose(sc["crps"], 1.0)  # a point mass: CRPS = absolute error
    samples = truth[:, None, :] + RNG.normal(size=(40, 16, 3))
    sc = metrics.scores_reconstruction(samples, truth)
    np.testing.assert_allclose(sc["sq"], ((samples[:, 0] - truth) ** 2).mean(axis=1))
    np.testing.assert_allclose(sc["crps"], metrics.crps_ensemble(samples, truth, estimator="fair").mean(axis=1))
    with pytest.raises(ValueError, match="pred: expected shape"):
        metrics.scores_reconstruction(samples[:, :, :2], truth)


def test_joint_energy_score_is_the_distance_for_a_point_and_fair_for_samples():
    truth = RNG.normal(size=(30, 4))
    np.testing.assert_allclose(metrics.energy_score_reconstruction(truth + 1.0, truth), 2.0)
    s = RNG.normal(size=(30, 8, 4))
    np.testing.assert_allclose(metrics.energy_score_reconstruction(s, truth),
                               metrics.energy_score_ensemble(s, truth, estimator="fair"))


def test_rmse_mae_known_values():
    pred = np.array([1.0, 2.0, 3.0, 4.0])
    truth = np.array([1.0, 1.0, 1.0, 1.0])
    assert metrics.rmse(pred, truth) == pytest.approx(np.sqrt((0 + 1 + 4 + 9) / 4))
    assert metrics.mae(pred, truth) == pytest.approx(1.5)
    two_d = metrics.rmse(np.stack([pred, truth], 1), np.stack([truth, truth], 1))
    assert two_d.shape == (2,) and two_d[1] == 0.0


def test_crps_gaussian_ensemble_matches_closed_form(rng):
    n, m = 4000, 400
    mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    y = mu + sigma * rng.normal(size=n)
    samples = mu[:, None] + sigma[:, None] * rng.normal(size=(n, m))
    ens = metrics.crps_ensemble(samples, y)
    exact = metrics.crps_normal(mu, sigma, y)
    # the empirical-distribution estimator is biased high by E|X-X'|/(2m) = sigma/(m sqrt(pi))
    bias = np.mean(sigma) / (m * np.sqrt(np.pi))
    assert np.mean(ens) == pytest.approx(np.mean(exact) + bias, abs=3 * np.std(ens - exact) / np.sqrt(n))


@pytest.mark.parametrize("estimator", ["nrg", "fair", "pwm"])
@pytest.mark.parametrize("m", [2, 7, 64])
def test_crps_matches_scoringrules(rng, estimator, m):
    samples = rng.normal(size=(50, m, 3))
    samples[:5, : m // 2] = 0.25  # ties
    truth = rng.normal(size=(50, 3))
    truth[:3] = 0.25
    ours = metrics.crps_ensemble(samples, truth, estimator=estimator)
    ref = scoringrules.crps_ensemble(truth, samples, m_axis=1, estimator=estimator, backend="numpy")
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)
    one_d = metrics.crps_ensemble(samples[:, :, 0], truth[:, 0], estimator=estimator)
    np.testing.assert_allclose(one_d, ours[:, 0], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("estimator", ["nrg", "fair"])
def test_energy_score_matches_scoringrules(rng, estimator):
    samples = rng.normal(size=(40, 33, 4))
    samples[:4, :10] = samples[:4, :1]  # ties
    truth = rng.normal(size=(40, 4))
    ours = metrics.energy_score_ensemble(samples, truth, estimator=estimator)
    ref = scoringrules.es_ensemble(truth, samples, m_axis=-2, v_axis=-1, estimator=estimator, backend="numpy")
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


def test_energy_score_in_one_dimension_is_the_crps(rng):
    samples, truth = rng.normal(size=(30, 9)), rng.normal(size=30)
    np.testing.assert_allclose(metrics.energy_score_ensemble(samples, truth), metrics.crps_ensemble(samples, truth), rtol=1e-12)


def test_crps_normal_against_numeric_integral_and_scoringrules():
    from scipy import integrate

    mu, sigma, y = 0.3, 1.7, -0.4
    numeric, _ = integrate.quad(lambda t: (stats.norm.cdf(t, mu, sigma) - (t >= y)) ** 2, -30, 30, points=[y])
    assert metrics.crps_normal(mu, sigma, y)[0] == pytest.approx(numeric, rel=1e-6)
    grid = np.linspace(-3, 3, 7)
    np.testing.assert_allclose(metrics.crps_normal(0.5, 2.0, grid), scoringrules.crps_normal(grid, 0.5, 2.0), rtol=1e-12)


def test_fair_crps_is_unbiased_and_nrg_exceeds_it_by_the_mean_abs_difference(rng):
    n, m = 20000, 8
    y = rng.normal(size=n)
    samples = rng.normal(size=(n, m))
    fair = metrics.crps_ensemble(samples, y, estimator="fair")
    exact = metrics.crps_normal(0.0, 1.0, y)
    assert np.mean(fair) == pytest.approx(np.mean(exact), abs=3 * np.std(fair - exact) / np.sqrt(n))
    gap = metrics.crps_ensemble(samples, y) - fair
    np.testing.assert_allclose(gap, metrics.mean_abs_difference(samples) / (2 * m), rtol=1e-9, atol=1e-14)
    # E|X - X'| = 2 / sqrt(pi) for N(0, 1)
    mad = metrics.mean_abs_difference(samples)
    assert mad.mean() == pytest.approx(2 / np.sqrt(np.pi), abs=3 * mad.std() / np.sqrt(n))


def test_crps_with_one_sample_is_absolute_error(rng):
    pred, truth = rng.normal(size=100), rng.normal(size=100)
    np.testing.assert_array_equal(metrics.crps_ensemble(pred[:, None], truth), np.abs(pred - truth))


def test_crps_prefers_the_true_distribution(rng):
    y = rng.normal(size=5000)
    right = metrics.crps_ensemble(rng.normal(size=(5000, 200)), y).mean()
    too_narrow = metrics.crps_ensemble(0.5 * rng.normal(size=(5000, 200)), y).mean()
    too_wide = metrics.crps_ensemble(2.0 * rng.normal(size=(5000, 200)), y).mean()
    assert right < too_narrow and right < too_wide


def test_overflow_is_avoided_in_rmse_and_crps():
    big = np.full(4, 1.5e154)
    assert metrics.rmse(big, np.zeros(4)) == pytest.approx(1.5e154)
    assert metrics.mae(big, -big) == pytest.approx(3e154)
    s = np.array([[1e308, 1e308, 5e307]])
    np.testing.assert_allclose(metrics.crps_ensemble(s, np.array([1e308])), [5e307 / 3 - 5e307 * 2 / 9], rtol=1e-12)


def test_mmd_squared_is_unbiased_and_separates_a_point_from_its_posterior():
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(400, 40, 3))
    same = metrics.mmd_squared_ensemble(rng.normal(size=(400, 40, 3)), ref)
    iv = same.mean(), 3 * same.std() / np.sqrt(len(same))
    assert abs(iv[0]) < iv[1]  # unbiased: zero within three standard errors
    shifted = metrics.mmd_squared_ensemble(rng.normal(size=(400, 40, 3)) + 0.5, ref)
    point = metrics.mmd_squared_ensemble(np.zeros((400, 3)), ref)
    assert shifted.mean() > 10 * iv[1] and point.mean() > shifted.mean()
    # a point and the same point as one draw are the same point mass
    np.testing.assert_allclose(point, metrics.mmd_squared_ensemble(np.zeros((400, 1, 3)), ref))


def test_mmd_squared_by_hand_and_in_chunks():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(3, 4, 2)), rng.normal(size=(3, 5, 2))
    k = lambda u, v: sum(np.exp(-0.5 * np.sum((u - v) ** 2) / h**2) for h in (0.1, 0.5, 2.0))  # noqa: E731
    for i in range(3):
        xx = np.mean([k(a[i, j], a[i, l]) for j in range(4) for l in range(4) if j != l])
        yy = np.mean([k(b[i, j], b[i, l]) for j in range(5) for l in range(5) if j != l])
        xy = np.mean([k(a[i, j], b[i, l]) for j in range(4) for l in range(5)])
        assert metrics.mmd_squared_ensemble(a, b)[i] == pytest.approx(xx + yy - 2 * xy, rel=1e-12)
    big_a, big_b = rng.normal(size=(3000, 30, 4)), rng.normal(size=(3000, 30, 4))  # several chunks
    whole = metrics.mmd_squared_ensemble(big_a, big_b)
    np.testing.assert_allclose(whole[2500:], metrics.mmd_squared_ensemble(big_a[2500:], big_b[2500:]))


@pytest.mark.parametrize("kwargs, message", [
    (dict(samples=np.zeros((3, 4, 2)), reference=np.zeros((3, 1, 2))), "reference"),
    (dict(samples=np.zeros((3, 4, 2)), reference=np.zeros((4, 5, 2))), "samples and reference"),
    (dict(samples=np.zeros((3, 4, 2)), reference=np.zeros((3, 5, 2)), bandwidths=(0.0,)), "bandwidths"),
    (dict(samples=np.zeros((3, 4, 2)), reference=np.zeros((3, 5, 2)), bandwidths=()), "bandwidths"),
])
def test_mmd_squared_refuses_bad_input_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        metrics.mmd_squared_ensemble(**kwargs)
