"""Maximum mean discrepancy (MMD) between two batches, with a sum of Gaussian kernels.

Used as an extra training term for a point estimator: the batch of predictions is pulled
towards the batch of true targets as a *distribution*, not event by event.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

DEFAULT_BANDWIDTHS = (0.1, 0.3, 1.0, 3.0)


def _check_batch(name: str, t: torch.Tensor) -> None:
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.ndim != 2:
        raise ValueError(f"{name} must have shape (n, d), got {tuple(t.shape)}")
    if t.shape[0] == 0:
        raise ValueError(f"{name} is empty")


def gaussian_kernel_sum(a: torch.Tensor, b: torch.Tensor, bandwidths: Sequence[float]) -> torch.Tensor:
    """Kernel matrix sum_h exp(-|a_i - b_j|^2 / (2 h^2)) of shape (len(a), len(b))."""
    # explicit squared distances: torch.cdist has an undefined gradient at distance 0
    d2 = (a * a).sum(-1)[:, None] + (b * b).sum(-1)[None, :] - 2.0 * a @ b.T
    d2 = d2.clamp_min(0.0)
    return sum(torch.exp(-d2 / (2.0 * h * h)) for h in bandwidths)


def mmd2(x: torch.Tensor, y: torch.Tensor, bandwidths: Sequence[float] = DEFAULT_BANDWIDTHS) -> torch.Tensor:
    """Squared MMD between the batches ``x`` (n, d) and ``y`` (k, d), biased (V-statistic) form.

    The biased estimator is >= 0 and exactly 0 when the two batches hold the same points
    (in any order). Kernels: Gaussians of the given widths (in the units of ``x``), summed.

    Parameters
    ----------
    x, y : torch.Tensor
        Batches of shape (n, d) and (k, d), same d.
    bandwidths : sequence of float
        Positive kernel widths.

    Returns
    -------
    torch.Tensor
        A scalar, differentiable with respect to ``x`` and ``y``.
    """
    _check_batch("x", x)
    _check_batch("y", y)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must have the same dimension, got {x.shape[1]} and {y.shape[1]}")
    widths = [float(h) for h in bandwidths]
    if not widths or min(widths) <= 0:
        raise ValueError(f"bandwidths must be a non-empty sequence of positive numbers, got {bandwidths!r}")
    kxx = gaussian_kernel_sum(x, x, widths).mean()
    kyy = gaussian_kernel_sum(y, y, widths).mean()
    kxy = gaussian_kernel_sum(x, y, widths).mean()
    return (kxx + kyy - 2.0 * kxy).clamp_min(0.0)
