"""posteval.examples.discrete_posterior: the exactly solvable discrete problems of chapter 1."""

import numpy as np
import pytest

from posteval.examples.discrete_posterior import DiscreteProblem, random_problems


def test_discrete_counterexample_median_widens_the_spectrum():
    p = DiscreteProblem(np.array([-1.0, 0.0, 1.0]), np.array([0.5, 0.5]), np.array([[0.55, 0.35, 0.10], [0.10, 0.35, 0.55]]))
    np.testing.assert_allclose(p.posterior_mean(), [-0.45, 0.45])
    np.testing.assert_array_equal(p.posterior_median(), [-1.0, 1.0])
    assert p.median_is_unique().all()
    assert p.var_z() == pytest.approx(0.65)
    assert p.expected_posterior_var() + p.spectrum_var(p.posterior_mean()) == pytest.approx(p.var_z())
    assert p.spectrum_var(p.posterior_median()) == pytest.approx(1.0)


def test_discrete_sampler_matches_the_table():
    p = random_problems(1, seed=3)[0]
    xi, z = p.sample(200_000, seed=4)
    for j in range(2):
        freq = [np.mean(z[xi == j] == v) for v in p.z_values]
        np.testing.assert_allclose(freq, p.p_z_given_x[j], atol=0.01)


def test_discrete_problem_validates():
    with pytest.raises(ValueError, match="p_z_given_x"):
        DiscreteProblem(np.array([0.0, 1.0]), np.array([1.0]), np.array([[0.5, 0.6]]))
    with pytest.raises(ValueError, match="z_values"):
        DiscreteProblem(np.array([1.0, 0.0]), np.array([1.0]), np.array([[0.5, 0.5]]))
