"""Models of the book: point regressors, mixture density network, spline flow, flow matching,
and the shared training loop `fit`."""

from .cfm import ConditionalFlowMatching
from .flow import ConditionalFlow
from .mdn import MixtureDensityNetwork
from .mlp import PointRegressor, mlp
from .training import TrainHistory, fit

__all__ = [
    "ConditionalFlow",
    "ConditionalFlowMatching",
    "MixtureDensityNetwork",
    "PointRegressor",
    "TrainHistory",
    "fit",
    "mlp",
]
