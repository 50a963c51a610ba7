"""posteval.data.constraint_targets: standardised constraint variables per candidate pairing (round trip),
the pairing features, the log-density terms, and fits that refuse too few or degenerate events."""

import numpy as np
import pytest

from posteval.data.constraint_targets import ConstraintTargets, pairing_features
from posteval.physics import dilepton as dl
from posteval.physics.constraint_sampling import candidate_pairings, toy_events


@pytest.fixture(scope="module")
def events():
    return toy_events(80, np.random.default_rng(0))


@pytest.fixture(scope="module")
def targets(events):
    return ConstraintTargets.fit(events)


def test_round_trip_on_usable_pairings(events, targets):
    s, f, use, extra = targets.training_arrays(events)
    assert s.shape == (80, 6, 6) and f.shape == (80, 6, 4) and use.shape == (80, 6) and extra.shape == (80, 6)
    assert s.dtype == np.float32 and f.dtype == np.float32 and extra.dtype == np.float32
    c, logdet, n_roots = targets.constraints(events)
    assert use.any(axis=1).all() and not use[:, 2:].any()
    np.testing.assert_allclose(targets.to_constraints(s)[use], c[use], rtol=1e-5, atol=1e-4)  # float32 s
    np.testing.assert_allclose(targets.to_constraints((c - targets.c_mean) / targets.c_sd), c, rtol=1e-12)
    assert np.all(s[~use] == 0) and np.all(extra[~use] == 0)
    by_hand = logdet - np.log(targets.c_sd).sum() - np.log(np.maximum(n_roots, 1))
    np.testing.assert_allclose(extra[use], by_hand[use], rtol=1e-5)
    # standardised over the usable candidates of the training split
    np.testing.assert_allclose(s[use].mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(s[use].std(axis=0), 1.0, rtol=1e-5)


def test_features_by_hand_and_zero_on_non_candidates(events, targets):
    raw, ok = pairing_features(events)
    jets, ok2 = candidate_pairings(events)
    np.testing.assert_array_equal(ok, ok2)
    assert raw.shape == (80, 6, 4) and np.all(raw[~ok] == 0)
    lb = events["lep_p4"][:, None] + jets
    m_lb = np.sqrt(lb[..., 3] ** 2 - np.sum(lb[..., :3] ** 2, axis=-1))
    np.testing.assert_allclose(raw[ok][:, :2], m_lb[ok], rtol=1e-12)
    np.testing.assert_allclose(raw[ok][:, 2:], np.log(np.hypot(jets[..., 0], jets[..., 1]))[ok], rtol=1e-12)
    f, ok3 = targets.features(events)
    assert f.dtype == np.float32 and np.all(f[~ok3] == 0)
    np.testing.assert_allclose(f[ok3], ((raw - targets.f_mean) / targets.f_sd)[ok3], rtol=1e-5)


def test_other_events_use_the_training_standardisation(events, targets):
    other = toy_events(30, np.random.default_rng(1))
    s, _, use, _ = targets.training_arrays(other)
    c, _, _ = targets.constraints(other)
    np.testing.assert_allclose(targets.to_constraints(s)[use], c[use], rtol=1e-5, atol=1e-4)
    assert np.abs(s[use].mean(axis=0)).max() > 1e-3  # not re-standardised on the new events


def test_fit_refuses_too_few_or_degenerate_events(events):
    one_jet = dict(events, jet_mask=np.tile([True, False], (80, 1)))  # no candidate pairing anywhere
    with pytest.raises(ValueError, match="fewer than two candidate pairings"):
        ConstraintTargets.fit(one_jet)
    twice = {k: np.repeat(v[:1], 2, axis=0) for k, v in events.items()}  # one event: the W masses do not vary
    with pytest.raises(ValueError, match="zero spread"):
        ConstraintTargets.fit(twice)
    with pytest.raises(ValueError, match="events must be a read_events dict"):
        ConstraintTargets.fit({k: v for k, v in events.items() if k != "met"})


def test_training_arrays_refuse_an_event_without_a_usable_pairing(events, targets):
    bad = {k: v[:4].copy() for k, v in events.items()}
    bad["jet_mask"][2] = [True, False]
    with pytest.raises(ValueError, match="no usable pairing"):
        targets.training_arrays(bad)
    # usable: a candidate pairing with a real root at its c
    good = {k: v[:4] for k, v in events.items()}
    _, _, use, _ = targets.training_arrays(good)
    c = targets.constraints(good)[0]
    jets, ok = candidate_pairings(good)
    _, valid = dl.solve_dilepton(c, good["lep_p4"][:, None], jets, good["met"][:, None])
    np.testing.assert_array_equal(use, ok & valid.any(axis=-1))
