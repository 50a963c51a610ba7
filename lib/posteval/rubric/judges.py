"""Judges that read a rubric: the proxies used as reward, and the two held-out evaluators.

Every judge exposes ``predict(pairs, flags) -> (n,) int array`` in {1, 2} (or 0 for an abstention
of the analytic follower on a tie), where ``flags`` is the ``(n, K)`` 0/1 indicator of the criteria
in the rubric segment. A judge receives nothing of a completion but these flags, so it can never
see an evaluation or a verdict.

- :class:`RuleJudge` (E1): sums ``q1 - q2`` over the rubric's criteria. Knows nothing of ``S(t)``.
- :class:`SetJudge` (E2): a tiny set transformer over the criteria, *without the query token*,
  trained on its own data to follow rubrics. A different architecture from the proxies.
- :class:`ReaderProxy`: the proxy. Per criterion, an MLP of (query embedding, criterion embedding,
  in-rubric flag) gives a weight; the logit is the weighted sum of ``q1 - q2``. Trained as
  Proxy-SFT (cross-entropy to the label), Proxy-RL (group-normalised REINFORCE with a ±1 reward on
  the label) or Proxy-SFT-follow (cross-entropy to the teacher's verdict under its own rubric,
  read from its distilled completion).

The proxies and E2 are trained by the book's one loop, `posteval.models.training.fit` (no validation
split: a fixed number of epochs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn

from ..models import TrainingSettings, fit, mlp
from .task import Pairs, World, as_generator, generic_flags, oracle_flags, random_flags, sample_pairs

PROXY_KINDS = ("sft", "rl", "follow")
#: How a proxy is trained by default: 40 epochs of mini-batches of 64 pairs at learning rate 3e-3.
PROXY_TRAINING = TrainingSettings(epochs=40, batch_size=64, lr=3e-3)


def _check_flags(pairs: Pairs, flags) -> torch.Tensor:
    flags = np.asarray(flags, dtype=np.float32)
    if flags.shape != pairs.q1.shape:
        raise ValueError(f"flags must have shape {pairs.q1.shape}, got {flags.shape}")
    return torch.as_tensor(flags)


def _inputs(pairs: Pairs):
    return (torch.as_tensor(pairs.types, dtype=torch.long), torch.as_tensor(pairs.q1, dtype=torch.long),
            torch.as_tensor(pairs.q2, dtype=torch.long))


class RuleJudge:
    """E1: analytic rubric follower. 1 if the rubric's criteria favour response 1, 2 if 2, 0 on a tie."""

    name = "rule"

    def predict(self, pairs: Pairs, flags) -> np.ndarray:
        f = _check_flags(pairs, flags).numpy()
        s = ((pairs.q1 - pairs.q2) * f).sum(axis=1)
        return np.where(s > 0, 1, np.where(s < 0, 2, 0))


class ReaderNet(nn.Module):
    """Per-criterion reader: logit = sum_k w(t, k, flag_k) * (q1_k - q2_k) / (L-1) + b."""

    def __init__(self, n_types: int, n_criteria: int, n_levels: int, *, type_dim: int = 16,
                 crit_dim: int = 8, hidden: int = 32):
        super().__init__()
        self.n_levels = n_levels
        self.type_emb = nn.Embedding(n_types, type_dim)
        self.crit_emb = nn.Embedding(n_criteria, crit_dim)
        self.mlp = mlp(type_dim + crit_dim + 1, 1, (hidden,), activation=nn.Tanh)
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, types, q1, q2, flags):
        n, K = q1.shape
        te = self.type_emb(types)[:, None, :].expand(n, K, -1)
        ce = self.crit_emb.weight[None].expand(n, K, -1)
        w = self.mlp(torch.cat([te, ce, flags[..., None]], dim=-1))[..., 0]
        diff = (q1 - q2).float() / (self.n_levels - 1)
        return (w * diff).sum(dim=1) + self.bias


