"""posteval.models.mlp: the point regressor."""

import math

import pytest
import torch

from posteval.models import PointRegressor, TrainingSettings, fit


@pytest.mark.parametrize("criterion, target", [("mse", "mean"), ("mae", "median")])
def test_point_regressor_learns_mean_or_median(criterion, target):
    # skewed noise: mean 1 + c, median log(2) + c for an Exp(1) shift
    g = torch.Generator().manual_seed(0)
    c = torch.rand(3000, 1, generator=g)
    x = c + torch.empty(3000, 1).exponential_(1.0, generator=g)
    torch.manual_seed(0)
    model = PointRegressor(1, 1, hidden=(16,), criterion=criterion)
    fit(model, (c[:2500], x[:2500]), (c[2500:], x[2500:]),
        TrainingSettings(epochs=12, batch_size=250, lr=3e-2), disable=True)
    pred = model.predict(torch.tensor([[0.5]]))
    assert pred.shape == (1, 1)
    expected = 0.5 + (1.0 if target == "mean" else math.log(2))
    assert float(pred) == pytest.approx(expected, abs=0.1)
