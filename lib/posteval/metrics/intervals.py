"""Intervals of the protocol's numbers: one result type, one layout, one rule per kind of statistic.

Conventions (written once, here, for the whole package):

* **Layout: the sampled axis first.** Per-event scores are ``(n,)`` (one seed, or a model that is
  not trained) or ``(n, S)`` (S training seeds scored on the same n test events); event-bootstrap
  replicates of a statistic are ``(B, S)``, the same resampled events in every column
  (:func:`posteval.metrics.uncertainty.bootstrap_means`); per-seed values are ``(S,)``.
* **Sign and verb: a paired difference is a - b**, and one verb asks the question: ``lower``
  ("a is lower than b", lower is better for every score of the protocol).
* **Level:** a number in (0, 1), checked by one validator (:func:`posteval.metrics._validation.level_value`).

The rules (the variances are of the estimate; t is Student's quantile with S - 1 degrees of
freedom, z the normal one, both at (1 + level) / 2):

1. :func:`event_interval`, a mean over events and seeds of per-event scores ``x_is``:
   ``V_seed = var_s(mean_i x_is) / S``, ``V_event = var_i(mean_s x_is) / n`` and the interval
   ``mean +- sqrt(t^2 V_seed + z^2 V_event)``: each part's half-width at its own quantile, added in
   quadrature. With one seed it is the normal event interval, with no event noise the Student-t
   interval over seeds. Welch-Satterthwaite degrees of freedom instead under-cover at three seeds:
   a small sample variance of the seeds also makes the degrees of freedom large. The seed term also
   holds each seed's own event noise, so the interval is conservative, never too narrow.
2. :func:`replicate_interval`, a statistic that is not an event mean (a spectrum chi^2/ndf, a
   coverage error, a ratio): per-seed values ``v_s`` and their event-bootstrap replicates
   ``r_bs``. ``V_seed = var_s(v_s) / S``, ``V_event = var_b(mean_s r_bs)``, the same half-width rule,
   centred on the estimate (not on the replicates: a resample repeats events, which shifts a
   statistic such as chi^2/ndf upward, so the replicates give its spread, not its centre). With one
   seed only the event part remains.
3. :func:`seed_interval`, values of independent seeds that each drew their own test events (the
   event noise is inside each value): the Student-t interval over seeds.

**Inside the statistic's range.** ``transform="log"`` (positive statistics: chi^2/ndf, coverage
errors, ratios) and ``"logit"`` (fractions in (0, 1)) compute the rule on that scale around the
transformed estimate (the delta method for event means) and map the interval back, so that it never
leaves the range; differences of statistics use the identity.

**p-values are the intervals' duals.** :meth:`Interval.p_value` of a value ``theta_0`` is one minus
the level at which the interval just reaches ``theta_0``: a two-sided p below 1 - level exactly when
the interval excludes ``theta_0``. This is
what Holm's adjustment (:func:`posteval.metrics.verdicts.holm`) and the claims table use.

Reference: the rule is a two-stage (training, test-set) random-effects variance, e.g. Bouthillier
et al., "Accounting for variance in machine learning benchmarks", MLSys 2021; Efron & Tibshirani,
*An Introduction to the Bootstrap* (1993), ch. 13 (percentile intervals) and ch. 16 (tests).

Example
-------
>>> rng = np.random.default_rng(0)
>>> scores = 1.0 + rng.normal(0, 1, (2000, 3)) + rng.normal(0, 0.05, 3)   # (events, seeds)
>>> iv = event_interval(scores)
>>> bool(iv.lo < 1.0 < iv.hi), iv.n_seeds, iv.n_events
(True, 3, 2000)
>>> bool(iv.p_value(0.0) < 0.01)     # 3 seeds: Student-t with 2 degrees of freedom in the seed part
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

from .._deprecation import renamed_keywords
from ._validation import finite_array, level_value, positive_int, real_array, replicate_array

__all__ = ["Interval", "event_interval", "exact_interval", "paired_event_interval", "replicate_interval", "seed_interval",
           "paired_seed_interval", "stack_seeds", "required_seeds", "replicates_to_resolve", "events_to_resolve", "seeds_for_power", "combine_estimates", "Measurements", "TRANSFORMS",
           "MIN_SEEDS_EQUIVALENCE", "percentile_bounds", "percentile_interval", "bootstrap_pvalue",
           "monte_carlo_pvalue", "chi2_pvalue", "binomial_tail_pvalue", "binomial_band", "normal_half_width"]

MIN_SEEDS_EQUIVALENCE = 5
"""Fewest seeds for an equivalence verdict (an interval inside a margin) when training varies:
with S seeds the sample sd of the seeds is within a factor [0.16, 1.92] of the true sd (95 %) at
S = 3, [0.35, 1.67] at S = 5, so at 3 the width of the interval, on which "inside the margin"
rests, is itself unknown."""

_TINY_P = 1e-16


def _log(x):
    return np.log(x)


def _logit(x):
    return np.log(x) - np.log1p(-x)


def _expit(y):
    return 1.0 / (1.0 + np.exp(-y))


#: name -> (forward, inverse, derivative of forward, range check, range text)
TRANSFORMS: dict[str, tuple[Callable, Callable, Callable, Callable, str]] = {
    "identity": (lambda x: x, lambda y: y, lambda x: np.ones_like(np.asarray(x, float)), lambda x: True, "real"),
    "log": (_log, np.exp, lambda x: 1.0 / np.asarray(x, float), lambda x: bool(np.all(np.asarray(x) > 0)), "> 0"),
    "logit": (_logit, _expit, lambda x: 1.0 / (np.asarray(x, float) * (1 - np.asarray(x, float))),
              lambda x: bool(np.all((np.asarray(x) > 0) & (np.asarray(x) < 1))), "in (0, 1)"),
}


def _transform(name: str):
    if name not in TRANSFORMS:
        raise ValueError(f"transform: expected one of {tuple(TRANSFORMS)}, got {name!r}")
    return TRANSFORMS[name]


def _half_width(seed_var: float, event_var: float, n_seeds: int, level: float) -> float:
    q = 0.5 + level / 2
    # special.stdtrit / ndtri are what stats.t.ppf / stats.norm.ppf compute, without their ~50 us of
    # overhead per call (p_value finds its level by root-finding over this function)
    t = special.stdtrit(n_seeds - 1, q) if n_seeds > 1 else 0.0
    # a part without variance adds nothing, also where its quantile is infinite (level -> 1 in p_value)
    seed_part = t**2 * seed_var if seed_var > 0 else 0.0
    event_part = special.ndtri(q) ** 2 * event_var if event_var > 0 else 0.0
    return float(np.sqrt(seed_part + event_part))


@dataclass(frozen=True)
class Interval:
    """An estimate, its interval at ``level``, and the parts behind it.

    ``seed_var`` and ``event_var`` are the variances of the estimate on the ``transform`` scale
    (training seeds; test events), ``n_seeds`` / ``n_events`` the design (``n_events`` None where
    the events enter only through bootstrap replicates).
    """

    estimate: float
    lo: float
    hi: float
    level: float
    seed_var: float
    event_var: float
    n_seeds: int
    n_events: int | None
    transform: str = "identity"

    def __iter__(self) -> Iterator[float]:
        """``mean, lo, hi = interval`` unpacks the three numbers."""
        return iter((self.estimate, self.lo, self.hi))

    @property
    def seed_sd(self) -> float:
        """sd of one seed's estimate (training variance), on the transform scale."""
        return float(np.sqrt(self.seed_var * self.n_seeds))

    @property
    def event_sd(self) -> float:
        """sd of the estimate from the test events, on the transform scale."""
        return float(np.sqrt(self.event_var))

    def at_level(self, level: float) -> tuple[float, float]:
        """The interval's bounds at another level (the same rule and parts)."""
        level = level_value(level)
        fwd, inv, *_ = _transform(self.transform)
        c = float(fwd(self.estimate))
        h = _half_width(self.seed_var, self.event_var, self.n_seeds, level)
        return float(inv(c - h)), float(inv(c + h))

    def p_value(self, null: float = 0.0, alternative: str = "two-sided") -> float:
        """p-value of ``estimate == null`` (``alternative``: "two-sided"; "greater": the claim
        estimate > null; "less": estimate < null), the dual of the interval: two-sided p < 1 - level
        exactly when ``[lo, hi]`` excludes ``null``.

        >>> iv = Interval(1.0, 0.5, 1.5, 0.95, 0.0, (0.5 / 1.959964) ** 2, 1, 100)
        >>> round(iv.p_value(0.0), 4), round(iv.p_value(0.0, "greater"), 4)
        (0.0001, 0.0)
        """
        if alternative not in ("two-sided", "greater", "less"):
            raise ValueError(f"alternative: expected 'two-sided', 'greater' or 'less', got {alternative!r}")
        null = float(null)
        if not np.isfinite(null):
            raise ValueError(f"null: expected a finite number, got {null!r}")
        fwd, _, _, ok, text = _transform(self.transform)
        if not ok(null):
            raise ValueError(f"null: {null!r} is outside the range ({text}) of a {self.transform}-scale interval")
        d = float(fwd(self.estimate)) - float(fwd(null))
        if self.seed_var + self.event_var == 0:
            two = 1.0 if d == 0 else 0.0
        elif d == 0:
            two = 1.0
        elif self.seed_var == 0 or self.n_seeds <= 1:  # the normal part alone: closed form
            two = max(_TINY_P, 2.0 * special.ndtr(-abs(d) / np.sqrt(self.event_var)))
        elif self.event_var == 0:  # the seeds' Student-t part alone: closed form
            two = max(_TINY_P, 2.0 * special.stdtr(self.n_seeds - 1, -abs(d) / np.sqrt(self.seed_var)))
        else:
            f = lambda lv: _half_width(self.seed_var, self.event_var, self.n_seeds, lv) - abs(d)  # noqa: E731
            top = 1 - _TINY_P
            two = _TINY_P if f(top) < 0 else 1.0 - optimize.brentq(f, 0.0, top, xtol=1e-14)
        if alternative == "two-sided":
            return float(two)
        right = d > 0 if alternative == "greater" else d < 0
        return float(two / 2 if right else 1 - two / 2)


