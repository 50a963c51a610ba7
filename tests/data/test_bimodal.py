"""Tests of the bimodal forward model and of its exact posterior (the chapter-2 oracle)."""

import numpy as np
import pytest
import torch
from scipy import integrate

from posteval import metrics
from posteval.data.bimodal import ExactPosterior, sample_bimodal

SIGMA = 0.1


def brute_force_crps(x, y, sigma=SIGMA, points=400_001):
    """CRPS by a dense Riemann sum of (F(t) - 1{t >= y})^2, F from a dense Riemann sum too."""
    b = np.sqrt(max(x, 0.0) + 12 * sigma) + 0.5
    lo, hi = min(-b, y - 0.1), max(b, y + 0.1)
    t = np.linspace(lo, hi, points)
    dens = np.exp(-0.5 * t**2 - 0.5 * ((x - t**2) / sigma) ** 2)
    F = np.cumsum(dens)
    F /= F[-1]
    return np.sum((F - (t >= y)) ** 2) * (t[1] - t[0])


def test_sampler_is_seeded_and_matches_analytic_moments():
    z, x = sample_bimodal(200_000, sigma=SIGMA, seed=3)
    z2, x2 = sample_bimodal(200_000, sigma=SIGMA, seed=3)
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(z, z2)
    assert not np.array_equal(x, sample_bimodal(200_000, sigma=SIGMA, seed=4)[1])
    # E[x] = 1, Var[x] = 2 + sigma^2, Var[x - z^2] = sigma^2; standard errors ~0.003, 0.006
    assert abs(x.mean() - 1.0) < 0.015
    assert abs(x.var() - (2.0 + SIGMA**2)) < 0.04
    assert abs(np.std(x - z**2) - SIGMA) < 0.002


def test_posterior_is_normalised_against_quadrature():
    x = np.array([-0.3, 0.0, 0.05, 1.0, 4.0, 9.0])
    post = ExactPosterior(x, sigma=SIGMA)
    for i, xi in enumerate(x):
        f = lambda t: np.exp(-0.5 * t**2 - 0.5 * ((xi - t**2) / SIGMA) ** 2)
        r = np.sqrt(max(xi, 0.0))
        area, _ = integrate.quad(f, -6, 6, points=[-r, 0.0, r], limit=400)
        assert post.log_norm[i] == pytest.approx(np.log(area), abs=1e-6)
    np.testing.assert_allclose(post.cdf[:, -1], 1.0, rtol=0, atol=1e-12)
    assert np.all(np.diff(post.cdf, axis=1) >= 0)
    # log_prob at the mode agrees with the tabulated density
    mode = np.sqrt(np.maximum(x, 0.0))
    k = np.abs(post.grid - mode[:, None]).argmin(axis=1)
    at_node = post.grid[np.arange(x.size), k]
    np.testing.assert_allclose(np.exp(post.log_prob(at_node)), post.pdf[np.arange(x.size), k], rtol=1e-9)


