"""Synthetic preference task of the proxy-rubric miniature: world, vocabulary, pairs, prompts.

A *world* fixes, for every query type ``t``, a hidden set ``S(t)`` of relevant criteria. The
first ``n_generic`` criteria (think "fluency", "helpfulness") are never relevant. A *pair* is a
query type and two responses described by one quality level per criterion; the preference label
depends on the relevant criteria only. Response order is random by construction (both responses
are drawn from the same distribution), so a judge biased toward "1" gains nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import torch


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def as_generator(seed) -> np.random.Generator:
    """Return a numpy Generator from an int seed or pass a Generator through."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or a numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


@dataclass(frozen=True)
class Vocab:
    """Token ids of the miniature's vocabulary.

    Layout: ``PAD, BOS, </rubric>, </eval>``, then the query-type tokens, criterion tokens
    ``c0..c{K-1}``, response tokens ``c{k}={q1}/{q2}`` (criterion k with quality q1 in response 1
    and q2 in response 2, one token per criterion in the prompt), signed-difference tokens
    ``d-{L-1}..d+{L-1}`` and the two verdict tokens ``V1, V2``.
    """

    n_types: int
    n_criteria: int
    n_levels: int

    PAD = 0
    BOS = 1
    RUBRIC_END = 2
    EVAL_END = 3

    @property
    def type0(self) -> int:
        return 4

    @property
    def crit0(self) -> int:
        return self.type0 + self.n_types

    @property
    def pair0(self) -> int:
        return self.crit0 + self.n_criteria

    @property
    def diff0(self) -> int:
        """Token id of the most negative difference ``-(n_levels-1)``."""
        return self.pair0 + self.n_criteria * self.n_levels ** 2

    @property
    def n_diffs(self) -> int:
        return 2 * self.n_levels - 1

    @property
    def verdict1(self) -> int:
        return self.diff0 + self.n_diffs

    @property
    def verdict2(self) -> int:
        return self.verdict1 + 1

    @property
    def size(self) -> int:
        return self.verdict2 + 1

    def type_token(self, t):
        return self.type0 + np.asarray(t)

    def crit_token(self, k):
        return self.crit0 + np.asarray(k)

    def pair_token(self, k, q1, q2):
        """Token of criterion ``k`` with qualities ``q1`` (response 1) and ``q2`` (response 2)."""
        L = self.n_levels
        return self.pair0 + np.asarray(k) * L * L + np.asarray(q1) * L + np.asarray(q2)

    def diff_token(self, d):
        return self.diff0 + (np.asarray(d) + self.n_levels - 1)

    def verdict_token(self, v):
        """Token of verdict ``v`` in {1, 2}."""
        return self.verdict1 + (np.asarray(v) - 1)

    def is_crit(self, tok):
        tok = np.asarray(tok)
        return (tok >= self.crit0) & (tok < self.crit0 + self.n_criteria)

    def is_diff(self, tok):
        tok = np.asarray(tok)
        return (tok >= self.diff0) & (tok < self.diff0 + self.n_diffs)

    def is_verdict(self, tok):
        tok = np.asarray(tok)
        return (tok == self.verdict1) | (tok == self.verdict2)

    def name(self, tok: int) -> str:
        """Human-readable name of one token (used for the text rendering of the bridge)."""
        tok = int(tok)
        if tok == self.PAD:
            return "<pad>"
        if tok == self.BOS:
            return "<bos>"
        if tok == self.RUBRIC_END:
            return "</rubric>"
        if tok == self.EVAL_END:
            return "</eval>"
        if self.type0 <= tok < self.crit0:
            return f"<q{tok - self.type0}>"
        if self.crit0 <= tok < self.pair0:
            return f"c{tok - self.crit0}"
        if self.pair0 <= tok < self.diff0:
            k, r = divmod(tok - self.pair0, self.n_levels ** 2)
            return f"c{k}={r // self.n_levels}/{r % self.n_levels}"
        if self.diff0 <= tok < self.verdict1:
            return f"d{tok - self.diff0 - (self.n_levels - 1):+d}"
        if tok == self.verdict1:
            return "<answer1>"
        if tok == self.verdict2:
            return "<answer2>"
        raise ValueError(f"tok {tok} is outside the vocabulary of size {self.size}")

    def names(self) -> list[str]:
        """Names of all tokens, indexed by id."""
        return [self.name(i) for i in range(self.size)]


@dataclass(frozen=True)
class World:
    """Hidden relevance structure: ``relevant[t, k]`` is True when criterion k matters for type t."""

    relevant: np.ndarray  # (n_types, n_criteria) bool
    n_generic: int
    n_levels: int

    @property
    def n_types(self) -> int:
        return self.relevant.shape[0]

    @property
    def n_criteria(self) -> int:
        return self.relevant.shape[1]

    @property
    def vocab(self) -> Vocab:
        return Vocab(self.n_types, self.n_criteria, self.n_levels)

    @property
    def prompt_len(self) -> int:
        """Prompt length: BOS, type, then one response token ``c{k}={q1}/{q2}`` per criterion."""
        return 2 + self.n_criteria


