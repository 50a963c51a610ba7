"""The registered basin test: counts, the exact McNemar null (calibrated by simulation), the words decided by
the book's one rule (Holm over the pairs' words), the pairs as claims to record, bad input."""

import doctest

import numpy as np
import pandas as pd
import pytest

from posteval.metrics.verdicts import decide, holm_words
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


def test_the_words_come_from_the_one_rule():
    """Each pair has one word, "yes", whose p is the exact McNemar p; Holm over the family's words; the word
    is said below 0.05, else "not resolved" (never "no": not rejecting is no equivalence)."""
    clear = _final([0.9] * 12 + [0.5] * 3, [0.5] * 15)
    mixed = pd.concat([clear, _final([0.9] * 15, [0.9] * 14 + [0.5]).assign(
        condition=lambda f: f["condition"].map({"a": "c", "b": "d"}))], ignore_index=True)
    t = bt.basin_tests(mixed, [("a", "b"), ("c", "d")])
    adjusted = holm_words([{"yes": p} for p in t["p"]])
    assert t["adjusted p"].tolist() == [a["yes"] for a in adjusted]
    assert t["word"].tolist() == [decide(a) for a in adjusted] == ["yes", "not resolved"]
    assert t.loc["a vs b", "adjusted p"] == pytest.approx(2 * t.loc["a vs b", "p"])  # two words in the family


def test_the_pairs_as_claims_to_record():
    from posteval.book import recorded
    from posteval.claims import record_table
    t = bt.basin_tests(_final([0.9] * 12 + [0.5] * 3, [0.5] * 15), [("a", "b")])
    c = bt.basin_claims(t, [("a", "b"), ("a", "z")], names={"a": "A"}, record="power run")
    assert list(c.index) == ["a_vs_b", "a_vs_z"]
    assert c.loc["a_vs_b", "word"] == "yes" and c.loc["a_vs_b", "p_holm"] == t.loc["a vs b", "adjusted p"]
    assert c.loc["a_vs_b", "sentence"].startswith("this book: A and b")
    assert (c.loc["a_vs_z", "word"], c.loc["a_vs_z", "n_seeds"]) == ("not testable", 0)
    assert (c["family"] == bt.FAMILY).all() and np.isnan(c["lo"]).all()
    record_table(c, prefix="test_bt.")
    rec = recorded()
    assert rec["claim.test_bt.a_vs_b"] == "yes" and rec["claim_family.test_bt.a_vs_b"] == "basins"
    assert rec["claim_seeds.test_bt.a_vs_b"] == 15 and rec["claim_reason.test_bt.a_vs_z"] == "not run on a common seed"


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
