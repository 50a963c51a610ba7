"""posteval.examples.regressors: the simple regressors of the examples."""

import numpy as np
import pytest

from posteval.examples.gaussian_linear import GaussianLinear
from posteval.examples.regressors import fit_binned_mean, fit_polynomial


def test_regressors_recover_the_conditional_mean():
    p = GaussianLinear(noise=0.5)
    z, x = p.sample(50_000, seed=5)
    grid = np.linspace(-1.5, 1.5, 7)
    for fit in (fit_polynomial(x, z, 3), fit_binned_mean(x, z)):
        np.testing.assert_allclose(fit(grid), p.posterior_mean(grid), atol=0.05)
    with pytest.raises(ValueError, match="x and z"):
        fit_polynomial(np.zeros(3), np.zeros(4))