def make_world(seed, *, n_types: int = 128, n_criteria: int = 8, n_generic: int = 2,
               n_relevant: int = 2, n_levels: int = 4) -> World:
    """Draw a world: for each query type, ``n_relevant`` relevant criteria among the non-generic ones.

    Parameters
    ----------
    seed : int or numpy.random.Generator
    n_types, n_criteria, n_generic, n_relevant, n_levels : int
        Sizes. Criteria ``0..n_generic-1`` are generic and never relevant.
    """
    rng = as_generator(seed)
    n_types = _check_positive_int(n_types, "n_types")
    n_criteria = _check_positive_int(n_criteria, "n_criteria")
    n_relevant = _check_positive_int(n_relevant, "n_relevant")
    n_levels = _check_positive_int(n_levels, "n_levels")
    if isinstance(n_generic, bool) or not isinstance(n_generic, (int, np.integer)) or n_generic < 0:
        raise ValueError(f"n_generic must be a non-negative integer, got {n_generic!r}")
    if n_generic + n_relevant > n_criteria:
        raise ValueError(
            f"n_generic + n_relevant ({n_generic} + {n_relevant}) exceeds n_criteria ({n_criteria})")
    if n_levels < 2:
        raise ValueError(f"n_levels must be at least 2, got {n_levels}")
    subsets = list(combinations(range(n_generic, n_criteria), n_relevant))
    # Cycle through all subsets so every relevant set occurs, in a random assignment to types.
    order = rng.permutation(n_types) % len(subsets)
    relevant = np.zeros((n_types, n_criteria), dtype=bool)
    for t in range(n_types):
        relevant[t, list(subsets[order[t]])] = True
    return World(relevant=relevant, n_generic=int(n_generic), n_levels=n_levels)


@dataclass
class Pairs:
    """A batch of preference pairs. ``labels`` are 1 (response 1 preferred) or 2."""

    types: np.ndarray  # (n,) int
    q1: np.ndarray  # (n, K) int in [0, n_levels)
    q2: np.ndarray  # (n, K)
    labels: np.ndarray  # (n,) int in {1, 2}

    def __len__(self) -> int:
        return len(self.types)

    def subset(self, idx) -> "Pairs":
        idx = np.asarray(idx)
        return Pairs(self.types[idx], self.q1[idx], self.q2[idx], self.labels[idx])


def true_labels(world: World, types, q1, q2) -> np.ndarray:
    """Label from the relevant criteria only: 1 if response 1 is better, 2 if worse, 0 on a tie."""
    s = ((q1 - q2) * world.relevant[types]).sum(axis=1)
    return np.where(s > 0, 1, np.where(s < 0, 2, 0))


def sample_pairs(world: World, n: int, seed, *, label_noise: float = 0.0) -> Pairs:
    """Draw ``n`` pairs with uniform query types and qualities; ties on the relevant criteria are redrawn.

    Parameters
    ----------
    label_noise : float
        Probability of flipping a label (annotator noise), in [0, 0.5).
    """
    n = _check_positive_int(n, "n")
    if not (0.0 <= float(label_noise) < 0.5):
        raise ValueError(f"label_noise must be in [0, 0.5), got {label_noise!r}")
    rng = as_generator(seed)
    K, L = world.n_criteria, world.n_levels
    types, q1s, q2s, labels = [], [], [], []
    have = 0
    while have < n:
        m = 2 * (n - have) + 16
        t = rng.integers(0, world.n_types, m)
        a = rng.integers(0, L, (m, K))
        b = rng.integers(0, L, (m, K))
        y = true_labels(world, t, a, b)
        keep = y > 0
        types.append(t[keep]); q1s.append(a[keep]); q2s.append(b[keep]); labels.append(y[keep])
        have += int(keep.sum())
    types = np.concatenate(types)[:n]
    labels = np.concatenate(labels)[:n]
    if label_noise > 0:
        flip = rng.random(n) < label_noise
        labels = np.where(flip, 3 - labels, labels)
    return Pairs(types, np.concatenate(q1s)[:n], np.concatenate(q2s)[:n], labels)


def encode_prompts(world: World, pairs: Pairs) -> torch.Tensor:
    """Token ids of the prompts, shape ``(n, prompt_len)``: ``BOS type c0=q1/q2 ... c{K-1}=q1/q2``."""
    v = world.vocab
    n, K = pairs.q1.shape
    if K != world.n_criteria:
        raise ValueError(f"pairs has {K} criteria, the world has {world.n_criteria}")
    body = v.pair_token(np.arange(K)[None, :], pairs.q1, pairs.q2)
    head = np.stack([np.full(n, v.BOS), v.type_token(pairs.types)], axis=1)
    return torch.as_tensor(np.concatenate([head, body], axis=1), dtype=torch.long)


def oracle_flags(world: World, pairs: Pairs) -> np.ndarray:
    """Flags of the true relevant set ``S(t)`` of each pair."""
    return world.relevant[pairs.types].astype(np.float32)


def generic_flags(world: World, n: int) -> np.ndarray:
    """Flags of the generic rubric (criteria ``0..n_generic-1``), the same for every pair."""
    flags = np.zeros((n, world.n_criteria), dtype=np.float32)
    flags[:, :max(world.n_generic, 1)] = 1.0
    return flags


def random_flags(world: World, n: int, seed, *, size: int | None = None) -> np.ndarray:
    """Flags of random rubrics: ``size`` distinct criteria (default: as many as relevant ones)."""
    rng = as_generator(seed)
    size = int(world.relevant[0].sum()) if size is None else _check_positive_int(size, "size")
    if size > world.n_criteria:
        raise ValueError(f"size {size} exceeds n_criteria {world.n_criteria}")
    keys = rng.random((n, world.n_criteria))
    idx = np.argsort(keys, axis=1)[:, :size]
    flags = np.zeros((n, world.n_criteria), dtype=np.float32)
    np.put_along_axis(flags, idx, 1.0, axis=1)
    return flags
