"""posteval.metrics.intervals: the one interval type and its three rules, checked against known
answers and by simulation (coverage at 3 and 5 seeds, seed-, event-dominated and mixed designs;
a shared test set; the Student-t limit), the p-values as the intervals' duals, intervals inside the
statistic's range, and Measurements (the rule-2 inputs, bootstrap replicates of chi^2 and of coverage:
tests/metrics/test_spectrum.py, tests/metrics/test_coverage.py)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.conftest import replicated_measurements
from posteval.metrics import bootstrap_means, chi2_spectrum, chi2_spectrum_replicates
from posteval.metrics.intervals import (MIN_SEEDS_EQUIVALENCE, Interval, Measurements, combine_estimates,
                                        event_interval, paired_event_interval, paired_seed_interval, replicate_interval,
                                        replicates_to_resolve, required_seeds, seed_interval, stack_seeds)
from posteval.metrics.report import replicate_row


Z = stats.norm.ppf(0.975)


def _scores(rng, n, n_seeds, seed_sd, event_sd, own_sd):
    """Per-event scores (events, seeds), true mean 0: T_s (training) + e_i (a test event shared by
    every seed) + u_is (seed-specific event noise, e.g. each seed's own Monte-Carlo samples)."""
    return (rng.normal(0, seed_sd, n_seeds)[None, :] + rng.normal(0, event_sd, n)[:, None]
            + rng.normal(0, own_sd, (n, n_seeds)))


# ---------------------------------------------------------------------------------------------
# rule 1 (event means) and rule 2 (bootstrap replicates): coverage by simulation
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n_seeds, seed_sd, event_sd, own_sd", [
    (3, 0.1, 0.1, 0.1),    # training dominates (seed sd 0.1 vs event sd of the mean 0.007)
    (3, 0.0, 1.0, 0.3),    # the test set dominates
    (3, 0.007, 0.1, 0.1),  # both alike (training sd of the mean 0.004, event sd 0.007)
    (5, 0.05, 1.0, 0.5),
])
def test_replicate_interval_covers_at_its_level(n_seeds, seed_sd, event_sd, own_sd):
    rng = np.random.default_rng(0)
    trials, hits = 400, 0
    for k in range(trials):
        scores = _scores(rng, 200, n_seeds, seed_sd, event_sd, own_sd)
        iv = replicate_interval(scores.mean(axis=0), bootstrap_means(scores, n_resamples=200, seed=k))
        hits += iv.lo <= 0 <= iv.hi
    # 400 trials: binomial sd 0.011 around 0.95; the rule may over-cover (it counts the
    # seed-specific event noise twice) but must not under-cover
    assert 0.92 <= hits / trials <= 0.995


@pytest.mark.parametrize("n_seeds, seed_sd, event_sd", [(3, 1.0, 1.0), (3, 0.0, 1.0), (3, 1.0, 0.0), (5, 0.3, 1.0)])
def test_event_interval_covers_at_its_level(n_seeds, seed_sd, event_sd):
    rng = np.random.default_rng(1)
    hits = [(lambda iv: iv.lo <= 0 <= iv.hi)(event_interval(_scores(rng, 200, n_seeds, seed_sd, event_sd, 0.1)))
            for _ in range(600)]
    assert 0.92 <= np.mean(hits) <= 0.995


def test_rule_one_and_its_bootstrap_branch_agree():
    """The analytic rule 1 and rule 2 on bootstrap means of the same scores are one rule."""
    scores = _scores(np.random.default_rng(2), 4000, 3, 0.05, 1.0, 0.3)
    a = event_interval(scores)
    b = replicate_interval(scores.mean(axis=0), bootstrap_means(scores, n_resamples=4000, seed=0))
    assert a.estimate == pytest.approx(b.estimate)
    assert a.seed_var == pytest.approx(b.seed_var)
    assert a.event_var == pytest.approx(b.event_var, rel=0.1)
    assert (a.lo, a.hi) == pytest.approx((b.lo, b.hi), abs=0.1 * (a.hi - a.lo))


