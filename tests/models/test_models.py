"""posteval.models, the package: shapes, normalisation, seeding and context gradients of the chapter-2
models, and their bad input (each model's own tests: tests/models/test_mdn.py, test_cfm.py, test_mlp.py)."""

import math

import pytest
import torch

from posteval.models import ConditionalFlow, ConditionalFlowMatching, MixtureDensityNetwork, PointRegressor


N, M = 7, 5


def make(kind, dim, context_dim=3):
    torch.manual_seed(0)
    if kind == "flow":
        return ConditionalFlow(dim, context_dim, transforms=2, hidden=16, bins=6)
    if kind == "mdn":
        return MixtureDensityNetwork(dim, context_dim, components=3, hidden=(16,))
    return ConditionalFlowMatching(dim, context_dim, hidden=16, layers=2)


@pytest.mark.parametrize("kind", ["flow", "mdn", "cfm"])
@pytest.mark.parametrize("dim", [1, 3])
def test_sample_shapes_and_seeding(kind, dim):
    model = make(kind, dim)
    context = torch.randn(N, 3)
    s1 = model.sample(context, M, generator=torch.Generator().manual_seed(1))
    s2 = model.sample(context, M, generator=torch.Generator().manual_seed(1))
    s3 = model.sample(context, M, generator=torch.Generator().manual_seed(2))
    assert s1.shape == (N, M, dim)
    assert torch.isfinite(s1).all()
    assert torch.equal(s1, s2) and not torch.equal(s1, s3)
    assert not s1.requires_grad


@pytest.mark.parametrize("kind", ["flow", "mdn"])
@pytest.mark.parametrize("dim", [1, 2])
def test_log_prob_shape_and_1d_input(kind, dim):
    model = make(kind, dim)
    x, context = torch.randn(N, dim), torch.randn(N, 3)
    lp = model.log_prob(x, context)
    assert lp.shape == (N,) and torch.isfinite(lp).all()
    if dim == 1:
        torch.testing.assert_close(model.log_prob(x[:, 0], context), lp)
    assert model.loss((context, x)).shape == ()


@pytest.mark.parametrize("kind", ["flow", "mdn"])
def test_density_integrates_to_one_and_matches_its_samples(kind):
    model = make(kind, 1, context_dim=2)
    context = torch.tensor([[0.3, -1.2]])
    grid = torch.linspace(-12, 12, 24001)[:, None]
    with torch.no_grad():
        dens = model.log_prob(grid, context.expand(grid.shape[0], 2)).exp()
    step = float(grid[1] - grid[0])
    assert float(dens.sum() * step) == pytest.approx(1.0, abs=2e-3)
    mean = float((grid[:, 0] * dens).sum() * step)
    sd = math.sqrt(float(((grid[:, 0] - mean) ** 2 * dens).sum() * step))
    s = model.sample(context, 40_000, generator=torch.Generator().manual_seed(0))[0, :, 0]
    assert float(s.mean()) == pytest.approx(mean, abs=5 * sd / math.sqrt(40_000))
    assert float(s.std()) == pytest.approx(sd, rel=0.03)


@pytest.mark.parametrize("kind", ["flow", "mdn", "cfm"])
def test_gradients_flow_into_the_context(kind):
    model = make(kind, 2)
    context = torch.randn(N, 3, requires_grad=True)
    model.loss((context, torch.randn(N, 2))).backward()
    assert context.grad is not None and float(context.grad.abs().sum()) > 0
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: ConditionalFlow(0, 2), "dim"),
        (lambda: ConditionalFlow(1, 0), "context_dim"),
        (lambda: ConditionalFlow(1, 2, hidden=(0,)), "hidden"),
        (lambda: ConditionalFlowMatching(1, 2, layers=0), "layers"),
        (lambda: MixtureDensityNetwork(1, 2, components=0), "components"),
        (lambda: PointRegressor(1, 2, criterion="huber"), "criterion"),
        (lambda: make("flow", 2).log_prob(torch.randn(4, 3), torch.randn(4, 3)), "x must have shape"),
        (lambda: make("flow", 2).log_prob(torch.randn(4, 2), torch.randn(5, 3)), "x has 4 events"),
        (lambda: make("mdn", 2).sample(torch.randn(4, 2), 3), "context must have shape"),
        (lambda: make("cfm", 2).sample(torch.randn(4, 3), 0), "m must"),
        (lambda: make("cfm", 2).sample(torch.randn(4, 3), 2, method="heun"), "method"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
