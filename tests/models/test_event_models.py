"""posteval.models.event_models: the four event models' shapes, overfitting one batch, and their kinds
(tiny sizes; the encoder, MMD and features: tests/models/test_encoder.py, test_mmd.py,
tests/data/test_ttbar_features.py)."""

import numpy as np
import pytest
import torch

from posteval.models import draw_samples, predict_points
from posteval.models.event_models import (MODEL_KINDS, POINT_KINDS, EventCFM, EventFlow, MMDRegressor, TransformerRegressor,
                                     build_event_model)


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
