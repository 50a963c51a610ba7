"""Samplers through the constraint variables: the floor's samples realise c from the marginal, seeds,
fallbacks where no c is feasible, constraint importance sampling (its weights pi / |det J| and its
concentration under a narrow prior), the candidate pairings, and errors that name the input."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from posteval.physics import dilepton as dl
from posteval.physics.constraint_sampling import (ConstraintMarginal, ConstraintSamples, GaussianNeutrinoPrior,
                                                  candidate_pairings, constraint_floor_samples, constraint_is_samples,
                                                  pairing_constraints, sample_through_constraints, toy_events)


def zeros_fallback(m):
    return lambda count, rng: np.zeros((count, m, 2, 3))


@pytest.fixture(scope="module")
def events():
    return toy_events(60, np.random.default_rng(0))


@pytest.fixture(scope="module")
def marginal():
    """The training law of c from 40 other events (small, so that membership is cheap to check)."""
    return ConstraintMarginal.fit(toy_events(40, np.random.default_rng(1)))


def true_pairing(events):
    """Index (n,) of the candidate pairing that is the truth match (toy events: jet 0 is b, jet 1 is bbar)."""
    jets, ok = candidate_pairings(events)
    truth = np.asarray(events["jet_p4"])[:, :2]
    hit = np.all(np.isclose(jets, truth[:, None]), axis=(2, 3)) & ok
    assert np.all(hit.sum(axis=1) == 1)
    return hit.argmax(axis=1)


def c_of_samples(events, samples):
    """c of every sample under every candidate pairing, (n, m, 6 pairings, 6)."""
    jets, _ = candidate_pairings(events)
    lep, met = np.asarray(events["lep_p4"]), np.asarray(events["met"])
    return dl.constraint_variables(samples[:, :, None], lep[:, None, None], jets[:, None], met[:, None, None])


def assert_realise_the_marginal(events, out, marginal, tol=1e-3):
    """Every non-fallback sample has, under one of its event's candidate pairings, the c of one marginal row."""
    c = c_of_samples(events, out.samples)[~out.fallback]  # (k, m, 6, 6)
    _, ok = candidate_pairings(events)
    ok = ok[~out.fallback][:, None, :, None]
    gap = np.abs(c[:, :, :, None, :] - marginal.values[None, None, None]).max(axis=-1)  # (k, m, 6, rows)
    best = np.where(ok, gap, np.inf).min(axis=(2, 3))
    assert best.max() < tol, f"a sample realises no c of the marginal (gap {best.max():.3g} GeV)"
    # in particular the W masses per side are the marginal's (they do not depend on the pairing)
    w = c[:, :, 0][..., [0, 2]]
    w_gap = np.abs(w[:, :, None] - marginal.values[None, None, :, [0, 2]]).max(axis=-1).min(axis=-1)
    assert w_gap.max() < tol


def test_candidate_pairings_and_their_constraints(events):
    jets, ok = candidate_pairings(events)
    n = len(events["met"])
    assert jets.shape == (n, 6, 2, 4) and ok.shape == (n, 6)
    assert np.all(ok[:, :2]) and not ok[:, 2:].any()  # two tagged jets: (0, 1) and (1, 0)
    np.testing.assert_array_equal(jets[:, 0], jets[:, 1, ::-1])
    c, logdet, n_roots = pairing_constraints(events)
    assert c.shape == (n, 6, 6) and logdet.shape == (n, 6) and n_roots.shape == (n, 6)
    assert np.all(n_roots[:, 2:] == 0) and np.all(logdet[:, 2:] == 0)
    rows, a = np.arange(n), true_pairing(events)
    assert np.all(n_roots[rows, a] >= 1)  # the true neutrinos solve their own c
    assert set(np.unique(n_roots[rows, a])) <= {1, 2, 3, 4}
    truth_c = dl.constraint_variables(events["neutrino_momenta"], events["lep_p4"], events["jet_p4"][:, :2],
                                      events["met"])
    np.testing.assert_allclose(c[rows, a], truth_c, rtol=1e-12)
    np.testing.assert_allclose(logdet[rows, a], dl.log_abs_det_jacobian(events["neutrino_momenta"], events["lep_p4"],
                                                                        events["jet_p4"][:, :2]), rtol=1e-12)
    # the wrong pairing changes the top masses, not the W masses or r
    wrong = c[rows, 1 - a]
    np.testing.assert_allclose(wrong[:, [0, 2, 4, 5]], truth_c[:, [0, 2, 4, 5]], rtol=1e-12)
    assert np.all(np.abs(wrong[:, [1, 3]] - truth_c[:, [1, 3]]).max(axis=1) > 1e-3)


