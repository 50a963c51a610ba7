"""The registered basin test of chapter 4 (``results/full/04_proxy_rubric_basin_preregistration.md``).

A seed's run of a condition lands in the *upper basin* when its final transfer to the independent
judges exceeds :data:`BASIN_THRESHOLD` (0.75, midway between chance and perfect transfer). For two
conditions a and b run on the same seeds, each seed gives a pair of basins; the seeds where they
differ are the discordant ones, n_ab (a upper, b lower) and n_ba. Under "a condition does not change
the basin" each discordant seed is a fair coin, so the exact McNemar test is the two-sided binomial
test of n_ab out of n_ab + n_ba at 1/2 (McNemar 1947; the exact form, e.g. Fagerland, Lydersen &
Laake 2013, BMC Med. Res. Methodol. 13, 91). Within a seed both runs share the setup, so any
seed-level covariate, the cold-start rubric F1 included, cancels. Whether the cold start predicts
the basin at all is the Mann-Whitney test of its rubric F1 between upper- and lower-basin seeds,
with the rank-biserial correlation r = 2 U / (n_1 n_2) - 1 (U of the upper-basin seeds) as its effect
size (Kerby 2014).

The word of each pair comes from the book's one rule (:mod:`posteval.metrics.verdicts`): the pairs are
one family, each with one word, "yes" (the two conditions send different shares of seeds to the upper
basin), whose p-value is the exact two-sided McNemar p; Holm's adjustment runs over the family's words
(:func:`~posteval.metrics.verdicts.holm_words`, here the registered adjustment over the pairs) and the
word is said when its adjusted p is below 0.05 (:func:`~posteval.metrics.verdicts.decide`), else "not
resolved". The test has no word for "no": a McNemar test that does not reject shows no equivalence.
:func:`basin_claims` puts the words in the shape :func:`posteval.claims.record_table` records.

Example
-------
>>> import pandas as pd
>>> final = pd.DataFrame({"seed": [0, 1, 2, 0, 1, 2], "condition": ["a"] * 3 + ["b"] * 3,
...                       "transfer_indep": [0.9, 0.9, 0.5, 0.5, 0.5, 0.5]})
>>> row = basin_tests(final, [("a", "b")]).loc["a vs b"]
>>> int(row["a only"]), int(row["b only"]), row["word"]   # 2 discordant seeds: p = 0.5
(2, 0, 'not resolved')
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..metrics.verdicts import NOT_TESTABLE, decide, holm_words

__all__ = ["BASIN_THRESHOLD", "PAIRS", "FAMILY", "SOURCE", "upper_basin", "basin_tests", "basin_claims",
           "cold_start_association"]

#: Final transfer above which a run is in the upper basin (registered before the power run's last seeds).
BASIN_THRESHOLD = 0.75
#: The registered pairs (a, b): Proxy-SFT against no proxy and against Proxy-RL, the two ensembles against one.
PAIRS = (("proxy_sft", "no_proxy"), ("proxy_sft", "proxy_rl"), ("ensemble3", "proxy_sft"),
         ("ensemble_mixed", "proxy_sft"))
#: The Holm family of the pairs' words, and whose test it is.
FAMILY = "basins"
SOURCE = "this book (registered before seeds 30-39 ran)"


def upper_basin(final: pd.DataFrame, *, metric: str = "transfer_indep", threshold: float = BASIN_THRESHOLD
                ) -> pd.DataFrame:
    """Seeds (index) x conditions (columns): 1.0 in the upper basin, 0.0 below, NaN where not run."""
    missing = {"seed", "condition", metric} - set(final.columns)
    if missing:
        raise ValueError(f"final: needs the columns seed, condition and {metric!r}; missing {sorted(missing)}")
    wide = final.pivot_table(index="seed", columns="condition", values=metric, aggfunc="first")
    return (wide > threshold).astype(float).where(wide.notna())


def basin_tests(final: pd.DataFrame, pairs: Sequence[tuple[str, str]] = PAIRS, *, seeds=None,
                metric: str = "transfer_indep", threshold: float = BASIN_THRESHOLD) -> pd.DataFrame:
    """One row per pair "a vs b" run on at least one common seed: seeds, upper-basin counts, the
    discordant seeds ("a only", "b only"), the exact McNemar p-value ``p``, its ``adjusted p`` (Holm
    over the words of the rows, one word each) and the ``word`` (module docstring). ``seeds``
    restricts the seeds used."""
    up = upper_basin(final, metric=metric, threshold=threshold)
    if seeds is not None:
        up = up.loc[up.index.isin(list(seeds))]
    rows = {}
    for a, b in pairs:
        if a not in up or b not in up:
            continue
        both = up[[a, b]].dropna()
        if both.empty:
            continue
        ab = int(((both[a] == 1) & (both[b] == 0)).sum())
        ba = int(((both[a] == 0) & (both[b] == 1)).sum())
        p = 1.0 if ab + ba == 0 else float(stats.binomtest(ab, ab + ba, 0.5).pvalue)
        rows[f"{a} vs {b}"] = {"seeds": len(both), "a upper": int(both[a].sum()), "b upper": int(both[b].sum()),
                               "a only": ab, "b only": ba, "p": p}
    table = pd.DataFrame.from_dict(rows, orient="index")
    if not table.empty:
        adjusted = holm_words([{"yes": p} for p in table["p"]])
        table["adjusted p"] = [a["yes"] for a in adjusted]
        table["word"] = [decide(a) for a in adjusted]
    return table


def basin_claims(table: pd.DataFrame, pairs: Sequence[tuple[str, str]] = PAIRS, *, names=None,
                 record: str = "") -> pd.DataFrame:
    """The pairs as claims for :func:`posteval.claims.record_table`, one row per pair of ``pairs`` (index
    ``<a>_vs_<b>``): the ``word`` of :func:`basin_tests`' ``table`` and its p-values (``p``, ``p_holm`` =
    the adjusted p), a ``sentence`` (conditions renamed by ``names``), ``source`` :data:`SOURCE`,
    ``family`` :data:`FAMILY`, ``n_seeds``, ``record``. The exact test gives a p-value, not an interval,
    so ``estimate``, ``lo`` and ``hi`` are NaN (the counts of :func:`basin_tests` are the effect). A pair
    the table lacks (not run on a common seed) is "not testable", with that reason.

    >>> final = pd.DataFrame({"seed": [0, 1, 0, 1], "condition": ["a", "a", "b", "b"],
    ...                       "transfer_indep": [0.9, 0.9, 0.5, 0.5]})
    >>> c = basin_claims(basin_tests(final, [("a", "b")]), [("a", "b"), ("a", "z")])
    >>> row = c.loc["a_vs_b"]
    >>> row["word"], float(row["p_holm"]), c.loc["a_vs_z", "word"]
    ('not resolved', 0.5, 'not testable')
    >>> row["sentence"]
    'this book: a and b send different shares of seeds to the upper basin'
    """
    names = names or {}
    rows = {}
    for a, b in pairs:
        r = table.loc[f"{a} vs {b}"] if f"{a} vs {b}" in table.index else None
        row = {"sentence": f"this book: {names.get(a, a)} and {names.get(b, b)} send different shares of seeds to "
                           "the upper basin", "source": SOURCE, "family": FAMILY, "record": record,
               "estimate": np.nan, "lo": np.nan, "hi": np.nan}
        if r is None:
            row.update(word=NOT_TESTABLE, reason="not run on a common seed", p=np.nan, p_holm=np.nan, n_seeds=0)
        else:
            row.update(word=r["word"], reason="", p=float(r["p"]), p_holm=float(r["adjusted p"]),
                       n_seeds=int(r["seeds"]))
        rows[f"{a}_vs_{b}"] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def cold_start_association(upper: pd.Series, cold_f1: pd.Series) -> dict:
    """Mann-Whitney test of the cold-start rubric F1 (per seed) between upper- and lower-basin seeds
    of one condition: ``{"n_upper", "n_lower", "p", "rank_biserial"}`` (r > 0: higher F1 in the upper
    basin); p and r are NaN when one group is empty."""
    joined = pd.DataFrame({"upper": upper, "f1": cold_f1}).dropna()
    hi, lo = joined.loc[joined["upper"] == 1, "f1"], joined.loc[joined["upper"] == 0, "f1"]
    out = {"n_upper": len(hi), "n_lower": len(lo), "p": float("nan"), "rank_biserial": float("nan")}
    if len(hi) and len(lo):
        res = stats.mannwhitneyu(hi, lo, alternative="two-sided")
        out["p"] = float(res.pvalue)
        out["rank_biserial"] = float(2 * res.statistic / (len(hi) * len(lo)) - 1)
    return out
