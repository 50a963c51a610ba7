"""posteval.physics.kinematics: reconstruction of W, top and ttbar from leptons, b-jets and neutrinos;
the MET resolution and mass windows of chapter 3."""

import numpy as np
import pytest

from posteval.physics.kinematics import (neutrino_p4, reconstruct_ttbar, truth_matched_bjets, in_mass_window,
                                         met_resolution)

LEP = np.array([[[10.0, 0, 0, 10], [-10, 0, 0, 10]]])
BJ = np.array([[[0.0, 20, 0, 20], [0, -20, 0, 20]]])
NU = np.array([[[0.0, 0, 5], [0, 0, -5]]])


def test_hand_computed_event():
    r = reconstruct_ttbar(LEP, BJ, NU)
    # W+ = (10, 0, 0, 10) + (0, 0, 5, 5) = (10, 0, 5, 15): m^2 = 225 - 100 - 25 = 100.
    np.testing.assert_allclose(r["w_p4"][0], [[10, 0, 5, 15], [-10, 0, -5, 15]])
    np.testing.assert_allclose(r["m_lnu"][0], [10, 10])
    # t = W+ + b = (10, 20, 5, 35): m^2 = 1225 - 100 - 400 - 25 = 700.
    np.testing.assert_allclose(r["top_p4"][0, 0], [10, 20, 5, 35])
    np.testing.assert_allclose(r["m_lnub"][0], np.sqrt([700, 700]))
    np.testing.assert_allclose(r["pt_top"][0], np.sqrt([500, 500]))
    np.testing.assert_allclose(r["ttbar_p4"][0], [0, 0, 0, 70])
    np.testing.assert_allclose(r["m_ttbar"], [70])
    np.testing.assert_allclose(r["pt_ttbar"], [0], atol=1e-12)
    np.testing.assert_allclose(r["nu_pz"][0], [5, -5])
    np.testing.assert_allclose(r["nu_e"][0], [5, 5])


def test_samples_broadcast_like_a_loop():
    rng = np.random.default_rng(1)
    n, m = 4, 3
    lep = neutrino_p4(rng.normal(0, 40, (n, 2, 3)))
    bj = neutrino_p4(rng.normal(0, 60, (n, 2, 3)))
    samples = rng.normal(0, 50, (n, m, 2, 3))
    together = reconstruct_ttbar(lep, bj, samples)
    assert together["m_ttbar"].shape == (n, m) and together["top_p4"].shape == (n, m, 2, 4)
    for k in range(m):
        single = reconstruct_ttbar(lep, bj, samples[:, k])
        for key, value in single.items():
            np.testing.assert_allclose(together[key][:, k], value, rtol=1e-12)
    per_sample_jets = np.repeat(bj[:, None], m, axis=1)
    np.testing.assert_allclose(reconstruct_ttbar(lep, per_sample_jets, samples)["m_ttbar"], together["m_ttbar"])


@pytest.mark.parametrize("lep, bj, nu", [
    (LEP[:, :1], BJ, NU),
    (LEP, BJ[..., :3], NU),
    (LEP, BJ, NU[..., :2]),
    (LEP, BJ, np.concatenate([NU, NU])),
    (LEP, BJ, np.full_like(NU, np.nan)),
    (LEP, np.repeat(BJ[:, None], 2, 1), NU),
])
def test_bad_shapes_raise(lep, bj, nu):
    with pytest.raises(ValueError):
        reconstruct_ttbar(lep, bj, nu)


def test_truth_matched_bjets():
    jets = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    idx = np.array([[-1, 1, 0], [0, -1, -1]])
    out, both = truth_matched_bjets(jets, idx)
    np.testing.assert_array_equal(out[0], jets[0, [2, 1]])
    np.testing.assert_array_equal(out[1, 0], jets[1, 0])
    np.testing.assert_array_equal(out[1, 1], 0)
    np.testing.assert_array_equal(both, [True, False])
    with pytest.raises(ValueError):
        truth_matched_bjets(jets, idx[:, :2])


RNG = np.random.default_rng(3)


def test_met_resolution_of_a_gaussian_smearing():
    n = 200_000
    nu = RNG.normal(0, 40, size=(n, 2, 3))
    met = nu[:, :, :2].sum(axis=1) + RNG.normal(0, 8.0, size=(n, 2))
    assert met_resolution({"met": met, "neutrino_momenta": nu}) == pytest.approx(8.0, rel=0.01)
    with pytest.raises(ValueError, match="neutrino_momenta must have shape"):
        met_resolution({"met": met, "neutrino_momenta": nu[:, 0]})


def test_in_mass_window_fraction_per_event():
    masses = np.array([[80.0, 95.0], [70.5, 81.0], [200.0, 0.0]])
    np.testing.assert_allclose(in_mass_window(masses, 80.4, 10.0), [0.5, 1.0, 0.0])
    with pytest.raises(ValueError, match="window must be positive"):
        in_mass_window(masses, 80.4, 0.0)