def test_the_marginal_and_the_prior(events):
    marginal = ConstraintMarginal.fit(events)
    assert marginal.values.shape == (60, 6)
    draws = marginal.draw((3, 5), np.random.default_rng(0))
    assert draws.shape == (3, 5, 6)
    assert all(any(np.array_equal(d, v) for v in marginal.values) for d in draws.reshape(-1, 6))
    prior = GaussianNeutrinoPrior.fit(events)
    np.testing.assert_allclose(prior.mean, events["neutrino_momenta"].reshape(-1, 6).mean(axis=0))
    assert prior.log_pdf(events["neutrino_momenta"]).shape == (60,)
    x = events["neutrino_momenta"][:2]
    np.testing.assert_allclose(prior.log_pdf(x), multivariate_normal(prior.mean, prior.cov).logpdf(x.reshape(2, 6)))
    unmatched = dict(events, jet_truth_index=np.full((60, 2), -1))
    with pytest.raises(ValueError, match="train_events"):
        ConstraintMarginal.fit(unmatched)
    with pytest.raises(ValueError, match="train_events"):
        GaussianNeutrinoPrior.fit({k: v[:6] for k, v in events.items()})


def test_floor_samples_realise_c_from_the_marginal(events, marginal):
    out = constraint_floor_samples(events, marginal, m=12, seed=3, fallback=zeros_fallback(12))
    assert isinstance(out, ConstraintSamples)
    assert out.samples.shape == (60, 12, 2, 3) and out.fallback.shape == (60,) and out.fallback.dtype == bool
    assert 0 < out.acceptance <= 1
    assert out.fallback.mean() < 0.2
    assert_realise_the_marginal(events, out, marginal)
    assert np.all(out.samples[out.fallback] == 0.0)
    # not one draw repeated: the samples of an event differ
    spread = out.samples[~out.fallback].std(axis=1).max(axis=(1, 2))
    assert np.median(spread) > 1.0


def test_floor_samples_are_reproducible(events, marginal):
    a = constraint_floor_samples(events, marginal, m=6, seed=5, fallback=zeros_fallback(6))
    b = constraint_floor_samples(events, marginal, m=6, seed=5, fallback=zeros_fallback(6))
    c = constraint_floor_samples(events, marginal, m=6, seed=6, fallback=zeros_fallback(6))
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.fallback, b.fallback)
    assert a.acceptance == b.acceptance
    assert not np.allclose(a.samples, c.samples)


def test_impossible_marginal_falls_back_everywhere(events):
    impossible = ConstraintMarginal(np.tile([1.0, 1.0, 1.0, 1.0, 0.0, 0.0], (5, 1)))
    calls = []

    def fallback(count, rng):
        calls.append(count)
        return np.full((count, 4, 2, 3), 7.0)

    out = constraint_floor_samples(events, impossible, m=4, seed=0, fallback=fallback, rounds=2)
    assert out.fallback.all() and out.acceptance == 0.0
    assert calls == [60]
    assert np.all(out.samples == 7.0)
    is_out = constraint_is_samples(events, impossible, GaussianNeutrinoPrior.fit(events), m=4, seed=0, proposals=8,
                                   fallback=fallback)
    assert is_out.fallback.all() and is_out.acceptance == 0.0 and np.all(is_out.samples == 7.0)


def test_sample_through_constraints_fills_short_events_from_their_own_draws(events):
    """Event 0 gets m feasible draws in the first round and is not proposed for again; events 1 and 2 get
    one feasible c per round and fill their m from the roots they found. The second round proposes what
    their acceptance so far asks: 1.25 x 4 missing / (2/7) = 17.5, a power of two, at most m = 5."""
    one = {k: v[:3] for k, v in events.items()}
    a = true_pairing(one)
    truth_c = pairing_constraints(one)[0][np.arange(3), a]
    impossible = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    seen = []

    def propose(rows, k, rng):
        seen.append((rows.copy(), k))
        c = np.tile(impossible, (len(rows), k, 1))
        c[:, 0] = truth_c[rows]  # one feasible draw per round
        c[rows == 0] = truth_c[0]  # event 0: all feasible
        return np.tile(a[rows, None], (1, k)), c

    out = sample_through_constraints(one, propose, 5, 0, fallback=zeros_fallback(5), rounds=2)
    assert not out.fallback.any()
    assert [(r.tolist(), k) for r, k in seen] == [([0, 1, 2], 5), ([1, 2], 5)]
    np.testing.assert_allclose(out.acceptance, (5 + 1 + 1 + 1 + 1) / (15 + 10))
    back = c_of_samples(one, out.samples)[np.arange(3), :, a]  # (3, 5, 6) under the proposed pairing
    np.testing.assert_allclose(back[..., :4], np.broadcast_to(truth_c[:, None, :4], back[..., :4].shape), atol=1e-3)
    np.testing.assert_allclose(back[..., 4:], np.broadcast_to(truth_c[:, None, 4:], back[..., 4:].shape), atol=1e-9)


