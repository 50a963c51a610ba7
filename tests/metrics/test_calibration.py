"""posteval.metrics.calibration: signed coverage whose words hold their error rates by simulation
(an exact sampler rarely gets a direction, a sampler at the fixed margin rarely "calibrated"),
TARP against the tarp package, rank histograms and spread-skill, and what each check can and
cannot see (a sampler with exact marginals and shuffled correlations)."""

import numpy as np
import pytest
from scipy import optimize, stats

from posteval.metrics import calibration as cal
from posteval.metrics._validation import DEFAULT_LEVELS, order_free_draws
from posteval.metrics.uncertainty import bootstrap_means

CHOL = np.linalg.cholesky([[1.0, 0.9], [0.9, 1.0]])


def gaussian_problem(rng, n, m, *, scale=1.0, seeds=1, d=1):
    """Posterior N(mu, 1) per dimension (correlated 0.9 when d = 2); draws scaled by ``scale``."""
    if d == 1:
        mu = rng.normal(size=n)
        truth = mu + rng.normal(size=n)
        return [mu[:, None] + scale * rng.normal(size=(n, m)) for _ in range(seeds)], truth
    mu = rng.normal(size=(n, 2))
    truth = mu + rng.normal(size=(n, 2)) @ CHOL.T
    return [mu[:, None, :] + scale * rng.normal(size=(n, m, 2)) @ CHOL.T for _ in range(seeds)], truth


def test_exact_coverage_is_the_rank_rule():
    p = cal.exact_coverage(4, [0.5, 0.99])
    # ranks 0..4, |2k/4 - 1| = 1, .5, 0, .5, 1: three of five inside 0.5 and 0.99
    np.testing.assert_allclose(p, [3 / 5, 3 / 5])


LEVELS = np.sort(DEFAULT_LEVELS)


def exact_inside(rng, n, m, seeds):
    """``inside`` (S, n, L) of an exact sampler without drawing: its truth has a posterior PIT u_i
    per event (shared by the seeds), each seed's rank of the truth is Binomial(m, u_i) (uniform on
    0..m), and the interval at level a holds the truth when |2k/m - 1| <= a."""
    return width_inside(rng, n, m, seeds, 1.0)


def width_inside(rng, n, m, seeds, scale):
    """``inside`` of a normal sampler ``scale`` times as wide as the posterior N(0, 1): given the
    truth y its rank among m draws is Binomial(m, Phi(y / scale))."""
    v = stats.norm.cdf(rng.normal(size=n) / scale)
    k = rng.binomial(m, v, size=(seeds, n))
    return (np.abs(2.0 * np.arange(m + 1) / m - 1.0)[:, None] <= LEVELS[None, :]).astype(float)[k]  # table[rank]


def deviation_of_width(scale, m):
    """The true D of that sampler, by quadrature over y."""
    y = np.linspace(-10.0, 10.0, 8001)
    k = np.arange(m + 1)
    pmf = stats.binom.pmf(k[:, None], m, stats.norm.cdf(y / scale)[None, :])
    e = (np.abs(2.0 * k / m - 1.0)[:, None] <= LEVELS[None, :]).mean(axis=1) - cal.exact_coverage(m, LEVELS).mean()
    return float(np.trapezoid(stats.norm.pdf(y) * (e @ pmf), y))


def width_for(deviation, m):
    return optimize.brentq(lambda s: deviation_of_width(s, m) - deviation, 0.3, 3.0, xtol=1e-10)


def word_rates(inside_of, m, repeats):
    words = [cal.signed_coverage_from_inside(inside_of(), m, LEVELS).verdict for _ in range(repeats)]
    return {w: words.count(w) / repeats for w in ("calibrated", "under-covers", "over-covers", "not resolved")}


def binomial_bound(p, repeats):
    return p + 3 * np.sqrt(p * (1 - p) / repeats)


