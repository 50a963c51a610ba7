"""The chapter-3 computations that live in posteval: scores per event, MET resolution, mass windows
and the prior baseline (seed stacking and paired comparisons: tests/metrics/test_intervals.py)."""

import numpy as np
import pytest

from posteval import metrics
from posteval.data.prior import prior_samples
from posteval.physics.kinematics import in_mass_window, met_resolution

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


def test_met_resolution_of_a_gaussian_smearing():
    n = 200_000
    nu = RNG.normal(0, 40, size=(n, 2, 3))
    met = nu[:, :, :2].sum(axis=1) + RNG.normal(0, 8.0, size=(n, 2))
    assert met_resolution({"met": met, "neutrino_momenta": nu}) == pytest.approx(8.0, rel=0.01)
    with pytest.raises(ValueError, match="neutrino_momenta must have shape"):
        met_resolution({"met": met, "neutrino_momenta": nu[:, 0]})


def test_in_mass_window_fraction_per_event():
    masses = np.array([[80.0, 95.0], [70.5, 81.0], [200.0, 0.0]])
    np.testing.assert_allclose(in_mass_window(masses, 80.4, 10.0), [0.5, 1.0, 0.0])
    with pytest.raises(ValueError, match="window must be positive"):
        in_mass_window(masses, 80.4, 0.0)


def test_prior_samples_are_training_rows_independent_of_the_event():
    train = np.arange(12.0).reshape(6, 2)
    s = prior_samples(train, 5, 7, np.random.default_rng(0))
    assert s.shape == (5, 7, 2)
    assert {tuple(r) for r in s.reshape(-1, 2)} <= {tuple(r) for r in train}
    np.testing.assert_array_equal(s, prior_samples(train, 5, 7, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="m must be a positive integer"):
        prior_samples(train, 5, 0, np.random.default_rng(0))
