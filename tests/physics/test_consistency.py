"""Physics consistency: W and top windows, MET closure and the transverse-mass excess fraction on simulated
two-body decays where the answer is known, the claims built on them, and the tolerances an exact posterior
sampler meets (derived from the truth alone, checked by simulating exact samplers)."""

import numpy as np
import pytest

pytest.importorskip("vector")

from posteval.margins import registered  # noqa: E402
from posteval.metrics.claims import evaluate_claims  # noqa: E402
from posteval.metrics.intervals import Measurements, event_interval  # noqa: E402
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
    assert s["mt_excess"].mean() == 0
    # closure of the truth: the mean length of a 2-D normal with sd 10 (Rayleigh), from the resolution alone
    mean, sd = pc.closure_from_resolution(10.0)
    assert s["met_closure"].mean() == pytest.approx(mean, rel=0.08)
    assert s["met_closure"].std() == pytest.approx(sd, rel=0.1)


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
    assert s["mt_excess"].mean() == 0
    s = pc.consistency_scores(leptons, bjets, neutrinos * 3, met, support=(lo - 1, hi + 1))
    assert s["mt_excess"].mean() > 0.5


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
    with pytest.raises(ValueError, match="mt_excess_margin"):
        pc.Tolerances(mt_excess_margin=-0.1)
    with pytest.raises(ValueError, match="rule"):
        pc.Tolerances(derived=("w_ratio",))
    with pytest.raises(ValueError, match="derived"):
        pc.Tolerances(derived=("width",), rule=pc.EXACT_SAMPLER_RULE)


def test_the_unphysical_names_before_0_3_still_read_with_a_warning(events):
    leptons, bjets, neutrinos, met = events
    s = pc.consistency_scores(leptons, bjets, neutrinos, met)
    with pytest.warns(DeprecationWarning, match="mt_excess"):
        assert s["unphysical"] is s["mt_excess"]
    with pytest.warns(DeprecationWarning, match="mt_excess_margin"):
        t = pc.Tolerances(unphysical_excess=0.03)
    assert t.mt_excess_margin == 0.03
    with pytest.warns(DeprecationWarning, match="mt_excess_margin"):
        assert t.unphysical_excess == 0.03
    old = {("unphysical" if k == "mt_excess" else k): v for k, v in s.items()}
    with pytest.warns(DeprecationWarning):
        e = pc.consistency_excess(old, s)
    assert set(e) == set(pc.CONSISTENCY_METRICS)


# ----------------------------------------------------------------------------------------------------------
# tolerances from the truth: what an exact posterior sampler passes
# ----------------------------------------------------------------------------------------------------------
N, M, S, K = 1500, 64, 3, 60  # events, draws per seed, seeds, words of the family


def _posterior(rng, n=N):
    """Per-event posterior fractions q_i (W window, transverse-mass excess), closure widths, and one truth each."""
    q_w = rng.beta(12.0, 0.8, n)
    q_x = rng.beta(0.3, 8.0, n)
    width = rng.uniform(4.0, 12.0, n)
    truth = {"w_window.nu": (rng.random(n) < q_w).astype(float), "w_window.nubar": (rng.random(n) < q_w).astype(float),
             "top_window": (rng.random(n) < q_w).astype(float),
             "met_closure": width * np.hypot(*rng.normal(size=(2, n))), "mt_excess": (rng.random(n) < q_x).astype(float)}
    return q_w, q_x, width, truth


def _exact_sampler(rng, q_w, q_x, width):
    """Per-event values (n, S) of a sampler that draws from the posterior: M draws on each of S seeds."""
    n = len(q_w)
    f = {k: rng.binomial(M, q_w[:, None], (n, S)) / M for k in ("w_window.nu", "w_window.nubar", "top_window")}
    f["mt_excess"] = rng.binomial(M, q_x[:, None], (n, S)) / M
    draws = width[:, None, None] * np.hypot(*rng.normal(size=(2, n, S, M)))
    f["met_closure"] = draws.mean(axis=-1)
    return f


def test_an_exact_sampler_passes_the_derived_tolerances():
    """Simulated exact samplers (the truth one posterior draw per event, the sampler M draws on S seeds): each
    derived check says "yes" at the strictest Holm threshold alpha/K in at least the promised share of runs."""
    rng = np.random.default_rng(5)
    q_w, q_x, width, truth = _posterior(rng)
    d = pc.exact_sampler_tolerances(truth, n_draws=M, n_seeds=S, n_words=K)
    passed = {k: 0 for k in ("w_window.nu", "met_closure", "mt_excess")}
    runs = 60
    for _ in range(runs):
        excess = pc.consistency_excess(_exact_sampler(rng, q_w, q_x, width), truth, d.tolerances)
        for k in passed:
            passed[k] += event_interval(excess[k]).p_value(0.0, "greater") < 0.05 / K
    assert all(v >= runs - 1 for v in passed.values()), passed  # promised: 1 - 0.05/4 per check


