"""posteval.metrics.replicates: replicated models on one test set, with known answers."""

import numpy as np
import pandas as pd
import pytest

from posteval import metrics
from posteval.metrics.replicates import (ReplicatedReport, combine_estimates, local_coverage_error_replicates,
                                    replicate_row, replicates_to_resolve)
from posteval.metrics.seeds import SeedEventInterval

SEEDS = [0, 1, 2]


def _report(means, *, n=2000, seed=0, n_boot=300):
    """A replicated protocol table of per-event squared errors with the given model means."""
    rng = np.random.default_rng(seed)
    inputs = {}
    truth = rng.normal(size=n)
    for name, mu in means.items():
        for r in ([None] if name == "oracle" else SEEDS):
            inputs[replicate_row(name, r)] = truth + rng.normal(scale=np.sqrt(mu), size=n) + 0.001 * (r or 0)
    table, reps = metrics.protocol_report(inputs, truth, ci=0.95, n_boot=n_boot, seed=seed, replicates=True)
    return ReplicatedReport(table.set_index("model"), reps, SEEDS)


def test_rows_of_trained_and_untrained_models():
    assert replicate_row("flow", 2) == "flow #2"
    assert replicate_row("oracle", 2) == "oracle"
    rep = _report({"a": 1.0, "oracle": 1.0})
    assert rep.rows("oracle") == ["oracle"] * 3
    v, b = rep.estimate("rmse", "oracle")
    assert v.shape == (3,) and b.shape[1] == 3 and np.ptp(v) == 0
    with pytest.raises(ValueError, match="no rows"):
        rep.rows("missing")
    with pytest.raises(ValueError, match="metric"):
        rep.estimate("nonsense", "a")


def test_rankings_follow_clear_differences_and_leave_ties_unresolved():
    rep = _report({"good": 0.5, "twin": 0.5, "bad": 4.0})
    candidates = ["good", "twin", "bad"]
    iv, word = rep.above("rmse", "good", "bad")
    assert word == "yes" and iv.lo > 0
    assert rep.above("rmse", "bad", "good")[1] == "no"
    assert rep.above("rmse", "good", "twin")[1] == "not resolved"
    assert rep.unbeaten("rmse", candidates) == ["good", "twin"]
    assert rep.ranks_above_all("rmse", "good", candidates) == "not resolved"
    assert rep.ranks_above_all("rmse", "bad", candidates) == "no"
    # the same metric cannot flip against itself; the worst model is never an RMSE leader
    assert rep.ranking_flips("rmse", "mae", candidates) == "not resolved"


def test_ratio_and_combined_estimates_stay_paired():
    rep = _report({"a": 1.0, "oracle": 1.0})
    rep.ratios = {"crps_ratio": ("crps", "oracle")}
    v, b = rep.estimate("crps_ratio", "a")
    va, ba = rep.estimate("crps", "a")
    vo, bo = rep.estimate("crps", "oracle")
    np.testing.assert_allclose(v, va / vo)
    np.testing.assert_allclose(b, ba / bo)
    v2, b2 = combine_estimates(np.subtract, (va, ba), (va, ba))
    assert not v2.any() and not b2.any()


def test_local_coverage_error_of_exact_intervals_is_small_and_of_bad_ones_large():
    rng = np.random.default_rng(1)
    n, x = 4000, rng.uniform(size=4000)
    good = [rng.uniform(size=n) < 0.8 for _ in SEEDS]
    bad = [np.where(x < 0.5, True, rng.uniform(size=n) < 0.6) for _ in SEEDS]
    vg, bg = local_coverage_error_replicates(good, x, nominal=0.8, bins=4, n_boot=200, seed=0)
    vb, _ = local_coverage_error_replicates(bad, x, nominal=0.8, bins=4, n_boot=200, seed=0)
    assert vg.shape == (3,) and bg.shape == (200, 3)
    assert vg.max() < 0.05 and vb.min() > 0.15
    with pytest.raises(ValueError, match="boolean"):
        local_coverage_error_replicates([x], x, nominal=0.8)
    with pytest.raises(ValueError, match="nominal"):
        local_coverage_error_replicates(good, x, nominal=1.2)


def test_interval_hits_match_the_coverage_curves():
    rng = np.random.default_rng(2)
    truth = rng.normal(size=3000)
    samples = truth[:, None] * 0 + rng.normal(size=(3000, 64))
    hits = metrics.central_interval_hits(samples, truth, 0.8)
    assert hits.mean() == pytest.approx(metrics.coverage_curve(samples, truth, [0.8])[0])
    cal_t, test_pred = rng.normal(size=2000), np.zeros(3000)
    conf = metrics.conformal_interval_hits(np.zeros(2000), cal_t, test_pred, truth, 0.8)
    assert abs(conf.mean() - 0.8) < 0.03
    with pytest.raises(ValueError, match="level"):
        metrics.central_interval_hits(samples, truth, 1.0)
    with pytest.raises(ValueError, match="point predictions"):
        metrics.conformal_interval_hits(np.zeros((2000, 4)), cal_t, np.zeros((3000, 4)), truth, 0.8)


def test_replicates_to_resolve_names_a_count_or_a_larger_test_set():
    assert replicates_to_resolve(SeedEventInterval(0.01, -0.01, 0.03, 0.02, 0.001, 3), 0.0, 0.0).endswith("replicates")
    assert replicates_to_resolve(SeedEventInterval(0.001, -0.01, 0.012, 0.0, 0.01, 3), 0.0, 0.0) == "a larger test set"


def test_coverage_error_replicates_match_the_protocol_and_pair_the_events():
    from posteval.metrics import coverage_curve, coverage_error
    from posteval.metrics.replicates import coverage_error_replicates

    rng = np.random.default_rng(0)
    n, m = 2000, 64
    truth = rng.normal(size=(n, 2))
    calibrated = rng.normal(size=(n, m, 2))
    narrow = 0.5 * rng.normal(size=(n, m, 2))
    values, reps = coverage_error_replicates([calibrated, narrow], truth, n_boot=300, seed=1)
    for v, s in zip(values, (calibrated, narrow)):
        assert v == pytest.approx(float(np.mean(coverage_error(coverage_curve(s, truth)))), abs=1e-12)
    assert reps.shape == (300, 2)
    lo, hi = np.percentile(reps[:, 1] - reps[:, 0], [2.5, 97.5])
    assert lo > 0.1  # the over-confident sampler is worse on every resample
    one_d, _ = coverage_error_replicates([calibrated[..., 0]], truth[:, 0], n_boot=10)
    assert one_d[0] == pytest.approx(float(coverage_error(coverage_curve(calibrated[..., 0], truth[:, 0]))))
    with pytest.raises(ValueError, match="list of sample arrays"):
        coverage_error_replicates(calibrated, truth)
