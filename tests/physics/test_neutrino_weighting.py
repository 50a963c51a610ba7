"""Neutrino weighting: the analytic step, the weighted scan, sampling and fallbacks."""

import numpy as np
import pytest

from posteval.physics import chunks, ttbar
from posteval.physics import fourvectors as fv
from posteval.physics.kinematics import reconstruct_ttbar
from posteval.physics.neutrino_weighting import (WeightingConfig, WeightingResult, calibrate, candidate_assignments,
                                            detector_level_inputs, fallback_solution, neutrino_weighting_samples,
                                            sample_solutions, solution_jacobian, solve_neutrino, truth_level_inputs,
                                            weigh_solutions)


@pytest.fixture(scope="module")
def parton_events():
    """Selected parton-level events (no shower: t = W b and W = l nu hold exactly)."""
    job = chunks.ChunkJob(seed=4, index=0, n_events=600, config=ttbar.make_config("parton"))
    out = chunks.run_chunk(job)
    return {"lep_truth_p4": out["lep_final_p4"], "lep_born_p4": out["lep_born_p4"], "b_p4": out["b_p4"],
            "nu_p4": out["nu_p4"], "top_p4": out["top_p4"], "w_p4": out["w_p4"]}


def test_analytic_step_recovers_true_neutrinos(parton_events):
    ev = parton_events
    lep, b, nu = ev["lep_born_p4"], ev["b_p4"], ev["nu_p4"]
    np.testing.assert_allclose(lep + nu + b, ev["top_p4"], atol=1e-6)  # parton level: exact decays
    m_top, m_w = fv.mass(lep + nu + b), fv.mass(lep + nu)
    sol, valid = solve_neutrino(lep, b, fv.eta(nu), m_top, m_w)
    err = np.linalg.norm(sol - nu[..., None, :3], axis=-1)  # (n, 2 sides, 2 roots)
    err = np.where(valid, err, np.inf).min(axis=-1)
    assert np.all(err < 1e-6 * np.linalg.norm(nu[..., :3], axis=-1) + 1e-6)


def test_jacobian_equals_finite_differences_of_the_solutions(parton_events):
    ev = parton_events
    lep, b, nu = ev["lep_born_p4"][:, 0], ev["b_p4"][:, 0], ev["nu_p4"][:, 0]
    point = [fv.eta(nu) + 0.3, fv.mass(lep + nu + b) + 1.0, fv.mass(lep + nu) - 0.5]
    _, valid = solve_neutrino(lep, b, *point)
    columns, h = [], 1e-5
    for k in range(3):
        up, down = list(point), list(point)
        up[k], down[k] = point[k] + h, point[k] - h
        (sol_up, ok_up), (sol_down, ok_down) = solve_neutrino(lep, b, *up), solve_neutrino(lep, b, *down)
        valid &= ok_up & ok_down
        columns.append((sol_up - sol_down) / (2 * h))
    numeric = np.abs(np.linalg.det(np.stack(columns, axis=-1)))
    jac = solution_jacobian(lep, b, *point)
    assert valid.sum() > 200
    np.testing.assert_allclose(jac[valid], numeric[valid], rtol=1e-4)
    assert np.all(jac[~solve_neutrino(lep, b, *point)[1]] == 0)


def test_jacobian_weights_change_the_draws_not_the_solutions(parton_events):
    inputs = {k: v[:100] for k, v in truth_level_inputs(parton_events).items()}
    plain = weigh_solutions(**inputs, config=WeightingConfig(met_sigma=10.0), m_samples=20, seed=3)
    jac = weigh_solutions(**inputs, config=WeightingConfig(met_sigma=10.0, jacobian=True), m_samples=20, seed=3)
    np.testing.assert_array_equal(jac.has_solution, plain.has_solution)
    np.testing.assert_array_equal(jac.n_solutions, plain.n_solutions)
    assert np.all(np.isfinite(jac.mean)) and np.all(np.isfinite(jac.top_weights))
    assert not np.allclose(jac.mean, plain.mean)  # the weights differ, the weighted mean moves


