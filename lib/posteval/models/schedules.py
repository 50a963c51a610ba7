"""Learning-rate schedules for `fit` (``lr_schedule(step) -> factor`` of the initial rate).

`warmup_cosine`: linear warm-up from ~0 to 1 over ``warmup_steps``, then cosine annealing from 1
to ``min_factor`` over ``cycle_steps``, restarted every cycle (ν²-Flows trains with warm-up and a
cyclic cosine schedule, 50 epochs per cycle). Cyclic restarts keep early stopping on the
validation loss meaningful: the rate never stays at its floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

__all__ = ["warmup_cosine", "schedule_from_epochs"]


def _count(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


@dataclass(frozen=True)
class WarmupCosine:
    """Factor of the learning rate at optimizer step ``step`` (0-based): linear warm-up over
    ``warmup_steps``, then a cosine from 1 down to ``min_factor`` repeated every ``cycle_steps``."""

    warmup_steps: int
    cycle_steps: int
    min_factor: float = 0.0

    def __call__(self, step: int) -> float:
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        phase = ((step - self.warmup_steps) % self.cycle_steps) / self.cycle_steps
        return self.min_factor + (1 - self.min_factor) * 0.5 * (1 + math.cos(math.pi * phase))


def warmup_cosine(warmup_steps: int, cycle_steps: int, min_factor: float = 0.0) -> Callable[[int], float]:
    """Factor of the learning rate at optimizer step ``step`` (0-based): warm-up, then cyclic cosine.

    The schedule is picklable, so models trained in worker processes can use it."""
    warmup_steps = _count(warmup_steps, "warmup_steps", 0)
    cycle_steps = _count(cycle_steps, "cycle_steps", 1)
    if isinstance(min_factor, bool) or not isinstance(min_factor, (int, float)) or not 0 <= min_factor < 1:
        raise ValueError(f"min_factor must be in [0, 1), got {min_factor!r}")
    return WarmupCosine(warmup_steps, cycle_steps, float(min_factor))


def schedule_from_epochs(spec: dict | None, steps_per_epoch: int) -> Callable[[int], float] | None:
    """`warmup_cosine` from a chapter parameter ``{"warmup_epochs", "cycle_epochs", "min_factor"}`` (None: none)."""
    if spec is None:
        return None
    unknown = set(spec) - {"warmup_epochs", "cycle_epochs", "min_factor"}
    if unknown:
        raise ValueError(f"unknown schedule keys {sorted(unknown)}; known: warmup_epochs, cycle_epochs, min_factor")
    steps_per_epoch = _count(steps_per_epoch, "steps_per_epoch", 1)
    return warmup_cosine(_count(spec.get("warmup_epochs", 0), "warmup_epochs", 0) * steps_per_epoch,
                         _count(spec.get("cycle_epochs", 1), "cycle_epochs", 1) * steps_per_epoch,
                         spec.get("min_factor", 0.0))
