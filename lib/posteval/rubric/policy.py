"""The policy: a tiny causal transformer that writes rubric, evaluation and verdict; its cold-start SFT."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..models.training import TrainingSettings, fit
from .task import Vocab


class _Block(nn.Module):
    def __init__(self, d: int, heads: int, ff: int):
        super().__init__()
        self.heads = heads
        self.n1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.n2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x, cache=None):
        """Causal self-attention over ``x``; with ``cache=(k, v)`` of earlier positions, ``x`` is one new token."""
        n, L, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(n, L, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if cache is None:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
            a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(n, L, d))
        return x + self.ff(self.n2(x)), (k, v)


class PolicyLM(nn.Module):
    """Decoder-only transformer (pre-norm, learned positions) over the miniature's vocabulary."""

    def __init__(self, vocab_size: int, max_len: int, *, d_model: int = 64, n_layers: int = 2,
                 n_heads: int = 4, d_ff: int = 128):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.max_len = max_len
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(_Block(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens: torch.Tensor, *, last: int | None = None) -> torch.Tensor:
        """Logits ``(n, L, vocab)`` of the next token at every position (only the ``last`` ones if given)."""
        return self.step(tokens, last=last)[0]

    def step(self, tokens: torch.Tensor, cache=None, *, last: int | None = None):
        """Logits and key/value cache; with ``cache`` (from a previous call), ``tokens`` is one new position."""
        L = tokens.shape[1]
        start = 0 if cache is None else cache[0][0].shape[2]
        if start + L > self.max_len:
            raise ValueError(f"tokens reach length {start + L}, more than max_len {self.max_len}")
        if cache is not None and L != 1:
            raise ValueError(f"with a cache, tokens must hold one position, got {L}")
        x = self.tok(tokens) + self.pos.weight[start:start + L]
        new = []
        for i, b in enumerate(self.blocks):
            x, kv = b(x, None if cache is None else cache[i])
            new.append(kv)
        if last is not None:
            x = x[:, -last:]
        return self.head(self.norm(x)), new


def completion_logprobs(model: PolicyLM, prompts: torch.Tensor, completions: torch.Tensor) -> torch.Tensor:
    """Log-probability of every completion token, shape ``(n, completion_len)``."""
    seq = torch.cat([prompts, completions], dim=1)
    logits = model(seq[:, :-1], last=completions.shape[1])
    return torch.log_softmax(logits, dim=-1).gather(-1, completions[..., None])[..., 0]


@torch.no_grad()
def generate(model: PolicyLM, vocab: Vocab, prompts: torch.Tensor, max_new: int, *, greedy: bool = False,
             temperature: float = 1.0, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample completions; generation of a row stops after its first verdict token.

    Returns
    -------
    tokens : (n, max_new) long, PAD after the end
    mask : (n, max_new) bool, True on generated tokens
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature!r}")
    model.eval()
    n = prompts.shape[0]
    out = torch.full((n, max_new), vocab.PAD, dtype=torch.long)
    alive = torch.ones(n, dtype=torch.bool)
    logits, cache = model.step(prompts, last=1)
    logits = logits[:, -1]
    for i in range(max_new):
        if i:
            logits, cache = model.step(nxt[:, None], cache)
            logits = logits[:, -1]
        if greedy:
            nxt = logits.argmax(-1)
        else:
            nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=generator)[:, 0]
        nxt = torch.where(alive, nxt, torch.full_like(nxt, vocab.PAD))
        out[:, i] = nxt
        alive = alive & ~((nxt == vocab.verdict1) | (nxt == vocab.verdict2))
        if not alive.any():
            break
    mask = torch.zeros_like(out, dtype=torch.bool)
    ended = torch.zeros(n, dtype=torch.bool)
    for i in range(max_new):
        mask[:, i] = ~ended
        ended = ended | (out[:, i] == vocab.verdict1) | (out[:, i] == vocab.verdict2)
    return out, mask


def sft(model: PolicyLM, prompts: torch.Tensor, completions: torch.Tensor, *, pad: int, epochs: int = 30,
        batch_size: int = 128, lr: float = 3e-3, seed: int = 0, progress: bool = False) -> list[float]:
    """Cold-start supervised fine-tuning: cross-entropy on the completion tokens only.

    Trained by `posteval.models.training.fit` (linear learning-rate decay to 0, gradient norm clipped
    at 1). Returns the mean training loss per epoch. Raises ``FloatingPointError`` naming the
    epoch on a non-finite loss.
    """
    if prompts.shape[0] != completions.shape[0]:
        raise ValueError(f"prompts ({prompts.shape[0]}) and completions ({completions.shape[0]}) differ in length")

    def completion_nll(net, batch):
        prompt, comp = batch
        mask = comp != pad  # teacher completions end at the verdict; PAD after it is not a target
        return -(completion_logprobs(net, prompt, comp) * mask).sum() / mask.sum()

    steps_total = epochs * math.ceil(prompts.shape[0] / batch_size)
    settings = TrainingSettings(epochs=epochs, batch_size=batch_size, lr=lr,
                                lr_schedule=lambda step: 1.0 - step / steps_total, grad_clip=1.0)
    history = fit(model, (prompts, completions), settings=settings, loss_fn=completion_nll, seed=int(seed),
                  desc="cold-start SFT", disable=not progress)
    return history.train_loss


def build_policy(vocab: Vocab, prompt_len: int, max_new: int, *, seed: int, d_model: int = 64,
                 n_layers: int = 2, n_heads: int = 4, d_ff: int = 128) -> PolicyLM:
    """A freshly initialised policy (seeded)."""
    torch.manual_seed(int(seed))
    return PolicyLM(vocab.size, prompt_len + max_new, d_model=d_model, n_layers=n_layers, n_heads=n_heads, d_ff=d_ff)


def count_parameters(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()
