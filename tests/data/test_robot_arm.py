"""Tests of the robot arm of chapter 5: the simulator against the published definition, the rejection
sampler's acceptance rule against a closed-form posterior, the collapsed arm sampler against plain
rejection, the cap's shortfall, order-free draws and the re-simulation error."""

import numpy as np
import pytest
from scipy import stats

from posteval.data.robot_arm import (PRIOR_SD, SEGMENTS, arm_posterior, end_point, joint_positions,
                                     posterior_by_rejection, resimulation_error, sample_arm, sample_prior)


def published_end_point(x):
    """Ardizzone et al. (2019), Section 4.2, written out one segment at a time."""
    x1, a2, a3, a4 = x
    l1, l2, l3 = 0.5, 0.5, 1.0
    h = l1 * np.cos(a2) + l2 * np.cos(a2 + a3) + l3 * np.cos(a2 + a3 + a4)
    v = x1 + l1 * np.sin(a2) + l2 * np.sin(a2 + a3) + l3 * np.sin(a2 + a3 + a4)
    return np.array([h, v])


def test_the_simulator_is_the_published_arm():
    assert SEGMENTS == (0.5, 0.5, 1.0) and PRIOR_SD == (0.25, 0.5, 0.5, 0.5)
    rng = np.random.default_rng(0)
    poses = rng.normal(size=(50, 4)) * [0.25, 0.5, 0.5, 0.5]
    np.testing.assert_allclose(end_point(poses), np.array([published_end_point(p) for p in poses]), atol=1e-12)
    np.testing.assert_allclose(joint_positions(poses)[:, -1], end_point(poses), atol=1e-12)
    # the segments have their lengths
    seg = np.linalg.norm(np.diff(joint_positions(poses), axis=1), axis=-1)
    np.testing.assert_allclose(seg, np.broadcast_to(SEGMENTS, seg.shape), atol=1e-12)


def test_sample_arm_is_seeded_with_the_prior_and_the_noise():
    x, y = sample_arm(100_000, noise=0.05, seed=3)
    x2, y2 = sample_arm(100_000, noise=0.05, seed=3)
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_allclose(x.std(axis=0), PRIOR_SD, rtol=0.02)
    np.testing.assert_allclose((y - end_point(x)).std(axis=0), [0.05, 0.05], rtol=0.02)


def test_rejection_draws_the_closed_form_posterior():
    # prior N(0, I_2), y = A x + eps with eps ~ N(0, diag(s^2)): the posterior is Gaussian in closed form
    A = np.array([[1.0, 0.5], [0.0, 2.0]])
    s = np.array([0.6, 0.9])
    y = np.array([[0.7, -1.2]])
    cov = np.linalg.inv(np.eye(2) + A.T @ np.diag(1 / s**2) @ A)
    mean = cov @ A.T @ np.diag(1 / s**2) @ y[0]
    ref = posterior_by_rejection(y, 20_000, forward=lambda x: x @ A.T,
                                 propose=lambda k, rng: rng.normal(size=(k, 2)), noise=s, seed=1)
    draws = ref.samples[0]
    assert ref.shortfall_fraction == 0.0
    np.testing.assert_allclose(draws.mean(axis=0), mean, atol=0.02)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.02)
    for j in range(2):  # the whole distribution, coordinate by coordinate
        assert stats.kstest(draws[:, j], stats.norm(mean[j], np.sqrt(cov[j, j])).cdf).pvalue > 0.001


def test_a_wrong_acceptance_rule_is_caught():
    # the same check fails a sampler that keeps draws with the likelihood of twice the noise
    A, s, y = np.eye(1), 0.5, np.array([[1.0]])
    wide = posterior_by_rejection(y, 20_000, forward=lambda x: x, propose=lambda k, rng: rng.normal(size=(k, 1)),
                                  noise=2 * s, seed=1).samples[0, :, 0]
    assert stats.kstest(wide, stats.norm(0.8, np.sqrt(0.2)).cdf).pvalue < 1e-6


def test_the_collapsed_arm_sampler_agrees_with_plain_rejection():
    _, y = sample_arm(3, noise=0.05, seed=7)
    fast = arm_posterior(y, 3000, noise=0.05, seed=2).samples
    plain = posterior_by_rejection(y, 3000, forward=end_point, propose=sample_prior, noise=0.05, seed=3).samples
    for i in range(3):
        for j in range(4):
            assert stats.ks_2samp(fast[i, :, j], plain[i, :, j]).pvalue > 1e-3, (i, j)


def test_the_cap_counts_its_shortfall_and_fills_nothing_in():
    _, y = sample_arm(4, noise=0.05, seed=0)
    ref = arm_posterior(y, 500, seed=0, max_proposals=2_000)
    assert (ref.accepted < 500).all() and ref.shortfall_fraction == 1.0
    assert not ref.complete.any() and (ref.proposals == 2_000).all()
    for i, k in enumerate(ref.accepted):
        assert np.isfinite(ref.samples[i, :k]).all() and np.isnan(ref.samples[i, k:]).all()


def test_each_event_draws_from_its_own_generator():
    # event i's draws depend on (seed, i) and its observation only, not on the events after it or their draws
    _, y = sample_arm(5, noise=0.05, seed=1)
    all_five = arm_posterior(y, 40, seed=4).samples
    np.testing.assert_array_equal(arm_posterior(y[:3], 40, seed=4).samples, all_five[:3])
    other = y.copy()
    other[0] = [0.3, 1.1]  # another first event changes the first event's draws alone
    np.testing.assert_array_equal(arm_posterior(other, 40, seed=4).samples[1:], all_five[1:])
    assert not np.array_equal(arm_posterior(y, 40, seed=5).samples, all_five)


def test_resimulation_error_of_points_and_draws():
    x, y = sample_arm(20_000, noise=0.05, seed=2)
    err = resimulation_error(x, y)
    assert err.shape == (20_000,) and abs(err.mean() / (2 * 0.05**2) - 1) < 0.03
    draws = np.repeat(x[:, None], 3, axis=1)
    np.testing.assert_allclose(resimulation_error(draws, y), err)


@pytest.mark.parametrize("call, message", [
    (lambda: sample_arm(10, noise=0.0), "noise"),
    (lambda: sample_arm(0), "n"),
    (lambda: arm_posterior(np.zeros((3, 3)), 10), "y"),
    (lambda: arm_posterior(np.zeros((3, 2)), 10, max_proposals=5), "max_proposals"),
    (lambda: arm_posterior(np.full((3, 2), np.nan), 10), "y"),
    (lambda: posterior_by_rejection(np.zeros((2, 2)), 5, forward=end_point, propose=sample_prior,
                                    noise=[0.1, 0.1, 0.1]), "noise"),
    (lambda: end_point(np.zeros((2, 3))), "x"),
    (lambda: resimulation_error(np.zeros((2, 4)), np.zeros((3, 2))), "x_hat and y"),
])
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()
