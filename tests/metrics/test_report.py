"""posteval.metrics.report: the protocol report table and its intervals."""

import numpy as np
import pandas as pd
import pytest

from posteval import metrics
from posteval.metrics._validation import order_free_draws


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
    one = order_free_draws(sampler)[:, 0]  # the draw of each event chosen by seed 0, whatever the order (issue 44)
    assert all(np.any(np.all(sampler[i] == one[i], axis=1)) for i in range(800))  # one of the event's own draws
    chi2 = [metrics.chi2_spectrum(one[:, j], truth[:, j]) for j in range(2)]
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