def test_importance_samples_are_reproducible_and_realise_the_marginal(events, marginal):
    prior = GaussianNeutrinoPrior.fit(toy_events(200, np.random.default_rng(2)))
    kw = dict(m=8, proposals=64, fallback=zeros_fallback(8), chunk=25)
    a = constraint_is_samples(events, marginal, prior, seed=1, **kw)
    b = constraint_is_samples(events, marginal, prior, seed=1, **kw)
    c = constraint_is_samples(events, marginal, prior, seed=2, **kw)
    assert a.samples.shape == (60, 8, 2, 3) and a.fallback.shape == (60,)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert a.acceptance == b.acceptance and 0 < a.acceptance <= 1
    assert not np.allclose(a.samples, c.samples)
    assert a.fallback.mean() < 0.1
    assert_realise_the_marginal(events, a, marginal)


def test_a_narrow_prior_around_the_truth_pulls_importance_samples_onto_it(events):
    """With pi a 1-GeV Gaussian around an event's own neutrinos and the event's true c in the marginal, the
    weights pick the true root; the floor, blind to pi, does not."""
    marginal = ConstraintMarginal.fit(events)  # holds each event's own true c
    is_dist, floor_dist = [], []
    for i in range(6):
        one = {k: v[i:i + 1] for k, v in events.items()}
        nu = events["neutrino_momenta"][i]
        prior = GaussianNeutrinoPrior(nu.reshape(6), np.eye(6))
        imp = constraint_is_samples(one, marginal, prior, m=16, seed=i, proposals=512, fallback=zeros_fallback(16))
        floor = constraint_floor_samples(one, marginal, m=16, seed=i, fallback=zeros_fallback(16))
        is_dist.append(np.linalg.norm((imp.samples[0] - nu).reshape(16, 6), axis=1))
        floor_dist.append(np.linalg.norm((floor.samples[0] - nu).reshape(16, 6), axis=1))
    is_dist, floor_dist = np.concatenate(is_dist), np.concatenate(floor_dist)
    assert np.median(is_dist) < 1e-3
    assert is_dist.mean() < 0.1 * floor_dist.mean()
    assert floor_dist.mean() > 10.0


def roots_of_one_c(events, i):
    """Event i's true c, its roots under the two candidate pairings (concatenated) and their pairing index."""
    jets, _ = candidate_pairings(events)
    c0 = dl.constraint_variables(events["neutrino_momenta"][i], events["lep_p4"][i], events["jet_p4"][i, :2],
                                 events["met"][i])
    roots, valid = dl.solve_dilepton(c0, events["lep_p4"][i], jets[i, :2], events["met"][i])  # per pairing
    return c0, roots[valid], np.nonzero(valid)[0]


def test_importance_weights_are_the_prior_over_the_jacobian(events):
    """A marginal of one c: the proposals land on that c's roots (both pairings), and importance resampling
    picks root k with probability pi(root_k) / |det J(root_k)| normalised over the roots. The event is the one
    of the first 30 where the Jacobian moves these probabilities most, so that dropping it would fail."""
    prior = GaussianNeutrinoPrior.fit(toy_events(500, np.random.default_rng(12)))
    jets, _ = candidate_pairings(events)
    best = None
    for i in range(30):
        c0, r, pairing = roots_of_one_c(events, i)
        if len(np.unique(pairing)) < 2:
            continue  # the test's approximation n_a ~ N / 2 needs roots under both pairings
        logdet = dl.log_abs_det_jacobian(r, events["lep_p4"][i], jets[i, pairing])
        with_j, without = prior.log_pdf(r) - logdet, prior.log_pdf(r)
        p, q = (np.exp(x - x.max()) / np.exp(x - x.max()).sum() for x in (with_j, without))
        if best is None or np.abs(p - q).max() > best[0]:
            best = (np.abs(p - q).max(), i, c0, r, p)
    moved, i, c0, r, expected = best
    assert moved > 0.15
    one = {k: v[i:i + 1] for k, v in events.items()}
    m = 20000
    out = constraint_is_samples(one, ConstraintMarginal(c0[None]), prior, m=m, seed=0, proposals=4096,
                                fallback=zeros_fallback(m))
    assert not out.fallback.any()
    dist = np.abs(out.samples[0][:, None] - r[None]).max(axis=(2, 3))  # (m, roots)
    assert np.all(dist.min(axis=1) < 1e-6)  # every sample is one of the roots
    freq = np.bincount(dist.argmin(axis=1), minlength=len(r)) / m
    np.testing.assert_allclose(freq, expected, atol=0.03)


