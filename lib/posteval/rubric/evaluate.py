"""Metrics of a policy's completions on held-out pairs (greedy decoding).

- ``verdict_acc``: verdict equals the label (the pointwise metric).
- ``format``: strict grammar satisfied.
- ``rubric_f1``: F1 of the rubric against the hidden relevant set (an oracle metric of the miniature).
- ``transfer``: accuracy of the held-out learned judge E2 reading the policy's rubric.
- ``transfer_rule``: the same for the analytic follower E1 (a tie counts 1/2).
- ``transfer_max``, ``transfer_vote``: the same for the independent judges E3 and E4
  (:mod:`posteval.rubric.held_out_judges`); ``transfer_indep``: their mean. NaN without them.
- ``transfer_indep_last``: ``transfer_indep`` on the pairs whose relevant set contains the last
  criterion (the one the ``proxy_sft_unseen`` proxy never saw in a training rubric).
- ``rationalisation``: verdict right while E1, reading the rubric, does not reach the label
  (right for an unstated reason).
- ``consistency``: among well-formed completions, the verdict agrees with the sign of the eval sum.
- ``faithfulness``: among well-formed completions, share of eval tokens equal to the true difference.
- ``proxy_acc``: accuracy of the condition's training proxy reading the rubric (what it rewards).
- ``generic_share``: share of rubrics that contain a generic criterion.
- ``rubric_closed``: share of completions whose rubric segment is followed by ``</rubric>``.
"""

from __future__ import annotations

import numpy as np

from .grammar import parse_batch, rubric_flags, rubric_segment
from .judges import RuleJudge, judge_accuracy
from .task import Pairs, World

METRICS = ("verdict_acc", "format", "rubric_f1", "transfer", "transfer_rule", "transfer_max", "transfer_vote",
           "transfer_indep", "transfer_indep_last", "rationalisation", "consistency", "faithfulness", "proxy_acc", "generic_share",
           "rubric_closed")


def completion_metrics(world: World, pairs: Pairs, completions, *, judge_e2, proxy=None, held_out=None,
                       max_rubric: int = 3) -> dict:
    """All metrics of :data:`METRICS` for completions (one per pair), as floats.

    ``held_out``: mapping with the independent judges ``judge_max`` and ``judge_vote`` (or None).
    """
    comps = np.asarray(completions)
    if comps.ndim != 2 or comps.shape[0] != len(pairs):
        raise ValueError(f"completions must have shape (len(pairs)={len(pairs)}, length), got {comps.shape}")
    vocab = world.vocab
    parsed = parse_batch(vocab, comps, max_rubric=max_rubric)
    flags = rubric_flags(vocab, comps)
    verdict = np.array([p.verdict for p in parsed])
    right = verdict == pairs.labels
    wf = np.array([p.well_formed for p in parsed])
    rel = world.relevant[pairs.types]
    tp = (flags * rel).sum(1)
    f1 = np.where(flags.sum(1) + rel.sum(1) > 0, 2 * tp / np.maximum(flags.sum(1) + rel.sum(1), 1), 0.0)
    e1 = RuleJudge().predict(pairs, flags)
    cons, faith_num, faith_den = [], 0, 0
    for i, p in enumerate(parsed):
        if not p.well_formed:
            continue
        s = sum(p.evals)
        cons.append((s > 0 and p.verdict == 1) or (s < 0 and p.verdict == 2))
        true = [int(pairs.q1[i, k] - pairs.q2[i, k]) for k in p.rubric]
        faith_num += sum(int(a == b) for a, b in zip(p.evals, true))
        faith_den += len(true)
    indep, last = {}, np.flatnonzero(world.relevant[pairs.types, -1])
    last_acc = []
    for key, name in (("transfer_max", "judge_max"), ("transfer_vote", "judge_vote")):
        indep[key] = judge_accuracy(held_out[name], pairs, flags) if held_out else float("nan")
        if held_out and len(last):
            last_acc.append(judge_accuracy(held_out[name], pairs.subset(last), flags[last]))
    closed = [len(r) > len(s) and r[len(s)] == vocab.RUBRIC_END
              for r, s in ((list(row), rubric_segment(vocab, row)) for row in comps)]
    out = {
        "verdict_acc": float(right.mean()),
        "format": float(wf.mean()),
        "rubric_f1": float(f1.mean()),
        "transfer": judge_accuracy(judge_e2, pairs, flags),
        "transfer_rule": judge_accuracy(RuleJudge(), pairs, flags),
        **indep,
        "transfer_indep": float(np.mean(list(indep.values()))),
        "transfer_indep_last": float(np.mean(last_acc)) if last_acc else float("nan"),
        "rationalisation": float((right & (e1 != pairs.labels)).mean()),
        "consistency": float(np.mean(cons)) if cons else float("nan"),
        "faithfulness": faith_num / faith_den if faith_den else float("nan"),
        "proxy_acc": judge_accuracy(proxy, pairs, flags) if proxy is not None else float("nan"),
        "generic_share": float((flags[:, :max(world.n_generic, 1)].sum(1) > 0).mean()),
        "rubric_closed": float(np.mean(closed)),
    }
    return out