def _build(estimate: float, c: float, seed_var: float, event_var: float, n_seeds: int, n_events, level: float,
           transform: str) -> Interval:
    _, inv, *_ = _transform(transform)
    h = _half_width(seed_var, event_var, n_seeds, level)
    return Interval(float(estimate), float(inv(c - h)), float(inv(c + h)), level, float(seed_var), float(event_var),
                    int(n_seeds), n_events, transform)


def _scores(scores, name: str) -> np.ndarray:
    s = real_array(scores, name)
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2:
        raise ValueError(f"{name}: expected per-event scores (events,) or (events, seeds), got shape {s.shape}")
    if s.shape[0] < 2:
        raise ValueError(f"{name}: needs at least 2 events on the first axis, got shape {s.shape} (layout: events "
                         f"first, (n, S))")
    if not np.isfinite(s).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    return s


def event_interval(scores: ArrayLike, *, level: float = 0.95, transform: str = "identity") -> Interval:
    """Rule 1: the mean of per-event ``scores`` (n,) or (n, S) and its seed-and-event interval.

    With x_is the score of event i under seed s (i = 1..n, s = 1..S) and xbar their mean,

        V_seed = var_s(mean_i x_is) / S,   V_event = var_i(mean_s x_is) / n   (ddof = 1),
        [lo, hi] = xbar -+ sqrt(t_{S-1}^2 V_seed + z^2 V_event),

    t (Student, S - 1 degrees of freedom) and z (normal) at (1 + level) / 2; with S = 1, V_seed = 0
    and this is the normal interval over events. ``transform`` ("log" for positive scores, "logit"
    for fractions in (0, 1)) puts the rule on that scale by the delta method (both variances times
    f'(xbar)^2, centred on f(xbar)) and maps the bounds back with f^-1. Scores that are all equal
    give the exact interval [xbar, xbar].

    Reference: Bouthillier et al. (2021), "Accounting for variance in machine learning benchmarks",
    MLSys 2021 (training and test-set variance); Student (1908), *Biometrika* 6, 1 (the t quantile);
    Casella and Berger (2002), *Statistical Inference*, 2nd ed., section 5.5.4 (the delta method).

    Example: 4 events, 2 seeds; V_seed = var(2.5, 3.5) / 2 = 0.25, V_event = var(1.5, 3, 3, 4.5) / 4
    = 0.375, and t_1 = 12.71 makes the seed part dominate:

    >>> iv = event_interval([[1.0, 2.0], [3.0, 3.0], [2.0, 4.0], [4.0, 5.0]])
    >>> iv.estimate, round(iv.lo, 3), round(iv.hi, 3), iv.seed_var, iv.event_var
    (3.0, -3.465, 9.465, 0.25, 0.375)
    >>> event_interval(np.array([0.0, 1.0] * 50)).n_events
    100
    """
    level = level_value(level)
    s = _scores(scores, "scores")
    fwd, _, deriv, ok, text = _transform(transform)
    n, k = s.shape
    mean = float(s.mean())
    if np.ptp(s) == 0:  # every score equal (e.g. a fraction that is 1 for every event): exact, on any scale
        return Interval(mean, mean, mean, level, 0.0, 0.0, k, n, "identity")
    if not ok(mean):
        raise ValueError(f"scores: mean {mean!r} is outside the range ({text}) of transform {transform!r}")
    g2 = float(deriv(mean)) ** 2
    v_event = float(s.mean(axis=1).var(ddof=1)) / n * g2
    v_seed = float(s.mean(axis=0).var(ddof=1)) / k * g2 if k > 1 else 0.0
    return _build(mean, float(fwd(mean)), v_seed, v_event, k, n, level, transform)


