"""Figures of chapter 4: verifier rubric sensitivity, held-out metrics over GRPO steps, the trl log.

Every curve takes its colour from the book's palette (`posteval.plotting.palette`), keyed by the
proxy, judge or condition name; figures are at most 7 in wide with legends outside the axes.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..plotting.palette import colour
from .report import CONDITION_NAMES, LABELS

#: Rubrics given to a verifier in the sensitivity test, in plotting order, with axis labels.
RUBRICS = {"oracle": "true S(t)", "random": "random", "generic": "generic", "empty": "empty"}
#: Reader-facing names of the verifiers (proxies and held-out judges).
VERIFIERS = {"proxy_sft": "Proxy-SFT", "proxy_rl": "Proxy-RL", "proxy_follow": "Proxy-SFT-follow",
             "proxy_sft_unseen": "Proxy-SFT-unseen", "ensemble": "ensemble of 3 Proxy-SFTs",
             "ensemble_follow": "ensemble of 3 Proxy-SFT-follows", "judge_rule": "E1 (sum rule)",
             "judge_e2": "E2 (learned on E1)", "judge_max": "E3 (largest criterion)",
             "judge_vote": "E4 (learned on votes)"}
#: Figure width (inches): the book's text column.
WIDTH = 7.0


def _dashes(name: str) -> str:
    """Line style of a condition: dashed for a run on a quarter of the RL prompts."""
    return "--" if name.endswith("_quarter") else "-"


def _check_columns(frame: pd.DataFrame, need, what: str) -> None:
    missing = sorted(set(need) - set(frame.columns))
    if missing:
        raise ValueError(f"{what} lacks columns {missing}")


def sensitivity_figure(sensitivity: pd.DataFrame, *, height: float = 3.6):
    """Accuracy of each verifier given the true, a random, the generic and an empty rubric.

    Mean over seeds with ± sd bars; proxies on the left, held-out judges (``judge_*``) on the
    right. A verifier that reads the rubric falls from the true rubric to the others; a flat
    line ignores it. Returns the figure.
    """
    _check_columns(sensitivity, ["judge", *RUBRICS], "sensitivity")
    if sensitivity.empty:
        raise ValueError("sensitivity: no rows")
    names = list(dict.fromkeys(sensitivity["judge"]))
    groups = {"proxies (reward the policy)": [n for n in names if not n.startswith("judge_")],
              "held-out judges (never reward it)": [n for n in names if n.startswith("judge_")]}
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, height), sharey=True, layout="constrained")
    x = np.arange(len(RUBRICS))
    for ax, (title, members) in zip(axes, groups.items()):
        for k, name in enumerate(members):
            g = sensitivity.loc[sensitivity["judge"] == name, list(RUBRICS)]
            sd = g.std(ddof=1) if len(g) > 1 else None
            shift = (k - (len(members) - 1) / 2) * 0.06
            ax.errorbar(x + shift, g.mean(), yerr=sd, marker="o", ms=4, lw=1.5, capsize=2,
                        color=colour(name), label=VERIFIERS.get(name, name))
        ax.set_xticks(x, list(RUBRICS.values()), fontsize=9)
        ax.set_xlabel("rubric given to the verifier", fontsize=10)
        ax.set_title(title, fontsize=10)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, fontsize=8,
                  frameon=False)
    axes[0].set_ylabel("accuracy on held-out pairs", fontsize=10)
    axes[0].set_ylim(0.4, 1.02)
    return fig


def steps_figure(history: pd.DataFrame, metrics, conditions, *, ncols: int = 3,
                 panel_height: float = 2.1, band: bool = True, title: str | None = None):
    """Held-out metrics over GRPO steps, one panel per metric, one line per condition.

    Line: mean over seeds; band (if ``band``): ± sd over seeds. Conditions on a quarter of the
    RL prompts (``*_quarter``) are dashed in their proxy's colour. The legend, in the conditions' reader
    names (`report.CONDITION_NAMES`), sits above the panels. Returns the figure.
    """
    metrics, conditions = list(metrics), list(conditions)
    if not metrics or not conditions:
        raise ValueError("metrics and conditions must be non-empty")
    _check_columns(history, ["condition", "step", *(f"test_{m}" for m in metrics)], "history")
    absent = [c for c in conditions if c not in set(history["condition"])]
    if absent:
        raise ValueError(f"conditions: {absent} have no history")
    if ncols < 1:
        raise ValueError(f"ncols must be >= 1, got {ncols}")
    ev = history.dropna(subset=[f"test_{metrics[0]}"])
    nrows = -(-len(metrics) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(WIDTH, 0.5 + panel_height * nrows),
                             sharex=True, layout="constrained", squeeze=False)
    for ax, m in zip(axes.flat, metrics):
        for c in conditions:
            by_step = ev[ev["condition"] == c].groupby("step")[f"test_{m}"]
            mean, sd = by_step.mean(), by_step.std(ddof=1).fillna(0.0)
            ax.plot(mean.index, mean, color=colour(c), ls=_dashes(c), lw=1.6, label=CONDITION_NAMES.get(c, c))
            if band:
                ax.fill_between(mean.index, mean - sd, mean + sd, color=colour(c), alpha=0.12,
                                lw=0)
        ax.set_title(textwrap.fill(LABELS.get(m, m), 30), fontsize=9)
        ax.tick_params(labelsize=8)
    for ax in axes.flat[len(metrics):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("GRPO step", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("share of pairs", fontsize=9)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=min(len(conditions), 5),
               fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def bridge_figure(log: pd.DataFrame, *, proxy: str = "proxy_follow"):
    """The trl GRPOTrainer log: batch means of the three reward terms and the KL, per step.

    One panel per quantity, drawn in the colour of the proxy that rewards the policy.
    Returns the figure.
    """
    cols = {"rewards/r_acc/mean": "r_acc (verdict right: +1)",
            "rewards/r_proxy/mean": "r_proxy (proxy agrees: +1)",
            "rewards/r_format/mean": "r_format (before the 0.5 weight)",
            "kl": "k3 KL to the reference"}
    _check_columns(log, ["step", *cols], "log")
    fig, axes = plt.subplots(2, 2, figsize=(WIDTH, 4.2), sharex=True, layout="constrained")
    for ax, (col, label) in zip(axes.flat, cols.items()):
        ax.plot(log["step"], log[col], color=colour(proxy), lw=1.6)
        ax.set_title(label, fontsize=9)
        ax.tick_params(labelsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("GRPOTrainer step", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("batch mean", fontsize=9)
    return fig
