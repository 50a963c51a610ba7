"""Verdict words from intervals, and the intervals' coverage over simulated seeds (known answers)."""

import numpy as np
import pytest

from posteval.metrics.verdicts import (bootstrap_interval, decide, paired_bootstrap_interval, paired_t_interval,
                                  seed_interval, t_interval, verdict)


@pytest.mark.parametrize("lo, hi, direction, margin, want", [
    (0.01, 0.2, 1, 0.0, "yes"),          # excludes 0 on the claimed side
    (-0.2, -0.01, -1, 0.0, "yes"),       # negative claim, interval below 0
    (-0.2, -0.01, 1, 0.0, "no"),         # excludes 0 on the other side
    (0.01, 0.2, -1, 0.0, "no"),
    (-0.01, 0.015, 1, 0.02, "no"),       # inside the equivalence margin
    (-0.01, 0.03, 1, 0.02, "not resolved"),  # contains 0, reaches past the margin
    (-0.05, 0.05, -1, 0.0, "not resolved"),
    (0.0, 0.1, 1, 0.0, "not resolved"),  # touching 0 does not exclude it
])
def test_verdict_branches(lo, hi, direction, margin, want):
    assert verdict(lo, hi, direction=direction, margin=margin) == want


@pytest.mark.parametrize("kwargs, match", [
    (dict(lo=0.2, hi=0.1), "lo"), (dict(lo=np.nan, hi=0.1), "finite"),
    (dict(lo=0.0, hi=0.1, direction=0), "direction"), (dict(lo=0.0, hi=0.1, margin=-1), "margin"),
])
def test_verdict_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        verdict(**kwargs)


@pytest.mark.parametrize("fn, args, match", [
    (t_interval, ([1.0],), "at least 2"), (t_interval, ([1.0, np.nan],), "NaN"),
    (t_interval, (np.ones((2, 2)),), "one-dimensional"), (paired_t_interval, ([1, 2, 3], [1, 2]), "pair"),
    (bootstrap_interval, ([1.0, 2.0],), None), (seed_interval, ([1.0, 2.0],), None),
])
def test_intervals_reject_bad_input(fn, args, match):
    if match is None:
        with pytest.raises(ValueError, match="n_boot|method"):
            fn(*args, n_boot=5) if fn is bootstrap_interval else fn(*args, method="median")
    else:
        with pytest.raises(ValueError, match=match):
            fn(*args)


def test_t_interval_known_values():
    # mean 2, sd 1, n 3: half width t_{0.975, 2} / sqrt(3) = 4.302653 / 1.732051
    m, lo, hi = t_interval([1.0, 2.0, 3.0])
    assert m == pytest.approx(2.0)
    assert hi - m == pytest.approx(4.302653 / np.sqrt(3), rel=1e-6)
    assert m - lo == pytest.approx(hi - m)


def _coverage(interval, n, sims, rng, true=0.3):
    hits = 0
    for _ in range(sims):
        x = true + rng.normal(0, 1.0, n)
        _, lo, hi = interval(x)
        hits += lo <= true <= hi
    return hits / sims


def test_t_interval_covers_95_percent_even_with_three_seeds():
    sims = 4000
    cov = _coverage(t_interval, 3, sims, np.random.default_rng(1))
    assert abs(cov - 0.95) < 3 * np.sqrt(0.95 * 0.05 / sims)


def test_bootstrap_covers_95_percent_with_many_seeds_and_far_less_with_three():
    sims = 600
    rng = np.random.default_rng(2)
    many = _coverage(lambda x: bootstrap_interval(x, n_boot=1000, seed=rng), 60, sims, rng)
    # the percentile bootstrap of a mean under-covers by about 1/n at n = 60: allow 3 binomial sd below
    assert abs(many - 0.95) < 3 * np.sqrt(0.95 * 0.05 / sims) + 0.01
    few = _coverage(lambda x: bootstrap_interval(x, n_boot=1000, seed=rng), 3, sims, rng)
    assert few < 0.85, "with three seeds the percentile bootstrap should cover far less than 95 %"


def test_paired_interval_removes_the_shared_seed_effect():
    rng = np.random.default_rng(3)
    seed_effect = rng.normal(0, 1.0, 10)  # a large per-seed offset shared by both conditions
    a = seed_effect + 0.1 + rng.normal(0, 0.01, 10)
    b = seed_effect + rng.normal(0, 0.01, 10)
    _, lo, hi = paired_t_interval(a, b)
    assert lo > 0.05 and hi < 0.15
    _, lo_u, hi_u = t_interval(a)
    assert hi_u - lo_u > 10 * (hi - lo)
    _, blo, bhi = paired_bootstrap_interval(a, b, seed=0)
    assert 0.05 < blo < bhi < 0.15


def test_decide_returns_effect_interval_and_word():
    out = decide([0.5, 0.6, 0.55, 0.52], [0.1, 0.12, 0.09, 0.11])
    assert out["verdict"] == "yes" and out["n_seeds"] == 4
    assert out["effect_lo"] < out["effect"] < out["effect_hi"]
    assert decide([0.5, 0.6, 0.55, 0.52], [0.1, 0.12, 0.09, 0.11], direction=-1)["verdict"] == "no"
    assert decide([0.0, 0.01, -0.01, 0.005], margin=0.05)["verdict"] == "no"
    assert decide([0.3, -0.2, 0.1], margin=0.05)["verdict"] == "not resolved"
