"""Physics consistency: W and top windows, MET closure and the unphysical fraction on simulated
two-body decays where the answer is known, and the claims built on them."""

import numpy as np
import pytest

pytest.importorskip("vector")

from posteval.metrics.claims import evaluate_claims  # noqa: E402
from posteval.metrics.intervals import Measurements  # noqa: E402
from posteval.physics import consistency as pc  # noqa: E402
from posteval.physics.kinematics import reconstruct_ttbar  # noqa: E402


def _unit(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _boost(p4, beta):
    """Boost four-vectors p4 (n, 4) by velocity beta (n, 3)."""
    b2 = (beta**2).sum(axis=1)
    gamma = 1.0 / np.sqrt(1.0 - b2)
    bp = (beta * p4[:, :3]).sum(axis=1)
    g2 = np.where(b2 > 0, (gamma - 1.0) / np.where(b2 > 0, b2, 1.0), 0.0)
    space = p4[:, :3] + (g2 * bp + gamma * p4[:, 3])[:, None] * beta
    return np.concatenate([space, (gamma * (p4[:, 3] + bp))[:, None]], axis=1)


def _top_decays(rng, n):
    """One side of t -> W b -> l nu b at rest in the top frame, masses exact (massless l, nu, b)."""
    p_star = (pc.TOP_MASS**2 - pc.W_MASS**2) / (2 * pc.TOP_MASS)
    d = _unit(rng, n)
    e_w = np.sqrt(p_star**2 + pc.W_MASS**2)
    w = np.concatenate([p_star * d, e_w[None].repeat(n)[:, None]], axis=1)
    b = np.concatenate([-p_star * d, np.full((n, 1), p_star)], axis=1)
    u = _unit(rng, n) * pc.W_MASS / 2
    lep = np.concatenate([u, np.full((n, 1), pc.W_MASS / 2)], axis=1)
    nu = np.concatenate([-u, np.full((n, 1), pc.W_MASS / 2)], axis=1)
    beta = w[:, :3] / w[:, 3:]
    # a random boost of the whole top along the beam axis makes the events differ in pz
    boost = np.zeros((n, 3))
    boost[:, 2] = rng.uniform(-0.6, 0.6, n)
    return [_boost(_boost(x, beta) if x is not b else x, boost) for x in (lep, nu, b)]


@pytest.fixture(scope="module")
def events():
    rng = np.random.default_rng(0)
    n = 600
    sides = [_top_decays(rng, n) for _ in range(2)]
    leptons = np.stack([s[0] for s in sides], axis=1)
    neutrinos = np.stack([s[1][:, :3] for s in sides], axis=1)
    bjets = np.stack([s[2] for s in sides], axis=1)
    met = neutrinos[:, :, :2].sum(axis=1) + rng.normal(0, 10.0, (n, 2))
    return leptons, bjets, neutrinos, met


def test_exact_decays_are_in_both_windows_and_physical(events):
    leptons, bjets, neutrinos, met = events
    obs = reconstruct_ttbar(leptons, bjets, neutrinos)
    assert np.allclose(obs["m_lnu"], pc.W_MASS, atol=1e-6) and np.allclose(obs["m_lnub"], pc.TOP_MASS, atol=1e-6)
    s = pc.consistency_scores(leptons, bjets, neutrinos, met)
    assert s["w_window.nu"].mean() == 1 and s["w_window.nubar"].mean() == 1 and s["top_window"].mean() == 1
    assert s["unphysical"].mean() == 0
    # closure of the truth: the mean length of a 2-D normal with sd 10 is 10 sqrt(pi / 2)
    assert s["met_closure"].mean() == pytest.approx(10 * np.sqrt(np.pi / 2), rel=0.08)


def test_transverse_mass_never_exceeds_the_invariant_mass():
    rng = np.random.default_rng(1)
    lep = np.zeros((500, 2, 4))
    lep[..., :3] = rng.normal(0, 50, (500, 2, 3))
    lep[..., 3] = np.linalg.norm(lep[..., :3], axis=-1)
    nu = rng.normal(0, 50, (500, 7, 2, 3))
    mt = pc.transverse_mass(lep, nu)
    m = reconstruct_ttbar(lep, np.repeat(lep, 1, axis=0), nu)["m_lnu"]
    assert mt.shape == (500, 7, 2) and np.all(mt <= m + 1e-6)


def _measure(events, preds):
    leptons, bjets, neutrinos, met = events
    truth = pc.consistency_scores(leptons, bjets, neutrinos, met)
    excess = {name: pc.consistency_excess(pc.consistency_scores(leptons, bjets, p, met), truth)
              for name, p in preds.items()}
    return Measurements(event_scores={f"excess.{k}": {name: e[k] for name, e in excess.items()}
                                      for k in pc.CONSISTENCY_METRICS})


def test_the_truth_is_consistent_and_event_blind_neutrinos_are_not(events):
    leptons, bjets, neutrinos, met = events
    rng = np.random.default_rng(2)
    blind = neutrinos[rng.permutation(len(neutrinos))][:, None] + rng.normal(0, 5.0, (len(neutrinos), 8, 2, 3))
    near = neutrinos[:, None] + rng.normal(0, 0.5, (len(neutrinos), 8, 2, 3))
    table = evaluate_claims(pc.consistency_claims(["near", "blind"]), _measure(events, {"near": near, "blind": blind}))
    assert table.loc["physically_consistent.near", "word"] == "yes"
    assert table.loc["physically_consistent.blind", "word"] == "no"
    assert table.loc["consistent.w_window.nu.blind", "word"] == "no"
    # the composite claim's p is the largest of its parts'
    parts = [f"consistent.{k}.near" for k in pc.CONSISTENCY_METRICS]
    assert table.loc["physically_consistent.near", "p"] == pytest.approx(table.loc[parts, "p"].max())


def test_a_model_that_breaks_met_closure_fails_on_closure(events):
    leptons, bjets, neutrinos, met = events
    shifted = neutrinos.copy()
    shifted[:, :, 0] += 30.0  # both neutrinos 30 GeV further in x: the pair's pT misses MET by 60 GeV
    table = evaluate_claims(pc.consistency_claims(["shifted"]), _measure(events, {"shifted": shifted}))
    assert table.loc["consistent.met_closure.shifted", "word"] == "no"
    assert table.loc["physically_consistent.shifted", "word"] == "no"


def test_support_marks_samples_outside_the_training_range(events):
    leptons, bjets, neutrinos, met = events
    lo = neutrinos.min(axis=0)
    hi = neutrinos.max(axis=0)
    s = pc.consistency_scores(leptons, bjets, neutrinos, met, support=(lo - 1, hi + 1))
    assert s["unphysical"].mean() == 0
    s = pc.consistency_scores(leptons, bjets, neutrinos * 3, met, support=(lo - 1, hi + 1))
    assert s["unphysical"].mean() > 0.5


@pytest.mark.parametrize("change, message", [
    (lambda a: {**a, "neutrinos": a["neutrinos"][..., :2]}, "neutrinos"),
    (lambda a: {**a, "met": a["met"][:-1]}, "met"),
    (lambda a: {**a, "matched": np.zeros(len(a["met"]), bool)}, "matched"),
    (lambda a: {**a, "matched": np.ones(len(a["met"]))}, "matched"),
    (lambda a: {**a, "support": (np.zeros((2, 3)), np.zeros((2, 3)))}, "support"),
    (lambda a: {**a, "neutrinos": np.where(np.ones_like(a["neutrinos"], bool), np.nan, 0.0)}, "NaN"),
])
def test_bad_input_is_named(events, change, message):
    leptons, bjets, neutrinos, met = events
    args = change({"leptons_p4": leptons, "bjets_p4": bjets, "neutrinos": neutrinos, "met": met})
    with pytest.raises(ValueError, match=message):
        pc.consistency_scores(**args)


def test_tolerances_are_checked():
    with pytest.raises(ValueError, match="w_ratio"):
        pc.Tolerances(w_ratio=1.5)
    with pytest.raises(ValueError, match="closure_ratio"):
        pc.Tolerances(closure_ratio=0.5)
