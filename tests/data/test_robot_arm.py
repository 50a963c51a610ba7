"""Tests of the robot arm of chapter 5: the simulator against the published definition, the rejection
sampler's acceptance rule against a closed-form posterior, the collapsed arm sampler against plain
rejection, the cap's shortfall, order-free draws, the re-simulation error, the half-sample debiasing of the
posterior mean's scores, and the re-simulation margin derived from exact draws against the claims' own rule."""

import numpy as np
import pytest
from scipy import stats

from posteval.data.robot_arm import (PRIOR_SD, SEGMENTS, ResimDesign, arm_posterior, derive_resim_margin,
                                     end_point, half_sample_debiased, joint_positions, posterior_by_rejection,
                                     resimulation_error, sample_arm, sample_prior)
from posteval.metrics.claims import Claim, evaluate_claims
from posteval.metrics.intervals import Measurements


def published_end_point(x):
    """Ardizzone et al. (2019), the arm written out one segment at a time."""
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


def test_half_sample_debiasing_removes_the_monte_carlo_bias_of_the_mean():
    # posterior N(mu, 1) per event and a truth drawn from it: E[x|y] = mu scores E(x - mu)^2 = 1 and
    # E|x - mu| = sqrt(2 / pi); the mean of m draws scores 1 + 1/m and sqrt(2 (1 + 1/m) / pi) on average
    rng = np.random.default_rng(0)
    mu = rng.normal(size=(200_000, 1))
    truth = mu[:, 0] + rng.normal(size=200_000)
    draws = mu[:, None] + rng.normal(size=(200_000, 6, 1))
    sq = lambda p: (p[:, 0] - truth) ** 2  # noqa: E731
    assert abs(sq(draws.mean(axis=1)).mean() - (1 + 1 / 6)) < 0.01
    assert abs(half_sample_debiased(sq, draws).mean() - 1) < 0.01  # exact for a quadratic score
    both = half_sample_debiased(lambda p: {"sq": sq(p), "abs": np.abs(p[:, 0] - truth)}, draws)
    np.testing.assert_allclose(both["sq"], half_sample_debiased(sq, draws))
    # a smooth score: the 1/m bias (0.064 here) cancels to O(1/m^2) (0.005), within the sampling noise
    plain, ideal = np.abs(draws.mean(axis=1)[:, 0] - truth).mean(), np.sqrt(2 / np.pi)
    assert plain - ideal > 0.05 and abs(both["abs"].mean() - ideal) < 0.015


@pytest.fixture(scope="module")
def arm_design():
    """60 test events at sigma = 0.01 with an exact reference (20 draws) and three more exact samplers."""
    _, y = sample_arm(60, noise=0.01, seed=0)
    refs = [arm_posterior(y, 20, noise=0.01, seed=s) for s in range(1, 5)]
    ok = np.logical_and.reduce([r.complete for r in refs])
    return y[ok], [r.samples[ok] for r in refs]


def test_the_derived_margin_passes_an_exact_sampler_and_fails_the_posterior_mean(arm_design):
    y, (reference, *samplers) = arm_design
    n = len(y)
    d = derive_resim_margin(y, reference, noise=0.01, designs={"this": ResimDesign(n, 20, 3)}, n_replicates=400)
    row = d.table.loc["this"]
    assert row.exact_passes < d.margin < row.mean_fails and row.room > 10
    assert d.pass_probability(0.0, "this")[0] >= 0.95 and d.mean_fail_probability("this") >= 0.95
    oc = d.pass_probability(np.geomspace(1e-3, 1e2, 30), "this")
    assert np.all(np.diff(oc) <= 0) and oc[-1] == 0.0  # the operating characteristic falls with the excess
    # the claims' own rule on real exact samplers and on the posterior mean agrees with the simulation
    resim = lambda x: resimulation_error(x, y) / (2 * 0.01**2)  # noqa: E731
    m = Measurements(event_scores={"resim_error": {
        "sampler": np.stack([resim(s) for s in samplers], axis=1), "exact": resim(reference),
        "mean": half_sample_debiased(resim, np.concatenate([reference, *samplers], axis=1))}})
    claims = [Claim(f"physical.{k}", f"{k} re-simulates as exact draws do (test)", "resim_error", k, "exact",
                    direction=0, margin=d.margin, margin_reason="derived", family="physics") for k in ("sampler", "mean")]
    words = evaluate_claims(claims, m)["word"]
    assert words["physical.sampler"] == "yes" and words["physical.mean"] == "no"


def test_no_margin_separates_them_when_the_noise_hides_the_mean(arm_design):
    y, (reference, *_) = arm_design
    with pytest.raises(ValueError, match="no margin separates"):  # two events: an exact sampler needs a wide band
        derive_resim_margin(y, reference, noise=0.01, designs={"tiny": ResimDesign(2, 2, 2)}, n_replicates=200)


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
    (lambda: half_sample_debiased(lambda p: p[:, 0], np.zeros((3, 5, 1))), "draws"),
    (lambda: ResimDesign(1, 10, 3), "n_events"),
    (lambda: ResimDesign(100, 0, 3), "n_draws"),
    (lambda: derive_resim_margin(np.zeros((3, 2)), np.zeros((3, 4, 4)), noise=0.01, designs={}), "designs"),
    (lambda: derive_resim_margin(np.zeros((3, 2)), np.zeros((2, 4, 4)), noise=0.01,
                                 designs={"a": ResimDesign(3, 4, 1)}), "y and draws"),
])
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()
