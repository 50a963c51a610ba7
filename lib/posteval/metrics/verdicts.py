"""Verdicts from intervals: "yes", "no" or "not resolved" for a claimed effect, and intervals over seeds.

The decision rule (:func:`verdict`), for a claim that an effect is positive (``direction=+1``) or
negative (``direction=-1``), given a 95 % interval ``[lo, hi]`` of the effect and an equivalence
margin ``m >= 0``:

* **yes** if the interval excludes 0 on the claimed side (``lo > 0`` for a positive claim,
  ``hi < 0`` for a negative one);
* **no** if the interval excludes 0 on the other side, or lies entirely within ``[-m, m]`` (the
  effect, if any, is smaller than the margin: practically equivalent to none);
* **not resolved** otherwise (the interval contains 0 and reaches beyond the margin).

Intervals over seeds (one value per seed, or one paired difference per seed where two conditions
share the seed's setup):

* :func:`t_interval` / :func:`paired_t_interval`: Student-t interval of the mean, exact coverage
  for normally distributed values at any number of seeds (the default for few seeds);
* :func:`bootstrap_interval` / :func:`paired_bootstrap_interval`: percentile bootstrap of the
  mean over seeds. It needs many seeds: with 3 it covers far less than its nominal level.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ._validation import level_value

VERDICTS = ("yes", "no", "not resolved")

__all__ = ["VERDICTS", "verdict", "t_interval", "paired_t_interval", "bootstrap_interval",
           "paired_bootstrap_interval", "seed_interval", "decide"]


def _values(values, name: str, *, min_n: int = 2) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if v.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per seed), got shape {v.shape}")
    if len(v) < min_n:
        raise ValueError(f"{name} needs at least {min_n} values (seeds), got {len(v)}")
    if not np.isfinite(v).all():
        raise ValueError(f"{name} contains NaN or inf")
    return v


def _level(level) -> float:
    return level_value(level, "level")


def _paired(a, b) -> np.ndarray:
    a = _values(a, "a")
    b = _values(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must pair seed by seed: shapes {a.shape} and {b.shape}")
    return a - b


def verdict(lo: float, hi: float, *, direction: int = 1, margin: float = 0.0) -> str:
    """"yes", "no" or "not resolved" for the claim "the effect has the sign of ``direction``".

    Parameters
    ----------
    lo, hi : bounds of the effect's interval (``lo <= hi``)
    direction : +1 (claim: effect > 0) or -1 (claim: effect < 0)
    margin : equivalence margin ``m >= 0``; an interval inside ``[-m, m]`` gives "no"
    """
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"lo and hi must be finite, got {lo!r}, {hi!r}")
    if lo > hi:
        raise ValueError(f"lo ({lo}) must not exceed hi ({hi})")
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")
    margin = float(margin)
    if not np.isfinite(margin) or margin < 0:
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
    slo, shi = (lo, hi) if direction == 1 else (-hi, -lo)  # interval of the effect in the claimed direction
    if slo > 0:
        return "yes"
    if shi < 0 or (-margin <= lo and hi <= margin):
        return "no"
    return "not resolved"


def t_interval(values, *, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``values`` and its Student-t interval: ``(mean, lo, hi)``."""
    v = _values(values, "values")
    level = _level(level)
    m = float(v.mean())
    half = float(stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))
    return m, m - half, m + half


def paired_t_interval(a, b, *, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``a - b`` over shared seeds and its Student-t interval: ``(mean, lo, hi)``."""
    return t_interval(_paired(a, b), level=level)


def bootstrap_interval(values, *, level: float = 0.95, n_boot: int = 4000, seed=0) -> tuple[float, float, float]:
    """Mean of ``values`` and its percentile-bootstrap interval over seeds: ``(mean, lo, hi)``."""
    v = _values(values, "values")
    level = _level(level)
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 100:
        raise ValueError(f"n_boot must be an int >= 100, got {n_boot!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), (int(n_boot), len(v)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.5 - level / 2, 0.5 + level / 2])
    return float(v.mean()), float(lo), float(hi)


def paired_bootstrap_interval(a, b, *, level: float = 0.95, n_boot: int = 4000, seed=0) -> tuple[float, float, float]:
    """Mean of ``a - b`` and its percentile-bootstrap interval, resampling seeds (pairs kept together)."""
    return bootstrap_interval(_paired(a, b), level=level, n_boot=n_boot, seed=seed)


def seed_interval(a, b=None, *, method: str = "t", level: float = 0.95, seed=0) -> tuple[float, float, float]:
    """``(effect, lo, hi)`` of the mean of ``a`` (or of ``a - b``, paired by seed) by ``method`` "t" or "bootstrap"."""
    if method == "t":
        return t_interval(a, level=level) if b is None else paired_t_interval(a, b, level=level)
    if method == "bootstrap":
        return (bootstrap_interval(a, level=level, seed=seed) if b is None
                else paired_bootstrap_interval(a, b, level=level, seed=seed))
    raise ValueError(f"method must be 't' or 'bootstrap', got {method!r}")


def decide(a, b=None, *, direction: int = 1, margin: float = 0.0, method: str = "t", level: float = 0.95) -> dict:
    """Effect, interval and verdict of a claim about ``mean(a)`` or ``mean(a - b)`` over seeds.

    Returns
    -------
    dict with ``verdict``, ``effect``, ``effect_lo``, ``effect_hi``, ``n_seeds``
    """
    effect, lo, hi = seed_interval(a, b, method=method, level=level)
    return {"verdict": verdict(lo, hi, direction=direction, margin=margin), "effect": effect,
            "effect_lo": lo, "effect_hi": hi, "n_seeds": len(np.asarray(a))}
