"""GRPO advantages and loss."""

import numpy as np
import pytest
import torch

from posteval.rubric.grpo import group_advantages, grpo_loss, low_var_kl


def test_advantages_zero_mean_unit_std_per_group():
    r = np.random.default_rng(0).normal(size=8 * 5) * 3 + 1
    a = group_advantages(r, 8).reshape(5, 8)
    np.testing.assert_allclose(a.mean(1), 0, atol=1e-12)
    np.testing.assert_allclose(a.std(1, ddof=1), 1, atol=1e-5)
    # order within a group preserved
    assert (np.argsort(a[0]) == np.argsort(r[:8])).all()


def test_constant_group_gets_zero_advantage():
    r = np.array([2.5] * 8 + [-1.0] * 7 + [1.5])
    a = group_advantages(r, 8)
    np.testing.assert_allclose(a[:8], 0)
    assert a[-1] > 0 and (a[8:15] < 0).all()
    np.testing.assert_allclose(group_advantages(r, 8, scale=False)[8:].sum(), 0, atol=1e-12)


@pytest.mark.parametrize("bad, match", [(np.ones(7), "multiple"), (np.array([np.nan] * 8), "NaN"),
                                        (np.ones((2, 8)), "1-D")])
def test_advantage_input_checks(bad, match):
    with pytest.raises(ValueError, match=match):
        group_advantages(bad, 8)
    with pytest.raises(ValueError, match="group_size"):
        group_advantages(np.ones(8), 1)


def test_loss_at_ratio_one_is_minus_token_mean_advantage():
    logp = torch.log(torch.rand(4, 5)).requires_grad_()
    mask = torch.tensor([[1, 1, 1, 0, 0]] * 2 + [[1, 1, 1, 1, 1]] * 2).bool()
    adv = torch.tensor([1.0, -1.0, 0.5, 2.0])
    loss, st = grpo_loss(logp, logp.detach(), logp.detach(), adv, mask, beta=0.01)
    expected = -(adv[:, None] * mask).sum() / mask.sum()
    assert torch.isclose(loss, expected)
    assert st["kl"] == 0 and st["clip_frac"] == 0


def test_clipping_stops_gradient_beyond_the_trust_region():
    old = torch.zeros(2, 1)
    logp = torch.tensor([[0.5], [0.5]], requires_grad=True)  # ratio e^0.5 > 1.2
    adv = torch.tensor([1.0, -1.0])
    loss, st = grpo_loss(logp, old, logp.detach(), adv, torch.ones(2, 1, dtype=torch.bool), beta=0.0)
    loss.backward()
    assert logp.grad[0, 0] == 0  # positive advantage, ratio above 1+clip: clipped
    assert logp.grad[1, 0] != 0  # negative advantage: the unclipped term is the minimum
    assert st["clip_frac"] == 1.0


def test_k3_kl_nonnegative_and_zero_at_equality():
    a = torch.randn(100)
    b = torch.randn(100)
    assert (low_var_kl(a, b) >= 0).all()
    assert torch.allclose(low_var_kl(a, a), torch.zeros(100))


def test_loss_shape_checks():
    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="adv"):
        grpo_loss(x, x, x, torch.zeros(3), x.bool())
    with pytest.raises(ValueError, match="shape"):
        grpo_loss(x, x, torch.zeros(2, 2), torch.zeros(2), x.bool())