def test_ignoring_the_seed_would_undercover():
    """With a seed effect, an interval of the seed-averaged events alone misses far more often."""
    rng = np.random.default_rng(2)
    combined, events_only = [], []
    for _ in range(400):
        s = _scores(rng, 200, 3, 1.0, 1.0, 0.1)
        iv = event_interval(s)
        combined.append(iv.lo <= 0 <= iv.hi)
        _, lo, hi = event_interval(s.mean(axis=1))
        events_only.append(lo <= 0 <= hi)
    assert np.mean(events_only) < 0.8 < np.mean(combined)


def test_a_shared_test_set_is_not_averaged_away():
    """With no training variance, the interval is the event interval of one seed, not 1/sqrt(S) of it."""
    rng = np.random.default_rng(1)
    e = rng.normal(0, 1, 500)
    scores = np.repeat(e[:, None], 4, axis=1) + rng.normal(0, 1e-9, (500, 4))
    want = 2 * Z * e.std() / np.sqrt(500)
    iv = replicate_interval(scores.mean(axis=0), bootstrap_means(scores, n_resamples=2000, seed=2))
    assert iv.event_sd == pytest.approx(e.std() / np.sqrt(500), rel=0.1)
    assert iv.hi - iv.lo == pytest.approx(want, rel=0.1)
    iv = event_interval(scores)
    assert iv.hi - iv.lo == pytest.approx(want, rel=0.01)


def test_training_dominated_limit_is_the_student_t_interval():
    values = np.array([0.3, 0.5, 0.45])
    iv = replicate_interval(values, np.tile(values, (50, 1)))  # no event variance at all
    half = stats.t.ppf(0.975, 2) * values.std(ddof=1) / np.sqrt(3)
    assert (iv.lo, iv.hi) == pytest.approx((values.mean() - half, values.mean() + half))
    assert (iv.lo, iv.hi) == pytest.approx(tuple(seed_interval(values))[1:])
    assert iv.n_seeds == 3 and iv.event_var == pytest.approx(0.0, abs=1e-20)
    # the same limit through rule 1: every event has the same score within a seed
    ev = event_interval(np.tile(values, (40, 1)))
    assert (ev.lo, ev.hi) == pytest.approx((iv.lo, iv.hi))


def test_one_seed_is_the_normal_event_interval():
    x = np.random.default_rng(3).normal(size=500)
    mean, lo, hi = event_interval(x)
    assert mean == pytest.approx(x.mean())
    assert hi - mean == pytest.approx(Z * x.std(ddof=1) / np.sqrt(500), rel=1e-9)
    assert event_interval(x).n_seeds == 1 and event_interval(x).seed_var == 0


def test_one_seed_of_replicates_is_centred_on_the_estimate_with_the_replicates_spread():
    """A resample repeats events, which shifts a chi^2-like statistic up: the replicates give the
    spread, the estimate the centre (a percentile interval would sit above the estimate)."""
    reps = 1.0 + np.random.default_rng(4).gamma(2.0, 0.5, size=(999, 1))  # shifted up by about 1
    iv = replicate_interval([1.0], reps, transform="log")
    half = Z * np.log(reps[:, 0]).std(ddof=1)
    assert (iv.lo, iv.hi) == pytest.approx((np.exp(-half), np.exp(half)))
    assert iv.n_seeds == 1 and iv.seed_var == 0
    assert iv.lo < 1.0 < iv.hi < np.quantile(reps, 0.975)


def test_paired_broadcasts_a_seed_independent_model():
    rng = np.random.default_rng(4)
    a, b = rng.normal(1.0, 1.0, (300, 3)), rng.normal(0.0, 1.0, 300)
    assert paired_event_interval(a, b) == event_interval(a - b[:, None])
    assert paired_event_interval(a, b).estimate == pytest.approx(a.mean() - b.mean())  # a - b
    with pytest.raises(ValueError, match="pair seed by seed"):
        paired_event_interval(a, rng.normal(size=(300, 2)))
    with pytest.raises(ValueError, match="same events"):
        paired_event_interval(a, rng.normal(size=(299, 3)))


# ---------------------------------------------------------------------------------------------
# rule 3 (seeds with their own test events)
# ---------------------------------------------------------------------------------------------
def test_seed_interval_known_values():
    # mean 2, sd 1, n 3: half width t_{0.975, 2} / sqrt(3) = 4.302653 / 1.732051
    m, lo, hi = seed_interval([1.0, 2.0, 3.0])
    assert m == pytest.approx(2.0)
    assert hi - m == pytest.approx(4.302653 / np.sqrt(3), rel=1e-6)
    assert m - lo == pytest.approx(hi - m)
    assert tuple(seed_interval([2.0, 2.0, 2.0])) == (2.0, 2.0, 2.0)  # an untrained model is exact