def stack_seeds(per_seed: Sequence[ArrayLike]) -> np.ndarray:
    """Per-event scores of several seeds as one ``(events, seeds)`` array, X[i, s] = per_seed[s][i];
    one column when every seed gave the same scores (a model that is not trained), so that it is
    not credited with seed noise it does not have (V_seed = 0 in :func:`event_interval`).

    Reference: the (test events, training seeds) layout of the two-stage design of Bouthillier et
    al. (2021), MLSys 2021: per-event scores of S seeds on the same n events.

    >>> stack_seeds([[1.0, 2.0], [1.5, 2.5]]).tolist()  # 2 events, 2 seeds
    [[1.0, 1.5], [2.0, 2.5]]
    >>> stack_seeds([np.ones(4), np.ones(4)]).shape
    (4, 1)
    """
    if isinstance(per_seed, np.ndarray) or not len(per_seed):
        raise ValueError("per_seed: expected a non-empty list of 1-D per-event score arrays of one length")
    cols = [finite_array(c, f"per_seed[{i}]", (1,)) for i, c in enumerate(per_seed)]
    for i, c in enumerate(cols):
        if c.shape != cols[0].shape:
            raise ValueError(f"per_seed[{i}]: {c.size} events, per_seed[0] has {cols[0].size} (one length for every "
                             f"seed)")
    out = np.stack(cols, axis=1)
    return out[:, :1] if all(np.array_equal(cols[0], c) for c in cols[1:]) else out


def _pair(a, b, names=("a", "b")) -> tuple[np.ndarray, np.ndarray]:
    """Broadcast two (n, S) blocks: a one-column (untrained) model pairs with every seed of the other."""
    a, b = _scores(a, names[0]), _scores(b, names[1])
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{names[0]} and {names[1]} must score the same events: {a.shape[0]} and {b.shape[0]}")
    if a.shape[1] != b.shape[1] and 1 not in (a.shape[1], b.shape[1]):
        raise ValueError(f"{names[0]} and {names[1]} must pair seed by seed: {a.shape[1]} and {b.shape[1]} seeds")
    return np.broadcast_arrays(a, b)


def paired_event_interval(a: ArrayLike, b: ArrayLike, *, level: float = 0.95) -> Interval:
    """Rule 1 on the paired differences d_is = a_is - b_is (same events, same seeds; a one-column
    model pairs with every seed): dbar -+ sqrt(t_{S-1}^2 V_seed(d) + z^2 V_event(d)), with the
    variances of :func:`event_interval` computed on d (identity scale).

    Reference: Student (1908), *Biometrika* 6, 1 (the interval of a mean of paired differences, his
    sleep-data example); Bouthillier et al. (2021), MLSys 2021 (seed and test-set variance).

    >>> iv = paired_event_interval([1.0, 2.0, 3.0, 4.0], [0.5, 1.5, 2.0, 3.5])  # d = 0.5, 0.5, 1, 0.5
    >>> round(iv.estimate, 3), round(iv.lo, 3), round(iv.hi, 3)
    (0.625, 0.38, 0.87)
    >>> x = np.arange(10.0)
    >>> paired_event_interval(x + 1, x).estimate
    1.0
    """
    a, b = _pair(a, b)
    return event_interval(a - b, level=level)


def _values(values, name: str, min_n: int = 1) -> np.ndarray:
    v = real_array(values, name)
    v = np.atleast_1d(v)
    if v.ndim != 1:
        raise ValueError(f"{name}: expected one value per seed (S,), got shape {v.shape}")
    if v.size < min_n:
        raise ValueError(f"{name}: needs at least {min_n} values (seeds), got {v.size}")
    if not np.isfinite(v).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    return v