def test_the_floor_takes_pairing_and_root_uniformly(events):
    """A marginal of one c: the floor's samples are that c's roots, each pairing half the time and each of
    its roots equally often (an event with a different number of roots per pairing, where this differs
    from a uniform choice over all roots)."""
    counts = [np.bincount(roots_of_one_c(events, i)[2], minlength=2) for i in range(60)]
    found = [i for i, n in enumerate(counts) if n.min() > 0 and n[0] != n[1]]
    assert found
    i = found[0]
    c0, r, pairing = roots_of_one_c(events, i)
    one = {k: v[i:i + 1] for k, v in events.items()}
    m = 8000
    out = constraint_floor_samples(one, ConstraintMarginal(c0[None]), m=m, seed=0, fallback=zeros_fallback(m))
    dist = np.abs(out.samples[0][:, None] - r[None]).max(axis=(2, 3))
    assert np.all(dist.min(axis=1) < 1e-6)
    freq = np.bincount(dist.argmin(axis=1), minlength=len(r)) / m
    expected = 0.5 / np.bincount(pairing, minlength=2)[pairing]
    np.testing.assert_allclose(freq, expected, atol=0.03)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4", None])
def test_bad_m_names_m(events, marginal, bad):
    with pytest.raises(ValueError, match="m must be a positive integer"):
        constraint_floor_samples(events, marginal, m=bad, seed=0, fallback=zeros_fallback(1))
    with pytest.raises(ValueError, match="m must be a positive integer"):
        constraint_is_samples(events, marginal, GaussianNeutrinoPrior.fit(events), m=bad, fallback=zeros_fallback(1))


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, None])
def test_bad_rounds_names_rounds(events, marginal, bad):
    with pytest.raises(ValueError, match="rounds must be a positive integer"):
        constraint_floor_samples(events, marginal, m=2, seed=0, fallback=zeros_fallback(2), rounds=bad)


@pytest.mark.parametrize("drop", ["lep_p4", "jet_p4", "jet_btag", "jet_mask", "met"])
def test_missing_event_keys_are_named(events, marginal, drop):
    broken = {k: v for k, v in events.items() if k != drop}
    with pytest.raises(ValueError, match="events must be a read_events dict"):
        constraint_floor_samples(broken, marginal, m=2, seed=0, fallback=zeros_fallback(2))
    with pytest.raises(ValueError, match="events must be a read_events dict"):
        candidate_pairings(broken)
    with pytest.raises(ValueError, match="events must be a read_events dict"):
        pairing_constraints(broken)


def test_events_that_are_not_a_dict_are_refused():
    with pytest.raises(ValueError, match="events"):
        candidate_pairings([np.zeros((2, 2, 4))])


def test_an_event_without_a_candidate_pairing_is_refused(events, marginal):
    lonely = dict(events, jet_mask=np.tile([True, False], (60, 1)))
    with pytest.raises(ValueError, match="no candidate pairing"):
        constraint_floor_samples(lonely, marginal, m=2, seed=0, fallback=zeros_fallback(2))


def test_toy_events_are_exact_and_seeded():
    a, b = toy_events(5, np.random.default_rng(9)), toy_events(5, np.random.default_rng(9))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    for key in ("lep_p4", "jet_p4"):
        p = a[key]
        assert p.shape == (5, 2, 4) and np.all(p[..., 3] > np.linalg.norm(p[..., :3], axis=-1))


def test_later_rounds_propose_what_each_events_acceptance_asks():
    """k = 1.25 (m - found) / ((found + 1) / (tried + 2)), up to a power of two of at least 8; events that found
    more need fewer; none is proposed for more than m a round."""
    from posteval.physics.constraint_sampling import _proposals_needed
    k = _proposals_needed(64, np.array([60, 30, 1, 0]), np.array([64, 64, 64, 64]))
    assert k.tolist() == [8, 64, 64, 64]
    assert _proposals_needed(64, np.array([56]), np.array([64])).tolist() == [16]
    assert _proposals_needed(64, np.array([63]), np.array([64])).tolist() == [8]


def test_the_draws_of_an_event_do_not_depend_on_how_many_were_proposed(events, marginal):
    """The proposal count is cost, not distribution: the floor's m(l nu) of many events is the same
    whether the events need one round or several (a two-sample KS test at m = 4 against m = 64)."""
    from scipy.stats import ks_2samp
    many = toy_events(300, np.random.default_rng(5))
    big = ConstraintMarginal.fit(toy_events(400, np.random.default_rng(6)))
    a = constraint_floor_samples(many, big, m=4, seed=0, fallback=zeros_fallback(4))
    b = constraint_floor_samples(many, big, m=64, seed=1, fallback=zeros_fallback(64))
    ok = ~(a.fallback | b.fallback)
    ca = c_of_samples({k: v[ok] for k, v in many.items()}, a.samples[ok])
    cb = c_of_samples({k: v[ok] for k, v in many.items()}, b.samples[ok])
    assert ks_2samp(ca[..., 0, 0].ravel(), cb[..., 0, 0].ravel()).pvalue > 0.01