def test_seed_interval_covers_95_percent_even_with_three_seeds():
    sims = 4000
    x = 0.3 + np.random.default_rng(1).normal(0, 1.0, (sims, 3))
    cov = np.mean([(lambda iv: iv.lo <= 0.3 <= iv.hi)(seed_interval(row)) for row in x])
    assert abs(cov - 0.95) < 3 * np.sqrt(0.95 * 0.05 / sims)


def test_paired_seed_interval_removes_the_shared_seed_effect():
    rng = np.random.default_rng(3)
    seed_effect = rng.normal(0, 1.0, 10)  # a large per-seed offset shared by both conditions
    a = seed_effect + 0.1 + rng.normal(0, 0.01, 10)
    b = seed_effect + rng.normal(0, 0.01, 10)
    _, lo, hi = paired_seed_interval(a, b)
    assert 0.05 < lo < hi < 0.15
    _, lo_u, hi_u = seed_interval(a)
    assert hi_u - lo_u > 10 * (hi - lo)
    assert paired_seed_interval(a, 0.0) == seed_interval(a)  # a single value pairs with every seed


# ---------------------------------------------------------------------------------------------
# planning: required_seeds, replicates_to_resolve
# ---------------------------------------------------------------------------------------------
def test_required_seeds_matches_the_interval_rule():
    s = required_seeds(0.02, 0.001, 0.01)
    half = lambda k: np.hypot(stats.t.ppf(0.975, k - 1) * 0.02 / np.sqrt(k), Z * 0.001)  # noqa: E731
    assert half(s) <= 0.01 < half(s - 1)
    assert required_seeds(0.02, 0.01, 0.01) is None  # the test set alone is too noisy
    assert required_seeds(0.02, 0.001, 0.01, level=0.8) < s


def test_replicates_to_resolve_names_a_count_or_a_larger_test_set():
    def iv(est, seed_sd, event_sd, s=3):
        return Interval(est, est - 0.02, est + 0.02, 0.95, seed_sd**2 / s, event_sd**2, s, 1000)

    assert replicates_to_resolve(iv(0.01, 0.02, 0.001), 0.0, 0.0) == f"{required_seeds(0.02, 0.001, 0.01)} replicates"
    assert replicates_to_resolve(iv(0.001, 0.0, 0.01), 0.0, 0.0) == "a larger test set"
    # the nearer verdict is "within the margin": never fewer than the seeds an equivalence needs
    assert replicates_to_resolve(iv(0.0, 0.001, 0.0001), 0.0, 0.05) == f"{MIN_SEEDS_EQUIVALENCE} replicates"


# ---------------------------------------------------------------------------------------------
# p-values are the intervals' duals
# ---------------------------------------------------------------------------------------------
def _intervals_of_every_rule(rng, level):
    """(name, interval) of every rule and transform, on noisy data around 1 (positive, and below 1
    for the logit ones)."""
    s3 = 1.0 + _scores(rng, 300, 3, 0.05, 0.5, 0.2)
    frac = rng.uniform(size=(400, 3)) < 0.3 + rng.normal(0, 0.02, 3)
    v = rng.gamma(20.0, 0.05, 4)
    reps = v * rng.gamma(50.0, 0.02, (300, 1))
    return [
        ("rule 1, one seed", event_interval(s3[:, 0], level=level)),
        ("rule 1, 3 seeds", event_interval(s3, level=level)),
        ("rule 1, log", event_interval(s3 + 1.0, level=level, transform="log")),
        ("rule 1, logit", event_interval(frac.astype(float), level=level, transform="logit")),
        ("rule 2, S = 1", replicate_interval(v[:1], reps[:, :1], level=level)),
        ("rule 2, S = 4", replicate_interval(v, reps, level=level)),
        ("rule 2, log", replicate_interval(v, reps, level=level, transform="log")),
        ("rule 2, logit", replicate_interval(v / 3, reps / 3, level=level, transform="logit")),
        ("rule 3", seed_interval(v, level=level)),
        ("rule 3, log", seed_interval(v, level=level, transform="log")),
    ]


