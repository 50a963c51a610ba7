"""Mixture density network: p(x | context) as a mixture of K diagonal Gaussians."""

from __future__ import annotations

import math

import torch

from ._checks import as_events, check_count, check_pair, chunk_events
from .mlp import mlp

__all__ = ["MixtureDensityNetwork"]

_LOG_SCALE_RANGE = (-7.0, 5.0)  # keeps the component widths in [1e-3, 150] x the target unit


class MixtureDensityNetwork(torch.nn.Module):
    """An MLP mapping the context to the weights, means and widths of K Gaussians.

    Parameters
    ----------
    dim, context_dim : int
    components : int
        Number K of mixture components.
    hidden : int or sequence of int
        Hidden widths of the MLP.
    """

    def __init__(self, dim: int, context_dim: int, *, components: int = 5, hidden=(64, 64)):
        super().__init__()
        self.dim = check_count(dim, "dim")
        self.context_dim = check_count(context_dim, "context_dim")
        self.components = check_count(components, "components")
        self.net = mlp(context_dim, components * (1 + 2 * dim), hidden)

    def parameters_of(self, context: torch.Tensor):
        """Mixture parameters: log-weights ``(n, K)``, means and log-widths ``(n, K, dim)``."""
        out = self.net(context)
        k, d = self.components, self.dim
        logits = out[:, :k]
        means = out[:, k : k + k * d].reshape(-1, k, d)
        log_scales = out[:, k + k * d :].reshape(-1, k, d).clamp(*_LOG_SCALE_RANGE)
        return torch.log_softmax(logits, dim=-1), means, log_scales

    def log_prob(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """Log-density of each event's `x`, shape ``(n,)``."""
        x, context = check_pair((context, x), self.dim, self.context_dim)
        log_w, mu, log_s = self.parameters_of(context)
        z = (x[:, None, :] - mu) / log_s.exp()
        comp = (-0.5 * z**2 - log_s - 0.5 * math.log(2 * math.pi)).sum(dim=-1)
        return torch.logsumexp(log_w + comp, dim=-1)

    def loss(self, batch) -> torch.Tensor:
        """Mean negative log-likelihood of a ``(context, x)`` batch."""
        x, context = check_pair(batch, self.dim, self.context_dim)
        return -self.log_prob(x, context).mean()

    @torch.no_grad()
    def sample(self, context: torch.Tensor, m: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """`m` samples per event, shape ``(n, m, dim)``: a component, then a Gaussian draw."""
        context = as_events(context, self.context_dim, "context")
        check_count(m, "m")
        step = chunk_events(context.shape[0], m)
        out = []
        for start in range(0, context.shape[0], step):
            log_w, mu, log_s = self.parameters_of(context[start : start + step])
            n = log_w.shape[0]
            comp = torch.multinomial(log_w.exp(), m, replacement=True, generator=generator)  # (n, m)
            idx = comp[:, :, None].expand(n, m, self.dim)
            noise = torch.randn((n, m, self.dim), generator=generator, device=mu.device, dtype=mu.dtype)
            out.append(mu.gather(1, idx) + log_s.exp().gather(1, idx) * noise)
        return torch.cat(out, dim=0)

    @torch.no_grad()
    def mean(self, context: torch.Tensor) -> torch.Tensor:
        """Mixture mean per event, shape ``(n, dim)`` (exact, no sampling)."""
        context = as_events(context, self.context_dim, "context")
        log_w, mu, _ = self.parameters_of(context)
        return (log_w.exp()[:, :, None] * mu).sum(dim=1)
