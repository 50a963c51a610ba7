"""Known-answer tests of the protocol metrics."""

import numpy as np
import pandas as pd
import pytest
import scoringrules
from scipy import stats

from posteval import metrics


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
    sampler = rng.normal(size=(800, 50, 2))
    report = metrics.protocol_report(
        {"sampler": sampler, "zero": np.zeros((800, 2))},
        truth,
        dim_names=["a", "b"],
        calibration={"zero": (np.zeros((500, 2)), rng.normal(size=(500, 2)))},
    )
    assert isinstance(report, pd.DataFrame)
    assert list(report.columns) == ["model", "dimension", "rmse", "mae", "crps", "chi2", "ndf", "chi2_ndf", "chi2_pvalue",
                                    "chi2_pvalue_exchange", "coverage_error_raw", "coverage_error_conformal", "kind"]
    assert len(report) == 4
    zero = report[report.model == "zero"]
    rows = report[report.model == "sampler"]
    assert np.all(zero.crps.values == pytest.approx(zero.mae.values))
    assert np.all(zero.chi2_ndf.values > 10 * rows.chi2_ndf.values)
    assert zero.coverage_error_raw.isna().all() and zero.coverage_error_conformal.notna().all()
    assert rows.coverage_error_raw.notna().all() and rows.coverage_error_conformal.isna().all()
    assert report.chi2_pvalue_exchange.isna().all()  # spectrum_resamples = 0 by default
    raw = metrics.coverage_error(metrics.coverage_curve(sampler, truth))
    np.testing.assert_allclose(rows.coverage_error_raw.values, raw)
    np.testing.assert_allclose(rows.crps.values, metrics.crps_ensemble(sampler, truth).mean(axis=0))
    chi2 = [metrics.chi2_spectrum(sampler[:, 0, j], truth[:, j]) for j in range(2)]
    np.testing.assert_allclose(rows[["chi2", "ndf"]].values, chi2)


