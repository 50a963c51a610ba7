"""Known-answer tests of the protocol metrics."""

import numpy as np
import pandas as pd
import pytest
import scoringrules
from scipy import stats

from lib import metrics
from lib.examples.gaussian_linear import gaussian_crps


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


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
    ens = metrics.crps(samples, y)
    exact = gaussian_crps(mu, sigma, y)
    # the empirical-distribution estimator is biased high by E|X-X'|/(2m) = sigma/(m sqrt(pi))
    bias = np.mean(sigma) / (m * np.sqrt(np.pi))
    assert np.mean(ens) == pytest.approx(np.mean(exact) + bias, abs=3 * np.std(ens - exact) / np.sqrt(n))


def test_crps_matches_scoringrules(rng):
    samples = rng.normal(size=(50, 37, 3))
    truth = rng.normal(size=(50, 3))
    ours = metrics.crps(samples, truth)
    ref = scoringrules.crps_ensemble(truth, samples, m_axis=1)
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


def test_crps_with_one_sample_is_absolute_error(rng):
    pred, truth = rng.normal(size=100), rng.normal(size=100)
    np.testing.assert_array_equal(metrics.crps(pred[:, None], truth), np.abs(pred - truth))


def test_crps_prefers_the_true_distribution(rng):
    y = rng.normal(size=5000)
    right = metrics.crps(rng.normal(size=(5000, 200)), y).mean()
    too_narrow = metrics.crps(0.5 * rng.normal(size=(5000, 200)), y).mean()
    too_wide = metrics.crps(2.0 * rng.normal(size=(5000, 200)), y).mean()
    assert right < too_narrow and right < too_wide


def test_chi2_identical_histograms_is_zero(rng):
    v = rng.normal(size=1000)
    chi2, ndf = metrics.chi2_spectrum(v, v, bins=15)
    assert chi2 == 0.0 and ndf == 15


def test_chi2_same_distribution_is_about_one_per_dof(rng):
    vals = [metrics.chi2_spectrum(rng.normal(size=5000), rng.normal(size=5000), bins=20) for _ in range(40)]
    per_dof = np.mean([c / n for c, n in vals])
    assert 0.75 < per_dof < 1.25
    narrow, ndf = metrics.chi2_spectrum(0.5 * rng.normal(size=5000), rng.normal(size=5000), bins=20)
    assert narrow / ndf > 20


def test_chi2_empty_bins_are_skipped():
    chi2, ndf = metrics.chi2_spectrum(np.array([0.5, 0.5, 2.5]), np.array([0.5, 0.5, 2.5]), bins=np.array([0.0, 1.0, 2.0, 3.0]))
    assert ndf == 2 and chi2 == 0.0
    chi2, ndf = metrics.chi2_spectrum(np.array([0.5, 1.5]), np.array([0.5, 0.5]), bins=np.array([0.0, 1.0, 2.0]))
    # bin 1: pred 1 vs true 2 (var 1+2); bin 2: pred 1 vs true 0 (var 1)
    assert ndf == 2 and chi2 == pytest.approx(1 / 3 + 1)


def test_pit_of_a_point_mass_at_the_truth_is_one_half():
    y = np.array([0.3, -1.0])
    assert np.all(metrics.pit(np.repeat(y[:, None], 5, axis=1), y) == 0.5)


def test_calibrated_sampler_is_on_the_diagonal(rng):
    n, m = 20000, 100
    y = rng.normal(size=n)
    cov = metrics.coverage_curve(rng.normal(size=(n, m)), y)
    levels = metrics.DEFAULT_LEVELS
    # binomial sampling error of a proportion at n events, plus the discreteness of m samples
    tol = 4 * np.sqrt(levels * (1 - levels) / n) + 1.0 / m
    assert np.all(np.abs(cov - levels) < tol)


def test_overdispersed_sampler_is_above_and_overconfident_below(rng):
    n = 5000
    y = rng.normal(size=n)
    wide = metrics.coverage_curve(2.0 * rng.normal(size=(n, 100)), y)
    narrow = metrics.coverage_curve(0.5 * rng.normal(size=(n, 100)), y)
    inner = slice(1, -1)
    assert np.all(wide[inner] > metrics.DEFAULT_LEVELS[inner])
    assert np.all(narrow[inner] < metrics.DEFAULT_LEVELS[inner])
    assert metrics.coverage_error(narrow) > 0.2


