"""posteval.models.flow: the conditional flow's spline tail bound."""

import pytest
import torch
import zuko

from posteval.models import ConditionalFlow


def test_default_bound_is_zukos_nsf():
    torch.manual_seed(0)
    ours = ConditionalFlow(3, 2, transforms=2, hidden=(16, 16), bins=6)
    torch.manual_seed(0)
    theirs = zuko.flows.NSF(features=3, context=2, bins=6, transforms=2, hidden_features=(16, 16))
    x, c = torch.randn(20, 3), torch.randn(20, 2)
    assert torch.allclose(ours.flow(c).log_prob(x), theirs(c).log_prob(x))


def test_outside_the_bound_the_flow_is_the_identity():
    torch.manual_seed(1)
    flow = ConditionalFlow(3, 2, transforms=2, hidden=(16, 16), bins=6, bound=4.0)
    c = torch.randn(5, 2)
    x = torch.full((5, 3), 4.5)
    assert torch.allclose(flow.flow(c).transform(x), x)
    wide = ConditionalFlow(3, 2, transforms=2, hidden=(16, 16), bins=6, bound=5.0)
    assert not torch.allclose(wide.flow(c).transform(x), x)
    with pytest.raises(ValueError, match="bound"):
        ConditionalFlow(3, 2, bound=0)


@pytest.mark.parametrize("dim, context_dim, transforms, hidden, bins", [
    (6, 48, 4, (64, 64), 8),  # chapter 3's constraint flow
    (4, 16, 3, (32, 32), 8),  # chapter 5's arm
    (1, 1, 3, (16,), 8),      # chapter 2's one feature: zuko's element-wise transform
    (2, 5, 2, (16,), 4),
])
@pytest.mark.parametrize("n", [1, 7, 1000, 4099])
def test_the_inverse_is_zukos_bit_for_bit(dim, context_dim, transforms, hidden, bins, n):
    torch.manual_seed(dim * 100 + n)
    flow = ConditionalFlow(dim, context_dim, transforms=transforms, hidden=hidden, bins=bins)
    with torch.no_grad():  # away from the initialisation's near-identity splines
        for p in flow.parameters():
            p.add_(0.3 * torch.randn_like(p))
        c, z = torch.randn(n, context_dim), 2.0 * torch.randn(3, n, dim)
        ours, zukos = flow.inverse(z, c), flow.flow(c).transform.inv(z)
        assert torch.equal(ours, zukos)
        # and it is the inverse: the forward map takes it back to z, in float64 as closely as zuko's own inverse
        # does (steep splines lose digits both ways: measured up to 7.6e-8 for both on one draw of this test's
        # inputs with ATen's baseline kernels, under 1e-9 on another), and to 1e-6 whatever the draw
        flow64, c64, z64 = flow.double(), c.double(), z.double()
        ours_err = (flow64.flow(c64).transform(flow64.inverse(z64, c64)) - z64).abs().max()
        zukos_err = (flow64.flow(c64).transform(flow64.flow(c64).transform.inv(z64)) - z64).abs().max()
        assert ours_err <= zukos_err and ours_err < 1e-6, (float(ours_err), float(zukos_err))
        flow.float()
        draws = flow.sample(c, 3, generator=torch.Generator().manual_seed(1))
        noise = torch.randn((3, n, dim), generator=torch.Generator().manual_seed(1))
        assert torch.equal(draws, flow.flow(c).transform.inv(noise).transpose(0, 1))
