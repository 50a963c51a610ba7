"""Chapter 4's claims as data: Proxy-GRM's claims (a)-(e) in the direction the source states them,
and the book's own (its data ablation f, the ensemble against Proxy-SFT alone and bootstrap copies,
leak, order, unseen), each decided from paired per-seed differences.

Claim (d) compares the heterogeneous ensemble with its best single member (:data:`BEST`), chosen by
:func:`best_member` on seeds the test does not use. The book's (f) compares the proxy on a quarter of
the RL prompts with no proxy on all of them; the quarter run also takes a quarter of the steps, so
:func:`add_at_step` reads no proxy after as many steps (:data:`EQUAL_STEPS`) to measure that confound.

Every claim compares a metric of condition ``a`` with condition ``b`` (or with :data:`COLD`, the same
seed's policy before RL) at the last evaluated step, seed by seed. The conditions of one seed share
its world, data, cold start, proxies, judges and test pairs, and every seed draws its own, so a
seed's difference holds its own test-pair noise: the interval is rule 3 of
:mod:`posteval.metrics.intervals` (:func:`~posteval.metrics.intervals.paired_seed_interval`, a
Student-t interval over the seeds both conditions share).

One call, :func:`claims_table`, decides every claim with
:func:`posteval.metrics.claims.evaluate_claims`: Holm within the confirmatory family (the source's
claims) and within the exploratory one (the book's own); every claim names its source. Given several records (the live run, the
10-seed sweep, the power run), each claim is read from the one with the most seeds for its two
conditions (the first given on a tie); column ``record`` names it. A record extended after a look at
an earlier run is given cut to the seeds that were not looked at (:func:`unlooked`), so that no word
rests on the seeds whose results prompted the extension; the pooled run is then described
(:func:`extension_table`), not decided. The source's claims that this miniature cannot test are claims
too (:data:`CANNOT_TEST`, with their reasons), so that the chapter lists every claim of Proxy-GRM's
abstract and conclusions.

Transfer is always to the independent judges E3 and E4 (``transfer_indep``), which share neither a
training signal nor a decision rule with any proxy: the chapter's measure of transfer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from .. import numformat
from ..margins import registered, value
from ..metrics.claims import Claim, effect_words, evaluate_claims
from ..metrics.intervals import Interval, paired_seed_interval, seed_interval
from ..metrics.verdicts import NOT_RESOLVED, NOT_TESTABLE
from .report import final_frame

#: Name of the cold-start "condition" (step 0 of any condition of the seed).
COLD = "cold_start"
#: The chapter's transfer metric: mean transfer to the independent judges E3 and E4.
TRANSFER = "transfer_indep"
#: Equivalence margin of claim "order" (transfer points); see :data:`ORDER_MARGIN_REASON`.
ORDER_MARGIN = value("04.order_margin")
#: Why the order margin is that number (registered in :mod:`posteval.margins`).
ORDER_MARGIN_REASON = registered("04.order_margin").reason
#: The explicit aggregation schemes of claim (e) (upstream's ``use_fb``), against the additive sum.
SCHEMES = {"and_gate": ("agg_and_gate", "the AND gate (use_fb=1)"),
           "gate": ("agg_gate", "the gate (use_fb=2)"),
           "modulated": ("agg_modulated", "r_acc modulated by the proxy, with the proxy term (use_fb=3)"),
           "implicit": ("agg_implicit", "r_acc modulated by the proxy, without the proxy term (use_fb=7)")}

#: The single-proxy conditions of the heterogeneous ensemble's members
#: (:data:`posteval.rubric.experiment.MIXED_MEMBERS`: sft, rl, follow), in that order.
MEMBERS = ("proxy_sft", "proxy_rl", "proxy_follow")
#: Claim (d)'s comparator: the ensemble's best single member, chosen by :func:`best_member` on seeds
#: the test does not use, and put in a record under this name by :func:`add_renamed` on the others.
BEST = "best_member"
#: No proxy read after as many GRPO steps as the quarter-data condition (the step confound of (f)).
EQUAL_STEPS = "no_proxy_equal_steps"

_SRC = "Proxy-GRM"
_BOOK = "this book"
_E34 = "transfer to the independent judges E3 and E4"


def _e(scheme: str) -> Claim:
    cond, text = SCHEMES[scheme]
    return Claim(f"e.{scheme}", f"Proxy-GRM: the simple additive sum r_acc + r_proxy (the source's 'implicit "
                 f"aggregation') beats {text}, on {_E34}", TRANSFER, "proxy_sft", cond, 1, source=_SRC)


#: The claims of Proxy-GRM's abstract and conclusions that this miniature cannot test, with the reason
#: (:func:`claims_table`'s ``not_testable``).
CANNOT_TEST = {
    "sota": "the benchmarks (VL-RewardBench, Multimodal RewardBench, MM-RLHF-RewardBench) hold images, text and "
            "the other methods' models, none of which the miniature has: it measures one synthetic task",
    "data_4x": "a comparison of whole methods, each on its own data (Proxy-GRM on ~50k samples against "
               "R1-Reward and Unified-Reward on >200k); the miniature runs one recipe, whose data ablation is "
               "the book's (f)",
    "proxy_32b": "no general model larger than the specialised proxy exists at this scale: every proxy here is a "
                 "small network trained for the task, and there is no pre-trained general model to serve as one",
}


#: The chapter's claims, in the order of the text.
CLAIMS: tuple[Claim, ...] = (
    Claim("a", f"Proxy-GRM: the proxy reward (Proxy-SFT, label targets) makes rubrics transferable: it raises "
          f"{_E34} over no proxy", TRANSFER, "proxy_sft", "no_proxy", 1, source=_SRC),
    Claim("a_follow", "Proxy-GRM: the proxy reward, with Proxy-SFT trained on the teacher's verdict under its own "
          f"rubric (the other reading of its targets), raises {_E34} over no proxy", TRANSFER, "proxy_follow",
          "no_proxy", 1, source=_SRC),
    Claim("b", "Proxy-GRM: without a proxy, RL on the verdict reward raises post-hoc rationalisation above the "
          "cold start", "rationalisation", "no_proxy", COLD, 1, source=_SRC),
    Claim("b.proxy", "Proxy-GRM: the proxy reward (Proxy-SFT) lowers post-hoc rationalisation below RL without a "
          "proxy", "rationalisation", "proxy_sft", "no_proxy", -1, source=_SRC),
    Claim("b_acc", "this book, beside Proxy-GRM's (b): without a proxy, RL still raises verdict accuracy above the "
          "cold start (the pointwise metric looks fine)", "verdict_acc", "no_proxy", COLD, 1, family="exploratory",
          source=_BOOK),
    Claim("c", "Proxy-GRM: Proxy-SFT is a stronger verifier than Proxy-RL, measured here through the policy's "
          f"{_E34} (not as verifier fidelity)", TRANSFER, "proxy_sft", "proxy_rl", 1, source=_SRC),
    Claim("c.fidelity", "Proxy-GRM: Proxy-SFT is a stronger verifier than Proxy-RL, measured directly (no RL): it "
          "follows an edited rubric that contradicts the label more often", "verifier_fidelity", "proxy_sft",
          "proxy_rl", 1, source=_SRC),
    Claim("d", "Proxy-GRM: an ensemble of heterogeneous proxy agents is worse than the best single proxy "
          "(conflicting reward signals); here the mean vote of Proxy-SFT, Proxy-RL and Proxy-SFT-follow against "
          f"its best member alone, chosen on the sweep's seeds and tested on the others, on {_E34}", TRANSFER,
          "ensemble_mixed", BEST, -1, source=_SRC),
    Claim("d.proxy_sft", "this book, after Proxy-GRM's (d): the heterogeneous ensemble is worse than "
          f"label-trained Proxy-SFT alone (one member, not the best), on {_E34}", TRANSFER, "ensemble_mixed",
          "proxy_sft", -1, family="exploratory", source=_BOOK),
    Claim("d.bootstrap", "this book, after Proxy-GRM's (d): an ensemble of three bootstrap copies of Proxy-SFT (not "
          f"heterogeneous) is worse than one Proxy-SFT, on {_E34}", TRANSFER, "ensemble3", "proxy_sft", -1,
          family="exploratory", source=_BOOK),
    *(_e(s) for s in SCHEMES),
    Claim("e", "Proxy-GRM: the additive sum beats every explicit aggregation scheme (all four of claim e)",
          parts=tuple(f"e.{s}" for s in SCHEMES), source=_SRC),
    Claim("sota", "Proxy-GRM: with ~50k training samples it is the best reward model on VL-RewardBench, "
          "Multimodal RewardBench and MM-RLHF-RewardBench", source=_SRC),
    Claim("data_4x", "Proxy-GRM: it beats methods trained on four times as much data", source=_SRC),
    Claim("proxy_32b", "Proxy-GRM: a large general model (32B) is a worse proxy than the specialised 7B Proxy-SFT",
          source=_SRC),
    Claim("f.accuracy", "this book, after Proxy-GRM's data efficiency (whole methods on ~50k against >200k "
          "samples): within one recipe, the proxy reward on a quarter of the RL prompts, and so a quarter of the "
          "GRPO steps, beats no proxy on all of them, on verdict accuracy", "verdict_acc", "proxy_sft_quarter",
          "no_proxy", 1, family="exploratory", source=_BOOK),
    Claim("f.transfer", "this book, after Proxy-GRM's data efficiency: the proxy reward on a quarter of the RL "
          f"prompts (a quarter of the steps) beats no proxy on all of them, on {_E34}", TRANSFER,
          "proxy_sft_quarter", "no_proxy", 1, family="exploratory", source=_BOOK),
    Claim("f.accuracy.equal_steps", "this book, the step confound of (f): the proxy reward on a quarter of the RL "
          "prompts beats no proxy read after as many GRPO steps, on verdict accuracy", "verdict_acc",
          "proxy_sft_quarter", EQUAL_STEPS, 1, family="exploratory", source=_BOOK),
    Claim("f.transfer.equal_steps", "this book, the step confound of (f): the proxy reward on a quarter of the RL "
          f"prompts beats no proxy read after as many GRPO steps, on {_E34}", TRANSFER, "proxy_sft_quarter",
          EQUAL_STEPS, 1, family="exploratory", source=_BOOK),
    Claim("leak", f"this book: a proxy that sees the answer segment lowers {_E34} below the honest Proxy-SFT",
          TRANSFER, "proxy_sft_leak", "proxy_sft", -1, family="exploratory", source=_BOOK),
    Claim("order", f"this book: a proxy biased toward the first answer changes {_E34} by less than "
          f"{ORDER_MARGIN:.4f} (the pairs' order is random, so the bias only adds noise: a null by design)",
          TRANSFER, "proxy_sft_order", "proxy_sft", 0, margin=ORDER_MARGIN, registered="04.order_margin",
          family="exploratory", source=_BOOK),
    Claim("unseen", "this book: a proxy that never saw the last criterion in a training rubric still raises "
          "transfer to E3 and E4 on the pairs where that criterion matters, over no proxy", "transfer_indep_last",
          "proxy_sft_unseen", "no_proxy", 1, family="exploratory", source=_BOOK),
)
#: The claims by name.
BY_NAME = {c.name: c for c in CLAIMS}
#: Each claim as its source states it, in words, for the table that opens the chapter (:func:`opening_claims`).
SAYS = {
    "a": "The proxy reward makes rubrics transferable to evaluators never used in training",
    "a_follow": "The same, with Proxy-SFT read as trained on the teacher's verdict under its rubric",
    "b": "Without a proxy, RL on the verdict reward rewards post-hoc rationalisation",
    "b.proxy": "The proxy reward lowers post-hoc rationalisation compared with no proxy",
    "b_acc": "(the book's) Without a proxy, verdict accuracy still rises (the pointwise metric looks fine)",
    "c": "Proxy-SFT is a stronger verifier than Proxy-RL (seen through the policy it trains)",
    "c.fidelity": "Proxy-SFT is a stronger verifier than Proxy-RL (the verifiers themselves)",
    "d": "Several heterogeneous proxy agents do worse than a single well-calibrated proxy",
    "e.and_gate": "The simple sum r_acc + r_proxy beats the AND gate (use_fb=1)",
    "e.gate": "The simple sum beats the gate (use_fb=2)",
    "e.modulated": "The simple sum beats r_acc modulated by the proxy, with the proxy term (use_fb=3)",
    "e.implicit": "The simple sum beats r_acc modulated by the proxy without the proxy term (use_fb=7; not the "
                  "source's implicit aggregation, which is the simple sum itself)",
    "e": "The simple sum beats every scheme that modulates r_acc by the proxy's feedback",
    "sota": "With ~50k samples, the best reward model on three multimodal reward benchmarks",
    "data_4x": "It beats methods trained on four times the data",
    "proxy_32b": "A 32B general model is a worse proxy than the 7B Proxy-SFT",
    "d.proxy_sft": "(the book's) The heterogeneous ensemble is worse than label-trained Proxy-SFT",
    "d.bootstrap": "(the book's) Three bootstrap copies of Proxy-SFT are worse than one",
    "f.accuracy": "(the book's, after Proxy-GRM's 4x data efficiency) A quarter of the data with the proxy "
                  "beats all of it without, on accuracy",
    "f.transfer": "(the book's) The same on transfer",
    "f.accuracy.equal_steps": "(the book's) The same on accuracy, at equal GRPO steps (the step confound)",
    "f.transfer.equal_steps": "(the book's) The same on transfer, at equal GRPO steps",
    "leak": "(the book's) A proxy that sees the answer lowers transfer",
    "order": "(the book's) A proxy biased to the first answer changes transfer by less than the margin",
    "unseen": "(the book's) A proxy still helps on a criterion it never saw",
}


def per_seed(final: pd.DataFrame, history: pd.DataFrame, condition: str, metric: str) -> pd.Series:
    """Per-seed value of ``metric`` at the last step of ``condition`` (or at step 0 for :data:`COLD`)."""
    if condition == COLD:
        col = f"test_{metric}"
        if col not in history.columns:
            return pd.Series(dtype=float)
        return history[history["step"] == 0].groupby("seed")[col].first().astype(float)
    if metric not in final.columns:
        return pd.Series(dtype=float)
    return final[final["condition"] == condition].set_index("seed")[metric].astype(float)


def paired_values(claim: Claim, final: pd.DataFrame, history: pd.DataFrame) -> pd.DataFrame:
    """Columns ``a`` and ``b``: the claim's metric per seed (index), on the seeds both conditions measured."""
    a = per_seed(final, history, claim.a, claim.metric).dropna()
    b = per_seed(final, history, claim.b, claim.metric).dropna()
    return pd.DataFrame({"a": a, "b": b}).dropna().sort_index()


