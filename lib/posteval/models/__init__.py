"""Models of the book, all under one contract, and the one training loop `fit`
(with its settings, `TrainingSettings`).

The contract
------------
Every model the book trains is a ``torch.nn.Module`` with

* ``loss(batch) -> scalar tensor``: its training objective on one batch, where a batch is the
  tuple ``(*context, x)``: the context tensors the model conditions on, then the target ``x``
  (``(context, x)`` for the generic models, ``(global_feats, leptons, jets, jet_mask, targets)``
  for the event models of chapter 3). `fit` trains any such model.

A *context* is one tensor ``(n, context_dim)`` or a tuple of tensors sliced together along the
event axis. On top of ``loss``:

* point estimators add ``predict(context) -> (n, dim)``;
* samplers add ``sample(context, m, generator=None) -> (n, m, dim)``, reproducible for a
  seeded ``torch.Generator``;
* densities add ``log_prob(x, context) -> (n,)``.

`predict_points` and `draw_samples` evaluate any point estimator or sampler over many events,
chunk by chunk, as float64 numpy arrays. `tests/test_model_contract.py` checks every model
class against the contract.

Models: `PointRegressor` (point), `MixtureDensityNetwork`, `ConditionalFlow` (sampler and
density), `ConditionalFlowMatching` (sampler), and the event models of
`posteval.models.event_models`; `mlp` is the one MLP builder they share.
"""

from posteval._extras import require

require("posteval.models", "torch", "zuko", extra="models")

from .cfm import ConditionalFlowMatching
from .flow import ConditionalFlow
from .inference import draw_samples, predict_points
from .mdn import MixtureDensityNetwork
from .mlp import PointRegressor, mlp
from .training import (TrainHistory, TrainingJob, TrainingSettings, fit, train_item, train_model, train_models,
                       training_items)

__all__ = [
    "ConditionalFlow",
    "ConditionalFlowMatching",
    "MixtureDensityNetwork",
    "PointRegressor",
    "TrainHistory",
    "TrainingJob",
    "TrainingSettings",
    "draw_samples",
    "fit",
    "mlp",
    "predict_points",
    "train_item",
    "train_model",
    "train_models",
    "training_items",
]