def test_conformal_point_predictor_reaches_nominal_coverage(rng):
    cal_t, test_t = rng.normal(size=5000), rng.normal(size=5000)
    out = metrics.conformal_coverage_curve(np.zeros(5000), cal_t, np.zeros(5000), test_t, [0.5, 0.9])
    assert out["coverage"] == pytest.approx([0.5, 0.9], abs=0.03)
    assert out["width"] == pytest.approx(2 * stats.norm.ppf([0.75, 0.95]), rel=0.08)


def test_conformal_recalibrates_an_overconfident_sampler(rng):
    def draw(n):
        y = rng.normal(size=n)
        return 0.3 * rng.normal(size=(n, 200)), y

    cal_s, cal_t = draw(4000)
    test_s, test_t = draw(4000)
    raw = metrics.coverage_curve(test_s, test_t, [0.8])
    conf = metrics.conformal_coverage_curve(cal_s, cal_t, test_s, test_t, [0.8])
    assert raw[0] < 0.5
    assert conf["coverage"][0] == pytest.approx(0.8, abs=0.03)


def test_protocol_report_table(rng):
    truth = rng.normal(size=(800, 2))
    report = metrics.protocol_report(
        {"sampler": rng.normal(size=(800, 50, 2)), "zero": np.zeros((800, 2))},
        truth,
        dim_names=["a", "b"],
        calibration={"zero": (np.zeros((500, 2)), rng.normal(size=(500, 2)))},
    )
    assert isinstance(report, pd.DataFrame)
    assert list(report.columns) == ["model", "dimension", "rmse", "mae", "crps", "chi2", "ndf", "chi2_ndf", "coverage_error", "kind"]
    assert len(report) == 4
    zero = report[report.model == "zero"]
    assert np.all(zero.crps.values == pytest.approx(zero.mae.values))
    assert np.all(zero.chi2_ndf.values > 10 * report[report.model == "sampler"].chi2_ndf.values)


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: metrics.crps(np.array([[np.nan, 1.0]]), np.array([0.0])), "samples"),
        (lambda: metrics.crps(np.zeros((3, 4)), np.zeros(2)), "samples and truth"),
        (lambda: metrics.crps(np.zeros((3, 0)), np.zeros(3)), "samples"),
        (lambda: metrics.crps(np.zeros((0, 4)), np.zeros(0)), "truth"),
        (lambda: metrics.rmse(np.zeros(3), np.zeros(4)), "pred and truth"),
        (lambda: metrics.mae(np.array([np.inf]), np.zeros(1)), "pred"),
        (lambda: metrics.coverage_curve(np.zeros((3, 4)), np.zeros(3), [0.5, 1.0]), "levels"),
        (lambda: metrics.coverage_curve(np.zeros((3, 4)), np.zeros(3), [0.0]), "levels"),
        (lambda: metrics.chi2_spectrum(np.zeros(3), np.zeros(3), bins=0), "bins"),
        (lambda: metrics.chi2_spectrum(np.zeros(3), np.zeros(3), bins=np.array([1.0, 0.0])), "bins"),
        (lambda: metrics.chi2_spectrum(np.zeros((3, 2)), np.zeros(3)), "pred_values"),
        (lambda: metrics.conformal_coverage_curve(np.zeros(3), np.zeros(3), np.zeros(4), np.zeros(3)), "test_pred"),
        (lambda: metrics.protocol_report({}, np.zeros(3)), "name_to_samples"),
        (lambda: metrics.protocol_report({"a": np.zeros(3)}, np.zeros(3), point_from="median"), "point_from"),
    ],
)
def test_bad_input_names_the_argument(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_conformal_handles_point_mass_samples_without_overflow(rng):
    """Events whose samples all coincide (a single solution) get finite scores and widths."""
    n = 2000

    def draw():
        y = rng.normal(size=n)
        s = rng.normal(size=(n, 50))
        s[: n // 2] = rng.normal(size=(n // 2, 1))  # half the events: one repeated value
        return s, y

    (cs, ct), (ts, tt) = draw(), draw()
    with np.errstate(all="raise"):
        out = metrics.conformal_coverage_curve(cs, ct, ts, tt, [0.5, 0.9])
    assert np.all(np.isfinite(out["width"]))
    assert out["coverage"] == pytest.approx([0.5, 0.9], abs=0.04)
