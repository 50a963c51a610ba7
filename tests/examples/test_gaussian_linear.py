"""posteval.examples.gaussian_linear: the linear-Gaussian example."""

import numpy as np
import pytest

from posteval.examples.gaussian_linear import GaussianLinear


def test_gaussian_linear_total_variance_terms():
    p = GaussianLinear(noise=0.5)
    assert p.posterior_var + p.spectrum_var == pytest.approx(1.0)
    z, x = p.sample(200_000, seed=1)
    assert np.var(p.posterior_mean(x)) == pytest.approx(p.spectrum_var, rel=0.02)
    resid = z - p.posterior_mean(x)
    assert np.var(resid) == pytest.approx(p.posterior_var, rel=0.02)
    with pytest.raises(ValueError, match="noise"):
        GaussianLinear(noise=0.0)
