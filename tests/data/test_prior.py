"""posteval.data.prior: the prior baseline's samples."""

import numpy as np
import pytest

from posteval.data.prior import prior_samples


def test_prior_samples_are_training_rows_independent_of_the_event():
    train = np.arange(12.0).reshape(6, 2)
    s = prior_samples(train, 5, 7, np.random.default_rng(0))
    assert s.shape == (5, 7, 2)
    assert {tuple(r) for r in s.reshape(-1, 2)} <= {tuple(r) for r in train}
    np.testing.assert_array_equal(s, prior_samples(train, 5, 7, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="m must be a positive integer"):
        prior_samples(train, 5, 0, np.random.default_rng(0))