@pytest.mark.parametrize("level", [0.8, 0.95])
def test_two_sided_p_below_one_minus_level_exactly_when_the_interval_excludes_the_null(level):
    rng = np.random.default_rng(5)
    for name, iv in _intervals_of_every_rule(rng, level):
        width = iv.hi - iv.lo
        nulls = np.linspace(iv.lo - width, iv.hi + width, 241)
        if iv.transform == "log":
            nulls = nulls[nulls > 0]
        if iv.transform == "logit":
            nulls = nulls[(nulls > 0) & (nulls < 1)]
        nulls = nulls[(np.abs(nulls - iv.lo) > 1e-9 * width) & (np.abs(nulls - iv.hi) > 1e-9 * width)]
        for null in nulls:
            p = iv.p_value(null)
            assert (p < 1 - level) == (not iv.lo <= null <= iv.hi), (name, null, p, iv)
        # at a bound the p-value is 1 - level (the interval just reaches it)
        assert iv.p_value(iv.lo) == pytest.approx(1 - level, rel=1e-6), name
        assert iv.p_value(iv.hi) == pytest.approx(1 - level, rel=1e-6), name
        assert iv.at_level(level) == pytest.approx((iv.lo, iv.hi)), name


def test_one_sided_p_values_halve_the_two_sided_one_on_the_side_of_the_estimate():
    iv = event_interval(1.0 + np.random.default_rng(6).normal(size=(300, 3)))
    for null in (iv.lo, iv.estimate - 0.01, iv.estimate + 0.3):
        two, greater, less = (iv.p_value(null, alt) for alt in ("two-sided", "greater", "less"))
        assert greater + less == pytest.approx(1.0)
        assert min(greater, less) == pytest.approx(two / 2)
        assert (greater < less) == (iv.estimate > null)
    assert iv.p_value(iv.estimate) == 1.0


def test_p_value_where_one_part_has_no_variance():
    """Rule 3 (no event part) and an untrained model's identical seeds (no seed part) give finite
    p-values: the part without variance adds nothing, also at the level p_value searches near 1."""
    rule3 = seed_interval([1.0, 1.1, 0.9])
    half = stats.t.ppf(0.975, 2) * 0.1 / np.sqrt(3)
    assert rule3.p_value(1.0 - half) == pytest.approx(0.05, rel=1e-6)
    assert rule3.p_value(0.0) == pytest.approx(2 * stats.t.sf(1.0 / (0.1 / np.sqrt(3)), 2), rel=1e-6)
    oracle = replicate_interval([1.0, 1.0, 1.0], 1.0 + 0.01 * np.random.default_rng(0).normal(size=(100, 3)))
    assert oracle.seed_var == 0 and oracle.n_seeds == 3
    assert oracle.p_value(oracle.lo) == pytest.approx(0.05, rel=1e-6)
    assert 0 < oracle.p_value(0.9) < 1e-12


def test_p_value_of_an_interval_without_noise():
    iv = event_interval(np.ones((10, 1)))
    assert (iv.lo, iv.hi) == (1.0, 1.0)
    assert iv.p_value(1.0) == 1.0 and iv.p_value(0.5) == 0.0


# ---------------------------------------------------------------------------------------------
# intervals inside the statistic's range
# ---------------------------------------------------------------------------------------------
def _chi2_ndf(rng, n, k, shift_sd, n_seeds, n_resamples, seed):
    """chi2/ndf of S seeds' samples against one test set (the events shared by the seeds), and
    its paired event-bootstrap replicates (B, S)."""
    truth = rng.normal(size=n)
    values, reps = [], []
    for shift in rng.normal(0, shift_sd, n_seeds):
        pred = rng.normal(shift, 1.0, n)
        chi2, ndf = chi2_spectrum(pred, truth, bins=k)
        values.append(chi2 / ndf)
        reps.append(chi2_spectrum_replicates(pred, truth, bins=k, n_resamples=n_resamples, seed=seed))
    return np.array(values), np.stack(reps, axis=1)


