"""An interval whose seeds agree exactly (an untrained model, or a difference with one) has no seed part."""

import numpy as np
from scipy import stats

from posteval.metrics.intervals import replicate_interval


def test_p_value_of_a_difference_without_seed_variance_is_finite():
    """Identical seed values leave only the event part: the p-value is that of the normal interval,
    not NaN from t(inf) * 0 near level 1."""
    rng = np.random.default_rng(0)
    reps = np.repeat(0.3 + 0.1 * rng.normal(size=(500, 1)), 3, axis=1)
    iv = replicate_interval(np.full(3, 0.3), reps)
    assert iv.seed_var == 0 and iv.n_seeds == 3
    p = iv.p_value(0.0, "greater")
    assert np.isfinite(p) and p < 0.05
    z = iv.estimate / np.sqrt(iv.event_var)
    assert abs(iv.p_value(0.0) - 2 * stats.norm.sf(z)) < 1e-6
    lo, hi = iv.at_level(0.95)
    assert abs(hi - iv.estimate - stats.norm.ppf(0.975) * np.sqrt(iv.event_var)) < 1e-12
