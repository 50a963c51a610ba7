"""Intervals that hold both the training seed's and the test events' noise, and verdicts built on them.

A metric that is a mean over test events (CRPS, squared error, an indicator) is measured for S
training seeds on the same n test events: ``scores`` of shape ``(S, n)``. Its grand mean has two
sources of noise: the seed (another training run gives another model) and the events (another
test sample gives other events). :func:`seed_event_interval` adds the two variances,

    V = s_seed^2 / S + s_event^2 / n,

where ``s_seed^2`` is the variance of the S per-seed means and ``s_event^2`` the variance over
events of the per-event score averaged over seeds. The half-width is the rule of
:func:`posteval.metrics.seeds.seed_replicate_interval`, ``sqrt(t^2 s_seed^2 / S + z^2 s_event^2 / n)`` with
``t`` the Student quantile for S - 1 degrees of freedom and ``z`` the normal one (Welch-Satterthwaite
degrees of freedom under-cover at three seeds: see ``tests/test_seeds.py``). With one seed only the
event term remains. The seed term also holds a little event noise (each seed's mean is measured on
finite events), which makes the interval slightly conservative, never too narrow.

Verdict words: :func:`all_of` combines several verdicts of one claim ("yes" only when every part is
"yes", "no" as soon as one part is "no"); :func:`best_of` names the model with the lowest metric
and says whether its lead over the runner-up is resolved; :func:`beyond_margin` says whether an
effect is larger in size than a margin (``|effect| > m``: the interval lies outside ``[-m, m]``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import stats

from .seeds import _half_width
from .verdicts import VERDICTS, t_interval, verdict

__all__ = ["stack_seeds", "seed_event_interval", "paired_seed_event_interval", "seed_t_interval", "beyond_margin", "all_of",
           "best_of", "NOT_RESOLVED"]

NOT_RESOLVED = "not resolved"


def _scores(scores, name: str) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if s.ndim == 1:
        s = s[None, :]
    if s.ndim != 2:
        raise ValueError(f"{name} must have shape (seeds, events), got {s.shape}")
    if s.shape[1] < 2:
        raise ValueError(f"{name} needs at least 2 events, got {s.shape[1]}")
    if not np.isfinite(s).all():
        raise ValueError(f"{name} contains NaN or inf")
    return s


def stack_seeds(per_seed) -> np.ndarray:
    """Per-event scores of several seeds as one ``(seeds, events)`` array; a single row when every
    seed gave the same scores (a model that is not trained, such as a fixed baseline), so that it
    is not credited with seed noise it does not have."""
    rows = np.stack([np.asarray(r, dtype=float) for r in per_seed])
    if rows.ndim != 2:
        raise ValueError(f"per_seed: expected a list of 1-D per-event score arrays, got shape {rows.shape}")
    return rows[:1] if all(np.array_equal(rows[0], r) for r in rows[1:]) else rows


def seed_event_interval(scores, *, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of per-event ``scores`` (seeds, events) and its interval over seeds and events: ``(mean, lo, hi)``.

    A 1-D array is one seed.
    """
    s = _scores(scores, "scores")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    n_seeds, n = s.shape
    v_event = s.mean(axis=0).var(ddof=1) / n
    v_seed = s.mean(axis=1).var(ddof=1) / n_seeds if n_seeds > 1 else 0.0
    mean = float(s.mean())
    if v_seed + v_event == 0:
        return mean, mean, mean
    if n_seeds > 1:
        half = _half_width(v_seed, v_event, n_seeds, level)
    else:
        half = float(stats.norm.ppf(0.5 + level / 2) * np.sqrt(v_event))
    return mean, mean - half, mean + half


def paired_seed_event_interval(a, b, *, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``a - b`` (same seeds, same events) and its interval over seeds and events."""
    a = _scores(a, "a")
    b = _scores(b, "b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b must score the same events: {a.shape[1]} and {b.shape[1]}")
    if a.shape[0] != b.shape[0]:
        # a seed-independent model (one row) is compared with every seed of the other
        if 1 not in (a.shape[0], b.shape[0]):
            raise ValueError(f"a and b must pair seed by seed: {a.shape[0]} and {b.shape[0]} seeds")
        a, b = np.broadcast_arrays(a, b)
    return seed_event_interval(a - b, level=level)


def seed_t_interval(values, *, level: float = 0.95) -> tuple[float, float, float]:
    """Student-t interval of the mean over seeds; a seed-independent value (all equal, or one) is exact."""
    v = np.atleast_1d(np.asarray(values, dtype=float))
    if v.ndim != 1 or not np.isfinite(v).all():
        raise ValueError(f"values must be a finite 1-D array (one value per seed), got shape {v.shape}")
    if np.ptp(v) == 0:
        return float(v[0]), float(v[0]), float(v[0])
    return t_interval(v, level=level)


def beyond_margin(lo: float, hi: float, margin: float) -> str:
    """"yes" if the interval ``[lo, hi]`` lies outside ``[-margin, margin]``, "no" if inside, else "not resolved"."""
    lo, hi, margin = float(lo), float(hi), float(margin)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise ValueError(f"need finite lo <= hi, got {lo!r}, {hi!r}")
    if not np.isfinite(margin) or margin < 0:
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
    if lo > margin or hi < -margin:
        return "yes"
    if -margin <= lo and hi <= margin:
        return "no"
    return NOT_RESOLVED


def all_of(*verdicts: str) -> str:
    """One verdict of a claim made of several parts: "yes" if all are, "no" if any is, else "not resolved"."""
    if not verdicts:
        raise ValueError("all_of needs at least one verdict")
    for v in verdicts:
        if v not in VERDICTS:
            raise ValueError(f"verdicts must be among {VERDICTS}, got {v!r}")
    if "no" in verdicts:
        return "no"
    return "yes" if all(v == "yes" for v in verdicts) else NOT_RESOLVED


def best_of(values: Mapping[str, object], *, paired: str = "seed_event", level: float = 0.95) -> tuple[str, str, str]:
    """The model with the lowest mean metric, the runner-up, and whether the lead is resolved.

    Parameters
    ----------
    values : mapping model -> per-seed values (S,) (``paired="seed"``: t interval of the paired
        difference over seeds) or per-event scores (S, n) (``paired="seed_event"``). A model with
        one row (seed-independent) is paired with every seed of the other.
    Returns
    -------
    (leader, runner_up, verdict) where verdict answers "the leader is lower than the runner-up".
    """
    if len(values) < 2:
        raise ValueError(f"best_of needs at least two models, got {len(values)}")
    means = {k: float(np.mean(v)) for k, v in values.items()}
    order = sorted(means, key=means.get)
    leader, runner = order[0], order[1]
    if paired == "seed_event":
        _, lo, hi = paired_seed_event_interval(values[leader], values[runner], level=level)
    elif paired == "seed":
        a, b = (np.atleast_1d(np.asarray(values[k], dtype=float)) for k in (leader, runner))
        _, lo, hi = seed_t_interval(np.subtract(*np.broadcast_arrays(a, b)), level=level)
    else:
        raise ValueError(f"paired must be 'seed' or 'seed_event', got {paired!r}")
    return leader, runner, verdict(lo, hi, direction=-1)
