"""posteval.metrics.verdicts: the verdict rule, negation, all_of, margins, Holm, and the rankings
built on Measurements (best_of against every candidate, lower, unbeaten, ranking flips)."""

import numpy as np
import pytest

from tests.conftest import replicated_measurements
from posteval.metrics.intervals import Measurements
from posteval.metrics.verdicts import (NOT_RESOLVED, VERDICTS, all_of, best_of, beyond_margin, holm, lower, negate,
                                       ranking_flips, ranks_above_all, unbeaten, verdict, within_margin)


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


def test_negate_all_of_and_margins():
    assert [negate(w) for w in VERDICTS] == ["no", "yes", NOT_RESOLVED]
    for lo, hi in [(0.1, 0.2), (-0.2, -0.1), (-0.1, 0.1)]:  # the opposite claim is the negation
        assert verdict(lo, hi, direction=-1) == negate(verdict(lo, hi, direction=1))
    assert all_of("yes", "yes") == "yes"
    assert all_of("yes", "no", "not resolved") == "no"
    assert all_of("yes", "not resolved") == "not resolved"
    assert beyond_margin(0.2, 0.5, 0.1) == "yes" and beyond_margin(-0.5, -0.2, 0.1) == "yes"
    assert beyond_margin(-0.05, 0.08, 0.1) == "no"
    assert beyond_margin(0.05, 0.3, 0.1) == "not resolved"
    assert within_margin(-0.05, 0.08, 0.1) == "yes" and within_margin(0.2, 0.5, 0.1) == "no"
    assert within_margin(0.05, 0.3, 0.1) == "not resolved"


def test_holm_known_values_and_order():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.2, 0.001]), [0.2, 0.002])
    np.testing.assert_allclose(holm([0.5, 0.5, 0.5]), [1.0, 1.0, 1.0])  # capped at 1
    out = holm([0.01, np.nan, 0.02])  # NaN: not tested, and not counted in the family
    assert np.isnan(out[1]) and out[[0, 2]] == pytest.approx([0.02, 0.02])
    assert holm([]).size == 0
    # against the definition: p~_(j) = max_{i <= j} min(1, (k - i + 1) p_(i))
    p = np.random.default_rng(0).uniform(0, 0.2, 12)
    order = np.argsort(p)
    want = np.empty(12)
    want[order] = np.maximum.accumulate(np.minimum(1.0, (12 - np.arange(12)) * p[order]))
    np.testing.assert_allclose(holm(p), want)
    assert np.all(holm(p) >= p)


@pytest.mark.parametrize("call, match", [
    (lambda: verdict(0.2, 0.1), "lo"), (lambda: verdict(np.nan, 0.1), "finite"),
    (lambda: verdict(0.0, 0.1, direction=0), "direction"), (lambda: verdict(0.0, 0.1, margin=-1), "margin"),
    (lambda: verdict(0.0, 0.1, margin=np.inf), "margin"),
    (lambda: negate("maybe"), "word"), (lambda: all_of(), "at least one"), (lambda: all_of("maybe"), "among"),
    (lambda: beyond_margin(0, 1, -1), "margin"), (lambda: beyond_margin(1, 0, 0.1), "lo"),
    (lambda: within_margin(0, np.inf, 0.1), "finite"),
    (lambda: holm(np.ones((2, 2))), "1-D"), (lambda: holm([0.1, 1.5]), r"\[0, 1\]"),
    (lambda: holm([-0.1]), r"\[0, 1\]"),
    (lambda: best_of(Measurements(event_scores={"crps": {"a": np.ones(5)}}), "crps", ["a"]), "two candidates"),
    (lambda: lower(Measurements(event_scores={"crps": {"a": np.ones(5)}}), "rmse", "a", "a"), "not measured"),
    (lambda: lower(Measurements(event_scores={"crps": {"a": np.ones(5)}}), "crps", "a", "b"), "model 'b'"),
])
def test_bad_input_is_a_value_error_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------------------------
# rankings
# ---------------------------------------------------------------------------------------------
def test_best_of_resolves_only_a_lead_over_every_candidate():
    rng = np.random.default_rng(5)
    clear = Measurements(event_scores={"crps": {"a": rng.normal(0.0, 1, (2000, 3)),
                                                "b": rng.normal(1.0, 1, (2000, 3))}})
    assert best_of(clear, "crps", ["a", "b"]) == ("a", "yes")
    tied = Measurements(event_scores={"crps": {"a": rng.normal(0.0, 1, (2000, 3)), "b": rng.normal(0.0, 1, (2000, 3))}})
    assert best_of(tied, "crps", ["a", "b"])[1] == "not resolved"
    # the leader against EVERY other candidate: far ahead of the runner-up is not enough when a
    # third candidate ties with it (the runner-up check alone would say "yes")
    e = rng.normal(0.0, 1, 2000)
    three = Measurements(event_scores={"crps": {"a": e[:, None] + rng.normal(0, 0.05, (2000, 3)),
                                                "b": e[:, None] + 0.001 + rng.normal(0, 0.05, (2000, 3)),
                                                "c": e[:, None] + 1.0 + rng.normal(0, 0.05, (2000, 3))}})
    assert lower(three, "crps", "a", "c") == "yes"
    assert best_of(three, "crps", ["a", "c"]) == ("a", "yes")
    assert best_of(three, "crps", ["a", "b", "c"])[1] == "not resolved"
    # per-seed values with an untrained model given once
    per_seed = Measurements(seed_values={"cov": {"a": np.array([1.0, 1.1, 0.9]), "b": np.array([1.05, 0.95, 1.1]),
                                                 "c": np.array([5.0])}})
    assert best_of(per_seed, "cov", ["a", "b", "c"]) == ("a", "not resolved")
    assert lower(per_seed, "cov", "a", "c") == "yes"


def test_rankings_follow_clear_differences_and_leave_ties_unresolved():
    m = replicated_measurements({"good": 0.5, "twin": 0.5, "bad": 4.0})
    candidates = ["good", "twin", "bad"]
    iv = m.difference("rmse", "good", "bad")
    assert iv.hi < 0 and lower(m, "rmse", "good", "bad") == "yes"
    assert lower(m, "rmse", "bad", "good") == "no"
    assert lower(m, "rmse", "good", "twin") == "not resolved"
    assert unbeaten(m, "rmse", candidates) == ["good", "twin"]
    assert ranks_above_all(m, "rmse", "good", candidates) == "not resolved"
    assert ranks_above_all(m, "rmse", "bad", candidates) == "no"
    # the same metric cannot flip against itself; the worst model is never an RMSE leader
    assert ranking_flips(m, "rmse", "mae", candidates) == "not resolved"
    assert best_of(m, "rmse", candidates)[1] == "not resolved"
    assert best_of(m, "rmse", ["good", "bad"]) == ("good", "yes")


def test_ranking_flips_when_the_pointwise_leader_loses_the_distributional_score():
    rng = np.random.default_rng(6)
    e = rng.normal(size=(3000, 1))
    near, far = (e + rng.normal(0, 0.05, (3000, 3)), e + 0.5 + rng.normal(0, 0.05, (3000, 3)))
    scores = {"rmse": {"point": near, "sampler": far}, "crps": {"point": far + 0.01, "sampler": near - 0.01}}
    m = Measurements(event_scores=scores)
    assert ranking_flips(m, "rmse", "crps", ["point", "sampler"]) == "yes"
    assert ranking_flips(m, "rmse", "rmse", ["point", "sampler"]) == "no"