def test_protocol_report_intervals_bracket_the_estimates(rng):
    truth = rng.normal(size=(600, 2))
    models = {"sampler": rng.normal(size=(600, 32, 2)), "zero": np.zeros((600, 2))}
    calibration = {"sampler": (rng.normal(size=(400, 32, 2)), rng.normal(size=(400, 2))),
                   "zero": (np.zeros((400, 2)), rng.normal(size=(400, 2)))}
    plain = metrics.protocol_report(models, truth, calibration=calibration, crps_estimator="fair", spectrum_resamples=99, seed=3)
    report = metrics.protocol_report(models, truth, calibration=calibration, crps_estimator="fair", spectrum_resamples=99,
                                     level=0.9, n_resamples=200, seed=3)
    pd.testing.assert_frame_equal(report[plain.columns], plain)
    assert report.chi2_pvalue_exchange.between(0, 1).all()
    for key in ("rmse", "mae", "crps"):
        assert (report[f"{key}_lo"] <= report[key] + 1e-12).all(), key
        assert (report[f"{key}_hi"] >= report[key] - 1e-12).all(), key
    assert report.loc[report.kind == "point", "coverage_error_raw_lo"].isna().all()
    # the raw coverage interval equals coverage_error of the explicitly resampled events
    weights = np.concatenate(list(metrics.bootstrap_weights(600, n_resamples=200, seed=3))).astype(int)
    errors = np.array([metrics.coverage_error(metrics.coverage_curve(models["sampler"][idx], truth[idx]))
                       for idx in (np.repeat(np.arange(600), w) for w in weights)])
    lo, hi = metrics.percentile_interval(errors, 0.9)
    sampler = report[report.model == "sampler"]
    np.testing.assert_allclose(sampler.coverage_error_raw_lo.values, lo)
    np.testing.assert_allclose(sampler.coverage_error_raw_hi.values, hi)
    # the rmse interval matches a direct bootstrap of the same resamples
    err2 = (models["zero"] - truth) ** 2
    reps = np.sqrt(metrics.bootstrap_means(err2, n_resamples=200, seed=3))
    lo, hi = metrics.percentile_interval(reps, 0.9)
    zero = report[report.model == "zero"]
    np.testing.assert_allclose(zero.rmse_lo.values, lo)
    np.testing.assert_allclose(zero.rmse_hi.values, hi)


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: metrics.crps_ensemble(np.array([[np.nan, 1.0]]), np.array([0.0])), "samples"),
        (lambda: metrics.crps_ensemble(np.zeros((3, 4)), np.zeros(2)), "samples and truth"),
        (lambda: metrics.crps_ensemble(np.zeros((3, 0)), np.zeros(3)), "samples"),
        (lambda: metrics.crps_ensemble(np.zeros((0, 4)), np.zeros(0)), "truth"),
        (lambda: metrics.rmse(np.zeros(3), np.zeros(4)), "pred and truth"),
        (lambda: metrics.mae(np.array([np.inf]), np.zeros(1)), "pred"),
        (lambda: metrics.coverage_curve(np.zeros((3, 4)), np.zeros(3), [0.5, 1.0]), "levels"),
        (lambda: metrics.coverage_curve(np.zeros((3, 4)), np.zeros(3), [0.0]), "levels"),
        (lambda: metrics.chi2_spectrum(np.zeros(3), np.zeros(3), bins=0), "bins"),
        (lambda: metrics.chi2_spectrum(np.zeros(3), np.zeros(3), bins=np.array([1.0, 0.0])), "bins"),
        (lambda: metrics.chi2_spectrum(np.zeros((3, 2)), np.zeros(3)), "samples"),
        (lambda: metrics.conformal_coverage_curve(np.zeros(3), np.zeros(3), np.zeros(4), np.zeros(3)), "test_pred"),
        (lambda: metrics.protocol_report({}, np.zeros(3)), "name_to_samples"),
        (lambda: metrics.protocol_report({"a": np.zeros(3)}, np.zeros(3), point_from="median"), "point_from"),
        (lambda: metrics.protocol_report({"a": np.zeros(3)}, np.zeros(3), level=1.5), "level"),
        (lambda: metrics.chi2_spectrum(np.arange(5.0), np.full(5, 2.0)), "truth: constant"),
        (lambda: metrics.chi2_spectrum(np.arange(5.0), np.arange(5.0), value_range=(10, 20)), "no samples or truth inside"),
        (lambda: metrics.chi2_spectrum(np.arange(5.0), np.arange(5.0), value_range=(3, 3)), "value_range"),
        (lambda: metrics.chi2_spectrum(np.zeros(3), np.zeros(3), bins=np.array([-1.0, 1.0])), "fewer than two non-empty bins"),
        (lambda: metrics.spectrum_test(np.arange(5.0), np.arange(6.0), n_resamples=10), "one prediction per event"),
        (lambda: metrics.coverage_error(np.array([0.5, np.nan]), [0.4, 0.6]), "coverage: contains 1 NaN"),
        (lambda: metrics.coverage_error(np.array([0.5, 1.2]), [0.4, 0.6]), r"coverage: fractions must lie in \[0, 1\]"),
        (lambda: metrics.crps_ensemble(np.zeros((3, 1)), np.zeros(3), estimator="fair"), "m >= 2"),
        (lambda: metrics.crps_ensemble(np.zeros((3, 4)), np.zeros(3), estimator="qd"), "estimator"),
        (lambda: metrics.energy_score_ensemble(np.zeros((3, 4, 2)), np.zeros((3, 3))), "samples and truth"),
        (lambda: metrics.crps_ensemble(np.full((2, 3), 1e308), np.array([-1e308, 0.0])), "crps: the result overflows"),
        (lambda: metrics.crps_normal(0.0, -1.0, 0.0), "sigma"),
        (lambda: metrics.coverage_noise_floor(0, 10), "n_events"),
        (lambda: metrics.local_coverage(np.ones(4, dtype=bool), np.arange(5.0)), "covered and covariate"),
        (lambda: metrics.compare(np.zeros(3), np.zeros(3), np.zeros(3), metric="r2"), "metric"),
        (lambda: metrics.bootstrap_means(np.zeros(3), n_resamples=1), "n_resamples"),
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


