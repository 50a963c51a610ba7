"""posteval.models.schedules: the learning-rate schedules (the flow's tail bound: tests/models/test_flow.py)."""

import math

import pytest

from posteval.models.schedules import schedule_from_epochs, warmup_cosine


def test_warmup_then_cosine_cycles():
    f = warmup_cosine(4, 10, min_factor=0.1)
    assert [f(s) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert f(4) == pytest.approx(1.0)
    assert f(9) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi / 2)))
    assert f(13) < f(12) < f(11)
    assert f(14) == pytest.approx(1.0)  # restart of the next cycle
    assert min(f(s) for s in range(4, 40)) >= 0.1


def test_schedule_from_epochs_counts_steps():
    f = schedule_from_epochs({"warmup_epochs": 1, "cycle_epochs": 2}, steps_per_epoch=5)
    assert f(4) == 1.0 and f(5) == 1.0 and f(15) == pytest.approx(1.0)
    assert schedule_from_epochs(None, 5) is None
    with pytest.raises(ValueError, match="unknown schedule keys"):
        schedule_from_epochs({"warmup": 1}, 5)
    with pytest.raises(ValueError, match="cycle_steps"):
        warmup_cosine(0, 0)
