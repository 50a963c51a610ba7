"""posteval.metrics.claims: claims as data, decided in one call, with the
family-wise error rate under control (Holm over every word; the designs that could break it are simulated
in test_error_control.py), checked here by simulation too: a global null of 20 claims,
the power kept for an effect of the size chapter 2 resolves, equivalence claims and their seeds,
calibration words, claims of parts (the recorded keys and the reader's table: tests/test_claims.py)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posteval.claims import record_claims
from posteval.metrics.claims import CALIBRATION_WORDS, Claim, claim_words, evaluate_claims
from posteval.metrics.intervals import Interval, Measurements, seed_interval


ROOT = Path(__file__).resolve().parents[2]


ALPHA = 0.025  # a claim alone with two words: each a one-sided test at (1 - level) / 2, level 0.95
FAMILY = 0.05   # any wrong word of a family: at most 1 - level


def _iv(estimate, seed_sd=0.01, event_sd=0.001, n_seeds=3, level=0.95):
    """An interval with the given parts (its bounds from the rule, so that p-value and bounds agree)."""
    iv = Interval(estimate, estimate, estimate, level, seed_sd**2 / n_seeds, event_sd**2, n_seeds, 1000)
    lo, hi = iv.at_level(level)
    return Interval(estimate, lo, hi, level, iv.seed_var, iv.event_var, n_seeds, 1000)


def _one(claim, iv):
    return evaluate_claims([claim], intervals={claim.name: iv}).loc[claim.name]


# ---------------------------------------------------------------------------------------------
# one claim: the word from the interval (direction, margin, seeds, boundary)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("iv, kwargs, want", [
    (_iv(0.15), {}, "yes"),
    (_iv(-0.15), {}, "no"),                                              # the other side excluded: no at any S
    (_iv(0.0, 0.002), dict(margin=0.02), "no"),                          # inside the margin with 3 seeds (t, 2 df)
    (_iv(0.0, 0.002, n_seeds=5), dict(margin=0.02), "no"),
    (_iv(0.0, 0.006, n_seeds=2), dict(margin=0.02), "not resolved"),     # t with 1 df: the interval passes the margin
    (_iv(0.0, 0.0, 0.002), dict(margin=0.02), "no"),                     # no training variance (a fixed referee)
    (_iv(1.015, 0.002), dict(boundary=1.03, direction=-1), "yes"),       # below a target
    (_iv(1.015, 0.002), dict(boundary=1.0, direction=-1), "no"),
    (_iv(0.0, 0.05), dict(margin=0.02), "not resolved"),                 # wider than the margin
])
def test_word_of_one_claim(iv, kwargs, want):
    c = Claim("c", "the effect is positive (this book)", **kwargs,
              **({"margin_reason": "a test margin"} if kwargs.get("margin") else {}))
    row = _one(c, iv)
    assert row["word"] == want
    # a family of one claim, two words: the deciding word's p doubled (at most 1), the 95 % interval's test
    assert row["p_holm"] == pytest.approx(min(1.0, 2 * row["p"]), rel=1e-12)
    assert (row["p_holm"] < FAMILY) == (want != "not resolved")  # a word is said exactly when its adjusted p is small


def test_claims_on_per_seed_values():
    a, b = [0.5, 0.6, 0.55, 0.52], [0.1, 0.12, 0.09, 0.11]
    m = Measurements(seed_values={"acc": {"a": np.array(a), "b": np.array(b)},
                                  "drift": {"x": np.array([0.0, 0.01, -0.01, 0.005, 0.002]),
                                            "y": np.array([0.3, -0.2, 0.1])}})
    table = evaluate_claims([
        Claim("up", "a is more accurate than b (this book)", "acc", "a", "b", direction=1),
        Claim("down", "a is less accurate than b (this book)", "acc", "a", "b", direction=-1),
        Claim("flat", "x does not drift (this book)", "drift", "x", direction=1, margin=0.05, margin_reason="test"),
        Claim("noisy", "y drifts (this book)", "drift", "y", direction=1, margin=0.05, margin_reason="test"),
    ], m)
    assert table["word"].to_dict() == {"up": "yes", "down": "no", "flat": "no", "noisy": "not resolved"}
    iv = seed_interval(np.subtract(a, b))
    assert table.loc["up", ["estimate", "lo", "hi"]].tolist() == pytest.approx(list(iv))
    assert table.loc["up", "n_seeds"] == 4
    assert set(table.columns) >= {"sentence", "source", "family", "direction", "margin", "estimate", "lo", "hi", "p",
                                  "p_holm", "n_seeds", "word"}


# ---------------------------------------------------------------------------------------------
# (a) the family-wise error rate under a global null
# ---------------------------------------------------------------------------------------------
# realistic designs: (seeds, events, seed sd, event sd); the last one a model without training
DESIGNS = [(3, 500, 0.02, 1.0), (3, 500, 0.2, 1.0), (5, 2000, 0.02, 1.0), (1, 500, 0.0, 1.0)]


OWN = 0.2  # seed-specific event noise, in units of the shared event sd


def _null_family(rng, k, effect=None):
    """Per-event scores of k claims' effects (events, seeds), every effect 0 unless ``effect`` gives
    {claim index: (effect, design)}, cycling through DESIGNS: a training offset per seed, a test
    event shared by the seeds (they score the same events) and a little seed-specific noise."""
    out = {}
    for j in range(k):
        s, n, seed_sd, event_sd = DESIGNS[j % len(DESIGNS)]
        mu = 0.0
        if effect and j in effect:
            mu, (s, n, seed_sd, event_sd) = effect[j]
        out[f"c{j}"] = (mu + rng.normal(0, seed_sd, s)[None, :] + rng.normal(0, event_sd, (n, 1))
                        + rng.normal(0, OWN * event_sd, (n, s)))
    return out


def _claims(k, directions):
    return [Claim(f"c{j}", f"effect {j} has sign {d:+d} (simulated)", f"c{j}", "model", direction=d)
            for j, d in zip(range(k), directions)]


def test_holm_keeps_the_family_wise_rate_of_any_directional_word_under_a_global_null():
    """Every effect 0: a "yes" (the claimed sign) and a "no" (the other sign, no margin) are both wrong.
    The issue's bound: any directional word in a family of 20 at most 5 % (3 binomial sd), the two
    directions alike; without Holm the same words would fill most families."""
    rng = np.random.default_rng(23)
    k, repeats = 20, 1000
    claims = _claims(k, [1 if j % 2 else -1 for j in range(k)])
    any_word, any_yes, any_no, raw_any, raw_claims = 0, 0, 0, 0, 0
    for _ in range(repeats):
        scores = _null_family(rng, k)
        table = evaluate_claims(claims, Measurements(event_scores={c: {"model": s} for c, s in scores.items()}))
        any_word += (table["word"] != "not resolved").any()
        any_yes += (table["word"] == "yes").any()
        any_no += (table["word"] == "no").any()
        raw = table["p"] < FAMILY / 2  # unadjusted: the interval excludes 0 on either side
        raw_any += raw.any()
        raw_claims += raw.sum()
        side = (table["lo"] > 0) | (table["hi"] < 0)
        assert side.equals(raw)
    sd = lambda p: np.sqrt(p * (1 - p) / repeats)  # noqa: E731 - binomial sd of a rate over the repeats
    assert any_word / repeats <= FAMILY + 3 * sd(FAMILY)
    # both directions get the same control: neither word takes more than its half plus noise
    assert any_yes / repeats <= ALPHA + 3 * sd(ALPHA) and any_no / repeats <= ALPHA + 3 * sd(ALPHA)
    # without Holm the same words fill a large part of the families (1 - 0.95^20 = 0.64 for exact
    # tests); each claim alone is at its level or below (the rule counts the seed-specific event
    # noise in both parts: conservative)
    assert raw_any / repeats > 0.4
    assert raw_claims / (k * repeats) <= FAMILY + 3 * np.sqrt(FAMILY * (1 - FAMILY) / (k * repeats))


def test_a_margin_makes_no_a_test_at_its_level_too():
    """A claimed effect exactly at the margin: "no" (absent or below the margin) is wrong, and is said at
    most 2.5 % of the time, as a wrong "yes" is at an effect of 0."""
    rng = np.random.default_rng(31)
    repeats, margin = 1000, 0.1
    claim = Claim("c", "the effect is positive (simulated)", "d", "model", direction=1, margin=margin,
                  margin_reason="a tenth of the score's sd")
    no = yes = 0
    for _ in range(repeats):
        d0 = margin + rng.normal(0, 0.01, 3)[None, :] + rng.normal(0, 1.0, (2000, 3))
        d1 = rng.normal(0, 0.01, 3)[None, :] + rng.normal(0, 1.0, (2000, 3))
        no += _one_measured(claim, d0) == "no"
        yes += _one_measured(claim, d1) == "yes"
    sd = np.sqrt(ALPHA * (1 - ALPHA) / repeats)
    assert no / repeats <= ALPHA + 3 * sd and yes / repeats <= ALPHA + 3 * sd


def _one_measured(claim, d):
    return evaluate_claims([claim], Measurements(event_scores={"d": {"model": d}})).loc[claim.name, "word"]


# ---------------------------------------------------------------------------------------------
# (b) power: a true effect of the size chapter 2 resolves is still resolved after Holm
# ---------------------------------------------------------------------------------------------
def _chapter2_resolved_ratios():
    """estimate / half-width of every difference chapter 2's kept full-scale record resolves
    ("yes"), read from the record: ``claim.<metric>.<pair>`` with ``diff[_lo|_hi].<metric>.<pair>``
    (the layer's keys ``claim_estimate|lo|hi.<name>`` once the chapter records them)."""
    path = ROOT / "results" / "full" / "02_synthetic_bimodal.json"
    rec = json.loads(path.read_text())
    ratios = {}
    for key, word in rec.items():
        if not key.startswith("claim.") or word != "yes":
            continue
        name = key[len("claim."):]
        for est, lo, hi in ((f"diff.{name}", f"diff_lo.{name}", f"diff_hi.{name}"),
                            (f"claim_estimate.{name}", f"claim_lo.{name}", f"claim_hi.{name}")):
            if all(isinstance(rec.get(x), (int, float)) for x in (est, lo, hi)) and rec[hi] > rec[lo]:
                ratios[name] = abs(rec[est]) / ((rec[hi] - rec[lo]) / 2)
    assert ratios, f"{path.name}: no resolved differences with intervals"
    return ratios, rec.get("n_seeds", 5)


def _power(rng, ratio, n_seeds, k=25, repeats=400, n=2000):
    """Fraction of families of k claims (k - 1 true nulls) whose one true effect, at ``ratio`` =
    effect / (expected half-width at 0.95), gets "yes" after Holm; the seed and event parts of the
    half-width alike."""
    q = 0.975
    t = stats.t.ppf(q, n_seeds - 1) if n_seeds > 1 else 0.0
    hw = 1.0 / ratio  # effect 1
    seed_sd = np.sqrt(hw**2 / 2 * n_seeds) / t if n_seeds > 1 else 0.0  # t^2 V_seed = hw^2 / 2
    event_sd = np.sqrt((hw**2 / 2 if n_seeds > 1 else hw**2) * n) / stats.norm.ppf(q)
    event_sd /= np.sqrt(1 + OWN**2 / n_seeds)  # the seed-specific noise enters the event part too
    design = (n_seeds, n, seed_sd, event_sd)
    claims = _claims(k, [1] * k)
    hits = 0
    for _ in range(repeats):
        scores = _null_family(rng, k, effect={0: (1.0, design)})
        table = evaluate_claims(claims, Measurements(event_scores={c: {"model": s} for c, s in scores.items()}))
        hits += table.loc["c0", "word"] == "yes"
    return hits / repeats


def test_a_typical_effect_resolved_in_the_bimodal_record_survives_holm_over_25_claims():
    ratios, n_seeds = _chapter2_resolved_ratios()
    typical = float(np.median(list(ratios.values())))
    assert typical > 1  # resolved: the interval excludes 0
    assert _power(np.random.default_rng(2), typical, n_seeds) >= 0.8


def test_holm_costs_exactly_its_step_in_power():
    """One seed (the normal event interval): the power of one true effect among 24 nulls after Holm
    is that of a single test at alpha / 25 (its first step), Phi(z_true - z_(1 - alpha/25)); at
    z_true = z_(1 - alpha/25) + z_0.8 it is 0.8, far below the unadjusted power."""
    k = 25
    z_true = stats.norm.ppf(1 - ALPHA / k) + stats.norm.ppf(0.8)
    ratio = z_true / stats.norm.ppf(0.975)
    repeats = 1000
    power = _power(np.random.default_rng(3), ratio, 1, k=k, repeats=repeats)
    want = stats.norm.cdf(z_true - stats.norm.ppf(1 - ALPHA / k))  # 0.8, up to the nulls' later steps
    assert abs(power - want) < 3 * np.sqrt(want * (1 - want) / repeats) + 0.01
    assert stats.norm.cdf(z_true - stats.norm.ppf(1 - ALPHA)) > 0.97  # what no adjustment would give


# ---------------------------------------------------------------------------------------------
# (e) equivalence claims, calibration words, claims of parts
# ---------------------------------------------------------------------------------------------
def _equivalence_rate(rng, effect, n_seeds, margin, repeats, n=2000, seed_sd=0.01, words=None):
    claim = Claim("same", "the two models score alike (this book)", "d", "model", direction=0, margin=margin,
                  margin_reason="a tenth of the score's sd", words=words or {})
    out = []
    for _ in range(repeats):
        d = effect + rng.normal(0, seed_sd, n_seeds)[None, :] + rng.normal(0, 1.0, (n, n_seeds))
        out.append(evaluate_claims([claim], Measurements(event_scores={"d": {"model": d}})).loc["same", "word"])
    return pd.Series(out).value_counts() / repeats


def test_an_exact_null_effect_is_equivalent_with_three_seeds_as_with_five():
    """No minimum of seeds: the Student-t quantile over S - 1 degrees of freedom carries the
    uncertainty of the seed variance, so an equivalence is resolved with the chapters' three seeds
    (and at the margin stays a test at its level, below)."""
    rng = np.random.default_rng(4)
    for s, power in ((3, 0.8), (5, 0.95)):  # the conventional 80 % power is reached with three seeds
        rates = _equivalence_rate(rng, 0.0, s, 0.1, 300)
        assert rates.get("yes", 0) >= power
    # the same interval without training variance (an untrained model, one column)
    rates = _equivalence_rate(rng, 0.0, 1, 0.1, 100, seed_sd=0.0)
    assert rates.get("yes", 0) >= 0.95


@pytest.mark.parametrize("n_seeds", [3, 5])
def test_equivalence_at_the_margin_is_a_test_at_its_level(n_seeds):
    """Two one-sided tests: a true effect exactly at the margin is called equivalent at most 2.5 %."""
    repeats = 1000
    rates = _equivalence_rate(np.random.default_rng(5), 0.06, n_seeds, 0.06, repeats, n=4000)
    assert rates.get("yes", 0) <= ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / repeats)


