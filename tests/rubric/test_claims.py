"""Claims of chapter 4 from per-seed results: the source's directions, pairing by seed, the cold start,
the strongest record per claim, one Holm-adjusted call, the recorded keys, the source's claims that cannot be
tested, and the decision on the seeds an extension added (the pooled run described, not decided)."""

import numpy as np
import pandas as pd
import pytest

from posteval.book import recorded
from posteval.claims import claims_overview, record_table
from posteval.metrics.claims import Claim, verdict_reason
from posteval.rubric.claims import (BEST, BY_NAME, CANNOT_TEST, CLAIMS, COLD, EQUAL_STEPS, MEMBERS, ORDER_MARGIN, SAYS,
                                    SCHEMES, TRANSFER, add_at_step, add_renamed, best_member, claim_interval,
                                    claims_table, decided_on, extension_table, interval_numbers, measured,
                                    opening_claims, seeds_sentence, seeds_text, source_size, unlooked)


def frames(effect, seeds=(0, 1, 2, 3), noise=0.001, metric="transfer"):
    rng = np.random.default_rng(0)
    base = rng.normal(0.6, 0.1, len(seeds))  # a large per-seed offset shared by the conditions of a seed
    rows = []
    for s, b in zip(seeds, base):
        rows.append({"seed": s, "condition": "x", metric: b, "step": 8})
        rows.append({"seed": s, "condition": "y", metric: b + effect + rng.normal(0, noise), "step": 8})
    final = pd.DataFrame(rows)
    history = pd.DataFrame([{"seed": s, "condition": "x", "step": 0, f"test_{metric}": b - 0.1}
                            for s, b in zip(seeds, base)])
    return final, history


def claim(name, a="y", b="x", direction=1, **kw):
    return Claim(name, f"a test claim {name}", "transfer", a, b, direction, **kw)


def test_paired_claim_resolves_a_small_effect_under_large_seed_spread():
    final, hist = frames(0.05)
    iv = claim_interval(claim("up"), final, hist)
    assert iv.n_seeds == 4 and iv.estimate == pytest.approx(0.05, abs=0.002) and iv.lo > 0
    assert claim_interval(claim("cold", "x", COLD), final, hist).estimate == pytest.approx(0.1)
    t = claims_table({"run": (final, hist)}, [claim("up"), claim("down", direction=-1)])
    assert list(t["word"]) == ["yes", "no"] and list(t["record"]) == ["run", "run"]


def test_unmeasured_claims_are_left_out_and_parts_need_every_part():
    final, hist = frames(0.05)
    claims = [claim("up"), claim("gone", a="z"), Claim("both", "up and gone", parts=("up", "gone")),
              Claim("one", "up alone", parts=("up",))]
    t = claims_table({"run": (final, hist)}, claims)
    assert list(t.index) == ["up", "one"] and t.loc["one", "word"] == "yes"
    with pytest.raises(ValueError, match="no claim"):
        claims_table({"run": (final, hist)}, [claim("gone", a="z")])


def test_each_claim_reads_the_record_with_most_seeds():
    small, hs = frames(-0.05, seeds=(0, 1, 2))
    large, hl = frames(0.05, seeds=tuple(range(8)))
    t = claims_table({"small": (small, hs), "large": (large, hl)}, [claim("up")])
    assert t.loc["up", "record"] == "large" and t.loc["up", "n_seeds"] == 8 and t.loc["up", "word"] == "yes"
    tie = claims_table({"small": (small, hs), "again": frames(0.05, seeds=(0, 1, 2))}, [claim("up")])
    assert tie.loc["up", "record"] == "small"


def test_holm_adjusts_within_the_family():
    # twelve true nulls and one weak effect: its unadjusted p passes, its Holm-adjusted p is larger
    rng = np.random.default_rng(5)
    rows = []
    for s in range(10):
        base = rng.normal(0.6, 0.1)
        rows.append({"seed": s, "condition": "x", "transfer": base, "step": 8})
        rows.append({"seed": s, "condition": "weak", "transfer": base + 0.02 + rng.normal(0, 0.02), "step": 8})
        for k in range(12):
            rows.append({"seed": s, "condition": f"n{k}", "transfer": base + rng.normal(0, 0.02), "step": 8})
    final = pd.DataFrame(rows)
    hist = pd.DataFrame({"seed": [], "condition": [], "step": []})
    claims = [claim("weak", "weak")] + [claim(f"n{k}", f"n{k}") for k in range(12)]
    t = claims_table({"run": (final, hist)}, claims)
    assert (t["p_holm"] >= t["p"]).all() and t.loc["weak", "p_holm"] > t.loc["weak", "p"]


