"""GRPO pieces in plain torch, with verl's defaults as used upstream.

- :func:`group_advantages`: reward minus the group mean, divided by the group's (unbiased) standard
  deviation plus ``eps`` (verl ``norm_adv_by_std_in_grpo=True``). The same advantage is given to
  every token of a completion.
- :func:`low_var_kl`: the k3 estimator of KL(policy || reference), clamped to [-10, 10] (verl
  ``low_var_kl``).
- :func:`grpo_loss`: clipped-ratio policy-gradient loss plus ``beta`` times the KL term, averaged
  over all valid tokens of the mini-batch (``loss_agg_mode=token-mean``).
"""

from __future__ import annotations

import numpy as np
import torch


def group_advantages(rewards, group_size: int, *, eps: float = 1e-6, scale: bool = True) -> np.ndarray:
    """Group-relative advantages of rewards laid out as consecutive groups of ``group_size``.

    Parameters
    ----------
    rewards : (n_groups * group_size,) array
    group_size : int, at least 2
    scale : divide by the group's standard deviation (verl default) or only centre
    """
    r = np.asarray(rewards, dtype=float)
    if isinstance(group_size, bool) or not isinstance(group_size, (int, np.integer)) or group_size < 2:
        raise ValueError(f"group_size must be an integer >= 2, got {group_size!r}")
    if r.ndim != 1 or r.size == 0 or r.size % group_size:
        raise ValueError(f"rewards must be a non-empty 1-D array whose length is a multiple of "
                         f"group_size={group_size}, got shape {r.shape}")
    if not np.isfinite(r).all():
        raise ValueError("rewards contain NaN or inf")
    g = r.reshape(-1, group_size)
    adv = g - g.mean(axis=1, keepdims=True)
    if scale:
        adv = adv / (g.std(axis=1, ddof=1, keepdims=True) + eps)
    return adv.reshape(-1)


def low_var_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """k3 estimator ``exp(ref - logp) - (ref - logp) - 1`` per token, clamped to [-10, 10]."""
    d = torch.clamp(ref_logp - logp, -20.0, 20.0)
    return torch.clamp(torch.exp(d) - d - 1.0, -10.0, 10.0)


def grpo_loss(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor, adv: torch.Tensor,
              mask: torch.Tensor, *, clip: float = 0.2, beta: float = 0.01) -> tuple[torch.Tensor, dict]:
    """Token-mean GRPO loss.

    Parameters
    ----------
    logp, old_logp, ref_logp : (n, T) per-token log-probabilities under the current, rollout and
        reference policies
    adv : (n,) advantage per completion
    mask : (n, T) bool, valid tokens
    """
    if not (logp.shape == old_logp.shape == ref_logp.shape == mask.shape):
        raise ValueError("logp, old_logp, ref_logp and mask must share one shape")
    if adv.shape != logp.shape[:1]:
        raise ValueError(f"adv must have shape {tuple(logp.shape[:1])}, got {tuple(adv.shape)}")
    if clip <= 0:
        raise ValueError(f"clip must be positive, got {clip!r}")
    m = mask.float()
    ntok = m.sum().clamp_min(1.0)
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    pg = -torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip, 1 + clip) * a)
    kl = low_var_kl(logp, ref_logp)
    loss = ((pg + beta * kl) * m).sum() / ntok
    with torch.no_grad():
        clipped = ((ratio - 1).abs() > clip).float()
        stats = {"kl": float((kl * m).sum() / ntok), "clip_frac": float((clipped * m).sum() / ntok),
                 "pg_loss": float((pg * m).sum() / ntok)}
    return loss, stats
