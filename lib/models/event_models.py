"""The four learned models of the top-quark chapter, all on one shared `EventEncoder`.

* `TransformerRegressor`: encoder + MLP head, one point estimate per event, MSE loss.
* `MMDRegressor`: the same, trained with MSE + weight * MMD^2(batch of predictions, batch of
  targets) to widen the predicted spectrum.
* `EventFlow`: nu2flows-style conditional neural spline flow on the targets, conditioned on the
  encoder's context, trained end to end by maximum likelihood.
* `EventCFM`: conditional flow matching on the targets with the same context, sampled with an
  ODE solver of ``steps`` steps.

A batch is the tuple ``(global_feats, leptons, jets, jet_mask, targets)`` of
`lib.data.ttbar_features.to_tensors`; the inputs are its first four entries. Every model has
``loss(batch) -> scalar``, so `batch_loss` is the ``loss_fn`` for `lib.models.training.fit`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch import nn

from lib.models.cfm import ConditionalFlowMatching
from lib.models.encoder import EventEncoder, mlp
from lib.models.flow import ConditionalFlow
from lib.models.mmd import DEFAULT_BANDWIDTHS, mmd2

MODEL_KINDS = ("transformer_mse", "transformer_mmd", "flow", "cfm")
POINT_KINDS = ("transformer_mse", "transformer_mmd")


def _check_batch(batch: Sequence[torch.Tensor], need_targets: bool) -> None:
    size = 5 if need_targets else 4
    if not isinstance(batch, (tuple, list)) or len(batch) < size:
        what = "(global_feats, leptons, jets, jet_mask, targets)" if need_targets else \
            "(global_feats, leptons, jets, jet_mask[, targets])"
        raise ValueError(f"batch must be a tuple {what}, got {type(batch).__name__} of length "
                         f"{len(batch) if isinstance(batch, (tuple, list)) else '?'}")


class EventModel(nn.Module):
    """Base class: holds the shared encoder and the target dimension."""

    def __init__(self, encoder: EventEncoder, dim: int):
        super().__init__()
        if not isinstance(encoder, EventEncoder):
            raise ValueError(f"encoder must be an EventEncoder, got {type(encoder).__name__}")
        if dim < 1:
            raise ValueError(f"dim must be positive, got {dim}")
        self.encoder = encoder
        self.dim = dim

    def context(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Encoder context (n, context_dim) of a batch (targets, if present, are not used)."""
        _check_batch(batch, need_targets=False)
        return self.encoder(*batch[:4])


