"""Intervals over seeds and events, and verdict words built on them (posteval.metrics.seed_event)."""

import numpy as np
import pytest

from posteval.metrics.seed_event import (all_of, best_of, beyond_margin, paired_seed_event_interval, seed_event_interval,
                                   seed_t_interval)


def _draw(rng, n_seeds, n, seed_sd, event_sd):
    """Per-event scores: a shared event effect, a per-seed offset and per-(seed, event) noise; true mean 0."""
    return rng.normal(0, seed_sd, (n_seeds, 1)) + rng.normal(0, event_sd, (1, n)) + rng.normal(0, 0.1, (n_seeds, n))


@pytest.mark.parametrize("seed_sd, event_sd", [(1.0, 1.0), (0.0, 1.0), (1.0, 0.0)])
def test_interval_covers_at_its_level(seed_sd, event_sd):
    rng = np.random.default_rng(1)
    hits = [lo <= 0 <= hi for lo, hi in (seed_event_interval(_draw(rng, 3, 200, seed_sd, event_sd))[1:] for _ in range(600))]
    assert 0.92 <= np.mean(hits) <= 0.995


def test_ignoring_the_seed_would_undercover():
    """With a seed effect, an events-only interval misses far more often than the combined one."""
    rng = np.random.default_rng(2)
    combined, events_only = [], []
    for _ in range(400):
        s = _draw(rng, 3, 200, 1.0, 1.0)
        combined.append(seed_event_interval(s)[1] <= 0 <= seed_event_interval(s)[2])
        _, lo, hi = seed_event_interval(s.mean(axis=0))
        events_only.append(lo <= 0 <= hi)
    assert np.mean(events_only) < 0.8 < np.mean(combined)


def test_one_seed_is_the_event_interval():
    x = np.random.default_rng(3).normal(size=500)
    mean, lo, hi = seed_event_interval(x)
    assert mean == pytest.approx(x.mean())
    assert hi - mean == pytest.approx(1.96 * x.std(ddof=1) / np.sqrt(500), rel=0.01)


def test_paired_broadcasts_a_seed_independent_model():
    rng = np.random.default_rng(4)
    a, b = rng.normal(1.0, 1.0, (3, 300)), rng.normal(0.0, 1.0, 300)
    assert paired_seed_event_interval(a, b) == seed_event_interval(a - b[None])
    with pytest.raises(ValueError, match="pair seed by seed"):
        paired_seed_event_interval(a, rng.normal(size=(2, 300)))
    with pytest.raises(ValueError, match="same events"):
        paired_seed_event_interval(a, rng.normal(size=(3, 299)))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="NaN"):
        seed_event_interval([[1.0, np.nan, 2.0]])
    with pytest.raises(ValueError, match="level"):
        seed_event_interval([1.0, 2.0, 3.0], level=1.5)
    with pytest.raises(ValueError, match="shape"):
        seed_event_interval(np.zeros((2, 2, 2)))


def test_all_of():
    assert all_of("yes", "yes") == "yes"
    assert all_of("yes", "no", "not resolved") == "no"
    assert all_of("yes", "not resolved") == "not resolved"
    with pytest.raises(ValueError, match="among"):
        all_of("maybe")


def test_best_of_resolves_only_a_clear_lead():
    rng = np.random.default_rng(5)
    clear = {"a": rng.normal(0.0, 1, (3, 2000)), "b": rng.normal(1.0, 1, (3, 2000))}
    assert best_of(clear) == ("a", "b", "yes")
    tied = {"a": rng.normal(0.0, 1, (3, 2000)), "b": rng.normal(0.0, 1, (3, 2000))}
    assert best_of(tied)[2] == "not resolved"
    per_seed = {"a": [1.0, 1.1, 0.9], "b": [1.05, 0.95, 1.1], "c": 5.0}
    leader, runner, word = best_of(per_seed, paired="seed")
    assert (leader, word) == ("a", "not resolved") and runner == "b"
    assert best_of({"x": 1.0, "y": 2.0}, paired="seed") == ("x", "y", "yes")


def test_beyond_margin_and_seed_t():
    assert beyond_margin(0.2, 0.5, 0.1) == "yes" and beyond_margin(-0.5, -0.2, 0.1) == "yes"
    assert beyond_margin(-0.05, 0.08, 0.1) == "no"
    assert beyond_margin(0.05, 0.3, 0.1) == "not resolved"
    with pytest.raises(ValueError, match="margin"):
        beyond_margin(0, 1, -1)
    assert seed_t_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    mean, lo, hi = seed_t_interval([1.0, 2.0, 3.0])
    assert lo < mean == 2.0 < hi