def replicate_interval(values: ArrayLike, replicates: ArrayLike, *, level: float = 0.95,
                       transform: str = "identity") -> Interval:
    """Rule 2: the seed mean of a statistic that is not an event mean, from per-seed ``values`` (S,)
    and event-bootstrap ``replicates`` (B, S) (the same resampled events in every column).

    With v_s the statistic of seed s, r_bs its value on bootstrap resample b, vbar = mean_s v_s and
    f the ``transform``,

        V_seed = var_s(f(v_s)) / S,   V_event = var_b(mean_s f(r_bs))   (ddof = 1),
        [lo, hi] = f^-1(f(vbar) -+ sqrt(t_{S-1}^2 V_seed + z^2 V_event)),

    t and z at (1 + level) / 2, centred on the estimate (not on the replicates); with S = 1 only
    the event part.

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (the bootstrap
    estimate of a standard error: the sd of the replicates); Bouthillier et al. (2021), MLSys 2021
    (training and test-set variance).

    Example: V_seed = var(1.0, 1.2) / 2 = 0.01 and V_event = var(1.0, 1.2, 1.1) = 0.01:

    >>> iv = replicate_interval([1.0, 1.2], [[0.9, 1.1], [1.1, 1.3], [1.0, 1.2]])
    >>> round(iv.estimate, 3), round(iv.lo, 3), round(iv.hi, 3), round(iv.seed_var, 6), round(iv.event_var, 6)
    (1.1, -0.186, 2.386, 0.01, 0.01)
    >>> rng = np.random.default_rng(1)
    >>> iv = replicate_interval([0.8, 1.1, 0.9], 1.0 + 0.1 * rng.normal(size=(200, 3)), transform="log")
    >>> bool(0 < iv.lo < iv.estimate < iv.hi)
    True
    """
    level = level_value(level)
    v = _values(values, "values")
    r = real_array(replicates, "replicates")
    if r.ndim == 1 and v.size == 1:
        r = r[:, None]
    if r.ndim != 2 or r.shape[1] != v.size or r.shape[0] < 2:
        raise ValueError(f"replicates: expected (B >= 2, {v.size}) (resamples first, one column per seed of values "
                         f"{v.shape}), got shape {r.shape}")
    if not np.isfinite(r).all():
        raise ValueError("replicates: contains NaN or infinite values")
    fwd, _, _, ok, text = _transform(transform)
    if not (ok(v) and ok(r)):
        raise ValueError(f"values and replicates must lie in the range ({text}) of transform {transform!r}")
    s = v.size
    mean = float(v.mean())
    seed_var = float(fwd(v).var(ddof=1)) / s if s > 1 else 0.0
    event_var = float(fwd(r).mean(axis=1).var(ddof=1))
    return _build(mean, float(fwd(mean)), seed_var, event_var, s, None, level, transform)


def seed_interval(values: ArrayLike, *, level: float = 0.95, transform: str = "identity") -> Interval:
    """Rule 3: the mean of per-seed ``values`` (S,) and its Student-t interval over seeds, for seeds
    that each drew their own test events (the event noise is inside each value):

        [lo, hi] = f^-1(f(vbar) -+ t_{(1+level)/2, S-1} sd_s(f(v_s)) / sqrt(S)),

    vbar = mean_s v_s, f the ``transform``, sd with ddof = 1. Values that are the same for every
    seed (an untrained model, given once per seed) are exact; one value is an error (one seed of a
    trained model says nothing about another).

    Reference: Student (1908), "The probable error of a mean", *Biometrika* 6, 1.

    Example: vbar = 2, sd = 1, t_{0.975, 2} = 4.303, half-width 4.303 / sqrt(3) = 2.484:

    >>> [round(x, 3) for x in seed_interval([1.0, 2.0, 3.0])]
    [2.0, -0.484, 4.484]
    """
    level = level_value(level)
    v = _values(values, "values")
    fwd, _, _, ok, text = _transform(transform)
    if not ok(v):
        raise ValueError(f"values must lie in the range ({text}) of transform {transform!r}")
    if v.size < 2:
        raise ValueError("values: one seed gives no interval over seeds (for a model that is not trained, give "
                         "its value once per seed)")
    mean = float(v.mean())
    if np.ptp(v) == 0:
        return _build(mean, float(fwd(mean)), 0.0, 0.0, v.size, None, level, transform)
    fv = fwd(v)
    return _build(mean, float(fwd(mean)), float(fv.var(ddof=1)) / v.size, 0.0, v.size, None, level, transform)


def exact_interval(value: float, *, level: float = 0.95) -> Interval:
    """A quantity computed without noise (a closed form, an exact enumeration, a bound checked on every
    case): the interval [v, v], no seed and no event variance. Its one-sided p-values are 0 or 1 (1/2 on
    the boundary itself), so a claim on it (:func:`posteval.metrics.claims.evaluate_claims`) is decided
    by the value alone, through the same rule as every other claim.

    Reference: Casella and Berger (2002), *Statistical Inference*, 2nd ed., 9.2.1 (the test from an
    interval; a degenerate interval decides every point but its own).

    >>> iv = exact_interval(0.25)
    >>> (iv.lo, iv.hi), iv.p_value(0.0, "greater"), iv.p_value(0.25, "greater")
    ((0.25, 0.25), 0.0, 0.5)
    """
    level = level_value(level)
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"value: expected a finite number, got {value!r}")
    return Interval(v, v, v, level, 0.0, 0.0, 1, None)


def paired_seed_interval(a: ArrayLike, b: ArrayLike, *, level: float = 0.95) -> Interval:
    """Rule 3 on the differences d_s = a_s - b_s paired seed by seed (a single value pairs with
    every seed): dbar -+ t_{(1+level)/2, S-1} sd_s(d_s) / sqrt(S).

    Reference: Student (1908), *Biometrika* 6, 1 (the t interval of a mean of paired differences).

    >>> [round(x, 3) for x in paired_seed_interval([1.0, 2.0, 3.0], [0.5, 1.0, 2.0])]  # d = 0.5, 1, 1
    [0.833, 0.116, 1.55]
    """
    a, b = _values(a, "a"), _values(b, "b")
    if a.size != b.size and 1 not in (a.size, b.size):
        raise ValueError(f"a and b must pair seed by seed: {a.size} and {b.size} values")
    return seed_interval(np.subtract(*np.broadcast_arrays(a, b)), level=level)


