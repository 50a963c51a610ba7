"""Design FH (posteval.physics.joint_coordinates): exact bijection, closed-form Jacobian, the region."""

import doctest

import numpy as np
import pytest

from posteval.physics import joint_coordinates as jc
from posteval.physics.consistency import transverse_mass


def _event(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 40, (n, 2, 3)), rng.normal(0, 40, (n, 2)), rng.normal(0, 40, (n, 2, 3))


def test_round_trip_events_and_samples():
    lep, met, nu = _event()
    u = jc.to_joint(nu, lep, met)
    assert u.shape == (len(nu), 6)
    np.testing.assert_allclose(jc.from_joint(u, lep, met), nu, atol=1e-9, rtol=1e-9)
    samples = nu[:, None] + np.random.default_rng(1).normal(0, 5, (len(nu), 4, 2, 3))
    us = jc.to_joint(samples, lep, met)
    assert us.shape == (len(nu), 4, 6)
    np.testing.assert_allclose(jc.from_joint(us, lep, met), samples, atol=1e-9, rtol=1e-9)
    wrapped = us.copy()
    wrapped[..., 0] += 2 * np.pi  # theta wraps
    np.testing.assert_allclose(jc.from_joint(wrapped, lep, met), samples, atol=1e-8)


def test_log_abs_det_equals_finite_differences():
    lep, met, nu = _event(n=60, seed=2)
    u = jc.to_joint(nu, lep, met)
    eps = 1e-6
    jac = np.empty((len(u), 6, 6))
    for k in range(6):
        up, down = u.copy(), u.copy()
        up[:, k] += eps
        down[:, k] -= eps
        jac[:, :, k] = (jc.from_joint(up, lep, met) - jc.from_joint(down, lep, met)).reshape(-1, 6) / (2 * eps)
    np.testing.assert_allclose(jc.log_abs_det_jacobian(u, lep, met), np.linalg.slogdet(jac)[1], atol=1e-6)


def test_negative_s_is_jointly_feasible_and_closure_is_r():
    """s < 0 keeps both transverse masses below the W mass (up to the smooth edge); r is the MET residual."""
    lep, met, _ = _event(n=400, seed=3)
    rng = np.random.default_rng(4)
    u = np.column_stack([rng.uniform(-np.pi, np.pi, 400), rng.uniform(-3, -0.05, 400), np.zeros((400, 2)),
                         rng.normal(0, 1, (400, 2))])
    nu = jc.from_joint(u, lep, met)
    centre = jc.region_centre(lep, met)
    hp, hm = jc._violation(centre, jc._directions(lep)[1], jc._a(lep), met)
    feasible = np.maximum(hp, hm) < 0  # events whose region is not empty
    assert feasible.mean() > 0.5
    lep4 = np.concatenate([lep, np.linalg.norm(lep, axis=-1, keepdims=True)], axis=-1)
    m_t = transverse_mass(lep4, nu)
    assert (m_t[feasible] <= jc.W_MASS + 1e-6).all()
    np.testing.assert_allclose(nu[:, 0, :2] + nu[:, 1, :2], met, atol=1e-9)


def test_y_near_the_peak_is_the_w_mass():
    """y = +-c (the stretch's centre) gives m(l nu) = M whatever the transverse momenta."""
    lep, met, nu = _event(n=200, seed=5)
    u = jc.to_joint(nu, lep, met)
    pt = np.linalg.norm(nu[..., :2], axis=-1)
    l_t, direc = jc._directions(lep)
    m_t2 = 2 * (l_t * pt - l_t * (direc * nu[..., :2]).sum(-1))
    low = (m_t2 < 70.0 ** 2).all(axis=1)
    n, c_w, h = jc._normaliser(m_t2)
    u[:, 4:] = jc._stretch(c_w, c_w, h)
    back = jc.from_joint(u, lep, met)
    lep4 = np.concatenate([lep, np.linalg.norm(lep, axis=-1, keepdims=True)], axis=-1)
    e = lep4[..., 3] + np.linalg.norm(back, axis=-1)
    m = np.sqrt(np.maximum(e ** 2 - ((lep + back) ** 2).sum(-1), 0))
    np.testing.assert_allclose(m[low], np.sqrt(jc.W_MASS ** 2 + 0 * m[low]), rtol=2e-3)


@pytest.mark.parametrize("args, match", [
    ((np.zeros((3, 2, 2)),), "neutrinos: expected shape"),
    ((np.full((3, 2, 3), np.nan),), "NaN"),
])
def test_bad_input_is_named(args, match):
    lep, met, _ = _event(n=3)
    with pytest.raises(ValueError, match=match):
        jc.to_joint(*args, lep, met)


def test_a_lepton_without_transverse_momentum_is_refused():
    lep, met, nu = _event(n=3)
    lep[0, 1, :2] = 0
    with pytest.raises(ValueError, match="zero transverse momentum"):
        jc.to_joint(nu, lep, met)


def test_docstring_examples():
    assert doctest.testmod(jc).failed == 0
