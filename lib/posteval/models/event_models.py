"""The four learned models of the top-quark chapter, all on one shared `EventEncoder`.

* `TransformerRegressor`: encoder + MLP head, one point estimate per event, MSE loss.
* `MMDRegressor`: the same, trained with MSE + weight * MMD^2(batch of predictions, batch of
  targets) to widen the predicted spectrum.
* `EventFlow`: nu2flows-style conditional neural spline flow on the targets, conditioned on the
  encoder's context, trained end to end by maximum likelihood.
* `EventCFM`: conditional flow matching on the targets with the same context, sampled with an
  ODE solver of ``steps`` steps.

They follow the contract of `posteval.models`: the *context* is the tuple of event tensors
``(global_feats, leptons, jets, jet_mask)`` and a batch is ``(*context, targets)``, as
`posteval.data.ttbar_features.to_tensors` returns it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import nn

from .cfm import ConditionalFlowMatching
from .encoder import EventEncoder, normed_mlp
from .flow import ConditionalFlow
from .mmd import DEFAULT_BANDWIDTHS, mmd2

MODEL_KINDS = ("transformer_mse", "transformer_mmd", "flow", "cfm")
POINT_KINDS = ("transformer_mse", "transformer_mmd")
_INPUTS = "(global_feats, leptons, jets, jet_mask)"


def _check_context(context: Sequence[torch.Tensor]) -> None:
    if not isinstance(context, (tuple, list)) or len(context) != 4:
        raise ValueError(f"context must be the tuple {_INPUTS}, got {type(context).__name__}"
                         f"{' of length ' + str(len(context)) if isinstance(context, (tuple, list)) else ''}")


def _split_batch(batch: Sequence[torch.Tensor]) -> tuple[tuple, torch.Tensor]:
    if not isinstance(batch, (tuple, list)) or len(batch) != 5:
        raise ValueError(f"batch must be the tuple (*{_INPUTS}, targets), got {type(batch).__name__}"
                         f"{' of length ' + str(len(batch)) if isinstance(batch, (tuple, list)) else ''}")
    return tuple(batch[:4]), batch[4]


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

    def encode(self, context: Sequence[torch.Tensor]) -> torch.Tensor:
        """Encoder output (n, context_dim) of the event tensors ``(global_feats, leptons, jets, jet_mask)``."""
        _check_context(context)
        return self.encoder(*context)


class TransformerRegressor(EventModel):
    """Point estimator: encoder context -> MLP -> (n, dim); trained with MSE."""

    def __init__(self, encoder: EventEncoder, dim: int = 6, *, hidden: int = 64):
        super().__init__(encoder, dim)
        self.head = normed_mlp(encoder.context_dim, hidden, dim)

    def forward(self, context: Sequence[torch.Tensor]) -> torch.Tensor:
        """Point estimates (n, dim) in standardised target units."""
        return self.head(self.encode(context))

    @torch.no_grad()
    def predict(self, context: Sequence[torch.Tensor]) -> torch.Tensor:
        """Point estimates (n, dim) without gradient."""
        return self.forward(context)

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Mean squared error of the batch."""
        context, targets = _split_batch(batch)
        return nn.functional.mse_loss(self.forward(context), targets)


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
        """MSE + ``mmd_weight`` * MMD^2 of the batch."""
        context, targets = _split_batch(batch)
        pred = self.forward(context)
        return nn.functional.mse_loss(pred, targets) + self.mmd_weight * mmd2(pred, targets, self.bandwidths)


class EventFlow(EventModel):
    """Conditional neural spline flow on the targets, conditioned on the encoder context."""

    def __init__(self, encoder: EventEncoder, dim: int = 6, **flow_kwargs):
        super().__init__(encoder, dim)
        self.flow = ConditionalFlow(dim, encoder.context_dim, **flow_kwargs)

    def log_prob(self, x: torch.Tensor, context: Sequence[torch.Tensor]) -> torch.Tensor:
        """Log-density (n,) of the targets ``x`` given the event tensors."""
        return self.flow.log_prob(x, self.encode(context))

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Mean negative log-likelihood of the targets."""
        context, targets = _split_batch(batch)
        return -self.log_prob(targets, context).mean()

    def sample(self, context: Sequence[torch.Tensor], m: int, generator: torch.Generator | None = None
               ) -> torch.Tensor:
        """``m`` samples per event, shape (n, m, dim), standardised units."""
        return self.flow.sample(self.encode(context), m, generator=generator)


class EventCFM(EventModel):
    """Conditional flow matching on the targets; ``steps`` ODE steps when sampling."""

    def __init__(self, encoder: EventEncoder, dim: int = 6, **cfm_kwargs):
        super().__init__(encoder, dim)
        self.cfm = ConditionalFlowMatching(dim, encoder.context_dim, **cfm_kwargs)

    @property
    def steps(self) -> int:
        """ODE solver steps used when sampling."""
        return self.cfm.steps

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Flow-matching loss of the targets."""
        context, targets = _split_batch(batch)
        return self.cfm.loss((self.encode(context), targets))

    def sample(self, context: Sequence[torch.Tensor], m: int, generator: torch.Generator | None = None
               ) -> torch.Tensor:
        """``m`` samples per event, shape (n, m, dim), standardised units."""
        return self.cfm.sample(self.encode(context), m, generator=generator)


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