def required_seeds(seed_sd: float, event_sd: float, half_width: float, *, level: float = 0.95,
                   max_seeds: int = 1000) -> int | None:
    """Smallest number of seeds whose rule-1/2 half-width is at most ``half_width``, if the measured
    parts stay: the training sd of one seed ``seed_sd`` and the test-set sd ``event_sd`` (a fixed
    test set, which more seeds do not shrink). None when no number up to ``max_seeds`` reaches it:

        min { S >= 2 : sqrt(t_{(1+level)/2, S-1}^2 seed_sd^2 / S + z_{(1+level)/2}^2 event_sd^2) <= half_width }.

    Reference: the half-width of :func:`event_interval` (Student 1908, *Biometrika* 6, 1, for t;
    Bouthillier et al. 2021, MLSys 2021, for the two variances), solved for S by search.

    Example: t_6 / sqrt(7) = 0.925 <= 1 < t_5 / sqrt(6) = 1.050; with event_sd = 1 the event part
    alone (z = 1.96) exceeds 1 at any S:

    >>> required_seeds(1.0, 0.0, 1.0), required_seeds(1.0, 1.0, 1.0)
    (7, None)
    """
    for name, x in (("seed_sd", seed_sd), ("event_sd", event_sd)):
        if not np.isfinite(x) or x < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")
    if not np.isfinite(half_width) or half_width <= 0:
        raise ValueError(f"half_width must be a finite number > 0, got {half_width!r}")
    level = level_value(level)
    for s in range(2, positive_int(max_seeds, "max_seeds", 2) + 1):
        if _half_width(seed_sd**2 / s, event_sd**2, s, level) <= half_width:
            return s
    return None


def replicates_to_resolve(iv: Interval, boundary: float, margin: float) -> str:
    """How many seeds would resolve a claim about ``iv`` against ``boundary`` (equivalence within
    ``margin`` or a direction, whichever is nearer) if its mean and parts stayed (test set fixed).

    With the distance d = |estimate - boundary|: when margin - d > d the nearer verdict is
    equivalence, and the answer is max(:func:`required_seeds` for half-width margin - d,
    :data:`MIN_SEEDS_EQUIVALENCE`); otherwise it is :func:`required_seeds` for half-width d (the
    interval then just excludes the boundary). "a larger test set" when no number of seeds reaches it.

    Reference: equivalence as an interval inside the margin, Schuirmann (1987), *J. Pharmacokinet.
    Biopharm.* 15, 657 (two one-sided tests); a direction as an interval excluding the boundary.

    Example: seeds 0.9, 1.0, 1.1, 1.0, 1.0 (seed sd 0.071); against 0.9 the half-width must fall to
    0.1, within 0.05 of 1.0 it must fall to 0.05:

    >>> iv = seed_interval([0.9, 1.0, 1.1, 1.0, 1.0])
    >>> replicates_to_resolve(iv, 0.9, 0.0), replicates_to_resolve(iv, 1.0, 0.05)
    ('5 replicates', '11 replicates')
    """
    if iv.transform != "identity":
        raise ValueError("replicates_to_resolve: needs an identity-scale interval")
    distance = abs(iv.estimate - boundary)
    equivalence = margin - distance > distance  # the nearer verdict is "within the margin"
    need = required_seeds(iv.seed_sd, iv.event_sd, margin - distance if equivalence else distance, level=iv.level)
    if need is None:
        return "a larger test set"
    return f"{max(need, MIN_SEEDS_EQUIVALENCE) if equivalence else need} replicates"


@renamed_keywords(ci="level")
def events_to_resolve(effect: float, sd: float, *, power: float = 0.8, level: float = 0.95) -> int:
    """Events n at which a mean of per-event scores with sd ``sd`` and true mean ``effect`` has its
    two-sided ``level`` interval exclude zero with probability ``power`` (one seed, no seed part):
    n = ceil(((z_{(1+level)/2} + z_power) sd / |effect|)^2).

    Reference: the sample size of a two-sided one-sample z-test, Chow, Shao and Wang (2008), *Sample
    Size Calculations in Clinical Research*, 2nd ed., section 3.1 (one-sample design).

    Example: ((1.960 + 0.842) x 0.2 / 0.01)^2 = 3139.55:

    >>> events_to_resolve(-0.01, 0.2)
    3140
    """
    if not effect or not np.isfinite(effect):
        raise ValueError(f"effect: expected a finite non-zero mean, got {effect!r}")
    if not sd > 0:
        raise ValueError(f"sd: expected a positive standard deviation, got {sd!r}")
    z = special.ndtri(0.5 + level_value(level, "level") / 2) + special.ndtri(level_value(power, "power"))
    return int(np.ceil((z * sd / abs(effect)) ** 2))


