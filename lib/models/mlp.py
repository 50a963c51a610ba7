"""Point regressors: an MLP from the context to a point estimate of x.

Trained with the squared error it estimates the posterior mean E[x | context]; trained with
the absolute error, the posterior median (per dimension).
"""

from __future__ import annotations

import torch

from ._checks import as_events, check_count, check_pair, hidden_sizes

__all__ = ["mlp", "PointRegressor"]

_CRITERIA = ("mse", "mae")


def mlp(in_dim: int, out_dim: int, hidden=(64, 64)) -> torch.nn.Sequential:
    """A fully connected network with SiLU activations between its linear layers.

    Parameters
    ----------
    in_dim, out_dim : int
        Input and output widths.
    hidden : int or sequence of int
        Hidden widths (an int means two layers of that width).
    """
    check_count(in_dim, "in_dim")
    check_count(out_dim, "out_dim")
    widths = (in_dim, *hidden_sizes(hidden), out_dim)
    layers = []
    for i in range(len(widths) - 1):
        layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
        if i < len(widths) - 2:
            layers.append(torch.nn.SiLU())
    return torch.nn.Sequential(*layers)


class PointRegressor(torch.nn.Module):
    """MLP regression of x (``dim``) on the context (``context_dim``).

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

    def loss(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """Mean squared or absolute error of the batch (per the `criterion`)."""
        x, context = check_pair(x, context, self.dim, self.context_dim)
        err = self.net(context) - x
        return (err**2).mean() if self.criterion == "mse" else err.abs().mean()

    @torch.no_grad()
    def predict(self, context: torch.Tensor) -> torch.Tensor:
        """Point prediction without gradient, shape ``(n, dim)``."""
        return self.forward(context)
