"""Intervals over training seeds *and* test events, for metrics that several trained replicates
(seeds) measure on one shared test set.

The rule (:func:`seed_replicate_interval`). Each of ``S`` seeds gives an estimate ``v_s`` of a metric
(or of a contrast between models, e.g. a CRPS ratio) on the same ``n`` test events, and ``B``
event-bootstrap replicates ``r_bs`` of it, resampling the *same* events for every seed. Then

* the estimate is the seed mean ``mean_s v_s``;
* its variance is ``s_T^2 / S + v_E``, where ``s_T^2`` is the sample variance of ``v_s`` over seeds
  (training variance; with a shared test set it also holds the seed-specific part of the event
  noise, e.g. each seed's own Monte-Carlo samples) and ``v_E`` the variance over ``b`` of the seed
  mean ``mean_s r_bs`` (test-event variance, which a shared test set does not average away over
  seeds). The seed-specific event noise is counted in both terms: conservative, never optimistic;
* the interval is ``mean +- sqrt(t^2 s_T^2 / S + z^2 v_E)``, each component's half-width at its
  own quantile (``t``: Student-t with ``S - 1`` degrees of freedom, exact for normal training
  effects; ``z``: normal, for the many test events) added in quadrature. With training variance
  alone it is the Student-t interval over seeds, with event variance alone the normal event
  interval. (Welch-Satterthwaite degrees of freedom instead under-cover at 3 seeds: a small
  sample variance of the seeds also makes the degrees of freedom large.)

``tests/test_seeds.py`` checks its coverage by simulation (normal training and event effects,
seed-dominated, event-dominated and mixed, 3 and 5 seeds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._validation import level_value

from .verdicts import verdict

__all__ = ["SeedEventInterval", "seed_replicate_interval", "required_seeds", "verdict_two_sided", "verdict_over_seeds",
           "MIN_SEEDS_EQUIVALENCE"]

MIN_SEEDS_EQUIVALENCE = 5
"""Fewest seeds for an equivalence verdict (an interval inside the margin) when training varies:
with S seeds the sample sd of the seeds is within a factor [0.16, 1.92] of the true sd (95 %) at
S = 3, [0.35, 1.67] at S = 5, so at 3 the width of the interval, on which "inside the margin"
rests, is itself unknown; and a per-seed metric with a tail (a max of deviations, an occasional
bad training run) is missed by 3 seeds with a large probability."""


@dataclass(frozen=True)
class SeedEventInterval:
    """Seed mean of a metric, its interval, and the two variance components behind it."""

    mean: float
    lo: float
    hi: float
    seed_sd: float  # sd of the per-seed estimates (training variance, one seed)
    event_sd: float  # sd of the seed mean over event resamples (test-set variance)
    n_seeds: int


def _level(level) -> float:
    return level_value(level, "level")


def _half_width(seed_var_of_mean: float, event_var: float, n_seeds: int, level: float) -> float:
    t = stats.t.ppf(0.5 + level / 2, n_seeds - 1)
    z = stats.norm.ppf(0.5 + level / 2)
    return float(np.sqrt(t**2 * seed_var_of_mean + z**2 * event_var))


def seed_replicate_interval(values, replicates, *, level: float = 0.95) -> SeedEventInterval:
    """Interval of the seed mean of a metric that combines training and test-event variance.

    Parameters
    ----------
    values : (S,) the metric of each seed on the full test set, S >= 2
    replicates : (B, S) the metric of each seed on B event-bootstrap resamples, the same resampled
        events in every column (e.g. from :func:`~posteval.metrics.uncertainty.bootstrap_means`), B >= 2
    level : interval level

    Returns
    -------
    SeedEventInterval (see the module docstring for the rule)
    """
    level = _level(level)
    v = np.asarray(values, dtype=float)
    r = np.asarray(replicates, dtype=float)
    if v.ndim != 1 or v.size < 2:
        raise ValueError(f"values must be one value per seed with at least 2 seeds, got shape {v.shape}")
    if r.ndim != 2 or r.shape[1] != v.size or r.shape[0] < 2:
        raise ValueError(f"replicates must be (B >= 2, {v.size}) (resamples x seeds), got shape {r.shape}")
    if not (np.isfinite(v).all() and np.isfinite(r).all()):
        raise ValueError("values and replicates must be finite")
    s = v.size
    seed_var = float(v.var(ddof=1))
    event_var = float(r.mean(axis=1).var(ddof=1))
    half = _half_width(seed_var / s, event_var, s, level)
    m = float(v.mean())
    return SeedEventInterval(m, m - half, m + half, float(np.sqrt(seed_var)), float(np.sqrt(event_var)), s)


def required_seeds(seed_sd: float, event_sd: float, half_width: float, *, level: float = 0.95,
                   max_seeds: int = 1000) -> int | None:
    """Smallest number of seeds whose :func:`seed_replicate_interval` half-width is at most ``half_width``.

    Assumes the measured components stay: the training sd per seed ``seed_sd`` and the test-set
    sd ``event_sd`` (fixed test set, so more seeds do not shrink it). None when no number of seeds
    up to ``max_seeds`` reaches it (the test set must grow instead).
    """
    for name, x in (("seed_sd", seed_sd), ("event_sd", event_sd)):
        if not np.isfinite(x) or x < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")
    if not np.isfinite(half_width) or half_width <= 0:
        raise ValueError(f"half_width must be a finite number > 0, got {half_width!r}")
    level = _level(level)
    for s in range(2, int(max_seeds) + 1):
        if _half_width(seed_sd**2 / s, event_sd**2, s, level) <= half_width:
            return s
    return None


def verdict_two_sided(lo: float, hi: float, *, margin: float = 0.0) -> str:
    """"yes" if the interval excludes 0 (either sign: the two differ), "no" if it lies within
    ``[-margin, margin]`` (equivalent), "not resolved" otherwise."""
    word = verdict(lo, hi, direction=1, margin=margin)
    if word == "yes" or float(hi) < 0:
        return "yes"
    return word


def verdict_over_seeds(iv: SeedEventInterval, *, boundary: float = 0.0, direction: int = 1, margin: float = 0.0,
                       two_sided: bool = False, min_seeds_equivalence: int = MIN_SEEDS_EQUIVALENCE) -> str:
    """Verdict on "the quantity lies beyond ``boundary`` in ``direction``" (``two_sided``: "differs
    from ``boundary``") from a :class:`SeedEventInterval`.

    As :func:`~posteval.metrics.verdicts.verdict` on ``[lo - boundary, hi - boundary]``, except that the
    equivalence route ("no" because the interval lies within ``boundary +- margin``) needs
    ``min_seeds_equivalence`` seeds when the seeds vary (``seed_sd > 0``); with fewer it is
    "not resolved".
    """
    lo, hi = iv.lo - boundary, iv.hi - boundary
    word = verdict_two_sided(lo, hi, margin=margin) if two_sided else verdict(lo, hi, direction=direction, margin=margin)
    if word != "no" or margin <= 0 or iv.seed_sd == 0 or iv.n_seeds >= min_seeds_equivalence:
        return word
    # a "no" that rests on the margin alone (the interval does not exclude the boundary on the other side)
    other_side = not two_sided and ((hi < 0) if direction == 1 else (lo > 0))
    return word if other_side else "not resolved"
