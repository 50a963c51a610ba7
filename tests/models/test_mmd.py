"""posteval.models.mmd: the maximum mean discrepancy."""

import pytest
import torch

from posteval.models.mmd import mmd2


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
