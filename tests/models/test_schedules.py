"""Learning-rate schedules and the flow's spline tail bound."""

import math

import pytest
import torch
import zuko

from posteval.models import ConditionalFlow
from posteval.models.schedules import schedule_from_epochs, warmup_cosine


def test_warmup_then_cosine_cycles():
    f = warmup_cosine(4, 10, min_factor=0.1)
    assert [f(s) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert f(4) == pytest.approx(1.0)
    assert f(9) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi / 2)))
    assert f(13) < f(12) < f(11)
    assert f(14) == pytest.approx(1.0)  # restart of the next cycle
    assert min(f(s) for s in range(4, 40)) >= 0.1


def test_schedule_from_epochs_counts_steps():
    f = schedule_from_epochs({"warmup_epochs": 1, "cycle_epochs": 2}, steps_per_epoch=5)
    assert f(4) == 1.0 and f(5) == 1.0 and f(15) == pytest.approx(1.0)
    assert schedule_from_epochs(None, 5) is None
    with pytest.raises(ValueError, match="unknown schedule keys"):
        schedule_from_epochs({"warmup": 1}, 5)
    with pytest.raises(ValueError, match="cycle_steps"):
        warmup_cosine(0, 0)


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
