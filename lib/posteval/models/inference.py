"""Point estimates and posterior samples of any model of the contract (see `posteval.models`), event chunk by chunk.

A *context* is a tensor ``(n, context_dim)`` or a tuple of tensors sliced together along their
first axis (the event models read four). Both functions return float64 numpy arrays.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

__all__ = ["predict_points", "draw_samples"]


def _chunks(context, batch_size: int, device):
    """Slices of ``batch_size`` events of the context, moved to ``device``, in order."""
    parts = (context,) if isinstance(context, torch.Tensor) else tuple(context)
    if not parts or not all(isinstance(t, torch.Tensor) for t in parts):
        raise ValueError("context must be a tensor or a non-empty tuple of tensors")
    n = parts[0].shape[0]
    if batch_size is None:
        batch_size = max(n, 1)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer or None, got {batch_size!r}")
    if any(t.shape[0] != n for t in parts):
        raise ValueError(f"context tensors must have the same number of events, got {[t.shape[0] for t in parts]}")
    for start in range(0, n, batch_size):
        chunk = tuple(t[start:start + batch_size].to(device) for t in parts)
        yield chunk[0] if isinstance(context, torch.Tensor) else chunk


def _evaluate(model: torch.nn.Module, method: str, context, batch_size: int, device, *args, **kwargs) -> np.ndarray:
    if not callable(getattr(model, method, None)):
        raise ValueError(f"model {type(model).__name__} has no {method}() (see the contract in posteval.models)")
    was_training = model.training
    model.eval().to(device)
    try:
        with torch.no_grad():
            out = [getattr(model, method)(c, *args, **kwargs).cpu() for c in _chunks(context, batch_size, device)]
    finally:
        model.train(was_training)
    return torch.cat(out).double().numpy()


def predict_points(model: torch.nn.Module, context: torch.Tensor | Sequence[torch.Tensor], *,
                   batch_size: int | None = 4096, device: str | torch.device = "cpu") -> np.ndarray:
    """Point estimates ``(n, dim)`` of a point estimator (``model.predict``) over all events, as float64.

    With B = `batch_size`, the events are cut into consecutive chunks C_b = {bB, ..., min((b + 1)B, n) - 1}
    and ``predict_points = concat_b model.predict(context[C_b])``: one ``model.predict`` call per chunk,
    in eval mode and without gradient (the model's train/eval mode is restored afterwards), so memory
    grows with B, not n. For a model without batch coupling (no batch normalisation in train mode)
    the result equals one call on all events, up to floating-point rounding.

    Parameters
    ----------
    model : torch.nn.Module
        A point estimator of the contract (`posteval.models`): ``predict(context) -> (n, dim)``.
    context : torch.Tensor (n, context_dim) or tuple of tensors
        The conditioning events (a tuple is sliced together along axis 0).
    batch_size : int or None
        Events per ``predict`` call (None: all in one call).
    device : str or torch.device
        Where the model and each chunk are evaluated (results come back to the CPU).

    Returns
    -------
    numpy.ndarray (n, dim), float64.

    Reference: mini-batch evaluation as in Goodfellow, Bengio and Courville (2016), *Deep Learning*,
    MIT Press, Section 8.1.3 (batch and minibatch algorithms).

    Example
    -------
    >>> import torch
    >>> from posteval.models import PointRegressor
    >>> _ = torch.manual_seed(0)
    >>> model, ctx = PointRegressor(2, 3, hidden=(8,)), torch.randn(5, 3)
    >>> points = predict_points(model, ctx, batch_size=2)  # chunks of 2, 2 and 1 events
    >>> points.shape, points.dtype
    ((5, 2), dtype('float64'))
    >>> bool(abs(points - predict_points(model, ctx, batch_size=None)).max() < 1e-6)  # chunking changes nothing
    True
    """
    return _evaluate(model, "predict", context, batch_size, device)


def draw_samples(model: torch.nn.Module, context: torch.Tensor | Sequence[torch.Tensor], m: int, *,
                 batch_size: int | None = 1024, seed: int = 0, device: str | torch.device = "cpu") -> np.ndarray:
    """``m`` samples per event ``(n, m, dim)`` of a sampler (``model.sample``), ``batch_size`` events per call.

    With B = `batch_size` and one generator g = ``torch.Generator(device).manual_seed(seed)``,

        draw_samples = concat_b model.sample(context[C_b], m, generator=g),
        C_b = {bB, ..., min((b + 1)B, n) - 1},

    in eval mode and without gradient (the model's mode is restored afterwards): x_ij ~ p_θ(x | c_i)
    for j = 1..m. The chunks draw in order from the one generator, so the result depends only on
    (model, context, m, batch_size, seed, device): the same seed gives the same samples, while
    another `batch_size` may give other (equally distributed) ones.

    Parameters
    ----------
    model : torch.nn.Module
        A sampler of the contract (`posteval.models`): ``sample(context, m, generator=None) -> (n, m, dim)``.
    context : torch.Tensor (n, context_dim) or tuple of tensors
        The conditioning events (a tuple is sliced together along axis 0).
    m : int
        Samples per event (>= 1).
    batch_size : int or None
        Events per ``sample`` call (None: all in one call).
    seed : int
        Seed of the generator shared by all chunks.
    device : str or torch.device
        Where the model, the generator and each chunk live (results come back to the CPU).

    Returns
    -------
    numpy.ndarray (n, m, dim), float64.

    Reference: the m draws per event are the Monte Carlo ensemble that sample-based scores read, e.g.
    the CRPS of Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102, eq. 21, as expectations
    over X, X' ~ F; the seeded ``torch.Generator`` is PyTorch's (Paszke et al. (2019), NeurIPS).

    Example
    -------
    >>> import numpy as np, torch
    >>> from posteval.models import ConditionalFlowMatching
    >>> _ = torch.manual_seed(0)
    >>> model = ConditionalFlowMatching(2, 3, hidden=8, layers=1, steps=2)
    >>> ctx = torch.randn(5, 3)
    >>> draw_samples(model, ctx, 3).shape
    (5, 3, 2)
    >>> a = draw_samples(model, ctx, 3, batch_size=2, seed=1)
    >>> np.array_equal(a, draw_samples(model, ctx, 3, batch_size=2, seed=1))  # same seed, same samples
    True
    >>> np.array_equal(a, draw_samples(model, ctx, 3, batch_size=2, seed=2))
    False
    """
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    generator = torch.Generator(device=device).manual_seed(int(seed))
    return _evaluate(model, "sample", context, batch_size, device, m, generator=generator)
