"""posteval.metrics.coverage: PIT, coverage curves, conformal intervals, the noise floor, local coverage."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posteval import metrics
from posteval.metrics.coverage import coverage_error_replicates, local_coverage_error_replicates
from posteval.metrics.intervals import replicate_interval


def test_pit_of_a_point_mass_at_the_truth_is_one_half():
    y = np.array([0.3, -1.0])
    assert np.all(metrics.pit(np.repeat(y[:, None], 5, axis=1), y) == 0.5)


def test_calibrated_sampler_is_on_the_diagonal(rng):
    n, m = 20000, 100
    y = rng.normal(size=n)
    cov = metrics.coverage_curve(rng.normal(size=(n, m)), y)
    levels = metrics.DEFAULT_LEVELS
    # binomial sampling error of a proportion at n events, plus the discreteness of m samples
    tol = 4 * np.sqrt(levels * (1 - levels) / n) + 1.0 / m
    assert np.all(np.abs(cov - levels) < tol)


def test_overdispersed_sampler_is_above_and_overconfident_below(rng):
    n = 5000
    y = rng.normal(size=n)
    wide = metrics.coverage_curve(2.0 * rng.normal(size=(n, 100)), y)
    narrow = metrics.coverage_curve(0.5 * rng.normal(size=(n, 100)), y)
    inner = slice(1, -1)
    assert np.all(wide[inner] > metrics.DEFAULT_LEVELS[inner])
    assert np.all(narrow[inner] < metrics.DEFAULT_LEVELS[inner])
    assert metrics.coverage_error(narrow) > 0.2


def test_conformal_point_predictor_reaches_nominal_coverage(rng):
    cal_t, test_t = rng.normal(size=5000), rng.normal(size=5000)
    out = metrics.conformal_coverage_curve(np.zeros(5000), cal_t, np.zeros(5000), test_t, [0.5, 0.9])
    assert out["coverage"] == pytest.approx([0.5, 0.9], abs=0.03)
    assert out["width"] == pytest.approx(2 * stats.norm.ppf([0.75, 0.95]), rel=0.08)


def test_conformal_recalibrates_an_overconfident_sampler(rng):
    def draw(n):
        y = rng.normal(size=n)
        return 0.3 * rng.normal(size=(n, 200)), y

    cal_s, cal_t = draw(4000)
    test_s, test_t = draw(4000)
    raw = metrics.coverage_curve(test_s, test_t, [0.8])
    conf = metrics.conformal_coverage_curve(cal_s, cal_t, test_s, test_t, [0.8])
    assert raw[0] < 0.5
    assert conf["coverage"][0] == pytest.approx(0.8, abs=0.03)


def test_conformal_handles_point_mass_samples_without_overflow(rng):
    """Events whose samples all coincide (a single solution) get finite scores and widths."""
    n = 2000

    def draw():
        y = rng.normal(size=n)
        s = rng.normal(size=(n, 50))
        s[: n // 2] = rng.normal(size=(n // 2, 1))  # half the events: one repeated value
        return s, y

    (cs, ct), (ts, tt) = draw(), draw()
    with np.errstate(all="raise"):
        out = metrics.conformal_coverage_curve(cs, ct, ts, tt, [0.5, 0.9])
    assert np.all(np.isfinite(out["width"]))
    assert out["coverage"] == pytest.approx([0.5, 0.9], abs=0.04)


# ---------------------------------------------------------------------------------------------
# coverage: tie-broken conformal, noise floor, local coverage
# ---------------------------------------------------------------------------------------------
def test_conformal_exact_posterior_sampler_is_nominal_at_every_level(rng):
    n, m = 20000, 64

    def draw():
        y = rng.normal(size=n)
        return rng.normal(size=(n, m)), y

    (cs, ct), (ts, tt) = draw(), draw()
    levels = metrics.DEFAULT_LEVELS
    cov = metrics.conformal_coverage_curve(cs, ct, ts, tt, levels, seed=4)["coverage"]
    # binomial noise of the test set and of the calibration quantile
    tol = 4 * np.sqrt(levels * (1 - levels) * (1 / n + 1 / n))
    assert np.all(np.abs(cov - levels) < tol), np.max(np.abs(cov - levels) / tol)


def test_noise_floor_matches_a_direct_simulation(rng):
    n, m, repeats = 1000, 16, 300
    direct = [metrics.coverage_error(metrics.coverage_curve(rng.normal(size=(n, m)), rng.normal(size=n)))
              for _ in range(repeats)]
    floor = metrics.coverage_noise_floor(n, m, n_resamples=repeats, seed=2)
    assert floor.errors.shape == (repeats, 1)
    assert stats.ks_2samp(direct, floor.errors[:, 0]).pvalue > 0.01
    assert floor.q50 < floor.q95 <= floor.q95_max
    # m-discreteness: even infinitely many events leave the expected coverage off the diagonal
    assert metrics.coverage_noise_floor(10**7, m, n_resamples=20, seed=2).q50 > 0.02


def test_local_coverage_known_bins():
    x = np.arange(100.0)
    covered = pd.DataFrame({"a": x >= 50, "b": np.ones(100, dtype=bool)})
    out = metrics.local_coverage(covered, x, bins=2)
    np.testing.assert_array_equal(out["a"].values, [0.0, 1.0])
    np.testing.assert_array_equal(out["b"].values, [1.0, 1.0])
    assert len(out) == 2 and float(out.index[0]) < 50 < float(out.index[1])


def test_coverage_band_holds_a_perfect_sampler_and_its_discreteness():
    n, m, repeats = 300, 9, 400
    levels = np.array([0.1, 0.5, 0.9])
    lo, hi = metrics.coverage_band(n, levels, m_samples=m)
    rng = np.random.default_rng(3)
    dev = np.stack([metrics.coverage_curve(rng.normal(size=(n, m)), rng.normal(size=n), levels) - levels
                    for _ in range(repeats)])
    inside = np.mean((dev >= lo - 1e-12) & (dev <= hi + 1e-12), axis=0)
    assert np.all(inside[1:] >= 0.93) and np.all(inside[1:] < 1.0)
    # with m = 9 no rank lies within the central interval of level 0.1 (coverage 0, a band of one
    # point at -0.1), and level 0.5 holds ranks 3..6, 4 of 10: the band is centred on -0.1, not zero
    assert lo[0] == hi[0] == pytest.approx(-0.1) and np.all(dev[:, 0] == pytest.approx(-0.1))
    assert hi[1] < 0.0 and np.mean(dev[:, 1]) == pytest.approx(-0.1, abs=0.01)
    c_lo, c_hi = metrics.coverage_band(n, levels)  # continuous intervals: binomial noise only
    half = 1.96 * np.sqrt(levels * (1 - levels) / n)
    np.testing.assert_allclose(c_hi, half, atol=2 / n)
    np.testing.assert_allclose(c_lo, -half, atol=2 / n)
    with pytest.raises(ValueError, match="n_events"):
        metrics.coverage_band(0, levels)
    with pytest.raises(ValueError, match="level"):
        metrics.coverage_band(n, levels, level=1.5)


SEEDS = [0, 1, 2]


def test_coverage_error_replicates_equal_the_coverage_error_and_pair_the_events():
    rng = np.random.default_rng(0)
    n, m = 2000, 64
    truth = rng.normal(size=(n, 2))
    calibrated = rng.normal(size=(n, m, 2))
    narrow = 0.5 * rng.normal(size=(n, m, 2))
    values, reps = coverage_error_replicates([calibrated, narrow], truth, n_resamples=300, seed=1)
    for v, s in zip(values, (calibrated, narrow)):
        assert v == pytest.approx(float(np.mean(metrics.coverage_error(metrics.coverage_curve(s, truth)))), abs=1e-12)
    assert reps.shape == (300, 2)
    lo, hi = np.percentile(reps[:, 1] - reps[:, 0], [2.5, 97.5])
    assert lo > 0.1  # the over-confident sampler is worse on every resample
    one_d, _ = coverage_error_replicates([calibrated[..., 0]], truth[:, 0], n_resamples=10)
    assert one_d[0] == pytest.approx(float(metrics.coverage_error(metrics.coverage_curve(calibrated[..., 0],
                                                                                          truth[:, 0]))))
    with pytest.raises(ValueError, match="list of sample arrays"):
        coverage_error_replicates(calibrated, truth)
    # into rule 2 on the log scale: a positive interval of a positive statistic
    iv = replicate_interval(values[1:], reps[:, 1:], transform="log")
    assert 0 < iv.lo < values[1] < iv.hi


def test_local_coverage_error_of_exact_intervals_is_small_and_of_bad_ones_large():
    rng = np.random.default_rng(1)
    n, x = 4000, rng.uniform(size=4000)
    good = [rng.uniform(size=n) < 0.8 for _ in SEEDS]
    bad = [np.where(x < 0.5, True, rng.uniform(size=n) < 0.6) for _ in SEEDS]
    vg, bg = local_coverage_error_replicates(good, x, nominal=0.8, bins=4, n_resamples=200, seed=0)
    vb, _ = local_coverage_error_replicates(bad, x, nominal=0.8, bins=4, n_resamples=200, seed=0)
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
