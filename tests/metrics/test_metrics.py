"""posteval.metrics, the package: every public metric refuses bad input with a ValueError naming the
argument (the metrics' own known-answer tests: tests/metrics/test_<module>.py)."""

import numpy as np
import pytest

from posteval import metrics


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
