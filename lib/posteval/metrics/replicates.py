"""Models trained as S replicates (seeds) and scored on one shared test set: estimates, intervals, rankings.

A :func:`~posteval.metrics.report.protocol_report` with ``replicates=True`` gives, for every row (one
model and replicate), the metric on the test events and its values on B paired event-bootstrap
resamples. :class:`ReplicatedReport` groups the rows of one model across replicates and turns them
into :class:`~posteval.metrics.seeds.SeedEventInterval` s (training and test-event variance combined),
paired differences and the verdicts built on them:

* ``above(metric, a, b)``: "a ranks above b" (lower is better) from the interval of
  ``metric(b) - metric(a)``: yes / no / not resolved (:func:`~posteval.metrics.verdicts.verdict`);
* ``unbeaten(metric, candidates)``: the models that no other candidate ranks above;
* ``ranking_flips(pointwise, distributional, candidates)``: every model unbeaten under the pointwise
  metric is beaten under the distributional one.

A model without training (an exact posterior) has one row, used for every replicate: its interval
is the test-event part alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._validation import DEFAULT_LEVELS, levels_array
from .coverage import pit
from .seeds import MIN_SEEDS_EQUIVALENCE, SeedEventInterval, required_seeds, seed_replicate_interval
from .uncertainty import bootstrap_means
from .verdicts import verdict

__all__ = ["replicate_row", "combine_estimates", "ReplicatedReport", "local_coverage_error_replicates",
           "coverage_error_replicates", "replicates_to_resolve"]

Estimate = tuple[np.ndarray, np.ndarray]  # values (S,), event-bootstrap replicates (B, S)


def replicate_row(name: str, replicate: int, *, untrained: Sequence[str] = ("oracle",)) -> str:
    """Row name of one model and replicate in a replicated protocol table (an untrained model has one row)."""
    return name if name in untrained else f"{name} #{replicate}"


def combine_estimates(f: Callable, *estimates: Estimate) -> Estimate:
    """A function of several metrics, applied per replicate and per event resample (so it stays paired)."""
    if not estimates:
        raise ValueError("combine_estimates needs at least one (values, replicates) estimate")
    return f(*(v for v, _ in estimates)), f(*(rep for _, rep in estimates))


@dataclass
class ReplicatedReport:
    """Rows of a replicated protocol table grouped by model.

    Parameters
    ----------
    table : protocol table indexed by row name (see :func:`replicate_row`)
    replicates : {metric: (B, rows)} event-bootstrap values, columns in the order of ``table``
    seeds : the replicate numbers
    untrained : models with one row shared by every replicate
    ratios : {derived metric: (metric, reference model)}, e.g. ``{"crps_ratio": ("crps", "oracle")}``
    """

    table: pd.DataFrame
    replicates: Mapping[str, np.ndarray]
    seeds: Sequence[int]
    untrained: Sequence[str] = ("oracle",)
    ratios: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def __post_init__(self):
        if len(self.seeds) < 2:
            raise ValueError(f"seeds: an interval over replicates needs at least 2, got {list(self.seeds)}")
        self._position = {name: i for i, name in enumerate(self.table.index)}
        for metric, reps in self.replicates.items():
            if np.ndim(reps) != 2 or np.shape(reps)[1] != len(self.table):
                raise ValueError(f"replicates[{metric!r}]: expected (B, {len(self.table)}), got {np.shape(reps)}")

    def rows(self, name: str) -> list[str]:
        """The table rows of one model, one per replicate."""
        rows = [replicate_row(name, r, untrained=self.untrained) for r in self.seeds]
        missing = [r for r in rows if r not in self._position]
        if missing:
            raise ValueError(f"model {name!r}: no rows {missing} in the table")
        return rows

    def estimate(self, metric: str, name: str) -> Estimate:
        """(values (S,), replicates (B, S)) of a metric of one model; derived ratios included."""
        if metric in self.ratios:
            base, reference = self.ratios[metric]
            return combine_estimates(np.divide, self.estimate(base, name), self.estimate(base, reference))
        if metric not in self.table.columns or metric not in self.replicates:
            raise ValueError(f"metric {metric!r}: not in the table with replicates")
        rows = self.rows(name)
        return (self.table.loc[rows, metric].to_numpy(float),
                np.asarray(self.replicates[metric])[:, [self._position[x] for x in rows]])

    def interval(self, metric: str, name: str, *, level: float = 0.95) -> SeedEventInterval:
        """Mean over replicates and its interval (training and test-event variance)."""
        return seed_replicate_interval(*self.estimate(metric, name), level=level)

    def difference(self, metric: str, a: str, b: str, *, level: float = 0.95) -> SeedEventInterval:
        """Interval of ``metric(b) - metric(a)`` (positive: a is lower, i.e. better), paired."""
        return seed_replicate_interval(*combine_estimates(np.subtract, self.estimate(metric, b), self.estimate(metric, a)),
                                   level=level)

    def above(self, metric: str, a: str, b: str, *, level: float = 0.95) -> tuple[SeedEventInterval, str]:
        """The difference and the verdict on "a ranks above b" under ``metric`` (lower is better)."""
        iv = self.difference(metric, a, b, level=level)
        return iv, verdict(iv.lo, iv.hi, direction=1)

    def unbeaten(self, metric: str, candidates: Sequence[str]) -> list[str]:
        """The candidates that no other candidate ranks above (resolved) under ``metric``."""
        beaten = {b for a in candidates for b in candidates if a != b and self.above(metric, a, b)[1] == "yes"}
        return [name for name in candidates if name not in beaten]

    def ranks_above_all(self, metric: str, a: str, candidates: Sequence[str]) -> str:
        """"yes" if ``a`` ranks above every other candidate, "no" if any ranks above or level with it
        resolved the other way, else "not resolved"."""
        words = [self.above(metric, a, b)[1] for b in candidates if b != a]
        return "yes" if all(w == "yes" for w in words) else "no" if "no" in words else "not resolved"

    def ranking_flips(self, pointwise: str, distributional: str, candidates: Sequence[str]) -> str:
        """"yes" if every model unbeaten under ``pointwise`` is beaten under ``distributional``;
        "no" if one of them ranks above every other under ``distributional``; else "not resolved"."""
        leaders = self.unbeaten(pointwise, candidates)
        beaten = [any(self.above(distributional, b, w)[1] == "yes" for b in candidates if b != w) for w in leaders]
        if all(beaten):
            return "yes"
        wins = [self.ranks_above_all(distributional, w, candidates) == "yes" for w in leaders]
        return "no" if any(wins) else "not resolved"


def local_coverage_error_replicates(covered: Sequence[np.ndarray], covariate, *, nominal: float, bins: int = 8,
                                    n_boot: int = 1000, seed: int = 0) -> Estimate:
    """Worst ``|coverage - nominal|`` over quantile bins of a covariate, per replicate and per event resample.

    Parameters
    ----------
    covered : one (n,) boolean array per replicate (truth inside that replicate's interval)
    covariate : (n,) values whose quantile bins are compared (e.g. the observation)
    nominal : the intervals' nominal coverage
    Returns
    -------
    (values (S,), replicates (B, S)) for :func:`~posteval.metrics.seeds.seed_replicate_interval`.
    """
    hits = [np.asarray(c) for c in covered]
    x = np.asarray(covariate, dtype=float)
    if not hits or any(h.dtype != bool or h.shape != x.shape for h in hits):
        raise ValueError(f"covered: expected one boolean array of shape {x.shape} per replicate")
    if not 0 < nominal < 1:
        raise ValueError(f"nominal: expected a level in (0, 1), got {nominal!r}")
    in_bin = pd.get_dummies(pd.qcut(x, bins)).to_numpy(float)  # (n, bins) one-hot quantile bin
    per_bin = [h[:, None] * in_bin for h in hits]
    values = np.array([np.abs(p.sum(0) / in_bin.sum(0) - nominal).max() for p in per_bin])
    boot = bootstrap_means([np.concatenate(per_bin, axis=1), in_bin], n_boot=n_boot, seed=seed)
    coverage = boot[0].reshape(n_boot, len(hits), in_bin.shape[1]) / boot[1][:, None, :]
    return values, np.abs(coverage - nominal).max(axis=2)


def coverage_error_replicates(samples: Sequence[np.ndarray], truth, levels=DEFAULT_LEVELS, *, n_boot: int = 1000,
                              seed: int = 0) -> Estimate:
    """Raw coverage error (worst level, mean over dimensions) of samplers, and on event resamples.

    Parameters
    ----------
    samples : one (n, m) or (n, m, d) array per sampler, all for the same ``truth`` (n,) or (n, d)
    levels : nominal levels of the central intervals (as :func:`~posteval.metrics.coverage.coverage_curve`)
    Returns
    -------
    (values (k,), replicates (n_boot, k)) for k samplers; every sampler is scored on the same
    resampled events, so differences between samplers are paired. ``values`` equals
    ``coverage_error(coverage_curve(s, truth, levels))`` averaged over dimensions.
    """
    lv = levels_array(levels)
    if isinstance(samples, np.ndarray) or not len(samples):
        raise ValueError("samples: expected a non-empty list of sample arrays (one per sampler)")
    hits = []
    for s in samples:
        score = np.abs(2.0 * pit(s, truth) - 1.0)
        score = score.reshape(len(score), -1)  # (n, d)
        hits.append((score[:, None, :] <= lv[None, :, None]).reshape(len(score), -1).astype(float))
    d = hits[0].shape[1] // lv.size
    values = np.array([np.abs(h.mean(0).reshape(lv.size, d) - lv[:, None]).max(axis=0).mean() for h in hits])
    boot = bootstrap_means(hits, n_boot=n_boot, seed=seed)
    reps = [np.abs(b.reshape(n_boot, lv.size, d) - lv[None, :, None]).max(axis=1).mean(axis=1) for b in boot]
    return values, np.stack(reps, axis=1)


def replicates_to_resolve(iv: SeedEventInterval, boundary: float, margin: float) -> str:
    """How many replicates would resolve a claim if its mean and variance components stayed (test set fixed)."""
    distance = abs(iv.mean - boundary)
    equivalence = margin - distance > distance  # the nearer verdict is "within the margin"
    need = required_seeds(iv.seed_sd, iv.event_sd, margin - distance if equivalence else distance)
    if need is None:
        return "a larger test set"
    return f"{max(need, MIN_SEEDS_EQUIVALENCE) if equivalence else need} replicates"