def test_log_scale_keeps_a_chi2_interval_positive_where_the_identity_does_not():
    rng = np.random.default_rng(0)
    v, r = _chi2_ndf(rng, 1000, 10, 0.02, 3, 200, 0)
    lin = replicate_interval(v, r)
    log = replicate_interval(v, r, transform="log")
    assert lin.lo <= 0 < log.lo < log.estimate < log.hi  # the case a symmetric interval gets wrong
    assert log.estimate == lin.estimate
    for trial in range(200):  # and never below zero on the log scale
        v = rng.chisquare(rng.integers(2, 20), 3) / 10 + 1e-3
        r = v * rng.chisquare(9, (100, 1)) / 9
        assert replicate_interval(v, r, transform="log").lo > 0
        assert seed_interval(v, transform="log").lo > 0


def test_logit_scale_stays_inside_zero_and_one():
    rng = np.random.default_rng(8)
    for _ in range(200):
        p = rng.uniform(0.001, 0.05)
        hits = (rng.uniform(size=(300, 3)) < p).astype(float)
        hits[0] = 1.0  # at least one hit per seed, so the mean lies inside (0, 1)
        iv = event_interval(hits, transform="logit")
        assert 0 < iv.lo < iv.estimate < iv.hi < 1
        iv = event_interval(1 - hits, transform="logit")
        assert 0 < iv.lo < iv.hi < 1
    # a rare hit whose rate differs between seeds: 1, 1 and 6 hits in 300 events
    hits = np.zeros((300, 3))
    hits[:1, 0] = hits[:1, 1] = hits[:6, 2] = 1.0
    assert event_interval(hits).lo < 0 < event_interval(hits, transform="logit").lo
    assert event_interval(1 - hits).hi > 1 > event_interval(1 - hits, transform="logit").hi


def test_log_scale_chi2_interval_covers_at_its_level():
    """chi2/ndf of samplers whose seeds shift the distribution a little: the log-scale rule-2
    interval of the seed mean holds the expected chi2/ndf (measured on 4,000 independent designs)."""
    rng = np.random.default_rng(9)
    n, k, shift_sd, s = 600, 8, 0.05, 3
    truth_value = np.mean([_chi2_ndf(rng, n, k, shift_sd, 1, 2, 0)[0][0] for _ in range(4000)])
    trials = 400
    hits = 0
    for t in range(trials):
        v, r = _chi2_ndf(rng, n, k, shift_sd, s, 100, t)
        iv = replicate_interval(v, r, transform="log")
        hits += iv.lo <= truth_value <= iv.hi
    assert hits / trials >= 0.92


# ---------------------------------------------------------------------------------------------
# stacking seeds and Measurements
# ---------------------------------------------------------------------------------------------
def test_stack_seeds_keeps_one_column_for_an_untrained_model():
    a = np.random.default_rng(3).normal(size=10)
    assert stack_seeds([a, a.copy(), a.copy()]).shape == (10, 1)
    assert stack_seeds([a, a + 1, a]).shape == (10, 3)
    with pytest.raises(ValueError, match="per_seed"):
        stack_seeds([a, a[:5]])


def test_measurements_pick_the_rule_of_the_metric():
    rng = np.random.default_rng(3)
    seeds, n = 3, 200
    a = rng.normal(1.0, 0.3, size=(n, seeds))
    b = a + 0.5 + rng.normal(0, 0.05, size=(n, seeds))
    va, vb = np.array([1.0, 1.1, 0.9]), np.array([2.0, 2.2, 2.1])
    ra, rb = va + rng.normal(0, 0.01, (50, 3)), vb + rng.normal(0, 0.01, (50, 3))
    m = Measurements(event_scores={"crps": {"a": a, "b": b}}, replicated={"chi2": {"a": (va, ra), "b": (vb, rb)}},
                     seed_values={"cov": {"a": va, "b": vb}}, transforms={"chi2": "log"})
    assert m.difference("crps", "a", "b") == paired_event_interval(a, b)
    assert m.difference("cov", "a", "b") == seed_interval(va - vb)
    assert m.difference("chi2", "a", "b") == replicate_interval(va - vb, ra - rb)  # differences: identity scale
    assert m.value("chi2", "a") == replicate_interval(va, ra, transform="log")
    assert m.value("crps", "b") == event_interval(b)
    assert m.estimate("cov", "b") == pytest.approx(vb.mean())
    assert m.difference("crps", "a", "b").estimate < 0  # a - b
    assert m.metrics == ["crps", "chi2", "cov"] and m.models("chi2") == ["a", "b"]
    with pytest.raises(ValueError, match="metric 'rmse': not measured"):
        m.difference("rmse", "a", "b")
    with pytest.raises(ValueError, match="model 'c'"):
        m.value("crps", "c")
    with pytest.raises(ValueError, match="two ways"):
        Measurements(event_scores={"crps": {"a": a}}, seed_values={"crps": {"a": va}})
    with pytest.raises(ValueError, match="transform"):
        Measurements(event_scores={"crps": {"a": a}}, transforms={"crps": "sqrt"})


