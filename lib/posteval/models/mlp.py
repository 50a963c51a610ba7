"""The one MLP builder of the book, and the point regressor built on it.

`PointRegressor` trained with the squared error estimates the posterior mean E[x | context];
trained with the absolute error, the posterior median (per dimension).
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from ._checks import as_events, check_count, check_pair, hidden_sizes

__all__ = ["mlp", "PointRegressor"]

_CRITERIA = ("mse", "mae")


def mlp(in_dim: int, out_dim: int, hidden: int | Sequence[int] = (64, 64), *,
        activation: type[nn.Module] = nn.SiLU, layer_norm: bool = False, dropout: float = 0.0) -> nn.Sequential:
    """A fully connected network: per hidden layer Linear [, LayerNorm], activation [, Dropout]; then Linear.

    With hidden widths h_1..h_L, h_0 = x and

        h_l = Dropout(phi(LN(W_l h_{l-1} + b_l))),   l = 1..L,       mlp(x) = W_{L+1} h_L + b_{L+1},

    where phi is the activation (SiLU, phi(z) = z sigmoid(z), by default), LN the layer normalisation
    (only with `layer_norm`) and Dropout only when `dropout` > 0. The output layer is linear.

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

    Returns
    -------
    torch.nn.Sequential, mapping ``(..., in_dim)`` to ``(..., out_dim)``.

    Reference: the multilayer perceptron of Bishop (2006), *Pattern Recognition and Machine Learning*,
    Section 5.1 (feed-forward network functions); SiLU as in Elfwing, Uchibe and Doya (2018), *Neural
    Networks* 107; layer normalisation, Ba, Kiros and Hinton (2016), arXiv:1607.06450; dropout,
    Srivastava et al. (2014), *JMLR* 15.

    Example
    -------
    >>> import torch
    >>> [type(layer).__name__ for layer in mlp(3, 2, 8, layer_norm=True)]  # an int: two hidden layers
    ['Linear', 'LayerNorm', 'SiLU', 'Linear', 'LayerNorm', 'SiLU', 'Linear']
    >>> mlp(3, 2, (8,), dropout=0.1)(torch.zeros(5, 3)).shape
    torch.Size([5, 2])
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

    The prediction is f_θ(c) = ``mlp(context_dim, dim, hidden)(c)``; `loss` is, over a batch of n events,

        mse: (1 / (n dim)) sum_i ||f_θ(c_i) - x_i||^2,      mae: (1 / (n dim)) sum_i sum_j |f_θ(c_i)_j - x_ij|.

    The squared error is minimised by the conditional mean E[x | c], the absolute error by the
    conditional median (per dimension), so a trained regressor estimates the posterior mean or median.

    Parameters
    ----------
    dim, context_dim : int
        Widths of the target x and of the context.
    hidden : int or sequence of int
        Hidden widths of the MLP (see `mlp`).
    criterion : {"mse", "mae"}
        Training loss: squared error (posterior-mean estimator) or absolute error
        (posterior-median estimator).

    Reference: Bishop (2006), *Pattern Recognition and Machine Learning*, Section 1.5.5 (loss functions
    for regression: the squared loss gives E[t | x], the Minkowski loss with q = 1 the conditional median).

    Example
    -------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> model = PointRegressor(2, 3, hidden=(8,), criterion="mae")
    >>> c, x = torch.randn(5, 3), torch.randn(5, 2)
    >>> model.predict(c).shape
    torch.Size([5, 2])
    >>> bool(torch.allclose(model.loss((c, x)), (model(c) - x).abs().mean()))
    True
    """

    def __init__(self, dim: int, context_dim: int, *, hidden: int | Sequence[int] = (64, 64),
                 criterion: str = "mse") -> None:
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

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Mean squared or absolute error (per the `criterion`) of a ``(context, x)`` batch, a scalar:
        mean_ij (f_θ(c_i)_j - x_ij)^2 or mean_ij |f_θ(c_i)_j - x_ij|."""
        x, context = check_pair(batch, self.dim, self.context_dim)
        err = self.net(context) - x
        return (err**2).mean() if self.criterion == "mse" else err.abs().mean()

    @torch.no_grad()
    def predict(self, context: torch.Tensor) -> torch.Tensor:
        """Point prediction without gradient, shape ``(n, dim)``."""
        return self.forward(context)
