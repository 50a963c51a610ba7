"""The one rule's guarantee, simulated in the designs that could break it: with ``evaluate_claims`` (the
library's own path, as the chapters call it), the probability that a family says any wrong word is at most
5 % (plus its Monte Carlo error) in families of 4, 10 and 20 claims with margins, with every effect at 0, at
the margin, and with true and false claims mixed (the referee's design among them: "a lower than b" with a
margin of 4 standard errors and every effect 0, which let a wrong "yes" through in 9, 20 and 32 % of
families when Holm ran over the claims instead of their words); for calibration words (an equivalence with
signs) at 0, at the margin and mixed; and without margins under a global null. The power of an effect of the
size the chapters resolve is simulated beside it, for the same rule and for the rule it replaced.

A word is wrong when the truth is the one its p-value tests against: "yes" when the effect in the claimed
direction is <= 0, "no" when it is >= the margin (no margin: >= 0), "calibrated" when |effect| >= margin,
"under-covers" when the effect is >= 0, "over-covers" when it is <= 0.
"""

import numpy as np
import pytest

from posteval.metrics.claims import CALIBRATION_WORDS, Claim, evaluate_claims
from posteval.metrics.intervals import Interval
from posteval.metrics.verdicts import decide, word_pvalues

REPEATS = 2000
ALPHA = 0.05
SE = 1.0           # every interval a normal one with standard error 1 (a large test set)
MARGIN = 4 * SE    # the referee's margin: 4 standard errors
Z = 1.959963984540054


def normal_interval(estimate: float, se: float = SE) -> Interval:
    """A 95 % normal interval (events only, one seed), as ``Measurements`` gives for a mean over events."""
    return Interval(float(estimate), estimate - Z * se, estimate + Z * se, 0.95, 0.0, se**2, 1, 10_000)


def wrong(word: str, claimed: float, margin: float, kind: str) -> bool:
    """Whether ``word`` is wrong for a claim whose true effect in the claimed direction is ``claimed``."""
    if kind == "direction":
        return {"yes": claimed <= 0, "no": claimed >= margin if margin > 0 else claimed >= 0}.get(word, False)
    return {"calibrated": abs(claimed) >= margin, "under-covers": claimed >= 0,
            "over-covers": claimed <= 0}.get(word, False)


def family(kind: str, k: int, margin: float) -> list[Claim]:
    if kind == "direction":  # "a lower than b" (direction -1), as the referee's simulation
        return [Claim(f"c{j}", f"model a has a lower score than b, case {j} (simulated)", direction=-1, margin=margin,
                      margin_reason="4 standard errors" if margin else "") for j in range(k)]
    return [Claim(f"c{j}", f"sampler {j} is calibrated (simulated)", direction=0, margin=margin,
                  margin_reason="4 standard errors", words=CALIBRATION_WORDS) for j in range(k)]


def truths(design: str, k: int, margin: float) -> np.ndarray:
    """Each claim's true effect, in the claimed direction for a directional claim (positive: it holds)."""
    if design == "all at 0":
        return np.zeros(k)
    if design == "all at the margin":
        return np.full(k, margin)
    if design == "mixed":  # a quarter at 0, a quarter at the margin, half far beyond it
        return np.array([(0.0, margin, 2.5 * margin, 2.5 * margin)[j % 4] for j in range(k)])
    raise ValueError(design)


def old_rule(pws: list[dict], level: float = 0.95) -> list[str]:
    """The rule this replaced, for comparison: each claim's p twice its smallest word's, Holm over the
    claims, every word of a claim resolved with its claim's multiplier f = p_holm / p (f = 1 where p = 0)."""
    from posteval.metrics.verdicts import holm

    ps = np.array([min(1.0, 2 * min(pw.values())) for pw in pws])
    out = []
    for pw, p, h in zip(pws, ps, holm(ps)):
        f = h / p if p > 0 else 1.0
        out.append(decide({w: min(1.0, 2 * v * f) for w, v in pw.items()}, level=level))
    return out


