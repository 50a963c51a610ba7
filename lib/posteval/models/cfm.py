"""Conditional flow matching: a vector field v(x_t, t | context) sampled with an ODE solver.

Training uses the conditional optimal-transport path of Lipman et al. (2023): with base noise
x0 ~ N(0, I), data x1 and t ~ U(0, 1),

    x_t = (1 - (1 - sigma_min) t) x0 + t x1,     u_t = x1 - (1 - sigma_min) x0,

and the loss is the mean squared error ||v(x_t, t | c) - u_t||^2. Sampling integrates
dx/dt = v(x, t | c) from t = 0 (noise) to t = 1 (data) with a fixed-step solver: the midpoint
rule by default (two field evaluations per step), Euler or classical fourth-order Runge-Kutta
on request.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch

from ._checks import as_events, check_count, check_pair, chunk_events
from .mlp import mlp

__all__ = ["ConditionalFlowMatching"]

#: Fixed-step ODE solvers of ``sample`` (the chapter parameter ``cfm_method`` is one of them).
METHODS = ("rk4", "midpoint", "euler")


class _TimeFeatures(torch.nn.Module):
    """Fixed sinusoidal features of t in [0, 1] (so the field can vary quickly in t)."""

    def __init__(self, n_freq: int):
        super().__init__()
        self.register_buffer("freq", math.pi * 2.0 ** torch.arange(n_freq, dtype=torch.float32))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        angle = t * self.freq.to(t.dtype)
        return torch.cat([t, torch.sin(angle), torch.cos(angle)], dim=-1)


class ConditionalFlowMatching(torch.nn.Module):
    """Conditional flow matching model for ``dim`` features given ``context_dim`` features.

    Parameters
    ----------
    dim, context_dim : int
        Widths of the modelled variable x and of the conditioning vector.
    hidden : int
        Width of the hidden layers of the vector-field MLP.
    layers : int
        Number of hidden layers.
    time_freq : int
        Number of sinusoidal frequencies used to embed t.
    sigma_min : float
        Width of the path at t = 1 (0 gives the straight interpolation).
    steps : int
        Fixed ODE solver steps from t = 0 to t = 1 when sampling.
    method : {"rk4", "midpoint", "euler"}
        Fixed-step solver (4, 2 and 1 field evaluations per step).

    Notes
    -----
    The field v_θ(x, t, c) is an MLP of (x, [t, sin(π 2^k t), cos(π 2^k t)]_{k < time_freq}, c).
    With x0 ~ N(0, I), x1 the data and t ~ U(0, 1), the training loss is

        L(θ) = E_{t, x0, x1} ||v_θ(x_t, t, c) - (x1 - (1 - sigma_min) x0)||^2,
        x_t = (1 - (1 - sigma_min) t) x0 + t x1,

    which for sigma_min = 0 is E ||v_θ(x_t, t, c) - (x1 - x0)||^2 on x_t = (1 - t) x0 + t x1.
    Sampling integrates dx/dt = v_θ(x, t, c) from x(0) ~ N(0, I) to t = 1 in `steps` steps of
    h = 1 / steps; the default midpoint step from t_k = k h is

        x_{k+1} = x_k + h v_θ(x_k + (h / 2) v_θ(x_k, t_k, c), t_k + h / 2, c),

    Euler is x_{k+1} = x_k + h v_θ(x_k, t_k, c), and rk4 the classical fourth-order Runge-Kutta step.

    References: Lipman, Chen, Ben-Hamu, Nickel and Le (2023), "Flow Matching for Generative Modeling",
    ICLR, Section 4.1 (the optimal-transport conditional path with sigma_min); with sigma_min = 0 it is
    the independent-coupling CFM of Tong et al. (2024), "Improving and generalizing flow-based generative
    models with minibatch optimal transport", TMLR, with sigma = 0 (and the rectified flow of Liu, Gong
    and Liu (2023), ICLR). The solvers: Hairer, Nørsett and Wanner (1993), *Solving Ordinary Differential
    Equations I*, Springer, Chapter II (Runge-Kutta methods).

    Example
    -------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> model = ConditionalFlowMatching(2, 3, hidden=8, layers=1, steps=1)
    >>> c, x = torch.randn(5, 3), torch.randn(5, 2)
    >>> model.loss((c, x)).shape  # a scalar
    torch.Size([])
    >>> g = torch.Generator().manual_seed(1)  # the loss, by hand: x0 first, then t
    >>> x0, t = torch.randn(5, 2, generator=g), torch.rand(5, 1, generator=g)
    >>> xt, u = (1 - (1 - 1e-4) * t) * x0 + t * x, x - (1 - 1e-4) * x0
    >>> by_hand = ((model.velocity(xt, t, c) - u) ** 2).sum(-1).mean()
    >>> bool(torch.allclose(model.loss((c, x), generator=torch.Generator().manual_seed(1)), by_hand))
    True
    >>> samples = model.sample(c, 4, generator=torch.Generator().manual_seed(0))
    >>> samples.shape
    torch.Size([5, 4, 2])
    >>> with torch.no_grad():  # one midpoint step from the same noise
    ...     z, cc = torch.randn(5, 4, 2, generator=torch.Generator().manual_seed(0)), c[:, None].expand(5, 4, 3)
    ...     v = lambda y, s: model.velocity(y, torch.full((5, 4, 1), s), cc)
    ...     step = z + 1.0 * v(z + 0.5 * v(z, 0.0), 0.5)
    >>> bool(torch.allclose(samples, step, atol=1e-6))
    True
    """

    def __init__(
        self,
        dim: int,
        context_dim: int,
        *,
        hidden: int = 128,
        layers: int = 3,
        time_freq: int = 4,
        sigma_min: float = 1e-4,
        steps: int = 32,
        method: str = "midpoint",
    ) -> None:
        super().__init__()
        self.dim = check_count(dim, "dim")
        self.context_dim = check_count(context_dim, "context_dim")
        check_count(hidden, "hidden")
        check_count(layers, "layers")
        check_count(time_freq, "time_freq")
        if not isinstance(sigma_min, (int, float)) or not 0 <= sigma_min < 1:
            raise ValueError(f"sigma_min must be in [0, 1), got {sigma_min!r}")
        self.steps = check_count(steps, "steps")
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.method = method
        self.sigma_min = float(sigma_min)
        self.time = _TimeFeatures(time_freq)
        self.net = mlp(dim + (1 + 2 * time_freq) + context_dim, dim, (hidden,) * layers)

    def velocity(self, x: torch.Tensor, t: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """The vector field v_θ(x, t | context) = MLP(x, time features of t, context); `x` ``(..., dim)``,
        `t` ``(..., 1)``, `context` ``(..., context_dim)``; returns ``(..., dim)``."""
        return self.net(torch.cat([x, self.time(t), context], dim=-1))

    def loss(self, batch: Sequence[torch.Tensor], generator: torch.Generator | None = None) -> torch.Tensor:
        """Flow-matching loss of a ``(context, x)`` batch (scalar); draws x0 ~ N(0, I), then t ~ U(0, 1),
        from `generator` (the global RNG if None):
        mean_i ||v_θ(x_t,i, t_i, c_i) - (x_i - (1 - sigma_min) x0_i)||^2, x_t = (1 - (1 - sigma_min) t) x0 + t x."""
        x, context = check_pair(batch, self.dim, self.context_dim)
        n = x.shape[0]
        x0 = torch.randn((n, self.dim), generator=generator, device=x.device, dtype=x.dtype)
        t = torch.rand((n, 1), generator=generator, device=x.device, dtype=x.dtype)
        xt = (1 - (1 - self.sigma_min) * t) * x0 + t * x
        target = x - (1 - self.sigma_min) * x0
        return ((self.velocity(xt, t, context) - target) ** 2).sum(dim=-1).mean()

    @torch.no_grad()
    def sample(self, context: torch.Tensor, m: int, generator: torch.Generator | None = None, *,
               steps: int | None = None, method: str | None = None) -> torch.Tensor:
        """`m` samples per event of a ``(n, context_dim)`` context by integrating the ODE, shape ``(n, m, dim)``.

        x(0) ~ N(0, I) is drawn from `generator` (the global RNG if None), then `steps` fixed steps
        of `method` (see the class notes) integrate dx/dt = v_θ(x, t, c) to t = 1; `steps` and `method`
        override the solver set at construction. Events are processed in chunks of at most 2^18 samples.
        """
        steps = self.steps if steps is None else steps
        method = self.method if method is None else method
        context = as_events(context, self.context_dim, "context")
        check_count(m, "m")
        check_count(steps, "steps")
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        step_events = chunk_events(context.shape[0], m)
        out = []
        for start in range(0, context.shape[0], step_events):
            c = context[start : start + step_events]
            n = c.shape[0]
            x = torch.randn((n, m, self.dim), generator=generator, device=c.device, dtype=c.dtype)
            cc = c[:, None, :].expand(n, m, self.context_dim)
            h = 1.0 / steps
            for k in range(steps):
                t0 = k * h
                x = x + h * self._increment(x, t0, h, cc, method)
            out.append(x)
        return torch.cat(out, dim=0)

    def _increment(self, x, t0: float, h: float, c, method: str) -> torch.Tensor:
        """Slope of one fixed solver step starting at (x, t0)."""

        def v(xx, tt):
            return self.velocity(xx, torch.full((*xx.shape[:-1], 1), tt, device=xx.device, dtype=xx.dtype), c)

        if method == "euler":
            return v(x, t0)
        if method == "midpoint":
            return v(x + 0.5 * h * v(x, t0), t0 + 0.5 * h)
        k1 = v(x, t0)
        k2 = v(x + 0.5 * h * k1, t0 + 0.5 * h)
        k3 = v(x + 0.5 * h * k2, t0 + 0.5 * h)
        k4 = v(x + h * k3, t0 + h)
        return (k1 + 2 * k2 + 2 * k3 + k4) / 6.0

    @torch.no_grad()
    def sample_mean(self, context: torch.Tensor, m: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """Average of `m` samples per event, (1/m) sum_j x_ij, shape ``(n, dim)``: a Monte Carlo estimate
        of the posterior mean E[x | c]."""
        return self.sample(context, m, generator=generator).mean(dim=1)
