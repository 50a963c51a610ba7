"""Point estimates and posterior samples of any model of the contract (see `posteval.models`), event chunk by chunk.

A *context* is a tensor ``(n, context_dim)`` or a tuple of tensors sliced together along their
first axis (the event models read four). Both functions return float64 numpy arrays.
"""

from __future__ import annotations

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


def predict_points(model: torch.nn.Module, context, *, batch_size: int | None = 4096, device="cpu") -> np.ndarray:
    """Point estimates ``(n, dim)`` of a point estimator (``model.predict``) over all events.

    ``batch_size`` events per call (None: all in one call).
    """
    return _evaluate(model, "predict", context, batch_size, device)


def draw_samples(model: torch.nn.Module, context, m: int, *, batch_size: int | None = 1024, seed: int = 0,
                 device="cpu") -> np.ndarray:
    """``m`` samples per event ``(n, m, dim)`` of a sampler (``model.sample``), ``batch_size`` events per call.

    One ``torch.Generator`` seeded with ``seed`` drives all chunks, so the result depends only on
    (model, context, m, batch_size, seed).
    """
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    generator = torch.Generator(device=device).manual_seed(int(seed))
    return _evaluate(model, "sample", context, batch_size, device, m, generator=generator)