def simulate(kind: str, design: str, k: int, margin: float, seed: int, repeats: int = REPEATS,
             rule: str = "words") -> tuple[float, float]:
    """Over ``repeats`` families: P(any wrong word said) and the share of claims whose word is resolved and
    right, under the book's rule (``rule="words"``: ``evaluate_claims``) or the rule it replaced ("claims")."""
    rng = np.random.default_rng(seed)
    claims = family(kind, k, margin)
    theta = truths(design, k, margin)
    # the estimate on the scale of the interval: a directional claim of direction -1 measures -claimed
    centre = -theta if kind == "direction" else theta
    said = {"yes": CALIBRATION_WORDS["yes"], "below": "under-covers", "above": "over-covers"} if kind != "direction" \
        else {}
    bad = right = 0
    for _ in range(repeats):
        est = centre + rng.normal(0.0, SE, k)
        if rule == "words":
            table = evaluate_claims(claims, intervals={c.name: normal_interval(e) for c, e in zip(claims, est)})
            words = list(table["word"])
        else:
            pws = [word_pvalues(normal_interval(e), direction=c.direction, margin=c.margin,
                                signed=kind != "direction") for c, e in zip(claims, est)]
            words = [said.get(w, w) for w in old_rule(pws)]
        wrongs = [wrong(w, t, margin, kind) for w, t in zip(words, theta)]
        bad += any(wrongs)
        right += sum(w != "not resolved" and not x for w, x in zip(words, wrongs)) / k
    return bad / repeats, right / repeats


def error_rate(kind: str, design: str, k: int, margin: float, seed: int) -> tuple[float, float]:
    """P(any wrong word said in a family) over REPEATS families, and its Monte Carlo standard error."""
    rate, _ = simulate(kind, design, k, margin, seed)
    return rate, np.sqrt(ALPHA * (1 - ALPHA) / REPEATS)


DESIGNS = [(kind, design, k, margin)
           for kind, margin in (("direction", MARGIN), ("calibration", MARGIN))
           for design in ("all at 0", "all at the margin", "mixed")
           for k in (4, 10, 20)] + [("direction", "all at 0", k, 0.0) for k in (4, 10, 20)]


@pytest.mark.parametrize("kind, design, k, margin", DESIGNS,
                         ids=[f"{kd}-{d.replace(' ', '_')}-k{k}-m{m:g}" for kd, d, k, m in DESIGNS])
def test_any_wrong_word_at_most_five_percent(kind, design, k, margin):
    rate, mc = error_rate(kind, design, k, margin, seed=k + int(10 * margin))
    assert rate <= ALPHA + 2 * mc, f"P(any wrong word) = {rate:.3f} in {kind}, {design}, k = {k}"


def test_the_rule_it_replaced_fails_the_referee_design():
    """The check can fail: Holm over the claims lets a wrong "yes" through in the referee's design, far
    above 5 % for 10 and 20 claims (the referee measured 9, 20 and 32 % for 4, 10 and 20)."""
    rates = {k: simulate("direction", "all at 0", k, MARGIN, seed=5, rule="claims")[0] for k in (4, 10, 20)}
    assert rates[10] > 0.12 and rates[20] > 0.2, rates
    assert rates[4] > ALPHA + 2 * np.sqrt(ALPHA * (1 - ALPHA) / REPEATS), rates


def power(k: int, effect: float, rng, *, words: bool) -> float:
    """P("yes") for one claim of effect ``effect`` standard errors (in its direction) among k - 1 null
    claims with margins, under Holm over the words (``words``) or over the claims."""
    from posteval.metrics.verdicts import holm, holm_words

    hits = 0
    for _ in range(REPEATS // 4):
        est = -np.r_[effect, np.zeros(k - 1)] + rng.normal(0.0, SE, k)
        pws = [word_pvalues(normal_interval(e), direction=-1, margin=MARGIN) for e in est]
        if words:
            said = decide(holm_words(pws)[0])
        else:
            ps = np.array([min(1.0, 2 * min(pw.values())) for pw in pws])
            f = holm(ps)[0] / ps[0] if ps[0] > 0 else 1.0
            said = decide({w: min(1.0, 2 * v * f) for w, v in pws[0].items()})
        hits += said == "yes"
    return hits / (REPEATS // 4)


def test_the_power_for_an_effect_the_chapters_resolve_is_kept():
    """An effect of 5 standard errors among 9 null claims with margins: "yes" as often under Holm over
    the words as under the rule it replaced, within Monte Carlo error (both over 80 %)."""
    rng = np.random.default_rng(11)
    new, old = power(10, 5.0, rng, words=True), power(10, 5.0, rng, words=False)
    assert new > 0.8 and old > 0.8
    assert new >= old - 3 * np.sqrt(old * (1 - old) / (REPEATS // 4)), (new, old)