@pytest.mark.parametrize("seeds", [1, 3])
def test_an_exact_sampler_gets_a_direction_word_at_most_5_percent_of_the_time(seeds):
    """(a) D = 0: "under-covers" or "over-covers" in <= 5 % of 1,200 repeats (+3 binomial sd)."""
    rng = np.random.default_rng(20 + seeds)
    repeats, n, m = 1200, 1000, 20
    rates = word_rates(lambda: exact_inside(rng, n, m, seeds), m, repeats)
    wrong = rates["under-covers"] + rates["over-covers"]
    assert wrong <= binomial_bound(0.05, repeats), rates
    assert max(rates["under-covers"], rates["over-covers"]) <= binomial_bound(0.025, repeats), rates


@pytest.mark.parametrize("deviation,seeds", [(-cal.COVERAGE_MARGIN, 1), (cal.COVERAGE_MARGIN, 1),
                                             (-cal.COVERAGE_MARGIN, 3)])
def test_a_sampler_at_the_margin_is_called_calibrated_at_most_2_5_percent(deviation, seeds):
    """(b) true |D| = margin (a normal sampler about 6 % too narrow or too wide): "calibrated" in <= 2.5 %
    of 1,000 repeats (+3 binomial sd), at a design (4,000 events, 64 draws) that resolves "calibrated"
    at D = 0 (checked alongside)."""
    m, n, repeats = 64, 4000, 1000
    scale = width_for(deviation, m)
    assert deviation_of_width(scale, m) == pytest.approx(deviation, abs=1e-9)
    assert abs(scale - 1) == pytest.approx(0.06, abs=0.005)  # what the margin means for a Gaussian
    rng = np.random.default_rng(30 + seeds)
    rates = word_rates(lambda: width_inside(rng, n, m, seeds, scale), m, repeats)
    assert rates["calibrated"] <= binomial_bound(0.025, repeats), rates
    exact = word_rates(lambda: exact_inside(rng, n, m, seeds), m, 100)
    assert exact["calibrated"] >= 0.8, exact


def test_one_draw_or_two_events_raise_before_any_work():
    """(c) m = 1: the deviation is always 0 (any sampler, 100 units off, would be "calibrated"); n = 2:
    no interval holds its level."""
    t = np.random.default_rng(0).normal(size=500)
    with pytest.raises(ValueError, match=r"m = 1 draw per event: signed coverage needs m >= 2"):
        cal.signed_coverage([t[:, None] + 100], t)
    with pytest.raises(ValueError, match=r"n = 2 test events: signed coverage needs n >= 100"):
        cal.signed_coverage([np.array([[0.0, 1.0], [0.0, 1.0]])], [0.5, 0.5])
    for inside, m in ((np.ones((1, 99, LEVELS.size)), 4), (np.zeros((1, 500, LEVELS.size)), 1)):
        res = cal.signed_coverage_from_inside(inside, m, LEVELS)  # a report's building block: a word and its reason
        assert res.verdict == "not resolved" and res.reason.startswith("n = 99 test" if m == 4 else "m = 1 draw")
    with pytest.raises(ValueError, match="margin"):
        cal.signed_coverage_from_inside(np.ones((1, 200, LEVELS.size)), 4, LEVELS, margin=0.0)
    assert cal.MIN_DRAWS_COVERAGE == 2 and cal.MIN_EVENTS_COVERAGE == 100


@pytest.mark.parametrize("n,m", [(4000, 100), (2380, 64)])
def test_a_clearly_miscalibrated_sampler_under_covers_at_the_chapters_sizes(n, m):
    """(d) 20 % too narrow (D about -0.07), chapters 2 and 3's ci designs with 3 seeds: always "under-covers"."""
    rng = np.random.default_rng(40)
    rates = word_rates(lambda: width_inside(rng, n, m, 3, 0.8), m, 200)
    assert rates["under-covers"] == 1.0, rates
    draws, truth = gaussian_problem(rng, n, m, scale=0.8, seeds=3)
    assert cal.signed_coverage(draws, truth).verdict == "under-covers"


def test_an_exact_sampler_is_calibrated_at_chapter_2s_design():
    """Chapter 2's ci test set (4,000 events, 100 draws, 3 seeds): the fixed margin is resolved for an
    exact sampler in most repeats (the operating characteristic puts it near 97 %)."""
    rng = np.random.default_rng(11)
    words = [cal.signed_coverage(*gaussian_problem(rng, 4000, 100, seeds=3)).verdict for _ in range(20)]
    assert words.count("calibrated") >= 16, words
    assert not {"under-covers", "over-covers"} & set(words) or words.count("calibrated") >= 18, words


