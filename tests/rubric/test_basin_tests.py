"""The registered basin test: counts, the exact McNemar null (calibrated by simulation), bad input."""

import doctest

import numpy as np
import pandas as pd
import pytest

from posteval.rubric import basin_tests as bt


def _final(a, b):
    n = len(a)
    return pd.DataFrame({"seed": list(range(n)) * 2, "condition": ["a"] * n + ["b"] * n,
                         "transfer_indep": list(a) + list(b)})


def test_counts_and_a_clear_effect():
    a = [0.9] * 12 + [0.5] * 3
    b = [0.5] * 15
    t = bt.basin_tests(_final(a, b), [("a", "b")])
    row = t.loc["a vs b"]
    assert (row["seeds"], row["a upper"], row["b upper"], row["a only"], row["b only"]) == (15, 12, 0, 12, 0)
    assert row["p"] == pytest.approx(2 * 0.5**12)


def test_the_null_is_calibrated():
    """Basins independent of the condition given the seed (the seed's own tendency): the exact test
    rejects at 5 % no more often than 5 % (it is conservative)."""
    rng = np.random.default_rng(0)
    rejected, repeats = 0, 400
    for _ in range(repeats):
        tendency = rng.uniform(0, 1, 40)
        a = np.where(rng.uniform(size=40) < tendency, 0.9, 0.5)
        b = np.where(rng.uniform(size=40) < tendency, 0.9, 0.5)
        rejected += bt.basin_tests(_final(a, b), [("a", "b")]).loc["a vs b", "p"] < 0.05
    assert rejected / repeats <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / repeats)


def test_seeds_restrict_and_missing_conditions_are_left_out():
    t = bt.basin_tests(_final([0.9, 0.9, 0.5], [0.5, 0.5, 0.5]), [("a", "b"), ("a", "nope")], seeds=[0, 2])
    assert list(t.index) == ["a vs b"] and t.loc["a vs b", "seeds"] == 2


def test_cold_start_association():
    up = pd.Series([1, 1, 1, 0, 0, 0], dtype=float)
    f1 = pd.Series([0.9, 0.8, 0.7, 0.3, 0.2, 0.1])
    out = bt.cold_start_association(up, f1)
    assert out["rank_biserial"] == pytest.approx(1.0) and out["n_upper"] == 3
    assert np.isnan(bt.cold_start_association(up * 0, f1)["p"])


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="transfer_indep"):
        bt.upper_basin(pd.DataFrame({"seed": [0], "condition": ["a"]}))


def test_docstring_example():
    assert doctest.testmod(bt).failed == 0
