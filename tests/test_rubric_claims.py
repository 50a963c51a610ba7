"""Claims of chapter 4 from per-seed results: pairing by seed, cold start, fallback, missing conditions."""

import numpy as np
import pandas as pd
import pytest

from posteval.rubric.claims import (COLD, Claim, claim_numbers, claims_table, combine_tables, evaluate_claim,
                               interval_numbers)


def frames(effect, seeds=(0, 1, 2, 3), noise=0.001):
    rng = np.random.default_rng(0)
    base = rng.normal(0.6, 0.1, len(seeds))  # a large per-seed offset shared by the conditions of a seed
    rows = []
    for s, b in zip(seeds, base):
        rows.append({"seed": s, "condition": "x", "transfer": b, "step": 8})
        rows.append({"seed": s, "condition": "y", "transfer": b + effect + rng.normal(0, noise), "step": 8})
    final = pd.DataFrame(rows)
    history = pd.DataFrame([{"seed": s, "condition": "x", "step": 0, "test_transfer": b - 0.1}
                            for s, b in zip(seeds, base)])
    return final, history


def test_paired_claim_resolves_a_small_effect_under_large_seed_spread():
    final, hist = frames(0.05)
    out = evaluate_claim(Claim("y", "x", "transfer", 1, ""), final, hist)
    assert out["verdict"] == "yes" and out["n_seeds"] == 4
    assert out["effect"] == pytest.approx(0.05, abs=0.002)
    assert evaluate_claim(Claim("y", "x", "transfer", -1, ""), final, hist)["verdict"] == "no"
    assert evaluate_claim(Claim("x", COLD, "transfer", 1, ""), final, hist)["effect"] == pytest.approx(0.1)


def test_within_margin_is_no_and_missing_is_not_resolved():
    final, hist = frames(0.0)
    assert evaluate_claim(Claim("y", "x", "transfer", 1, ""), final, hist, margin=0.02)["verdict"] == "no"
    assert evaluate_claim(Claim("y", "x", "transfer", 1, ""), final, hist, margin=0.0)["verdict"] == "not resolved"
    gone = evaluate_claim(Claim("z", "x", "transfer", 1, ""), final, hist)
    assert gone["verdict"] == "not resolved" and not gone["measured"] and np.isnan(gone["effect"])


def test_fallback_metric_only_where_declared():
    final, hist = frames(0.05)
    with_fb = evaluate_claim(Claim("y", "x", "transfer_indep", 1, "", fallback="transfer"), final, hist)
    assert with_fb["metric"] == "transfer" and with_fb["verdict"] == "yes"
    without = evaluate_claim(Claim("y", "x", "transfer_indep", 1, ""), final, hist)
    assert without["verdict"] == "not resolved"


def test_numbers_keys():
    final, hist = frames(0.05)
    table = claims_table(final, hist, {"a": Claim("y", "x", "transfer", 1, ""), "z": Claim("q", "x", "transfer", 1, "")})
    nums = claim_numbers(table)
    assert nums["claim.a"] == "yes" and nums["claim.z"] == "not resolved"
    assert nums["claim.a.effect_lo"] < nums["claim.a.effect"] < nums["claim.a.effect_hi"]
    assert np.isnan(nums["claim.z.effect"]) and nums["claim.z.n_seeds"] == 0
    final_b, hist_b = frames(-0.05)
    other = claims_table(final_b, hist_b, {"a": Claim("y", "x", "transfer", 1, ""), "z": Claim("y", "x", "transfer", 1, "")})
    both = combine_tables(table, other)
    assert list(both["source"]) == ["this run", "full record"]
    assert both.loc["a", "verdict"] == "yes" and both.loc["z", "verdict"] == "no"
    assert combine_tables(table, None).loc["z", "source"] == "not measured"
    iv = interval_numbers(final)
    assert iv["transfer_lo.y"] < final.loc[final.condition == "y", "transfer"].mean() < iv["transfer_hi.y"]


def test_sweep_seconds_of_plain_and_merged_records():
    from posteval.rubric.provenance import sweep_seconds

    assert sweep_seconds({"total": 5.0, "setup": {}}) == 5.0
    assert sweep_seconds({"base": {"base": {"total": 1.0}, "extra": {"total": 2.0}}, "extra": {"total": 4.0}}) == 7.0
    with pytest.raises(ValueError, match="neither"):
        sweep_seconds({"setup": {}})


def test_chapter_types_no_verdict_the_intervals_should_decide():
    from posteval.book import ROOT

    text = (ROOT / "chapters" / "04_proxy_rubric.md").read_text().lower()
    for phrase in ("on every seed", "weakest form", "claim (a) holds", "this is the claim in full",
                   "neither judge is ever used for training", "an ensemble of them is more reliable"):
        assert phrase not in text, f"typed-in verdict {phrase!r}: glue claim.* instead"
    for key in ("a", "b", "c", "d", "e", "f", "leak", "order", "unseen"):
        assert f"{{glue:text}}`claim.{key}`" in text, f"claim ({key}) is not glued in the prose"
