"""Held-out judges independent of every proxy and of the policy's reward.

Neither judge shares a training signal or a decision rule with a proxy (trained on the task's
labels or on the teacher's rubric-sum verdicts, see :mod:`posteval.rubric.proxy_data`), with the rule
follower E1 (sum of ``q1 - q2`` over the rubric) or with E2 (trained on E1's verdicts):

- :class:`MaxJudge` (E3): the rubric criterion with the largest ``|q1 - q2|`` decides (ties between
  criteria: the lowest criterion index); 0 (abstain) when every rubric criterion ties. No training.
- :class:`VoteJudge` (E4): an MLP that reads the rubric flags and the per-criterion differences
  (no query token), trained on pairs from its own random stream, labelled by a different
  annotator model: the majority of the rubric's criteria won, with annotator noise, ties dropped
  (:func:`vote_annotations`). No proxy sees these pairs or these labels.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..models.training import TrainingSettings, fit
from .task import Pairs, World, as_generator, sample_pairs

HELD_OUT = ("judge_max", "judge_vote")


def _flags(pairs: Pairs, flags) -> np.ndarray:
    f = np.asarray(flags, dtype=np.float32)
    if f.shape != pairs.q1.shape:
        raise ValueError(f"flags must have shape {pairs.q1.shape}, got {f.shape}")
    return f


class MaxJudge:
    """E3: the rubric's most decisive criterion (largest ``|q1 - q2|``) gives the verdict; 0 on an all-tie."""

    name = "judge_max"

    def predict(self, pairs: Pairs, flags) -> np.ndarray:
        f = _flags(pairs, flags) > 0
        d = np.where(f, pairs.q1 - pairs.q2, 0)
        k = np.argmax(np.abs(d), axis=1)  # first index among the largest
        s = d[np.arange(len(d)), k]
        return np.where(s > 0, 1, np.where(s < 0, 2, 0))


def vote_annotations(pairs: Pairs, flags, seed, *, noise: float = 0.1) -> np.ndarray:
    """Annotator E4 learns from: 1/2 by the majority of rubric criteria won, 0 on a tie; ``noise`` flips."""
    if not 0.0 <= float(noise) < 0.5:
        raise ValueError(f"noise must be in [0, 0.5), got {noise!r}")
    f = _flags(pairs, flags)
    wins = (np.sign(pairs.q1 - pairs.q2) * f).sum(axis=1)
    y = np.where(wins > 0, 1, np.where(wins < 0, 2, 0))
    flip = as_generator(seed).random(len(y)) < noise
    return np.where(flip & (y > 0), 3 - y, y)


class VoteNet(nn.Module):
    """MLP over (rubric flag, one-hot of ``q1 - q2``) of every criterion, no query token."""

    def __init__(self, n_criteria: int, n_levels: int, *, hidden: int = 64):
        super().__init__()
        self.n_levels = n_levels
        self.net = nn.Sequential(nn.Linear(n_criteria * 2 * n_levels, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def features(self, q1, q2, flags):
        d = (q1 - q2 + self.n_levels - 1).long()
        onehot = nn.functional.one_hot(d, 2 * self.n_levels - 1).float()
        x = torch.cat([flags[..., None], onehot * flags[..., None]], dim=-1)
        return x.flatten(1)

    def forward(self, q1, q2, flags):
        return self.net(self.features(q1, q2, flags))[:, 0]


class VoteJudge:
    """E4: greedy verdict of a trained :class:`VoteNet`."""

    name = "judge_vote"

    def __init__(self, net: VoteNet):
        self.net = net

    @torch.no_grad()
    def predict(self, pairs: Pairs, flags) -> np.ndarray:
        f = torch.as_tensor(_flags(pairs, flags))
        self.net.eval()
        logit = self.net(torch.as_tensor(pairs.q1), torch.as_tensor(pairs.q2), f).numpy()
        return np.where(logit > 0, 1, 2)


def vote_training_data(world: World, n: int, seed) -> tuple[Pairs, np.ndarray, np.ndarray]:
    """E4's own data: fresh pairs, random rubrics of 1-3 criteria, vote annotations (ties dropped).

    Returns ``(pairs, flags, targets)`` with targets in {1, 2}.
    """
    rng = as_generator(seed)
    pairs = sample_pairs(world, 3 * n, rng)
    sizes = rng.integers(1, 4, 3 * n)
    ranks = np.argsort(np.argsort(rng.random((3 * n, world.n_criteria)), axis=1), axis=1)
    flags = (ranks < sizes[:, None]).astype(np.float32)
    y = vote_annotations(pairs, flags, rng)
    keep = np.flatnonzero(y > 0)[:n]
    if len(keep) < n:
        raise ValueError(f"n={n}: only {len(keep)} annotated pairs without a tie were drawn")
    return pairs.subset(keep), flags[keep], y[keep]


def _bce(net, batch):
    a, b, f, y = batch
    return nn.functional.binary_cross_entropy_with_logits(net(a, b, f), y)


def train_vote_judge(world: World, *, n: int = 4096, seed: int = 0, epochs: int = 25, batch_size: int = 128,
                     lr: float = 3e-3) -> VoteJudge:
    """Train E4 on :func:`vote_training_data` (a tenth held out for early stopping)."""
    pairs, flags, y = vote_training_data(world, n, seed)
    torch.manual_seed(int(seed))
    net = VoteNet(world.n_criteria, world.n_levels)
    data = (torch.as_tensor(pairs.q1), torch.as_tensor(pairs.q2), torch.as_tensor(flags),
            torch.as_tensor((y == 1).astype(np.float32)))
    n_val = max(len(y) // 10, 1)
    fit(net, tuple(d[n_val:] for d in data), tuple(d[:n_val] for d in data),
        TrainingSettings(epochs=epochs, batch_size=batch_size, lr=lr), loss_fn=_bce, seed=int(seed),
        desc="judge-E4", disable=True)
    return VoteJudge(net)


def build_held_out(world: World, *, n: int, seed: int, epochs: int) -> dict:
    """The independent judges of one seed, by name (:data:`HELD_OUT`)."""
    return {"judge_max": MaxJudge(), "judge_vote": train_vote_judge(world, n=n, seed=seed, epochs=epochs)}