def test_scan_on_truth_inputs_beats_pz_zero(parton_events):
    ev = parton_events
    res = weigh_solutions(**truth_level_inputs(ev), config=WeightingConfig(met_sigma=10.0))
    assert res.has_solution.mean() > 0.93
    true = ev["nu_p4"][..., :3]
    err_nw = np.median(np.abs(res.best[..., 2] - true[..., 2]))
    err_zero = np.median(np.abs(true[..., 2]))
    assert err_nw < 0.7 * err_zero  # measured 0.57
    assert np.median(np.abs(res.mean[..., 0] - true[..., 0])) < 15.0  # measured 9.7
    np.testing.assert_allclose(res.top_weights.sum(1), 1.0)
    assert np.all(np.diff(res.top_weights, axis=1) <= 1e-12)  # heaviest first
    assert np.all((res.kept_weight > 0) & (res.kept_weight <= 1 + 1e-9))


def test_no_solution_gets_the_flagged_fallback(parton_events):
    inputs = truth_level_inputs(parton_events)
    inputs = {k: v[:3] for k, v in inputs.items()}
    inputs["met"] = np.array([[5000.0, 0.0], [0.0, -5000.0], inputs["met"][2]])
    res = weigh_solutions(**inputs, config=WeightingConfig(met_sigma=5.0))
    np.testing.assert_array_equal(res.has_solution, [False, False, True])
    np.testing.assert_array_equal(res.best[:2], fallback_solution(inputs["met"][:2]))
    samples, jets, has = sample_solutions(res, 5, seed=0)
    np.testing.assert_array_equal(samples[0], np.repeat(fallback_solution(inputs["met"][:1]), 5, axis=0))
    np.testing.assert_array_equal(has, res.has_solution)


def test_sampling_follows_weights_and_seed():
    n, k = 2, 3
    sols = np.arange(n * k * 2 * 3, dtype=float).reshape(n, k, 2, 3)
    res = WeightingResult(np.ones(n, bool), np.full(n, k), sols[:, 0], sols[:, 0], np.zeros((n, 2), int),
                          sols, np.array([[0.9, 0.1, 0.0], [0.2, 0.3, 0.5]]), np.zeros((n, k, 2), int), np.ones(n),
                          np.zeros((n, 0, 2, 3)), np.zeros((n, 0, 2), int))
    s1, _, _ = sample_solutions(res, 20000, seed=1)
    s2, _, _ = sample_solutions(res, 20000, seed=1)
    s3, _, _ = sample_solutions(res, 20000, seed=2)
    np.testing.assert_array_equal(s1, s2)
    assert not np.array_equal(s1, s3)
    assert s1.shape == (n, 20000, 2, 3)
    freq0 = (s1[0, :, 0, 0] == sols[0, 0, 0, 0]).mean()
    freq1 = [(s1[1, :, 0, 0] == sols[1, j, 0, 0]).mean() for j in range(k)]
    assert freq0 == pytest.approx(0.9, abs=0.01)
    np.testing.assert_allclose(freq1, [0.2, 0.3, 0.5], atol=0.015)
    assert not np.any(s1[0, :, 0, 0] == sols[0, 2, 0, 0])  # zero weight never drawn


def test_candidate_assignments_follow_btags():
    pt = np.array([[90.0, 80, 70, 60], [90, 80, 70, 60], [90, 80, 0, 0]])
    jets = np.stack([pt, np.zeros_like(pt), np.zeros_like(pt), pt], -1)
    mask = pt > 0
    tag = np.array([[0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 0]])
    pairs, ok = candidate_assignments(jets, tag, mask)
    assert {tuple(p) for p in pairs[0][ok[0]]} == {(1, 3), (3, 1)}
    assert {tuple(p) for p in pairs[1][ok[1]]} == {(2, 0), (0, 2), (2, 1), (1, 2)}
    assert {tuple(p) for p in pairs[2][ok[2]]} == {(0, 1), (1, 0)}