def claim_interval(claim: Claim, final: pd.DataFrame, history: pd.DataFrame, *,
                   level: float = 0.95) -> Interval | None:
    """Rule-3 interval of ``metric(a) - metric(b)`` over the shared seeds; None with fewer than 2."""
    v = paired_values(claim, final, history)
    if len(v) < 2:
        return None
    return paired_seed_interval(v["a"].to_numpy(), v["b"].to_numpy(), level=level)


def claims_table(records: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]], claims: Sequence[Claim] = CLAIMS, *,
                 level: float = 0.95, not_testable: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every claim measured in one of ``records`` ({name: (final, history)}), decided in one call.

    Each claim is read from the record with the most seeds for its two conditions (column
    ``record``); a claim no record measured is left out, and so is a claim of parts with a part left
    out. The claims named in ``not_testable`` ({name: reason}, e.g. :data:`CANNOT_TEST`) are kept with
    the word "not testable" and their reason (record ""). The columns are those of
    :func:`~posteval.metrics.claims.evaluate_claims`, plus ``record``.
    """
    if not records:
        raise ValueError("records: expected at least one {name: (final, history)}")
    untested = {k: v for k, v in (not_testable or {}).items() if k in {c.name for c in claims}}
    intervals, source = {}, {}
    for c in claims:
        if c.parts or c.name in untested:
            continue
        best = None
        for name, (final, history) in records.items():
            iv = claim_interval(c, final, history, level=level)
            if iv is not None and (best is None or iv.n_seeds > best[1].n_seeds):
                best = (name, iv)
        if best is not None:
            source[c.name], intervals[c.name] = best
    if not intervals:
        raise ValueError("no claim is measured in the records given")
    kept = [c for c in claims if c.name in intervals or c.name in untested
            or (c.parts and all(p in intervals for p in c.parts))]
    table = evaluate_claims(kept, intervals=intervals, level=level, not_testable=untested)
    parts = {c.name: c.parts for c in kept}
    table["record"] = [source[k] if k in source else " + ".join(dict.fromkeys(source[p] for p in parts[k]))
                       for k in table.index]
    return table


def seeds_text(seeds) -> str:
    """Seeds in words: a run of consecutive seeds as "seeds 10–39", others listed.

    >>> seeds_text(range(10, 40)), seeds_text([0, 2, 3]), seeds_text([4])
    ('seeds 10–39', 'seeds 0, 2, 3', 'seed 4')
    """
    s = sorted(int(x) for x in seeds)
    if not s:
        raise ValueError("seeds: expected at least one seed")
    if len(s) == 1:
        return f"seed {s[0]}"
    if s == list(range(s[0], s[-1] + 1)) and len(s) > 2:
        return f"seeds {s[0]}–{s[-1]}"
    return "seeds " + ", ".join(map(str, s))


def unlooked(records: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]], extended: Sequence[str],
             seeds) -> dict:
    """``records`` with each record named in ``extended`` (a run extended after a look at an earlier one)
    cut to ``seeds``, the seeds nobody had looked at (:func:`seeds_only`), and renamed
    "<name without its seed count>, <seeds_text> (<n> seeds)"; the other records as they are. Given to
    :func:`claims_table`, every claim such a record measures is decided on the seeds that could not have
    prompted the extension, so that the decision is not conditioned on the look (a sequential design
    that adds seeds after an unresolved look and pools them does not hold its level).

    Reference: Armitage, McPherson and Rowe (1969), "Repeated significance tests on accumulating data",
    *J. R. Statist. Soc. A* 132, 235 (looking and extending inflates the error rate).

    >>> f = pd.DataFrame({"seed": [0, 1, 2, 3], "condition": ["a"] * 4})
    >>> h = f.assign(step=0)
    >>> out = unlooked({"power run (4 seeds)": (f, h), "sweep (2 seeds)": (f, h)}, ["power run (4 seeds)"], [2, 3])
    >>> list(out), len(out["power run, seeds 2, 3 (2 seeds)"][0])
    (['power run, seeds 2, 3 (2 seeds)', 'sweep (2 seeds)'], 2)
    """
    unknown = [k for k in extended if k not in records]
    if unknown:
        raise ValueError(f"extended: {unknown} are not records (have {list(records)})")
    keep = sorted(int(s) for s in seeds)
    out = {}
    for name, (final, history) in records.items():
        if name in extended:
            base = re.sub(r"\s*\(\d+ seeds?\)$", "", name)
            out[f"{base}, {seeds_text(keep)} ({len(keep)} seeds)"] = seeds_only(final, history, keep)
        else:
            out[name] = (final, history)
    return out


def decided_on(new_seeds, n_pooled: int, n_sweep: int) -> str:
    """Which seeds decide chapter 4's claims, as a clause for the prose: with ``new_seeds`` (the seeds a run
    extended after a look added, :func:`unlooked`), the claims such a run measures on those seeds, its
    ``n_pooled`` seeds pooled described only, the others on the sweep's ``n_sweep``; without them, each
    claim on the run with the most seeds for its two conditions.

    >>> decided_on(range(10, 40), 40, 10)[:100]
    'the claims that the power run or a record run later on its seeds measures are decided on seeds 10–39'
    >>> decided_on([], 0, 0)
    'each claim is decided on the run with the most seeds for its two conditions'
    """
    new_seeds = list(new_seeds)
    if not new_seeds:
        return "each claim is decided on the run with the most seeds for its two conditions"
    return (f"the claims that the power run or a record run later on its seeds measures are decided on "
            f"{seeds_text(new_seeds)} ({len(new_seeds)} seeds), the seeds nobody had looked at when those runs "
            f"were planned, and their result on all {n_pooled} seeds pooled is shown as a description only, "
            f"without a word; every other claim is decided on the sweep's {n_sweep} seeds")


def extension_table(decided: pd.DataFrame, pooled: pd.DataFrame, looked: pd.DataFrame, names: Sequence[str], *,
                    columns: Sequence[str] = ("the sweep's seeds (looked at)", "seeds not looked at",
                                              "verdict", "all seeds pooled (no verdict)")) -> pd.DataFrame:
    """The claims of ``names`` (decided on the seeds not looked at) as a reader's table, one row per claim
    sentence: the word the looked-at seeds gave (``looked``, e.g. the sweep alone; "not measured" where it
    had no such claim), the decision's difference [95 % interval] and word (``decided``), and the
    difference [95 % interval] of all seeds pooled (``pooled``), shown as a description, without a word.
    The four column names are ``columns``.

    >>> t = pd.DataFrame({"sentence": ["A beats B"], "estimate": [0.1], "lo": [0.05], "hi": [0.15],
    ...                   "word": ["yes"]}, index=["a"])
    >>> extension_table(t, t, t.assign(word="not resolved"), ["a"]).iloc[0, [0, 2]].tolist()
    ['not resolved', 'yes']
    """
    def iv(table, k):
        if k not in table.index or not np.isfinite(table.loc[k, "estimate"]):
            return numformat.MISSING
        return numformat.one_line(numformat.interval(*table.loc[k, ["estimate", "lo", "hi"]]))

    looked_word, decided_iv, word, pooled_iv = columns
    return pd.DataFrame({
        looked_word: [str(looked["word"].get(k, "not measured")) for k in names],
        decided_iv: [iv(decided, k) for k in names],
        word: [str(decided.loc[k, "word"]) for k in names],
        pooled_iv: [iv(pooled, k) for k in names]},
        index=pd.Index([str(decided.loc[k, "sentence"]) for k in names], name="claim"))


def source_size(row: Mapping, size: float = ORDER_MARGIN) -> str:
    """Whether a claim's 95 % interval rules out an effect as large as the smallest the source reports
    as one (``size``, in shares of pairs: :data:`ORDER_MARGIN`, Proxy-GRM's 3.76 accuracy points), in
    words: the interval wholly inside (-size, size) is two one-sided tests, each at 2.5 % with the
    95 % interval, before any adjustment (Schuirmann 1987, *J. Pharmacokinet. Biopharm.* 15, 657).
    ``row`` has ``estimate``, ``lo``, ``hi`` (a row of :func:`claims_table`). A sentence, not a word:
    a claim whose word is "not resolved" can still rule out the source's size.

    >>> "lies wholly inside ±0.0376" in source_size({"estimate": -0.0003, "lo": -0.002, "hi": 0.0013})
    True
    >>> "do not rule out" in source_size({"estimate": -0.02, "lo": -0.045, "hi": -0.002})
    True
    """
    est, lo, hi = (float(row[k]) for k in ("estimate", "lo", "hi"))
    if not np.isfinite([est, lo, hi]).all():
        return "its interval is not measured, so it says nothing about an effect of the source's size"
    iv = numformat.one_line(numformat.interval(est, lo, hi))
    m = numformat.number(size)
    scale = (f"±{m}, the smallest effect Proxy-GRM reports as one ({numformat.number(100 * size)} accuracy "
             "points)")
    if -size < lo and hi < size:
        return (f"its 95 % interval, {iv}, lies wholly inside {scale}: the data rule out an effect of the "
                "source's size in either direction (two one-sided tests, each at 2.5 %, before the adjustment), "
                "though not a smaller one")
    return f"its 95 % interval, {iv}, reaches beyond {scale}: the data do not rule out an effect of the source's size"


def best_member(final: pd.DataFrame, members: Sequence[str] = MEMBERS, *, metric: str = TRANSFER,
                seeds=None) -> str:
    """The member with the highest mean ``metric`` at its last step over ``seeds`` (all when None): claim
    (d)'s comparator, chosen on seeds the test does not use, so the choice cannot favour the claim.

    A member not measured on those seeds is passed over; a tie goes to the first in ``members``.

    Example
    -------
    >>> f = pd.DataFrame({"seed": [0, 0, 1, 1], "condition": ["p", "q"] * 2, "transfer_indep": [.6, .7, .8, .7]})
    >>> best_member(f, ("p", "q")), best_member(f, ("p", "q"), seeds=[0])
    ('p', 'q')
    """
    rows = final if seeds is None else final[final["seed"].astype(int).isin(set(int(s) for s in seeds))]
    means = {m: rows.loc[rows["condition"] == m, metric].astype(float).mean() for m in members}
    means = {m: v for m, v in means.items() if np.isfinite(v)}
    if not means:
        raise ValueError(f"no member of {tuple(members)} is measured on {metric!r} on those seeds")
    return max(means, key=lambda m: (means[m], -list(members).index(m)))


def add_renamed(final: pd.DataFrame, condition: str, name: str, *, seeds=None) -> pd.DataFrame:
    """``final`` with the rows of ``condition`` added once more under ``name`` (on ``seeds`` only when
    given): e.g. the best member as :data:`BEST` on the seeds not used to choose it.

    Example
    -------
    >>> f = pd.DataFrame({"seed": [0, 1], "condition": ["p", "p"], "transfer_indep": [.6, .8]})
    >>> add_renamed(f, "p", BEST, seeds=[1])["condition"].tolist()
    ['p', 'p', 'best_member']
    """
    rows = final[final["condition"] == condition]
    if seeds is not None:
        rows = rows[rows["seed"].astype(int).isin(set(int(s) for s in seeds))]
    if rows.empty:
        raise ValueError(f"condition {condition!r} has no rows on those seeds")
    return pd.concat([final, rows.assign(condition=name)], ignore_index=True)


def add_at_step(final: pd.DataFrame, history: pd.DataFrame, condition: str, step: int, name: str) -> pd.DataFrame:
    """``final`` with ``condition`` read at its last evaluated step at or before ``step`` added as ``name``:
    e.g. no proxy after as many GRPO steps as the quarter-data condition (:data:`EQUAL_STEPS`).

    Example
    -------
    >>> h = pd.DataFrame({"seed": [0, 0], "condition": ["n", "n"], "step": [0, 16], "test_verdict_acc": [.5, .7]})
    >>> f = pd.DataFrame({"seed": [0], "condition": ["n"], "step": [16], "verdict_acc": [.7]})
    >>> add_at_step(f, h, "n", 8, "n_early")[["condition", "step", "verdict_acc"]].values.tolist()
    [['n', 16, 0.7], ['n_early', 0, 0.5]]
    """
    ev = history[(history["condition"] == condition) & (history["step"] <= int(step))]
    if ev.empty:
        raise ValueError(f"condition {condition!r} has no evaluation at or before step {step}")
    return pd.concat([final, final_frame(ev).assign(condition=name)], ignore_index=True)


#: The metrics of the claims, in words.
METRIC_WORDS = {TRANSFER: "transfer to E3, E4", "transfer_indep_last": "transfer to E3, E4 (last criterion)",
                "verdict_acc": "verdict accuracy", "rationalisation": "rationalisation",
                "verifier_fidelity": "verifier fidelity"}


def measured(claim: Claim, row: Mapping, names: Mapping[str, str] | None = None) -> str:
    """What the chapter measured for a claim, in words (:func:`posteval.metrics.claims.effect_words` with
    :data:`METRIC_WORDS`): the metric, the two conditions (renamed by ``names``, e.g.
    {BEST: "proxy_follow (best member)"}), the record.

    Example
    -------
    >>> measured(Claim("x", "x beats y", TRANSFER, "proxy_sft", "no_proxy", 1), {"record": "sweep (10 seeds)"})
    'transfer to E3, E4: proxy_sft − no_proxy, sweep'
    """
    # the record's own seed count, "(40 seeds)", is not the claim's: column "why" gives the claim's
    record = re.sub(r"\s*\(\d+ seeds\)$", "", str(row.get("record", "")))
    return f"{effect_words(claim, names, METRIC_WORDS)}, {record}".rstrip(", ")


def opening_claims(table: pd.DataFrame, claims: Sequence[Claim] = CLAIMS, *, first: str = _SRC) -> list[Claim]:
    """The claims of the table that opens the chapter (those of ``table``), each with its sentence as its
    source states it (:data:`SAYS`), the claims of ``first`` (the source) before the book's own, for
    :func:`posteval.claims.claims_overview` with :func:`measured`.

    Example
    -------
    >>> t = pd.DataFrame({"word": ["yes", "yes"]}, index=["leak", "a"])
    >>> [(c.name, c.source) for c in opening_claims(t)]
    [('a', 'Proxy-GRM'), ('leak', 'this book')]
    """
    shown = [replace(c, sentence=SAYS.get(c.name, c.sentence)) for c in claims if c.name in table.index]
    return sorted(shown, key=lambda c: c.source != first)  # stable: the source's claims first, in the text's order


def seeds_sentence(table: pd.DataFrame) -> str:
    """Which claims rest on how many seeds, most first, e.g. "40 seeds: a, b; 10 seeds: e".

    Example
    -------
    >>> seeds_sentence(pd.DataFrame({"n_seeds": [40, 10, 40]}, index=["a", "e", "b"]))
    '40 seeds: a, b; 10 seeds: e'
    """
    n = table["n_seeds"].dropna().astype(int)
    n = n[n > 0]
    return "; ".join(f"{k} seeds: {', '.join(n.index[n == k])}" for k in sorted(set(n), reverse=True))


def cold_start_tolerance(n_test: int) -> float:
    """How far two records' cold-start metrics (shares of ``n_test`` held-out pairs) may differ and still
    be read as one setup: twice the largest binomial standard error of such a share, 2 * sqrt(0.25 / n_test).

    Records of the same seeds written on different CPUs draw the same world, data and test pairs (seeded
    numpy streams) but round the trained models' arithmetic differently, which moves a few pairs; a gap
    below this is smaller than the test-pair noise every seed's difference already carries.

    >>> round(cold_start_tolerance(1024), 4)
    0.0312
    """
    if int(n_test) < 1:
        raise ValueError(f"n_test: expected at least one held-out pair, got {n_test!r}")
    return 2.0 * float(np.sqrt(0.25 / int(n_test)))


def seeds_only(final: pd.DataFrame, history: pd.DataFrame, seeds) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of ``final`` and ``history`` of the given ``seeds`` only: e.g. the seeds a run added when it
    was extended after a look at an earlier run, which alone decide its claims (:func:`unlooked`).

    Example
    -------
    >>> f = pd.DataFrame({"seed": [0, 1, 2], "condition": ["a"] * 3})
    >>> h = pd.DataFrame({"seed": [0, 1, 2], "condition": ["a"] * 3, "step": [0, 0, 0]})
    >>> [len(x) for x in seeds_only(f, h, range(1, 3))]
    [2, 2]
    """
    keep = set(int(s) for s in seeds)
    if not keep:
        raise ValueError("seeds: expected at least one seed")
    for name, frame in (("final", final), ("history", history)):
        if "seed" not in frame.columns:
            raise ValueError(f"{name}: expected a column 'seed'")
    missing = keep - set(final["seed"].astype(int))
    if missing:
        raise ValueError(f"seeds {sorted(missing)} are not in the record")
    return final[final["seed"].astype(int).isin(keep)], history[history["seed"].astype(int).isin(keep)]


def decided_after_extension(pooled: pd.DataFrame, first: pd.DataFrame, extended: str) -> list[str]:
    """The claims read from the ``extended`` record (column ``record`` of :func:`claims_table`, e.g. a
    record cut to its new seeds by :func:`unlooked`) that the ``first`` record alone (the look) did not
    resolve: the claims resolved only after the run was extended.

    Example
    -------
    >>> pooled = pd.DataFrame({"word": ["yes", "no", "yes"], "record": ["power", "power", "sweep"]}, index=list("abc"))
    >>> first = pd.DataFrame({"word": ["not resolved", "no", "yes"]}, index=list("abc"))
    >>> decided_after_extension(pooled, first, "power")
    ['a']
    """
    out = []
    for name, r in pooled.iterrows():
        if r["record"] != extended or r["word"] in (NOT_RESOLVED, NOT_TESTABLE):
            continue
        if name not in first.index or first.loc[name, "word"] in (NOT_RESOLVED, NOT_TESTABLE):
            out.append(str(name))
    return out


def interval_numbers(final: pd.DataFrame, metrics=("transfer", "transfer_indep", "verdict_acc"), *,
                     prefix: str = "") -> dict:
    """``<metric>_lo.<condition>`` / ``<metric>_hi.<condition>``: 95 % t-interval of the mean over seeds."""
    out = {}
    for m in metrics:
        if m not in final.columns:
            continue
        for c, g in final.groupby("condition", sort=False):
            v = g[m].to_numpy(dtype=float)
            if len(v) < 2 or not np.isfinite(v).all():
                continue
            _, lo, hi = seed_interval(v)
            out[f"{prefix}{m}_lo.{c}"] = lo
            out[f"{prefix}{m}_hi.{c}"] = hi
    return out


def unmeasured() -> pd.DataFrame:
    """A claims table without rows (no record measured anything): :func:`posteval.claims.record_table` with
    ``fill=CLAIMS`` fills every claim."""
    return pd.DataFrame(columns=["sentence", "estimate", "lo", "hi", "p", "p_holm", "n_seeds", "word", "record"])


def agreement(words: Mapping[str, str], source: str = "Proxy-GRM") -> str:
    """One sentence saying where the miniature agrees with ``source``, disagrees, or decides neither.

    ``words``: {label: word} of directional claims in the source's direction, e.g.
    ``{"on accuracy": "no", "on transfer": "yes"}`` (one entry with the label "" for a single claim).

    >>> agreement({"": "no"})
    'The miniature disagrees with Proxy-GRM (the interval lies on the other side of 0).'
    """
    groups = {w: [label for label, word in words.items() if word == w]
              for w in ("yes", "no", "not resolved", "not testable")}
    if sum(map(len, groups.values())) != len(words):
        raise ValueError(f"words must be yes / no / not resolved / not testable, got {dict(words)}")

    def named(labels):
        labels = [x for x in labels if x]
        return "" if not labels else " " + (labels[0] if len(labels) == 1 else
                                            ", ".join(labels[:-1]) + " and " + labels[-1])

    says = {"yes": lambda x: f"agrees with {source}{x}",
            "no": lambda x: f"disagrees with {source}{x} (the interval lies on the other side of 0)",
            "not resolved": lambda x: f"neither confirms nor refutes {source}{x} at these seeds",
            "not testable": lambda x: f"cannot test {source}{x} (not measured in these runs)"}
    order = list(dict.fromkeys(words.values()))  # in the order the labels are given
    return "The miniature " + "; it ".join(says[w](named(groups[w])) for w in order) + "."