def test_overflow_is_avoided_in_rmse_and_crps():
    big = np.full(4, 1.5e154)
    assert metrics.rmse(big, np.zeros(4)) == pytest.approx(1.5e154)
    assert metrics.mae(big, -big) == pytest.approx(3e154)
    s = np.array([[1e308, 1e308, 5e307]])
    np.testing.assert_allclose(metrics.crps_ensemble(s, np.array([1e308])), [5e307 / 3 - 5e307 * 2 / 9], rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# coverage: tie-broken conformal, noise floor, local coverage
# ---------------------------------------------------------------------------------------------
def test_conformal_exact_posterior_sampler_is_nominal_at_every_level(rng):
    n, m = 20000, 64

    def draw():
        y = rng.normal(size=n)
        return rng.normal(size=(n, m)), y

    (cs, ct), (ts, tt) = draw(), draw()
    levels = metrics.DEFAULT_LEVELS
    cov = metrics.conformal_coverage_curve(cs, ct, ts, tt, levels, seed=4)["coverage"]
    # binomial noise of the test set and of the calibration quantile
    tol = 4 * np.sqrt(levels * (1 - levels) * (1 / n + 1 / n))
    assert np.all(np.abs(cov - levels) < tol), np.max(np.abs(cov - levels) / tol)


def test_noise_floor_matches_a_direct_simulation(rng):
    n, m, repeats = 1000, 16, 300
    direct = [metrics.coverage_error(metrics.coverage_curve(rng.normal(size=(n, m)), rng.normal(size=n)))
              for _ in range(repeats)]
    floor = metrics.coverage_noise_floor(n, m, n_resamples=repeats, seed=2)
    assert floor.errors.shape == (repeats, 1)
    assert stats.ks_2samp(direct, floor.errors[:, 0]).pvalue > 0.01
    assert floor.q50 < floor.q95 <= floor.q95_max
    # m-discreteness: even infinitely many events leave the expected coverage off the diagonal
    assert metrics.coverage_noise_floor(10**7, m, n_resamples=20, seed=2).q50 > 0.02


def test_local_coverage_known_bins():
    x = np.arange(100.0)
    covered = pd.DataFrame({"a": x >= 50, "b": np.ones(100, dtype=bool)})
    out = metrics.local_coverage(covered, x, bins=2)
    np.testing.assert_array_equal(out["a"].values, [0.0, 1.0])
    np.testing.assert_array_equal(out["b"].values, [1.0, 1.0])
    assert len(out) == 2 and float(out.index[0]) < 50 < float(out.index[1])


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


def test_coverage_band_holds_a_perfect_sampler_and_its_discreteness():
    n, m, repeats = 300, 9, 400
    levels = np.array([0.1, 0.5, 0.9])
    lo, hi = metrics.coverage_band(n, levels, m_samples=m)
    rng = np.random.default_rng(3)
    dev = np.stack([metrics.coverage_curve(rng.normal(size=(n, m)), rng.normal(size=n), levels) - levels
                    for _ in range(repeats)])
    inside = np.mean((dev >= lo - 1e-12) & (dev <= hi + 1e-12), axis=0)
    assert np.all(inside[1:] >= 0.93) and np.all(inside[1:] < 1.0)
    # with m = 9 no rank lies within the central interval of level 0.1 (coverage 0, a band of one
    # point at -0.1), and level 0.5 holds ranks 3..6, 4 of 10: the band is centred on -0.1, not zero
    assert lo[0] == hi[0] == pytest.approx(-0.1) and np.all(dev[:, 0] == pytest.approx(-0.1))
    assert hi[1] < 0.0 and np.mean(dev[:, 1]) == pytest.approx(-0.1, abs=0.01)
    c_lo, c_hi = metrics.coverage_band(n, levels)  # continuous intervals: binomial noise only
    half = 1.96 * np.sqrt(levels * (1 - levels) / n)
    np.testing.assert_allclose(c_hi, half, atol=2 / n)
    np.testing.assert_allclose(c_lo, -half, atol=2 / n)
    with pytest.raises(ValueError, match="n_events"):
        metrics.coverage_band(0, levels)
    with pytest.raises(ValueError, match="level"):
        metrics.coverage_band(n, levels, level=1.5)
