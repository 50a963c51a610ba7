"""Claims as data: a chapter declares what it tests in one table, and one call decides every claim
with the family-wise error rate under control.

A :class:`Claim` names a metric, the models, the direction the *source* states (with the source
named in the sentence), a margin with its justification and its family. :func:`evaluate_claims`
computes each claim's effect and interval from a :class:`~posteval.metrics.intervals.Measurements`
(or takes a ready :class:`~posteval.metrics.intervals.Interval`), its p-value, Holm's adjustment
within the confirmatory family (exploratory claims are adjusted among themselves and their
sentence says "exploratory"), and its word.

Kinds of claim (``direction``):

* **+1 / -1**: "effect = metric(a) - metric(b) (or metric(a) - boundary) is > 0 / < 0". p is the
  one-sided p-value in the claimed direction; "yes" when Holm's adjusted p < (1 - level) / 2 (the
  unadjusted rule is the interval excluding 0 on the claimed side). "no" when the interval excludes
  0 on the other side, or lies inside ``[-margin, margin]`` (with at least
  :data:`~posteval.metrics.intervals.MIN_SEEDS_EQUIVALENCE` seeds when seeds vary). A "no" is the
  claim refuted or practically absent, never a discovery, so it is read from the unadjusted interval.
* **0** (equivalence): "|effect| < margin". p is the larger of the two one-sided p-values against
  -margin and +margin (two one-sided tests); the claimed word (``words["yes"]``) when Holm's
  adjusted p < (1 - level) / 2 with enough seeds; otherwise, for a signed question such as
  calibration, the interval's side when it excludes 0 (``words["below"]``, ``words["above"]``), and
  for a plain equivalence "no" when the interval lies beyond the margin; else "not resolved".
* **parts** (:func:`all_of`): a claim made of other claims; it holds when every part holds, and its
  p is the largest of the parts' (an intersection-union test, valid without adjustment; Berger
  1982); estimate and interval are its weakest part's.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._validation import level_value
from .intervals import MIN_SEEDS_EQUIVALENCE, Interval, Measurements
from .verdicts import NOT_RESOLVED, VERDICTS, holm

__all__ = ["Claim", "evaluate_claims", "CALIBRATION_WORDS", "FAMILIES", "claim_words", "CLAIM_KEYS"]

#: The families every chapter uses: Holm's adjustment holds the error rate within each family. A family is
#: any name: a field adds its own (chapter 3's "physics", the consistency checks of a reconstruction, is
#: :data:`posteval.physics.consistency.PHYSICS_FAMILY`).
FAMILIES = ("confirmatory", "exploratory")
#: The words of a calibration claim ("|coverage deviation| within the noise-floor margin").
CALIBRATION_WORDS = {"yes": "calibrated", "below": "under-covers", "above": "over-covers"}
#: The keys recorded per claim (``<key>.<name>``), see :func:`posteval.claims.record_claims`.
CLAIM_KEYS = ("claim", "claim_estimate", "claim_lo", "claim_hi", "claim_p", "claim_p_holm", "claim_sentence")


def claim_words() -> tuple[str, ...]:
    """Every word a claim can take: the verdicts of :mod:`~posteval.metrics.verdicts` ("yes", "no",
    "not resolved") followed by the calibration words (:data:`CALIBRATION_WORDS`).

    Reference: "no" covers both a refuted claim and an equivalence (an interval inside the margin,
    Schuirmann 1987, *J. Pharmacokinet. Biopharm.* 15, 657); "under-covers" / "over-covers" are the
    under- and overdispersed forecasts of Gneiting, Balabdaoui and Raftery (2007), "Probabilistic
    forecasts, calibration and sharpness", *J. R. Statist. Soc. B* 69, 243.

    >>> claim_words()
    ('yes', 'no', 'not resolved', 'calibrated', 'under-covers', 'over-covers')
    """
    return (*VERDICTS, *CALIBRATION_WORDS.values())


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

    def __post_init__(self) -> None:
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


def _p(claim: Claim, iv: Interval) -> float:
    if claim.direction == 0:
        return max(iv.p_value(-claim.margin, "greater"), iv.p_value(claim.margin, "less"))
    return iv.p_value(0.0, "greater" if claim.direction == 1 else "less")


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


def _shift(iv: Interval, boundary: float) -> tuple[float, float, float]:
    return iv.estimate - boundary, iv.lo - boundary, iv.hi - boundary


def evaluate_claims(claims: Sequence[Claim], measure: Measurements | None = None, *,
                    intervals: Mapping[str, Interval] | None = None, level: float = 0.95,
                    min_seeds_equivalence: int = MIN_SEEDS_EQUIVALENCE) -> pd.DataFrame:
    """Decide every claim: one row per claim (index: name) with ``sentence``, ``source``, ``family``,
    ``direction``, ``margin``, ``estimate``, ``lo``, ``hi`` (of the effect), ``p``, ``p_holm``,
    ``n_seeds`` and ``word``.

    ``intervals`` gives a ready interval per claim name (e.g. a log ratio); all other claims are
    measured in ``measure``. Claims of ``parts`` come after the claims they name.

    The rules (see the module docstring), with alpha = (1 - level) / 2 and [lo, hi] the effect's
    interval (:meth:`~posteval.metrics.intervals.Interval.p_value` its dual p-values):

    * direction +-1: p = the one-sided p-value of effect = 0 in the claimed direction; "yes" when
      p_holm < alpha; "no" when [lo, hi] excludes 0 on the other side or lies inside
      [-margin, margin] (with at least ``min_seeds_equivalence`` seeds where seeds vary);
    * direction 0: p = max(p(effect <= -margin), p(effect >= margin)), the two one-sided tests;
      ``words["yes"]`` when p_holm < alpha with enough seeds, else the side of a signed question or
      "no" beyond the margin, else "not resolved";
    * Holm's adjustment within each ``family``, p_holm = :func:`~posteval.metrics.verdicts.holm`;
    * ``parts``: "yes" if every part is, "no" if one is; p = max of the parts' p (not adjusted).

    Reference: Holm (1979), *Scand. J. Statist.* 6, 65 (the adjustment); Schuirmann (1987),
    *J. Pharmacokinet. Biopharm.* 15, 657 (two one-sided tests); Berger (1982), *Technometrics* 24,
    295 (intersection-union claims of parts).

    Example: five seeds per model; Holm doubles the smaller p (0.0007 -> 0.0013); the equivalence p is
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
    lower    -0.086 -0.1159 -0.0561  0.0007  0.0013  yes
    same      0.006 -0.0128  0.0248  0.0015  0.0015  yes
    both      0.006 -0.0128  0.0248  0.0015  0.0015  yes
    """
    level = level_value(level)
    given = dict(intervals or {})
    names = [c.name for c in claims]
    if len(set(names)) != len(names):
        raise ValueError(f"claims: repeated names {sorted({n for n in names if names.count(n) > 1})}")
    rows: dict[str, dict] = {}
    alpha = (1 - level) / 2
    for c in claims:
        if c.parts:
            continue
        iv = _interval(c, measure, given, level)
        if c.boundary != 0.0:
            # the effect is metric - boundary: test on the interval's own scale
            est, lo, hi = _shift(iv, c.boundary)
            if c.direction == 0:
                p = max(iv.p_value(c.boundary - c.margin, "greater"), iv.p_value(c.boundary + c.margin, "less"))
            else:
                p = iv.p_value(c.boundary, "greater" if c.direction == 1 else "less")
        else:
            est, lo, hi = iv.estimate, iv.lo, iv.hi
            p = _p(c, iv)
        rows[c.name] = {"estimate": est, "lo": lo, "hi": hi, "p": p, "n_seeds": iv.n_seeds,
                        "seeds_vary": iv.seed_var > 0}
    # Holm within each family (parts claims are not adjusted: an intersection-union test)
    for fam in dict.fromkeys(c.family for c in claims):
        members = [c.name for c in claims if c.family == fam and not c.parts]
        if members:
            for k, p in zip(members, holm([rows[k]["p"] for k in members])):
                rows[k]["p_holm"] = float(p)
    for c in claims:
        if not c.parts:
            r = rows[c.name]
            r["word"] = _word(c, r, alpha, min_seeds_equivalence)
    for c in claims:
        if not c.parts:
            continue
        missing = [p for p in c.parts if p not in rows]
        if missing:
            raise ValueError(f"claim {c.name!r}: parts {missing} are not claims declared before it")
        parts = [rows[p] for p in c.parts]
        weakest = max(parts, key=lambda r: r["p_holm"])
        words = [r["word"] for r in parts]
        if any(w not in VERDICTS for w in words):
            raise ValueError(f"claim {c.name!r}: parts must be yes/no claims, got words {words}")
        word = "no" if "no" in words else "yes" if all(w == "yes" for w in words) else NOT_RESOLVED
        rows[c.name] = {"estimate": weakest["estimate"], "lo": weakest["lo"], "hi": weakest["hi"],
                        "p": max(r["p"] for r in parts), "p_holm": weakest["p_holm"],
                        "n_seeds": min(r["n_seeds"] for r in parts), "seeds_vary": any(r["seeds_vary"] for r in parts),
                        "word": c.words.get("yes", "yes") if word == "yes" else word}
    out = pd.DataFrame.from_dict(
        {c.name: {"sentence": c.display_sentence, "source": c.source, "family": c.family, "direction": c.direction,
                  "margin": float(c.margin), **rows[c.name]} for c in claims}, orient="index")
    return out.drop(columns="seeds_vary")


def _word(c: Claim, r: dict, alpha: float, min_seeds: int) -> str:
    lo, hi = r["lo"], r["hi"]
    enough = r["n_seeds"] >= min_seeds or not r["seeds_vary"]
    yes = r["p_holm"] < alpha
    if c.direction == 0:
        if yes and enough:
            return c.words.get("yes", "yes")
        if "below" in c.words or "above" in c.words:  # a signed question (calibration): the side, if resolved
            if hi < 0:
                return c.words.get("below", "no")
            if lo > 0:
                return c.words.get("above", "no")
            return NOT_RESOLVED
        # "no" only when the effect is resolved beyond the margin (an interval off zero but inside the
        # margin is not evidence against equivalence)
        return "no" if (lo > c.margin or hi < -c.margin) else NOT_RESOLVED
    if yes:
        return c.words.get("yes", "yes")
    other = hi < 0 if c.direction == 1 else lo > 0
    if other:
        return "no"
    if c.margin > 0 and -c.margin <= lo and hi <= c.margin and enough:
        return "no"
    return NOT_RESOLVED