def seeds_for_power(differences: ArrayLike, *, power: float = 0.8, level: float = 0.95,
                    max_seeds: int = 10_000) -> int | None:
    """Seeds a paired t-test needs to find the mean of per-seed ``differences`` with ``power`` (two-sided
    at ``level``, before any multiplicity adjustment), if their mean and sd stayed: the smallest n with
    t_{(1+level)/2, n-1} + t_{power, n-1} <= |mean| sqrt(n) / sd. None for a zero mean or beyond ``max_seeds``
    (2 when the differences do not vary).

    Reference: the sample-size formula of a one-sample (here paired) test, Chow, Shao and Wang (2008),
    *Sample Size Calculations in Clinical Research*, 2nd ed., section 3.1, with Student's (1908) t
    quantiles at n - 1 degrees of freedom in place of the normal ones, solved for n by search.

    Example: mean 0.2, sd 0.158; at n = 8, t_7(0.975) + t_7(0.8) = 3.261 <= 0.2 sqrt(8) / 0.158 = 3.578
    (at n = 7: 3.353 > 3.347):

    >>> seeds_for_power([0.1, 0.3, 0.2, 0.0, 0.4])
    8
    """
    d = np.asarray(differences, float)
    if d.ndim != 1 or d.size < 2 or not np.isfinite(d).all():
        raise ValueError(f"differences: expected at least two finite per-seed values, got shape {d.shape}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    mean, sd = abs(float(d.mean())), float(d.std(ddof=1))
    if mean == 0:
        return None
    if sd == 0:
        return 2
    for n in range(2, max_seeds + 1):
        if stats.t.ppf(0.5 + level / 2, n - 1) + stats.t.ppf(power, n - 1) <= mean * np.sqrt(n) / sd:
            return n
    return None


def combine_estimates(f: Callable[..., np.ndarray],
                      *estimates: tuple[ArrayLike, ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
    """A function of several rule-2 estimates ``(values (S,), replicates (B, S))``, applied per seed
    and per event resample (so that it stays paired), e.g. a ratio of two models' chi^2:

        values = f(v^(1)_s, ..., v^(k)_s),   replicates = f(r^(1)_bs, ..., r^(k)_bs),

    ready for :func:`replicate_interval`.

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6: a bootstrap
    replicate of a statistic is the statistic recomputed on the resample, here f of the estimates
    computed on the same resampled events.

    >>> chi2_a = ([2.0, 4.0], [[2.0, 4.0], [2.2, 3.6]])   # (values (S,), replicates (B, S)) of model a
    >>> chi2_b = ([1.0, 2.0], [[1.0, 2.0], [1.1, 1.8]])
    >>> v, r = combine_estimates(np.divide, chi2_a, chi2_b)
    >>> v.tolist(), r.tolist()
    ([2.0, 2.0], [[2.0, 2.0], [2.0, 2.0]])
    >>> v, r = combine_estimates(np.divide, (np.array([2.0]), np.full((3, 1), 2.0)), (np.array([1.0]), np.ones((3, 1))))
    >>> float(v[0]), r.shape
    (2.0, (3, 1))
    """
    if not estimates:
        raise ValueError("combine_estimates needs at least one (values, replicates) estimate")
    return f(*(np.asarray(v, float) for v, _ in estimates)), f(*(np.asarray(r, float) for _, r in estimates))


# ---------------------------------------------------------------------------------------------
# bootstrap replicates read directly: percentile intervals and the bootstrap p-value
# ---------------------------------------------------------------------------------------------
def percentile_bounds(replicates: ArrayLike, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed percentile bounds of ``replicates`` along axis 0, unchecked (NaN propagates, for
    tables with columns that were not computed): (Q*((1 - level) / 2), Q*((1 + level) / 2)), Q* the
    linearly interpolated quantile. :func:`percentile_interval` is the checked form.

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (the percentile
    interval).

    >>> lo, hi = percentile_bounds(np.arange(101.0), 0.9)
    >>> round(float(lo), 9), round(float(hi), 9)
    (5.0, 95.0)
    """
    a = (1 - level) / 2
    lo, hi = np.quantile(np.asarray(replicates, float), [a, 1 - a], axis=0)
    return lo, hi


@renamed_keywords(ci="level")
def percentile_interval(replicates: ArrayLike, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed percentile interval of bootstrap replicates along axis 0 (at least 2, finite):
    (Q*((1 - level) / 2), Q*((1 + level) / 2)), Q* the (linearly interpolated) quantile of the replicates.

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (the percentile
    interval).

    Example
    -------
    >>> [round(float(v), 3) for v in percentile_interval(np.arange(101.0), level=0.9)]
    [5.0, 95.0]
    """
    return percentile_bounds(replicate_array(replicates), level_value(level))


def bootstrap_pvalue(replicates: ArrayLike, null: float = 0.0) -> np.ndarray | float:
    """Two-sided bootstrap p-value of `null` for a statistic with these replicates (axis 0):
    2 min(#{rep <= null} + 1, #{rep >= null} + 1) / (n_resamples + 1), capped at 1. It is below
    1 - level exactly when `null` lies outside the percentile interval (up to the +1). The
    replicates must be at least 2 and finite.

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 16 (bootstrap
    tests); the (1 + b) / (1 + B) form of a Monte Carlo p-value, Phipson and Smyth (2010),
    *Stat. Appl. Genet. Mol. Biol.* 9.

    Example: replicates 1..99, none at or below 0, so p = 2 (0 + 1) / 100:

    >>> bootstrap_pvalue(np.arange(1.0, 100.0))
    0.02
    >>> bootstrap_pvalue([0.5, 1.0, 1.5, 2.0], null=0.0)
    0.4
    >>> bootstrap_pvalue([0.5, 1.0], null="0")
    Traceback (most recent call last):
    ...
    ValueError: null: expected a finite number, got '0'
    """
    rep = replicate_array(replicates)
    if isinstance(null, (bool, np.bool_)) or not isinstance(null, (int, float, np.integer, np.floating)) \
            or not np.isfinite(null):
        raise ValueError(f"null: expected a finite number, got {null!r}")
    null = float(null)
    b = rep.shape[0]
    low = monte_carlo_pvalue(np.sum(rep <= null, axis=0), b)
    high = monte_carlo_pvalue(np.sum(rep >= null, axis=0), b)
    out = np.minimum(1.0, 2.0 * np.minimum(low, high))
    return float(out) if np.ndim(out) == 0 else out


def monte_carlo_pvalue(n_at_least_as_extreme: int | ArrayLike, n_resamples: int) -> float | np.ndarray:
    """Monte Carlo (permutation, exchange, simulation or bootstrap) p-value of an observed statistic
    from the number k of the ``n_resamples`` = B statistics drawn under the null that are at least as
    extreme as it (the observed one counted among the draws):

        p = (1 + k) / (1 + B),   in [1 / (1 + B), 1].

    It is never 0 and is exact (P(p <= u) <= u under the null) for any B; k / B is neither.
    ``n_at_least_as_extreme``: an integer count or an array of counts (0 <= k <= B), a float
    returned for a scalar count, an array for an array.

    Reference: Davison and Hinkley (1997), *Bootstrap Methods and their Application*, eq. (4.11);
    Phipson and Smyth (2010), "Permutation p-values should never be zero", *Stat. Appl. Genet.
    Mol. Biol.* 9, art. 39.

    Example: 999 simulations, 24 of them at least as extreme as the observed statistic, and none:

    >>> monte_carlo_pvalue(24, 999)
    0.025
    >>> monte_carlo_pvalue(0, 999), monte_carlo_pvalue(np.array([0, 999]), 999).tolist()
    (0.001, [0.001, 1.0])
    """
    b = positive_int(n_resamples, "n_resamples")
    k = np.asarray(n_at_least_as_extreme)
    if k.dtype.kind not in "iu" or k.size == 0 or np.any(k < 0) or np.any(k > b):
        raise ValueError(f"n_at_least_as_extreme: expected integer counts in 0..n_resamples = {b}, got "
                         f"{n_at_least_as_extreme!r}")
    out = (k + 1) / (b + 1)
    return float(out) if out.ndim == 0 else out


def chi2_pvalue(stat: float, ndf: int) -> float:
    """Asymptotic p-value of a chi-square statistic with ``ndf`` degrees of freedom, the upper tail
    P(X >= stat) for X ~ chi-square(ndf):

        p = Q(ndf / 2, stat / 2)   (the regularised upper incomplete gamma function),

    as ``scipy.stats.chi2.sf``; ``stat`` a finite number >= 0, ``ndf`` an integer >= 1.

    Reference: Pearson (1900), *Phil. Mag.* 50, 157 (the chi-square test); Abramowitz and Stegun
    (1964), *Handbook of Mathematical Functions*, 26.4.2 (the chi-square tail).

    Example: two degrees of freedom have the tail exp(-stat / 2):

    >>> round(chi2_pvalue(2.0, 2), 6), round(float(np.exp(-1.0)), 6)
    (0.367879, 0.367879)
    >>> chi2_pvalue(0.0, 5)
    1.0
    """
    ndf = positive_int(ndf, "ndf")
    x = np.asarray(stat)
    if isinstance(stat, (bool, np.bool_)) or x.ndim != 0 or x.dtype.kind not in "iuf" or not np.isfinite(x) or x < 0:
        raise ValueError(f"stat: expected a finite chi-square statistic >= 0, got {stat!r}")
    return float(stats.chi2.sf(stat, ndf))


def _probabilities(p) -> np.ndarray:
    """``p`` as a non-empty float array of probabilities in [0, 1]; ValueError naming ``p`` otherwise."""
    q = real_array(p, "p")
    if q.size == 0 or not np.all((q >= 0) & (q <= 1)):
        raise ValueError(f"p: expected probabilities in [0, 1], got {p!r}")
    return q


def binomial_tail_pvalue(count: int | ArrayLike, n: int, p: float | ArrayLike) -> float | np.ndarray:
    """Two-sided equal-tail p-value of a binomial count k of n trials with success probability p,
    twice the smaller tail, capped at 1 (elementwise; ``count`` and ``p`` broadcast):

        p-value = min(1, 2 min(P(X <= k), P(X >= k))),   X ~ Binomial(n, p).

    Reference: Agresti (2013), *Categorical Data Analysis*, 3rd ed., section 1.4 (the doubled tail of an
    exact binomial test); Säilynoja, Bürkner and Vehtari (2022), *Stat. Comput.* 32, 32 (the pointwise
    tail probabilities of an ECDF of uniform ranks).

    Example: 0 successes in 10 fair trials, and 5:

    >>> binomial_tail_pvalue(0, 10, 0.5), binomial_tail_pvalue(5, 10, 0.5)
    (0.001953125, 1.0)
    """
    n = positive_int(n, "n")
    k = np.asarray(count)
    if k.dtype.kind not in "iu" or k.size == 0 or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"count: expected integer counts in 0..n = {n}, got {count!r}")
    q = _probabilities(p)
    out = np.minimum(2 * np.minimum(stats.binom.cdf(k, n, q), stats.binom.sf(k - 1, n, q)), 1.0)
    return float(out) if out.ndim == 0 else out


def binomial_band(n: int, p: float | ArrayLike, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed range of a binomial fraction: the ``alpha / 2`` and ``1 - alpha / 2`` quantiles of
    X / n, X ~ Binomial(n, p) (elementwise in ``p``),

        lo = F^{-1}(alpha / 2) / n,   hi = F^{-1}(1 - alpha / 2) / n,   F the Binomial(n, p) CDF:

    where a fraction of n events lands with probability at least 1 - alpha (the band of a
    calibrated forecast's coverage, or of an ECDF of uniform ranks at a simultaneous ``alpha``).

    Reference: Säilynoja, Bürkner and Vehtari (2022), *Stat. Comput.* 32, 32 (pointwise binomial bands
    of the ECDF of uniform ranks, and their simultaneous level).

    Example: 100 events at p = 0.5 and 0.9:

    >>> [a.tolist() for a in binomial_band(100, [0.5, 0.9], 0.05)]
    [[0.4, 0.84], [0.6, 0.95]]
    """
    n = positive_int(n, "n")
    q = _probabilities(p)
    a = float(alpha)
    if not 0.0 < a <= 1.0:
        raise ValueError(f"alpha: expected a probability in (0, 1], got {alpha!r}")
    return stats.binom.ppf(a / 2, n, q) / n, stats.binom.ppf(1 - a / 2, n, q) / n


def normal_half_width(variance: float | ArrayLike, n: int, level: float = 0.95) -> np.ndarray:
    """Half-width of the normal interval of a mean of n values with sample variance ``variance``
    (elementwise; a negative variance from rounding counts as 0):

        h = z_{(1 + level) / 2} sqrt(max(variance, 0) / n).

    Reference: the normal (Wald) interval of a mean, e.g. Wasserman (2004), *All of Statistics*, eq. 6.9.

    Example:

    >>> float(round(normal_half_width(4.0, 100), 4))
    0.392
    """
    n = positive_int(n, "n")
    level = level_value(level)
    return stats.norm.ppf(0.5 + level / 2) * np.sqrt(np.maximum(np.asarray(variance, dtype=float), 0.0) / n)


# ---------------------------------------------------------------------------------------------
# what a chapter measured, and the intervals of its values and differences
# ---------------------------------------------------------------------------------------------
@dataclass
class Measurements:
    """Per model and metric what a chapter measured, and the interval of any value or difference.

    Parameters
    ----------
    event_scores : {metric: {model: (n,) or (n, S) per-event scores}} (rule 1)
    replicated : {metric: {model: (values (S,), replicates (B, S))}} (rule 2; the same resampled
        events for every model and seed, so that differences stay paired)
    seed_values : {metric: {model: (S,)}} (rule 3: each seed its own test events)
    transforms : {metric: transform} for the values of positive or fractional statistics
    untrained : models measured once, paired with every seed of the others

    ``value(metric, a)`` is the interval of metric(a); ``difference(metric, a, b)`` that of
    metric(a) - metric(b), paired (rule of the metric's kind, identity scale).

    >>> m = Measurements(event_scores={"crps": {"a": np.arange(10.0), "b": np.arange(10.0) + 1}})
    >>> m.difference("crps", "a", "b").estimate
    -1.0
    """

    event_scores: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    replicated: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    seed_values: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    transforms: Mapping[str, str] = field(default_factory=dict)
    level: float = 0.95

    def __post_init__(self) -> None:
        self.level = level_value(self.level)
        kinds = [set(self.event_scores), set(self.replicated), set(self.seed_values)]
        both = (kinds[0] & kinds[1]) | (kinds[0] & kinds[2]) | (kinds[1] & kinds[2])
        if both:
            raise ValueError(f"metrics measured in two ways: {sorted(both)}")
        for metric, t in self.transforms.items():
            _transform(t)

    @property
    def metrics(self) -> list[str]:
        return [*self.event_scores, *self.replicated, *self.seed_values]

    def models(self, metric: str) -> list[str]:
        return list(self._table(metric))

    def _table(self, metric: str) -> Mapping:
        for table in (self.event_scores, self.replicated, self.seed_values):
            if metric in table:
                return table[metric]
        raise ValueError(f"metric {metric!r}: not measured (measured: {self.metrics})")

    def _entry(self, metric: str, model: str):
        table = self._table(metric)
        if model not in table:
            raise ValueError(f"model {model!r}: no {metric!r} measured (models: {list(table)})")
        return table[model]

    def value(self, metric: str, model: str, *, level: float | None = None) -> Interval:
        """Interval of ``metric(model)`` (on the metric's transform scale, mapped back)."""
        level = self.level if level is None else level
        t = self.transforms.get(metric, "identity")
        e = self._entry(metric, model)
        if metric in self.event_scores:
            return event_interval(e, level=level, transform=t)
        if metric in self.replicated:
            return replicate_interval(*e, level=level, transform=t)
        return seed_interval(e, level=level, transform=t)

    def difference(self, metric: str, a: str, b: str, *, level: float | None = None) -> Interval:
        """Interval of ``metric(a) - metric(b)``, paired over seeds and events."""
        level = self.level if level is None else level
        ea, eb = self._entry(metric, a), self._entry(metric, b)
        if metric in self.event_scores:
            return paired_event_interval(ea, eb, level=level)
        if metric in self.replicated:
            (va, ra), (vb, rb) = ea, eb
            va, vb = np.broadcast_arrays(_values(va, "values"), _values(vb, "values"))
            ra, rb = np.broadcast_arrays(np.asarray(ra, float).reshape(len(ra), -1),
                                         np.asarray(rb, float).reshape(len(rb), -1))
            return replicate_interval(va - vb, ra - rb, level=level)
        return paired_seed_interval(ea, eb, level=level)

    def estimate(self, metric: str, model: str) -> float:
        """The point value of ``metric(model)`` (the mean over events and seeds, or over seeds)."""
        e = self._entry(metric, model)
        return float(np.mean(e[0] if metric in self.replicated else e))

    @classmethod
    def from_replicated_table(cls, table: pd.DataFrame, replicates: Mapping[str, np.ndarray], rows: Callable,
                              models: Sequence[str], *, transforms: Mapping[str, str] | None = None,
                              derived: Mapping[str, Callable] | None = None, level: float = 0.95) -> Measurements:
        """Measurements from a replicated protocol table: ``table`` indexed by row name, with
        ``replicates[metric]`` (B, rows) event-bootstrap values in the table's row order and
        ``rows(model)`` the model's row names (one per seed; one row for an untrained model).
        ``derived``: {name: f(measured, model)} returning (values, replicates) of a metric computed
        from the others per seed and resample (e.g. a ratio to a reference, with
        :func:`combine_estimates` on ``measured.replicated[metric][model]``)."""
        position = {name: i for i, name in enumerate(table.index)}
        out: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        for metric, reps in replicates.items():
            reps = np.asarray(reps, float)
            if metric not in table.columns or reps.ndim != 2 or reps.shape[1] != len(table):
                raise ValueError(f"replicates[{metric!r}]: expected a table column and (B, {len(table)}) values, got "
                                 f"shape {reps.shape}")
            out[metric] = {}
            for model in models:
                names = list(rows(model))
                missing = [r for r in names if r not in position]
                if missing:
                    raise ValueError(f"model {model!r}: no rows {missing} in the table")
                out[metric][model] = (table.loc[names, metric].to_numpy(float), reps[:, [position[r] for r in names]])
        measured = cls(replicated=out, transforms=dict(transforms or {}), level=level)
        for name, f in (derived or {}).items():
            out[name] = {model: f(measured, model) for model in models}
        return measured
