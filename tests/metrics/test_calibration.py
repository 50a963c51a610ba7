"""posteval.metrics.calibration: signed coverage whose verdicts are calibrated by simulation,
TARP against the tarp package, rank histograms and spread-skill, and what each check can and
cannot see (a sampler with exact marginals and shuffled correlations)."""

import numpy as np
import pytest

from posteval.metrics import calibration as cal

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


def test_an_exact_sampler_is_calibrated_at_a_chapter_design():
    """Chapter 2's ci test set (4,000 events, 100 draws) with 5 seeds: >= 95 % calibrated."""
    rng = np.random.default_rng(11)
    words = [cal.signed_coverage(*gaussian_problem(rng, 4000, 100, seeds=5)).verdict for _ in range(60)]
    assert words.count("calibrated") >= 56, words  # rate 0.99 by construction; P(< 56 of 60) ~ 1e-3


def test_a_sampler_3_percent_too_narrow_under_covers_at_20000_events():
    """Power >= 0.8 needs about 20,000 events at 100 draws (at 4,000 it is about 0.4)."""
    rng = np.random.default_rng(12)
    words = [cal.signed_coverage(*gaussian_problem(rng, 20000, 100, scale=0.97), min_seeds=1).verdict
             for _ in range(30)]
    assert words.count("under-covers") >= 24, words


def test_too_wide_over_covers_and_fewer_seeds_never_say_calibrated():
    rng = np.random.default_rng(13)
    assert cal.signed_coverage(*gaussian_problem(rng, 3000, 64, scale=1.2)).verdict == "over-covers"
    assert cal.signed_coverage(*gaussian_problem(rng, 3000, 64, seeds=3)).verdict in ("not resolved", "under-covers",
                                                                                        "over-covers")
    res = cal.signed_coverage(*gaussian_problem(rng, 3000, 64), min_seeds=1)
    assert res.per_level.shape == res.levels.shape and res.lo <= res.deviation <= res.hi
    assert cal.calibration_margin(3000, 64) > cal.calibration_margin(30000, 64) > 0


def test_deviation_scores_give_signed_coverage_and_an_equivalence_claim_says_the_same():
    """The per-event scores (events, seeds) reproduce signed_coverage's deviation and interval, and
    an equivalence Claim on them with the design's margin gives signed_coverage's word."""
    from posteval.metrics.claims import CALIBRATION_WORDS, Claim, evaluate_claims
    from posteval.metrics.intervals import Measurements, event_interval

    rng = np.random.default_rng(14)
    for scale, seeds in [(1.0, 5), (0.9, 3), (1.15, 1)]:
        draws, truth = gaussian_problem(rng, 3000, 64, scale=scale, seeds=seeds)
        e = cal.coverage_deviation_scores(draws, truth)
        assert e.shape == (3000, seeds)
        res = cal.signed_coverage(draws, truth, min_seeds=min(seeds, 5))
        np.testing.assert_allclose(tuple(event_interval(e)), (res.deviation, res.lo, res.hi), rtol=1e-12)
        claim = Claim("calibrated.x", "x is calibrated", "dev", "x", direction=0, margin=res.margin,
                      margin_reason="noise floor of an exact sampler of the design", words=CALIBRATION_WORDS)
        word = evaluate_claims([claim], Measurements(event_scores={"dev": {"x": e}}),
                               min_seeds_equivalence=min(seeds, 5)).loc["calibrated.x", "word"]
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
    for x, joint in ((exact, "calibrated"), (shuffled, "miscalibrated")):
        assert cal.tarp_coverage(x, truth, seed=1).verdict == joint
        ranks = cal.rank_histogram(x, truth, dim_names=["y1", "y2"], seed=1)
        assert ranks.pvalue["y1"] > 0.05 and ranks.pvalue["y2"] > 0.05
        assert (ranks.pvalue["energy"] < 0.01) == (joint == "miscalibrated"), ranks.pvalue
        for j in range(2):
            assert cal.signed_coverage([x[:, :, j]], truth[:, j], min_seeds=1).verdict == "calibrated"


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
