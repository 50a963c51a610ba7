"""Paired comparisons of models measured on the same test events with the same training seeds.

:class:`PairedComparison` holds what a chapter measured per model and answers "is model a lower
than model b on this metric?" with the interval rule that fits the metric:

* a mean over test events (``event_scores[model][metric]``, shape ``(seeds, events)``): the paired
  seed-and-event interval of :func:`posteval.metrics.seed_event.paired_seed_event_interval`;
* a number per seed with event-resample replicates (``replicates[metric][model]``, shape
  ``(resamples, seeds)``, e.g. the spectrum chi2/ndf on bootstrap resamples of the test events,
  the same resamples for every model): :func:`posteval.metrics.seeds.seed_replicate_interval` of the
  differences;
* a number per seed only (``seed_values[metric][model]``): the paired Student-t interval over seeds.

A model that is not trained has one row (or one value) that is compared against every seed of
the other model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .seed_event import paired_seed_event_interval, seed_t_interval
from .seeds import seed_replicate_interval as replicated_interval
from .verdicts import verdict

__all__ = ["PairedComparison"]


@dataclass(frozen=True)
class PairedComparison:
    """Per-event scores, per-seed values and event-resample replicates of several models."""

    event_scores: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    seed_values: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    replicates: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)

    def _seed_values(self, metric: str, model: str) -> np.ndarray:
        try:
            return np.atleast_1d(np.asarray(self.seed_values[metric][model], dtype=float))
        except KeyError:
            raise ValueError(f"no per-seed values of metric {metric!r} for model {model!r}") from None

    def interval(self, metric: str, a: str, b: str, *, level: float = 0.95) -> tuple[float, float, float]:
        """``(mean, lo, hi)`` of metric(a) - metric(b), paired over seeds (and events where measured)."""
        if metric in self.event_scores.get(a, {}) and metric in self.event_scores.get(b, {}):
            return paired_seed_event_interval(self.event_scores[a][metric], self.event_scores[b][metric], level=level)
        va, vb = self._seed_values(metric, a), self._seed_values(metric, b)
        diff = np.subtract(*np.broadcast_arrays(va, vb))
        if metric in self.replicates:
            ra, rb = (np.asarray(self.replicates[metric][m], dtype=float) for m in (a, b))
            iv = replicated_interval(diff, ra - rb, level=level)
            return iv.mean, iv.lo, iv.hi
        return seed_t_interval(diff, level=level)

    def lower(self, metric: str, a: str, b: str, *, margin: float = 0.0) -> str:
        """Verdict of "a is lower than b on metric": "yes", "no" or "not resolved"."""
        _, lo, hi = self.interval(metric, a, b)
        return verdict(lo, hi, direction=-1, margin=margin)
