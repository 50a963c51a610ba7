"""Mixture density network: p(x | context) as a mixture of K diagonal Gaussians."""

from __future__ import annotations

import math
from typing import Sequence

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

    Notes
    -----
    One MLP maps the context c to K logits a_k, K x dim means mu_kj and K x dim log-widths
    log sigma_kj (clamped to [-7, 5]); pi = softmax(a). The density and the loss are

        p(x | c) = sum_k pi_k(c) prod_j N(x_j; mu_kj(c), sigma_kj(c)^2),
        loss = -(1/n) sum_i log p(x_i | c_i)   (computed with logsumexp over k),

    `sample` draws k ~ Categorical(pi(c)), then x = mu_k(c) + sigma_k(c) ε with ε ~ N(0, I), and
    `mean` is the exact mixture mean sum_k pi_k(c) mu_k(c).

    Reference: Bishop (1994), "Mixture Density Networks", Technical Report NCRG/94/004, Aston
    University; Bishop (2006), *Pattern Recognition and Machine Learning*, Section 5.6 (the mixture
    density network and its error function, here with one width per component and dimension).

    Example
    -------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> mdn = MixtureDensityNetwork(2, 3, components=2, hidden=(8,))
    >>> c, x = torch.randn(5, 3), torch.randn(5, 2)
    >>> log_w, mu, log_s = mdn.parameters_of(c)
    >>> log_w.shape, mu.shape, log_s.shape
    (torch.Size([5, 2]), torch.Size([5, 2, 2]), torch.Size([5, 2, 2]))
    >>> normal = torch.distributions.Normal(mu, log_s.exp())  # the density, by hand
    >>> by_hand = torch.logsumexp(log_w + normal.log_prob(x[:, None, :]).sum(-1), dim=-1)
    >>> bool(torch.allclose(mdn.log_prob(x, c), by_hand, atol=1e-5))
    True
    >>> bool(torch.allclose(mdn.mean(c), (log_w.exp()[:, :, None] * mu).sum(1)))  # the mixture mean, by hand
    True
    >>> bool(torch.allclose(mdn.loss((c, x)), -mdn.log_prob(x, c).mean()))
    True
    >>> mdn.sample(c, 4, generator=torch.Generator().manual_seed(0)).shape
    torch.Size([5, 4, 2])
    """

    def __init__(self, dim: int, context_dim: int, *, components: int = 5,
                 hidden: int | Sequence[int] = (64, 64)) -> None:
        super().__init__()
        self.dim = check_count(dim, "dim")
        self.context_dim = check_count(context_dim, "context_dim")
        self.components = check_count(components, "components")
        self.net = mlp(context_dim, components * (1 + 2 * dim), hidden)

    def parameters_of(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Mixture parameters: log-weights log pi = log_softmax(a) ``(n, K)``, means mu and log-widths
        log sigma (clamped to [-7, 5]) ``(n, K, dim)``."""
        out = self.net(context)
        k, d = self.components, self.dim
        logits = out[:, :k]
        means = out[:, k : k + k * d].reshape(-1, k, d)
        log_scales = out[:, k + k * d :].reshape(-1, k, d).clamp(*_LOG_SCALE_RANGE)
        return torch.log_softmax(logits, dim=-1), means, log_scales

    def log_prob(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """Log-density of each event's `x`, shape ``(n,)``:
        logsumexp_k [log pi_k + sum_j log N(x_j; mu_kj, sigma_kj^2)]."""
        x, context = check_pair((context, x), self.dim, self.context_dim)
        log_w, mu, log_s = self.parameters_of(context)
        z = (x[:, None, :] - mu) / log_s.exp()
        comp = (-0.5 * z**2 - log_s - 0.5 * math.log(2 * math.pi)).sum(dim=-1)
        return torch.logsumexp(log_w + comp, dim=-1)

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Mean negative log-likelihood of a ``(context, x)`` batch, -(1/n) sum_i log p(x_i | c_i)."""
        x, context = check_pair(batch, self.dim, self.context_dim)
        return -self.log_prob(x, context).mean()

    @torch.no_grad()
    def sample(self, context: torch.Tensor, m: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """`m` samples per event, shape ``(n, m, dim)``: a component k ~ Categorical(pi), then
        x = mu_k + sigma_k ε, ε ~ N(0, I), both drawn from `generator` (the global RNG if None)."""
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
        """Mixture mean per event, sum_k pi_k mu_k, shape ``(n, dim)`` (exact, no sampling)."""
        context = as_events(context, self.context_dim, "context")
        log_w, mu, _ = self.parameters_of(context)
        return (log_w.exp()[:, :, None] * mu).sum(dim=1)