def test_the_source_directions():
    d = BY_NAME["d"]
    assert d.direction == -1 and "worse than the best single proxy" in d.sentence
    assert "heterogeneous" in d.sentence and (d.a, d.b, d.source, d.family) == (
        "ensemble_mixed", BEST, "Proxy-GRM", "confirmatory")
    assert (BY_NAME["d.proxy_sft"].b, BY_NAME["d.proxy_sft"].family) == ("proxy_sft", "exploratory")
    boot = BY_NAME["d.bootstrap"]
    assert (boot.a, boot.direction, boot.family) == ("ensemble3", -1, "exploratory")
    assert "bootstrap copies" in boot.sentence
    for s, (cond, _) in SCHEMES.items():
        e = BY_NAME[f"e.{s}"]
        assert (e.a, e.b, e.direction) == ("proxy_sft", cond, 1) and "additive" in e.sentence
    assert BY_NAME["e"].parts == tuple(f"e.{s}" for s in SCHEMES)
    assert BY_NAME["f.accuracy"].metric == "verdict_acc" and BY_NAME["f.transfer"].metric == TRANSFER
    for k in ("f.accuracy", "f.transfer", "f.accuracy.equal_steps", "f.transfer.equal_steps"):
        assert (BY_NAME[k].source, BY_NAME[k].family) == ("this book", "exploratory"), k
    assert BY_NAME["f.transfer.equal_steps"].b == EQUAL_STEPS
    assert set(SAYS) == {c.name for c in CLAIMS}
    b_acc, b_proxy = BY_NAME["b_acc"], BY_NAME["b.proxy"]
    assert (b_acc.source, b_acc.family) == ("this book", "exploratory")  # the book's question, not the source's
    assert (b_proxy.metric, b_proxy.a, b_proxy.b, b_proxy.direction, b_proxy.source) == (
        "rationalisation", "proxy_sft", "no_proxy", -1, "Proxy-GRM")  # the proxy lowers rationalisation
    assert "not the source's implicit aggregation" in SAYS["e.implicit"]
    for name, why in CANNOT_TEST.items():  # the source's claims this miniature cannot test, with the reason
        assert BY_NAME[name].source == "Proxy-GRM" and BY_NAME[name].metric is None and len(why) > 40, name
    assert "32B" in BY_NAME["proxy_32b"].sentence
    order = BY_NAME["order"]
    assert order.direction == 0 and order.margin > 0 and order.margin_reason
    assert all(c.source in ("Proxy-GRM", "this book") for c in CLAIMS)
    assert {c.family for c in CLAIMS if c.source == "this book"} == {"exploratory"}


def test_record_table_writes_the_keys_of_every_claim():
    final, hist = frames(0.05, metric=TRANSFER)
    final = pd.concat([final.replace({"y": "proxy_sft", "x": "no_proxy"})])
    t = claims_table({"run": (final, hist)})
    assert list(t.index) == ["a"]
    record_table(t, prefix="test_rc.", fill=CLAIMS)
    rec = recorded()
    assert rec["claim.test_rc.a"] == "yes" and rec["claim_seeds.test_rc.a"] == 4
    assert rec["claim_record.test_rc.a"] == "run" and rec["claim_lo.test_rc.a"] > 0
    for c in CLAIMS:
        for key in ("claim", "claim_estimate", "claim_lo", "claim_hi", "claim_p", "claim_p_holm", "claim_sentence"):
            assert f"{key}.test_rc.{c.name}" in rec
    assert rec["claim.test_rc.d"] == "not testable" and np.isnan(rec["claim_estimate.test_rc.d"])
    assert rec["claim_reason.test_rc.d"] == "not measured"


def test_interval_numbers():
    final, _ = frames(0.05)
    iv = interval_numbers(final)
    assert iv["transfer_lo.y"] < final.loc[final.condition == "y", "transfer"].mean() < iv["transfer_hi.y"]