def test_a_sampler_3_percent_too_narrow_is_within_the_margin():
    """3 % too narrow is D = -0.01, inside the 0.02 margin: at 20,000 events "calibrated", though the
    interval itself lies below 0 (the sign is seen; it is too small to matter)."""
    rng = np.random.default_rng(12)
    res = cal.signed_coverage(*gaussian_problem(rng, 20000, 100, scale=0.97))
    assert res.verdict == "calibrated" and res.hi < 0 and res.margin == cal.COVERAGE_MARGIN, res


def test_too_wide_over_covers_and_a_small_design_says_why_it_is_not_resolved():
    rng = np.random.default_rng(13)
    assert cal.signed_coverage(*gaussian_problem(rng, 3000, 64, scale=1.2)).verdict == "over-covers"
    small = cal.signed_coverage(*gaussian_problem(rng, 300, 64, seeds=3))
    assert small.verdict == "not resolved" and small.reason.startswith("too few events or draws: the interval's "
                                                                        "half-width"), small.reason
    assert (small.hi - small.lo) / 2 > small.margin
    res = cal.signed_coverage(*gaussian_problem(rng, 3000, 64))
    assert res.per_level.shape == res.levels.shape and res.lo <= res.deviation <= res.hi and res.reason == ""
    assert cal.calibration_margin(3000, 64) > cal.calibration_margin(30000, 64) > 0
    wide = cal.signed_coverage(*gaussian_problem(rng, 3000, 64), margin=0.5)
    assert wide.verdict == "calibrated" and wide.margin == 0.5


def test_min_seeds_is_deprecated_and_has_no_effect():
    rng = np.random.default_rng(18)
    draws, truth = gaussian_problem(rng, 1000, 32, seeds=3)
    with pytest.warns(DeprecationWarning, match="min_seeds no longer has an effect.*Student-t"):
        old = cal.signed_coverage(draws, truth, min_seeds=5)
    new = cal.signed_coverage(draws, truth)
    assert (old.deviation, old.lo, old.hi, old.verdict, old.reason) == (new.deviation, new.lo, new.hi, new.verdict,
                                                                          new.reason)
    inside = exact_inside(rng, 500, 16, 1)
    with pytest.warns(DeprecationWarning, match="min_seeds"):
        a = cal.signed_coverage_from_inside(inside, 16, LEVELS, min_seeds=1)
    assert a.verdict == cal.signed_coverage_from_inside(inside, 16, LEVELS).verdict


def test_deviation_scores_give_signed_coverage_and_an_equivalence_claim_says_the_same():
    """The per-event scores (events, seeds) reproduce signed_coverage's deviation and interval, and
    an equivalence Claim on them with the fixed margin gives signed_coverage's word (one rule)."""
    from posteval.metrics.claims import CALIBRATION_WORDS, Claim, evaluate_claims
    from posteval.metrics.intervals import Measurements, event_interval

    rng = np.random.default_rng(14)
    for scale, seeds in [(1.0, 5), (0.9, 3), (1.15, 1), (1.0, 3), (0.96, 1)]:
        draws, truth = gaussian_problem(rng, 3000, 64, scale=scale, seeds=seeds)
        e = cal.coverage_deviation_scores(draws, truth)
        assert e.shape == (3000, seeds)
        res = cal.signed_coverage(draws, truth)
        np.testing.assert_allclose(tuple(event_interval(e)), (res.deviation, res.lo, res.hi), rtol=1e-12)
        claim = Claim("calibrated.x", "x is calibrated", "dev", "x", direction=0, margin=cal.COVERAGE_MARGIN,
                      margin_reason="two percentage points of coverage", words=CALIBRATION_WORDS)
        word = evaluate_claims([claim], Measurements(event_scores={"dev": {"x": e}})).loc["calibrated.x", "word"]
        assert word == res.verdict, (scale, seeds, word, res.verdict)