def test_the_derived_tolerances_are_near_the_noise_and_tighten_with_more_events():
    rng = np.random.default_rng(6)
    truth = _posterior(rng)[3]
    d = pc.exact_sampler_tolerances(truth, n_draws=M, n_seeds=S, n_words=K)
    big = pc.exact_sampler_tolerances(_posterior(rng, 4 * N)[3], n_draws=M, n_seeds=S, n_words=K)
    t, b = d.tolerances, big.tolerances
    assert 0.9 < t.w_ratio < b.w_ratio < 1 and 1 < b.closure_ratio < t.closure_ratio < 1.3
    assert 0 < b.mt_excess_margin < t.mt_excess_margin < 0.05
    # four times the events: about half the room (the band scales as 1/sqrt(n))
    assert (1 - b.w_ratio) / (1 - t.w_ratio) == pytest.approx(0.5, abs=0.1)
    # the table: the threshold a model must reach is the tolerance applied to the truth's mean
    w = d.table.loc[["w_window.nu", "w_window.nubar"]]
    assert (w["threshold"] == w["tolerance"] * w["truth"]).all() and w["derived"].all() and (w["tolerance"] == t.w_ratio).all()
    room = (1 - w["tolerance"]) * w["truth"] - w["band"]  # one ratio: the side that needs more room sets it
    assert room.min() == pytest.approx(0, abs=1e-9) and (room >= -1e-9).all()


def test_the_top_window_keeps_its_registered_tolerance_and_the_rule_is_cited():
    rng = np.random.default_rng(7)
    d = pc.exact_sampler_tolerances(_posterior(rng)[3], n_draws=M, n_seeds=S, n_words=K)
    t = d.tolerances
    assert t.top_ratio == registered("03.physics.top_ratio").value and not d.table.loc["top_window", "derived"]
    assert np.isnan(d.table.loc["top_window", "band"])
    claims = {c.name: c for c in pc.consistency_claims(["m"], t)}
    assert claims["consistent.w_window.nu.m"].registered == pc.EXACT_SAMPLER_RULE
    assert claims["consistent.mt_excess.m"].registered == pc.EXACT_SAMPLER_RULE
    assert claims["consistent.top_window.m"].registered == "03.physics.top_ratio"
    assert f"{t.w_ratio:.3g}" in claims["consistent.w_window.nu.m"].sentence
    # another level or power is not the registered rule: no registry entry is cited for the derived values
    other = pc.exact_sampler_tolerances(_posterior(rng)[3], n_draws=M, n_seeds=S, n_words=K, power=0.9)
    assert other.tolerances.rule == "" and other.tolerances.registered("w_ratio") == ""


@pytest.mark.parametrize("change, message", [
    (dict(n_words=0), "n_words"),
    (dict(n_draws=2.5), "n_draws"),
    (dict(power=1.0), "power"),
    (dict(level=0.0), "level"),
])
def test_the_derivation_names_a_bad_design(change, message):
    truth = _posterior(np.random.default_rng(8), 50)[3]
    with pytest.raises(ValueError, match=message):
        pc.exact_sampler_tolerances(truth, **{"n_draws": M, "n_seeds": S, "n_words": K, **change})


def test_the_derivation_names_bad_truth():
    truth = _posterior(np.random.default_rng(9), 50)[3]
    with pytest.raises(ValueError, match="mt_excess"):
        pc.exact_sampler_tolerances({k: v for k, v in truth.items() if k != "mt_excess"}, n_draws=M, n_seeds=S,
                                    n_words=K)
    with pytest.raises(ValueError, match="fractions"):
        pc.exact_sampler_tolerances({**truth, "w_window.nu": truth["w_window.nu"] + 1}, n_draws=M, n_seeds=S,
                                    n_words=K)
    with pytest.raises(ValueError, match="more test events"):  # 3 events: no ratio lets an exact sampler pass
        pc.exact_sampler_tolerances({k: np.r_[v[:2], 1 - v[:1]] if k != "met_closure" else v[:3]
                                     for k, v in truth.items()}, n_draws=M, n_seeds=S, n_words=K)
    with pytest.raises(ValueError, match="resolution"):
        pc.closure_from_resolution(0.0)
