"""Every model class of the book against the one contract of `posteval.models`.

loss(batch) -> scalar with gradients into every parameter; predict(context) -> (n, dim) for point
estimators; sample(context, m, generator) -> (n, m, dim), reproducible for a seeded generator;
log_prob(x, context) -> (n,) for densities; and a few steps of `fit` on one batch lower its loss.
"""

import pytest
import torch

from posteval.models import (ConditionalFlow, ConditionalFlowMatching, MixtureDensityNetwork, PointRegressor,
                             TrainingSettings, fit)
from posteval.models.event_models import EventCFM, EventFlow, MMDRegressor, TransformerRegressor, build_event_model

N, M, DIM, CONTEXT_DIM = 16, 5, 2, 3
EVENT_DIMS = (4, 6, 5)
TINY_ENCODER = dict(width=16, heads=2, self_layers=1, class_layers=1, ff_hidden=32, embed_hidden=32,
                    context_dim=8, context_hidden=16)

# name: (builder, context kind, steps of one-batch training, learning rate). The steps and rates are ones at
# which no fit diverges under any kernel setting of scripts/cross_dispatch.py, on seeds 0-2, and each passes with
# a quarter to spare (the fit drops the loss by at least 1.25 times what the test asks; measured 2026-12-07: the
# mixture density network's 200 steps at 1e-2 diverged with ATen's AVX2 kernels, 3.09 -> 7.83 nats, and at 3e-3
# drops 2.6 times what is asked; the flow matching's 300 steps at 1e-2 dropped only 1.23 times on one seed).
MODELS = {
    "PointRegressor": (lambda: PointRegressor(DIM, CONTEXT_DIM, hidden=16), "plain", 200, 1e-2),
    "MixtureDensityNetwork": (lambda: MixtureDensityNetwork(DIM, CONTEXT_DIM, components=2, hidden=16),
                              "plain", 200, 3e-3),
    "ConditionalFlow": (lambda: ConditionalFlow(DIM, CONTEXT_DIM, transforms=2, hidden=16, bins=4), "plain", 200, 1e-2),
    "ConditionalFlowMatching": (lambda: ConditionalFlowMatching(DIM, CONTEXT_DIM, hidden=16, layers=2, steps=4),
                                "plain", 600, 2e-2),
    "TransformerRegressor": (lambda: build_event_model("transformer_mse", EVENT_DIMS, TINY_ENCODER, {"hidden": 16},
                                                       target_dim=DIM), "event", 200, 3e-3),
    "MMDRegressor": (lambda: build_event_model("transformer_mmd", EVENT_DIMS, TINY_ENCODER, {"hidden": 16},
                                               target_dim=DIM), "event", 200, 3e-3),
    "EventFlow": (lambda: build_event_model("flow", EVENT_DIMS, TINY_ENCODER,
                                            {"transforms": 2, "hidden": 16, "bins": 4}, target_dim=DIM),
                  "event", 200, 3e-3),
    "EventCFM": (lambda: build_event_model("cfm", EVENT_DIMS, TINY_ENCODER, {"hidden": 16, "layers": 2, "steps": 4},
                                           target_dim=DIM), "event", 300, 3e-3),
}
POINT = (PointRegressor, TransformerRegressor, MMDRegressor)
SAMPLERS = (MixtureDensityNetwork, ConditionalFlow, ConditionalFlowMatching, EventFlow, EventCFM)
DENSITIES = (MixtureDensityNetwork, ConditionalFlow, EventFlow)


def test_every_model_class_is_listed():
    classes = {PointRegressor, MixtureDensityNetwork, ConditionalFlow, ConditionalFlowMatching,
               TransformerRegressor, MMDRegressor, EventFlow, EventCFM}
    assert {type(build()) for build, *_ in MODELS.values()} == classes
    assert {c.__name__ for c in classes} == set(MODELS)


def context_and_target(kind, seed=0):
    g = torch.Generator().manual_seed(seed)
    if kind == "plain":
        context = torch.randn(N, CONTEXT_DIM, generator=g)
    else:
        mask = torch.rand(N, 4, generator=g) > 0.3
        mask[:, 0] = True
        context = (torch.randn(N, EVENT_DIMS[0], generator=g), torch.randn(N, 2, EVENT_DIMS[1], generator=g),
                   torch.randn(N, 4, EVENT_DIMS[2], generator=g) * mask[..., None], mask)
    return context, torch.randn(N, DIM, generator=g)


def batch_of(context, x):
    return (context, x) if isinstance(context, torch.Tensor) else (*context, x)


@pytest.mark.parametrize("name", MODELS)
def test_contract(name):
    build, kind, steps, lr = MODELS[name]
    torch.manual_seed(0)
    model = build()
    assert isinstance(model, torch.nn.Module)
    context, x = context_and_target(kind)
    batch = batch_of(context, x)

    loss = model.loss(batch)
    assert loss.shape == () and torch.isfinite(loss)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
    model.zero_grad()

    assert isinstance(model, POINT) == hasattr(model, "predict")
    assert isinstance(model, SAMPLERS) == hasattr(model, "sample")
    assert isinstance(model, DENSITIES) == hasattr(model, "log_prob")
    if isinstance(model, POINT):
        pred = model.predict(context)
        assert pred.shape == (N, DIM) and not pred.requires_grad
    if isinstance(model, SAMPLERS):
        s1 = model.sample(context, M, generator=torch.Generator().manual_seed(1))
        s2 = model.sample(context, M, generator=torch.Generator().manual_seed(1))
        s3 = model.sample(context, M, generator=torch.Generator().manual_seed(2))
        assert s1.shape == (N, M, DIM) and torch.isfinite(s1).all()
        assert torch.equal(s1, s2) and not torch.equal(s1, s3)
    if isinstance(model, DENSITIES):
        lp = model.log_prob(x, context)
        assert lp.shape == (N,) and torch.isfinite(lp).all()

    # one-batch overfit through the book's loop: the model's own loss falls well below its start
    before, after, asked = one_batch_fit(model, batch, steps, lr)
    assert after < before - asked, (before, after)


def one_batch_fit(model, batch, steps, lr):
    """Fit ``model`` on one batch for ``steps`` full-batch steps at rate ``lr`` through the book's `fit`:
    its loss before and after (the same noise for both) and the drop the contract asks (a nat per event of
    a density, half the loss of any other model)."""
    with torch.no_grad(), torch.random.fork_rng():
        torch.manual_seed(7)
        before = float(model.loss(batch))
    hist = fit(model, batch, settings=TrainingSettings(epochs=steps, batch_size=len(batch[-1]), lr=lr), seed=0,
               disable=True)
    assert hist.epochs == steps
    with torch.no_grad(), torch.random.fork_rng():
        torch.manual_seed(7)
        after = float(model.loss(batch))
    return before, after, (1.0 if isinstance(model, DENSITIES) else 0.5 * abs(before))
