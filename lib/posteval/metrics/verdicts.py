"""Verdicts: "yes", "no" or "not resolved" (and "not testable"), their negation and combination, the
best of several models, margins, equivalence, and Holm's control of the family-wise error rate.

**One rule decides every word**, here and in the claims table
(:func:`posteval.metrics.claims.evaluate_claims`): each word a claim can take is a one-sided test of
the hypothesis under which that word would be wrong, with its p-value from the claim's
:class:`~posteval.metrics.intervals.Interval` (:func:`word_pvalues`); Holm's adjustment runs over
*every word of every claim* of a family (:func:`holm_words`), and a word is said when its adjusted
p-value is below 1 - level (:func:`decide`). :func:`lower`, :func:`best_of`, :func:`unbeaten`,
:func:`ranks_above_all`, :func:`ranking_flips` and :func:`posteval.metrics.ranking.leads` decide
through it, their family the words of their pairwise comparisons; an intersection-union "yes" (every
part holds) needs no more adjustment (Berger 1982).

**What it controls**: the probability that a family says *any* wrong word (a false "yes", a false
"no" at any margin, a false "calibrated", "under-covers" or "over-covers") is at most 1 - level,
whatever the effects, margins and dependence between the claims: each word's hypothesis is a null of
Holm's procedure and each p-value is valid for it, which is all Holm's proof needs (Holm 1979,
Theorem 1). Adjusting over the claims instead, with a claim's p taken from its smallest word, does not
hold this bound once claims carry margins: a claim whose correct word is strongly resolved is then
ranked first and its wrong word tested with a smaller multiplier (simulated in
``tests/test_error_control.py``).

:func:`verdict`, :func:`beyond_margin` and :func:`within_margin` are the unadjusted interval
inversions, for the claim that an effect is positive (``direction=+1``) or negative
(``direction=-1``), given its interval ``[lo, hi]`` at level 1 - alpha and a margin ``m >= 0``:

* **yes** if the interval excludes 0 on the claimed side (``lo > 0`` for a positive claim);
* **no** if it excludes 0 on the other side, or lies entirely within ``[-m, m]``;
* **not resolved** otherwise.

They read one interval alone, without any adjustment: documented helpers, which nothing in the
package uses to decide a word.

Holm's adjustment (Holm 1979: sort p_(1) <= ... <= p_(K), p~_(j) = max_{i <= j} min(1, (K - i + 1)
p_(i)), over the K words of a family) keeps the probability of any false word at most alpha under any
configuration of true and false nulls. A claim alone with its two words is the 95 % interval's
test: its smaller p-value doubled, "yes" when the interval lies on the claimed side of 0.

References: S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Stat.
6 (1979) 65; D. J. Schuirmann, "A comparison of the two one-sided tests procedure ...", J.
Pharmacokinet. Biopharm. 15 (1987) 657 (equivalence); R. L. Berger, "Multiparameter hypothesis
testing and acceptance sampling", Technometrics 24 (1982) 295 (intersection-union: a claim made of
parts, each at level alpha, is a test at level alpha; :func:`all_of`).

Example
-------
>>> verdict(0.1, 0.4), verdict(0.1, 0.4, direction=-1), verdict(-0.01, 0.02, margin=0.05)
('yes', 'no', 'no')
>>> negate("yes"), all_of("yes", "not resolved")
('no', 'not resolved')
>>> [round(float(p), 3) for p in holm([0.01, 0.04, 0.03])]
[0.03, 0.06, 0.06]
>>> decide(holm_words([{"yes": 0.001, "no": 0.999}])[0])
'yes'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .intervals import Interval, Measurements

VERDICTS = ("yes", "no", "not resolved")
NOT_RESOLVED = "not resolved"
#: The fourth word: a claim whose preconditions fail (a model that fails the physics checks, too few
#: seeds) is not tested; its reason is recorded beside it (``claim_reason.<name>``).
NOT_TESTABLE = "not testable"
#: The order in which words that are all resolved at once are said: the claimed word first, then the
#: signs (an interval inside the margin and off zero is "calibrated", not "over-covers").
PRECEDENCE = ("yes", "below", "above", "no")

__all__ = ["VERDICTS", "NOT_RESOLVED", "NOT_TESTABLE", "PRECEDENCE", "word_pvalues", "holm_words", "decide",
           "deciding_word",
           "verdict", "negate", "all_of", "beyond_margin", "within_margin", "against_noise_floor", "holm",
           "best_of", "lower", "unbeaten", "ranks_above_all", "ranking_flips"]


def word_pvalues(iv: Interval, *, direction: int, margin: float = 0.0, boundary: float = 0.0,
                 signed: bool = False) -> dict[str, float]:
    """The one-sided p-value of every word a claim can take: each word's p rejects the hypothesis
    under which that word would be wrong (``iv`` an :class:`~posteval.metrics.intervals.Interval`,
    its dual p-values :meth:`~posteval.metrics.intervals.Interval.p_value`; effect = value - boundary,
    m the margin):

    * direction +1 (-1 mirrors it): "yes" rejects effect <= 0; "no" rejects effect >= m (the claimed
      effect is absent or smaller than the margin; m = 0: the effect has the other sign);
    * direction 0, ``signed`` (a calibration question): "yes" rejects |effect| >= m (two one-sided
      tests: the larger of the two p-values), "below" rejects effect >= 0, "above" rejects effect <= 0;
    * direction 0, plain equivalence: "yes" as above, "no" rejects |effect| <= m on the nearer side.

    Reference: Schuirmann (1987), *J. Pharmacokinet. Biopharm.* 15, 657 (two one-sided tests);
    Casella and Berger (2002), *Statistical Inference*, 2nd ed., 9.2.1 (a test from an interval).

    >>> from posteval.metrics.intervals import Interval
    >>> iv = Interval(-0.3, -0.5, -0.1, 0.95, 0.0, (0.2 / 1.959964) ** 2, 1, 100)
    >>> {k: round(v, 4) for k, v in word_pvalues(iv, direction=-1).items()}
    {'yes': 0.0016, 'no': 0.9984}
    """
    if direction not in (1, -1, 0):
        raise ValueError(f"direction must be +1, -1 or 0, got {direction!r}")
    m = _margin(margin)
    b = float(boundary)
    if direction != 0:
        up, down = ("greater", "less") if direction == 1 else ("less", "greater")
        return {"yes": iv.p_value(b, up), "no": iv.p_value(b + direction * m, down)}
    if m == 0:
        raise ValueError("an equivalence (direction 0) needs a margin > 0")
    yes = max(iv.p_value(b - m, "greater"), iv.p_value(b + m, "less"))
    if signed:
        return {"yes": yes, "below": iv.p_value(b, "less"), "above": iv.p_value(b, "greater")}
    return {"yes": yes, "no": min(iv.p_value(b + m, "greater"), iv.p_value(b - m, "less"))}


def holm_words(pvalues: Sequence[Mapping[str, float]]) -> list[dict[str, float]]:
    """Holm's adjustment over every word of a family: ``pvalues`` holds one mapping {word: one-sided p}
    per claim (:func:`word_pvalues`); all K words of all claims are one family of hypotheses (each word's
    null: the truth under which the word would be wrong), adjusted by :func:`holm`,

        p~_(j) = max_{i <= j} min(1, (K - i + 1) p_(i)),

    and returned in the same shape. Rejecting every word with p~ < alpha keeps the probability of any
    wrong word at most alpha under any configuration of effects and margins and any dependence (Holm
    1979, Theorem 1: nothing more than a valid p-value per hypothesis is needed).

    Reference: S. Holm, "A simple sequentially rejective multiple test procedure", *Scand. J. Statist.*
    6 (1979) 65.

    >>> holm_words([{"yes": 0.001, "no": 0.999}, {"yes": 0.02, "no": 0.98}])
    [{'yes': 0.004, 'no': 1.0}, {'yes': 0.06, 'no': 1.0}]
    """
    flat = [float(p) for pw in pvalues for p in pw.values()]
    if any(len(pw) == 0 for pw in pvalues):
        raise ValueError("pvalues: every claim needs at least one word")
    adjusted = holm(flat) if flat else np.array([])
    out, i = [], 0
    for pw in pvalues:
        out.append({w: float(adjusted[i + j]) for j, w in enumerate(pw)})
        i += len(pw)
    return out


def decide(adjusted: Mapping[str, float], *, level: float = 0.95) -> str:
    """The word of one claim from its words' adjusted p-values (:func:`holm_words` over its family):
    every word w with

        p~_w < 1 - level

    is resolved, and the first of them in :data:`PRECEDENCE` is said ("yes" before a calibration's
    sides: an interval inside the margin and off zero is "calibrated"); none: "not resolved". The same
    rule decides "yes", "no", "under-covers" and "over-covers": no word is read from an unadjusted
    interval.

    Reference: Holm (1979), *Scand. J. Statist.* 6, 65.

    >>> decide({"yes": 0.004, "no": 1.0}), decide({"yes": 0.06, "no": 1.0})
    ('yes', 'not resolved')
    >>> decide({"yes": 0.012, "below": 1.0, "above": 0.003})   # inside the margin and above 0
    'yes'
    """
    alpha = 1.0 - float(level)
    for w, p in adjusted.items():
        if not (0.0 <= float(p) <= 1.0):
            raise ValueError(f"adjusted[{w!r}]: an adjusted p-value must lie in [0, 1], got {p!r}")
    resolved = [w for w, p in adjusted.items() if p < alpha]
    for w in PRECEDENCE:
        if w in resolved:
            return w
    return NOT_RESOLVED


def deciding_word(adjusted: Mapping[str, float], said: str, raw: Mapping[str, float] | None = None) -> str:
    """The word whose adjusted p-value a claim's word rests on: the word said, or, for "not resolved",
    the word nearest to being said (the smallest adjusted p-value, how close the claim came to 1 - level;
    among equal adjusted p-values the smallest ``raw`` one, the word Holm's step reached first).

    Reference: Holm (1979), *Scand. J. Statist.* 6, 65 (the adjusted p-values compared with 1 - level).

    >>> deciding_word({"yes": 0.004, "no": 1.0}, "yes"), deciding_word({"yes": 0.3, "no": 0.08}, "not resolved")
    ('yes', 'no')
    >>> deciding_word({"yes": 0.56, "no": 0.56}, "not resolved", raw={"yes": 0.5, "no": 0.28})
    'no'
    """
    if said in adjusted:
        return said
    return min(adjusted, key=lambda w: (adjusted[w], (raw or {}).get(w, 0.0)))


def _bounds(lo, hi) -> tuple[float, float]:
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"lo and hi must be finite, got {lo!r}, {hi!r}")
    if lo > hi:
        raise ValueError(f"lo ({lo}) must not exceed hi ({hi})")
    return lo, hi


def _margin(margin) -> float:
    margin = float(margin)
    if not np.isfinite(margin) or margin < 0:
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
    return margin


def verdict(lo: float, hi: float, *, direction: int = 1, margin: float = 0.0) -> str:
    """"yes", "no" or "not resolved" for the claim "the effect has the sign of ``direction``", from
    its interval ``[lo, hi]`` at level 1 - alpha and a margin m >= 0: the unadjusted interval
    inversion, a documented helper (the package decides its words by :func:`word_pvalues` and
    :func:`decide`, with Holm's adjustment within a family). With [l, h] the interval
    turned to the claimed direction ([lo, hi] for +1, [-hi, -lo] for -1):

        "yes"  if l > 0                          (a one-sided test at alpha / 2),
        "no"   if h < 0 or -m <= lo and hi <= m  (the other sign, or equivalence: practically none),
        "not resolved" otherwise.

    Reference: Casella and Berger (2002), *Statistical Inference*, 2nd ed., section 9.2.1 (a test
    from inverting an interval: reject theta = 0 when the interval excludes it); Schuirmann (1987),
    *J. Pharmacokinet. Biopharm.* 15, 657 (equivalence: the interval inside [-m, m], two one-sided tests).

    >>> verdict(-0.3, -0.1, direction=-1), verdict(-0.3, -0.1), verdict(-0.02, 0.03, margin=0.05), verdict(-0.1, 0.3)
    ('yes', 'no', 'no', 'not resolved')
    """
    lo, hi = _bounds(lo, hi)
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")
    margin = _margin(margin)
    slo, shi = (lo, hi) if direction == 1 else (-hi, -lo)  # the interval in the claimed direction
    if slo > 0:
        return "yes"
    if shi < 0 or (-margin <= lo and hi <= margin):
        return "no"
    return NOT_RESOLVED


def negate(word: str) -> str:
    """The verdict of the opposite claim: "yes" <-> "no"; "not resolved" stays.

    A claim and its complement are decided by one interval: what resolves one resolves the other
    with the opposite word (e.g. :func:`within_margin` is the negation of :func:`beyond_margin`,
    equivalence against difference, Schuirmann 1987, *J. Pharmacokinet. Biopharm.* 15, 657).

    >>> negate("yes"), negate("no"), negate("not resolved")
    ('no', 'yes', 'not resolved')
    """
    if word not in VERDICTS:
        raise ValueError(f"word: expected one of {VERDICTS}, got {word!r}")
    return {"yes": "no", "no": "yes"}.get(word, NOT_RESOLVED)


def all_of(*verdicts: str) -> str:
    """One verdict of a claim made of parts: "yes" if all are, "no" if any is, else "not resolved".

    The intersection-union rule: the claim "every part holds" is rejected as false (a "yes") only
    when each part is, and the combined test has the parts' level without any adjustment.

    Reference: Berger (1982), "Multiparameter hypothesis testing and acceptance sampling",
    *Technometrics* 24, 295 (intersection-union tests).

    >>> all_of("yes", "yes"), all_of("yes", "no", "not resolved")
    ('yes', 'no')
    """
    if not verdicts:
        raise ValueError("all_of needs at least one verdict")
    for v in verdicts:
        if v not in VERDICTS:
            raise ValueError(f"verdicts must be among {VERDICTS}, got {v!r}")
    if "no" in verdicts:
        return "no"
    return "yes" if all(v == "yes" for v in verdicts) else NOT_RESOLVED


def beyond_margin(lo: float, hi: float, margin: float) -> str:
    """"yes" if ``[lo, hi]`` lies outside ``[-margin, margin]`` (``|effect| > margin``), "no" if
    inside, else "not resolved":

        "yes" if lo > m or hi < -m,   "no" if -m <= lo and hi <= m.

    Reference: Schuirmann (1987), *J. Pharmacokinet. Biopharm.* 15, 657 (the interval inside the
    margin is the two one-sided tests' equivalence, here the "no"); the "yes" is the interval
    excluding the margin on one side (a one-sided test against +-m).

    >>> beyond_margin(0.2, 0.3, 0.1), beyond_margin(-0.05, 0.05, 0.1), beyond_margin(0.05, 0.2, 0.1)
    ('yes', 'no', 'not resolved')
    """
    lo, hi = _bounds(lo, hi)
    margin = _margin(margin)
    if lo > margin or hi < -margin:
        return "yes"
    if -margin <= lo and hi <= margin:
        return "no"
    return NOT_RESOLVED


def within_margin(lo: float, hi: float, margin: float) -> str:
    """Equivalence: "yes" if ``[lo, hi]`` lies inside ``[-margin, margin]``, "no" if outside, else
    "not resolved" (the negation of :func:`beyond_margin`):

        "yes" if -m <= lo and hi <= m,   "no" if lo > m or hi < -m.

    Reference: Schuirmann (1987), "A comparison of the two one-sided tests procedure and the power
    approach for assessing the equivalence of average bioavailability", *J. Pharmacokinet.
    Biopharm.* 15, 657 (equivalence when the interval lies inside the margin).

    >>> within_margin(-0.01, 0.02, 0.05), within_margin(0.06, 0.1, 0.05), within_margin(0.0, 0.1, 0.05)
    ('yes', 'no', 'not resolved')
    """
    return negate(beyond_margin(lo, hi, margin))


def against_noise_floor(lo: float, floor: float) -> str:
    """The word of a test of exactness by a statistic's noise floor (an exact sampler's 95 % quantile):
    "miscalibrated" when the interval's lower end lies above it, else "not rejected":

        "miscalibrated" if lo > floor, else "not rejected".

    A test that does not reject is no evidence of calibration (that needs an interval inside a margin,
    the equivalence of :func:`word_pvalues`), so this rule never says "calibrated".

    Reference: Lemos et al. (2023), "Sampling-based accuracy testing of posterior estimators for general
    inference", ICML (TARP's test against an exact sampler); Schuirmann (1987), *J. Pharmacokinet.
    Biopharm.* 15, 657 (why non-rejection is not equivalence).

    >>> against_noise_floor(0.08, 0.05), against_noise_floor(0.03, 0.05)
    ('miscalibrated', 'not rejected')
    """
    return "miscalibrated" if float(lo) > float(floor) else "not rejected"


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values (same order as the input); NaN stays NaN (not tested).

    With the k finite p-values sorted, p_(1) <= ... <= p_(k):

        p~_(j) = max_{i <= j} min(1, (k - i + 1) p_(i));

    rejecting where p~ < alpha holds the family-wise error rate at alpha under any configuration
    of true and false nulls.

    Reference: Holm (1979), "A simple sequentially rejective multiple test procedure", *Scand. J.
    Statist.* 6, 65.

    Example: 3 x 0.01 = 0.03, max(0.03, 2 x 0.03) = 0.06, max(0.06, 1 x 0.04) = 0.06:

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    >>> holm([0.2, 0.001])
    array([0.2  , 0.002])
    >>> holm([0.01, np.nan, 0.04]).tolist()   # two tested
    [0.02, nan, 0.04]
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"pvalues: expected a 1-D sequence, got shape {p.shape}")
    ok = np.isfinite(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("pvalues: every p-value must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(ok)
    k = idx.size
    if k == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    adj = np.minimum(1.0, np.maximum.accumulate((k - np.arange(k)) * p[order]))
    out[order] = adj
    return out


def _lower_words(diffs: Sequence[Interval], *, margin: float = 0.0) -> tuple[list[str], list[str]]:
    """Per interval of a - b, the word on "a is lower than b" by the one rule (:func:`word_pvalues`,
    direction -1, and :func:`decide`): alone (a family of its own two words) and after Holm's adjustment
    over every word of all of ``diffs`` (one family)."""
    pws = [word_pvalues(d, direction=-1, margin=margin) for d in diffs]
    alone = [decide(holm_words([pw])[0], level=d.level) for pw, d in zip(pws, diffs)]
    adjusted = [decide(adj, level=d.level) for adj, d in zip(holm_words(pws), diffs)]
    return alone, adjusted


def _pairwise_lower(measure: Measurements, metric: str, candidates: Sequence[str]) -> set[tuple[str, str]]:
    """The ordered pairs (x, y) with "x is lower than y" resolved, Holm over the words of the k (k - 1) / 2 pairs."""
    pairs = [(x, y) for i, x in enumerate(candidates) for y in candidates[i + 1:]]
    _, words = _lower_words([measure.difference(metric, x, y) for x, y in pairs])
    return ({(x, y) for (x, y), w in zip(pairs, words) if w == "yes"}
            | {(y, x) for (x, y), w in zip(pairs, words) if w == "no"})


def best_of(measure: Measurements, metric: str, candidates: Sequence[str]) -> tuple[str, str]:
    """The candidate with the lowest ``metric`` and the verdict on "it is lower than every other
    candidate", :func:`ranks_above_all` of the leader:

        leader = argmin_c estimate(c),   word = ranks_above_all(leader, candidates),

    each part "leader lower than o" decided by the one rule (:func:`word_pvalues` on the paired
    interval of leader - o, ``measure.difference``, then :func:`decide`). The "yes" is an
    intersection-union test (every part "yes" on its own p, no adjustment); a "no" (some part
    resolved the other way) is read after Holm's adjustment over the words of the k - 1 parts.

    ``measure`` is a :class:`posteval.metrics.intervals.Measurements`.

    Reference: Berger (1982), *Technometrics* 24, 295 (an intersection-union test needs no
    multiplicity adjustment); Holm (1979), *Scand. J. Statist.* 6, 65.

    >>> from posteval.metrics.intervals import Measurements
    >>> x = np.linspace(0, 1, 50)
    >>> best_of(Measurements(event_scores={"crps": {"a": x, "b": x + 1, "c": x + 2}}), "crps", ["a", "b", "c"])
    ('a', 'yes')
    """
    if len(candidates) < 2:
        raise ValueError(f"best_of needs at least two candidates, got {list(candidates)}")
    leader = min(candidates, key=lambda m: measure.estimate(metric, m))
    return leader, ranks_above_all(measure, metric, leader, candidates)


def lower(measure: Measurements, metric: str, a: str, b: str, *, margin: float = 0.0) -> str:
    """Verdict on "a is lower than b on ``metric``" by the one rule of the claims table, for one
    comparison (a family of one: Holm's p is its own p). With I the paired interval of
    metric(a) - metric(b) (``measure.difference``) and p_w = :func:`word_pvalues` (I, direction=-1,
    margin=m):

        p_yes rejects effect >= 0,  p_no rejects effect <= -m,  p~ = holm_words([p_w]) (its two words),
        word = decide(p~):  "yes" if p~_yes < 1 - level, else "no" if p~_no < 1 - level,
        else "not resolved"

    (with m = 0: "yes" when the interval lies below 0, "no" when above). For several comparisons
    use :func:`~posteval.metrics.claims.evaluate_claims`, which adjusts within a family.

    Reference: Casella and Berger (2002), *Statistical Inference*, 2nd ed., section 9.2.1 (the test
    from the interval); Schuirmann (1987), *J. Pharmacokinet. Biopharm.* 15, 657 (the margin).

    >>> from posteval.metrics.intervals import Measurements
    >>> x = np.linspace(0, 1, 50)
    >>> m = Measurements(event_scores={"crps": {"a": x, "b": x + 1}})
    >>> lower(m, "crps", "a", "b"), lower(m, "crps", "b", "a")
    ('yes', 'no')
    """
    return _lower_words([measure.difference(metric, a, b)], margin=margin)[0][0]


def unbeaten(measure: Measurements, metric: str, candidates: Sequence[str]) -> list[str]:
    """The candidates that no other candidate is resolved lower than on ``metric``, in the order of
    ``candidates``: every unordered pair (x, y) is one comparison of the paired interval of x - y by
    the one rule (:func:`word_pvalues`, direction -1, :func:`decide`), Holm's adjustment over the
    words of the k (k - 1) / 2 pairs (one family), and

        { c : no pair resolves another candidate lower than c }.

    Reference: a subset of candidates that keeps every one not shown worse than another, in the
    spirit of Gupta (1965), "On some multiple decision (selection and ranking) rules",
    *Technometrics* 7, 225; Holm (1979), *Scand. J. Statist.* 6, 65 (the adjustment over the pairs).

    >>> from posteval.metrics.intervals import Measurements
    >>> x = np.linspace(0, 1, 50)
    >>> m = Measurements(event_scores={"crps": {"a": x, "b": x, "c": x + 1}})
    >>> unbeaten(m, "crps", ["a", "b", "c"])   # a and b tie; both beat c
    ['a', 'b']
    """
    beaten = {y for _, y in _pairwise_lower(measure, metric, list(candidates))}
    return [name for name in candidates if name not in beaten]


def ranks_above_all(measure: Measurements, metric: str, a: str, candidates: Sequence[str]) -> str:
    """"a is lower than every other candidate b": each part "a lower than b" by the one rule
    (:func:`word_pvalues` on the paired interval of a - b, direction -1, :func:`decide`), then

        "yes" if every part is "yes" on its own p (an intersection-union test: no adjustment),
        "no"  if some part is "no" after Holm's adjustment over the words of the k - 1 parts,
        "not resolved" otherwise.

    Reference: Berger (1982), *Technometrics* 24, 295 (intersection-union tests); Holm (1979),
    *Scand. J. Statist.* 6, 65.

    >>> from posteval.metrics.intervals import Measurements
    >>> x = np.linspace(0, 1, 50)
    >>> m = Measurements(event_scores={"crps": {"flow": x, "mse": x + 1, "prior": x + 2}})
    >>> models = ["flow", "mse", "prior"]
    >>> ranks_above_all(m, "crps", "flow", models), ranks_above_all(m, "crps", "mse", models)
    ('yes', 'no')
    """
    others = [b for b in candidates if b != a]
    if not others:
        raise ValueError(f"ranks_above_all needs another candidate than {a!r}, got {list(candidates)}")
    alone, adjusted = _lower_words([measure.difference(metric, a, b) for b in others])
    if all(w == "yes" for w in alone):
        return "yes"
    return "no" if "no" in adjusted else NOT_RESOLVED


def ranking_flips(measure: Measurements, pointwise: str, distributional: str, candidates: Sequence[str]) -> str:
    """"yes" if every candidate unbeaten under ``pointwise`` is beaten under ``distributional``;
    "no" if one of them is lower than every other under ``distributional``; else "not resolved".

    With W = :func:`unbeaten` (pointwise; Holm over its pairs) and, under ``distributional``, every
    pair decided by the one rule with Holm's adjustment over the words of the k (k - 1) / 2 pairs (one family):
    "yes" if every w in W has some b resolved lower than it; "no" if some w in W is resolved lower
    than every other candidate.

    Reference: each part is an intersection-union claim, Berger (1982), *Technometrics* 24, 295;
    Holm (1979), *Scand. J. Statist.* 6, 65 (the adjustment over the pairs); a pointwise score (e.g.
    the MAE) can prefer another model than a proper score of the whole distribution (the CRPS,
    Gneiting and Raftery 2007, *J. Amer. Statist. Assoc.* 102, 359).

    >>> from posteval.metrics.intervals import Measurements
    >>> x = np.linspace(0, 1, 50)
    >>> m = Measurements(event_scores={"mae": {"flow": x + 1, "mse": x}, "crps": {"flow": x, "mse": x + 1}})
    >>> ranking_flips(m, "mae", "crps", ["flow", "mse"]), ranking_flips(m, "crps", "crps", ["flow", "mse"])
    ('yes', 'no')
    """
    leaders = unbeaten(measure, pointwise, candidates)
    wins = _pairwise_lower(measure, distributional, list(candidates))
    if all(any((b, w) in wins for b in candidates if b != w) for w in leaders):
        return "yes"
    above = [all((w, b) in wins for b in candidates if b != w) for w in leaders]
    return "no" if any(above) else NOT_RESOLVED
