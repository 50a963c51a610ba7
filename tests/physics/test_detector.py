"""posteval.physics.detector: resolutions, b-tagging, padding, b matching, dressing and isolation."""

import numpy as np
import pytest

from posteval.physics import detector
from posteval.physics import fourvectors as fv
from posteval.physics.config import DetectorConfig


def test_resolution_and_tagging_formulas():
    cfg = DetectorConfig()
    # HCal, |eta| < 1.7: sqrt((0.0302 E)^2 + 0.5205^2 E + 1.59^2)
    assert detector.jet_energy_resolution(np.array([100.0]), np.array([0.3]), cfg)[0] == pytest.approx(
        np.sqrt(3.02**2 + 0.5205**2 * 100 + 1.59**2))
    assert detector.jet_energy_resolution(np.array([100.0]), np.array([2.0]), cfg)[0] == pytest.approx(
        np.sqrt(5.0**2 + 0.706**2 * 100))
    # Muon, 0.5 < |eta| < 1.5: sqrt(0.015^2 + (1.5e-4 pT)^2)
    mu = detector.lepton_pt_resolution(np.array([50.0]), np.array([1.0]), np.array([True]), cfg)[0]
    assert mu == pytest.approx(np.hypot(0.015, 1.5e-4 * 50))
    # Electron: track sqrt(0.03^2 + (1.3e-3 pT)^2) combined with ECal sqrt(0.0017^2 + 0.101^2 / E).
    el = detector.lepton_pt_resolution(np.array([50.0]), np.array([0.0]), np.array([False]), cfg)[0]
    track, ecal = np.hypot(0.03, 1.3e-3 * 50), np.sqrt(0.0017**2 + 0.101**2 / 50)
    assert el == pytest.approx(1 / np.sqrt(1 / track**2 + 1 / ecal**2))
    eff = detector.btag_efficiency(np.array([100.0, 100.0, 100.0]), np.array([5, 4, 0]), cfg)
    np.testing.assert_allclose(eff, [1.364 * np.tanh(0.237) * 30 / (1 + 11.063),
                                     0.090 * np.tanh(61.605) / (1 + 0.124), 0.00352 + 5.1e-4])


def test_pad_leading_and_b_matching():
    values = np.array([[1.0], [5.0], [3.0], [7.0]])
    event = np.array([0, 0, 0, 2])
    out, mask, counts = detector.pad_leading(values, event, values[:, 0], 3, 2)
    np.testing.assert_array_equal(out[..., 0], [[5, 3], [0, 0], [7, 0]])
    np.testing.assert_array_equal(mask, [[True, True], [False, False], [True, False]])
    np.testing.assert_array_equal(counts, [3, 0, 1])
    jet_eta = np.array([[0.0, 1.0, 2.0]])
    jet_phi = np.zeros((1, 3))
    mask = np.ones((1, 3), dtype=bool)
    b_p4 = np.stack([fv.from_pt_eta_phi_m(50.0, 1.05, 0.0, 4.8), fv.from_pt_eta_phi_m(50.0, 3.0, 0.0, 4.8)])[None]
    np.testing.assert_array_equal(detector.match_b_quarks(jet_eta, jet_phi, mask, b_p4, 0.4), [[-1, 0, -1]])


def test_dressing_and_isolation():
    cfg = DetectorConfig()
    # Event 0: a lepton along +x, a photon 0.05 away (dressed), a 10 GeV particle 0.3 away
    # (in the isolation cone), a 10 GeV particle 1.0 away (outside); the second lepton along -x.
    lep = np.array([[fv.from_pt_eta_phi_m(50.0, 0.0, 0.0, 0.0), fv.from_pt_eta_phi_m(40.0, 0.0, np.pi, 0.0)]])
    parts = np.array([fv.from_pt_eta_phi_m(5.0, 0.05, 0.0, 0.0), fv.from_pt_eta_phi_m(10.0, 0.3, 0.0, 0.0),
                      fv.from_pt_eta_phi_m(10.0, 1.0, 0.0, 0.0)])
    rec = type("Rec", (), {})()
    rec.p4, rec.pid, rec.event, rec.n_events = parts, np.array([22, 21, 21]), np.zeros(3, dtype=int), 1
    visible = np.ones(3, dtype=bool)
    dressed, iso = detector.dress_and_isolate(rec, visible, lep, np.ones((1, 2), dtype=bool), cfg)
    np.testing.assert_allclose(dressed[0, 0], lep[0, 0] + parts[0])
    np.testing.assert_allclose(dressed[0, 1], lep[0, 1])
    np.testing.assert_array_equal(visible, [False, True, True])
    np.testing.assert_allclose(iso, [[10.0, 0.0]])
