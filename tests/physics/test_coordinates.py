"""Lepton-frame neutrino coordinates: exact round trip, the W mass as a coordinate, the
log-Jacobian against finite differences, wrapping angles, guards, and errors that name the input."""

import numpy as np
import pytest

from posteval.physics import coordinates as co


@pytest.fixture(scope="module")
def event():
    rng = np.random.default_rng(0)
    n = 200
    lep = rng.normal(0, 40, (n, 2, 3))
    met = rng.normal(0, 40, (n, 2))
    nu = rng.normal(0, 40, (n, 2, 3))
    return lep, met, nu


def test_round_trip_per_event_and_per_sample(event):
    lep, met, nu = event
    u = co.to_lepton_frame(nu, lep, met)
    assert u.shape == nu.shape
    assert np.allclose(co.from_lepton_frame(u, lep, met), nu, atol=1e-9, rtol=1e-9)
    samples = nu[:, None] + np.random.default_rng(1).normal(0, 5, (len(nu), 7, 2, 3))
    us = co.to_lepton_frame(samples, lep, met)
    assert us.shape == samples.shape
    assert np.allclose(co.from_lepton_frame(us, lep, met), samples, atol=1e-9, rtol=1e-9)


def test_the_first_coordinate_is_the_w_mass_squared(event):
    lep, met, nu = event
    u = co.to_lepton_frame(nu, lep, met)
    e_l = np.linalg.norm(lep, axis=-1)
    e_n = np.linalg.norm(nu, axis=-1)
    m2 = (e_l + e_n) ** 2 - np.sum((lep + nu) ** 2, axis=-1)
    assert np.allclose(np.exp(u[..., 0]), m2, rtol=1e-9)


def test_log_jacobian_equals_finite_differences(event):
    lep, met, nu = event
    u = co.to_lepton_frame(nu[:40], lep[:40], met[:40])
    h = 1e-6
    for i in range(40):
        for side in (0, 1):
            jac = np.empty((3, 3))
            for k in range(3):
                up, dn = u[i:i + 1].copy(), u[i:i + 1].copy()
                up[0, side, k] += h
                dn[0, side, k] -= h
                jac[:, k] = (co.from_lepton_frame(up, lep[i:i + 1], met[i:i + 1])[0, side]
                             - co.from_lepton_frame(dn, lep[i:i + 1], met[i:i + 1])[0, side]) / (2 * h)
            one = co.log_abs_det_jacobian(u[i:i + 1], lep[i:i + 1])[0]
            # this neutrino's term of the docstring's formula, against the numerical determinant
            half = np.arctan(np.exp(u[i, side, 1] / 2))
            r = np.linalg.norm(nu[i, side])
            formula = 3 * np.log(r) + 2 * np.log(np.sin(2 * half)) - np.log(2.0)
            assert np.log(abs(np.linalg.det(jac))) == pytest.approx(formula, abs=1e-5)
            assert np.isfinite(one)
    total = co.log_abs_det_jacobian(u, lep[:40])
    r = np.linalg.norm(nu[:40], axis=-1)
    half = np.arctan(np.exp(u[..., 1] / 2))
    assert np.allclose(total, (3 * np.log(r) + 2 * np.log(np.sin(2 * half)) - np.log(2.0)).sum(-1))


def test_psi_wraps_and_is_measured_from_met(event):
    lep, met, nu = event
    u = co.to_lepton_frame(nu, lep, met)
    assert np.all((u[..., 2] > -np.pi) & (u[..., 2] <= np.pi))
    shifted = u.copy()
    shifted[..., 2] += 2 * np.pi
    assert np.allclose(co.from_lepton_frame(shifted, lep, met), nu, atol=1e-8)
    assert co.wrap_angle(np.pi) == np.pi and co.wrap_angle(-np.pi) == np.pi
    # a neutrino along MET's perpendicular projection has psi = 0
    lep1 = np.array([[[50.0, 0.0, 0.0], [0.0, 50.0, 0.0]]])
    met1 = np.array([[0.0, 30.0]])
    nu1 = np.array([[[10.0, 20.0, 0.0], [-5.0, 5.0, 0.0]]])
    assert co.to_lepton_frame(nu1, lep1, met1)[0, 0, 2] == pytest.approx(0.0, abs=1e-12)


def test_guards_bound_the_inverse(event):
    lep, met, nu = event
    u = co.to_lepton_frame(nu, lep, met)
    g = co.Guards.from_training(u, lep)
    far = u.copy()
    far[..., 1] = -80.0  # deep in the collinear region: |p| = m^2 / (4 |l| sin^2) explodes
    assert np.linalg.norm(co.from_lepton_frame(far, lep, met), axis=-1).max() > 1e12
    guarded = g.apply(far, lep)
    clipped = co.from_lepton_frame(guarded, lep, met)
    # |p| within the training range of log |p| widened by 5 % of its span
    p_max = np.exp(g.log_p_max).max()
    assert np.linalg.norm(clipped, axis=-1).max() <= p_max * (1 + 1e-9)
    assert p_max < 1.5 * np.linalg.norm(nu, axis=-1).max()
    assert g.outside(far, lep).all() and not g.outside(u, lep).any()
    # coordinates already inside are left as they are
    assert np.allclose(g.apply(u, lep), u)


@pytest.mark.parametrize("call, message", [
    (lambda lep, met, nu: co.to_lepton_frame(nu[..., :2], lep, met), "neutrinos"),
    (lambda lep, met, nu: co.to_lepton_frame(nu, lep[:-1], met), "same events"),
    (lambda lep, met, nu: co.to_lepton_frame(np.zeros_like(nu), lep, met), "zero momentum"),
    (lambda lep, met, nu: co.to_lepton_frame(nu, np.zeros_like(lep), met), "zero momentum"),
    (lambda lep, met, nu: co.to_lepton_frame(nu * np.nan, lep, met), "NaN"),
    (lambda lep, met, nu: co.from_lepton_frame(np.full_like(nu, 800.0), lep, met), "overflowed"),
    (lambda lep, met, nu: co.Guards.from_training(nu, lep, widen=-1), "widen"),
])
def test_bad_input_is_named(event, call, message):
    with pytest.raises(ValueError, match=message):
        call(*event)
