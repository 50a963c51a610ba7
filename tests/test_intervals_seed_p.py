"""p-value of a rule-3 (seeds only) interval far from its null: finite, tiny, and the interval's dual."""

import numpy as np

from posteval.metrics.intervals import paired_seed_interval, seed_interval


def test_seed_interval_far_from_null_has_a_finite_tiny_p():
    # no event variance: the event quantile (infinite as the level tends to 1) must not turn the width into NaN
    iv = seed_interval([0.50, 0.52, 0.49, 0.51, 0.50, 0.53, 0.48, 0.50, 0.51, 0.52])
    assert iv.event_var == 0
    p = iv.p_value(0.0, "greater")
    assert np.isfinite(p) and 0 <= p < 1e-10
    assert iv.p_value(0.0, "less") > 1 - 1e-10


def test_paired_seed_p_is_the_dual_of_the_interval():
    rng = np.random.default_rng(3)
    a = rng.normal(0.7, 0.1, 10)
    for shift in (0.01, 0.05, 0.2):
        iv = paired_seed_interval(a + shift + rng.normal(0, 0.03, 10), a)
        assert (iv.p_value(0.0) < 0.05) == (iv.lo > 0 or iv.hi < 0)
