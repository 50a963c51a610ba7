"""posteval.models.mdn: the mixture density network."""

import math

import torch

from tests.models.test_models import make


N, M = 7, 5


def test_mdn_mean_is_the_mixture_mean():
    model = make("mdn", 2)
    context = torch.randn(N, 3)
    s = model.sample(context, 20_000, generator=torch.Generator().manual_seed(0))
    log_w, mu, log_s = model.parameters_of(context)
    sd = torch.sqrt(((log_w.exp()[:, :, None]) * (mu**2 + (2 * log_s).exp())).sum(1) - model.mean(context) ** 2)
    assert torch.all((s.mean(1) - model.mean(context)).abs() < 5 * sd / math.sqrt(20_000))
