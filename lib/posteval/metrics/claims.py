"""Claims as data: a chapter declares what it tests in one table, and one call decides every claim
with the family-wise error rate under control.

A :class:`Claim` names a metric, the models, the direction the *source* states (with the source
named in the sentence), a margin with its justification and its family. :func:`evaluate_claims`
computes each claim's effect and interval from a :class:`~posteval.metrics.intervals.Measurements`
(or takes a ready :class:`~posteval.metrics.intervals.Interval`), its p-value, Holm's adjustment
within the confirmatory family (exploratory claims are adjusted among themselves and their
sentence says "exploratory"), and its word.

One rule decides every word, in both directions (:func:`~posteval.metrics.verdicts.decide`): each
word has a one-sided p-value against the truth under which it would be wrong; Holm's adjustment runs
over every word of every claim of a family (:func:`~posteval.metrics.verdicts.holm_words`); a word is
said when its adjusted p-value is below 1 - level. So the probability that a family says any wrong
word ("yes", "no" at any margin, "calibrated", "under-covers", "over-covers") is at most 1 - level
(Holm 1979; simulated with margins, effects at 0, at the margin and mixed in
``tests/test_error_control.py``), and no word is read from an unadjusted interval.

Kinds of claim (``direction``):

* **+1 / -1**: "effect = metric(a) - metric(b) (or metric(a) - boundary) is > 0 / < 0": "yes" (the
  claimed sign), "no" (the effect in the claimed direction is below the margin: absent, of the other
  sign, or, with a margin, too small to matter).
* **0** (equivalence): "|effect| < margin": the claimed word (``words["yes"]``, e.g. "calibrated") by
  two one-sided tests against -margin and +margin, each at (1 - level) / 2 (the interval at
  ``level`` inside the margin, with the adjustment); for a signed question such as calibration the
  resolved side (``words["below"]``, ``words["above"]``); for a plain equivalence "no" beyond the
  margin. The margin is in the statistic's units, with its reason and when it was fixed
  (:mod:`posteval.margins`).
* **parts** (:func:`all_of`): a claim made of other claims; it holds when every part holds (an
  intersection-union test, valid without more adjustment; Berger 1982): "yes" if every part says
  "yes", "no" if one says "no". Its numbers are those of the part that decided its word
  (``decided_by``): the strongest "no", else the weakest part.
* **not testable**: a claim whose preconditions fail (``evaluate_claims(..., not_testable={name:
  reason})``) takes the fourth word, with its reason, and no part in the adjustment.

Example
-------
>>> from posteval.metrics.intervals import Measurements
>>> x = np.linspace(0.0, 1.0, 400)
>>> m = Measurements(event_scores={"crps": {"flow": x, "mse": x + 0.5}})
>>> table = evaluate_claims([Claim("flow_lower", "the flow has a lower CRPS than MSE regression (paper)",
...                                "crps", "flow", "mse", direction=-1)], m)
>>> table.loc["flow_lower", "word"]
'yes'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import numformat
from ..margins import REGISTRY, registered
from ._validation import level_value
from .intervals import Interval, Measurements
from .verdicts import NOT_RESOLVED, NOT_TESTABLE, VERDICTS, decide, deciding_word, holm_words, word_pvalues

__all__ = ["Claim", "evaluate_claims", "CALIBRATION_WORDS", "FAMILIES", "claim_words", "CLAIM_KEYS", "METRIC_WORDS",
           "effect_words", "verdict_reason", "unfaithful_claims"]

#: The families every chapter uses: Holm's adjustment holds the error rate within each family. A family is
#: any name: a field adds its own (chapter 3's "physics", the consistency checks of a reconstruction, is
#: :data:`posteval.physics.consistency.PHYSICS_FAMILY`).
FAMILIES = ("confirmatory", "exploratory")
#: The words of a calibration claim ("|coverage deviation| within a fixed margin").
CALIBRATION_WORDS = {"yes": "calibrated", "below": "under-covers", "above": "over-covers"}
#: The keys recorded per claim (``<key>.<name>``), see :func:`posteval.claims.record_claims`.
CLAIM_KEYS = ("claim", "claim_estimate", "claim_lo", "claim_hi", "claim_p", "claim_p_holm", "claim_sentence",
              "claim_reason", "claim_source", "claim_family", "claim_fixed", "claim_independent")


def claim_words() -> tuple[str, ...]:
    """Every word a claim can take: the verdicts of :mod:`~posteval.metrics.verdicts` ("yes", "no",
    "not resolved"), the calibration words (:data:`CALIBRATION_WORDS`) and "not testable".

    Reference: "no" covers both a refuted claim and an equivalence (an interval inside the margin,
    Schuirmann 1987, *J. Pharmacokinet. Biopharm.* 15, 657); "under-covers" / "over-covers" are the
    under- and overdispersed forecasts of Gneiting, Balabdaoui and Raftery (2007), "Probabilistic
    forecasts, calibration and sharpness", *J. R. Statist. Soc. B* 69, 243.

    >>> claim_words()
    ('yes', 'no', 'not resolved', 'calibrated', 'under-covers', 'over-covers', 'not testable')
    """
    return (*VERDICTS, *CALIBRATION_WORDS.values(), NOT_TESTABLE)


@dataclass(frozen=True)
class Claim:
    """One claim of a chapter.

    Parameters
    ----------
    name : key of the claim (``claim.<name>``)
    sentence : what a reader understands, as the source states it, the source named
    metric : the metric of :class:`Measurements` (unused for ``parts`` or a given interval)
    a, b : the models; effect = metric(a) - metric(b), or metric(a) - ``boundary`` when b is None
    direction : +1, -1 (the effect's claimed sign) or 0 (equivalence: |effect| < margin)
    margin, margin_reason : the equivalence margin (>= 0) and why it is that number
    family : "confirmatory" (the source's claims: Holm within them), "exploratory" (the book's own), or
        another name (e.g. "physics"); each family is adjusted among its own
    parts : names of claims that must all hold (an intersection-union claim)
    words : the words for "yes" (and for equivalence claims "below" / "above"), e.g. :data:`CALIBRATION_WORDS`
    source : the source of the claim (paper, Proxy-GRM, this book)
    registered : the name of its margin, tolerance or target in :data:`posteval.margins.REGISTRY` (its
        reason, unless ``margin_reason`` says more, and where it was set come from there)
    """

    name: str
    sentence: str
    metric: str | None = None
    a: str | None = None
    b: str | None = None
    direction: int = 1
    margin: float = 0.0
    margin_reason: str = ""
    boundary: float = 0.0
    family: str = "confirmatory"
    parts: tuple[str, ...] = ()
    words: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    registered: str = ""

    def __post_init__(self) -> None:
        if self.registered:
            if self.registered not in REGISTRY:
                raise ValueError(f"claim {self.name!r}: registered {self.registered!r} is not in posteval.margins")
            if not self.margin_reason:
                object.__setattr__(self, "margin_reason", REGISTRY[self.registered]["reason"])
        if not isinstance(self.name, str) or not self.name or any(c.isspace() for c in self.name):
            raise ValueError(f"name: expected a key without spaces, got {self.name!r}")
        if not isinstance(self.sentence, str) or not self.sentence.strip():
            raise ValueError(f"claim {self.name!r}: a claim needs a sentence a reader understands")
        if self.direction not in (1, -1, 0):
            raise ValueError(f"claim {self.name!r}: direction must be +1, -1 or 0, got {self.direction!r}")
        if not isinstance(self.family, str) or not self.family or any(c.isspace() for c in self.family):
            raise ValueError(f"claim {self.name!r}: family must be a name without spaces (e.g. one of {FAMILIES}), "
                             f"got {self.family!r}")
        m = float(self.margin)
        if not np.isfinite(m) or m < 0:
            raise ValueError(f"claim {self.name!r}: margin must be a finite number >= 0, got {self.margin!r}")
        if self.direction == 0 and m == 0:
            raise ValueError(f"claim {self.name!r}: an equivalence claim needs a margin > 0")
        if m > 0 and not self.margin_reason:
            raise ValueError(f"claim {self.name!r}: a margin needs its justification (margin_reason)")
        if self.parts and (self.metric or self.a or self.b):
            raise ValueError(f"claim {self.name!r}: a claim of parts takes no metric or models")
        unknown = set(self.words) - {"yes", "below", "above"}
        if unknown:
            raise ValueError(f"claim {self.name!r}: words keys must be 'yes', 'below', 'above', got {sorted(unknown)}")

    @property
    def display_sentence(self) -> str:
        """The sentence, marked when the claim is exploratory."""
        return self.sentence if self.family == "confirmatory" else f"{self.sentence} ({self.family})"


def _interval(claim: Claim, measure: Measurements | None, given: Mapping[str, Interval], level: float) -> Interval:
    if claim.name in given:
        iv = given[claim.name]
        if not isinstance(iv, Interval):
            raise ValueError(f"intervals[{claim.name!r}]: expected an Interval, got {type(iv).__name__}")
        if abs(iv.level - level) > 1e-12:
            raise ValueError(f"intervals[{claim.name!r}]: level {iv.level} differs from the table's {level}")
    elif measure is None or claim.metric is None or claim.a is None:
        raise ValueError(f"claim {claim.name!r}: no interval given and no metric/models to measure")
    elif claim.b is None:
        iv = measure.value(claim.metric, claim.a, level=level)
    else:
        iv = measure.difference(claim.metric, claim.a, claim.b, level=level)
    return iv


def _row(c: Claim, iv: Interval) -> dict:
    signed = "below" in c.words or "above" in c.words
    pw = word_pvalues(iv, direction=c.direction, margin=c.margin, boundary=c.boundary, signed=signed)
    return {"estimate": iv.estimate - c.boundary, "lo": iv.lo - c.boundary, "hi": iv.hi - c.boundary,
            "n_seeds": iv.n_seeds, "pw": pw}


def _untested(c: Claim, measure: Measurements | None, given: Mapping[str, Interval], level: float, reason: str) -> dict:
    try:
        iv = _interval(c, measure, given, level)
        est, lo, hi, n_seeds = iv.estimate - c.boundary, iv.lo - c.boundary, iv.hi - c.boundary, iv.n_seeds
    except (KeyError, ValueError):  # a model that was not run or not measured: nothing to show
        est = lo = hi = np.nan
        n_seeds = 0
    return {"estimate": est, "lo": lo, "hi": hi, "p": np.nan, "p_holm": np.nan, "n_seeds": n_seeds,
            "word": NOT_TESTABLE, "reason": reason, "decided_by": "", "deciding": ""}


def _said(c: Claim, word: str) -> str:
    if word in ("yes", "below", "above"):
        return c.words.get(word, "yes" if word == "yes" else "no")
    return word


def _combine(c: Claim, rows: Mapping[str, dict]) -> dict:
    missing = [p for p in c.parts if p not in rows]
    if missing:
        raise ValueError(f"claim {c.name!r}: parts {missing} are not claims declared before it")
    parts = {p: rows[p] for p in c.parts}
    words = [r["word"] for r in parts.values()]
    if any(w not in (*VERDICTS, NOT_TESTABLE) for w in words):
        raise ValueError(f"claim {c.name!r}: parts must be yes/no claims, got words {words}")
    if NOT_TESTABLE in words:
        # each failing part's reason once, without the parts' keys (a reader's sentence, not a key)
        why = "; ".join(dict.fromkeys(r["reason"] for r in parts.values() if r["word"] == NOT_TESTABLE))
        return {"estimate": np.nan, "lo": np.nan, "hi": np.nan, "p": np.nan, "p_holm": np.nan,
                "n_seeds": min(r["n_seeds"] for r in parts.values()), "word": NOT_TESTABLE, "reason": why,
                "decided_by": "", "deciding": ""}
    word = "no" if "no" in words else "yes" if all(w == "yes" for w in words) else NOT_RESOLVED
    # the part that decided the word: the most strongly resolved "no"; for "yes" the weakest part (every part
    # had to hold); for "not resolved" the weakest of the parts that did not say "yes"
    if word == "no":
        name = min((p for p, r in parts.items() if r["word"] == "no"), key=lambda p: parts[p]["p_holm"])
    else:
        pool = [p for p, r in parts.items() if word == "yes" or r["word"] != "yes"]
        name = max(pool, key=lambda p: parts[p]["p_holm"])
    d = parts[name]
    return {"estimate": d["estimate"], "lo": d["lo"], "hi": d["hi"], "p": d["p"], "p_holm": d["p_holm"],
            "n_seeds": min(r["n_seeds"] for r in parts.values()), "word": _said(c, word), "reason": "",
            "decided_by": name, "deciding": d["deciding"]}


def _at_independent_margins(claims: Sequence[Claim]) -> tuple[list[Claim], dict[str, str]]:
    """The claims with each ``after`` margin or target replaced by its value derived without the data
    (:mod:`posteval.margins`: ``independent``), and per claim what its word at that value is reported as:
    "changed" (a new value replaced the registered one), "same" (the derivation gives the registered value),
    "none" (an ``after`` entry without such a derivation) or "" (not registered, or fixed before)."""
    out, how = [], {}
    for c in claims:
        how[c.name] = ""
        if c.registered:
            r = registered(c.registered)
            if r.fixed == "after":
                how[c.name] = "none" if r.independent is None else "same" if r.independent == r.value else "changed"
                if how[c.name] == "changed":
                    if c.margin == r.value:
                        c = dataclasses.replace(c, margin=r.independent)
                    elif c.boundary == r.value:
                        c = dataclasses.replace(c, boundary=r.independent)
                    else:
                        how[c.name] = "none"  # the value enters the claim otherwise: the chapter reports it
        out.append(c)
    return out, how


def _checked_untested(claims: Sequence[Claim], not_testable: Mapping[str, str] | None) -> dict[str, str]:
    """``not_testable`` checked against the claims (unique names, known claims, a reason each)."""
    untested = dict(not_testable or {})
    names = [c.name for c in claims]
    if len(set(names)) != len(names):
        raise ValueError(f"claims: repeated names {sorted({n for n in names if names.count(n) > 1})}")
    unknown = sorted(set(untested) - set(names))
    if unknown:
        raise ValueError(f"not_testable: {unknown} are not claims of the table")
    for k, why in untested.items():
        if not isinstance(why, str) or not why.strip():
            raise ValueError(f"not_testable[{k!r}]: a claim that is not testable needs its reason")
    return untested


def _table(claims: Sequence[Claim], rows: Mapping[str, dict]) -> pd.DataFrame:
    """The claims table's frame from each claim's decided row, in the order of ``claims``."""
    columns = {"sentence": [c.display_sentence for c in claims], "source": [c.source for c in claims],
               "family": [c.family for c in claims], "direction": [c.direction for c in claims],
               "margin": [float(c.margin) for c in claims]}
    for key in ROW_KEYS:
        columns[key] = [rows[c.name][key] for c in claims]
    columns["margin_reason"] = [c.margin_reason for c in claims]
    columns["set_at"] = [REGISTRY[c.registered]["set_at"] if c.registered else "" for c in claims]
    columns["fixed"] = [registered(c.registered).fixed if c.registered else "" for c in claims]
    table = pd.DataFrame(columns, index=[c.name for c in claims])
    table["word_independent"], table["independent_margin"] = "", np.nan
    return table


def _add_independent_words(table: pd.DataFrame, claims: Sequence[Claim], measure, intervals, level: float,
                           not_testable) -> None:
    """Fill ``word_independent`` and ``independent_margin`` of ``table``: each claim with an ``after`` margin
    or target that has a value derived without the data, decided again (the whole table) at that value."""
    alt, how = _at_independent_margins(claims)
    changed = any(v == "changed" for v in how.values())
    again = (evaluate_claims(alt, measure, intervals=intervals, level=level, not_testable=not_testable,
                             independent=False) if changed else table)
    for c in claims:
        if how[c.name] in ("same", "changed"):
            table.loc[c.name, "independent_margin"] = registered(c.registered).independent
            table.loc[c.name, "word_independent"] = again.loc[c.name, "word"]
        elif c.parts and any(table.loc[p, "word_independent"] for p in c.parts):
            table.loc[c.name, "word_independent"] = again.loc[c.name, "word"]


def unfaithful_claims(claims: Sequence[Claim], unfaithful: Mapping[str, str]) -> dict[str, str]:
    """The one gate, for every model alike: every claim (without parts) whose subject ``a`` *or* comparator ``b``
    is a model that ``unfaithful`` names ({model: why it is not a faithful instance of its class, e.g. a sampler
    that fails its physics checks}), with that reason; for :func:`evaluate_claims`' ``not_testable``. A claim
    of parts is not testable when one of its parts is not (:func:`evaluate_claims` does it), so a comparison
    against an unfaithful comparator never becomes a win for the other model, and neither model's class is
    judged by an instance that misrepresents it.

    Reference: Berger (1982), *Technometrics* 24, 295 (a claim of parts is an intersection-union test: it
    holds only where every part is tested and holds, so an untestable part leaves it untestable).

    Example
    -------
    >>> c = [Claim("a_beats_b", "a has a lower CRPS than b (this book)", "crps", "a", "b", -1),
    ...      Claim("c_beats_a", "c has a lower CRPS than a (this book)", "crps", "c", "a", -1),
    ...      Claim("c_beats_d", "c has a lower CRPS than d (this book)", "crps", "c", "d", -1)]
    >>> unfaithful_claims(c, {"a": "a fails the W window"})
    {'a_beats_b': 'a fails the W window', 'c_beats_a': 'a fails the W window'}
    """
    unknown = [m for m, why in unfaithful.items() if not isinstance(why, str) or not why.strip()]
    if unknown:
        raise ValueError(f"unfaithful: {unknown} need the reason they are not faithful")
    out: dict[str, str] = {}
    for c in claims:
        if c.parts:
            continue
        whys = [unfaithful[m] for m in dict.fromkeys((c.a, c.b)) if m is not None and m in unfaithful]
        if whys:
            out[c.name] = "; ".join(whys)
    return out


def evaluate_claims(claims: Sequence[Claim], measure: Measurements | None = None, *,
                    intervals: Mapping[str, Interval] | None = None, level: float = 0.95,
                    not_testable: Mapping[str, str] | None = None, independent: bool = True) -> pd.DataFrame:
    """Decide every claim: one row per claim (index: name) with ``sentence``, ``source``, ``family``,
    ``direction``, ``margin``, ``estimate``, ``lo``, ``hi`` (of the effect), ``p`` and ``p_holm`` (the
    deciding word's one-sided p-value before and after the adjustment: the word said, or for "not
    resolved" the word nearest to being said, so that ``p_holm`` against 1 - level says how close the
    word was to its threshold), ``deciding`` (that word), ``n_seeds``, ``word``, ``reason``,
    ``decided_by`` (a claim of parts: the part whose numbers it shows), ``margin_reason``, ``set_at``
    and ``fixed`` (when a registered margin or target was set, and "before" or "after" the data it
    decides, :mod:`posteval.margins`; "" when none is registered), and ``word_independent`` with
    ``independent_margin``: for a claim whose registered margin or target was fixed after the data, its
    word and that value when the margin or target is the one derived without the data (the whole table
    decided again with those values, ``independent=True``); "" and NaN for the others, and where the
    registry has no such derivation.

    ``intervals`` gives a ready interval per claim name (e.g. a log ratio); all other claims are
    measured in ``measure``. Claims of ``parts`` come after the claims they name. ``not_testable``
    maps a claim's name to the reason its preconditions fail (a model that fails the physics checks):
    its word is "not testable", it takes no part in Holm's adjustment, and the reason is kept.

    The one rule, for every word (with alpha = 1 - level):

    * each word's one-sided p-value p_w (:func:`~posteval.metrics.verdicts.word_pvalues`: "yes"
      rejects effect <= 0 in the claimed direction, "no" rejects effect >= margin in it; for an
      equivalence "yes" is the two one-sided tests against -+margin, and a signed question's
      "below" / "above" reject the other sign);
    * Holm's adjustment over every word of every claim within each ``family``
      (:func:`~posteval.metrics.verdicts.holm_words`);
    * the words with adjusted p < alpha are resolved; the first in "yes", "below", "above", "no" is
      said (:func:`~posteval.metrics.verdicts.decide`), else "not resolved";
    * ``parts``: "yes" if every part is, "no" if one is (not adjusted again: any wrong word of a claim
      of parts is a wrong word of one of its parts).

    The probability of any wrong word in a family is at most alpha, whatever the effects and margins.

    Reference: Holm (1979), *Scand. J. Statist.* 6, 65 (the adjustment, over the words' hypotheses);
    Schuirmann (1987), *J. Pharmacokinet. Biopharm.* 15, 657 (two one-sided tests); Berger (1982),
    *Technometrics* 24, 295 (claims of parts).

    Example: five seeds per model; four words in the family (two per claim); the equivalence's p is
    the larger of its two one-sided p-values:

    >>> from posteval.metrics.intervals import Measurements
    >>> m = Measurements(seed_values={"crps": {"flow": [1.00, 1.10, 0.90, 1.00, 1.00],
    ...                                        "mse": [1.08, 1.22, 0.97, 1.10, 1.06],
    ...                                        "twin": [1.01, 1.09, 0.92, 1.02, 0.99]}})
    >>> claims = [Claim("lower", "the flow has a lower CRPS than MSE regression (paper)", "crps", "flow", "mse",
    ...                 direction=-1),
    ...           Claim("same", "the twin's CRPS is the flow's within 0.05 (paper)", "crps", "twin", "flow",
    ...                 direction=0, margin=0.05, margin_reason="about half the flow's lead"),
    ...           Claim("both", "both hold (paper)", parts=("lower", "same"))]
    >>> print(evaluate_claims(claims, m)[["estimate", "lo", "hi", "p", "p_holm", "word"]].round(4).to_string())
           estimate      lo      hi       p  p_holm word
    lower    -0.086 -0.1159 -0.0561  0.0007  0.0027  yes
    same      0.006 -0.0128  0.0248  0.0015  0.0044  yes
    both      0.006 -0.0128  0.0248  0.0015  0.0044  yes
    """
    level = level_value(level)
    given, untested = dict(intervals or {}), _checked_untested(claims, not_testable)
    rows = {c.name: (_untested(c, measure, given, level, untested[c.name]) if c.name in untested
                     else _row(c, _interval(c, measure, given, level))) for c in claims if not c.parts}
    # Holm over every word of the claims of each family (not-testable claims and claims of parts take no part)
    for fam in dict.fromkeys(c.family for c in claims):
        members = [c for c in claims if c.family == fam and not c.parts and c.name not in untested]
        for c, adjusted in zip(members, holm_words([rows[c.name]["pw"] for c in members])):
            r = rows[c.name]
            word = decide(adjusted, level=level)
            pw = r.pop("pw")
            w = deciding_word(adjusted, word, pw)
            r.update(p=pw[w], p_holm=adjusted[w], deciding=w, word=_said(c, word), reason="", decided_by="")
    for c in claims:
        if c.parts:
            rows[c.name] = _combine(c, rows)
    table = _table(claims, rows)
    if independent:
        _add_independent_words(table, claims, measure, intervals, level, not_testable)
    return table


#: the columns of :func:`evaluate_claims` that come from a claim's decision, in order
ROW_KEYS = ("estimate", "lo", "hi", "p", "n_seeds", "p_holm", "word", "reason", "deciding", "decided_by")


#: The book's metrics in a reader's words, for the tables that open its chapters (:func:`effect_words`); a
#: metric not listed is written with spaces for its underscores.
METRIC_WORDS = {"rmse": "RMSE", "mae": "MAE", "crps": "CRPS", "energy_score": "energy score",
                "chi2_ndf": "spectrum chi2/ndf", "coverage_deviation": "signed coverage",
                "conditional_coverage_error": "worst-octile coverage error", "tarp_error": "TARP error",
                "spread_skill": "spread / skill", "mmd": "MMD² to the exact posterior"}


def effect_words(claim: Claim, names: Mapping[str, str] | None = None,
                 metric_words: Mapping[str, str] | None = None) -> str:
    """What a claim's effect measures, in words: ``"CRPS: flow − MSE regression"`` for
    effect = metric(a) − metric(b), ``"signed coverage: flow"`` (or ``"... − 1"`` with a boundary) for one
    model, ``"all of its 2 parts"`` for a claim of parts (its effect is its weakest part's), ``"–"``
    for a claim given as a ready interval. ``names`` renames models ({code name: reader's name}),
    ``metric_words`` adds to or overrides :data:`METRIC_WORDS`. The scores are named as in Gneiting and
    Raftery (2007), *J. Am. Stat. Assoc.* 102, 359 (CRPS, energy score).

    Example
    -------
    >>> effect_words(Claim("x", "the flow beats the regression (paper)", "crps", "flow", "mlp_mse", -1),
    ...              names={"mlp_mse": "MSE regression"})
    'CRPS: flow − MSE regression'
    >>> effect_words(Claim("r", "a ratio near 1 (paper)", "rmse_ratio", "flow_mean", direction=0, margin=0.04,
    ...                    margin_reason="a user's tolerance", boundary=1.0))
    'rmse ratio: flow_mean − 1'
    """
    if claim.parts:
        return f"all of its {len(claim.parts)} parts"
    if claim.metric is None or claim.a is None:
        return numformat.MISSING
    names = names or {}
    words = {**METRIC_WORDS, **(metric_words or {})}
    metric = words.get(claim.metric, claim.metric.replace("_", " "))
    a = names.get(claim.a, claim.a)
    if claim.b is not None:
        return f"{metric}: {a} − {names.get(claim.b, claim.b)}"
    return f"{metric}: {a} − {claim.boundary:g}" if claim.boundary else f"{metric}: {a}"


def verdict_reason(row: Mapping, claim: Claim, *, level: float = 0.95) -> str:
    """Why a claim got its word, in one line: its interval against 0 or its margin, the seeds behind
    it and its adjusted p-value against its threshold 1 - level (a claim of parts: the part that decided
    it; a claim that is not testable: the reason its preconditions fail). ``row``: the claim's row of
    :func:`evaluate_claims` (``word``, ``estimate``, ``lo``, ``hi``, ``p_holm``, optionally ``n_seeds``,
    ``reason`` and ``decided_by``).

    The interval is the unadjusted one at ``level``, and the word comes from the adjusted p (Holm over
    every word of the claim's family), so an interval that excludes 0 can still be "not resolved": it
    says "does not exclude 0 at the family's level".
    References: Holm (1979), *Scand. J. Statist.* 6, 65 (the adjustment); Berger (1982), *Technometrics* 24,
    295 (a claim of parts, an intersection-union test).

    Example
    -------
    >>> c = Claim("x", "x beats y (paper)", "m", "x", "y", 1)
    >>> verdict_reason({"word": "yes", "estimate": 0.05, "lo": 0.02, "hi": 0.08, "p_holm": 0.004, "n_seeds": 40}, c)
    'difference 0.050\\xa0[0.020,\\xa00.080] lies above 0 (40 seeds, adjusted p 0.0040 against 0.05)'
    """
    word = row.get("word")
    if word == NOT_TESTABLE:
        return str(row.get("reason", "") or "") or "its preconditions fail"
    iv = numformat.one_line(numformat.interval(row["estimate"], row["lo"], row["hi"]))
    n = row.get("n_seeds")
    n = float(n) if n is not None else np.nan
    seeds = f"{int(n)} seed{'s' if n != 1 else ''}, " if np.isfinite(n) and n > 0 and not claim.parts else ""
    adj = "< 0.001" if row["p_holm"] < 0.001 else numformat.number(row["p_holm"], 2)
    p = f"{seeds}adjusted p {adj} against {1 - level:.2g}"
    if claim.parts:
        part = {"no": "a part that does not hold", "yes": "weakest part"}.get(
            {v: k for k, v in claim.words.items()}.get(word, word), "weakest part not resolved")
        return f"{part} {iv}; every part must hold ({p})"
    m = f"{claim.margin:.3g}"
    if claim.direction == 0:
        said = {v: k for k, v in claim.words.items()}.get(word, word)
        where = {"yes": f"lies inside ±{m}", "no": f"reaches beyond ±{m}", "below": "lies below 0",
                 "above": "lies above 0"}.get(said, f"is not resolved against ±{m}")
        return f"difference {iv} {where} ({p})"
    side, other = ("above", "below") if claim.direction > 0 else ("below", "above")
    if word == "yes":
        where = f"lies {side} 0"
    elif word == "no":
        where = f"stays {other} {claim.direction * claim.margin:.3g}" if claim.margin else f"lies {other} 0"
    else:
        where = "does not exclude 0 at the family's level"
    return f"difference {iv} {where} ({p})"