def test_tarp_equals_the_tarp_package_at_its_alpha_grid():
    tarp = pytest.importorskip("tarp")
    rng = np.random.default_rng(14)
    samples, truth = gaussian_problem(rng, 500, 64, d=2)
    x, y = samples[0], truth
    centre, sd = y.mean(axis=0), y.std(axis=0)
    xs, ys = (x - centre) / sd, (y - centre) / sd
    refs = rng.uniform(ys.min(axis=0), ys.max(axis=0), size=ys.shape)
    ecp, alpha = tarp.get_tarp_coverage(np.moveaxis(xs, 1, 0), ys, references=refs, metric="euclidean")
    ours = cal.tarp_coverage(x, y, references=refs, alpha=alpha)
    clean = np.array([not np.any(np.isclose(ours.credibility, a)) for a in alpha])
    clean[-1] = False  # tarp's last bin is closed: 1 there, the strict fraction below max f here
    assert clean.sum() > 0.8 * len(alpha)
    np.testing.assert_allclose(ours.ecp[clean], ecp[clean], atol=1e-12)


def test_shuffled_correlations_are_caught_jointly_not_marginally():
    """Exact marginals, the 0.9 correlation destroyed: TARP and the energy rank test see it, the
    per-dimension signed coverage and rank tests do not."""
    rng = np.random.default_rng(15)
    samples, truth = gaussian_problem(rng, 5000, 64, d=2)
    exact = samples[0]
    shuffled = exact.copy()
    shuffled[:, :, 1] = rng.permuted(shuffled[:, :, 1], axis=1)
    for x, joint in ((exact, "not rejected"), (shuffled, "miscalibrated")):
        assert cal.tarp_coverage(x, truth, seed=1).verdict == joint
        ranks = cal.rank_histogram(x, truth, dim_names=["y1", "y2"], seed=1)
        assert ranks.pvalue["y1"] > 0.05 and ranks.pvalue["y2"] > 0.05
        assert (ranks.pvalue["energy"] < 0.01) == (joint == "miscalibrated"), ranks.pvalue
        for j in range(2):
            assert cal.signed_coverage([x[:, :, j]], truth[:, j]).verdict == "calibrated"


def test_spread_skill_is_one_for_an_exact_ensemble_and_below_when_too_narrow():
    rng = np.random.default_rng(16)
    exact = cal.spread_skill(*[a[0] if isinstance(a, list) else a for a in gaussian_problem(rng, 4000, 32, d=2)])
    assert exact.lo < 1 < exact.hi
    narrow = cal.spread_skill(*[a[0] if isinstance(a, list) else a for a in gaussian_problem(rng, 4000, 32, d=2,
                                                                                           scale=0.8)])
    assert narrow.hi < 1 and narrow.ratio == pytest.approx(0.8, abs=0.05)
    assert list(narrow.bins.columns) == ["spread", "rmse", "events"] and narrow.bins["events"].sum() == 4000


def test_rank_histogram_band_holds_an_exact_sampler():
    """The simultaneous ECDF band: an exact sampler's ranks fail it in about 5 % of repeats."""
    rng = np.random.default_rng(17)
    p = [cal.rank_histogram(*[a[0] if isinstance(a, list) else a for a in gaussian_problem(rng, 500, 16)], seed=k,
                            n_resamples=400).pvalue["dim0"] for k in range(40)]
    assert np.mean(np.array(p) < 0.05) <= 0.15


def test_events_to_resolve_a_narrowing_gives_the_stated_power():
    """At the number of events events_to_resolve states, a sampler 10 % too narrow (m = 16 draws)
    is called under-covers by one seed's interval in about 80 % of repeats."""
    from posteval.metrics.calibration import narrowing_deviation
    from posteval.metrics.intervals import events_to_resolve
    from posteval.metrics.intervals import event_interval

    d, sd = narrowing_deviation(0.9, 16, n_resamples=50_000, seed=1)
    n = events_to_resolve(d, sd)
    rng = np.random.default_rng(2)
    repeats, resolved = 300, 0
    for _ in range(repeats):
        truth = rng.normal(size=n)
        draws = rng.normal(scale=0.9, size=(n, 16))
        resolved += event_interval(cal.coverage_deviation_scores([draws], truth)).hi < 0
    assert abs(resolved / repeats - 0.8) < 3 * np.sqrt(0.16 / repeats) + 0.01


