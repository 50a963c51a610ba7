"""posteval.models.cfm: conditional flow matching, its ODE solvers and a learned Gaussian."""

import math

import numpy as np
import pytest
import torch

from posteval.models import ConditionalFlowMatching, TrainingSettings, fit


class ConstantField(ConditionalFlowMatching):
    """v(x, t | c) = c: every ODE solver maps x0 to x0 + c exactly."""

    def velocity(self, x, t, context):
        return context.expand_as(x)


class LinearField(ConditionalFlowMatching):
    """v(x, t | c) = x: the exact flow maps x0 to e * x0."""

    def velocity(self, x, t, context):
        return x


@pytest.mark.parametrize("method", ["euler", "midpoint", "rk4"])
def test_cfm_ode_solvers(method):
    context = torch.tensor([[0.5, -1.0], [2.0, 0.0]], dtype=torch.float64)
    const = ConstantField(2, 2).double()
    noise = torch.randn((2, 4, 2), generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    out = const.sample(context, 4, steps=3, generator=torch.Generator().manual_seed(3), method=method)
    torch.testing.assert_close(out, noise + context[:, None, :])
    linear = LinearField(2, 2).double()
    out = linear.sample(context, 4, steps=20, generator=torch.Generator().manual_seed(3), method=method)
    order = {"euler": 1, "midpoint": 2, "rk4": 4}[method]
    exact = noise * math.e
    assert float((out - exact).abs().max()) < 3 * (1 / 20) ** order * float(exact.abs().max())


def test_cfm_learns_a_conditional_gaussian():
    g = torch.Generator().manual_seed(0)
    c = torch.rand(3000, 1, generator=g) * 4 - 2
    x = c + 0.3 * torch.randn(3000, 1, generator=g)
    torch.manual_seed(0)
    model = ConditionalFlowMatching(1, 1, hidden=32, layers=2)
    fit(model, (c[:2500], x[:2500]), (c[2500:], x[2500:]),
        TrainingSettings(epochs=10, batch_size=100, lr=5e-3), disable=True)
    test_c = torch.tensor([[-1.5], [0.0], [1.5]])
    s = model.sample(test_c, 2000, steps=16, generator=torch.Generator().manual_seed(1))[:, :, 0]
    np.testing.assert_allclose(s.mean(1).numpy(), test_c[:, 0].numpy(), atol=0.1)
    np.testing.assert_allclose(s.std(1).numpy(), 0.3, atol=0.08)
