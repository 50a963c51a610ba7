"""Intervals over seeds and test events (coverage by simulation, known limits), verdict words table."""

import numpy as np
import pytest
from scipy import stats

from posteval import book
from posteval.claims import claims_frame, record_claim
from posteval.metrics import bootstrap_means
from posteval.metrics.seeds import required_seeds, seed_replicate_interval, verdict_two_sided
from posteval.metrics.verdicts import t_interval


def _simulated_coverage(n_seeds, seed_sd, event_sd, own_sd, *, trials=400, n=200, n_boot=200, seed=0):
    """Fraction of trials whose interval holds the true mean 0: per-event scores
    T_s (training) + e_i (shared test event) + u_is (seed-specific event noise)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for k in range(trials):
        scores = (rng.normal(0, seed_sd, n_seeds)[None, :] + rng.normal(0, event_sd, n)[:, None]
                  + rng.normal(0, own_sd, (n, n_seeds)))
        reps = bootstrap_means(scores, n_boot=n_boot, seed=k)
        iv = seed_replicate_interval(scores.mean(axis=0), reps)
        hits += iv.lo <= 0 <= iv.hi
    return hits / trials


@pytest.mark.parametrize("n_seeds, seed_sd, event_sd, own_sd", [
    (3, 0.1, 0.1, 0.1),   # training dominates (seed sd 0.1 vs event sd of the mean 0.007)
    (3, 0.0, 1.0, 0.3),   # test set dominates
    (3, 0.007, 0.1, 0.1),  # both alike (training sd of the mean 0.004, event sd 0.007)
    (5, 0.05, 1.0, 0.5),
])
def test_seed_event_interval_covers_at_its_level(n_seeds, seed_sd, event_sd, own_sd):
    cover = _simulated_coverage(n_seeds, seed_sd, event_sd, own_sd)
    # 400 trials: binomial sd 0.011 around 0.95; the rule may over-cover (it counts the
    # seed-specific event noise twice) but must not under-cover
    assert 0.92 <= cover <= 0.995


def test_a_shared_test_set_is_not_averaged_away():
    """With no training variance, the interval is the event interval of one seed, not 1/sqrt(S) of it."""
    rng = np.random.default_rng(1)
    e = rng.normal(0, 1, 500)
    scores = np.repeat(e[:, None], 4, axis=1) + rng.normal(0, 1e-9, (500, 4))
    reps = bootstrap_means(scores, n_boot=2000, seed=2)
    iv = seed_replicate_interval(scores.mean(axis=0), reps)
    assert iv.event_sd == pytest.approx(e.std() / np.sqrt(500), rel=0.1)
    assert iv.hi - iv.lo == pytest.approx(2 * 1.96 * e.std() / np.sqrt(500), rel=0.1)


def test_training_dominated_limit_is_the_student_t_interval():
    values = np.array([0.3, 0.5, 0.45])
    reps = np.tile(values, (50, 1))  # no event variance at all
    iv = seed_replicate_interval(values, reps)
    _, lo, hi = t_interval(values)
    assert (iv.lo, iv.hi) == pytest.approx((lo, hi))
    assert iv.n_seeds == 3


@pytest.mark.parametrize("values, reps, match", [
    ([0.1], np.zeros((5, 1)), "at least 2 seeds"),
    ([0.1, 0.2], np.zeros((5, 3)), "replicates"),
    ([0.1, np.nan], np.zeros((5, 2)), "finite"),
])
def test_seed_event_interval_rejects_bad_input(values, reps, match):
    with pytest.raises(ValueError, match=match):
        seed_replicate_interval(values, reps)


def test_required_seeds_matches_the_interval_rule():
    s = required_seeds(0.02, 0.001, 0.01)
    half = lambda k: np.hypot(stats.t.ppf(0.975, k - 1) * 0.02 / np.sqrt(k), 1.96 * 0.001)  # noqa: E731
    assert half(s) <= 0.01 < half(s - 1)
    assert required_seeds(0.02, 0.01, 0.01) is None  # the test set alone is too noisy
    with pytest.raises(ValueError, match="half_width"):
        required_seeds(0.02, 0.001, 0.0)


@pytest.mark.parametrize("lo, hi, margin, want", [
    (0.1, 0.2, 0.0, "yes"), (-0.2, -0.1, 0.0, "yes"), (-0.01, 0.01, 0.02, "no"), (-0.1, 0.1, 0.02, "not resolved"),
])
def test_verdict_two_sided(lo, hi, margin, want):
    assert verdict_two_sided(lo, hi, margin=margin) == want


def test_claims_frame_collects_words_and_refuses_numbers(monkeypatch):
    monkeypatch.setattr(book, "_recorded", {})
    assert record_claim("a_above_b", "yes") == "yes"
    book.record("best.crps", "flow")
    book.record("crps.flow", 0.4)
    frame = claims_frame()
    assert frame["verdict"].to_dict() == {"best.crps": "flow", "claim.a_above_b": "yes"}
    with pytest.raises(ValueError, match="claim"):
        record_claim("c", "maybe")
    book.record("claim.number", 1.0)
    with pytest.raises(ValueError, match="number"):
        claims_frame()


def test_chi2_replicates_are_the_chi2_of_the_resampled_events():
    from posteval.metrics import bootstrap_weights, chi2_spectrum, chi2_spectrum_replicates

    rng = np.random.default_rng(3)
    t = rng.normal(size=300)
    p = t + rng.normal(0, 0.5, 300)
    reps = chi2_spectrum_replicates(p, t, bins=10, n_boot=4, seed=7)
    edges = np.quantile(np.concatenate([p, t]), np.linspace(0, 1, 11))
    for w, rep in zip(next(bootstrap_weights(300, n_boot=4, seed=7)), reps):
        idx = np.repeat(np.arange(300), w.astype(int))
        chi2, ndf = chi2_spectrum(p[idx], t[idx], bins=edges)
        assert rep == pytest.approx(chi2 / ndf)
    with pytest.raises(ValueError, match="one prediction per event"):
        chi2_spectrum_replicates(p[:10], t, bins=10)


def _iv(lo, hi, seed_sd=0.01, n_seeds=3):
    from posteval.metrics.seeds import SeedEventInterval

    return SeedEventInterval((lo + hi) / 2, lo, hi, seed_sd, 0.001, n_seeds)


@pytest.mark.parametrize("iv, kwargs, want", [
    (_iv(0.1, 0.2), {}, "yes"),
    (_iv(-0.2, -0.1), {}, "no"),                                        # the other side excluded: no at any S
    (_iv(-0.01, 0.01), dict(margin=0.02), "not resolved"),               # equivalence needs 5 seeds when seeds vary
    (_iv(-0.01, 0.01, n_seeds=5), dict(margin=0.02), "no"),
    (_iv(-0.01, 0.01, seed_sd=0.0), dict(margin=0.02), "no"),            # no training variance (a fixed referee)
    (_iv(1.01, 1.02), dict(boundary=1.03, direction=-1), "yes"),         # below a target
    (_iv(-0.01, 0.01), dict(margin=0.02, two_sided=True), "not resolved"),
    (_iv(-0.3, -0.1), dict(two_sided=True), "yes"),
])
def test_verdict_over_seeds(iv, kwargs, want):
    from posteval.metrics.seeds import verdict_over_seeds

    assert verdict_over_seeds(iv, **kwargs) == want
