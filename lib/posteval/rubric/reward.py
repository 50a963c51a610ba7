"""Reward of the policy, with the exact values of upstream ``compute_score``.

``r = r_acc + r_proxy + 0.5 * r_format`` with ``r_acc`` in {+1, -1} (verdict right / anything else),
``r_proxy`` in {+1, -1} (the proxy, reading only the rubric, picks the preferred response; for an
ensemble, the mean of the members' votes) and ``r_format`` in {0, 1} (strict grammar). The
aggregation variants of upstream's ``use_fb`` switch are reproduced as ``mode`` 0-10; "pc" below
means the proxy was correct (for an ensemble: mean vote > 0).
"""

from __future__ import annotations

import numpy as np

#: Names of the aggregation modes (upstream ``use_fb`` values).
AGGREGATION_MODES = {
    "additive": 0,  # r_acc + r_proxy + 0.5 fmt (README default)
    "and_gate": 1,  # both terms +1 only if verdict right and pc, else both -1
    "gate": 2,  # r_acc = +1 only if verdict right and pc; proxy term dropped
    "modulated": 3,  # right: +1.5 if pc else +0.5; wrong: -1; proxy term kept
    "modulated_4": 4,  # as 3, wrong and pc: -1.5
    "modulated_5": 5,  # as 4, wrong and not pc: -2
    "modulated_6": 6,  # right: +1.0 if pc else +0.5; wrong: -1; proxy term kept
    "implicit": 7,  # as 3 with the proxy term zeroed: the proxy only modulates r_acc
    "implicit_8": 8,
    "implicit_9": 9,
    "implicit_10": 10,
}


def aggregation_mode(mode) -> int:
    """Integer ``use_fb`` code of a mode given by name or code."""
    if isinstance(mode, str):
        if mode not in AGGREGATION_MODES:
            raise ValueError(f"mode must be one of {sorted(AGGREGATION_MODES)}, got {mode!r}")
        return AGGREGATION_MODES[mode]
    if isinstance(mode, bool) or not isinstance(mode, (int, np.integer)) or not 0 <= mode <= 10:
        raise ValueError(f"mode must be a name or an int in 0..10, got {mode!r}")
    return int(mode)


def accuracy_reward(verdicts, labels) -> np.ndarray:
    """+1 where the verdict (1 or 2) equals the label, -1 otherwise (including no verdict, 0)."""
    verdicts, labels = np.asarray(verdicts), np.asarray(labels)
    if verdicts.shape != labels.shape:
        raise ValueError(f"verdicts shape {verdicts.shape} differs from labels shape {labels.shape}")
    if not np.isin(labels, (1, 2)).all():
        raise ValueError("labels must be 1 or 2")
    return np.where(verdicts == labels, 1.0, -1.0)


def proxy_reward(predictions, labels) -> np.ndarray:
    """Mean over proxies of +1 (prediction equals label) / -1. ``predictions``: (n,) or (M, n)."""
    preds = np.asarray(predictions)
    labels = np.asarray(labels)
    if preds.ndim == 1:
        preds = preds[None]
    if preds.ndim != 2 or preds.shape[1] != labels.shape[0]:
        raise ValueError(f"predictions shape {np.asarray(predictions).shape} does not match labels {labels.shape}")
    return np.where(preds == labels[None], 1.0, -1.0).mean(axis=0)


def combine(r_acc, r_proxy, r_format, mode=0, *, format_weight: float = 0.5) -> dict:
    """Total reward and its (possibly modulated) terms.

    Parameters
    ----------
    r_acc : array of +1/-1
    r_proxy : array in [-1, 1] (or zeros when no proxy is used)
    r_format : array of 0/1
    mode : int or str, see :data:`AGGREGATION_MODES`

    Returns
    -------
    dict with ``total``, ``acc``, ``proxy``, ``format`` arrays (the terms after aggregation).
    """
    a = np.asarray(r_acc, dtype=float).copy()
    p = np.asarray(r_proxy, dtype=float).copy()
    f = np.asarray(r_format, dtype=float)
    if not (a.shape == p.shape == f.shape):
        raise ValueError(f"r_acc {a.shape}, r_proxy {p.shape} and r_format {f.shape} must have one shape")
    code = aggregation_mode(mode)
    right = a > 0
    pc = p > 0
    if code == 1:
        both = right & pc
        a = np.where(both, 1.0, -1.0)
        p = np.where(both, 1.0, -1.0)
    elif code == 2:
        a = np.where(right & pc, 1.0, -1.0)
        p = np.zeros_like(p)
    elif code >= 3:
        base = (code - 3) % 4 + 3  # 3..6 and their implicit twins 7..10
        hi = 1.0 if base == 6 else 1.5
        a = np.where(right, np.where(pc, hi, 0.5), -1.0)
        if base in (4, 5):
            a = np.where(~right & pc, -1.5, a)
        if base == 5:
            a = np.where(~right & ~pc, -2.0, a)
        if code >= 7:
            p = np.zeros_like(p)
    fw = format_weight * f
    return {"total": a + p + fw, "acc": a, "proxy": p, "format": fw}