def test_chapter_types_no_verdict_the_intervals_should_decide():
    from posteval.book import ROOT

    text = (ROOT / "chapters" / "04_proxy_rubric.md").read_text().lower()
    for phrase in ("on every seed", "weakest form", "claim (a) holds", "this is the claim in full",
                   "neither judge is ever used for training", "an ensemble of them is more reliable",
                   "the setup decides the basin"):
        assert phrase not in text, f"typed-in verdict {phrase!r}: glue claim.* instead"
    for c in CLAIMS:
        assert f"{{glue:text}}`claim.{c.name}`" in text, f"claim ({c.name}) is not glued in the prose"


def test_seeds_only_and_the_claims_decided_after_an_extension():
    from posteval.rubric.claims import decided_after_extension, seeds_only
    final = pd.DataFrame({"seed": [0, 1, 2, 3], "condition": ["a"] * 4, "x": [1.0, 2.0, 3.0, 4.0]})
    history = final.assign(step=0)
    f, h = seeds_only(final, history, [2, 3])
    assert f["seed"].tolist() == [2, 3] and h["seed"].tolist() == [2, 3]
    with pytest.raises(ValueError, match="not in the record"):
        seeds_only(final, history, [7])
    with pytest.raises(ValueError, match="at least one seed"):
        seeds_only(final, history, [])
    pooled = pd.DataFrame({"word": ["yes", "not resolved", "no", "yes"],
                           "record": ["power", "power", "power", "sweep"]}, index=list("abcd"))
    first = pd.DataFrame({"word": ["not resolved", "not resolved", "no"]}, index=list("abc"))
    assert decided_after_extension(pooled, first, "power") == ["a"]


def test_members_are_the_mixed_ensembles():
    from posteval.rubric.experiment import CONDITIONS, MIXED_MEMBERS
    assert tuple(CONDITIONS[m].proxy for m in MEMBERS) == MIXED_MEMBERS


def test_best_member_is_chosen_on_other_seeds_and_tested_on_the_rest():
    rows = [{"seed": s, "condition": c, TRANSFER: v + (0.3 if (c == "proxy_rl" and s < 2) else 0.0), "step": 8}
            for s in range(6) for c, v in (("proxy_sft", 0.6), ("proxy_rl", 0.5), ("proxy_follow", 0.7),
                                           ("ensemble_mixed", 0.7 + 0.001 * s))]
    final = pd.DataFrame(rows)
    hist = pd.DataFrame({"seed": [], "condition": [], "step": []})
    assert best_member(final, seeds=[0, 1]) == "proxy_rl" and best_member(final) == "proxy_follow"
    with pytest.raises(ValueError, match="no member"):
        best_member(final, ("absent",))
    chosen = best_member(final, seeds=[0, 1])
    test = add_renamed(final, chosen, BEST, seeds=range(2, 6))
    t = claims_table({"run": (test, hist)}, [BY_NAME["d"]])
    assert t.loc["d", "n_seeds"] == 4  # the choice's seeds are not in the test
    with pytest.raises(ValueError, match="no rows"):
        add_renamed(final, "absent", BEST)


def test_add_at_step_reads_the_condition_at_as_many_steps():
    hist = pd.DataFrame({"seed": [0] * 3, "condition": ["no_proxy"] * 3, "step": [0, 64, 256],
                         "test_verdict_acc": [0.5, 0.6, 0.7]})
    final = pd.DataFrame({"seed": [0], "condition": ["no_proxy"], "step": [256], "verdict_acc": [0.7]})
    out = add_at_step(final, hist, "no_proxy", 64, EQUAL_STEPS).set_index("condition")
    assert out.loc[EQUAL_STEPS, "verdict_acc"] == 0.6 and out.loc[EQUAL_STEPS, "step"] == 64
    with pytest.raises(ValueError, match="no evaluation"):
        add_at_step(final, hist, "other", 64, EQUAL_STEPS)