@pytest.mark.parametrize("deviation, event_sd, want", [
    (0.0, 0.02, "calibrated"), (-0.2, 0.02, "under-covers"), (0.2, 0.02, "over-covers"),
    (0.03, 0.03, "not resolved"),  # the interval holds 0 and reaches past the margin
])
def test_calibration_words(deviation, event_sd, want):
    """A signed coverage deviation: calibrated inside the margin, under- / over-covers when the
    interval lies below / above 0, else not resolved."""
    claim = Claim("cal", "the flow is calibrated (paper)", direction=0, margin=0.08, margin_reason="noise floor",
                  words=CALIBRATION_WORDS)
    iv = _iv(deviation, seed_sd=0.01, event_sd=event_sd, n_seeds=5)
    assert _one(claim, iv)["word"] == want
    assert want in claim_words()


def test_claims_of_parts_show_the_part_that_decided_and_take_all_of_the_words():
    claims = [Claim("x", "x is positive (this book)"), Claim("y", "y is positive (this book)"),
              Claim("z", "z is positive (this book)"),
              Claim("xy", "x and y are positive (this book)", parts=("x", "y")),
              Claim("xz", "x and z are positive (this book)", parts=("x", "z"))]
    ivs = {"x": _iv(0.3, 0.01, 0.05, 5), "y": _iv(0.2, 0.01, 0.05, 5), "z": _iv(-0.01, 0.01, 0.05, 5)}
    t = evaluate_claims(claims, intervals=ivs)
    assert t.loc["xy", "word"] == "yes" and t.loc["xz", "word"] == "not resolved"
    weakest = t.loc[["x", "y"], "p_holm"].idxmax()  # "yes": every part had to hold, the weakest shown
    assert t.loc["xy", "decided_by"] == weakest
    assert t.loc["xy", ["estimate", "lo", "hi", "p", "p_holm"]].tolist() == \
        t.loc[weakest, ["estimate", "lo", "hi", "p", "p_holm"]].tolist()
    assert t.loc["xz", "decided_by"] == "z"  # not resolved: the part that did not hold
    # Holm over the six words of the three claims only: the parts claims are not members of the family
    assert t.loc["z", "p_holm"] == pytest.approx(min(1.0, 4 * t.loc["z", "p"]))  # z: the 3rd smallest of 6 words
    assert t.index.tolist() == ["x", "y", "z", "xy", "xz"]
    # a "no" part decides a "no", shown with its numbers
    ivs["z"] = _iv(-0.3, 0.01, 0.05, 5)
    t = evaluate_claims(claims, intervals=ivs)
    assert t.loc["xz", "word"] == "no" and t.loc["xz", "decided_by"] == "z"
    assert t.loc["xz", "estimate"] == t.loc["z", "estimate"]


