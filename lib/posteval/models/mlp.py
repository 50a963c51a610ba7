"""The one MLP builder of the book, and the point regressor built on it.

`PointRegressor` trained with the squared error estimates the posterior mean E[x | context];
trained with the absolute error, the posterior median (per dimension).
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import as_events, check_count, check_pair, hidden_sizes

__all__ = ["mlp", "PointRegressor"]

_CRITERIA = ("mse", "mae")


def mlp(in_dim: int, out_dim: int, hidden=(64, 64), *, activation: type[nn.Module] = nn.SiLU,
        layer_norm: bool = False, dropout: float = 0.0) -> nn.Sequential:
    """A fully connected network: per hidden layer Linear [, LayerNorm], activation [, Dropout]; then Linear.

    Parameters
    ----------
    in_dim, out_dim : int
        Input and output widths.
    hidden : int or sequence of int
        Hidden widths (an int means two layers of that width).
    activation : torch.nn.Module class
        Non-linearity after each hidden layer (SiLU by default).
    layer_norm : bool
        Normalise each hidden layer before its activation.
    dropout : float in [0, 1)
        Dropout after each activation (no Dropout layer when 0).
    """
    check_count(in_dim, "in_dim")
    check_count(out_dim, "out_dim")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
    layers: list[nn.Module] = []
    width = in_dim
    for h in hidden_sizes(hidden):
        layers.append(nn.Linear(width, h))
        if layer_norm:
            layers.append(nn.LayerNorm(h))
        layers.append(activation())
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        width = h
    layers.append(nn.Linear(width, out_dim))
    return nn.Sequential(*layers)


class PointRegressor(nn.Module):
    """MLP regression of x (``dim``) on the context (``context_dim``): a point estimator.

    Parameters
    ----------
    dim, context_dim : int
    hidden : int or sequence of int
    criterion : {"mse", "mae"}
        Training loss: squared error (posterior-mean estimator) or absolute error
        (posterior-median estimator).
    """

    def __init__(self, dim: int, context_dim: int, *, hidden=(64, 64), criterion: str = "mse"):
        super().__init__()
        if criterion not in _CRITERIA:
            raise ValueError(f"criterion must be one of {_CRITERIA}, got {criterion!r}")
        self.dim = check_count(dim, "dim")
        self.context_dim = check_count(context_dim, "context_dim")
        self.criterion = criterion
        self.net = mlp(context_dim, dim, hidden)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        """Point prediction, shape ``(n, dim)``."""
        return self.net(as_events(context, self.context_dim, "context"))

    def loss(self, batch) -> torch.Tensor:
        """Mean squared or absolute error (per the `criterion`) of a ``(context, x)`` batch."""
        x, context = check_pair(batch, self.dim, self.context_dim)
        err = self.net(context) - x
        return (err**2).mean() if self.criterion == "mse" else err.abs().mean()

    @torch.no_grad()
    def predict(self, context: torch.Tensor) -> torch.Tensor:
        """Point prediction without gradient, shape ``(n, dim)``."""
        return self.forward(context)
