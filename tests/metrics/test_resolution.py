"""Core width and tails of a relative residual: the normal case, the bootstrap's pairing, bad input."""

import numpy as np
import pytest

from posteval.metrics import resolution
from posteval.metrics.resolution import core_width, core_width_replicates, relative_residual, tail_indicators


def test_core_width_of_a_normal_residual_is_0674_sigma():
    rng = np.random.default_rng(0)
    t = rng.uniform(300, 900, 200_000)
    r = t * (1 + rng.normal(0, 0.1, t.size))
    assert core_width(r, t) == pytest.approx(0.0674, rel=0.01)
    assert tail_indicators(r, t, tail=0.2).mean() == pytest.approx(0.0455, abs=0.002)  # P(|z| > 2)


def test_core_width_ignores_tails_and_replicates_spread_like_the_sampling_error():
    rng = np.random.default_rng(1)
    t = np.full(2000, 500.0)
    d = rng.normal(0, 0.1, t.size)
    d[:100] = 5.0  # 5 % far outliers move the quartiles only a little
    r = t * (1 + d)
    assert core_width(r, t) == pytest.approx(0.0674, rel=0.1)
    reps = core_width_replicates(r, t, n_resamples=400, seed=3)
    assert reps.shape == (400,)
    # the bootstrap spread against the spread over fresh samples of the same size
    fresh = [core_width(t * (1 + np.r_[rng.normal(0, 0.1, 1900), np.full(100, 5.0)]), t) for _ in range(300)]
    assert reps.std() == pytest.approx(np.std(fresh), rel=0.3)
    np.testing.assert_array_equal(reps, core_width_replicates(r, t, n_resamples=400, seed=3))  # paired by seed


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="positive true values"):
        relative_residual([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="one value per event"):
        relative_residual([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="tail"):
        tail_indicators([1.0], [1.0], tail=0)
    with pytest.raises(ValueError, match="NaN"):
        core_width([np.nan, 1.0], [1.0, 1.0])


def test_docstring_example():
    import doctest
    assert doctest.testmod(resolution).failed == 0
