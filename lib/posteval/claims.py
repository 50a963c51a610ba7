"""A chapter's claims, recorded for the prose and shown together in one table.

:func:`record_claims` records, for every row of a table from
:func:`posteval.metrics.claims.evaluate_claims`, the twelve keys ``claim.<name>`` (the word),
``claim_estimate.<name>``, ``claim_lo.<name>``, ``claim_hi.<name>``, ``claim_p.<name>``,
``claim_p_holm.<name>`` (the deciding word's p-value before and after Holm's adjustment over every word
of its family: below 0.05 the word is said), ``claim_sentence.<name>``, ``claim_reason.<name>`` (why a
claim is not testable; empty otherwise), ``claim_source.<name>`` (whose claim it is: the paper,
Proxy-GRM, this book), ``claim_family.<name>`` (the family it was adjusted in), ``claim_fixed.<name>``
(its registered margin or target fixed "before" or "after" the data) and ``claim_independent.<name>``
(for "after": its word at the margin derived without the data), and the text ``claim_ci.<name>`` = "estimate
[lo, hi]" in the book's number format (:func:`posteval.numformat.interval`) for the prose. :func:`claims_frame` collects every recorded
word under the given prefixes into one small table without numbers: the cell that shows it is what
a notebook test compares exactly across machines, while cells with numbers from training are not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from . import numformat
from .book import record, recorded
from .margins import registered
from .metrics.claims import CLAIM_KEYS, claim_words, effect_words, verdict_reason
from .metrics.verdicts import NOT_TESTABLE

if TYPE_CHECKING:
    from .metrics.claims import Claim

__all__ = ["record_claim", "record_claims", "record_table", "claims_frame", "claims_overview", "conclusions",
           "registered_margins", "margin_note", "OVERVIEW_INDEX", "ADJUSTED_P"]


def record_claim(name: str, word: str) -> str:
    """Record ``claim.<name>`` = ``word`` (a verdict or calibration word) and return it."""
    if word not in claim_words():
        raise ValueError(f"word: a claim is one of {claim_words()}, got {word!r}")
    return record(f"claim.{name}", word)


def record_claims(table: pd.DataFrame, *, prefix: str = "") -> pd.DataFrame:
    """Record the keys of every claim of ``table`` (see the module docstring); return the table."""
    need = {"word", "estimate", "lo", "hi", "p", "p_holm", "sentence"}
    missing = need - set(table.columns)
    if missing:
        raise ValueError(f"table: missing columns {sorted(missing)} (expected evaluate_claims' table)")
    for name, r in table.iterrows():
        record_claim(f"{prefix}{name}", r["word"])
        for key, col in zip(CLAIM_KEYS[1:], ("estimate", "lo", "hi", "p", "p_holm")):
            record(f"{key}.{prefix}{name}", float(r[col]))
        record(f"claim_sentence.{prefix}{name}", str(r["sentence"]))
        record(f"claim_reason.{prefix}{name}", str(r.get("reason", "") or ""))
        record(f"claim_source.{prefix}{name}", str(r.get("source", "") or ""))
        record(f"claim_family.{prefix}{name}", str(r.get("family", "") or ""))
        record(f"claim_ci.{prefix}{name}", _interval_text(r))
        # when its margin or target was fixed ("before", "after" the data; "" none registered) and, for "after",
        # the word at the value derived without the data ("" where the registry has no such derivation)
        record(f"claim_fixed.{prefix}{name}", str(r.get("fixed", "") or ""))
        record(f"claim_independent.{prefix}{name}", str(r.get("word_independent", "") or ""))
    return table


def record_table(table: pd.DataFrame, *, prefix: str = "", fill: Sequence[Claim] = ()) -> pd.DataFrame:
    """:func:`record_claims`, and for a table read from several records (chapter 4's
    :func:`posteval.rubric.claims.claims_table`) ``claim_seeds.<name>`` and ``claim_record.<name>``.

    Claims of ``fill`` the table lacks get the word "not testable" with the reason "not measured",
    NaN numbers, 0 seeds and the record "not measured", so that the prose can name every claim.
    Returns the table.
    """
    missing = {"n_seeds", "record"} - set(table.columns)
    if missing:
        raise ValueError(f"table: missing columns {sorted(missing)} (expected a claims table read from records)")
    record_claims(table, prefix=prefix)
    for name, r in table.iterrows():
        record(f"claim_seeds.{prefix}{name}", int(r["n_seeds"]))
        record(f"claim_record.{prefix}{name}", str(r["record"]))
    for c in fill:
        if c.name not in table.index:
            record_claim(f"{prefix}{c.name}", NOT_TESTABLE)
            for key in CLAIM_KEYS[1:6]:  # the numbers; the sentence and the reason follow
                record(f"{key}.{prefix}{c.name}", float("nan"))
            record(f"claim_sentence.{prefix}{c.name}", c.display_sentence)
            record(f"claim_reason.{prefix}{c.name}", "not measured")
            record(f"claim_source.{prefix}{c.name}", c.source)
            record(f"claim_family.{prefix}{c.name}", c.family)
            record(f"claim_seeds.{prefix}{c.name}", 0)
            record(f"claim_record.{prefix}{c.name}", "not measured")
    return table


def _interval_text(r) -> str:
    if not np.isfinite(r["estimate"]):
        return numformat.MISSING
    return numformat.interval(r["estimate"], r["lo"], r["hi"])


def conclusions(table: pd.DataFrame, *, effect: str = "estimate [interval]", p_holm: bool = True,
                seeds: bool = False) -> pd.DataFrame:
    """The claims as a reader's table, one row per claim sentence: the effect with its interval,
    the deciding word's adjusted p-value (``p_holm``: a word is said below 0.05, so it says how close the
    word was to its threshold) and the word, in the book's number format ("–" where a claim has no
    measured estimate or no test), a claim that is not testable with its reason.

    ``effect`` names the effect's column (chapter 4 says "difference [95 % interval]"); ``seeds``
    adds the number of seeds each claim was decided on (a table read from several records, with
    ``n_seeds``). The interval text is the prose's ``claim_ci.<name>`` kept on one line
    (:func:`posteval.numformat.one_line`).

    Example
    -------
    >>> t = pd.DataFrame({"sentence": ["A beats B"], "estimate": [0.12], "lo": [0.05], "hi": [0.19],
    ...                   "p_holm": [0.0004], "word": ["yes"]})
    >>> conclusions(t).iloc[0].tolist() == [numformat.one_line("0.12 [0.05, 0.19]"), "< 0.001", "yes"]
    True
    """
    if seeds and "n_seeds" not in table.columns:
        raise ValueError("seeds=True needs the column n_seeds (a claims table read from records)")
    out = pd.DataFrame({effect: [numformat.one_line(_interval_text(r)) for _, r in table.iterrows()]},
                       index=pd.Index(table["sentence"].to_numpy(), name="claim"))
    if p_holm:
        out[ADJUSTED_P] = [numformat.MISSING if not np.isfinite(p) else "< 0.001" if p < 0.001 else numformat.number(p, 2)
                           for p in table["p_holm"]]
    reasons = table["reason"] if "reason" in table.columns else pd.Series("", index=table.index)
    out["verdict"] = [f"{w}: {why}" if w == NOT_TESTABLE and why else w for w, why in zip(table["word"], reasons)]
    if seeds:
        out["seeds"] = table["n_seeds"].astype(int).to_numpy()
    return out


#: The header of the adjusted p-value's column in the reader's tables: a word is said when it is below 0.05.
ADJUSTED_P = "adjusted p (word below 0.05)"
#: The index of :func:`claims_overview`'s table: each claim as its source states it, then whose claim it is
#: and the Holm family it was adjusted in.
OVERVIEW_INDEX = "claim [its source (family)]"


def claims_overview(table: pd.DataFrame, claims: Sequence[Claim], *, names: Mapping[str, str] | None = None,
                    metric_words: Mapping[str, str] | None = None,
                    measured: Callable[[Claim, pd.Series], str] | None = None) -> pd.DataFrame:
    """The table a chapter opens with, one row per claim of ``claims`` (in that order), the one builder of
    every chapter's opening table: the claim as its source states it with whose claim it is and its
    Holm family (the index, "sentence [source (family)]"), what was measured
    (:func:`posteval.metrics.claims.effect_words`, models renamed by ``names``, metrics by
    ``metric_words``; or ``measured(claim, row)``), the verdict, and why in one line
    (:func:`posteval.metrics.claims.verdict_reason`: the interval against 0 or the margin, seeds and the
    adjusted p against 0.05; a claim that is not testable gives its reason).

    ``table``: a claims table (:func:`posteval.metrics.claims.evaluate_claims`, or a field's own with the
    columns ``word``, ``estimate``, ``lo``, ``hi``, ``p_holm``; ``n_seeds`` and ``reason`` when it has them).

    Example
    -------
    >>> from posteval.metrics.claims import Claim
    >>> t = pd.DataFrame({"estimate": [0.12], "lo": [0.05], "hi": [0.19], "p_holm": [0.002], "n_seeds": [3],
    ...                   "word": ["yes"]}, index=["ab"])
    >>> row = claims_overview(t, [Claim("ab", "A beats B", "crps", "a", "b", source="paper")]).iloc[0]
    >>> row.name, row["what we measured"], row["verdict"]
    ('A beats B [paper (confirmatory)]', 'CRPS: a − b', 'yes')
    """
    missing = {"estimate", "lo", "hi", "p_holm", "word"} - set(table.columns)
    if missing:
        raise ValueError(f"table: missing columns {sorted(missing)} (expected evaluate_claims' table)")
    rows = []
    for c in claims:
        if c.name not in table.index:
            raise ValueError(f"claims: {c.name!r} is not a claim of the table")
        r = table.loc[c.name]
        source = c.source or str(r.get("source", "") or "") or numformat.MISSING
        what = measured(c, r) if measured is not None else effect_words(c, names, metric_words)
        why = verdict_reason(r, c)
        note = margin_note(r, c)
        rows.append({OVERVIEW_INDEX: f"{c.sentence} [{source} ({c.family})]", "what we measured": what,
                     "verdict": r["word"], "why": f"{why}; {note}" if note else why})
    return pd.DataFrame(rows).set_index(OVERVIEW_INDEX)


def margin_note(row: Mapping, claim: "Claim") -> str:
    """For a claim decided with a margin or target fixed after the data (:mod:`posteval.margins`), what a
    reader must know beside its word: that it was fixed after, and the word at the value derived without
    the data (``row``: the claim's row of :func:`posteval.metrics.claims.evaluate_claims`); "" otherwise.

    Example
    -------
    >>> from posteval.metrics.claims import Claim
    >>> c = Claim("r", "the re-simulation error is small (this book)", direction=-1, margin=0.5,
    ...           registered="05.resim_margin")
    >>> margin_note({"fixed": "after", "word_independent": "no", "independent_margin": 0.25}, c)
    'its margin was fixed after the data were seen; at 0.250, derived without them, the word is no'
    """
    if str(row.get("fixed", "")) != "after" or not claim.registered:
        return ""
    word = str(row.get("word_independent", "") or "")
    if not word:
        return "its margin was fixed after the data were seen, and none was derived without them"
    value = numformat.number(float(row["independent_margin"]))
    return f"its margin was fixed after the data were seen; at {value}, derived without them, the word is {word}"


def claims_frame(prefixes=("claim.", "best.")) -> pd.DataFrame:
    """Every recorded string whose key starts with one of ``prefixes``, as a table key -> verdict.

    Numbers under those prefixes are an error (the table must not change from machine to machine).
    """
    if isinstance(prefixes, str) or not prefixes:
        raise ValueError(f"prefixes: expected a non-empty sequence of key prefixes, got {prefixes!r}")
    rows = {}
    for key, value in sorted(recorded().items()):
        if key.startswith(tuple(prefixes)):
            if not isinstance(value, str):
                raise ValueError(f"{key}: a verdict table holds words, got the number {value!r}")
            rows[key] = value
    if not rows:
        raise ValueError(f"no recorded words start with {tuple(prefixes)}")
    return pd.DataFrame({"verdict": rows}).rename_axis("claim")


def registered_margins(claims: Sequence[Claim]) -> pd.DataFrame:
    """The registered margins, tolerances and targets (:mod:`posteval.margins`) that ``claims`` use, one
    row each (index: what it is, its unit), with its value, why it is that number, when it was set
    (:attr:`posteval.margins.Registered.when`: the date, the commit left in the registry), whether before
    or after the data it decides (with what had been seen), and the value derived without the data
    with its derivation (for an ``after`` entry): the table a reader checks before the verdicts.

    Example
    -------
    >>> from posteval.metrics.claims import Claim
    >>> c = Claim("order", "the order changes nothing (this book)", direction=0, margin=0.0376,
    ...           registered="04.order_margin")
    >>> registered_margins([c]).iloc[0]["value"]
    '0.0376'
    """
    rows = {}
    for c in claims:
        if c.registered and c.registered not in rows:
            r = registered(c.registered)
            rows[c.registered] = {"value": numformat.number(r.value), "why": r.reason, "set": r.when,
                                  "fixed": f"{r.fixed} the data",
                                  "derived without the data": (f"{numformat.number(r.independent)}: {r.derivation}"
                                                               if r.independent is not None else
                                                               numformat.MISSING if r.fixed == "after" else "")}
    out = pd.DataFrame.from_dict(rows, orient="index",
                                 columns=["value", "why", "set", "fixed", "derived without the data"])
    out.index = pd.Index([f"{registered(k).unit}" for k in rows], name="margin or target (unit)")
    return out
