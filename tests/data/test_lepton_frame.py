"""The chapter-3 lepton-frame targets: exact round trip, exact density change, guards, bad input."""

import numpy as np
import pytest

from posteval.data.lepton_frame import JointFrameTargets, LeptonFrameTargets, lepton_momenta
from posteval.data.ttbar_features import build_event_arrays


def _arrays(n=200, seed=0, swap=False):
    rng = np.random.default_rng(seed)
    charge = np.tile([-1.0, 1.0] if swap else [1.0, -1.0], (n, 1))
    return build_event_arrays(rng.uniform(20, 80, (n, 2)), rng.normal(0, 1, (n, 2)), rng.uniform(-3, 3, (n, 2)),
                              np.full((n, 2), 100.0), charge, np.zeros((n, 2)), rng.uniform(20, 80, (n, 2)),
                              np.zeros((n, 2)), np.zeros((n, 2)), np.full((n, 2), 90.0), np.ones((n, 2)),
                              np.ones((n, 2), bool), rng.normal(0, 30, (n, 2)), rng.normal(0, 40, (n, 2, 3)))


SYSTEMS = pytest.mark.parametrize("system", [LeptonFrameTargets, JointFrameTargets])


@SYSTEMS
def test_round_trip_and_standardised(system):
    arr = _arrays()
    frame = system.fit(arr)
    s = frame.to_standard(arr)
    assert s.shape == (len(arr), 6)
    np.testing.assert_allclose(s.mean(axis=0), 0, atol=1e-5)
    np.testing.assert_allclose(s.std(axis=0), 1, atol=1e-4)
    np.testing.assert_allclose(frame.to_physical(s, arr), arr.targets, atol=2e-3)
    assert not frame.outside(s, arr).any()


def test_lepton_order_follows_charge():
    a, b = _arrays(), _arrays(swap=True)
    np.testing.assert_array_equal(lepton_momenta(a)[:, 0], a.leptons[:, 0, :3])
    np.testing.assert_array_equal(lepton_momenta(b)[:, 0], b.leptons[:, 1, :3])


@SYSTEMS
def test_log_abs_det_matches_finite_differences(system):
    arr = _arrays(n=6, seed=1)
    frame = system.fit(_arrays(n=400, seed=2))
    s = frame.to_standard(arr).astype(np.float64)
    eps = 1e-6
    for i in range(len(arr)):
        one = arr.subset(np.array([i]))
        jac = np.empty((6, 6))
        for j in range(6):
            up, down = s[i:i + 1].copy(), s[i:i + 1].copy()
            up[0, j] += eps
            down[0, j] -= eps
            jac[:, j] = (frame.to_physical(up, one) - frame.to_physical(down, one))[0] / (2 * eps)
        expected = np.linalg.slogdet(jac)[1]
        assert frame.log_abs_det(s[i:i + 1], one)[0] == pytest.approx(expected, abs=1e-4)


# far outside: D's tau far below its range (collinear, |p| would diverge); FH's s far above (far beyond
# the region's edge) and y far out (|pz| would diverge)
FAR = {LeptonFrameTargets: {1: -40.0}, JointFrameTargets: {1: 40.0, 4: 300.0}}


@SYSTEMS
def test_samples_far_outside_are_guarded(system):
    arr = _arrays()
    frame = system.fit(arr)
    far = np.zeros((len(arr), 3, 6))
    for j, v in FAR[system].items():
        far[..., j] = v
    assert frame.outside(far, arr).all()
    p = frame.to_physical(far, arr)
    # the guards saturate: ten times farther out gives the same momenta, all finite
    np.testing.assert_allclose(frame.to_physical(10 * far, arr), p)
    assert np.isfinite(p).all()


@pytest.mark.parametrize("bad, match", [
    (np.zeros((5, 6)), "n = 200"),
    (np.zeros((200, 5)), r"\(n, 6\)"),
    (np.full((200, 6), np.nan), "NaN"),
])
@SYSTEMS
def test_bad_input_is_named(bad, match, system):
    arr = _arrays()
    frame = system.fit(arr)
    with pytest.raises(ValueError, match=match):
        frame.to_physical(bad, arr)


def test_same_sign_leptons_rejected():
    arr = _arrays(n=10)
    lep = arr.leptons.copy()
    lep[:, :, 4] = 1.0
    from dataclasses import replace
    with pytest.raises(ValueError, match="one positive and one negative"):
        lepton_momenta(replace(arr, leptons=lep))


def test_docstring_example():
    import doctest

    import posteval.data.lepton_frame as module
    assert doctest.testmod(module).failed == 0