# ---------------------------------------------------------------------------------------------
# (value, replicates) of TARP and spread-skill: what a claims table takes per seed (issue 41)
# ---------------------------------------------------------------------------------------------
def _tarp_by_hand(samples, truth, alpha, n_resamples, seed):
    """TARP error and its replicates from the building blocks (chapter 3's former local function)."""
    centre, scale = cal.tarp_frame(truth)
    refs = cal.tarp_references(truth, centre, scale, seed=seed)
    below = cal.tarp_indicators(cal.tarp_credibility(samples, truth, refs, centre, scale), alpha)
    reps = bootstrap_means(below, n_resamples=n_resamples, seed=seed)
    return np.abs(below.mean(axis=0) - alpha).max(), np.abs(reps - alpha).max(axis=1)


def _spread_by_hand(samples, truth, n_resamples, seed):
    var, err2 = cal.spread_terms(samples, truth)
    reps = bootstrap_means(np.stack([var, err2], axis=1), n_resamples=n_resamples, seed=seed)
    return np.sqrt(var.mean() / err2.mean()), np.sqrt(reps[:, 0] / reps[:, 1])


@pytest.mark.parametrize("d, scale, seed", [(6, 1.0, 0), (6, 0.6, 3), (2, 1.3, 1)])
def test_tarp_and_spread_replicates_equal_the_building_blocks_bit_for_bit(d, scale, seed):
    rng = np.random.default_rng(20 + d)  # chapter 3's shapes: 6 components on different scales, m = 20
    mu = rng.normal(size=(500, d)) * rng.uniform(1, 100, d)
    truth = mu + rng.normal(size=(500, d)) * 20
    x = mu[:, None, :] + scale * 20 * rng.normal(size=(500, 20, d))
    alpha = np.linspace(0.0, 1.0, 21)
    value, reps = cal.tarp_error_replicates(x, truth, n_resamples=300, seed=seed)
    old_value, old_reps = _tarp_by_hand(x, truth, alpha, 300, seed)
    assert value == old_value and np.array_equal(reps, old_reps) and reps.shape == (300,)
    assert cal.tarp_error_replicates(x, truth, alpha=alpha, n_resamples=300, seed=seed)[0] == value
    value, reps = cal.spread_skill_replicates(x, truth, n_resamples=300, seed=seed)
    old_value, old_reps = _spread_by_hand(order_free_draws(x), truth, 300, seed)  # summed in the order-free order
    assert value == old_value and np.array_equal(reps, old_reps) and reps.shape == (300,)


def test_the_summaries_read_the_same_replicates():
    """tarp_coverage's error and spread_skill's ratio and intervals are those of the (value, replicates) pairs."""
    from posteval.metrics.intervals import percentile_interval

    rng = np.random.default_rng(21)
    samples, truth = gaussian_problem(rng, 400, 16, d=2, scale=0.8)
    x = samples[0]
    value, reps = cal.tarp_error_replicates(x, truth, n_resamples=200, seed=5)
    res = cal.tarp_coverage(x, truth, n_resamples=200, seed=5)
    assert res.error == value and (res.error_lo, res.error_hi) == tuple(float(v) for v in percentile_interval(reps))
    value, reps = cal.spread_skill_replicates(x, truth, n_resamples=200, seed=5)
    res = cal.spread_skill(x, truth, n_resamples=200, seed=5)
    assert res.ratio == value and (res.lo, res.hi) == tuple(float(v) for v in percentile_interval(reps))


