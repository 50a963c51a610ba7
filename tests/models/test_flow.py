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
