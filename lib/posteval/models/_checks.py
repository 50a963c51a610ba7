"""Input checks shared by the conditional generative models (shapes, counts, NaNs)."""

from __future__ import annotations

import torch


def as_events(x: torch.Tensor, dim: int, name: str) -> torch.Tensor:
    """Return `x` shaped ``(n, dim)``; a 1-D `x` is accepted when ``dim == 1``."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim == 1 and dim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != dim:
        raise ValueError(f"{name} must have shape (n, {dim}), got {tuple(x.shape)}")
    if x.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 events)")
    return x


def check_pair(batch, dim: int, context_dim: int):
    """Validate a ``(context, x)`` batch: two tensors, same number of events, right widths.

    Returns ``(x, context)`` shaped ``(n, dim)`` and ``(n, context_dim)``.
    """
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ValueError("batch must be a tuple (context, x), got "
                         f"{type(batch).__name__}{' of length ' + str(len(batch)) if isinstance(batch, (tuple, list)) else ''}")
    context = as_events(batch[0], context_dim, "context")
    x = as_events(batch[1], dim, "x")
    if x.shape[0] != context.shape[0]:
        raise ValueError(f"x has {x.shape[0]} events but context has {context.shape[0]}")
    return x, context


def check_count(value, name: str) -> int:
    """A positive integer, else ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_temperature(value) -> float:
    """A finite positive number (a sampling temperature), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise ValueError(f"temperature must be a finite positive number, got {value!r}")
    return float(value)


def hidden_sizes(hidden, name: str = "hidden") -> tuple:
    """Normalise a width (int: two layers of it) or a sequence of widths."""
    if isinstance(hidden, int) and not isinstance(hidden, bool):
        hidden = (hidden, hidden)
    try:
        sizes = tuple(hidden)
    except TypeError:
        raise ValueError(f"{name} must be an int or a sequence of ints, got {hidden!r}") from None
    if not sizes or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in sizes):
        raise ValueError(f"{name} must hold positive integers, got {hidden!r}")
    return sizes


def chunk_events(n: int, m: int, max_points: int = 1 << 18) -> int:
    """Number of events per chunk so that one chunk draws at most `max_points` samples."""
    return max(1, max_points // max(m, 1))