def test_the_opening_puts_the_sources_claims_first_in_their_words_and_says_why():
    t = pd.DataFrame({"word": ["yes", "not resolved", "no"], "estimate": [0.05, 0.0, 0.02],
                      "lo": [0.02, -0.01, 0.01], "hi": [0.08, 0.01, 0.03], "p_holm": [0.004, 1.0, 0.01],
                      "n_seeds": [10, 30, 40], "record": ["sweep", "power", "power"]}, index=["leak", "d", "a"])
    shown = opening_claims(t)
    assert [c.name for c in shown] == ["a", "d", "leak"]
    assert [c.source for c in shown] == ["Proxy-GRM"] * 2 + ["this book"]
    assert shown[0].sentence == SAYS["a"]
    r = claims_overview(t, shown, measured=measured)
    assert list(r.columns) == ["what we measured", "verdict", "why"]
    assert r.index[0] == f"{SAYS['a']} [Proxy-GRM (confirmatory)]"
    assert r.index[2].endswith("[this book (exploratory)]")
    assert "below 0" in r.iloc[0]["why"] and "does not exclude 0" in r.iloc[1]["why"]
    assert "40 seeds" in r.iloc[0]["why"] and "best_member" in r.iloc[1]["what we measured"]
    order = verdict_reason({"word": "yes", "estimate": 0.0, "lo": -0.001, "hi": 0.001, "p_holm": 0.01,
                            "n_seeds": 10}, BY_NAME["order"])
    assert "inside" in order
    from posteval.rubric.claims import cold_start_tolerance
    assert cold_start_tolerance(4) == 0.5
    with pytest.raises(ValueError, match="at least one"):
        cold_start_tolerance(0)
    assert seeds_sentence(t) == "40 seeds: a; 30 seeds: d; 10 seeds: leak"


def test_claims_the_source_states_but_the_miniature_cannot_test_are_kept_with_their_reason():
    final, hist = frames(0.05, metric=TRANSFER)
    final = final.replace({"y": "proxy_sft", "x": "no_proxy"})
    t = claims_table({"run": (final, hist)}, not_testable=CANNOT_TEST)
    assert set(CANNOT_TEST) < set(t.index) and t.loc["a", "word"] == "yes"
    for name, why in CANNOT_TEST.items():
        assert (t.loc[name, "word"], t.loc[name, "reason"], t.loc[name, "record"]) == ("not testable", why, "")
    assert list(claims_table({"run": (final, hist)}).index) == ["a"]  # without not_testable, as before
    with pytest.raises(ValueError, match="no claim"):
        claims_table({"run": (final, hist)}, [BY_NAME["sota"]], not_testable=CANNOT_TEST)


def test_a_run_extended_after_a_look_decides_on_the_seeds_not_looked_at():
    """The looked-at seeds carry a large effect, the added ones none: the word comes from the added seeds
    alone, and the pooled table (all seeds) only describes."""
    looked, hl = frames(0.3, seeds=(0, 1, 2, 3), noise=0.01)
    added, ha = frames(0.0, seeds=tuple(range(4, 16)), noise=0.01)
    power = (pd.concat([looked, added], ignore_index=True), pd.concat([hl, ha], ignore_index=True))
    records = {"power run (16 seeds)": power, "sweep (4 seeds)": (looked, hl)}
    decide = unlooked(records, ["power run (16 seeds)"], range(4, 16))
    assert list(decide) == ["power run, seeds 4–15 (12 seeds)", "sweep (4 seeds)"]
    t = claims_table(decide, [claim("up")])
    pooled = claims_table(records, [claim("up")])
    assert t.loc["up", "record"] == "power run, seeds 4–15 (12 seeds)" and t.loc["up", "n_seeds"] == 12
    assert t.loc["up", "word"] == "not resolved" and pooled.loc["up", "word"] == "yes"  # pooling would say yes
    shown = extension_table(t, pooled, claims_table({"sweep": (looked, hl)}, [claim("up")]), ["up"])
    assert shown.iloc[0].tolist()[0::2] == ["yes", "not resolved"]  # the look's word, the decision's
    assert "yes" not in shown.iloc[0, 3] and "[" in shown.iloc[0, 3]  # the pooled interval, no word
    with pytest.raises(ValueError, match="not records"):
        unlooked(records, ["absent"], [4])
    assert seeds_text(range(10, 40)) == "seeds 10–39" and seeds_text([3, 7]) == "seeds 3, 7"
    assert "seeds 10–39 (30 seeds)" in decided_on(range(10, 40), 40, 10) and "sweep's 10 seeds" in decided_on(
        range(10, 40), 40, 10)


def test_the_source_size_is_said_from_the_interval():
    inside = source_size({"estimate": -0.0003, "lo": -0.002, "hi": 0.0013})
    assert "lies wholly inside" in inside and "rule out an effect of the source's size" in inside
    assert "each at 2.5 %" in inside and f"{ORDER_MARGIN}" in inside
    assert "do not rule out" in source_size({"estimate": 0.0, "lo": -0.04, "hi": 0.01})
    assert "not measured" in source_size({"estimate": np.nan, "lo": np.nan, "hi": np.nan})