def test_bad_inputs_raise(parton_events):
    inputs = truth_level_inputs(parton_events)
    with pytest.raises(ValueError, match="met"):
        weigh_solutions(**{**inputs, "met": inputs["met"][:, :1]})
    with pytest.raises(ValueError, match="leptons_p4"):
        weigh_solutions(**{**inputs, "leptons_p4": inputs["leptons_p4"][:, :1]})
    bad = inputs["jet_p4"].copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        weigh_solutions(**{**inputs, "jet_p4": bad})
    with pytest.raises(ValueError):
        weigh_solutions(**inputs, config=WeightingConfig(met_sigma=0.0))
    with pytest.raises(ValueError):
        sample_solutions(weigh_solutions(**{k: v[:2] for k, v in inputs.items()}), 0)


def test_full_draws_match_the_weighted_mean(parton_events):
    inputs = {k: v[:20] for k, v in truth_level_inputs(parton_events).items()}
    cfg = WeightingConfig(met_sigma=10.0)
    res = weigh_solutions(**inputs, config=cfg, m_samples=4000, seed=3)
    again = weigh_solutions(**inputs, config=cfg, m_samples=4000, seed=3)
    np.testing.assert_array_equal(res.samples, again.samples)
    assert res.samples.shape == (20, 4000, 2, 3) and res.sample_jets.shape == (20, 4000, 2)
    has = res.has_solution
    # The Monte Carlo mean of the draws estimates the exact weighted mean.
    spread = res.samples[has].std(axis=1) / np.sqrt(4000)
    assert np.all(np.abs(res.samples[has].mean(axis=1) - res.mean[has]) < 5 * spread + 1e-6)


def test_sampler_interface_on_detector_events(tmp_path):
    path = ttbar.load_or_generate(400, seed=2, mode="parton", cache_dir=tmp_path,
                                  config=ttbar.make_config("parton", chunk_events=400, batch_events=400),
                                  progress=False)
    events = ttbar.read_events(path)
    samples, bjets, has = neutrino_weighting_samples(events, 7, seed=1)
    n = len(events["met"])
    assert samples.shape == (n, 7, 2, 3) and bjets.shape == (n, 7, 2, 4) and has.shape == (n,)
    assert has.mean() > 0.8
    fb = fallback_solution(events["met"])
    np.testing.assert_allclose(samples[~has], np.repeat(fb[~has][:, None], 7, axis=1))
    # Each draw's b-jets are jets of its event.
    jets = events["jet_p4"].astype(np.float64)
    hit = (bjets[:, :, :, None, :] == jets[:, None, None, :, :]).all(-1).any(-1)
    assert hit.all()
    rec = reconstruct_ttbar(events["lep_p4"], bjets, samples)
    assert rec["m_ttbar"].shape == (n, 7) and np.all(np.isfinite(rec["m_ttbar"]))


def test_calibrated_detector_level_beats_the_trivial_guess(tmp_path):
    events = ttbar.read_events(ttbar.load_or_generate(2000, seed=8, mode="shower", cache_dir=tmp_path, progress=False))
    half = len(events["met"]) // 2
    train = {k: v[:half] for k, v in events.items() if k != "n_generated"}
    test = {k: v[half:] for k, v in events.items() if k != "n_generated"}
    cfg = calibrate(train)
    assert 0.9 < cfg.bjet_response < 1.02 and 5.0 < cfg.met_sigma < 40.0
    res = weigh_solutions(**detector_level_inputs(test), config=cfg)
    true = test["neutrino_momenta"]
    trivial = fallback_solution(test["met"])
    assert res.has_solution.mean() > 0.8  # measured 0.91 on 3,800 events
    mae = lambda est: np.mean(np.abs(est[..., 2] - true[..., 2]))  # noqa: E731
    assert mae(res.mean) < 0.92 * mae(trivial)  # measured 0.81 on 3,800 events