SEEDS = [0, 1, 2]


def _replicated(means):
    """Measurements of a replicated protocol table, with RMSE on the log scale and the CRPS ratio to
    the oracle derived per seed and resample."""
    def crps_ratio(measured, model):
        return combine_estimates(np.divide, measured.replicated["crps"][model], measured.replicated["crps"]["oracle"])

    return replicated_measurements(means, transforms={"rmse": "log"}, derived={"crps_ratio": crps_ratio})


def test_rows_of_trained_and_untrained_models():
    assert replicate_row("flow", 2) == "flow #2"
    assert replicate_row("oracle", 2) == "oracle"
    m = _replicated({"a": 1.0, "oracle": 1.0})
    v, b = m.replicated["rmse"]["oracle"]
    assert v.shape == (3,) and b.shape == (300, 3) and np.ptp(v) == 0
    iv = m.value("rmse", "oracle")
    assert iv.seed_var == 0 and 0 < iv.lo < iv.estimate < iv.hi  # the test-event part alone, log scale
    with pytest.raises(ValueError, match="no rows"):
        Measurements.from_replicated_table(pd.DataFrame({"rmse": [1.0]}, index=["a #0"]), {"rmse": np.ones((5, 1))},
                                           lambda m: [replicate_row(m, r) for r in SEEDS], ["a"])
    with pytest.raises(ValueError, match="replicates"):
        Measurements.from_replicated_table(pd.DataFrame({"rmse": [1.0]}, index=["a #0"]), {"rmse": np.ones((5, 2))},
                                           lambda m: ["a #0"], ["a"])


def test_ratio_and_combined_estimates_stay_paired():
    m = _replicated({"a": 1.0, "oracle": 1.0})
    v, b = m.replicated["crps_ratio"]["a"]
    va, ba = m.replicated["crps"]["a"]
    vo, bo = m.replicated["crps"]["oracle"]
    np.testing.assert_allclose(v, va / vo)
    np.testing.assert_allclose(b, ba / bo)
    v2, b2 = combine_estimates(np.subtract, (va, ba), (va, ba))
    assert not v2.any() and not b2.any()
    with pytest.raises(ValueError, match="at least one"):
        combine_estimates(np.subtract)


# ---------------------------------------------------------------------------------------------
# bad input: a ValueError that names the problem
# ---------------------------------------------------------------------------------------------
_S = np.random.default_rng(10).normal(size=(50, 3))


_V, _R = np.array([1.0, 1.2, 0.9]), 1.0 + 0.1 * np.random.default_rng(11).normal(size=(40, 3))


_IV = event_interval(_S + 3.0)