@pytest.mark.parametrize("f", ["tarp_error_replicates", "spread_skill_replicates"])
@pytest.mark.parametrize("change, name", [
    (lambda x, t: (x[:, :, 0], t), "samples"),            # 2-D samples for a 2-D truth
    (lambda x, t: (x, t[:-1]), "samples"),                # another number of events
    (lambda x, t: (np.where(x > 2.5, np.nan, x), t), "samples"),
    (lambda x, t: (x, np.full_like(t, np.inf)), "truth"),
    (lambda x, t: (x.astype(complex), t), "samples"),
    (lambda x, t: (x, t.astype(str)), "truth"),
])
def test_tarp_and_spread_replicates_refuse_bad_input(f, change, name):
    rng = np.random.default_rng(22)
    samples, truth = gaussian_problem(rng, 100, 8, d=2)
    with pytest.raises(ValueError, match=name):
        getattr(cal, f)(*change(samples[0], truth), n_resamples=20)


@pytest.mark.parametrize("f", ["tarp_error_replicates", "spread_skill_replicates"])
@pytest.mark.parametrize("kwargs, name", [({"n_resamples": 0}, "n_resamples"), ({"n_resamples": 2.5}, "n_resamples"),
                                          ({"seed": -1}, "seed"), ({"seed": True}, "seed")])
def test_tarp_and_spread_replicates_refuse_bad_counts(f, kwargs, name):
    rng = np.random.default_rng(23)
    samples, truth = gaussian_problem(rng, 100, 8, d=2)
    with pytest.raises(ValueError, match=name):
        getattr(cal, f)(samples[0], truth, **kwargs)


def test_tarp_alpha_and_spread_draws_are_checked():
    rng = np.random.default_rng(24)
    samples, truth = gaussian_problem(rng, 100, 8, d=2)
    with pytest.raises(ValueError, match="alpha"):
        cal.tarp_error_replicates(samples[0], truth, alpha=[0.1, np.nan])
    with pytest.raises(ValueError, match="samples"):
        cal.spread_skill_replicates(samples[0][:, :1], truth)  # one draw: no spread


def test_rank_histogram_pvalue_is_the_monte_carlo_pvalue():
    from posteval.metrics.intervals import monte_carlo_pvalue

    rng = np.random.default_rng(25)
    samples, truth = gaussian_problem(rng, 300, 20, scale=0.5)
    rh = cal.rank_histogram(samples[0], truth, n_resamples=99)
    assert rh.pvalue["dim0"] == monte_carlo_pvalue(0, 99) == 1 / 100  # far too narrow: no simulation as extreme


def test_recalibration_temperature_finds_the_width_that_makes_a_narrow_sampler_calibrated():
    """A normal sampler 20 % too narrow: the secant between T = 1 and 1.5 lands near T = 1.25, and drawing
    at that temperature gives a deviation within a tenth of the uncorrected one's size."""
    from posteval.metrics.calibration import narrowing_deviation, recalibration_temperature
    d0 = narrowing_deviation(0.8, 64, n_resamples=40_000, seed=1)[0]
    d1 = narrowing_deviation(0.8 * 1.5, 64, n_resamples=40_000, seed=2)[0]
    t = recalibration_temperature([1.0, 1.5], [d0, d1])
    assert 1.15 < t < 1.35
    after = narrowing_deviation(0.8 * t, 64, n_resamples=40_000, seed=3)[0]
    assert abs(after) < 0.1 * abs(d0), (d0, after)
    # an over-wide sampler is narrowed
    assert recalibration_temperature([1.0, 1.25], [0.03, 0.06]) < 1.0


@pytest.mark.parametrize("t, d, match", [
    ([1.0], [0.0], "two of each"),
    ([1.25, 1.0], [-0.01, 0.01], "t0 < t1"),
    ([1.0, float("nan")], [-0.01, 0.01], "t0 < t1"),
    ([1.0, 1.25], [-0.01, float("inf")], "deviations"),
    ([1.0, 1.25], [-0.01, 1.5], "deviations"),
    ([1.0, 1.25], [0.01, -0.01], "must grow with the temperature"),
    ([1.0, 1.25], [-0.10, -0.099], "outside bounds"),
])
def test_recalibration_temperature_refuses_what_it_cannot_fit(t, d, match):
    from posteval.metrics.calibration import recalibration_temperature
    with pytest.raises(ValueError, match=match):
        recalibration_temperature(t, d)