class SetNet(nn.Module):
    """Set transformer over criteria (no query token): one attention block, mean pooling."""

    def __init__(self, n_criteria: int, n_levels: int, *, dim: int = 32, heads: int = 2):
        super().__init__()
        self.crit = nn.Embedding(n_criteria, dim)
        self.a = nn.Embedding(n_levels, dim)
        self.b = nn.Embedding(n_levels, dim)
        self.flag = nn.Embedding(2, dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, types, q1, q2, flags):
        n, K = q1.shape
        x = self.crit.weight[None].expand(n, K, -1) + self.a(q1) + self.b(q2) + self.flag(flags.long())
        h = self.norm(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.ff(x)
        return self.out(self.norm(x).mean(dim=1))[:, 0]


class _NetJudge:
    """Greedy (temperature 0) judge around a network returning the logit of 'response 1 preferred'."""

    def __init__(self, net: nn.Module, name: str):
        self.net = net
        self.name = name

    @torch.no_grad()
    def logits(self, pairs: Pairs, flags) -> torch.Tensor:
        f = _check_flags(pairs, flags)
        self.net.eval()
        return self.net(*_inputs(pairs), f)

    def predict(self, pairs: Pairs, flags) -> np.ndarray:
        return np.where(self.logits(pairs, flags).numpy() > 0, 1, 2)

    def state(self) -> dict:
        return {k: v.clone() for k, v in self.net.state_dict().items()}


class ReaderProxy(_NetJudge):
    """Proxy judge: a :class:`ReaderNet` that reads query, responses and rubric flags."""


class SetJudge(_NetJudge):
    """Held-out learned judge E2: a :class:`SetNet` that reads responses and rubric flags only."""


def _bce(net, batch):
    t, a, b, f, y = batch
    return nn.functional.binary_cross_entropy_with_logits(net(t, a, b, f), y)


def _make_reinforce(group: int, gen: torch.Generator):
    """Group-normalised REINFORCE loss; its verdicts are drawn from ``gen`` (shared with the shuffling)."""
    def loss(net, batch):
        t, a, b, f, y = batch
        logit = net(t, a, b, f)
        p1 = torch.sigmoid(logit)[:, None].expand(-1, group)
        with torch.no_grad():
            pick1 = (torch.rand(p1.shape, generator=gen) < p1).float()
            r = torch.where(pick1 == y[:, None], 1.0, -1.0)
            adv = (r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-6)
        logp = pick1 * nn.functional.logsigmoid(logit)[:, None] + (1 - pick1) * nn.functional.logsigmoid(-logit)[:, None]
        return -(adv * logp).mean()
    return loss


def train_proxy(world: World, pairs: Pairs, flags, kind: str = "sft", *, seed: int = 0,
                settings: TrainingSettings = PROXY_TRAINING, group: int = 8, progress: bool = False,
                rubric_verdicts=None) -> ReaderProxy:
    """Train a reader proxy on teacher rubrics.

    Parameters
    ----------
    pairs, flags : the proxy's training pairs and the teacher's rubric flags for them
    kind : "sft" (targets: labels), "rl" (±1 reward on the label, group-normalised REINFORCE with
        ``group`` sampled verdicts per pair) or "follow" (targets: ``rubric_verdicts``, the teacher's
        verdict under its own rubric from :func:`proxy_data.teacher_rubric_verdicts`; the label
        where that is 0)
    settings : the epochs, batch size and learning rate of `fit` (:data:`PROXY_TRAINING`; e.g.
        ``dataclasses.replace(PROXY_TRAINING, epochs=2)`` for fewer epochs)
    """
    if kind not in PROXY_KINDS:
        raise ValueError(f"kind must be one of {PROXY_KINDS}, got {kind!r}")
    f = _check_flags(pairs, flags)
    torch.manual_seed(int(seed))
    net = ReaderNet(world.n_types, world.n_criteria, world.n_levels)
    y = (pairs.labels == 1).astype(np.float32)
    if kind == "follow":
        if rubric_verdicts is None or np.shape(rubric_verdicts) != (len(pairs),):
            raise ValueError("kind='follow' needs rubric_verdicts, one teacher verdict per pair (0 on a tie)")
        rv = np.asarray(rubric_verdicts)
        y = np.where(rv == 0, y, (rv == 1).astype(np.float32))
    data = (*_inputs(pairs), f, torch.as_tensor(y))
    gen = torch.Generator().manual_seed(int(seed))
    loss = _make_reinforce(group, gen) if kind == "rl" else _bce
    fit(net, data, settings=settings, loss_fn=loss, seed=int(seed), shuffle=gen, desc=f"proxy-{kind}",
        disable=not progress)
    return ReaderProxy(net, f"proxy_{kind}")


def e2_training_data(world: World, n: int, seed) -> tuple[Pairs, np.ndarray]:
    """E2's own data: random rubrics of 1-3 criteria; target = the preference under that rubric (ties dropped)."""
    rng = as_generator(seed)
    pairs = sample_pairs(world, 2 * n, rng)
    sizes = rng.integers(1, 4, 2 * n)
    keys = rng.random((2 * n, world.n_criteria))
    ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
    flags = (ranks < sizes[:, None]).astype(np.float32)
    y = RuleJudge().predict(pairs, flags)
    keep = np.flatnonzero(y > 0)[:n]
    sub = pairs.subset(keep)
    sub.labels = y[keep]
    return sub, flags[keep]


def train_set_judge(world: World, *, n: int = 4096, seed: int = 0, epochs: int = 25, batch_size: int = 128,
                    lr: float = 3e-3, progress: bool = False) -> SetJudge:
    """Train the held-out judge E2 on its own rubric-following data."""
    pairs, flags = e2_training_data(world, n, seed)
    torch.manual_seed(int(seed))
    net = SetNet(world.n_criteria, world.n_levels)
    data = (*_inputs(pairs), torch.as_tensor(flags), torch.as_tensor((pairs.labels == 1).astype(np.float32)))
    fit(net, data, settings=TrainingSettings(epochs=epochs, batch_size=batch_size, lr=lr), loss_fn=_bce,
        seed=int(seed), desc="judge-E2", disable=not progress)
    return SetJudge(net, "judge_e2")


class Ensemble:
    """Several proxies; ``votes`` stacks their predictions for :func:`reward.proxy_reward`."""

    def __init__(self, members):
        members = list(members)
        if not members:
            raise ValueError("members must not be empty")
        self.members = members
        self.name = f"ensemble{len(members)}"

    def votes(self, pairs: Pairs, flags) -> np.ndarray:
        return np.stack([m.predict(pairs, flags) for m in self.members])

    def predict(self, pairs: Pairs, flags) -> np.ndarray:
        """Majority vote (ties, possible with an even number of members, go to 1)."""
        return np.where((self.votes(pairs, flags) == 1).mean(0) >= 0.5, 1, 2)


def judge_accuracy(judge, pairs: Pairs, flags) -> float:
    """Accuracy against the labels; an abstention (0) counts 1/2, the expected value of a coin flip."""
    pred = judge.predict(pairs, flags)
    return float(np.mean(np.where(pred == 0, 0.5, (pred == pairs.labels).astype(float))))


def verifier_fidelity(judges: dict, world: World, pairs: Pairs, seed) -> pd.DataFrame:
    """How often each judge's verdict follows an edited rubric rather than the label.

    Every pair gets a random rubric (:func:`~posteval.rubric.task.random_flags`, as many criteria as
    the relevant set). On the pairs where that rubric, read by the rule (the sum of q1 - q2 over its
    criteria, :class:`RuleJudge`), names a winner that is *not* the preferred answer, a verifier that
    reads the rubric follows the rubric and one that bypasses it follows the label. Returns one row per
    judge: ``fidelity`` (share of those pairs where the verdict is the rubric's), ``follows_label``
    and ``n_pairs``.
    """
    flags = random_flags(world, len(pairs), seed)
    says = RuleJudge().predict(pairs, flags)
    keep = np.flatnonzero((says != 0) & (says != pairs.labels))
    if keep.size == 0:
        raise ValueError("no pair whose edited rubric contradicts its label: use more pairs")
    sub, fl = pairs.subset(keep), flags[keep]
    rows = []
    for name, judge in judges.items():
        pred = judge.predict(sub, fl)
        rows.append({"judge": name, "fidelity": float(np.mean(pred == says[keep])),
                     "follows_label": float(np.mean(pred == sub.labels)), "n_pairs": int(keep.size)})
    return pd.DataFrame(rows)


def rubric_sensitivity(judges: dict, world: World, pairs: Pairs, seed) -> pd.DataFrame:
    """Accuracy of each judge with the true, a random, the generic, and an empty rubric.

    Returns one row per judge with columns ``oracle``, ``random``, ``generic``, ``empty``,
    ``sensitivity`` (oracle - generic) and ``sensitivity_random`` (oracle - random). A judge whose
    sensitivity is near 0 solves the task without the rubric and gives no rubric-quality signal.
    """
    n = len(pairs)
    rubrics = {"oracle": oracle_flags(world, pairs), "random": random_flags(world, n, seed),
               "generic": generic_flags(world, n), "empty": np.zeros((n, world.n_criteria), np.float32)}
    rows = []
    for name, judge in judges.items():
        row = {"judge": name}
        for rk, fl in rubrics.items():
            row[rk] = judge_accuracy(judge, pairs, fl)
        row["sensitivity"] = row["oracle"] - row["generic"]
        row["sensitivity_random"] = row["oracle"] - row["random"]
        rows.append(row)
    return pd.DataFrame(rows)