class TransformerRegressor(EventModel):
    """Point estimator: encoder context -> MLP -> (n, dim); trained with MSE."""

    def __init__(self, encoder: EventEncoder, dim: int = 6, *, hidden: int = 64):
        super().__init__(encoder, dim)
        self.head = mlp(encoder.context_dim, hidden, dim)

    def predict(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Point estimates (n, dim) in standardised target units."""
        return self.head(self.context(batch))

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        _check_batch(batch, need_targets=True)
        return nn.functional.mse_loss(self.predict(batch), batch[4])


class MMDRegressor(TransformerRegressor):
    """Point estimator trained with MSE + ``mmd_weight`` * MMD^2(predictions, targets) per batch."""

    def __init__(self, encoder: EventEncoder, dim: int = 6, *, hidden: int = 64, mmd_weight: float = 1.0,
                 bandwidths: Sequence[float] = DEFAULT_BANDWIDTHS):
        super().__init__(encoder, dim, hidden=hidden)
        if not mmd_weight > 0:
            raise ValueError(f"mmd_weight must be positive, got {mmd_weight}")
        self.mmd_weight = float(mmd_weight)
        self.bandwidths = tuple(float(b) for b in bandwidths)

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        _check_batch(batch, need_targets=True)
        pred = self.predict(batch)
        return nn.functional.mse_loss(pred, batch[4]) + self.mmd_weight * mmd2(pred, batch[4], self.bandwidths)


class EventFlow(EventModel):
    """Conditional neural spline flow on the targets, conditioned on the encoder context."""

    def __init__(self, encoder: EventEncoder, dim: int = 6, **flow_kwargs):
        super().__init__(encoder, dim)
        self.flow = ConditionalFlow(dim, encoder.context_dim, **flow_kwargs)

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Mean negative log-likelihood of the targets."""
        _check_batch(batch, need_targets=True)
        return -self.flow.log_prob(batch[4], self.context(batch)).mean()

    def sample(self, batch: Sequence[torch.Tensor], m: int, generator: torch.Generator | None = None
               ) -> torch.Tensor:
        """``m`` samples per event, shape (n, m, dim), standardised units."""
        return self.flow.sample(self.context(batch), m, generator=generator)


class EventCFM(EventModel):
    """Conditional flow matching on the targets; ``steps`` ODE steps when sampling."""

    def __init__(self, encoder: EventEncoder, dim: int = 6, *, steps: int = 32, **cfm_kwargs):
        super().__init__(encoder, dim)
        if steps < 1:
            raise ValueError(f"steps must be a positive integer, got {steps}")
        self.steps = int(steps)
        self.cfm = ConditionalFlowMatching(dim, encoder.context_dim, **cfm_kwargs)

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Flow-matching loss of the targets."""
        _check_batch(batch, need_targets=True)
        return self.cfm.loss(batch[4], self.context(batch))

    def sample(self, batch: Sequence[torch.Tensor], m: int, generator: torch.Generator | None = None
               ) -> torch.Tensor:
        """``m`` samples per event, shape (n, m, dim), standardised units."""
        return self.cfm.sample(self.context(batch), m, steps=self.steps, generator=generator)


def batch_loss(model: EventModel, batch: Sequence[torch.Tensor]) -> torch.Tensor:
    """``loss_fn`` for `lib.models.training.fit`: the model's own loss on the batch."""
    return model.loss(batch)


def build_event_model(kind: str, dims: Sequence[int], encoder: Mapping | None = None,
                      head: Mapping | None = None, target_dim: int = 6) -> EventModel:
    """A fresh model of ``kind`` (one of `MODEL_KINDS`) with its own encoder.

    Parameters
    ----------
    kind : str
        "transformer_mse", "transformer_mmd", "flow" or "cfm".
    dims : (global_dim, lepton_dim, jet_dim)
        Input feature sizes.
    encoder : mapping, optional
        Keyword arguments of `EventEncoder`.
    head : mapping, optional
        Keyword arguments of the model class (e.g. ``hidden``, ``mmd_weight``, ``transforms``,
        ``steps``).
    target_dim : int
        Number of targets.
    """
    if kind not in MODEL_KINDS:
        raise ValueError(f"kind must be one of {MODEL_KINDS}, got {kind!r}")
    if len(dims) != 3:
        raise ValueError(f"dims must be (global_dim, lepton_dim, jet_dim), got {dims!r}")
    enc = EventEncoder(*dims, **dict(encoder or {}))
    cls = {"transformer_mse": TransformerRegressor, "transformer_mmd": MMDRegressor,
           "flow": EventFlow, "cfm": EventCFM}[kind]
    return cls(enc, target_dim, **dict(head or {}))


def _batches(inputs: Sequence[torch.Tensor], batch_size: int, device: str | torch.device):
    _check_batch(inputs, need_targets=False)
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    n = len(inputs[0])
    for start in range(0, n, batch_size):
        yield tuple(t[start:start + batch_size].to(device) for t in inputs[:4])


@torch.no_grad()
def predict_points(model: TransformerRegressor, inputs: Sequence[torch.Tensor], *, batch_size: int = 4096,
                   device: str | torch.device = "cpu") -> np.ndarray:
    """Point estimates (n, dim) of a regressor over all events, as a float64 numpy array."""
    if not isinstance(model, TransformerRegressor):
        raise ValueError(f"model must be a TransformerRegressor, got {type(model).__name__}")
    was_training = model.training
    model.eval().to(device)
    try:
        out = [model.predict(b).cpu() for b in _batches(inputs, batch_size, device)]
    finally:
        model.train(was_training)
    return torch.cat(out).double().numpy()


@torch.no_grad()
def draw_samples(model: EventFlow | EventCFM, inputs: Sequence[torch.Tensor], m: int, *,
                 batch_size: int = 1024, seed: int = 0, device: str | torch.device = "cpu") -> np.ndarray:
    """``m`` samples per event (n, m, dim) from a generative model, as a float64 numpy array.

    Events are processed in chunks of ``batch_size``; one ``torch.Generator`` seeded with
    ``seed`` drives all chunks, so the result depends only on (model, inputs, m, batch_size, seed).
    """
    if not isinstance(model, (EventFlow, EventCFM)):
        raise ValueError(f"model must be an EventFlow or EventCFM, got {type(model).__name__}")
    if m < 1:
        raise ValueError(f"m must be a positive integer, got {m}")
    generator = torch.Generator(device=device).manual_seed(int(seed))
    was_training = model.training
    model.eval().to(device)
    try:
        out = [model.sample(b, m, generator=generator).cpu() for b in _batches(inputs, batch_size, device)]
    finally:
        model.train(was_training)
    return torch.cat(out).double().numpy()