def test_posterior_is_symmetric_with_zero_mean_and_median():
    _, x = sample_bimodal(300, seed=1)
    post = ExactPosterior(x, sigma=SIGMA)
    np.testing.assert_allclose(post.pdf, post.pdf[:, ::-1], rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(post.mean(), 0.0, atol=1e-10)
    np.testing.assert_allclose(post.median(), 0.0, atol=1e-5)
    np.testing.assert_allclose(post.cdf_at(np.zeros(300)), 0.5, atol=1e-10)
    q = post.quantile([0.1, 0.9])
    np.testing.assert_allclose(q[:, 0], -q[:, 1], atol=1e-9)
    # the modes sit near +-sqrt(x) when x >> sigma
    big = x > 1.0
    mode = np.abs(post.grid[big][np.arange(big.sum()), post.pdf[big].argmax(axis=1)])
    np.testing.assert_allclose(mode, np.sqrt(x[big]), rtol=0.02)


def test_exact_crps_matches_brute_force_integral():
    x = np.array([0.1, 0.74, -0.2, 2.5, 6.0])
    y = np.array([0.35, -0.82, 0.05, 1.6, 3.5])  # the last one outside the main mass
    post = ExactPosterior(x, sigma=SIGMA)
    exact = post.crps(y)
    brute = np.array([brute_force_crps(a, b) for a, b in zip(x, y)])
    np.testing.assert_allclose(exact, brute, rtol=2e-4, atol=2e-5)
    # a truth far above the grid: F ~ 1/2 between the modes at +-sqrt(6), then 1 up to y = 50,
    # so CRPS ~ (1/4) 2 sqrt(6) + (50 - sqrt(6)); the mode widths shift it by ~0.005
    far = post.crps(np.array([0.0, 0.0, 0.0, 0.0, 50.0]))[-1]
    assert far == pytest.approx(50.0 - np.sqrt(6.0) / 2, abs=0.02)


def test_inverse_cdf_samples_follow_the_posterior():
    z, x = sample_bimodal(400, seed=7)
    post = ExactPosterior(x, sigma=SIGMA)
    s = post.sample(4000, seed=1)
    assert s.shape == (400, 4000)
    np.testing.assert_array_equal(s, post.sample(4000, seed=1))
    # second moment per event vs the grid's; sd of the sample mean of z^2 is < 0.02 here
    m2 = np.sum(post.grid**2 * post.pdf, axis=1) * post.step
    np.testing.assert_allclose((s**2).mean(axis=1), m2, rtol=0.01, atol=0.01)
    # the ensemble CRPS of many exact samples converges to the exact integral: its bias is
    # E|X - X'| / 2m ~ 2e-4 and its Monte-Carlo sd over 400 events ~6e-4 (1.5e-3 relative)
    assert metrics.crps_ensemble(s, z).mean() == pytest.approx(post.crps(z).mean(), rel=5e-3)
    # PIT of the truth under the exact posterior is uniform
    pit = post.cdf_at(z)
    assert abs(pit.mean() - 0.5) < 0.05 and abs(pit.var() - 1 / 12) < 0.015


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: sample_bimodal(0), "n must"),
        (lambda: sample_bimodal(10, sigma=0.0), "sigma"),
        (lambda: ExactPosterior([0.1, np.nan]), "x contains NaN"),
        (lambda: ExactPosterior(np.ones((2, 2))), "x must be a 1-D"),
        (lambda: ExactPosterior([1.0], grid_size=100), "grid_size must be odd"),
        (lambda: ExactPosterior([1.0, 2.0]).crps([0.0]), "y has 1 entries"),
        (lambda: ExactPosterior([1.0]).quantile(1.0), "q must hold"),
        (lambda: ExactPosterior([1.0]).sample(0), "m must"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_model_tensors_standardise_with_the_reference_split():
    from posteval.data.bimodal import model_tensors

    train, test = sample_bimodal(500, seed=1), sample_bimodal(200, seed=2)
    context, target = model_tensors({"train": train, "test": test})
    assert context["train"].shape == (500, 1) and target["test"].shape == (200, 1)
    assert context["train"].dtype == torch.float32
    assert float(context["train"].mean()) == pytest.approx(0.0, abs=1e-6)
    assert float(context["train"].std(unbiased=False)) == pytest.approx(1.0, abs=1e-5)
    x_mu, x_sd = train[1].mean(), train[1].std()
    np.testing.assert_allclose(context["test"][:, 0].numpy(), (test[1] - x_mu) / x_sd, rtol=1e-6)
    np.testing.assert_array_equal(target["test"][:, 0].numpy(), test[0].astype(np.float32))
    with pytest.raises(ValueError, match="reference"):
        model_tensors({"test": test})
    with pytest.raises(ValueError, match="z of bad"):
        model_tensors({"train": train, "bad": (test[0][:5], test[1])})
