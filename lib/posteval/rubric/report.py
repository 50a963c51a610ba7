"""Tables, contract numbers and plots of the proxy-rubric results (live sweep or saved summary)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .evaluate import METRICS

#: Metrics named in the chapter's results contract, with their JSON prefix.
CONTRACT = {"transfer": "transfer", "transfer_rule": "transfer_rule", "verdict_acc": "verdict_acc",
            "rationalisation": "rationalisation"}
#: Proxies whose rubric sensitivity is part of the contract (judge name -> contract name).
SENSITIVITY = {"proxy_sft": "proxy_sft", "proxy_rl": "proxy_rl", "proxy_follow": "proxy_follow",
               "ensemble": "ensemble3", "ensemble_follow": "ensemble3_follow"}

LABELS = {"verdict_acc": "verdict accuracy", "transfer": "transfer (learned judge E2)",
          "transfer_rule": "transfer (rule follower E1)", "rationalisation": "rationalisation rate",
          "rubric_f1": "rubric F1 vs hidden criteria", "faithfulness": "eval faithfulness",
          "consistency": "verdict-eval consistency", "proxy_acc": "training-proxy accuracy",
          "format": "format pass rate", "generic_share": "share of generic rubrics",
          "transfer_indep": "transfer (independent judges E3, E4)",
          "transfer_indep_last": "transfer (E3, E4), pairs of the unseen criterion",
          "transfer_max": "transfer (E3)", "transfer_vote": "transfer (E4)"}

#: What each RL condition rewards, for the reader (the keys of `experiment.CONDITIONS`).
CONDITION_TEXT = {
    "no_proxy": "no proxy: r_acc + 0.5 r_format",
    "proxy_sft": "additive reward r_acc + r_proxy + 0.5 r_format, proxy Proxy-SFT",
    "proxy_rl": "additive, proxy Proxy-RL",
    "proxy_follow": "additive, proxy Proxy-SFT-follow (trained on the teacher's own verdicts)",
    "ensemble3": "additive, r_proxy the mean vote of 3 bootstrap Proxy-SFTs",
    "ensemble3_follow": "additive, r_proxy the mean vote of 3 bootstrap Proxy-SFT-follows",
    "ensemble_mixed": "additive, r_proxy the mean vote of Proxy-SFT, Proxy-RL and Proxy-SFT-follow "
                      "(heterogeneous members)",
    "agg_and_gate": "AND gate (use_fb=1): r_acc and r_proxy both +1 only if the verdict is "
                    "right and the proxy agrees, else both -1; Proxy-SFT",
    "agg_gate": "gate (use_fb=2): r_acc = +1 only if the verdict is right and the proxy "
                "agrees; no proxy term; Proxy-SFT",
    "agg_modulated": "modulated (use_fb=3): right verdict +1.5 if the proxy agrees, else "
                     "+0.5; wrong -1; proxy term kept; Proxy-SFT",
    "agg_implicit": "modulated without the proxy term (use_fb=7): as modulated, proxy term removed; Proxy-SFT "
                    "(the code's 'implicit' mode, not the source's implicit aggregation, which is the additive sum)",
    "agg_and_gate_follow": "AND gate (use_fb=1), Proxy-SFT-follow",
    "agg_gate_follow": "gate (use_fb=2), Proxy-SFT-follow",
    "agg_modulated_follow": "modulated (use_fb=3), Proxy-SFT-follow",
    "agg_implicit_follow": "modulated without the proxy term (use_fb=7), Proxy-SFT-follow",
    "proxy_sft_quarter": "as proxy_sft on N/4 RL prompts (a quarter of the steps)",
    "proxy_follow_quarter": "as proxy_follow on N/4 RL prompts",
    "no_proxy_quarter": "as no_proxy on N/4 RL prompts",
    "proxy_sft_leak": "leak: Proxy-SFT that also sees the answer segment (returns its verdict)",
    "proxy_sft_order": "order: Proxy-SFT biased toward response 1 (logit + log 4)",
    "proxy_sft_unseen": "unseen: Proxy-SFT-unseen, trained without the last criterion",
}


#: The name a reader sees for each RL condition (legends, tables): the proxy that rewards the policy and what
#: sets the condition apart; `CONDITION_TEXT` says what it rewards.
CONDITION_NAMES = {
    "no_proxy": "no proxy", "proxy_sft": "Proxy-SFT", "proxy_rl": "Proxy-RL", "proxy_follow": "Proxy-SFT-follow",
    "ensemble3": "ensemble of 3 Proxy-SFTs", "ensemble3_follow": "ensemble of 3 Proxy-SFT-follows",
    "ensemble_mixed": "ensemble of Proxy-SFT, -RL, -SFT-follow",
    "agg_and_gate": "AND gate", "agg_gate": "gate", "agg_modulated": "modulated",
    "agg_implicit": "modulated, no proxy term",
    "agg_and_gate_follow": "AND gate, Proxy-SFT-follow", "agg_gate_follow": "gate, Proxy-SFT-follow",
    "agg_modulated_follow": "modulated, Proxy-SFT-follow",
    "agg_implicit_follow": "modulated, no proxy term, Proxy-SFT-follow",
    "proxy_sft_quarter": "Proxy-SFT, N/4 prompts", "proxy_follow_quarter": "Proxy-SFT-follow, N/4 prompts",
    "no_proxy_quarter": "no proxy, N/4 prompts", "proxy_sft_leak": "Proxy-SFT that sees the answer",
    "proxy_sft_order": "Proxy-SFT biased to response 1", "proxy_sft_unseen": "Proxy-SFT-unseen",
}


def final_frame(history: pd.DataFrame, *, fraction: float = 1.0) -> pd.DataFrame:
    """Test metrics at the last evaluated step of every (seed, condition), without the ``test_`` prefix.

    ``fraction`` < 1 takes the last evaluated step at or before that fraction of each run's steps
    instead (with ``rl_epochs=2`` and ``fraction=0.5``: exactly the end of a one-epoch run, since the
    first epoch's rollouts and updates do not depend on the number of epochs).
    Metrics a run did not measure (e.g. in an older record) are left out.
    """
    need = {"seed", "condition", "step", "test_verdict_acc"}
    if not need <= set(history.columns):
        raise ValueError(f"history lacks columns {sorted(need - set(history.columns))}")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    ev = history.dropna(subset=["test_verdict_acc"])
    if fraction < 1:
        limit = ev.groupby(["seed", "condition"], sort=False)["step"].transform("max") * fraction
        ev = ev[ev["step"] <= limit]
    last = ev.loc[ev.groupby(["seed", "condition"], sort=False)["step"].idxmax()]
    cols = {f"test_{m}": m for m in METRICS if f"test_{m}" in history.columns}
    return last[["seed", "condition", "step", *cols]].rename(columns=cols).reset_index(drop=True)


def check_summary_matches(summary: dict, config, seeds, conditions) -> None:
    """Raise ValueError unless a saved sweep summary was run with this config, these seeds and these conditions.

    ``config`` is a `RubricConfig` (compared field by field); every current condition must be in
    the summary (it may hold more).
    """
    if not isinstance(summary, dict) or not {"config", "seeds", "conditions"} <= set(summary):
        raise ValueError("summary: expected a saved sweep with 'config', 'seeds' and 'conditions'")
    saved, current = summary["config"], config.to_dict()
    differ = {k: (saved.get(k), v) for k, v in current.items() if saved.get(k) != v}
    differ.update({k: (v, None) for k, v in saved.items() if k not in current})
    if differ:
        raise ValueError("saved sweep was run with another config (saved, current): "
                         + ", ".join(f"{k}={a!r} vs {b!r}" for k, (a, b) in sorted(differ.items())))
    if list(summary["seeds"]) != list(seeds):
        raise ValueError(f"saved sweep has seeds {summary['seeds']}, the parameters ask for {list(seeds)}")
    missing = [c for c in conditions if c not in summary["conditions"]]
    if missing:
        raise ValueError(f"saved sweep lacks the conditions {missing}")


def frames_from_summary(summary: dict) -> dict:
    """``history``, ``final``, ``sensitivity`` DataFrames from a summary written by the sweep."""
    if not isinstance(summary, dict) or "history" not in summary:
        raise ValueError("summary must be a sweep summary with a 'history' list")
    hist = pd.DataFrame(summary["history"]).astype({"step": int})
    hist = hist.apply(lambda c: pd.to_numeric(c) if c.name not in ("condition",) else c)
    sens = summary["sensitivity"]
    rows = []
    for judge, stats in sens["sensitivity"].items():
        for i, seed in enumerate(summary["seeds"]):
            rows.append({"seed": seed, "judge": judge,
                         **{col: sens[col][judge]["values"][i] for col in sens}})
    return {"history": hist, "final": final_frame(hist), "sensitivity": pd.DataFrame(rows)}


def join_conditions(summary: dict, other: dict, *more: dict, atol: float = 1e-12) -> dict:
    """The frames of sweep summaries that ran *other conditions on the same seeds* (later runs of
    more conditions): ``history``, ``final`` and ``sensitivity`` of ``summary`` with the conditions
    of ``other`` (and of each of ``more``) added, on the seeds each shares with ``summary``.

    Every seed's setup (world, data, cold start, proxies) is seeded on its own, so the runs of a
    seed share it; that is checked, not assumed: the cold start's metrics of every shared seed must
    be equal in both (to ``atol``), and the configs must be equal, else ValueError. A condition in
    two summaries is an error (which record would count?). ``shared_seeds``: the seeds ``summary``
    shares with ``other``; ``shared_seeds_each``: those it shares with ``other`` and each of ``more``,
    in order; ``cold_start_max_diff``: the largest |difference| of a cold-start metric on a shared
    seed, for each. A record written on another CPU can round differently: its world, data and test
    pairs are the same draws, its trained models a few pairs apart, and a larger ``atol``, stated by
    the caller, admits that.

    Example
    -------
    >>> def rec(conds, seeds):
    ...     return {"config": {}, "seeds": seeds, "conditions": conds,
    ...             "cold_start": {"verdict_acc": {"values": [0.5] * len(seeds)}},
    ...             "sensitivity": {"sensitivity": {}},
    ...             "history": [{"seed": s, "condition": c, "step": 1, "test_verdict_acc": 0.6}
    ...                         for s in seeds for c in conds]}
    >>> out = join_conditions(rec(["a"], [0, 1]), rec(["b"], [0, 1]), rec(["c"], [1]))
    >>> sorted(out["final"]["condition"].unique()), out["shared_seeds_each"], out["cold_start_max_diff"]
    (['a', 'b', 'c'], [[0, 1], [1]], [0.0, 0.0])
    """
    histories, each, diffs = [], [], []
    for o in (other, *more):
        h, shared, diff = _conditions_of(summary, o, atol)
        histories.append(h)
        each.append(shared)
        diffs.append(diff)
    a = frames_from_summary(summary)
    history = pd.concat([a["history"], *histories], ignore_index=True)
    return {"history": history, "final": final_frame(history), "sensitivity": a["sensitivity"],
            "shared_seeds": each[0], "shared_seeds_each": each, "cold_start_max_diff": diffs}


def _conditions_of(summary: dict, other: dict, atol: float) -> tuple[pd.DataFrame, list, float]:
    """``other``'s history on the seeds it shares with ``summary`` (checked: equal configs, cold starts
    equal to ``atol``, no condition in both), those seeds and the largest cold-start difference."""
    if summary.get("config") != other.get("config"):
        raise ValueError("other: its config differs from the summary's; its seeds do not share their setups")
    twice = sorted(set(summary["conditions"]) & set(other["conditions"]))
    if twice:
        raise ValueError(f"other: conditions {twice} are in both summaries")
    shared, diff = _same_cold_starts(summary, other, atol, "other")
    b = frames_from_summary(other)
    return b["history"][b["history"]["seed"].isin(shared)], shared, float(diff)


def fidelity_frame(record: dict, summary: dict | None = None, *, atol: float = 1e-12) -> tuple[pd.DataFrame, float]:
    """A verifier-fidelity record (``python -m posteval.rubric.sweep --fidelity``) as a claims record:
    one row per seed and verifier, columns ``seed``, ``condition`` (the verifier), ``verifier_fidelity``,
    ``follows_label``, ``n_pairs``; and the largest |difference| of a cold-start metric from ``summary``.

    Given a sweep ``summary`` run with the same config, the record's setups are checked to be that
    sweep's (as :func:`join_conditions` checks conditions run apart): the cold start's metrics of
    every shared seed equal to ``atol``, else ValueError. A claim read from the record then pairs its
    seeds with the sweep's.

    Example
    -------
    >>> rec = {"kind": "verifier_fidelity", "config": {}, "seeds": [0],
    ...        "cold_start": {"verdict_acc": {"values": [0.5]}},
    ...        "fidelity": [{"seed": 0, "judge": "proxy_sft", "fidelity": 0.7, "follows_label": 0.3,
    ...                      "n_pairs": 90}]}
    >>> frame, gap = fidelity_frame(rec, {"config": {}, "seeds": [0], "cold_start": rec["cold_start"]})
    >>> frame[["seed", "condition", "verifier_fidelity"]].to_dict(orient="records"), gap
    ([{'seed': 0, 'condition': 'proxy_sft', 'verifier_fidelity': 0.7}], 0.0)
    """
    if not isinstance(record, dict) or record.get("kind") != "verifier_fidelity":
        raise ValueError("record: expected a verifier-fidelity record (kind 'verifier_fidelity', "
                         "written by python -m posteval.rubric.sweep --fidelity)")
    frame = pd.DataFrame(record["fidelity"]).rename(columns={"judge": "condition", "fidelity": "verifier_fidelity"})
    if frame.empty or set(frame["seed"]) != set(record["seeds"]):
        raise ValueError("record: its fidelity rows do not cover its seeds")
    gap = 0.0
    if summary is not None:
        if summary.get("config") != record.get("config"):
            raise ValueError("record: its config differs from the summary's; its setups are not the sweep's")
        gap = _same_cold_starts(summary, record, atol, "record")[1]
    return frame, float(gap)


def _gap(a, b) -> float:
    """|a - b| of two recorded metrics, where None is a metric undefined on that seed (0 when both are)."""
    if a is None or b is None:
        return 0.0 if a is None and b is None else float("inf")
    return abs(a - b)


def _same_cold_starts(summary: dict, other: dict, atol: float, who: str) -> tuple[list, float]:
    """The seeds two records share and the largest |difference| of their cold starts' metrics on them;
    ValueError naming ``who`` (the second record) when a gap passes ``atol``: its setups are not the same."""
    cold_a = {m: dict(zip(summary["seeds"], v["values"])) for m, v in summary["cold_start"].items()}
    cold_b = {m: dict(zip(other["seeds"], v["values"])) for m, v in other["cold_start"].items()}
    shared = sorted(set(summary["seeds"]) & set(other["seeds"]))
    diff = 0.0
    for m in sorted(set(cold_a) & set(cold_b)):
        gaps = {s: _gap(cold_a[m][s], cold_b[m][s]) for s in shared}
        bad = [s for s, g in gaps.items() if not g <= atol]
        if bad:
            raise ValueError(f"{who}: seeds {bad} have another cold start ({m}); they do not share their setups")
        diff = max([diff, *gaps.values()])
    return shared, float(diff)


def mean_sd_table(final: pd.DataFrame, metrics=("verdict_acc", "transfer", "transfer_rule", "rationalisation",
                                                "rubric_f1", "faithfulness"), conditions=None,
                  *, decimals: int = 4) -> pd.DataFrame:
    """One row per condition: ``mean ± sd`` strings of each metric over seeds, and the seed count."""
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be a non-negative int, got {decimals!r}")
    conditions = list(dict.fromkeys(final["condition"])) if conditions is None else list(conditions)
    rows = {}
    for c in conditions:
        g = final[final["condition"] == c]
        if g.empty:
            raise ValueError(f"conditions: {c!r} has no results")
        row = {}
        for m in metrics:
            v = g[m].to_numpy(dtype=float)
            sd = f" ± {np.std(v, ddof=1):.{decimals}f}" if len(v) > 1 else ""
            row[LABELS.get(m, m)] = f"{np.mean(v):.{decimals}f}{sd}"
        row["seeds"] = len(g)
        rows[c] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def conditions_table(names) -> pd.DataFrame:
    """What each of the RL conditions ``names`` rewards (index: condition)."""
    unknown = [n for n in names if n not in CONDITION_TEXT]
    if unknown:
        raise ValueError(f"names: no description for {unknown}")
    return pd.DataFrame({"what the policy is rewarded with": [CONDITION_TEXT[n] for n in names]},
                        index=pd.Index(list(names), name="condition"))


def highlight(table: pd.DataFrame, rows, *, uuid: str, decimals: int | None = None):
    """``table`` as a pandas Styler with ``rows`` (index labels) in bold on a grey background.

    ``uuid`` fixes the HTML ids (so the output is the same run to run); ``decimals`` formats
    the float columns.
    """
    missing = [r for r in rows if r not in table.index]
    if missing:
        raise ValueError(f"rows: {missing} not in the table's index")
    if not uuid:
        raise ValueError("uuid must be a non-empty string")
    key = set(rows)

    def style(row):
        on = row.name in key
        return ["font-weight: bold; background-color: #e8e8e8" if on else "" for _ in row]

    styler = table.style.apply(style, axis=1).set_uuid(uuid)
    if decimals is not None:
        floats = table.select_dtypes("number").columns
        styler = styler.format("{:.%df}" % decimals, subset=list(floats), na_rep="")
    return styler


def contract_numbers(final: pd.DataFrame, sensitivity: pd.DataFrame, *, prefix: str = "",
                     extra_metrics=("rubric_f1", "faithfulness", "consistency")) -> dict:
    """Flat ``name -> value`` numbers: the contract keys (seed means) plus spreads and extra metrics.

    Keys: ``<metric>.<condition>`` and ``<metric>_sd.<condition>`` (when there are several
    seeds) for the contract metrics and ``extra_metrics``; ``sensitivity.<proxy>`` and
    ``sensitivity_random.<proxy>``.
    """
    out = {}
    for m in (*CONTRACT, *extra_metrics):
        for c, g in final.groupby("condition", sort=False):
            v = g[m].to_numpy(dtype=float)
            out[f"{prefix}{m}.{c}"] = float(np.mean(v))
            if len(v) > 1:
                out[f"{prefix}{m}_sd.{c}"] = float(np.std(v, ddof=1))
    out.update(sensitivity_numbers(sensitivity, prefix=prefix))
    return out


def sensitivity_numbers(sensitivity: pd.DataFrame, *, prefix: str = "") -> dict:
    """``sensitivity.<proxy>`` and ``sensitivity_random.<proxy>`` (seed means) for the proxies present."""
    out = {}
    for judge, name in SENSITIVITY.items():
        g = sensitivity[sensitivity["judge"] == judge]
        if g.empty:
            continue
        out[f"{prefix}sensitivity.{name}"] = float(g["sensitivity"].mean())
        out[f"{prefix}sensitivity_random.{name}"] = float(g["sensitivity_random"].mean())
    return out
