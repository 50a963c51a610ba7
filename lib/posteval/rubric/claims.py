"""The chapter's claims as paired comparisons over seeds, each decided "yes" / "no" / "not resolved".

Every claim compares a metric of condition ``a`` with condition ``b`` (or with the cold start, the
same seed's policy before RL) at the last evaluated step, seed by seed: conditions of one seed share
the world, the data, the cold start, the proxies and the judges, so the per-seed differences are
paired. The effect is the mean difference; its 95 % Student-t interval over seeds and the margin
:data:`MARGIN` give the verdict by :func:`posteval.metrics.verdicts.verdict`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics.intervals import paired_seed_interval, seed_interval
from ..metrics.verdicts import verdict

#: Equivalence margin of every claim (accuracy or rate points): an interval inside [-MARGIN, MARGIN] is "no".
#: 0: with three seeds an interval's width changes with the machine's kernels enough to turn an equivalence
#: verdict (measured: verdict accuracy without a proxy, interval [-0.002, 0.015] natively and [-0.035, 0.024]
#: with ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE), so the chapter declares no equivalence.
MARGIN = 0.0
#: Name of the cold-start "condition" (step 0 of any condition of the seed).
COLD = "cold_start"


@dataclass(frozen=True)
class Claim:
    """``mean(metric[a] - metric[b])`` has the sign of ``direction``.

    ``fallback``: metric read instead when a record lacks ``metric`` (an older record without the
    independent judges); only set where that judge is independent of the proxies compared.
    """

    a: str
    b: str
    metric: str
    direction: int
    text: str
    fallback: str | None = None


#: The chapter's claims. Transfer to the independent judges (``transfer_indep``: E3 and E4) where the
#: run measured it; claims (d)-(f) read E2 (``transfer``), independent of the label-trained proxies compared.
CLAIMS = {
    "a": Claim("proxy_sft", "no_proxy", "transfer_indep", 1,
               "Proxy-SFT (label targets) raises transfer to the independent judges", "transfer"),
    "a_follow": Claim("proxy_follow", "no_proxy", "transfer_indep", 1,
                      "Proxy-SFT (teacher-verdict targets) raises transfer to the independent judges"),
    "b": Claim("no_proxy", COLD, "rationalisation", 1, "without a proxy, RL raises rationalisation"),
    "b_acc": Claim("no_proxy", COLD, "verdict_acc", 1, "without a proxy, RL raises verdict accuracy"),
    "c": Claim("proxy_sft", "proxy_rl", "transfer_indep", 1, "Proxy-SFT beats Proxy-RL on transfer", "transfer"),
    "d": Claim("ensemble3", "proxy_sft", "transfer", 1, "an ensemble of three Proxy-SFTs beats one on transfer"),
    "e": Claim("agg_implicit", "proxy_sft", "transfer", 1, "implicit aggregation (use_fb=7) beats additive"),
    "f": Claim("proxy_sft_quarter", "no_proxy", "transfer", 1,
               "Proxy-SFT on N/4 prompts beats no proxy on N, on transfer"),
    "f_acc": Claim("proxy_sft_quarter", "no_proxy", "verdict_acc", 1,
                   "Proxy-SFT on N/4 prompts beats no proxy on N, on verdict accuracy"),
    "leak": Claim("proxy_sft_leak", "proxy_sft", "transfer_indep", -1,
                  "a proxy that sees the answer lowers transfer"),
    "order": Claim("proxy_sft_order", "proxy_sft", "transfer_indep", -1,
                   "a proxy biased toward the first answer lowers transfer"),
    "unseen": Claim("proxy_sft_unseen", "no_proxy", "transfer_indep_last", 1,
                    "a proxy that never saw a criterion still raises transfer on pairs where it matters"),
}


def per_seed(final: pd.DataFrame, history: pd.DataFrame, condition: str, metric: str) -> pd.Series:
    """Per-seed value of ``metric`` at the last step of ``condition`` (or at step 0 for :data:`COLD`)."""
    if condition == COLD:
        col = f"test_{metric}"
        if col not in history.columns:
            return pd.Series(dtype=float)
        start = history[history["step"] == 0].groupby("seed")[col].first()
        return start.astype(float)
    if metric not in final.columns:
        return pd.Series(dtype=float)
    g = final[final["condition"] == condition]
    return g.set_index("seed")[metric].astype(float)


def evaluate_claim(claim: Claim, final: pd.DataFrame, history: pd.DataFrame, *, margin: float = MARGIN) -> dict:
    """Effect, interval and verdict of one claim; "not resolved" with NaN effect when it was not measured."""
    metric = claim.metric
    if metric not in final.columns and claim.fallback is not None:
        metric = claim.fallback
    a = per_seed(final, history, claim.a, metric)
    b = per_seed(final, history, claim.b, metric)
    both = a.index.intersection(b.index)
    a, b = a.loc[both].dropna(), b.loc[both].dropna()
    both = a.index.intersection(b.index)
    out = {"a": claim.a, "b": claim.b, "metric": metric, "direction": claim.direction,
           "text": claim.text, "n_seeds": len(both)}
    if len(both) < 2:
        return {**out, "verdict": "not resolved", "effect": np.nan, "effect_lo": np.nan, "effect_hi": np.nan,
                "measured": False}
    iv = paired_seed_interval(a.loc[both].to_numpy(), b.loc[both].to_numpy())
    d = {"verdict": verdict(iv.lo, iv.hi, direction=claim.direction, margin=margin), "effect": iv.estimate,
         "effect_lo": iv.lo, "effect_hi": iv.hi, "n_seeds": len(both)}
    return {**out, **d, "measured": True}


def claims_table(final: pd.DataFrame, history: pd.DataFrame, claims=None, *, margin: float = MARGIN) -> pd.DataFrame:
    """One row per claim: conditions, metric, effect, 95 % interval, n_seeds, verdict."""
    claims = CLAIMS if claims is None else claims
    rows = {k: evaluate_claim(c, final, history, margin=margin) for k, c in claims.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


def claim_numbers(table: pd.DataFrame, *, prefix: str = "") -> dict:
    """``claim.<x>`` (the verdict word) and ``claim.<x>.effect/effect_lo/effect_hi/n_seeds`` (NaN: not measured)."""
    out = {}
    for k, r in table.iterrows():
        out[f"{prefix}claim.{k}"] = r["verdict"]
        for f in ("effect", "effect_lo", "effect_hi"):
            out[f"{prefix}claim.{k}.{f}"] = float(r[f])
        out[f"{prefix}claim.{k}.n_seeds"] = int(r["n_seeds"])
    return out


def combine_tables(primary: pd.DataFrame, secondary: pd.DataFrame | None, *, names=("this run", "full record")):
    """Each claim from ``primary`` where it measured it, else from ``secondary``; column ``source`` says which."""
    out = primary.copy()
    out["source"] = np.where(out["measured"], names[0], "not measured")
    if secondary is not None:
        take = ~out["measured"] & secondary.reindex(out.index)["measured"].fillna(False).astype(bool)
        for k in out.index[take]:
            out.loc[k, secondary.columns] = secondary.loc[k]
            out.loc[k, "source"] = names[1]
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