@pytest.mark.parametrize("call, match", [
    (lambda: event_interval(np.zeros((4, 2, 2))), "events,"),
    (lambda: event_interval(np.ones((1, 3))), "at least 2 events"),
    (lambda: event_interval(np.where(_S > 2, np.nan, _S)), "NaN"),
    (lambda: event_interval(_S, level=1.5), "level"),
    (lambda: event_interval(_S, level=0.0), "level"),
    (lambda: event_interval(_S, transform="sqrt"), "transform"),
    (lambda: event_interval(_S - 5.0, transform="log"), "outside the range"),
    (lambda: event_interval(_S.astype(complex)), "scores"),
    (lambda: paired_event_interval(_S, _S[:10]), "same events"),
    (lambda: paired_event_interval(_S, _S[:, :2]), "pair seed by seed"),
    (lambda: replicate_interval(_V, _R[:, :2]), "replicates: expected"),
    (lambda: replicate_interval(_V, _R[:1]), "B >= 2"),
    (lambda: replicate_interval(_V, np.where(_R > 1.1, np.inf, _R)), "replicates: contains NaN"),
    (lambda: replicate_interval([1.0, np.nan, 2.0], _R), "values: contains NaN"),
    (lambda: replicate_interval(_V - 1.0, _R, transform="log"), "range"),
    (lambda: replicate_interval(_V, _R, level=95), "level"),
    (lambda: replicate_interval(np.ones((3, 1)), _R), "one value per seed"),
    (lambda: seed_interval([]), "at least 1"),
    (lambda: seed_interval([1.0, np.nan]), "NaN"),
    (lambda: seed_interval(np.ones((2, 2))), "one value per seed"),
    (lambda: seed_interval([0.5, 1.5], transform="logit"), "range"),
    (lambda: paired_seed_interval([1, 2, 3], [1, 2]), "pair seed by seed"),
    (lambda: required_seeds(-0.1, 0.0, 0.1), "seed_sd"),
    (lambda: required_seeds(0.1, np.nan, 0.1), "event_sd"),
    (lambda: required_seeds(0.1, 0.0, 0.0), "half_width"),
    (lambda: required_seeds(0.1, 0.0, 0.1, level=2), "level"),
    (lambda: replicates_to_resolve(event_interval(_S + 3.0, transform="log"), 0.0, 0.1), "identity"),
    (lambda: _IV.p_value(np.nan), "null"),
    (lambda: _IV.p_value(0.0, "bigger"), "alternative"),
    (lambda: event_interval(_S + 3.0, transform="log").p_value(-1.0), "outside the range"),
    (lambda: _IV.at_level(1.0), "level"),
    (lambda: Measurements(event_scores={"crps": {"a": _S}}, level=1.5), "level"),
    (lambda: Measurements(event_scores={"crps": {"a": _S}}).value("crps", "a", level=-0.1), "level"),
])
def test_bad_input_is_a_value_error_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# a variance part of zero adds nothing, also where its quantile is infinite (level -> 1 in p_value)
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


# ---------------------------------------------------------------------------------------------
# Monte Carlo and chi-square p-values (issue 41: their one home)
# ---------------------------------------------------------------------------------------------
def test_monte_carlo_pvalue_is_one_plus_k_over_one_plus_b_and_never_zero():
    from posteval.metrics.intervals import monte_carlo_pvalue

    b = 999
    k = np.arange(b + 1)
    p = monte_carlo_pvalue(k, b)
    assert np.array_equal(p, (k + 1) / (b + 1))  # the formula, bit for bit
    assert p.min() == 1 / (b + 1) and p.max() == 1.0 and np.all((p > 0) & (p <= 1))
    assert monte_carlo_pvalue(0, b) == 1 / (b + 1) and isinstance(monte_carlo_pvalue(0, b), float)
    assert monte_carlo_pvalue(np.int64(24), 999) == (1 + 24) / (1 + 999)


def test_monte_carlo_pvalue_is_exact_under_the_null():
    """Observed and B null statistics exchangeable: P(p <= u) <= u, with equality at u = j / (B + 1)."""
    from posteval.metrics.intervals import monte_carlo_pvalue

    rng = np.random.default_rng(41)
    b, reps = 19, 20_000
    stats_ = rng.normal(size=(reps, b + 1))
    k = (stats_[:, 1:] >= stats_[:, :1]).sum(axis=1)
    p = monte_carlo_pvalue(k, b)
    for j in (1, 2, 5, 10):
        assert np.mean(p <= j / (b + 1)) == pytest.approx(j / (b + 1), abs=0.01)


@pytest.mark.parametrize("k, b, name", [(-1, 10, "n_at_least_as_extreme"), (11, 10, "n_at_least_as_extreme"),
                                        (2.0, 10, "n_at_least_as_extreme"), (np.array([1, 12]), 10,
                                                                             "n_at_least_as_extreme"),
                                        (np.array([], int), 10, "n_at_least_as_extreme"), (0, 0, "n_resamples"),
                                        (0, 10.0, "n_resamples"), (True, 10, "n_at_least_as_extreme")])