def test_holm_is_applied_within_each_family():
    ivs = {n: _iv(0.02, 0.0, 0.01, 1) for n in "abcd"}  # a one-sided p of about 0.023 each ("yes")
    claims = [Claim("a", "a (paper)"), Claim("b", "b (paper)"),
              Claim("c", "c (this book)", family="exploratory"), Claim("d", "d (this book)", family="exploratory")]
    t = evaluate_claims(claims, intervals=ivs)
    p = t.loc["a", "p"]
    assert 2 * p < FAMILY < 4 * p
    assert t["p_holm"].tolist() == pytest.approx([4 * p] * 4)  # 4 words in each family (2 claims), not 8
    assert (t["word"] == "not resolved").all()
    assert t.loc["c", "sentence"].endswith("(exploratory)") and not t.loc["a", "sentence"].endswith("(exploratory)")
    alone = evaluate_claims(claims[:1], intervals=ivs)
    assert alone.loc["a", "word"] == "yes"


# ---------------------------------------------------------------------------------------------
# (f) bad input: a ValueError that names the problem
# ---------------------------------------------------------------------------------------------
_M = Measurements(event_scores={"crps": {"a": np.linspace(0, 1, 20), "b": np.linspace(0, 1, 20) + 1}})


@pytest.mark.parametrize("call, match", [
    (lambda: Claim("a b", "s"), "name"),
    (lambda: Claim("", "s"), "name"),
    (lambda: Claim("a", "  "), "sentence"),
    (lambda: Claim("a", "s", direction=2), "direction"),
    (lambda: Claim("a", "s", family=""), "family"),
    (lambda: Claim("a", "s", family="my family"), "family"),
    (lambda: Claim("a", "s", margin=-0.1, margin_reason="r"), "margin"),
    (lambda: Claim("a", "s", margin=np.nan, margin_reason="r"), "margin"),
    (lambda: Claim("a", "s", margin=0.1), "margin_reason"),
    (lambda: Claim("a", "s", direction=0), "margin > 0"),
    (lambda: Claim("a", "s", "crps", "a", parts=("x",)), "parts"),
    (lambda: Claim("a", "s", words={"maybe": "w"}), "words"),
    (lambda: evaluate_claims([Claim("a", "s", "crps", "a"), Claim("a", "t", "crps", "b")], _M), "repeated names"),
    (lambda: evaluate_claims([Claim("a", "s", "crps", "a")], _M, level=1.0), "level"),
    (lambda: evaluate_claims([Claim("a", "s", "crps", "a")], _M, level=np.nan), "level"),
    (lambda: evaluate_claims([Claim("a", "s")], _M), "no interval given"),
    (lambda: evaluate_claims([Claim("a", "s", "rmse", "a")], _M), "not measured"),
    (lambda: evaluate_claims([Claim("a", "s", "crps", "c")], _M), "model 'c'"),
    (lambda: evaluate_claims([Claim("a", "s")], intervals={"a": (0.0, -1.0, 1.0)}), "expected an Interval"),
    (lambda: evaluate_claims([Claim("a", "s")], intervals={"a": _iv(0.1, level=0.9)}), "level"),
    (lambda: evaluate_claims([Claim("a", "s", "crps", "a"), Claim("p", "s", parts=("a", "zz"))], _M),
     r"parts \['zz'\]"),
    (lambda: evaluate_claims([Claim("a", "s", direction=0, margin=0.1, margin_reason="r", words=CALIBRATION_WORDS),
                              Claim("p", "s", parts=("a",))], intervals={"a": _iv(0.0, 0.0, 0.01, 1)}), "yes/no"),
    (lambda: record_claims(pd.DataFrame({"word": ["yes"]})), "missing columns"),
])
def test_bad_input_is_a_value_error_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_gate_takes_subject_and_comparator_alike_and_parts_follow():
    """One gate for every model: a claim naming an unfaithful model as its subject or as its comparator is not
    testable, with the gate's reason; a claim of parts with such a part is not testable; others are decided."""
    from posteval.metrics.claims import unfaithful_claims
    from posteval.metrics.intervals import Measurements

    x = np.linspace(0.0, 1.0, 400)
    m = Measurements(event_scores={"crps": {"ours": x, "theirs": x + 0.5, "other": x + 0.25}})
    claims = [Claim("ours_beats_theirs", "ours has a lower CRPS than theirs (this book)", "crps", "ours", "theirs", -1),
              Claim("ours_beats_other", "ours has a lower CRPS than other (this book)", "crps", "ours", "other", -1),
              Claim("both", "ours beats both (this book)", parts=("ours_beats_theirs", "ours_beats_other"))]
    gate = unfaithful_claims(claims, {"theirs": "theirs fails the W window"})
    assert gate == {"ours_beats_theirs": "theirs fails the W window"}
    table = evaluate_claims(claims, m, not_testable=gate)
    assert list(table["word"]) == ["not testable", "yes", "not testable"]
    assert table.loc["both", "reason"] == "theirs fails the W window"
    with pytest.raises(ValueError, match="reason"):
        unfaithful_claims(claims, {"theirs": " "})
