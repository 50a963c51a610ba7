"""Tests of the event encoder, MMD, ttbar features and the four event models (tiny sizes)."""

import numpy as np
import pytest
import torch

from posteval.data.ttbar_features import (OBSERVABLE_NAMES, EventArrays, Standardizer, arrays_from_events,
                                     build_event_arrays, derived_observables, matched_observables, momentum_features, split_indices,
                                     subset_events, to_tensors)
from posteval.models.encoder import EventEncoder
from posteval.models import draw_samples, predict_points
from posteval.models.event_models import (MODEL_KINDS, POINT_KINDS, EventCFM, EventFlow, MMDRegressor, TransformerRegressor,
                                     build_event_model)
from posteval.models.mmd import mmd2

DIMS = (4, 6, 5)
TINY_ENCODER = dict(width=16, heads=2, self_layers=1, class_layers=1, ff_hidden=32, embed_hidden=32,
                    context_dim=8, context_hidden=16)
TINY_HEADS = {"transformer_mse": dict(hidden=32), "transformer_mmd": dict(hidden=32, mmd_weight=1.0),
              "flow": dict(transforms=2, hidden=(32, 32), bins=8), "cfm": dict(hidden=32, layers=2, steps=8)}


def random_batch(n=12, n_jets=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(n, n_jets, generator=g) > 0.4
    mask[:, :2] = True
    jets = torch.randn(n, n_jets, DIMS[2], generator=g) * mask[..., None]
    return (torch.randn(n, DIMS[0], generator=g), torch.randn(n, 2, DIMS[1], generator=g), jets, mask,
            torch.randn(n, 6, generator=g))


def tiny_model(kind, seed=0):
    torch.manual_seed(seed)
    return build_event_model(kind, DIMS, TINY_ENCODER, TINY_HEADS[kind])


# ---------------------------------------------------------------- encoder

@pytest.mark.parametrize("training", [True, False])
def test_encoder_padding_does_not_change_output(training):
    torch.manual_seed(1)
    enc = EventEncoder(*DIMS, **TINY_ENCODER).train(training)
    g, lep, jets, mask, _ = random_batch()
    ref = enc(g, lep, jets, mask)
    # garbage in the padded slots, and three extra padded slots
    junk = torch.where(mask[..., None], jets, 50 * torch.randn_like(jets))
    jets2 = torch.cat([junk, torch.randn(len(g), 3, DIMS[2])], dim=1)
    mask2 = torch.cat([mask, torch.zeros(len(g), 3, dtype=torch.bool)], dim=1)
    torch.testing.assert_close(enc(g, lep, jets2, mask2), ref, rtol=1e-5, atol=1e-5)
    # a real jet does change the output
    jets3 = jets.clone()
    jets3[:, 0] += 1.0
    assert (enc(g, lep, jets3, mask) - ref).abs().max() > 1e-3


def test_encoder_is_jet_permutation_invariant():
    torch.manual_seed(2)
    enc = EventEncoder(*DIMS, **TINY_ENCODER).eval()
    g, lep, jets, mask, _ = random_batch()
    perm = torch.randperm(jets.shape[1])
    torch.testing.assert_close(enc(g, lep, jets[:, perm], mask[:, perm]), enc(g, lep, jets, mask),
                               rtol=1e-5, atol=1e-5)


def test_encoder_bad_input_names_argument():
    enc = EventEncoder(*DIMS, **TINY_ENCODER)
    g, lep, jets, mask, _ = random_batch()
    with pytest.raises(ValueError, match="jet_mask"):
        enc(g, lep, jets, mask.float())
    with pytest.raises(ValueError, match="leptons"):
        enc(g, lep[..., :3], jets, mask)
    with pytest.raises(ValueError, match="heads"):
        EventEncoder(*DIMS, width=16, heads=3)


# ---------------------------------------------------------------- MMD

def test_mmd_zero_for_identical_batches_positive_otherwise():
    x = torch.randn(64, 6, generator=torch.Generator().manual_seed(0))
    assert mmd2(x, x).item() == 0.0
    assert mmd2(x, x[torch.randperm(64)]).item() < 1e-6
    shifted = [mmd2(x, x + s).item() for s in (0.1, 0.5, 2.0)]
    assert 0 < shifted[0] < shifted[1] < shifted[2]


def test_mmd_gradient_finite_and_bad_input():
    x = torch.randn(16, 3, requires_grad=True)
    mmd2(x, x.detach()).backward()
    assert torch.isfinite(x.grad).all()
    with pytest.raises(ValueError, match="bandwidths"):
        mmd2(x, x, bandwidths=(1.0, -1.0))
    with pytest.raises(ValueError, match="y"):
        mmd2(x, torch.randn(4, 2))


# ---------------------------------------------------------------- features

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


# ---------------------------------------------------------------- models

@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_model_output_shapes(kind):
    model = tiny_model(kind)
    batch = random_batch(n=7)
    loss = model.loss(batch)
    assert loss.shape == () and torch.isfinite(loss)
    if isinstance(model, TransformerRegressor):
        assert predict_points(model, batch[:4], batch_size=3).shape == (7, 6)
    else:
        samples = draw_samples(model, batch[:4], 5, batch_size=3, seed=1)
        assert samples.shape == (7, 5, 6) and np.isfinite(samples).all()
        np.testing.assert_array_equal(samples, draw_samples(model, batch[:4], 5, batch_size=3, seed=1))
        assert not np.array_equal(samples, draw_samples(model, batch[:4], 5, batch_size=3, seed=2))


def overfit(model, batch, steps, lr=3e-3):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    torch.manual_seed(0)
    for _ in range(steps):
        opt.zero_grad()
        model.loss(batch).backward()
        opt.step()


@pytest.mark.parametrize("kind", POINT_KINDS)
def test_regressors_overfit_one_batch(kind):
    model = tiny_model(kind)
    batch = random_batch(n=16, seed=4)
    overfit(model, batch, steps=300)
    pred = predict_points(model, batch[:4])
    assert np.mean((pred - batch[4].numpy()) ** 2) < 0.05  # targets have unit variance


def test_flow_overfits_one_batch():
    model = tiny_model("flow")
    batch = random_batch(n=16, seed=5)
    with torch.no_grad():
        before = model.loss(batch).item()
    overfit(model, batch, steps=300)
    with torch.no_grad():
        after = model.loss(batch).item()
    assert after < before - 4.0  # NLL in nats per event (6 dims)
    samples = draw_samples(model, batch[:4], 64, seed=0)
    err = np.abs(np.median(samples, axis=1) - batch[4].numpy()).mean()
    assert err < 0.3


def test_cfm_overfits_one_batch():
    model = tiny_model("cfm")
    batch = random_batch(n=16, seed=6)
    overfit(model, batch, steps=800)
    samples = draw_samples(model, batch[:4], 64, seed=0)
    err = np.abs(np.median(samples, axis=1) - batch[4].numpy()).mean()
    assert err < 0.3  # untrained: ~0.8 (unit-normal targets and samples)


def test_model_classes_and_bad_kind():
    assert isinstance(tiny_model("transformer_mmd"), MMDRegressor)
    assert isinstance(tiny_model("flow"), EventFlow) and isinstance(tiny_model("cfm"), EventCFM)
    with pytest.raises(ValueError, match="kind"):
        build_event_model("gan", DIMS)
    with pytest.raises(ValueError, match="batch"):
        tiny_model("transformer_mse").loss(random_batch()[:3])
    with pytest.raises(ValueError, match="context"):
        tiny_model("flow").sample(random_batch()[:3], 2)