def test_monte_carlo_pvalue_refuses_bad_counts(k, b, name):
    from posteval.metrics.intervals import monte_carlo_pvalue

    with pytest.raises(ValueError, match=name):
        monte_carlo_pvalue(k, b)


def test_bootstrap_pvalue_is_the_monte_carlo_pvalue_of_each_tail():
    from posteval.metrics.intervals import bootstrap_pvalue, monte_carlo_pvalue

    rep = np.random.default_rng(3).normal(0.4, 1.0, size=(300, 4))
    old = np.minimum(1.0, 2.0 * np.minimum((np.sum(rep <= 0, axis=0) + 1) / 301, (np.sum(rep >= 0, axis=0) + 1) / 301))
    assert np.array_equal(bootstrap_pvalue(rep), old)
    assert bootstrap_pvalue(rep[:, 0]) == float(old[0])
    assert monte_carlo_pvalue(np.sum(rep <= 0, axis=0), 300).shape == (4,)


def test_chi2_pvalue_is_scipys_upper_tail():
    from posteval.metrics.intervals import chi2_pvalue

    for stat, ndf in [(0.0, 1), (3.2, 1), (25.0, 19), (np.float64(180.5), np.int64(150)), (1e4, 3)]:
        assert chi2_pvalue(stat, ndf) == float(stats.chi2.sf(stat, ndf))
    assert chi2_pvalue(2.0, 2) == pytest.approx(np.exp(-1.0), rel=1e-14)
    for stat, ndf, name in [(-1.0, 3, "stat"), (np.nan, 3, "stat"), (np.inf, 3, "stat"), ([1.0, 2.0], 3, "stat"),
                            ("1", 3, "stat"), (True, 3, "stat"), (1.0, 0, "ndf"), (1.0, 2.5, "ndf")]:
        with pytest.raises(ValueError, match=name):
            chi2_pvalue(stat, ndf)


def test_binomial_tail_pvalue_is_the_doubled_smaller_tail_capped_at_one():
    from posteval.metrics.intervals import binomial_tail_pvalue

    k, grid = np.arange(51)[:, None], np.array([0.1, 0.5, 0.9])
    old = 2 * np.minimum(stats.binom.cdf(k, 50, grid), stats.binom.sf(k - 1, 50, grid))
    p = binomial_tail_pvalue(k, 50, grid)
    assert np.array_equal(p, np.minimum(old, 1.0)) and p.shape == (51, 3) and np.all((p > 0) & (p <= 1))
    assert binomial_tail_pvalue(0, 10, 0.5) == 2 * 0.5**10 and binomial_tail_pvalue(5, 10, 0.5) == 1.0
    for args, name in [((-1, 10, 0.5), "count"), ((11, 10, 0.5), "count"), ((1.5, 10, 0.5), "count"),
                       ((1, 0, 0.5), "n"), ((1, 10, 1.5), "p"), ((1, 10, "a"), "p"), ((1, 10, np.nan), "p")]:
        with pytest.raises(ValueError, match=name):
            binomial_tail_pvalue(*args)


def test_binomial_band_is_the_equal_tailed_binomial_range_and_refuses_bad_input():
    from scipy import stats

    from posteval.metrics.intervals import binomial_band

    lo, hi = binomial_band(200, [0.1, 0.5, 0.9], 0.1)
    assert np.array_equal(lo, stats.binom.ppf(0.05, 200, [0.1, 0.5, 0.9]) / 200)
    assert np.array_equal(hi, stats.binom.ppf(0.95, 200, [0.1, 0.5, 0.9]) / 200)
    assert np.all(lo <= hi)
    for kwargs, name in ((dict(n=0, p=0.5, alpha=0.05), "n"), (dict(n=10, p=1.5, alpha=0.05), "p"),
                         (dict(n=10, p=0.5, alpha=0.0), "alpha")):
        with pytest.raises(ValueError, match=name):
            binomial_band(**kwargs)


def test_normal_half_width_is_z_times_the_standard_error():
    from posteval.metrics.intervals import normal_half_width

    assert normal_half_width(4.0, 100, 0.95) == pytest.approx(1.959964 * 0.2, rel=1e-6)
    assert normal_half_width(-1e-18, 10) == 0.0  # rounding below zero counts as no variance
    with pytest.raises(ValueError, match="n"):
        normal_half_width(1.0, 0)
