"""posteval.data.ttbar_features: event arrays, standardisation and derived observables."""

import numpy as np
import pytest

from posteval.data.ttbar_features import (OBSERVABLE_NAMES, EventArrays, Standardizer, arrays_from_events,
                                     build_event_arrays, derived_observables, matched_observables, momentum_features, split_indices,
                                     subset_events, to_tensors)


def synthetic_arrays(n=40, n_jets=4, seed=0):
    rng = np.random.default_rng(seed)
    mask = rng.random((n, n_jets)) > 0.3
    mask[:, 0] = True

    def jet_like(lo, hi):
        return rng.uniform(lo, hi, (n, n_jets)) * mask
    return build_event_arrays(
        rng.uniform(25, 200, (n, 2)), rng.normal(0, 1, (n, 2)), rng.uniform(-3, 3, (n, 2)),
        rng.uniform(200, 400, (n, 2)), np.tile([-1.0, 1.0], (n, 1)), rng.integers(0, 2, (n, 2)),
        jet_like(25, 200), jet_like(-2, 2), jet_like(-3, 3), jet_like(300, 500), (rng.random((n, n_jets)) > 0.5),
        mask, rng.normal(0, 50, (n, 2)), rng.normal(0, 80, (n, 2, 3)))


def test_momentum_features_values():
    out = momentum_features(np.array([10.0, 0.0]), np.array([0.5, 0.0]), np.array([np.pi / 2, 0.0]),
                            np.array([np.e ** 3, 0.0]))
    np.testing.assert_allclose(out[0], [0.0, 10.0, 10 * np.sinh(0.5), 3.0], atol=1e-12)
    np.testing.assert_array_equal(out[1], 0.0)


def test_standardizer_uses_training_statistics_and_keeps_padding_zero():
    arrays = synthetic_arrays()
    split = split_indices(len(arrays), {"train": 0.5, "test": 0.5}, seed=3)
    assert not set(split["train"]) & set(split["test"])
    train, test = arrays.subset(split["train"]), arrays.subset(split["test"])
    scaler = Standardizer.fit(train)
    st = scaler.transform(train)
    np.testing.assert_allclose(st.targets.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(st.targets.std(0), 1, atol=1e-5)
    np.testing.assert_allclose(st.jets[st.jet_mask][:, :4].mean(0), 0, atol=1e-4)
    ste = scaler.transform(test)
    np.testing.assert_array_equal(ste.jets[~ste.jet_mask], 0.0)
    np.testing.assert_array_equal(ste.leptons[..., 4:], test.leptons[..., 4:])  # charge, flavour untouched
    np.testing.assert_allclose(ste.targets, (test.targets - train.targets.mean(0)) / train.targets.std(0),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scaler.targets_to_physical(ste.targets), test.targets, rtol=1e-4, atol=1e-3)
    assert [t.shape for t in to_tensors(ste)][2] == (len(test), 4, 5)


def fake_events(n=6, n_slots=4, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.zeros((n, n_slots), dtype=bool)
    mask[:, :2] = True
    mask[0] = True
    ev = {f"lep_{k}": rng.uniform(1, 2, (n, 2)) for k in ("pt", "eta", "phi", "energy", "charge", "flavour")}
    ev.update({f"jet_{k}": rng.uniform(1, 2, (n, n_slots)) * mask for k in ("pt", "eta", "phi", "energy", "btag")})
    ev.update(jet_mask=mask, met=rng.normal(size=(n, 2)), neutrino_momenta=rng.normal(size=(n, 2, 3)),
              n_jets=mask.sum(1), n_bjets=np.ones(n, dtype=int), n_generated=np.int64(100))
    return ev


def test_arrays_from_events_truncates_jets_but_keeps_counts():
    ev = fake_events()
    arrays = arrays_from_events(ev, max_jets=2)
    assert arrays.jets.shape == (6, 2, 5)
    np.testing.assert_array_equal(arrays.global_feats[:, 2], ev["n_jets"])  # 4 for event 0, not 2
    np.testing.assert_allclose(arrays.targets, ev["neutrino_momenta"].reshape(6, 6), rtol=1e-6)
    assert len(subset_events(ev, np.array([1, 3]))["met"]) == 2
    with pytest.raises(ValueError, match="max_jets"):
        arrays_from_events(ev, max_jets=5)
    with pytest.raises(ValueError, match="met"):
        arrays_from_events({k: v for k, v in ev.items() if k != "met"})


def test_derived_observables_of_a_known_configuration():
    # each side: lepton along +-x (E = 40) with the neutrino opposite -> m(l nu) = 80;
    # a b-jet at rest with E = 92.5 -> top at rest with m = 172.5, m(ttbar) = 345
    lep = np.array([[[40.0, 0, 0, 40], [0, 40.0, 0, 40]]])
    bjets = np.array([[[0, 0, 0, 92.5], [0, 0, 0, 92.5]]])
    nus = np.array([[[-40.0, 0, 0], [0, -40.0, 0]]])
    obs = dict(zip(OBSERVABLE_NAMES, derived_observables(lep, bjets, nus)[0]))
    expected = {"nu_pz": 0, "nubar_pz": 0, "m_ttbar": 345, "top_pt": 0, "tbar_pt": 0, "m_lnub_top": 172.5,
                "m_lnub_tbar": 172.5, "m_lnu_wplus": 80, "m_lnu_wminus": 80}
    for name, value in expected.items():
        assert obs[name] == pytest.approx(value, abs=1e-9), name
    samples = np.repeat(nus.reshape(1, 1, 6), 3, axis=1)  # (n, m, 6) works as (n, m, 2, 3)
    np.testing.assert_allclose(derived_observables(lep, bjets, samples)[0],
                               np.repeat(derived_observables(lep, bjets, nus), 3, axis=0))


def test_matched_observables_keep_only_events_with_both_b_jets_matched():
    lep = np.array([[[40.0, 0, 0, 40], [0, 40.0, 0, 40]]] * 2)
    jets = np.array([[[1.0, 0, 0, 50], [0, 0, 0, 92.5], [0, 0, 0, 92.5]]] * 2)
    events = {"lep_p4": lep, "jet_p4": jets, "jet_truth_index": np.array([[-1, 0, 1], [-1, 0, -1]])}
    nus = np.array([[-40.0, 0, 0, 0, -40.0, 0]] * 2)
    obs, matched = matched_observables(events, nus)
    np.testing.assert_array_equal(matched, [True, False])
    np.testing.assert_allclose(obs, derived_observables(lep[:1], jets[:1, 1:], nus[:1]))
    with pytest.raises(ValueError, match="neutrinos has 1 events"):
        matched_observables(events, nus[:1])


def test_features_reject_bad_input():
    arrays = synthetic_arrays(n=5)
    bad = arrays.targets.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="targets"):
        EventArrays(arrays.global_feats, arrays.leptons, arrays.jets, arrays.jet_mask, bad)
    with pytest.raises(ValueError, match="fractions"):
        split_indices(10, {"train": 0.8, "test": 0.5})
